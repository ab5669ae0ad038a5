"""DRA GPUs count as device-plugin GPUs: nodes, gpus, queues, the GPU pane, and the store's bookkeeping.

The objects are the DRA cases of the live-truth corpus (``tests/fixtures/live_truth/90_dra.yaml``:
kubernetes-sigs/dra-driver-nvidia-gpu's demo specs and attribute reference, kubernetes/api's
types, each with its commit). The corpus is read through the live path (fake API server,
discovery, lists, decode, store, core) for the table and pane checks; the store's own rules (any
arrival order, pool generations, a claim shared by two pods, relists, malformed objects) are fed
the same objects as watch events. Expected numbers, from the upstream semantics:

- ``lt-dra-a100`` publishes 8 A100s (``type: gpu``); ``gpu-7`` is tainted ``NoSchedule`` by a
  DeviceTaintRule, so 7 are allocatable (the device plugin drops an unhealthy GPU the same way);
  held: pod1 and pod2 one each, gpu-pod four, gpu-full-pod one through the extended-resource
  claim (counted once, from its ``nvidia.com/gpu`` request): 7 of 7;
- ``lt-dra-mig`` publishes GPU 0 as seven ``1g.5gb`` MIG slices (their ``parentUUID``) and GPU 1
  whole: one whole GPU and seven 1g.5gb slices, as the device plugin's mixed strategy advertises
  them, on 2 physical GPUs; mig-pod holds one slice and no whole GPU, which counts (as a
  device-plugin ``nvidia.com/mig-1g.5gb`` does, ``model/resources.py``) as 1/7 of a GPU: 0.143.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from hpctop.model.resources import MIG_PREFIX
from hpctop.model.store import Store
from tests.backends.test_live_truth import CASES, Reading, _serve_and_read

DRA_CASES = [c for c in CASES if c.cls == "dra"]
#: decoder key of each corpus resource the store tests feed
KINDS = {
    "pods": "Pod",
    "nodes": "Node",
    "resourceslices": "ResourceSlice.resource.k8s.io",
    "resourceclaims": "ResourceClaim.resource.k8s.io",
    "resourceclaimtemplates": "ResourceClaimTemplate.resource.k8s.io",
    "deviceclasses": "DeviceClass.resource.k8s.io",
    "devicetaintrules": "DeviceTaintRule.resource.k8s.io",
    "computedomains": "ComputeDomain.resource.nvidia.com",
}
MIG_1G = f"{MIG_PREFIX}1g.5gb"


def objects(*case_ids: str) -> list[tuple[str, dict[str, Any]]]:
    wanted = set(case_ids) or {c.id for c in DRA_CASES}
    out: list[tuple[str, dict[str, Any]]] = []
    for case in DRA_CASES:
        if case.id in wanted:
            out.extend(
                (KINDS[res.plural], copy.deepcopy(obj)) for res, obj in case.objects if res.plural in KINDS
            )
    return out


def event(kind: str, obj: dict[str, Any], etype: str = "ADDED") -> tuple[str, bytes]:
    return kind, orjson.dumps({"type": etype, "object": obj})


def store_of(items: list[tuple[str, dict[str, Any]]]) -> Store:
    store = Store(clock=lambda: 1767225600.0)
    for kind, obj in items:
        assert store.apply_raw(*event(kind, obj)), (kind, obj["metadata"]["name"], store.notes_text())
    return store


def find(items: list[tuple[str, dict[str, Any]]], name: str) -> dict[str, Any]:
    return next(obj for _, obj in items if obj["metadata"]["name"] == name)


# -- the store's bookkeeping -------------------------------------------------------------------------


def test_any_arrival_order_gives_the_same_gpus() -> None:
    items = objects()
    forward, backward = store_of(items).snapshot(), store_of(items[::-1]).snapshot()
    for snap in (forward, backward):
        a100 = snap.nodes["lt-dra-a100"]
        assert (a100.gpu.count, a100.allocatable.gpu, a100.capacity.gpu) == (7, 7000, 8000)
        held = {k[1]: p.requests.gpu for k, p in snap.pods.items() if k[0].startswith("dra-") and p.node_name}
        assert held == {
            "pod1": 1000,
            "pod2": 1000,
            "gpu-pod": 4000,
            "gpu-full-pod": 1000,
            "mig-pod": 0,
            "mig-1g12gb-pod": 0,
        }
        assert snap.pods[("dra-extended-mig", "mig-1g12gb-pod")].requests.get(f"{MIG_PREFIX}1g.12gb") == 1
        assert snap.pods[("dra-mig", "mig-pod")].requests.get(MIG_1G) == 1
        assert snap.pods[("dra-four-gpus", "gpu-pod")].gpu_indices == (2, 3, 4, 5)
        assert snap.pods[("dra-extended-gpu", "gpu-full-pod")].gpu_indices == (6,)
    assert forward.nodes == backward.nodes


def test_a_dra_only_node_without_its_slice_has_no_gpus() -> None:
    """The fail-before check: a node's GPUs come from its ResourceSlice, nothing else."""
    items = [(k, o) for k, o in objects("dra-gpu-test1") if not k.startswith("ResourceSlice")]
    node = store_of(items).snapshot().nodes["lt-dra-a100"]
    assert (node.gpu.count, node.allocatable.gpu) == (0, 0)


