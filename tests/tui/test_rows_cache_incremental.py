"""RowCache's incremental path (issue 16, K1) against a cache built from nothing.

Why: between core runs the console's tick worker rebuilds only the rows of jobs whose ``Job``
object changed (found by identity) and keeps an old row object when the rebuilt row equals it;
when the plans change every plan's signature is compared. A row missed by either shortcut would
show a stale state, name or count until the next restart, so every step of a random sequence of
changes (jobs replaced with a visible or an invisible change, added, dropped, the plans
replaced) must give the rows, order and category counts a fresh cache gives on the same input.
"""

from __future__ import annotations

import dataclasses
import random

from hpctop.model.objects import Job, JobKey
from hpctop.scheduling.types import JobPlan
from hpctop.tui.rows import RowCache
from tests.sample_session import big_session


def _fresh(jobs: dict[JobKey, Job], plans: dict[JobKey, JobPlan]) -> RowCache:
    cache = RowCache()
    cache.rows(jobs, plans)
    return cache


def test_incremental_rows_equal_a_fresh_cache_over_random_changes() -> None:
    session = big_session(800, seed=11)
    jobs = dict(session.snapshot.jobs)
    plans = dict(session.result.plans)
    spare = {k: jobs.pop(k) for k in list(jobs)[-60:]}  # jobs that arrive later
    rng = random.Random(5)
    cache = RowCache()
    cache.rows(jobs, plans)
    visible_changes = 0
    for step in range(40):
        jobs = dict(jobs)
        keys = list(jobs)
        for key in rng.sample(keys, 6):  # a new Job object showing a different name
            jobs[key] = dataclasses.replace(jobs[key], name=f"{jobs[key].name}-s{step}")
            visible_changes += 1
        for key in rng.sample(keys, 4):  # a new Job object that shows the same
            jobs[key] = dataclasses.replace(jobs[key])
        if step % 3 == 0:
            for key in rng.sample(keys, 3):
                del jobs[key]
        if step % 4 == 1 and spare:
            key, job = spare.popitem()
            jobs[key] = job
        if step % 5 == 2:  # the core ran: new plans, some of them moved
            plans = dict(plans)
            moved = [k for k in rng.sample(list(plans), 20) if plans[k].order is not None]
            for key in moved:
                plans[key] = dataclasses.replace(plans[key], order=(plans[key].order or 0) + 7)
        got = cache.rows(jobs, plans)
        fresh = _fresh(jobs, plans)
        want = fresh.rows(jobs, plans)
        assert [r.key for r in got] == [r.key for r in want] == list(jobs), step
        assert got == want, step
        assert cache.counts == fresh.counts, step
    assert visible_changes and any(r.name.endswith("-s39") for r in got)  # changes reached rows


def test_unchanged_jobs_keep_the_same_row_objects_and_say_so() -> None:
    session = big_session(300, seed=12)
    jobs = dict(session.snapshot.jobs)
    plans = session.result.plans
    cache = RowCache()
    first = cache.rows(jobs, plans)
    key = next(iter(jobs))
    jobs2 = dict(jobs)
    jobs2[key] = dataclasses.replace(jobs[key])  # a new object, nothing a row shows changed
    second = cache.rows(jobs2, plans)
    assert cache.built == 1 and not cache.changed
    assert second is first
    jobs3 = dict(jobs2)
    jobs3[key] = dataclasses.replace(jobs[key], name="renamed")
    third = cache.rows(jobs3, plans)
    assert cache.changed and cache.built == 1
    assert [r.name for r in third if r.key == key] == ["renamed"]
    assert all(a is b for a, b in zip(first, third, strict=True) if a.key != key)
