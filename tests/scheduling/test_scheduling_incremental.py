"""The core's incremental path: what a warm memo keeps between cycles never changes a decision.

Why these tests: between two cycles the memo now keeps, per pending job, its ``Request`` and its
priority breakdown (``memo.PendingDerivations``), and reuses them when the job object, its
eligibility, its queue's fair-share factor and the cycle's ``now`` and normalisers are the same.
A key that missed one of those inputs would leave a stale priority, and so a wrong order, on
screen. So over random event sequences (pods finished, moved, resized, restarted; jobs
re-queued, aged, deleted, held and released, new pending jobs submitted; nodes cordoned; the clock
moved or not) one memo is carried through the whole sequence and every cycle is compared with a
cycle from scratch (``Memo()``): every plan (priority breakdown, order, reason, ETA, placement,
reserved nodes), the placements, the pending order, queues, partitions and the counted stats.
Two targeted tests show the property is not vacuous: a finished pod of one queue recomputes
exactly that queue's breakdowns, and a moved clock recomputes all of them.

The decision pass is replayed too (``core.PassRecord``): while a cycle pops the very job the
previous one popped at the same place, from the same state, it applies the recorded effects
instead of deciding again. The same property covers it (submitted, re-queued and deleted pending
jobs at an unmoved clock replay a prefix; so do finished, moved and resized pods, up to the first
job whose turn reads what they changed: ``core._Cycle._unaffected``); the targeted tests show that
a submitted job replays the jobs ahead of it, that a finished pod replays the jobs that cannot use
what it freed, and that a moved clock replays nothing.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.p6_core import NOW, cluster, policy
from hpctop.model.resources import Resources
from hpctop.model.states import JobState
from hpctop.model.store import Snapshot
from hpctop.scheduling import backfill
from hpctop.scheduling.core import schedule
from hpctop.scheduling.memo import Memo
from hpctop.scheduling.types import ScheduleResult
from tests.scheduling.test_scheduling_inputs import KINDS, _event
from tests.scheduling.test_scheduling_inputs import _decisions as same_input_decisions

BASE = cluster(48, 150, seed=5)
POLICY = policy()
#: stats that are timings or counts of reuse, not decisions
NOT_DECISIONS = frozenset({"seconds", "priorities_kept", "pass_replayed"})


def _decisions(result: ScheduleResult) -> tuple[Any, ...]:
    """What the same-inputs property compares, with ``now`` and the counted stats."""
    stats = sorted((k, v) for k, v in result.stats.items() if k not in NOT_DECISIONS)
    return (result.now, *same_input_decisions(result), stats)


def _submit(snap: Snapshot, pick: int) -> Snapshot:
    """A new pending job: a copy of a pending one under a new name (its pods too)."""
    pending = sorted(k for k, j in snap.jobs.items() if j.state == JobState.PENDING)
    job = snap.jobs[pending[pick % len(pending)]]
    name = f"{job.name}-again-{snap.version}"
    pods, jobs = dict(snap.pods), dict(snap.jobs)
    keys = []
    for k, key in enumerate(job.pending_pods):
        pod = dataclasses.replace(snap.pods[key], name=f"{name}-{k}", uid=f"{name}-{k}")
        pods[pod.key] = pod
        keys.append(pod.key)
    new = dataclasses.replace(
        job, key=(job.namespace, "Job", name), name=name, uid=name, pods=tuple(keys), pending_pods=tuple(keys)
    )
    jobs[new.key] = new
    return dataclasses.replace(
        snap, version=snap.version + 1, pods=MappingProxyType(pods), jobs=MappingProxyType(jobs)
    )


def _hold(snap: Snapshot, pick: int) -> Snapshot:
    """A pending job held, or a held one released (held jobs take a turn in the pass, no order)."""
    waiting = sorted(k for k, j in snap.jobs.items() if j.state in (JobState.PENDING, JobState.HELD))
    job = snap.jobs[waiting[pick % len(waiting)]]
    state = JobState.PENDING if job.state == JobState.HELD else JobState.HELD
    jobs = {**snap.jobs, job.key: dataclasses.replace(job, state=state)}
    return dataclasses.replace(snap, version=snap.version + 1, jobs=MappingProxyType(jobs))


EVENTS = (*KINDS, "submit", "hold", "hold")


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(EVENTS), st.integers(0, 10_000), st.sampled_from((0.0, 0.0, 30.0, 7200.0))),
        min_size=1,
        max_size=8,
    )
)
def test_a_warm_memo_through_random_events_gives_the_full_recompute(
    events: list[tuple[str, int, float]],
) -> None:
    memo = Memo()
    snap, now = BASE, NOW
    assert _decisions(schedule(snap, POLICY, now, memo=memo)) == _decisions(
        schedule(snap, POLICY, now, memo=Memo())
    )
    for kind, pick, dt in events:
        if kind == "submit":
            snap = _submit(snap, pick)
        elif kind == "hold":
            snap = _hold(snap, pick)
        else:
            snap = _event(snap, kind, pick)
        now += dt
        warm = schedule(snap, POLICY, now, memo=memo)
        cold = schedule(snap, POLICY, now, memo=Memo())
        assert _decisions(warm) == _decisions(cold), (
            f"{kind} at +{dt} s: the kept derivations moved a decision"
        )


def _finish_in(snap: Snapshot, queue: str) -> Snapshot:
    """One running single-pod job of ``queue`` finished: its pod and job gone (usage moves)."""
    job = next(
        j for j in snap.jobs.values() if j.state == JobState.RUNNING and j.queue == queue and len(j.pods) == 1
    )
    pods = {k: v for k, v in snap.pods.items() if k != job.pods[0]}
    jobs = {k: v for k, v in snap.jobs.items() if k != job.key}
    return dataclasses.replace(
        snap, version=snap.version + 1, pods=MappingProxyType(pods), jobs=MappingProxyType(jobs)
    )


def test_a_finished_pod_recomputes_only_its_queues_priorities() -> None:
    memo = Memo()
    first = schedule(BASE, POLICY, NOW, memo=memo)
    pending = [j for j in BASE.jobs.values() if j.state == JobState.PENDING]
    again = schedule(BASE, POLICY, NOW, memo=memo)
    assert again.stats["priorities_kept"] == len(pending)  # nothing changed: every breakdown kept
    assert _decisions(again) == _decisions(first)
    queue = "root.research.nlp"
    after = _finish_in(BASE, queue)
    warm = schedule(after, POLICY, NOW, memo=memo)
    in_queue = sum(1 for j in pending if j.queue == queue)
    assert in_queue > 0
    assert warm.stats["priorities_kept"] == len(pending) - in_queue
    # the queue's factor did move: its jobs' breakdowns differ from the kept ones
    key = next(j.key for j in pending if j.queue == queue)
    assert warm.plans[key].priority.factors["fairshare"] != first.plans[key].priority.factors["fairshare"]
    assert _decisions(warm) == _decisions(schedule(after, POLICY, NOW, memo=Memo()))


def test_a_moved_clock_recomputes_every_priority() -> None:
    memo = Memo()
    schedule(BASE, POLICY, NOW, memo=memo)
    later = schedule(BASE, POLICY, NOW + 60, memo=memo)
    assert later.stats["priorities_kept"] == 0
    assert _decisions(later) == _decisions(schedule(BASE, POLICY, NOW + 60, memo=Memo()))


def test_a_submitted_job_replays_the_jobs_ahead_of_it() -> None:
    memo = Memo()
    first = schedule(BASE, POLICY, NOW, memo=memo)
    # the lowest job in the order: a copy of it comes last in its queue, so its queue's turns
    # before it are the same and the pass replays a prefix
    last = BASE.jobs[first.pending_order[-1]]
    pick = sorted(k for k, j in BASE.jobs.items() if j.state == JobState.PENDING).index(last.key)
    after = _submit(BASE, pick)
    warm = schedule(after, POLICY, NOW, memo=memo)
    assert 0 < warm.stats["pass_replayed"] < warm.stats["considered"]
    # the jobs ahead of the new one come as before and are replayed (held ones take turns too)
    ahead = next(i for i, key in enumerate(warm.pending_order) if key not in first.plans)
    assert warm.pending_order[:ahead] == first.pending_order[:ahead]
    assert warm.stats["pass_replayed"] >= ahead
    assert _decisions(warm) == _decisions(schedule(after, POLICY, NOW, memo=Memo()))
    # the same snapshot again: the whole pass is replayed
    again = schedule(after, POLICY, NOW, memo=memo)
    assert again.stats["pass_replayed"] == again.stats["considered"]
    assert _decisions(again) == _decisions(warm)


def _finish(snap: Snapshot, job_key: tuple[str, str, str]) -> Snapshot:
    """A running job finished: its pods and the job gone (its node and its queue usage move)."""
    job = snap.jobs[job_key]
    pods = {k: v for k, v in snap.pods.items() if k not in job.pods}
    jobs = {k: v for k, v in snap.jobs.items() if k != job.key}
    return dataclasses.replace(
        snap, version=snap.version + 1, pods=MappingProxyType(pods), jobs=MappingProxyType(jobs)
    )


def test_a_finished_pod_replays_the_jobs_that_cannot_use_what_it_freed() -> None:
    """A finished pod frees capacity on one node and moves its queue's usage: the pass replays
    each job that reads neither (nor can host a member on the node, before or after), and decides
    again from the first that could; a moved clock replays nothing."""
    memo = Memo()
    schedule(BASE, POLICY, NOW, memo=memo)
    running = sorted(k for k, j in BASE.jobs.items() if j.state == JobState.RUNNING and len(j.pods) == 1)
    replayed_counts = []
    for key in running[:12]:
        memo = Memo()
        schedule(BASE, POLICY, NOW, memo=memo)
        after = _finish(BASE, key)
        finished = schedule(after, POLICY, NOW, memo=memo)
        replayed = int(finished.stats["pass_replayed"])
        assert replayed < finished.stats["considered"]
        assert _decisions(finished) == _decisions(schedule(after, POLICY, NOW, memo=Memo()))
        replayed_counts.append(replayed)
    assert any(replayed_counts), "no finished pod replayed any job: the rule is vacuous here"
    later = schedule(BASE, POLICY, NOW + 1, memo=memo)
    assert later.stats["pass_replayed"] == 0


def test_a_started_pod_replays_only_what_its_node_cannot_change() -> None:
    """The other direction: a pod bound on a node (less free there, more usage): the jobs that could
    have used the node in the recorded pass are decided again (``RecordIndex.fits_until``), the
    answer is the full recompute's."""
    memo = Memo()
    first = schedule(BASE, POLICY, NOW, memo=memo)
    pods = dict(BASE.pods)
    by_node = dict(BASE.pods_by_node)
    jobs = dict(BASE.jobs)
    # the node of the pass's first placement filled up: the job placed there (and the others
    # that could use it) no longer fit it, though the recorded pass had them fit
    node = first.placements[0].assignments[0].node
    rest = BASE.nodes[node].allocatable
    for key in BASE.pods_by_node.get(node, ()):
        rest = rest - BASE.pods[key].requests
    job = next(j for j in BASE.jobs.values() if j.state == JobState.PENDING and len(j.pending_pods) == 1)
    job = dataclasses.replace(job, per_member=rest)
    pod = dataclasses.replace(
        pods[job.pending_pods[0]], node_name=node, phase="Running", started=NOW - 60, requests=rest
    )
    pods[pod.key] = pod
    by_node[node] = by_node.get(node, frozenset()) | {pod.key}
    jobs[job.key] = dataclasses.replace(
        job, state=JobState.RUNNING, running_members=1, pending_pods=(), nodes=(node,), start_time=NOW - 60
    )
    after = dataclasses.replace(
        BASE,
        version=BASE.version + 1,
        pods=MappingProxyType(pods),
        jobs=MappingProxyType(jobs),
        pods_by_node=MappingProxyType(by_node),
    )
    warm = schedule(after, POLICY, NOW, memo=memo)
    assert _decisions(warm) == _decisions(schedule(after, POLICY, NOW, memo=Memo()))