def test_an_older_pool_generation_is_not_counted() -> None:
    items = objects("dra-gpu-test1")
    current = find(items, "lt-dra-a100-gpu.nvidia.com-abc12")
    stale = copy.deepcopy(current)
    stale["metadata"]["name"] = "lt-dra-a100-gpu.nvidia.com-old00"
    stale["spec"]["pool"]["generation"] = 0
    for device in stale["spec"]["devices"]:
        device["name"] = device["name"].replace("gpu-", "old-gpu-")
    store = store_of([*items, ("ResourceSlice.resource.k8s.io", stale)])
    assert store.snapshot().nodes["lt-dra-a100"].allocatable.gpu == 8000  # not 16


def test_a_claim_reserved_for_two_pods_splits_its_gpu() -> None:
    items = objects("dra-gpu-test1")
    claim = find(items, "pod1-gpu-7xk2p")
    claim["status"]["reservedFor"].append({"resource": "pods", "name": "pod2", "uid": "uid-pod2"})
    pod2 = find(items, "pod2")
    pod2["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "pod1-gpu-7xk2p"}]
    pod2["status"].pop("resourceClaimStatuses")
    items = [(k, o) for k, o in items if o["metadata"]["name"] != "pod2-gpu-q9dvn"]
    snap = store_of(items).snapshot()
    pods = snap.pods
    assert pods[("dra-gpu-test1", "pod1")].requests.gpu == 500
    assert pods[("dra-gpu-test1", "pod2")].requests.gpu == 500  # one GPU between them, counted once
    # a third pod naming the claim, not reserved for it yet, holds nothing of it
    third = copy.deepcopy(pod2)
    third["metadata"]["name"] = "pod3"
    third["spec"].pop("nodeName")
    third["status"] = {"phase": "Pending"}
    store = store_of([*items, ("Pod", third)])
    assert store.snapshot().pods[("dra-gpu-test1", "pod3")].requests.gpu == 0
    assert store.snapshot().pods[("dra-gpu-test1", "pod1")].requests.gpu == 500


def test_a_claim_update_and_delete_move_the_pods_request() -> None:
    items = objects("dra-gpu-test1", "dra-claim-pending")
    store = store_of(items)
    key = ("dra-claim-pending", "gpu-pod")
    assert store.snapshot().pods[key].requests.gpu == 2000  # pending: what the claim asks for
    claim = find(items, "gpu-pod-twogpus-w2lzh")
    store.apply_raw(*event("ResourceClaim.resource.k8s.io", claim, "DELETED"))
    # no claim yet: the template it will be generated from says what the pod waits for
    assert store.snapshot().pods[key].requests.gpu == 2000
    template = find(items, "double-gpu")
    store.apply_raw(*event("ResourceClaimTemplate.resource.k8s.io", template, "DELETED"))
    assert store.snapshot().pods[key].requests.gpu == 0
    held = find(items, "pod1-gpu-7xk2p")
    del held["status"]["allocation"]  # deallocated: the pod asks again what its claim requests
    store.apply_raw(*event("ResourceClaim.resource.k8s.io", held, "MODIFIED"))
    assert store.snapshot().pods[("dra-gpu-test1", "pod1")].gpu_indices == ()


def test_a_relist_without_a_slice_takes_its_gpus_away() -> None:
    items = objects("dra-gpu-test1")
    store = store_of(items)
    assert store.snapshot().nodes["lt-dra-a100"].gpu.count == 8
    store.replace("ResourceSlice.resource.k8s.io", [])
    assert store.snapshot().nodes["lt-dra-a100"].gpu.count == 0


def test_a_malformed_slice_is_skipped_and_noted_never_half_applied() -> None:
    items = objects("dra-gpu-test1")
    bad = copy.deepcopy(find(items, "lt-dra-a100-gpu.nvidia.com-abc12"))
    bad["metadata"]["name"] = "bad-slice"
    bad["spec"]["pool"]["generation"] = "one"
    store = store_of(items)
    assert not store.apply_raw(*event("ResourceSlice.resource.k8s.io", bad))
    assert any("bad-slice" in n and "generation" in n for n in store.notes_text())
    assert store.snapshot().nodes["lt-dra-a100"].allocatable.gpu == 8000
    # a taint that cannot be read is not guessed at (it would take a GPU out of the count)
    tainted = copy.deepcopy(find(items, "lt-dra-a100-gpu.nvidia.com-abc12"))
    tainted["spec"]["devices"][0]["taints"] = [{"key": 5, "effect": "NoSchedule"}]
    assert not store.apply_raw(*event("ResourceSlice.resource.k8s.io", tainted, "MODIFIED"))
    assert any("taints[0].key" in n for n in store.notes_text())
    # an odd field that only shows (a device's memory) is dropped; the GPUs still count
    odd = copy.deepcopy(find(items, "lt-dra-a100-gpu.nvidia.com-abc12"))
    odd["spec"]["devices"][0]["capacity"] = {"memory": {"value": {"not": "a quantity"}}}
    assert store.apply_raw(*event("ResourceSlice.resource.k8s.io", odd, "MODIFIED"))
    assert store.snapshot().nodes["lt-dra-a100"].allocatable.gpu == 8000


def test_dynamic_mig_partitions_are_not_inventory_until_held() -> None:
    """KEP-4815 partitionable devices (NVIDIA's dynamic MIG): every possible partition is advertised."""
    items = objects("dra-mig")
    slice_ = find(items, "lt-dra-mig-gpu.nvidia.com-x8k2d")
    for device in slice_["spec"]["devices"]:
        device["consumesCounters"] = [{"counterSet": "gpu-0-counter-set", "counters": {}}]
    slice_["spec"]["sharedCounters"] = [{"name": "gpu-0-counter-set", "counters": {}}]
    snap = store_of(items).snapshot()
    node = snap.nodes["lt-dra-mig"]
    assert node.allocatable.get(MIG_1G) == 1  # only the partition a claim holds


# -- tables and the pane over the live path ----------------------------------------------------------


@pytest.fixture(scope="module")
def reading(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reading]:
    yield _serve_and_read(
        tmp_path_factory.mktemp("dra"), [c for c in CASES if c.server == "dra"], only_their_kinds=True
    )


def test_nodes_count_dra_gpus_and_show_their_health(reading: Reading) -> None:
    from hpctop.tables.nodes import NODE_COLUMNS, node_rows
    from hpctop.tables.render import render_table

    rows = {r["node"]: r for r in node_rows(reading.view.snapshot, reading.view.result)}
    a100, mig = rows["lt-dra-a100"], rows["lt-dra-mig"]
    assert (a100["gpus_alloc"], a100["gpus_total"], a100["state"]) == (7, 7, "alloc")
    assert a100["gpu_model"] == "NVIDIA-A100-SXM4-80GB" and a100["gpu_memory_mib"] == 81920
    assert a100["gpu_health"] == ["gpu-7 tainted dra.example.com/unhealthy=ecc:NoSchedule", "gpu-5 Unhealthy"]
    # GPU 0 as seven 1g.5gb slices and GPU 1 whole: 2 physical GPUs (GFD's gpu.count under the mixed
    # strategy), and the held slice is 1 of GPU 0's 7 compute slices, as a device-plugin slice counts
    assert (mig["gpus_total"], mig["gpus_alloc"], mig["state"]) == (2, 0.143, "mix")
    assert mig["mig"] == {"1g.5gb": {"total": 7, "allocated": 1, "free": 6}}
    # MIG through the extended-resource mapping: the pod's nvidia.com/mig-1g.12gb, counted once
    gh200 = rows["lt-dra-gh200"]
    assert gh200["mig"] == {"1g.12gb": {"total": 14, "allocated": 1, "free": 13}}
    assert gh200["gpu_model"] == "NVIDIA-GH200-96GB-HBM3"
    assert (gh200["gpus_total"], gh200["gpus_alloc"]) == (2, 0.143)  # two GH200s, 1/7 of one held
    assert "0.14/2, MIG 1g.5gb:1/7" in render_table([mig], NODE_COLUMNS)
    text = render_table([a100], NODE_COLUMNS)
    assert "7/7" in text and "gpu-7 tainted" in text


def test_gpus_group_dra_gpus_by_model(reading: Reading) -> None:
    from hpctop.tables.nodes import gpu_rows

    groups = {r["model"]: r for r in gpu_rows(reading.view.snapshot, reading.view.result)}
    a100 = groups["NVIDIA-A100-SXM4-80GB"]
    assert (a100["total"], a100["allocated"], a100["free"]) == (7, 7, 0)
    pcie = groups["NVIDIA-A100-PCIE-40GB"]
    assert pcie["mig"] == {"1g.5gb": {"total": 7, "allocated": 1, "free": 6}}
    # partitions count physical GPUs: the slice is 1/7 of one, the rest of the two GPUs is free
    assert (pcie["total"], pcie["allocated"], pcie["free"]) == (2, 0.143, 1.857)


def test_queues_count_the_gpus_dra_jobs_hold() -> None:
    """The DRA cases alone, scheduled as ``hpctop queues`` schedules a cluster: each GPU used once."""
    from hpctop.model.backends.queues import policy_from_snapshot
    from hpctop.model.policy import Policy
    from hpctop.scheduling.core import schedule
    from hpctop.tables.queues import queue_rows

    snap = store_of(objects()).snapshot()
    result = schedule(snap, policy_from_snapshot(snap, Policy()), 1767225600.0)
    used = {q["path"]: q["used_gpus"] for q in queue_rows(result)}
    # pod1, pod2, gpu-pod (4), gpu-full-pod (1, not 2), and two 1g MIG slices at 1/7 of a GPU each
    assert used["root.default"] == 7.286
    pending = {q["path"]: q["pending_gpus"] for q in queue_rows(result)}
    assert pending["root.default"] == 6  # the 2-GPU claim and the MPIJob's 2 x 2 workers


def test_the_compute_domain_is_the_gangs_reason(reading: Reading) -> None:
    job = reading.view.snapshot.jobs[("dra-compute-domain", "MPIJob", "nvbandwidth-test-1")]
    assert "dra" in job.backends
    assert job.observed_reason is not None and job.observed_reason.source == "dra"
    message = job.observed_reason.message
    assert "ComputeDomain nvbandwidth-test-compute-domain-1 NotReady: 0/2 nodes ready" in message


def test_the_pending_claims_reason_is_the_schedulers_message(reading: Reading) -> None:
    job = reading.view.snapshot.jobs[("dra-claim-pending", "Pod", "gpu-pod")]
    assert job.observed_reason is not None
    assert "cannot allocate all claims" in job.observed_reason.message


def test_the_gpu_pane_places_dra_pods_on_their_devices(reading: Reading) -> None:
    from hpctop.tui.gpumap import build_gpu_map

    snap = reading.view.snapshot
    gpu_map = build_gpu_map(snap.nodes, snap.pods, snap.pods_by_node, snap.jobs, [("dra", ["lt-dra-a100"])])
    [node] = [n for n in gpu_map.nodes if n.name == "lt-dra-a100"]
    assert len(node.slots) == 7 and node.used == 7000 and not node.unplaced
    holders = [[h[0] for h in s.holders] for s in node.slots]
    assert holders[0] == ["dra-gpu-test1/pod1"] and holders[1] == ["dra-gpu-test1/pod2"]
    assert all(h == ["dra-four-gpus/gpu-pod"] for h in holders[2:6])
    assert holders[6] == ["dra-extended-gpu/gpu-full-pod"]


def test_the_corpus_file_names_its_sources() -> None:
    text = (Path(__file__).parents[2] / "fixtures" / "live_truth" / "90_dra.yaml").read_text()
    assert "95932046683719c43b6a0dd9613c2e5aad5d6703" in text
    assert "10b39a39bcee995dfe7cd5e8e7b922be5e46f1e2" in text
    assert len(DRA_CASES) >= 6


def test_slices_beyond_any_real_node_are_refused_not_crashed_on() -> None:
    """A slice lists at most 128 devices (ResourceSliceMaxDevices); 41 pools of 128 GPUs naming one
    node (5,248 GPUs) are beyond hpctop's per-node bound: the node keeps no DRA GPUs, and says why."""
    items = objects("dra-gpu-test1")
    template = find(items, "lt-dra-a100-gpu.nvidia.com-abc12")
    big = copy.deepcopy(template)
    big["metadata"]["name"] = "too-many"
    big["spec"]["devices"] = [dict(template["spec"]["devices"][0], name=f"gpu-{i}") for i in range(129)]
    store = store_of(items)
    assert not store.apply_raw(*event("ResourceSlice.resource.k8s.io", big))
    assert any("more than 128 devices" in n for n in store.notes_text())
    for p in range(41):
        pool = copy.deepcopy(template)
        pool["metadata"]["name"] = f"pool-{p}"
        pool["spec"]["pool"]["name"] = f"pool-{p}"
        pool["spec"]["devices"] = [dict(template["spec"]["devices"][0], name=f"gpu-{i}") for i in range(128)]
        assert store.apply_raw(*event("ResourceSlice.resource.k8s.io", pool))
    node = store.snapshot().nodes["lt-dra-a100"]
    assert node.allocatable.gpu == 0
    assert any("lt-dra-a100" in n and "not counted" in n for n in store.notes_text())


def test_a_dra_mig_node_reads_as_its_device_plugin_twin() -> None:
    """The MIG case told in the device plugin's terms (GFD's labels for the ``mixed`` strategy, one
    whole GPU and seven ``nvidia.com/mig-1g.5gb`` advertised; a pod asking one slice) gives the same
    node, the same request and the same node and GPU rows: DRA MIG follows the model's MIG semantics,
    whatever they are."""
    from hpctop.model.backends.queues import policy_from_snapshot
    from hpctop.model.policy import Policy
    from hpctop.scheduling.core import schedule
    from hpctop.tables.nodes import gpu_rows, node_rows

    items = objects("dra-mig")
    dra_node = find(items, "lt-dra-mig")
    twin = copy.deepcopy(dra_node)
    twin["metadata"]["name"] = "lt-dp-mig"
    twin["metadata"]["labels"] = {
        "kubernetes.io/hostname": "lt-dp-mig",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": "NVIDIA-A100-PCIE-40GB",
        "nvidia.com/gpu.memory": "40960",
        "nvidia.com/gpu.count": "2",
        "nvidia.com/mig.strategy": "mixed",
    }
    for key in ("capacity", "allocatable"):
        twin["status"][key] = {**twin["status"][key], "nvidia.com/gpu": "1", MIG_1G: "7"}
    twin_pod = copy.deepcopy(find(items, "mig-pod"))
    twin_pod["metadata"]["name"] = "mig-pod-twin"
    twin_pod["spec"]["nodeName"] = "lt-dp-mig"
    twin_pod["spec"].pop("resourceClaims")
    twin_pod["status"].pop("resourceClaimStatuses")
    twin_pod["spec"]["containers"][0]["resources"] = {"limits": {MIG_1G: "1"}}
    snap = store_of([*items, ("Node", twin), ("Pod", twin_pod)]).snapshot()
    assert snap.nodes["lt-dra-mig"].gpu == snap.nodes["lt-dp-mig"].gpu
    assert snap.nodes["lt-dra-mig"].allocatable == snap.nodes["lt-dp-mig"].allocatable
    ns = "dra-mig"
    assert snap.pods[(ns, "mig-pod")].requests == snap.pods[(ns, "mig-pod-twin")].requests
    result = schedule(snap, policy_from_snapshot(snap, Policy()), 1767225600.0)
    rows = {r["node"]: r for r in node_rows(snap, result)}
    dra_row, twin_row = dict(rows["lt-dra-mig"], node=None), dict(rows["lt-dp-mig"], node=None)
    assert dra_row == twin_row
    [group] = [r for r in gpu_rows(snap, result) if r["model"] == "NVIDIA-A100-PCIE-40GB"]
    assert group["nodes"] == 2 and group["mig"]["1g.5gb"] == {"total": 14, "allocated": 2, "free": 12}
