"""The simulator handing its GPUs out through DRA (``--gpu-api dra``) shows what the device plugin shows.

The same scenario and seed run twice through the real core, once with ``nvidia.com/gpu`` and once
with ResourceSlices and claims: every job row, node row and GPU row must be the same, because
hpctop counts DRA GPUs exactly as device-plugin GPUs. What differs is on the wire: a DRA node
advertises no ``nvidia.com/gpu``, its GPUs are its slice's devices, and a pod asks for them
through a claim generated from a template, allocated when it is bound and deleted with it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest

from hpctop.model.store import Store
from hpctop.runtime.session import session_for
from hpctop.sources.scenario import parse_scenario
from hpctop.sources.simulator import EPOCH, SimulatedCluster
from hpctop.tables import jobs as jobs_table
from hpctop.tables.nodes import gpu_rows, node_rows
from tests.sources.test_simulator import BASE, JOBS


def rows(gpu_api: str, at: float) -> tuple[list[dict[str, object]], ...]:
    scenario = parse_scenario(BASE + JOBS, name="t")
    session = session_for(scenario, "scenario:t.toml", seed=2, at=at, gpu_api=gpu_api)
    snap, result = session.snapshot, session.result
    jobs = jobs_table.job_rows(snap, result, include_finished=True)
    return jobs, node_rows(snap, result), gpu_rows(snap, result)


@pytest.mark.parametrize("at", [0, 60, 400])
def test_dra_and_the_device_plugin_give_the_same_rows(at: float) -> None:
    plugin, dra = rows("device-plugin", at), rows("dra", at)
    assert plugin == dra
    jobs = {r["name"]: r for r in dra[0]}
    if at == 60:
        assert jobs["train"]["state"] == "RUNNING" and jobs["train"]["gpus"] == 16


def test_on_the_wire_the_gpus_are_slices_and_claims() -> None:
    scenario = parse_scenario(BASE + JOBS, name="t")
    cluster = SimulatedCluster(scenario, seed=2, gpu_api="dra")
    events = cluster.initial_events()
    nodes = [orjson.loads(raw)["object"] for kind, raw in events if kind == "Node"]
    assert nodes and all("nvidia.com/gpu" not in n["status"]["allocatable"] for n in nodes)
    slices = [orjson.loads(raw)["object"] for kind, raw in events if kind == "ResourceSlice.resource.k8s.io"]
    assert {s["spec"]["nodeName"]: len(s["spec"]["devices"]) for s in slices} == {
        "dgx-0": 8,
        "dgx-1": 8,
        "t4-0": 2,
    }
    store = Store(clock=lambda: cluster.now)
    for kind, raw in events:
        assert store.apply_raw(kind, raw)
    snap = store.snapshot()
    assert snap.nodes["dgx-0"].allocatable.gpu == 8000 and snap.nodes["dgx-0"].gpu.product == "H100"
    train = [p for k, p in snap.pods.items() if k[1].startswith("train-")]
    assert len(train) == 2 and all(p.requests.gpu == 8000 and p.claims is not None for p in train)
    # bind one: its claim is allocated first, the pod follows; the node holds its 8 GPUs
    pod = train[0]
    bound = cluster.bind(pod.key, "dgx-0", tuple(range(8)))
    assert [k for k, _ in bound][:2] == ["ResourceClaim.resource.k8s.io", "Pod"]
    for kind, raw in bound:
        assert store.apply_raw(kind, raw)
    held = store.snapshot().pods[pod.key]
    assert held.node_name == "dgx-0" and held.requests.gpu == 8000 and held.gpu_indices == tuple(range(8))
    # the pod ends (its duration passes): the claim is deallocated, then deleted with the pod
    later = cluster.advance(EPOCH + 10_000)
    claims = Counter(orjson.loads(raw)["type"] for k, raw in later if k == "ResourceClaim.resource.k8s.io")
    assert claims["MODIFIED"] >= 1
    assert not store.notes_text()


def test_a_recording_of_the_dra_cluster_replays_its_gpus(tmp_path: Path) -> None:
    """``hpctop record --demo --gpu-api dra``: the slices and claims are in the recording, and a
    replay counts the same GPUs the recorded session did (the replay has no simulator behind it)."""
    from hpctop.runtime.recording import ReplaySession, record_simulation

    scenario = parse_scenario(BASE + JOBS, name="t")
    path = tmp_path / "dra.jsonl.gz"
    _, recorded = record_simulation(path, scenario, seed=2, source_name="t", until=60, gpu_api="dra")
    replay = ReplaySession(path)
    replay.replayer.advance(60)
    replay.refresh()
    gpus = {name: n.allocatable.gpu for name, n in replay.snapshot.nodes.items()}
    assert gpus == {name: n.allocatable.gpu for name, n in recorded.snapshot.nodes.items()}
    assert gpus["dgx-0"] == 8000
    held = {k: p.requests.gpu for k, p in replay.snapshot.pods.items() if p.holds_resources}
    assert held == {k: p.requests.gpu for k, p in recorded.snapshot.pods.items() if p.holds_resources}
    assert sum(held.values()) >= 16000  # the 2 x 8-GPU gang holds its GPUs through claims
