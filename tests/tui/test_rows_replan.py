"""The first view's rows after the listing views equal a fresh build (issue 16, P4).

Why: while a big cluster's first lists stream in, the console shows rows without plans (the core
waits for the last list); the first core run then gives every job a plan, and
:meth:`RowCache.rows` rebuilds each such row with :func:`replan_row`, which keeps the old row's
sanitised id, name, user and queue cells instead of building them again. A field the plan moves
that the short cut kept stale (PRIO, partition, reason, ETA, order, the filter haystack), or a
kept cell that was not the job's, would show until the job next changes; so every row of that
first view must equal the row a fresh cache builds from the same jobs and plans.
"""

from __future__ import annotations

import dataclasses
from operator import attrgetter

from hpctop.model.objects import Job, JobKey
from hpctop.runtime.session import demo_session
from hpctop.tui.rows import RowCache, make_row, replan_row
from tests.sample_session import big_session


def test_replan_row_equals_make_row_for_every_demo_job_both_ways() -> None:
    session = demo_session(seed=1, at=1800.0)
    plans = session.result.plans
    states = set()
    planned = 0
    for key, job in session.snapshot.jobs.items():
        plan = plans.get(key)
        planned += plan is not None
        states.add(job.state)
        assert replan_row(make_row(job, None), job, plan) == make_row(job, plan), key
        assert replan_row(make_row(job, plan), job, None) == make_row(job, None), key
    assert planned and len(states) >= 3  # pending, running and finished jobs, with plans


def test_first_view_after_listing_views_equals_a_fresh_build() -> None:
    session = big_session(800, seed=13)
    jobs: dict[JobKey, Job] = dict(session.snapshot.jobs)
    key = next(iter(jobs))
    # one job with a name that the cell sanitises (a kept cell must be the sanitised one)
    jobs[key] = dataclasses.replace(jobs[key], name="[bold]x\x1b[31m\u200bname")
    plans = session.result.plans
    keys = list(jobs)
    cache = RowCache()
    listed: dict[JobKey, Job] = {}
    for start in range(0, len(keys), 250):  # pages arriving: a listing view after each, no plans
        listed = {**listed, **{k: jobs[k] for k in keys[start : start + 250]}}
        cache.rows(listed, {})
    listing_rows = cache.rows(listed, {})
    first = cache.rows(jobs, plans)  # the core's first run
    fresh = RowCache().rows(jobs, plans)
    assert cache.built == len(jobs)
    assert first == fresh
    assert [r.name for r in first if r.key == key] == [r.name for r in fresh if r.key == key]
    assert "\x1b" not in next(r.name for r in first if r.key == key)
    # the plans moved what the rows show, so equality above is not the listing rows kept
    shown = attrgetter("prio", "partition", "reason", "order", "eta", "haystack")
    moved = sum(shown(a) != shown(b) for a, b in zip(listing_rows, first, strict=True))
    assert moved > len(jobs) // 2
