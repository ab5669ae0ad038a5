"""KAI-Scheduler read end to end: its upstream-shaped objects served, read, and shown (issue 13 item 2).

Why: ``tests/backends/test_live_truth.py`` checks each case's job rows in the whole corpus; this module
serves only the KAI cases (``tests/fixtures/live_truth/95_kai.yaml``, each with its upstream file
and commit) through the same fake API server and live read path, and checks what the other views
show: the queue tree (``queues``: quota as guaranteed, limit as max, the parent above the leaf),
the GPUs (``gpus``/``nodes``: 2 whole GPUs and one half share on the A100 node, the reservation
pod's whole GPU not counted again), the evidence in the detail (KAI's own numbers), and the unit
rules of the decoders (fractions, -1 as unlimited, bad annotations skipped and noted).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from hpctop.backends.kai import read as kai
from hpctop.model.decode import DecodeError, decode_object
from hpctop.model.fractions import annotated_gpu_milli
from hpctop.runtime.cluster_view import ClusterView
from hpctop.tables import jobs as jobs_table
from hpctop.tables.nodes import gpu_rows, node_rows
from hpctop.tables.queues import queue_rows
from tests.backends.test_live_truth import CASES, _serve_and_read

KAI_CASES = [c for c in CASES if c.file == "95_kai.yaml"]


def _read(tmp: Path) -> ClusterView:
    """The KAI cases alone on a server that serves the core API and their kinds, read once."""
    return _serve_and_read(tmp, KAI_CASES, only_their_kinds=True).view


@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterView]:
    yield _read(tmp_path_factory.mktemp("kai"))


def test_the_fixtures_name_their_upstream() -> None:
    assert len(KAI_CASES) >= 3
    for case in KAI_CASES:
        assert case.upstream["repo"] == "kai-scheduler/KAI-Scheduler"
        assert len(case.upstream["commit"]) == 40


def test_the_queue_tree_has_kais_quota_and_limit(view: ClusterView) -> None:
    rows = {r["path"]: r for r in queue_rows(view.result)}
    parent, leaf = rows["root.research-team"], rows["root.research-team.ml-team"]
    assert not parent["leaf"] and leaf["leaf"]
    assert (leaf["guaranteed_gpus"], leaf["max_gpus"]) == (1, 2)  # quota 1, limit 2
    assert (parent["guaranteed_gpus"], parent["max_gpus"]) == (4, 4)
    assert leaf["used_gpus"] == 2 and leaf["pending_jobs"] == 1
    # -1 (unlimited) is no max; the default queues of the quickstart have no quota and no limit
    default = rows["root.default-parent-queue.default-queue"]
    assert default["max_gpus"] is None and default["guaranteed_gpus"] == 0
    assert default["used_gpus"] == 0.525  # the half share and the 2000 MiB share
    info = view.snapshot.queues["root.research-team.ml-team"]
    assert info.backend == "kai" and info.weight == 2 and info.priority == 200
    assert info.allocated.gpu == 2000 and info.borrowed.gpu == 1000  # 2 allocated over a quota of 1


def test_the_over_limit_job_shows_kais_numbers_and_no_eta(view: ClusterView) -> None:
    rows = jobs_table.job_rows(view.snapshot, view.result, include_finished=True)
    row = next(r for r in rows if r["name"] == "over-limit-0")
    assert (row["state"], row["reason"], row["reason_source"], row["eta"]) == (
        "PENDING",
        "QuotaExceeded",
        "scheduler",
        None,
    )
    job = view.snapshot.jobs[("kai-queue-over-limit", "Pod", "over-limit-0")]
    first = job.reasons[0]
    assert first.source == "kai:PodGroup.schedulingConditions.OverLimit"
    assert "Limit is 2 GPUs, currently 2 GPUs allocated" in first.message
    assert (
        "[queue ml-team: GPUs requested 1, allocated 2, deserved 1, limit 2; node pool default]"
        in first.message
    )
    assert job.backends == ("kai",) and job.gang is not None and job.gang.min_member == 1


def test_a_half_gpu_is_half_a_gpu_in_gpus_and_nodes(view: ClusterView) -> None:
    nodes = {r["node"]: r for r in node_rows(view.snapshot, view.result)}
    # two whole GPUs, a half share and a 2000 MiB share of an 81920 MiB GPU; the reservation not again
    assert nodes["lt-kai-a100"]["gpus_alloc"] == 2.525
    groups = {r["model"]: r for r in gpu_rows(view.snapshot, view.result)}
    a100 = groups["NVIDIA-A100-80GB-PCIe"]
    assert (a100["total"], a100["allocated"], a100["free"]) == (8, 2.525, 5.475)
    fraction = view.snapshot.jobs[("kai-fraction", "Pod", "gpu-sharing")]
    assert fraction.requested.gpu == 500 and fraction.allocated.gpu == 500
    # the reservation pod is no job row, and is named as the one holding this job's GPU
    assert not [k for k in view.snapshot.jobs if k[0] == "kai-resource-reservation"]
    held = kai.reservations_of(view.snapshot.job_pods(fraction), view.snapshot.pods)
    assert [p.name for p in held] == ["gpu-reservation-lt-kai-a100-x7k2p"]


def test_the_gpu_pane_counts_the_share_not_the_reservation(view: ClusterView) -> None:
    from hpctop.tui.gpumap import build_gpu_map

    snap = view.snapshot
    gpu_map = build_gpu_map(snap.nodes, snap.pods, snap.pods_by_node, snap.jobs, [("kai", ["lt-kai-a100"])])
    node = gpu_map.nodes[0]
    assert node.used == 2525
    assert sorted(h[2] for h in node.unplaced) == [0.025, 0.5, 1.0, 1.0]


@pytest.mark.parametrize(
    ("annotations", "milli"),
    [
        ({"gpu-fraction": "0.5"}, 500),
        ({"gpu-fraction": "0.33"}, 330),
        ({"gpu-fraction": "0.0001"}, 1),  # never 0
        ({"gpu-fraction": "0.5", "gpu-fraction-num-devices": "2"}, 1000),
        ({}, None),
    ],
)
def test_fraction_annotations(annotations: dict[str, str], milli: int | None) -> None:
    assert annotated_gpu_milli(annotations) == milli


@pytest.mark.parametrize("value", ["1", "0", "-0.5", "1.5", "half", "nan"])
def test_a_fraction_kai_refuses_skips_the_pod_with_a_note(value: str) -> None:
    pod = {
        "metadata": {"name": "p", "namespace": "n", "annotations": {"gpu-fraction": value}},
        "spec": {"containers": [{"name": "c"}]},
    }
    with pytest.raises(DecodeError):
        decode_object("Pod", msgspec.json.encode(pod))


def test_queue_units_and_unlimited() -> None:
    raw = {
        "metadata": {"name": "q"},
        "spec": {
            "resources": {
                "gpu": {"quota": 0.5, "limit": -1, "overQuotaWeight": 3},
                "cpu": {"quota": 2000, "limit": 4000},
                "memory": {"quota": -1, "limit": 8192},
            }
        },
        "status": {"allocated": {"nvidia.com/gpu": "0.25", "cpu": "1500m"}},
    }
    q = decode_object(kai.KAI_QUEUE, msgspec.json.encode(raw))
    assert isinstance(q, kai.KaiQueue)
    assert (q.quota.gpu, q.quota.cpu, q.quota.memory) == (500, 2000, 0)
    assert (q.limit.gpu, q.limit.cpu, q.limit.memory) == (0, 4000, 8192 * 10**6)  # MB, not MiB
    assert q.unlimited_quota == ("memory",) and q.weight == 3 and q.priority == 100
    assert (q.allocated.gpu, q.allocated.cpu) == (250, 1500)


def test_a_malformed_queue_is_refused() -> None:
    raw = {"metadata": {"name": "q"}, "spec": {"resources": {"gpu": {"quota": -3}}}}
    with pytest.raises(DecodeError):
        decode_object(kai.KAI_QUEUE, msgspec.json.encode(raw))


def test_sub_groups_make_the_gang_when_min_member_is_absent() -> None:
    raw = {
        "metadata": {"name": "pg", "namespace": "n"},
        "spec": {
            "queue": "q",
            "minSubGroup": 2,
            "subGroups": [
                {"name": "leader", "minMember": 1},
                {"name": "workers", "minMember": 4},
            ],
        },
    }
    pg = decode_object(kai.KAI_PODGROUP, msgspec.json.encode(raw))
    assert isinstance(pg, kai.KaiPodGroup)
    assert pg.min_member == 5 and [s.name for s in pg.sub_groups] == ["leader", "workers"]
    assert pg.backend == "kai" and pg.queue == "q"


def test_a_gpu_memory_pod_seen_before_its_node_gets_its_share_when_the_node_arrives() -> None:
    """A relist sends pods before nodes: the share is resolved once the node's GPU memory is known."""
    from hpctop.model.events import EventType, WatchEvent
    from hpctop.model.fractions import KAI_GPU_MEMORY
    from hpctop.model.store import Store

    pod = {
        "metadata": {"name": "m", "namespace": "n", "annotations": {"gpu-memory": "20480"}},
        "spec": {"nodeName": "g0", "schedulerName": "kai-scheduler", "containers": [{"name": "c"}]},
        "status": {"phase": "Running"},
    }
    node = {
        "metadata": {"name": "g0", "labels": {"nvidia.com/gpu.memory": "81920", "nvidia.com/gpu.count": "1"}},
        "status": {"allocatable": {"nvidia.com/gpu": "1", "cpu": "8", "memory": "64Gi"}},
    }
    store = Store()
    store.apply(WatchEvent(EventType.ADDED, "Pod", decode_object("Pod", msgspec.json.encode(pod))))
    waiting = store.snapshot().pods[("n", "m")]
    assert waiting.requests.gpu == 0 and waiting.requests.get(KAI_GPU_MEMORY) == 20480  # MiB, as KAI reports
    store.apply(WatchEvent(EventType.ADDED, "Node", decode_object("Node", msgspec.json.encode(node))))
    resolved = store.snapshot().pods[("n", "m")]
    assert resolved.requests.gpu == 250 and not resolved.requests.get(KAI_GPU_MEMORY)  # a quarter GPU
    job = store.snapshot().jobs[("n", "Pod", "m")]
    assert job.requested.gpu == 250
