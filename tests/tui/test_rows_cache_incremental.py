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
from collections.abc import Mapping

from hpctop.model.objects import Job, JobKey
from hpctop.scheduling.types import JobPlan
from hpctop.tui.diffmap import MapDiff
from hpctop.tui.rows import JobRow, RowCache
from tests.sample_session import big_session


def _fresh(jobs: dict[JobKey, Job], plans: dict[JobKey, JobPlan]) -> RowCache:
    cache = RowCache()
    cache.rows(jobs, plans)
    return cache


def _random_steps(cache: RowCache) -> tuple[int, int, list[JobRow]]:
    """40 steps of random changes; returns (steps whose rows, order or counts differ from a fresh
    cache's, steps that built fewer rows than there are jobs, the last rows)."""
    session = big_session(800, seed=11)
    jobs = dict(session.snapshot.jobs)
    plans = dict(session.result.plans)
    spare = {k: jobs.pop(k) for k in list(jobs)[-60:]}  # jobs that arrive later
    rng = random.Random(5)
    cache.rows(jobs, plans)
    differed = partial = 0
    got: list[JobRow] = []
    for step in range(40):
        jobs = dict(jobs)
        keys = list(jobs)
        for key in rng.sample(keys, 6):  # a new Job object showing a different name
            jobs[key] = dataclasses.replace(jobs[key], name=f"{jobs[key].name}-s{step}")
        for key in rng.sample(keys, 4):  # a new Job object that shows the same
            jobs[key] = dataclasses.replace(jobs[key])
        if step % 3 == 0:
            for key in rng.sample(keys, 3):
                del jobs[key]
        if step % 4 == 1 and spare:
            key, job = spare.popitem()
            jobs[key] = job
        if step % 7 == 3:  # a job re-added after the others (a key moved): the full pass
            key = rng.choice(keys)
            if key in jobs:
                jobs[key] = jobs.pop(key)
        if step % 5 == 2:  # the core ran: new plans, some of them moved
            plans = dict(plans)
            moved = [k for k in rng.sample(list(plans), 20) if plans[k].order is not None]
            for key in moved:
                plans[key] = dataclasses.replace(plans[key], order=(plans[key].order or 0) + 7)
        got = cache.rows(jobs, plans)
        partial += cache.built < len(jobs)
        fresh = _fresh(jobs, plans)
        want = fresh.rows(jobs, plans)
        same = [r.key for r in got] == [r.key for r in want] == list(jobs)
        if not (same and got == want and cache.counts == fresh.counts):
            differed += 1
    return differed, partial, got


def test_incremental_rows_equal_a_fresh_cache_over_random_changes() -> None:
    differed, partial, got = _random_steps(RowCache())
    assert differed == 0
    assert partial >= 30  # most steps built only the changed rows
    assert any(r.name.endswith("-s39") for r in got)  # changes reached rows


class _CountsForgetDeletions(RowCache):
    """A broken cache: the patch path forgets to take deleted jobs off the category counts."""

    def _patch(
        self,
        jobs: Mapping[JobKey, Job],
        plans: Mapping[JobKey, JobPlan],
        d: MapDiff[JobKey, Job],
        last: tuple[object, object, list[JobRow]],
    ) -> list[JobRow]:
        out = super()._patch(jobs, plans, d, last)
        for i in d.deleted:  # undoes the patch's subtraction
            category = last[2][i].category
            self.counts[category] = self.counts.get(category, 0) + 1
        return out


def test_the_comparison_catches_a_cache_whose_counts_forget_deletions() -> None:
    differed, _, _ = _random_steps(_CountsForgetDeletions())
    assert differed > 0


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
    # built, or kept unbuilt when the row reads nothing that could differ (rows.same_row)
    assert cache.built + cache.reused == 1 and not cache.changed
    assert second is first
    jobs3 = dict(jobs2)
    jobs3[key] = dataclasses.replace(jobs[key], name="renamed")
    third = cache.rows(jobs3, plans)
    assert cache.changed and cache.built == 1
    assert [r.name for r in third if r.key == key] == ["renamed"]
    assert all(a is b for a, b in zip(first, third, strict=True) if a.key != key)