#: a cluster where the replay past node events goes deep (``replay.Reorder``): 120 nodes, 600 pending pods
LARGER = cluster(120, 600, seed=7)
NODE_EVENTS = ("finish", "finish", "move", "resize", "start", "delete_pod", "delete_job", "submit")


@settings(max_examples=12, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(NODE_EVENTS), st.integers(0, 10_000)), min_size=1, max_size=4))
def test_replaying_past_node_events_gives_the_full_recompute(events: list[tuple[str, int]]) -> None:
    """At an unmoved clock every event kind that changes nodes or usage replays part of the pass
    and decides the rest again (``_unaffected``, ``replay.Reorder``): the answer is the full recompute's."""
    memo = Memo()
    snap = LARGER
    schedule(snap, POLICY, NOW, memo=memo)
    for kind, pick in events:
        snap = _submit(snap, pick) if kind == "submit" else _event(snap, kind, pick)
        warm = schedule(snap, POLICY, NOW, memo=memo)
        assert _decisions(warm) == _decisions(schedule(snap, POLICY, NOW, memo=Memo())), kind


def test_a_finished_pod_replays_past_the_jobs_that_use_what_it_freed() -> None:
    """Not vacuous: at P6's quick size (300 x 1,500) the first job that can use the freed node
    comes 5th in the pass, yet most of the pass up to where the queues' order changes is
    replayed: the turns decided again place the same members elsewhere, and the jobs popped out of
    their recorded order are replayed where what they read is unchanged (``replay.Reorder``)."""
    quick = cluster(300, 1500)
    memo = Memo()
    schedule(quick, POLICY, NOW, memo=memo)
    running = next(k for k, j in quick.jobs.items() if j.state == JobState.RUNNING and len(j.pods) == 1)
    after = _finish(quick, running)
    warm = schedule(after, POLICY, NOW, memo=memo)
    assert warm.stats["pass_replayed"] > 0.2 * warm.stats["considered"]
    assert _decisions(warm) == _decisions(schedule(after, POLICY, NOW, memo=Memo()))


