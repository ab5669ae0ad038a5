"""Raw bytes → model objects: the fields hpctop reads, and malformed objects refused whole."""

from __future__ import annotations

import orjson
import pytest

from hpctop.model.decode import DecodeError, decode_event
from hpctop.model.events import EventType
from hpctop.model.objects import Node, Pod, Workload
from tests.model_fixtures import batch_job, event, node, pod


def test_pod_fields() -> None:
    raw = event(
        "ADDED",
        pod(
            "w-0",
            node="n1",
            phase="Running",
            gpus=2,
            owner=("Job", "train"),
            labels={"yunikorn.apache.org/queue": "root.a"},
            annotations={"yunikorn.apache.org/task-groups": "[]", "unrelated.example.com/big": "x" * 1000},
        ),
    )
    ev = decode_event("Pod", raw)
    assert ev.type == EventType.ADDED
    p = ev.obj
    assert isinstance(p, Pod)
    assert p.key == ("team-a", "w-0")
    assert p.node_name == "n1"
    assert p.requests.gpu == 2000
    assert p.requests.cpu == 1000
    assert p.requests.memory == 1024**3
    assert p.owner is not None and p.owner.kind == "Job" and p.owner.name == "train"
    assert "unrelated.example.com/big" not in p.annotations  # kept small
    assert p.scheduled is not None and p.scheduled.status == "True"


def test_trace_fraction_annotations() -> None:
    # the fixture of SCHEDULERS.md §3.2: openb-pod-0022, 4000m CPU, 0.22 of a T4
    obj = pod(
        "openb-pod-0022",
        cpu="4000m",
        memory="15258Mi",
        annotations={
            "alibabacloud.com/gpu-milli": "220",
            "alibabacloud.com/gpu-count": "1",
            "alibabacloud.com/gpu-card-model": "T4",
        },
    )
    p = decode_event("Pod", event("ADDED", obj)).obj
    assert p.requests.gpu == 220
    assert p.gpu_models == ("T4",)


def test_node_gpu_inventory() -> None:
    n = decode_event("Node", event("ADDED", node("dgx-0", gpus=8))).obj
    assert isinstance(n, Node)
    assert n.allocatable.gpu == 8000
    assert n.gpu.count == 8
    assert n.gpu.product == "NVIDIA-H100-80GB-HBM3"
    assert n.gpu.memory_mib == 81559
    assert n.schedulable


def test_mig_mixed_node() -> None:
    obj = node("a100-0", gpus=0, product="NVIDIA-A100-SXM4-40GB")
    obj["metadata"]["labels"].update({"nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.count": "1"})
    obj["status"]["allocatable"].update({"nvidia.com/mig-1g.5gb": "7"})
    n = decode_event("Node", event("ADDED", obj)).obj
    assert n.gpu.mig_devices == (("1g.5gb", 7),)
    assert n.gpu.count == 1
    assert n.allocatable.get("nvidia.com/mig-1g.5gb") == 7


def test_workload() -> None:
    w = decode_event("Job", event("ADDED", batch_job("train", parallelism=4, suspend=True, gpus=8))).obj
    assert isinstance(w, Workload)
    assert w.suspend and w.parallelism == 4
    assert w.template_requests.gpu == 8000
    assert w.template_labels["yunikorn.apache.org/queue"] == "root.research"


def test_bookmark() -> None:
    ev = decode_event(
        "Pod", b'{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"12345"}}}'
    )
    assert ev.type == EventType.BOOKMARK
    assert ev.resource_version == "12345"
    assert ev.obj is None


@pytest.mark.parametrize(
    "raw",
    [
        b"not json",
        b'{"type":"ADDED"}',
        b'{"type":"ADDED","object":{"metadata":{}}}',
        b'{"type":"EXPLODED","object":' + orjson.dumps(pod("x")) + b"}",
        event("ADDED", {**pod("x"), "spec": {"containers": [{"resources": {"requests": {"cpu": "lots"}}}]}}),
        event("ADDED", {**pod("x"), "spec": {"containers": "nope"}}),
        event("ADDED", {**pod("x", annotations={"alibabacloud.com/gpu-index": "0-x"})}),
    ],
)
def test_malformed_pods_raise(raw: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_event("Pod", raw)


def test_unknown_kind() -> None:
    with pytest.raises(DecodeError):
        decode_event("Frobnicator", b"{}")


def test_decode_list_page_and_bad_item_skipped_alone() -> None:
    from hpctop.model.decode import decode_list

    good = [pod(f"p{i}") for i in range(3)]
    page = orjson.dumps(
        {"kind": "PodList", "metadata": {"resourceVersion": "42", "continue": "abc"}, "items": good}
    )
    decoded = decode_list("Pod", page)
    assert [o.name for o in decoded.objects] == ["p0", "p1", "p2"]
    assert decoded.resource_version == "42"
    assert decoded.continue_token == "abc"
    bad = pod("bad")
    bad["spec"]["containers"] = "nope"
    page = orjson.dumps({"kind": "PodList", "metadata": {"resourceVersion": "43"}, "items": [*good, bad]})
    decoded = decode_list("Pod", page)
    assert [o.name for o in decoded.objects] == ["p0", "p1", "p2"]
    assert len(decoded.skipped) == 1
