"""Placements-only cycles (``schedule(..., placements_only=True)``) bind exactly what full cycles bind.

Why these tests: the simulator session runs the core in placements-only mode at its scheduling
points (PERFORMANCE.md P7): jobs ``consider`` would stop at before trying to place them (held,
over quota, gated, ...) are dropped before their priority is computed, an "over quota" answer is
kept for the rest of the cycle, and no plans, reasons or roll-ups are built. That is only right
if the placements (and their order) are those of the full cycle, so random clusters with tight
quotas, held jobs and both backfill modes are scheduled both ways and compared, and a session
that runs the full core at every point is compared with one that runs the default.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

import hpctop.scheduling.core as core
from bench.p6_core import NOW, cluster, policy
from hpctop.model.objects import Job
from hpctop.model.policy import Policy, QueueSpec
from hpctop.model.resources import Resources
from hpctop.model.states import JobState, ReasonCode
from hpctop.model.store import Snapshot
from hpctop.runtime.session import Session, demo_session
from hpctop.scheduling.memo import Memo
from hpctop.scheduling.priority import PriorityInputs, breakdown
from hpctop.scheduling.priority import total as priority_total
from hpctop.sources.scenario import parse_scenario
from hpctop.sources.simulator import SimulatedCluster
from tests.runtime.test_session import state_of
from tests.sources.test_simulator import BASE, JOBS

QUOTA = ReasonCode.QUOTA_EXCEEDED


def _tight_policy(rng: random.Random, base: Policy, gpus: int) -> Policy:
    """The benchmark's queue tree with GPU caps drawn around what the cluster holds."""
    queues = []
    for spec in base.queues:
        cap = rng.choice((None, 0.05, 0.15, 0.3, 0.6))
        limit = None if cap is None else Resources.of(gpu=int(gpus * cap) * 1000)
        queues.append(QueueSpec(spec.path, guaranteed=spec.guaranteed, max=limit, state=spec.state))
    return replace(
        base,
        queues=tuple(queues),
        backfill=rng.random() < 0.7,
        reservation_depth=rng.choice((0, 5, 100)),
    )


def _with_held(rng: random.Random, snap: Snapshot) -> Snapshot:
    jobs = dict(snap.jobs)
    for key, job in snap.jobs.items():
        if job.state == JobState.PENDING and rng.random() < 0.1:
            jobs[key] = replace(job, state=JobState.HELD)
    return replace(snap, jobs=jobs)


@pytest.mark.parametrize("seed", range(12))
def test_same_placements_as_the_full_cycle_on_random_clusters(seed: int) -> None:
    rng = random.Random(seed)
    nodes = rng.choice((24, 48, 80))
    snap = _with_held(rng, cluster(nodes, rng.choice((300, 600, 900)), seed=seed))
    pol = _tight_policy(rng, policy(), nodes * 8)
    full = core.schedule(snap, pol, NOW, memo=Memo())
    fast = core.schedule(snap, pol, NOW, memo=Memo(), placements_only=True)
    assert [(p.job, p.assignments, p.partition, p.backfilled) for p in fast.placements] == [
        (p.job, p.assignments, p.partition, p.backfilled) for p in full.placements
    ]
    assert fast.stats["reservations"] == full.stats["reservations"]
    # the jobs tried are the full order less the ones settled before any placement attempt
    assert set(fast.pending_order) <= set(full.pending_order)
    assert len(full.pending_order) - len(fast.pending_order) == fast.stats["settled"]
    assert not fast.plans and not fast.queues and not fast.partitions


def test_random_clusters_exercise_what_placements_only_skips() -> None:
    """The cases above are not vacuous: jobs are settled up front and others hit quota mid-cycle."""
    settled = mid_cycle = placed = 0
    for seed in range(12):
        rng = random.Random(seed)
        nodes = rng.choice((24, 48, 80))
        snap = _with_held(rng, cluster(nodes, rng.choice((300, 600, 900)), seed=seed))
        pol = _tight_policy(rng, policy(), nodes * 8)
        full = core.schedule(snap, pol, NOW, memo=Memo())
        fast = core.schedule(snap, pol, NOW, memo=Memo(), placements_only=True)
        settled += int(fast.stats["settled"])
        placed += len(full.placements)
        quota = {k for k, p in full.plans.items() if p.reason is not None and p.reason.code == QUOTA}
        mid_cycle += len(quota & set(fast.pending_order))  # tried, then refused on quota at its turn
    assert settled > 100 and mid_cycle > 10 and placed > 100