def test_a_finished_pod_under_a_tight_quota_decides_its_queues_jobs_again() -> None:
    """A finished pod gives back quota: with ``root.research`` capped at what it uses, a pod of
    ``root.research.nlp`` ending lets jobs of its sibling queues start, whose turns come before
    nlp's (their DRF order is unchanged); so a turn whose capped queues' usage moved is decided
    again (``_unaffected``). Dropping that condition fails this test."""
    used = schedule(BASE, POLICY, NOW, memo=Memo()).queues["root.research"].used
    queues = tuple(
        dataclasses.replace(q, max=Resources.of(gpu=used.gpu)) if q.path == "root.research" else q
        for q in POLICY.queues
    )
    tight = dataclasses.replace(POLICY, queues=queues)
    memo = Memo()
    first = schedule(BASE, tight, NOW, memo=memo)
    key = min(
        k
        for k, j in BASE.jobs.items()
        if j.state == JobState.RUNNING and j.queue == "root.research.nlp" and len(j.pods) == 1
    )
    after = _finish(BASE, key)
    warm = schedule(after, tight, NOW, memo=memo)
    cold = schedule(after, tight, NOW, memo=Memo())
    assert _decisions(warm) == _decisions(cold)
    # not vacuous: the quota given back moved a placement
    assert {p.job for p in cold.placements} != {p.job for p in first.placements}


