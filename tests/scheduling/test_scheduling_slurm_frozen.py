"""Slurm's rules for started, held and released jobs in hpctop's core (issue 14, point 4).

Each test names the Slurm source it was checked against (SchedMD/slurm at tag slurm-22-05-8-1,
the Debian 12 version the real-Slurm tests run; the current master reads the same on these points):

- ``src/plugins/priority/multifactor/priority_multifactor.c``, ``decay_apply_weighted_factors``:
  "Priority 0 is reserved for held jobs. Also skip priority re_calculation for non-pending jobs"
  (unless ``PriorityFlags=CALCULATE_RUNNING``): a running job keeps, whole, the priority it had
  when it started; the age factor is ``(now - accrue_time) / PriorityMaxAge``
  (``_get_priority_internal``).
- ``src/slurmctld/acct_policy.c``: ``acct_policy_remove_accrue_time`` (called when a job is held,
  job_mgr.c) returns at once "if (!(accounting_enforce & ACCOUNTING_ENFORCE_LIMITS))", and
  ``acct_policy_handle_accrue_time`` "Always set[s] accrue_time to begin time when not enforcing
  limits". So without ``AccountingStorageEnforce=limits`` a hold does not reset the accrue time,
  and a released job's age counts from its submission again, the time it was held included;
  tests/slurm/test_release_age_real.py shows the real slurmctld doing so (AccrueTime unchanged).
  Only with limits enforced is it reset (and set anew when the job is eligible again): not
  modelled here.
- sprio(1) lists pending jobs only, and ``priority_p_get_priority_factors_list`` skips
  ``priority == 0`` ("0 means the job is held"); the scheduler tries only eligible jobs, so a
  held job has a reason and no place in line.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from hpctop.model.objects import Job, JobKey
from hpctop.model.policy import Policy
from hpctop.model.states import JobState
from hpctop.model.store import Snapshot
from hpctop.runtime.session import Session
from hpctop.scheduling.core import schedule
from hpctop.scheduling.positions import estimated_positions
from hpctop.scheduling.priority import FrozenPriorities, age_factor
from hpctop.scheduling.types import Placement, PriorityBreakdown, ScheduleResult
from hpctop.sources.scenario import parse_scenario
from hpctop.sources.simulator import SimulatedCluster
from tests.scheduling_helpers import job, node, running, snapshot

T0 = 1_000.0
DAY = 86_400.0


def test_the_placement_carries_the_priority_the_job_starts_with() -> None:
    first = job("first", gpu=2000, submit=0.0)
    result = schedule(snapshot([node("n1")], [first], []), Policy(), T0)
    (placed,) = result.placements
    assert placed.priority is not None
    assert placed.priority == result.plans[first.key].priority
    fast = schedule(snapshot([node("n1")], [first], []), Policy(), T0, placements_only=True)
    assert fast.placements[0].priority == placed.priority  # the binder's mode carries the same one


def test_a_running_jobs_whole_priority_is_frozen_at_its_start() -> None:
    first = job("first", gpu=2000, submit=0.0)
    at_start = schedule(snapshot([node("n1")], [first], []), Policy(), T0)
    started = at_start.placements[0].priority
    assert started is not None

    # a day later it runs, and so does a second job of its queue: its queue's usage went up, so
    # today's fair-share factor is lower than at its start, and its age would be its start's
    run1, pods1 = running("first", [("n1", (0, 1))], gpu=2000, start=T0)
    run2, pods2 = running("second", [("n1", (2, 3, 4, 5))], gpu=4000, start=T0 + 10)
    later_snap = snapshot([node("n1")], [], [(run1, pods1), (run2, pods2)])
    later = schedule(later_snap, Policy(), T0 + DAY)
    today = later.plans[run1.key].priority
    assert today.factors["fairshare"] < started.factors["fairshare"]  # what Slurm does not redo
    assert today.total != started.total

    frozen = FrozenPriorities()
    frozen.started(at_start.placements)
    kept = frozen.apply(later, later_snap.jobs)
    assert kept.plans[run1.key].priority == started
    assert kept.plans[run2.key].priority == later.plans[run2.key].priority  # not seen starting: as is
    assert len(kept.plans) == len(later.plans) and set(kept.plans) == set(later.plans)

    # once it no longer runs (ended: gone from the snapshot), it is forgotten
    ended = schedule(snapshot([node("n1")], [], [(run2, pods2)]), Policy(), T0 + 2 * DAY)
    assert frozen.apply(ended, snapshot([node("n1")], [], [(run2, pods2)]).jobs) is ended
    assert len(frozen) == 0


_TWO = """
[[nodes]]
name = "n1"
gpus = 8
gpu_model = "H100"
cpu = "64"
memory = "512Gi"

[[jobs]]
name = "first"
submit = 0
duration = 100000
per_member = {gpu = 2, cpu = "4", memory = "16Gi"}

