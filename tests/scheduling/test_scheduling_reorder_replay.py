"""The decision pass replayed per job across a changed queue order (``replay.Reorder``).

Why these tests: a finished pod lowers its queue's DRF share, so that queue's jobs pop earlier
than in the recorded pass; each job now finds its own recorded turn and reuses it when what it
reads is unchanged (``core._Cycle._unaffected``). A missed input there (the nodes of a turn
popped out of its recorded order, the first blocked job of a partition, the search count) would
leave a stale decision on screen. So over random chains of finished pods, submitted, deleted and
held jobs at sizes where the queues' order does change, one memo is carried through and every
cycle is compared with a cycle from scratch (every plan: order, partition, ETA, reservations,
reasons; the placements and the pending order, queues, partitions, counted stats). Targeted
tests show it is not vacuous: after a submitted or a deleted job every later turn comes at
another place than recorded, and those turns are replayed.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.p6_core import NOW, cluster, policy
from hpctop.model.resources import Resources
from hpctop.model.states import JobState
from hpctop.model.store import Snapshot
from hpctop.scheduling.core import schedule
from hpctop.scheduling.memo import Memo
from hpctop.scheduling.placement import NodeFree, Request
from hpctop.scheduling.replay import RecordIndex, Reorder
from hpctop.scheduling.types import ScheduleResult
from tests.scheduling.test_scheduling_incremental import _decisions, _finish, _hold, _submit
from tests.scheduling.test_scheduling_inputs import _event

POLICY = policy()
#: P6's quick size, where a finished pod moves the queues' order inside the placements
QUICK = cluster(300, 1500)
SMALL = cluster(120, 600, seed=7)


def _finish_nth(snap: Snapshot, pick: int) -> Snapshot:
    running = sorted(k for k, j in snap.jobs.items() if j.state == JobState.RUNNING)
    return _finish(snap, running[pick % len(running)])


def _delete_pending(snap: Snapshot, pick: int) -> Snapshot:
    pending = sorted(k for k, j in snap.jobs.items() if j.state == JobState.PENDING)
    job = snap.jobs[pending[pick % len(pending)]]
    pods = {k: v for k, v in snap.pods.items() if k not in job.pods}
    jobs = {k: v for k, v in snap.jobs.items() if k != job.key}
    return dataclasses.replace(
        snap, version=snap.version + 1, pods=MappingProxyType(pods), jobs=MappingProxyType(jobs)
    )


def _step(snap: Snapshot, kind: str, pick: int) -> Snapshot:
    if kind == "finish_job":
        return _finish_nth(snap, pick)
    if kind == "submit":
        return _submit(snap, pick)
    if kind == "hold":
        return _hold(snap, pick)
    if kind == "delete_pending":
        return _delete_pending(snap, pick)
    return _event(snap, kind, pick)


EVENTS = (
    "finish_job",
    "finish_job",
    "finish_job",
    "submit",
    "hold",
    "delete_pending",
    "finish",
    "start",
    "move",
)


def _chain(base: Snapshot, events: list[tuple[str, int]]) -> None:
    memo = Memo()
    snap = base
    schedule(snap, POLICY, NOW, memo=memo)
    for kind, pick in events:
        snap = _step(snap, kind, pick)
        warm = schedule(snap, POLICY, NOW, memo=memo)
        cold = schedule(snap, POLICY, NOW, memo=Memo())
        assert _decisions(warm) == _decisions(cold), kind


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(EVENTS), st.integers(0, 10_000)), min_size=1, max_size=5))
def test_a_chain_of_events_replayed_per_job_gives_the_full_recompute(events: list[tuple[str, int]]) -> None:
    _chain(SMALL, events)


@settings(max_examples=6, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(EVENTS), st.integers(0, 10_000)), min_size=1, max_size=3))
def test_the_same_at_the_quick_size(events: list[tuple[str, int]]) -> None:
    _chain(QUICK, events)


def _blocked_in_first_half() -> tuple[Memo, ScheduleResult, int, int]:
    """A warm memo of QUICK's cycle, that cycle, its pass's turn count, and the index among the
    pending jobs (sorted by key) of the last job in the pass's first half that neither placed nor
    reserved: a turn well before the end of the pass that changed nothing."""
    memo = Memo()
    first = schedule(QUICK, POLICY, NOW, memo=memo)
    key = next(
        k
        for k in reversed(first.pending_order[: len(first.pending_order) // 2])
        if first.plans[k].placement is None and not first.plans[k].reserved_nodes
    )
    pending = sorted(k for k, j in QUICK.jobs.items() if j.state == JobState.PENDING)
    return memo, first, len(memo.pass_record.steps), pending.index(key)


def test_a_submitted_job_replays_the_turns_after_its_own() -> None:
    """Not vacuous: a copy of a blocked job comes right after it and is blocked too; every later
    turn now comes one place later than recorded (the turn-keyed replay stopped at the new job)
    and is replayed, and the answer is the full recompute's."""
    memo, first, turns, index = _blocked_in_first_half()
    after = _submit(QUICK, index)
    warm = schedule(after, POLICY, NOW, memo=memo)
    assert _decisions(warm) == _decisions(schedule(after, POLICY, NOW, memo=Memo()))
    new = next(i for i, k in enumerate(warm.pending_order) if k not in first.plans)
    assert new < turns - 50  # the new job's turn is well before the end of the pass
    assert warm.stats["pass_replayed"] >= turns - 1, (new, warm.stats["pass_replayed"], turns)


