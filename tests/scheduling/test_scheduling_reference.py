"""The P6 reference (``bench/p6_reference.py``) gives the core's answer on seeded random clusters.

Why: P6's ratio is only honest when its reference does the same work (PERFORMANCE.md, Method),
so the two must agree on everything a cycle decides - the pending order, which jobs start and
on which nodes and GPU indices, each blocked job's reservation (start and nodes) and why each
job waits. The clusters are ``bench.p6_core.cluster`` at small sizes under varied policies
(configured partitions with evaluation tiers, a drained partition, strict priority, shallow
reservation depth, tight quotas, a closed queue, a small search budget) and varied jobs (held,
gated, incomplete gangs, one member per node, fractional GPUs, named and unknown partitions,
tainted nodes with and without tolerations). Either side changing a decision fails the test:
``test_a_changed_decision_is_seen`` perturbs one side and checks the comparison notices.
"""

from __future__ import annotations

import random
from dataclasses import replace
from types import MappingProxyType

import pytest

from bench.p6_core import NOW, PRODUCTS, cluster, one_event, policy, submitted
from bench.p6_reference import Answer, core_answer, reference
from hpctop.model.objects import Taint, Toleration
from hpctop.model.policy import PartitionSpec, PartitionState, Policy, QueueSpec, QueueState
from hpctop.model.resources import Resources
from hpctop.model.states import JobState
from hpctop.model.store import Snapshot
from hpctop.scheduling import backfill
from hpctop.scheduling.core import schedule
from hpctop.scheduling.memo import Memo

LABEL = "nvidia.com/gpu.product"
TAINT = Taint("dedicated", "serve", "NoSchedule")