[[jobs]]
name = "second"
submit = 600
duration = 100000
per_member = {gpu = 4, cpu = "4", memory = "16Gi"}
"""


def test_the_session_shows_a_running_job_with_the_priority_it_started_with() -> None:
    placed: list[Placement] = []

    def deciding(snap: Snapshot, policy: Policy, now: float) -> ScheduleResult:
        result = schedule(snap, policy, now)
        placed.extend(result.placements)
        return result

    scenario = parse_scenario(_TWO, name="two")
    session = Session(SimulatedCluster(scenario, seed=1), scenario.policy, "scenario:two", scheduler=deciding)
    session.advance_to_elapsed(2 * 3600)
    jobs = {j.name: j for j in session.snapshot.jobs.values()}
    assert jobs["first"].state == JobState.RUNNING and jobs["second"].state == JobState.RUNNING
    at_start = {p.job: p.priority for p in placed}
    shown = session.result.plans[jobs["first"].key].priority
    assert shown == at_start[jobs["first"].key]
    recomputed = schedule(session.snapshot, scenario.policy, session.now).plans[jobs["first"].key].priority
    assert recomputed.total != shown.total  # without the freeze it would read today's factors


def test_a_released_job_ages_from_its_submission_as_slurm_without_enforced_limits() -> None:
    # acct_policy.c (22.05): no AccountingStorageEnforce=limits, no reset of accrue_time on hold;
    # the accrue time stays the submit (begin) time, so after a release the age includes the hold
    policy = Policy()
    released = job("released", gpu=1000, submit=0.0)
    held = job("held", gpu=1000, submit=0.0, state=JobState.HELD)
    now = policy.weights.max_age / 4
    assert age_factor(released, now, policy.weights) == pytest.approx(0.25)
    assert age_factor(held, now, policy.weights) == 0.0  # while held: priority 0, no factors shown


def test_a_held_job_gets_a_reason_but_no_place_in_line() -> None:
    busy = running("busy", [("n1", tuple(range(8)))], gpu=8000, start=0.0)
    held = job("held", gpu=1000, submit=0.0, state=JobState.HELD, priority=10_000)
    first = job("first", gpu=1000, submit=1.0)
    second = job("second", gpu=1000, submit=2.0)
    snap = snapshot([node("n1")], [held, first, second], [busy])
    result = schedule(snap, Policy(), T0)
    plan = result.plans[held.key]
    assert plan.order is None and plan.reason is not None
    assert held.key not in result.pending_order
    assert [result.plans[j.key].order for j in (first, second)] == [0, 1]  # numbered without it
    fast = schedule(snap, Policy(), T0, placements_only=True)
    assert held.key not in fast.pending_order


def test_a_held_job_has_no_estimated_position() -> None:
    # positions.py ranks a queue's pending jobs by its layer's documented order; a held job is
    # out of that line (kube-scheduler, Kueue and Volcano leave a suspended or gated job out too)
    waiting = _kueue_less(job("waiting", gpu=1000, submit=1.0, queue="q"))
    held = _kueue_less(job("held", gpu=1000, submit=0.0, state=JobState.HELD, queue="q"))
    positions = estimated_positions([held, waiting], {})
    assert held.key not in positions
    assert positions[waiting.key].position == 1 and positions[waiting.key].of == 1


def _kueue_less(base: Job) -> Job:
    """The job as the coscheduling layer owns it (a layer positions.py ranks without objects)."""
    return replace(base, scheduler_name="scheduler-plugins-scheduler", backends=("coscheduling",))


def test_frozen_priorities_forget_exactly_the_jobs_a_full_check_would() -> None:
    # over random starts, failed binds, ends, requeues, disappearances, re-added and untouched
    # jobs, ``apply`` keeps exactly the jobs still active in the map it is given (a guard for any
    # shortcut in its pruning: one that looked only at the jobs whose object changed, tried in
    # session 13, failed this on failed binds and on jobs gone before any apply saw them)
    import random

    rng = random.Random(7)
    empty = schedule(snapshot([node("n1")], [], []), Policy(), T0)
    frozen = FrozenPriorities()
    reference: dict[JobKey, PriorityBreakdown] = {}
    jobs: dict[JobKey, Job] = {}
    made = [job(f"j{i}", gpu=1000, submit=0.0) for i in range(40)]
    breakdown = schedule(snapshot([node("n1")], [made[0]], []), Policy(), T0).placements[0].priority
    assert breakdown is not None
    for _ in range(300):
        for _ in range(rng.randrange(4)):
            j = rng.choice(made)
            active = replace(j, state=JobState.RUNNING)
            jobs[j.key] = active  # a new object, as the store makes on every change
            frozen.started([Placement(job=j.key, assignments=(), priority=breakdown)])
            reference[j.key] = breakdown
        for key in rng.sample(sorted(jobs, key=str), k=min(len(jobs), rng.randrange(3))):
            roll = rng.random()
            if roll < 0.3:
                del jobs[key]  # ended and gone from the snapshot
            elif roll < 0.6:
                jobs[key] = replace(jobs[key], state=JobState.PENDING)  # requeued
            else:
                jobs[key] = replace(jobs[key])  # changed, still as it was
        if jobs and rng.random() < 0.2:
            # placed, but the bind failed: the job's object did not change (pending or not)
            key = rng.choice(sorted(jobs, key=str))
            frozen.started([Placement(job=key, assignments=(), priority=breakdown)])
            reference[key] = breakdown
        if rng.random() < 0.1:
            # placed and gone before any apply saw it (None in the snapshot from the start)
            ghost = job(f"ghost{rng.randrange(10**6)}", gpu=1000, submit=0.0)
            frozen.started([Placement(job=ghost.key, assignments=(), priority=breakdown)])
            reference[ghost.key] = breakdown
        frozen.apply(empty, jobs)
        for key in [k for k in reference if (now := jobs.get(k)) is None or not now.state.is_active]:
            del reference[key]
        assert len(frozen) == len(reference)
        assert set(frozen._at_start) == set(reference)  # the same jobs, not only as many
