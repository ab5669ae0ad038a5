"""RowCache's row skip (issue 16, K1): a changed job equal in what its row reads keeps its row.

Why: at 5,000 watch events/s the console's tick worker re-derives ~2,500 jobs per tick whose row
shows nothing new (a restart count, a condition), and :func:`hpctop.tui.rows.same_row` lets it
keep their rows without building them. A field the skip forgets to compare would leave a row
stale (a wrong GPU count, an end time never shown) until the job changed in some other way, so
random steps that change every field a row reads, and fields it does not, must give the rows
and counts of a cache built from nothing, and a skip that leaves out any one of its fields must
be caught by the same steps.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from operator import attrgetter

import pytest

from hpctop.model.objects import Job, JobKey
from hpctop.model.states import JobState
from hpctop.scheduling.types import JobPlan, PriorityBreakdown
from hpctop.tui import rows
from hpctop.tui.rows import JobRow, PlanSig, RowCache, make_row, order_key, reprio_row
from tests.sample_session import big_session

_NOT_PENDING = (JobState.RUNNING, JobState.COMPLETED, JobState.FAILED, JobState.STARTING, JobState.SUSPENDED)

#: one change per field :func:`same_row` compares (each changes what a row shows for some job)
VISIBLE: dict[str, Callable[[Job, int], Job]] = {
    "key": lambda j, s: dataclasses.replace(j, key=(j.key[0], j.key[1], f"{j.key[2]}-k{s}")),
    "namespace": lambda j, s: dataclasses.replace(j, namespace=f"{j.namespace}-n{s}"),
    "name": lambda j, s: dataclasses.replace(j, name=f"{j.name}-s{s}"),
    "uid": lambda j, s: dataclasses.replace(j, uid=f"uid-{s}"),
    "user": lambda j, s: dataclasses.replace(j, user=f"user{s}"),
    "queue": lambda j, s: dataclasses.replace(j, queue=f"q{s}"),
    "state": lambda j, s: dataclasses.replace(j, state=_NOT_PENDING[(_NOT_PENDING.index(j.state) + 1) % 5]),
    "partition": lambda j, s: dataclasses.replace(j, partition=f"part{s}"),
    "priority_value": lambda j, s: dataclasses.replace(j, priority_value=(j.priority_value or 0) + 1 + s),
    "running_members": lambda j, s: dataclasses.replace(j, running_members=j.running_members + 1),
    "min_members": lambda j, s: dataclasses.replace(j, min_members=j.min_members + 1),
    "per_member.gpu": lambda j, s: dataclasses.replace(
        j, per_member=dataclasses.replace(j.per_member, gpu=j.per_member.gpu + 1000)
    ),
    "members": lambda j, s: dataclasses.replace(j, members=j.members + 1),
    "submit_time": lambda j, s: dataclasses.replace(j, submit_time=j.submit_time - 7),
    "start_time": lambda j, s: dataclasses.replace(j, start_time=(j.start_time or 0.0) + 3),
    "end_time": lambda j, s: dataclasses.replace(j, end_time=(j.end_time or 0.0) + 5),
}
#: changes no row shows (what most watch events re-derive a job for)
INVISIBLE: tuple[Callable[[Job, int], Job], ...] = (
    lambda j, s: dataclasses.replace(j, restart_count=j.restart_count + 1),
    lambda j, s: dataclasses.replace(j, labels={**j.labels, "step": str(s)}),
    lambda j, s: dataclasses.replace(
        j, per_member=dataclasses.replace(j.per_member, cpu=j.per_member.cpu + 9)
    ),
    lambda j, s: dataclasses.replace(j),
)


def _session() -> tuple[dict[JobKey, Job], dict[JobKey, JobPlan]]:
    """800 jobs, 2 in 3 made not pending (the sample's cluster is small: most jobs wait), and a
    plan for only half of them (a job's own partition and priority show where it has none)."""
    session = big_session(800, seed=21)
    rng = random.Random(3)
    jobs = {}
    for k, j in session.snapshot.jobs.items():
        keep = j.state in _NOT_PENDING or rng.random() < 0.33
        jobs[k] = j if keep else dataclasses.replace(j, state=rng.choice(_NOT_PENDING))
    plans = {k: p for i, (k, p) in enumerate(session.result.plans.items()) if i % 2 == 0}
    return jobs, plans


def _random_steps(cache: RowCache, steps: int = 30) -> tuple[int, int]:
    """``steps`` steps of changes; returns (steps whose rows or counts differ from a fresh
    build's, rows reused by the skip in all)."""
    jobs, plans = _session()
    rng = random.Random(9)
    cache.rows(jobs, plans)
    differed = reused = 0
    for step in range(steps):
        jobs = dict(jobs)
        keys = list(jobs)
        for change in VISIBLE.values():  # each field on a few jobs, pending or not
            for key in rng.sample(keys, 3):
                if jobs[key].state in _NOT_PENDING or change is not VISIBLE["state"]:
                    jobs[key] = change(jobs[key], step)
        for key in rng.sample(keys, 40):
            jobs[key] = rng.choice(INVISIBLE)(jobs[key], step)
        if step % 4 == 1:  # the core ran: new plans, orders moved, PRIO of many jobs moved
            plans = dict(plans)
            for key in rng.sample(list(plans), 10):
                plans[key] = dataclasses.replace(plans[key], order=(plans[key].order or 0) + 1)
            for key in rng.sample(list(plans), len(plans) // 2):  # rows.reprio_row's case
                plan = plans[key]
                total = plan.priority.total + rng.choice((0, 1, -2))
                partition = plan.partition if rng.random() < 0.9 else "elsewhere"
                priority = PriorityBreakdown({}, {}, total)
                plans[key] = dataclasses.replace(plan, priority=priority, partition=partition)
        if step % 6 == 5:  # a job re-added at the end (a key moved): the full pass, not the patch
            key = rng.choice(keys)
            jobs[key] = jobs.pop(key)
        got = cache.rows(jobs, plans)
        reused += cache.reused
        want = [make_row(job, plans.get(key)) for key, job in jobs.items()]
        fresh = RowCache()
        fresh.rows(jobs, plans)
        if got != want or cache.counts != fresh.counts:
            differed += 1
    return differed, reused


def test_rows_with_the_skip_equal_a_fresh_build_over_random_changes() -> None:
    differed, reused = _random_steps(RowCache())
    assert differed == 0
    assert reused >= 20 * 30  # most invisible changes kept their rows without a build


def _reprio_ignoring_partition(
    row: JobRow, prev: Job, job: Job, old_sig: PlanSig, sig: PlanSig
) -> JobRow | None:
    """reprio_row that takes the new plan's partition to be the old one's."""
    if old_sig is None or sig is None:
        return None
    return reprio_row(row, prev, job, old_sig, (sig[0], old_sig[1], *sig[2:]))


def _reprio_ignoring_state(row: JobRow, prev: Job, job: Job, old_sig: PlanSig, sig: PlanSig) -> JobRow | None:
    """reprio_row for a pending job too (whose order, reason and ETA come from the plan)."""
    if old_sig is None or sig is None or old_sig[1] != sig[1]:
        return None
    if prev is not job and not rows.same_row(prev, job):
        return None
    return dataclasses.replace(row, prio=sig[0], order_sort=order_key(row.order, row.category, sig[0]))


@pytest.mark.parametrize("broken", [_reprio_ignoring_partition, _reprio_ignoring_state])
def test_a_reprio_that_ignores_what_else_a_plan_changes_is_caught(
    monkeypatch: pytest.MonkeyPatch, broken: Callable[..., JobRow | None]
) -> None:
    monkeypatch.setattr(rows, "reprio_row", broken)
    differed, _ = _random_steps(RowCache(), steps=12)
    assert differed > 0


def test_a_moved_priority_of_a_running_job_copies_its_row_with_the_new_prio() -> None:
    jobs, plans = _session()
    cache = RowCache()
    cache.rows(jobs, plans)
    key = next(k for k, j in jobs.items() if j.state is JobState.RUNNING and k in plans)
    plan = plans[key]
    moved = {
        **plans,
        key: dataclasses.replace(plan, priority=PriorityBreakdown({}, {}, plan.priority.total + 5)),
    }
    got = cache.rows(jobs, moved)
    assert [r for r in got if r.key == key] == [make_row(jobs[key], moved[key])]
    assert cache.changed and cache.built == 1


@pytest.mark.parametrize("left_out", list(VISIBLE))
def test_a_skip_that_forgets_one_field_is_caught(monkeypatch: pytest.MonkeyPatch, left_out: str) -> None:
    fields = [f for f in VISIBLE if f != left_out]
    monkeypatch.setattr(rows, "_ROW_INPUTS", attrgetter(*fields))
    differed, _ = _random_steps(RowCache(), steps=12)
    assert differed > 0


def test_the_changes_cover_every_field_the_skip_compares() -> None:
    job = next(j for j in _session()[0].values() if j.state is JobState.RUNNING)
    compared = rows._ROW_INPUTS(job)
    assert len(compared) == len(VISIBLE)
    for name, change in VISIBLE.items():
        assert attrgetter(name)(change(job, 1)) != attrgetter(name)(job), name


def test_an_invisible_change_keeps_the_row_object_and_builds_nothing() -> None:
    jobs, plans = _session()
    cache = RowCache()
    first = cache.rows(jobs, plans)
    key = next(k for k, j in jobs.items() if j.state is JobState.RUNNING)
    jobs2 = {**jobs, key: dataclasses.replace(jobs[key], restart_count=9)}
    second = cache.rows(jobs2, plans)
    assert (cache.built, cache.reused, cache.changed) == (0, 1, False)
    assert second is first
    jobs3 = {**jobs2, key: dataclasses.replace(jobs2[key], end_time=123.0)}
    third = cache.rows(jobs3, plans)
    assert (cache.built, cache.reused, cache.changed) == (1, 0, True)
    assert [r.end for r in third if r.key == key] == [123.0]