@pytest.mark.parametrize("seed", range(3))
def test_full_mode_is_unchanged_by_the_quota_memo(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The full cycle's reasons quote the usage at each job's turn: the same as asking the tree each time."""
    rng = random.Random(100 + seed)
    snap = cluster(48, 600, seed=seed)
    pol = _tight_policy(rng, policy(), 48 * 8)
    memo_on = core.schedule(snap, pol, NOW, memo=Memo())

    def ask_every_time(self: core._Cycle, path: str, job: Job, m: int) -> tuple[str, str, int, int] | None:
        return self.tree.over_max(path, job.per_member.scale(m))

    monkeypatch.setattr(core._Cycle, "quota_block", ask_every_time)
    plain = core.schedule(snap, pol, NOW, memo=Memo())
    assert memo_on.placements == plain.placements and memo_on.pending_order == plain.pending_order
    reasons = [memo_on.plans[k].reason for k in memo_on.pending_order]
    assert reasons == [plain.plans[k].reason for k in plain.pending_order]
    assert any(r is not None and r.code == ReasonCode.QUOTA_EXCEEDED for r in reasons)


def test_session_binds_the_same_as_with_the_full_core() -> None:
    """A session on the default (placements-only at scheduling points) against one on the full core."""
    scenario = parse_scenario(BASE + JOBS, name="t")
    default = Session(SimulatedCluster(scenario, seed=3), scenario.policy, "t")
    full = Session(SimulatedCluster(scenario, seed=3), scenario.policy, "t", scheduler=core.schedule)
    for t in (30, 120, 400, 900):
        default.advance_to_elapsed(t)
        full.advance_to_elapsed(t)
        assert state_of(default) == state_of(full), t
        assert default.result.pending_order == full.result.pending_order
    assert default.binds == full.binds > 0


def test_priority_total_is_the_breakdown_total() -> None:
    """The dict-free total the placements-only cycle orders by, against ``breakdown`` on random inputs."""
    rng = random.Random(7)
    snap = _with_held(rng, cluster(24, 600, seed=7))
    weights = policy().weights
    checked = 0
    for job in snap.jobs.values():
        for _ in range(8):
            kwargs = {
                "now": NOW + rng.uniform(-3600, 30 * 24 * 3600),
                "weights": rng.choice((weights, replace(weights, max_age=0, qos=7, fairshare=333))),
                "inputs": PriorityInputs(rng.choice((0, 1, 5)), rng.choice((0, 1000, 10_000))),
                "fairshare": rng.uniform(-0.2, 1.2),
                "tier": rng.choice((-1, 0, 1, 3, 9)),
                "gpus_in_partitions": rng.choice((0, 8000, 192_000)),
                "cpus_in_partitions": rng.choice((0, 64_000, 4_096_000)),
            }
            assert priority_total(job, **kwargs) == breakdown(job, **kwargs).total  # type: ignore[arg-type]
            checked += 1
    assert checked > 1000 and any(j.state == JobState.HELD for j in snap.jobs.values())


@pytest.mark.slow
def test_trace_binds_the_same_as_with_the_full_core() -> None:
    """The demo through its arrival phase (quota-bound queues): placements-only points against full ones.

    Reproduce: ``.venv/bin/pytest -q -m slow tests/scheduling/test_scheduling_placements_only.py``.
    """
    default = demo_session(seed=1)
    full = demo_session(seed=1, scheduler=core.schedule)
    for t in (1_200, 3_000, 4_500):
        default.advance_to_elapsed(t)
        full.advance_to_elapsed(t)
        assert default.binds == full.binds and default.cluster.events_emitted == full.cluster.events_emitted
        a, b = default.snapshot, full.snapshot
        assert a.pods.keys() == b.pods.keys()
        assert all(a.pods[k].node_name == b.pods[k].node_name for k in a.pods)
        assert all(a.pods[k].gpu_indices == b.pods[k].gpu_indices for k in a.pods)
    assert default.result.pending_order == full.result.pending_order
    quota = [p for p in full.result.plans.values() if p.reason is not None and p.reason.code == QUOTA]
    assert len(quota) > 300  # the phase this mode is for: most pending jobs wait on their quota