def test_replaying_with_a_search_budget_that_runs_out_gives_the_full_recompute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a budget that runs out mid-pass (as at P6's full size: 88 of 100 reservations), the
    replay past a finished pod meets searches cut short by the budget. Each finished pod against
    a full recompute. (Dropping ``_unaffected``'s ``budget_shift`` condition is not caught here:
    a turn that searches after a shift read the changed node in every case tried.)"""
    monkeypatch.setattr(backfill, "CYCLE_SEARCH_BUDGET", 400)
    running = sorted(k for k, j in LARGER.jobs.items() if j.state == JobState.RUNNING and len(j.pods) == 1)
    first = schedule(LARGER, POLICY, NOW, memo=Memo())
    assert first.stats["reservation_budget_left"] <= 0  # the budget does run out
    for key in running[:10]:
        memo = Memo()
        schedule(LARGER, POLICY, NOW, memo=memo)
        after = _finish(LARGER, key)
        assert _decisions(schedule(after, POLICY, NOW, memo=memo)) == _decisions(
            schedule(after, POLICY, NOW, memo=Memo())
        ), key


def test_a_moved_clock_keeps_the_static_terms_of_every_total() -> None:
    """A moved clock recomputes every total (the age moves) but keeps each job's weighted size,
    partition and QoS terms (``memo.priority_terms``): the same objects, the full recompute's order."""
    memo = Memo()
    schedule(BASE, POLICY, NOW, memo=memo)
    kept = {key: entry[2] for key, entry in memo.priority_terms.items()}
    assert kept
    later = schedule(BASE, POLICY, NOW + 600, memo=memo)
    assert all(memo.priority_terms[key][2] is terms for key, terms in kept.items())
    assert _decisions(later) == _decisions(schedule(BASE, POLICY, NOW + 600, memo=Memo()))
    # and the placements-only cycle on the same memo reads the same terms
    points = schedule(BASE, POLICY, NOW + 1200, memo=memo, placements_only=True)
    assert all(memo.priority_terms[key][2] is terms for key, terms in kept.items())
    assert (
        points.placements == schedule(BASE, POLICY, NOW + 1200, memo=Memo(), placements_only=True).placements
    )
