"""Plans' priorities: the total known at once, the factors made when read, running plans kept.

Why these tests: the job list reads every job's plan after each cycle for its priority total
(17k running and 13k pending jobs in P6's cluster), so the core hands out deferred breakdowns
(``core._Deferred``: the total summed by ``priority.total_with``, the factors made on first
read) and keeps running jobs' plans between cycles (``memo.RunningPlans``). A deferred total
that differed from its breakdown's, or a kept plan whose queue's fair share moved, would show a
wrong priority. The property test of ``test_scheduling_incremental`` compares every plan of a
warm memo with a cold cycle's (reading the factors, so each deferred total is checked against
its breakdown there); these show that every plan's breakdown is ``priority.breakdown`` of its
inputs, that the mismatch check can fail, and what is and is not kept.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest

from bench.p6_core import NOW, cluster, policy
from hpctop.model.objects import JobKey
from hpctop.model.states import JobState
from hpctop.model.store import Snapshot
from hpctop.scheduling.core import _Deferred, schedule
from hpctop.scheduling.memo import Memo
from hpctop.scheduling.priority import PriorityInputs, breakdown
from hpctop.scheduling.types import PriorityBreakdown, ScheduleResult

BASE = cluster(48, 150, seed=5)
POLICY = policy()


def _expected_running(snap: Snapshot, result: ScheduleResult) -> dict[JobKey, PriorityBreakdown]:
    """Each running job's breakdown as Slurm's fallback has it: ``priority.breakdown`` at its
    start, its partition's factor and capacity, its queue's fair-share factor before any placement."""
    parts = {p.name: p for p in result.partitions}
    max_qos = max((pc.value for pc in snap.priority_classes.values()), default=0)
    max_qos = max([max_qos, *(j.priority_value or 0 for j in snap.jobs.values())])
    inputs = PriorityInputs(max((p.priority_job_factor for p in result.partitions), default=0), max_qos)
    by_queue = {q.path: q for q in result.queues.values()}
    out: dict[JobKey, PriorityBreakdown] = {}
    for job in snap.jobs.values():
        if job.state != JobState.RUNNING:
            continue
        plan = result.plans[job.key]
        part = parts[plan.partition] if plan.partition else None
        queue = by_queue[job.queue or ""]
        out[job.key] = breakdown(
            job,
            now=job.start_time if job.start_time is not None else result.now,
            weights=POLICY.weights,
            inputs=inputs,
            fairshare=queue.fairshare_factor,
            tier=part.priority_job_factor if part else 0,
            gpus_in_partitions=part.capacity.gpu if part else 0,
            cpus_in_partitions=part.capacity.cpu if part else 0,
        )
    return out


def test_a_running_plans_priority_is_the_breakdown_at_its_start() -> None:
    result = schedule(BASE, POLICY, NOW, memo=Memo())
    expected = _expected_running(BASE, result)
    assert len(expected) > 50
    for key, want in expected.items():
        got = result.plans[key].priority
        assert got.total == want.total  # read first: no factors made yet
        assert isinstance(got, _Deferred) and got._factors is None
        assert (dict(got.factors), dict(got.weighted), got.total) == (want.factors, want.weighted, want.total)


def test_reading_a_total_makes_no_factors_and_reading_them_keeps_the_total() -> None:
    result = schedule(BASE, POLICY, NOW, memo=Memo())
    totals = {key: result.plans[key].priority.total for key in result.plans}
    assert all(result.plans[key].priority._factors is None for key in totals)
    for key, total in totals.items():
        prio = result.plans[key].priority
        assert round(sum(prio.weighted.values())) == total or total == 0  # held: 0
        assert prio.total == total and prio._factors is not None
    for placement in result.placements:
        assert placement.priority is not None and placement.priority == result.plans[placement.job].priority


def test_a_deferred_total_that_is_not_its_breakdowns_is_refused() -> None:
    job = next(j for j in BASE.jobs.values() if j.state == JobState.PENDING)
    good = breakdown(
        job,
        now=NOW,
        weights=POLICY.weights,
        inputs=PriorityInputs(1, 1),
        fairshare=0.5,
        tier=1,
        gpus_in_partitions=64_000,
        cpus_in_partitions=1_000_000,
    )
    args = (job, NOW, POLICY.weights, PriorityInputs(1, 1), 0.5, 1, 64_000, 1_000_000)
    same = _Deferred(good.total, *args)
    assert same == good and repr(same) == repr(good)
    wrong = _Deferred(good.total + 1, *args)
    with pytest.raises(AssertionError, match="deferred priority breakdown"):
        _ = wrong.factors
    with pytest.raises(dataclasses.FrozenInstanceError):
        same.total = 3


def _finish_in(snap: Snapshot, queue: str) -> Snapshot:
    job = next(
        j for j in snap.jobs.values() if j.state == JobState.RUNNING and j.queue == queue and len(j.pods) == 1
    )
    pods = {k: v for k, v in snap.pods.items() if k != job.pods[0]}
    jobs = {k: v for k, v in snap.jobs.items() if k != job.key}
    return dataclasses.replace(
        snap, version=snap.version + 1, pods=MappingProxyType(pods), jobs=MappingProxyType(jobs)
    )


def test_running_plans_are_kept_until_their_queues_share_moves() -> None:
    memo = Memo()
    first = schedule(BASE, POLICY, NOW, memo=memo)
    running = [j for j in BASE.jobs.values() if j.state == JobState.RUNNING]
    before = {j.key: first.plans[j.key] for j in running}
    # a moved clock: a running job's age is taken at its start, so every plan is kept
    later = schedule(BASE, POLICY, NOW + 3600, memo=memo)
    assert all(later.plans[key] is plan for key, plan in before.items())
    queue = "root.research.nlp"
    after = _finish_in(BASE, queue)
    warm = schedule(after, POLICY, NOW + 3600, memo=memo)
    cold = schedule(after, POLICY, NOW + 3600, memo=Memo())
    moved = kept = 0
    for job in running:
        if job.key not in after.jobs:
            continue
        plan = warm.plans[job.key]
        assert plan == cold.plans[job.key]
        if job.queue == queue:
            assert plan is not before[job.key]  # its queue's fair share moved
            assert plan.priority.factors["fairshare"] != before[job.key].priority.factors["fairshare"]
            moved += 1
        elif plan is before[job.key]:
            kept += 1
    assert moved > 0 and kept > 0
    # another policy (weights): nothing kept
    weights = dataclasses.replace(POLICY.weights, age=POLICY.weights.age + 1)
    other = dataclasses.replace(POLICY, weights=weights)
    reweighted = schedule(after, other, NOW + 3600, memo=memo)
    assert all(reweighted.plans[j.key] is not warm.plans[j.key] for j in running if j.key in after.jobs)
    fresh = schedule(after, other, NOW + 3600, memo=Memo())
    assert tuple(reweighted.plans.items()) == tuple(fresh.plans.items())
