"""Placement: gangs all-or-nothing, GPU best fit, MIG, selectors, taints, topology, partitions."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from hpctop.model.objects import Taint, Toleration
from hpctop.model.policy import PartitionSpec, PartitionState, Policy
from hpctop.model.states import ReasonCode
from hpctop.scheduling.core import schedule
from hpctop.scheduling.types import ScheduleResult
from tests.scheduling_helpers import GI, job, node, running, snapshot

NOW = 10_000.0


def test_gang_of_four_full_nodes_with_three_free_places_nothing() -> None:
    nodes = [node(f"n{i}") for i in range(4)]
    busy = running("busy", [("n0", tuple(range(8)))], gpu=8000)
    gang = job("gang", gpu=8000, members=4)
    result = schedule(snapshot(nodes, [gang], [busy]), Policy(), NOW)
    assert result.placements == ()
    plan = result.plans[gang.key]
    assert plan.placement is None
    assert plan.reason is not None and plan.reason.code == ReasonCode.RESOURCES
    assert plan.reason.message.startswith("gpu")
    assert plan.eta is None  # the busy job has no time limit: nothing ever frees


def test_gang_fits_when_four_nodes_free() -> None:
    nodes = [node(f"n{i}") for i in range(4)]
    gang = job("gang", gpu=8000, members=4)
    result = schedule(snapshot(nodes, [gang]), Policy(), NOW)
    (placement,) = result.placements
    assert sorted(a.node for a in placement.assignments) == ["n0", "n1", "n2", "n3"]
    assert all(a.gpu_indices == tuple(range(8)) for a in placement.assignments)
    assert sorted(a.pod for a in placement.assignments) == sorted(gang.pending_pods)
    assert result.plans[gang.key].eta == NOW
    assert result.plans[gang.key].reason is None


def test_fraction_goes_to_fullest_gpu_that_fits() -> None:
    # index 0: 300 free, index 1: 500 free, others fully free
    runs = [
        running("r0", [("n1", (0,))], gpu=700, cpu=0, memory=0),
        running("r1", [("n1", (1,))], gpu=500, cpu=0, memory=0),
    ]
    small = job("small", gpu=300)
    mid = job("mid", gpu=400, submit=1)
    result = schedule(snapshot([node("n1", gpus=4)], [small, mid], runs), Policy(), NOW)
    where = {p.job[2]: p.assignments[0].gpu_indices for p in result.placements}
    assert where == {"small": (0,), "mid": (1,)}


def test_fractional_pods_share_an_index_up_to_1000() -> None:
    jobs = [job(f"f{i}", gpu=400, submit=i) for i in range(5)]
    result = schedule(snapshot([node("n1", gpus=2)], jobs), Policy(), NOW)
    used: dict[int, int] = defaultdict(int)
    for p in result.placements:
        used[p.assignments[0].gpu_indices[0]] += 400
    assert len(result.placements) == 4  # 2 per GPU (800), the fifth does not fit 200 left
    assert all(v <= 1000 for v in used.values())


def test_mig_profile_counts_against_extended_allocatable() -> None:
    mig = "nvidia.com/mig-3g.40gb"
    n = node("m1", gpus=0, product="A100", extended={mig: 2})
    jobs = [job(f"m{i}", extended={mig: 1}, submit=i) for i in range(3)]
    result = schedule(snapshot([n], jobs), Policy(), NOW)
    assert len(result.placements) == 2
    reason = result.plans[jobs[2].key].reason
    assert reason is not None and reason.code == ReasonCode.RESOURCES and reason.message.startswith(mig)


def test_selector_model_and_taints() -> None:
    nodes = [
        node("a", product="A100", labels={"zone": "x"}),
        node("h", product="H100", labels={"zone": "y"}, taints=[Taint("dedicated", "ml", "NoSchedule")]),
    ]
    tol = Toleration("dedicated", "Equal", "ml", "NoSchedule")
    jobs = [
        job("sel", gpu=1000, selector={"zone": "x"}),
        job("model", gpu=1000, gpu_models=["H100"], tolerations=[tol]),
        job("untolerated", gpu=1000, gpu_models=["H100"]),
    ]
    result = schedule(snapshot(nodes, jobs), Policy(), NOW)
    where = {p.job[2]: p.assignments[0].node for p in result.placements}
    assert where == {"sel": "a", "model": "h"}
    reason = result.plans[jobs[2].key].reason
    assert reason is not None and reason.code == ReasonCode.CONSTRAINTS


def test_gang_prefers_one_topology_domain() -> None:
    nodes = [
        node("n1", labels={"nvidia.com/gpu.clique": "c1"}),
        node("n2", labels={"nvidia.com/gpu.clique": "c1"}),
        node("n3", labels={"nvidia.com/gpu.clique": "c2"}),
        node("n4", labels={"nvidia.com/gpu.clique": "c2"}),
    ]
    busy = running("busy", [("n2", (0, 1, 2, 3))], gpu=4000)
    gang = job("gang", gpu=8000, members=2)
    result = schedule(snapshot(nodes, [gang], [busy]), Policy(), NOW)
    (placement,) = result.placements
    assert sorted(a.node for a in placement.assignments) == ["n3", "n4"]


def test_gang_packs_fewest_nodes() -> None:
    nodes = [node(f"n{i}") for i in range(3)]
    busy = [running("b0", [("n0", (0, 1, 2, 3))], gpu=4000), running("b1", [("n1", (0, 1, 2, 3))], gpu=4000)]
    gang = job("gang", gpu=2000, members=4)  # 8 GPUs: fits on n2 alone
    result = schedule(snapshot(nodes, [gang], busy), Policy(), NOW)
    assert {a.node for a in result.placements[0].assignments} == {"n2"}


def test_default_partitions_and_status() -> None:
    nodes = [
        node("h1"),
        node("h2", ready=False),
        node("a1", product="A100"),
        node("c1", gpus=0, product=None),
    ]
    busy = running("busy", [("h1", (0, 1))], gpu=2000, cpu=4000, memory=8 * GI)
    result = schedule(snapshot(nodes, [job("cpu", cpu=2000)], [busy]), Policy(), NOW)
    parts = {p.name: p for p in result.partitions}
    assert set(parts) == {"A100", "H100", "cpu"}
    h100 = parts["H100"]
    assert h100.nodes == ("h1", "h2")
    assert h100.nodes_down == 1
    assert h100.capacity.gpu == 8000  # only the ready node
    assert h100.allocated.gpu == 2000
    assert h100.free.gpu == 6000
    assert h100.gpu_models == ("H100",)
    # a CPU-only job is eligible everywhere and goes to the cpu partition first
    plan = result.plans[("ns", "Job", "cpu")]
    assert plan.partition == "cpu"
    assert result.placements[0].assignments[0].node == "c1"
    assert result.cluster.gpu == 16000


def test_requested_partition_and_multi_partition_label() -> None:
    nodes = [node("h1", gpus=1), node("a1", gpus=1, product="A100")]
    jobs = [
        job("want-a", gpu=1000, partition="A100"),
        job("any", gpu=1000, submit=1),
        job("third", gpu=1000, submit=2),
    ]
    result = schedule(snapshot(nodes, jobs), Policy(), NOW)
    assert result.plans[jobs[0].key].placement is not None
    assert result.plans[jobs[0].key].partition == "A100"
    assert result.plans[jobs[1].key].partition == "H100"
    assert result.plans[jobs[2].key].partition == "A100,H100"  # pending: all eligible partitions


def test_configured_partition_with_tier_is_tried_first() -> None:
    nodes = [node("h1", gpus=1, labels={"pool": "fast"}), node("h2", gpus=1, labels={"pool": "slow"})]
    policy = Policy(
        partitions=(
            PartitionSpec("slow", (("pool", "slow"),), priority_tier=1),
            PartitionSpec("fast", (("pool", "fast"),), priority_tier=5),
        )
    )
    result = schedule(snapshot(nodes, [job("j", gpu=1000)]), policy, NOW)
    assert result.placements[0].partition == "fast"
    assert [p.name for p in result.partitions] == ["fast", "slow"]
    assert result.plans[("ns", "Job", "j")].priority.factors["partition"] == pytest.approx(1.0)


def test_down_partition_offers_nothing() -> None:
    policy = Policy(partitions=(PartitionSpec("p", (), state=PartitionState.DOWN),))
    result = schedule(snapshot([node("h1")], [job("j", gpu=1000)]), policy, NOW)
    assert not result.placements


def _random_case(seed: int) -> tuple[ScheduleResult, list, dict, list]:  # type: ignore[type-arg]
    rng = random.Random(seed)
    nodes = [
        node(f"n{i}", gpus=rng.choice([0, 1, 2, 4, 8]), cpu=rng.choice([8000, 16000, 32000]), memory=64 * GI)
        for i in range(rng.randint(1, 6))
    ]
    runs = []
    for i, n in enumerate(nodes):
        if n.allocatable.gpu and rng.random() < 0.5:
            runs.append(running(f"r{i}", [(n.name, (0,))], gpu=rng.choice([300, 1000]), cpu=1000, memory=GI))
    jobs = [
        job(
            f"j{i}",
            gpu=rng.choice([0, 250, 500, 1000, 2000, 4000, 8000]),
            cpu=rng.choice([500, 1000, 4000, 8000]),
            memory=rng.choice([GI, 8 * GI, 32 * GI]),
            members=rng.randint(1, 4),
            submit=float(i),
        )
        for i in range(rng.randint(1, 12))
    ]
    result = schedule(snapshot(nodes, jobs, runs), Policy(), NOW)
    return result, nodes, {j.key: j for j in jobs}, runs


@pytest.mark.parametrize("seed", range(60))
def test_random_clusters_all_or_nothing_and_no_overcommit(seed: int) -> None:
    result, nodes, jobs, runs = _random_case(seed)
    by_name = {n.name: n for n in nodes}
    cpu: dict[str, int] = defaultdict(int)
    mem: dict[str, int] = defaultdict(int)
    gpu: dict[tuple[str, int], int] = defaultdict(int)
    for _job, pods in runs:
        for p in pods:
            cpu[p.node_name] += p.requests.cpu
            mem[p.node_name] += p.requests.memory
            for i in p.gpu_indices:
                gpu[(p.node_name, i)] += p.requests.gpu
    placed = {p.job: p for p in result.placements}
    for key, j in jobs.items():
        plan = result.plans[key]
        if key in placed:
            assigned = [a.pod for a in placed[key].assignments]
            assert sorted(assigned) == sorted(j.pending_pods)  # all members
            assert plan.reason is None
            for a in placed[key].assignments:
                cpu[a.node] += j.per_member.cpu
                mem[a.node] += j.per_member.memory
                g = j.per_member.gpu
                if g >= 1000:
                    assert len(a.gpu_indices) == g // 1000
                    for i in a.gpu_indices:
                        gpu[(a.node, i)] += 1000
                elif g:
                    assert len(a.gpu_indices) == 1
                    gpu[(a.node, a.gpu_indices[0])] += g
        else:
            assert plan.placement is None  # none
            assert plan.reason is not None
    for name, used in cpu.items():
        assert used <= by_name[name].allocatable.cpu
    for name, used in mem.items():
        assert used <= by_name[name].allocatable.memory
    for (name, index), used in gpu.items():
        assert 0 <= index < by_name[name].allocatable.gpu // 1000
        assert used <= 1000


def test_deterministic() -> None:
    a, *_ = _random_case(7)
    b, *_ = _random_case(7)
    assert a.placements == b.placements
    assert a.pending_order == b.pending_order
    assert {k: p.reason for k, p in a.plans.items()} == {k: p.reason for k, p in b.plans.items()}