def test_a_deleted_blocked_job_replays_the_turns_after_it() -> None:
    """The other way: a blocked job deleted, every later turn comes one place earlier than
    recorded and is replayed (its recorded turn placed nothing)."""
    memo, _, turns, index = _blocked_in_first_half()
    after = _delete_pending(QUICK, index)
    warm = schedule(after, POLICY, NOW, memo=memo)
    assert _decisions(warm) == _decisions(schedule(after, POLICY, NOW, memo=Memo()))
    assert warm.stats["pass_replayed"] >= turns - 1 - 5, (warm.stats["pass_replayed"], turns)


def test_a_new_first_blocked_job_is_named_in_the_replayed_reasons() -> None:
    """A job submitted ahead of a partition's first blocked job (older, the same request) becomes
    that partition's first blocked job: the later turns that read only that it is blocked are
    replayed, and their "queued behind" reason names the new job (``_Cycle._rename``). No
    reservations (depth 0), so the new job's turn changes nothing but who is blocked first."""
    pol = dataclasses.replace(POLICY, reservation_depth=0)
    memo = Memo()
    first = schedule(QUICK, pol, NOW, memo=memo)
    turns = len(memo.pass_record.steps)
    marker = "queued behind higher-priority "
    behind = [k for k in first.pending_order if marker in getattr(first.plans[k].reason, "message", "")]
    assert behind, "no queued-behind reason at this size"
    blocker_id = first.plans[behind[-1]].reason.message.split(marker)[1].split(",")[0]  # type: ignore[union-attr]
    blocker = next(j for j in QUICK.jobs.values() if j.id == blocker_id)
    pending = sorted(k for k, j in QUICK.jobs.items() if j.state == JobState.PENDING)
    after = _submit(QUICK, pending.index(blocker.key))
    new_key = next(k for k in after.jobs if k not in QUICK.jobs)
    copy = dataclasses.replace(after.jobs[new_key], submit_time=blocker.submit_time - 86_400)
    after = dataclasses.replace(after, jobs=MappingProxyType({**after.jobs, new_key: copy}))
    warm = schedule(after, pol, NOW, memo=memo)
    cold = schedule(after, pol, NOW, memo=Memo())
    assert _decisions(warm) == _decisions(cold)
    named = [
        k for k in cold.pending_order if f"{marker}{copy.id}," in getattr(cold.plans[k].reason, "message", "")
    ]
    assert named, "the new job is no partition's first blocked job"
    assert warm.stats["pass_replayed"] > turns // 2, (warm.stats["pass_replayed"], turns)


def test_the_late_rule_adds_the_nodes_of_jobs_popped_before_their_turn() -> None:
    """``Reorder`` alone: a job popped before a turn recorded ahead of it (early) passes its nodes
    on to that turn when it pops later (late), and the early job itself gets the nodes of the
    recorded turns it passed; a job popped in order adds nothing."""
    templates = {name: NodeFree(name, 8, 8, {}, [1000] * 8, None, None) for name in ("a", "b", "c")}
    req = Request.of(Resources.of(gpu=1000))
    place = [("place", "q", None, req, [(name, (0,))], 0) for name in ("a", "b", "c")]
    ends = [1, 2, 3]
    index = RecordIndex(["k0", "k1", "k2"], ends, place, templates, {})
    reorder = Reorder(3, set(), lambda: index)
    assert reorder.arrive(0) is False  # in order
    reorder.leave(0, False, (), False)
    assert reorder.nodes == set()
    assert reorder.arrive(2) is True  # early: turn 1 ("b") not popped yet
    assert reorder.nodes == {"b"}
    reorder.leave(2, True, ["c"], False)
    assert reorder.arrive(1) is False  # late: turn 2 popped before it
    assert reorder.nodes == {"b", "c"}


def test_a_turn_that_passed_the_quota_is_decided_again_when_it_no_longer_does() -> None:
    """A capped queue's usage raised by an event (one of its running jobs grew): a turn that
    placed under the cap in the recorded pass is over it now, so it is decided again (the
    quota is asked again, ``_unaffected``) and the answer is the full recompute's."""
    base = SMALL
    memo = Memo()
    cold = schedule(base, POLICY, NOW, memo=memo)
    queue = "root.research.rl"
    placed = [p for p in cold.placements if base.jobs[p.job].queue == queue]
    assert placed, "no placement in the capped queue"
    need = base.jobs[placed[0].job].per_member.scale(len(placed[0].assignments))
    used = memo.pass_record.usage[queue]  # before the pass's placements: the first one just fits
    specs = tuple(
        dataclasses.replace(q, max=Resources.of(gpu=used.gpu + need.gpu)) if q.path == queue else q
        for q in POLICY.queues
    )
    tight = dataclasses.replace(POLICY, queues=specs)
    memo = Memo()
    first = schedule(base, tight, NOW, memo=memo)
    assert placed[0].job in {p.job for p in first.placements}
    # one running job of the queue grows (its pods too): its usage passes the cap for that placement
    running = sorted(
        k
        for k, j in base.jobs.items()
        if j.state == JobState.RUNNING and j.queue == queue and j.per_member.gpu > 0
    )
    job = base.jobs[running[0]]
    pods = dict(base.pods)
    for key in job.pods:
        pods[key] = dataclasses.replace(pods[key], requests=pods[key].requests.scale(2))
    jobs = {**base.jobs, job.key: dataclasses.replace(job, per_member=job.per_member.scale(2))}
    after = dataclasses.replace(
        base, version=base.version + 1, pods=MappingProxyType(pods), jobs=MappingProxyType(jobs)
    )
    warm = schedule(after, tight, NOW, memo=memo)
    scratch = schedule(after, tight, NOW, memo=Memo())
    assert _decisions(warm) == _decisions(scratch)
    assert placed[0].job not in {p.job for p in scratch.placements}  # not vacuous: the cap bites