def _varied(snap: Snapshot, rng: random.Random) -> Snapshot:
    """Some nodes tainted, and some pending jobs held, gated, incomplete, spread, fractional or pinned."""
    nodes = dict(snap.nodes)
    for name in sorted(nodes)[:: max(len(nodes) // 6, 1)]:
        nodes[name] = replace(nodes[name], taints=(TAINT,))
    jobs = dict(snap.jobs)
    pods = dict(snap.pods)
    # a share of a high GPU index held on every third node, by a pod no job owns: fractional
    # members then have partly used GPUs to choose from (best fit, not the lowest index)
    by_node = dict(snap.pods_by_node)
    template = next(iter(snap.pods.values()))
    for name in sorted(nodes)[::3]:
        pod = replace(
            template,
            name=f"share-{name}",
            uid=f"share-{name}",
            node_name=name,
            phase="Running",
            requests=Resources(1000, 1024**3, 400),
            gpu_indices=(7,),
        )
        pods[pod.key] = pod
        by_node[name] = by_node.get(name, frozenset()) | {pod.key}
    for key, job in snap.jobs.items():
        if job.state != JobState.PENDING or rng.random() < 0.7:
            continue
        roll = rng.random()
        if roll < 0.1:
            job = replace(job, state=JobState.HELD)
        elif roll < 0.2:
            job = replace(job, scheduling_gates=("example.com/gate",))
        elif roll < 0.3:
            job = replace(job, min_members=job.members + 1)
        elif roll < 0.45:
            job = replace(job, one_per_node=True)
        elif roll < 0.65:
            per = Resources(2000, 8 * 1024**3, rng.choice((250, 500, 600, 1500)))
            job = replace(job, per_member=per)
            for pod_key in job.pending_pods:
                pods[pod_key] = replace(pods[pod_key], requests=per)
        elif roll < 0.7:
            job = replace(job, partition=rng.choice((*PRODUCTS, "nowhere")))
        elif roll < 0.8:
            job = replace(job, tolerations=(Toleration("dedicated", "Equal", "serve", "NoSchedule"),))
        elif roll < 0.9:
            job = replace(job, priority_value=rng.choice((0, 50_000)))
        else:
            job = replace(job, submit_time=NOW - rng.uniform(0, 30 * 24 * 3600), time_limit=None)
        jobs[key] = job
    return replace(
        snap,
        nodes=MappingProxyType(nodes),
        jobs=MappingProxyType(jobs),
        pods=MappingProxyType(pods),
        pods_by_node=MappingProxyType(by_node),
    )


def _policies() -> dict[str, Policy]:
    base = policy()
    gpus = Resources.of
    tiers = (
        PartitionSpec("all", selector=(), priority_tier=2, evaluation_tier=1),
        PartitionSpec("hopper", selector=((LABEL, PRODUCTS[0]),), priority_job_factor=5, evaluation_tier=2),
        PartitionSpec("ampere", selector=((LABEL, PRODUCTS[1]),), state=PartitionState.DRAIN),
        PartitionSpec("l40s", selector=((LABEL, PRODUCTS[2]),), priority_tier=3),
    )
    tight = tuple(
        replace(q, max=gpus(gpu=16_000)) if q.path in ("root.batch", "root.research") else q
        for q in base.queues
    )
    closed = (*base.queues[:-1], replace(base.queues[-1], state=QueueState.CLOSED))
    return {
        "default": base,
        "strict": replace(base, backfill=False),
        "shallow": replace(base, reservation_depth=3),
        "partitions": replace(base, partitions=tiers),
        "quota": replace(base, queues=tight),
        "closed": replace(base, queues=(*closed, QueueSpec("root.other"))),
    }


def _both(snap: Snapshot, pol: Policy) -> tuple[Answer, Answer]:
    core = core_answer(schedule(snap, pol, NOW, memo=Memo()), snap)
    return core, reference(snap, pol, NOW)


CASES = [
    (name, nodes, pending, seed)
    for seed, (nodes, pending) in enumerate(((48, 240), (96, 600), (160, 500), (32, 500)))
    for name in _policies()
]


@pytest.mark.parametrize(("name", "nodes", "pending", "seed"), CASES)
def test_reference_gives_the_cores_answer(name: str, nodes: int, pending: int, seed: int) -> None:
    snap = cluster(nodes, pending, seed)
    if seed % 2:
        snap = _varied(snap, random.Random(seed))
    core, ref = _both(snap, _policies()[name])
    assert core.order and core.jobs, "a cycle with nothing pending checks nothing"
    assert core == ref, core.differences(ref)


@pytest.mark.parametrize("seed", [1, 2])
def test_reference_gives_the_cores_answer_when_the_search_budget_runs_out(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A small search budget: the blocked jobs searched after it is spent get no ETA, on both sides."""
    monkeypatch.setattr(backfill, "CYCLE_SEARCH_BUDGET", 400)
    snap = _varied(cluster(96, 600, seed), random.Random(seed))
    core, ref = _both(snap, policy())
    with_eta = [j for j in core.jobs.values() if j.reserved_nodes]
    without = [
        j for j in core.jobs.values() if j.order is not None and j.eta is None and j.reason is not None
    ]
    assert with_eta and without, "the budget should run out part way"
    assert core == ref, core.differences(ref)


def test_the_answer_covers_every_kind_of_decision() -> None:
    """The compared answer holds placements, backfilled starts, reservations and several reasons."""
    snap = _varied(cluster(96, 600, 1), random.Random(1))
    core, ref = _both(snap, policy())
    assert core == ref, core.differences(ref)
    reasons = {j.reason[0] for j in core.jobs.values() if j.reason is not None}
    assert len(reasons) >= 5, reasons
    assert any(backfilled for _, _, backfilled, _ in core.placements)
    assert any(j.reserved_nodes for j in core.jobs.values())
    assert any(len(members) > 1 for *_, members in core.placements)


def test_a_changed_decision_is_seen() -> None:
    """Moving one placed member to another GPU, or one reservation later, makes the answers differ."""
    snap = cluster(96, 600, 2)
    core, ref = _both(snap, policy())
    assert core == ref
    job, part, backfilled, members = ref.placements[0]
    pod, node, indices = members[0]
    moved = ((pod, node, tuple(i + 1 for i in indices) or (0,)), *members[1:])
    other = replace(ref, placements=((job, part, backfilled, moved), *ref.placements[1:]))
    assert core != other and core.differences(other)
    key = next(k for k, j in ref.jobs.items() if j.eta is not None and j.reserved_nodes)
    jobs = dict(ref.jobs)
    jobs[key] = replace(jobs[key], eta=(jobs[key].eta or 0) + 1)
    assert core != replace(ref, jobs=jobs)


@pytest.mark.parametrize("seed", [0, 3])
def test_jobs_of_a_parent_queue_are_ordered_by_its_current_share(seed: int) -> None:
    """Jobs that name a queue with children: its DRF share moves when a child's job starts."""
    snap = cluster(96, 600, seed)
    rng = random.Random(seed)
    jobs = dict(snap.jobs)
    for key, job in snap.jobs.items():
        if job.state == JobState.PENDING and job.queue and rng.random() < 0.3:
            jobs[key] = replace(job, queue=job.queue.rsplit(".", 1)[0])  # root.research.nlp -> root.research
    core, ref = _both(replace(snap, jobs=MappingProxyType(jobs)), policy())
    assert core == ref, core.differences(ref)


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_warm_cycles_after_events_give_the_references_answer(seed: int) -> None:
    """P6's warm figures (one finished pod, one submitted job, on the previous cycle's memo) decide
    what a plain cycle on the new snapshot decides: the kept derivations and the replayed pass
    change the cost, never the answer."""
    snap = cluster(96, 600, seed)
    if seed % 2:
        snap = _varied(snap, random.Random(seed))
    pol = policy()
    memo = Memo()
    for step in (snap, one_event(snap), snap, submitted(snap), snap, snap):
        result = schedule(step, pol, NOW, memo=memo)
        mine, ref = core_answer(result, step), reference(step, pol, NOW)
        assert mine == ref, mine.differences(ref)
