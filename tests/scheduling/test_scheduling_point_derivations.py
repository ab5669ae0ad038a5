"""The per-job derivations a placements-only cycle keeps across cycles equal from-scratch ones.

Why these tests: the simulator's scheduling points no longer derive every pending job's request,
eligibility and quota-free ``settled`` answer each cycle; ``memo.PointDerivations`` keeps them
per job object while the cluster view and the policy are the same, across a moved ``now``. A kept
value gone stale (a job that changed, a node that changed the view, a queue closed by a new
policy) would silently try a job that must wait, or skip one that could start. So long random
sequences of changes (jobs, pods, nodes, the policy, the clock) are applied to one kept memo and
after every cycle (1) every kept entry whose job is still the snapshot's object is compared with
the values derived from scratch on a fresh cycle, and (2) the cycle's placements, order and
``settled`` count with those of a cycle on a fresh memo. Two broken memos (entries kept across a
policy change; entries reused by key whatever the job object) are shown to fail these checks.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest

import hpctop.scheduling.core as core
from bench.p6_core import NOW, cluster, policy
from hpctop.model.objects import Job, JobKey, Node, Pod, PodKey
from hpctop.model.policy import Policy, QueueSpec, QueueState
from hpctop.model.resources import Resources
from hpctop.model.store import Snapshot
from hpctop.scheduling.memo import ClusterView, Memo, PendingDerivations, PointDerivations
from hpctop.scheduling.placement import Request
from hpctop.scheduling.types import ScheduleResult
from tests.scheduling.test_scheduling_rollups import _change_jobs, _change_pods

Entries = dict[JobKey, tuple[Job, str, Any, Any, bool]]


def _tight(base: Policy, gpus: int, rng: random.Random) -> Policy:
    """The benchmark's queues with GPU caps (so the quota check, which is not kept, matters)."""
    queues = []
    for spec in base.queues:
        cap = rng.choice((None, 0.1, 0.3))
        limit = None if cap is None else Resources.of(gpu=int(gpus * cap) * 1000)
        queues.append(QueueSpec(spec.path, guaranteed=spec.guaranteed, max=limit, state=spec.state))
    return replace(base, queues=tuple(queues))


def _toggle_a_queue(pol: Policy, rng: random.Random) -> Policy:
    """A new policy with one leaf queue closed or opened again (``settled``'s closed check)."""
    paths = [q.path for q in pol.queues]
    leaves = [i for i, path in enumerate(paths) if not any(o.startswith(path + "/") for o in paths)]
    i = rng.choice(leaves)
    queues = list(pol.queues)
    q = queues[i]
    queues[i] = replace(q, state=QueueState.OPEN if q.state == QueueState.CLOSED else QueueState.CLOSED)
    return replace(pol, queues=tuple(queues))


def _change_gates(rng: random.Random, jobs: dict[JobKey, Job]) -> None:
    """Gate or ungate a few pending jobs, change a few member counts (``settled``'s job checks)."""
    pending = [k for k, j in jobs.items() if j.state in core._PENDING_STATES]
    for key in rng.sample(pending, min(len(pending), rng.randint(0, 3))):
        job = jobs[key]
        if rng.random() < 0.5:
            jobs[key] = replace(job, scheduling_gates=() if job.scheduling_gates else ("example.com/wait",))
        else:
            jobs[key] = replace(job, pending_pods=job.pending_pods[: rng.randint(0, len(job.pending_pods))])


def _change_nodes(rng: random.Random, nodes: dict[str, Node]) -> None:
    """Now and then cordon or uncordon a node: a new cluster view (eligibility, up partitions)."""
    if rng.random() < 0.25:
        name = rng.choice(sorted(nodes))
        nodes[name] = replace(nodes[name], unschedulable=not nodes[name].unschedulable)


def _from_scratch(snap: Snapshot, pol: Policy, now: float) -> dict[JobKey, tuple[str, Request, Any, bool]]:
    """Per pending job: its queue path, request, eligibility and quota-free ``settled`` on a fresh cycle."""
    cycle = core._Cycle(snap, pol, now, Memo(), placements_only=True)
    split = cycle.memo.jobs
    split.update(snap.jobs, core._PENDING_STATES, core._ACTIVE_STATES)
    path_of = cycle._roll_up(list(split.active.values()), with_demand=False)
    out = {}
    for key, job in split.pending.items():
        req = Request.of(job.per_member, 1 if job.one_per_node else 0)
        e = cycle.eligibility(job, req, max(len(job.pending_pods), 1))
        path = path_of[job.queue]
        out[key] = (path, req, e, cycle.settled(job, path, e, req, None, quota=False))
    return out


def _check_entries(memo: Memo, snap: Snapshot, pol: Policy, now: float) -> int:
    """Every kept entry of a job still in the snapshot (same object) equals the fresh values."""
    fresh = _from_scratch(snap, pol, now)
    checked = 0
    for key, (job, path, req, e, blocked) in memo.points.entries.items():
        if snap.jobs.get(key) is not job:
            continue  # a stale entry is never used for another object (the identity check)
        f_path, f_req, f_e, f_blocked = fresh[key]
        assert (path, req, blocked) == (f_path, f_req, f_blocked), key
        assert (e.partitions, e.matched, e.usable, e.unknown_partition) == (
            f_e.partitions,
            f_e.matched,
            f_e.usable,
            f_e.unknown_partition,
        ), key
        checked += 1
    return checked


def _decisions(result: ScheduleResult) -> tuple[object, ...]:
    return (
        [(p.job, p.assignments, p.partition, p.backfilled) for p in result.placements],
        result.pending_order,
        result.stats["settled"],
        result.stats["reservations"],
    )


def _view_of(result: ScheduleResult) -> tuple[object, ...]:
    """A full cycle's decisions and what the view shows of every pending job's plan."""
    plans = [
        (key, plan.order, plan.reason, plan.eta, plan.partition, plan.priority.total, plan.priority.factors)
        for key in result.pending_order
        for plan in (result.plans[key],)
    ]
    return (*_decisions(result), plans)


def _run_chain(
    seed: int, steps: int, memo: Memo, *, check_entries: bool, full: bool = False
) -> tuple[int, int, int]:
    """Random changes and placements-only cycles on ``memo``; returns (entries checked, hits, cycles
    whose settled count was > 0). Raises AssertionError at the first difference."""
    rng = random.Random(seed)
    snap = cluster(32, 300, seed=seed)
    pol = _tight(policy(), 32 * 8, rng)
    pods: dict[PodKey, Pod] = dict(snap.pods)
    jobs: dict[JobKey, Job] = dict(snap.jobs)
    nodes: dict[str, Node] = dict(snap.nodes)
    names = sorted(nodes)
    counter = [0]
    checked = hits = settled_cycles = 0
    now = NOW
    for step in range(steps):
        _change_pods(rng, pods, names, counter)
        _change_jobs(rng, jobs, counter)
        _change_gates(rng, jobs)
        _change_nodes(rng, nodes)
        if rng.random() < 0.15:
            pol = _toggle_a_queue(pol, rng)
        now += rng.choice((10.0, 10.0, 60.0, 600.0))  # the clock moves every cycle
        current = replace(
            snap,
            version=step,
            nodes=MappingProxyType(dict(nodes)),
            pods=MappingProxyType(dict(pods)),
            jobs=MappingProxyType(dict(jobs)),
        )
        if full:  # the console's view: request and eligibility kept across the moved clock
            kept = core.schedule(current, pol, now, memo=memo)
            fresh = core.schedule(current, pol, now, memo=Memo())
            assert _view_of(kept) == _view_of(fresh), f"step {step}"
            hits += sum(1 for key, entry in memo.pending.entries.items() if current.jobs.get(key) is entry[0])
        else:
            kept = core.schedule(current, pol, now, memo=memo, placements_only=True)
            fresh = core.schedule(current, pol, now, memo=Memo(), placements_only=True)
            assert _decisions(kept) == _decisions(fresh), f"step {step}"
            hits += memo.points.hits
        settled_cycles += kept.stats["settled"] > 0
        if check_entries:
            checked += _check_entries(memo, current, pol, now)
    return checked, hits, settled_cycles


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kept_point_derivations_equal_fresh_ones_over_random_changes(seed: int) -> None:
    checked, hits, settled_cycles = _run_chain(seed, 40, Memo(), check_entries=True)
    # not vacuous: entries were reused across moved clocks, compared, and jobs were settled
    assert hits > 1_000 and checked > 1_000 and settled_cycles > 20


@pytest.mark.parametrize("seed", [4, 5])
def test_full_cycles_keep_requests_and_eligibility_across_a_moved_clock(seed: int) -> None:
    _, kept_entries, _ = _run_chain(seed, 30, Memo(), check_entries=False, full=True)
    assert kept_entries > 1_000  # entries of unchanged job objects were there to reuse, clock moved


class _PendingKeptAcrossViews(PendingDerivations):
    """Broken: keeps its entries (and so each job's eligibility) when the cluster view changes."""

    def begin(self, cycle: tuple[object, ...], pending: Collection[JobKey]) -> None:
        if self.cycle is None or self.cycle[1:] != cycle[1:]:
            self.cycle = cycle
            self.entries = {}
        self.hits = 0


def test_a_full_cycle_memo_kept_across_views_is_caught() -> None:
    memo = Memo()
    memo.pending = _PendingKeptAcrossViews()
    with pytest.raises(AssertionError):
        for seed in (4, 5, 6):
            _run_chain(seed, 30, memo, check_entries=False, full=True)


class _KeptAcrossPolicies(PointDerivations):
    """Broken: drops its entries when the view changes, but not when the policy does."""

    def begin(self, view: ClusterView, policy: Policy, pending: Collection[JobKey]) -> Entries:
        if self.stamp is None or self.stamp[0] is not view:
            self.stamp = (view, policy)
            self.entries = {}
        self.hits = 0
        return self.entries


class _StaleByKey(dict[JobKey, tuple[Job, str, Any, Any, bool]]):
    """Broken entries: found by key whatever the job object (the entry claims to be the current one)."""

    def __init__(self, current: Callable[[JobKey], Job | None]) -> None:
        super().__init__()
        self.current = current

    def get(self, key: JobKey, default: Any = None) -> Any:
        found = super().get(key)
        job = self.current(key)
        if found is None or job is None:
            return default
        return (job, *found[1:])


class _ReusedByKey(PointDerivations):
    def __init__(self) -> None:
        super().__init__()
        self.jobs: dict[JobKey, Job] = {}

    def begin(self, view: ClusterView, policy: Policy, pending: Collection[JobKey]) -> Entries:
        entries = super().begin(view, policy, pending)
        if not isinstance(entries, _StaleByKey):
            stale = _StaleByKey(lambda key: self.jobs.get(key))
            stale.update(entries)
            self.entries = entries = stale
        return entries


def test_a_memo_kept_across_policy_changes_is_caught() -> None:
    memo = Memo()
    memo.points = _KeptAcrossPolicies()
    with pytest.raises(AssertionError):
        for seed in (1, 2, 3):
            _run_chain(seed, 40, memo, check_entries=True)


def test_a_memo_that_reuses_entries_by_key_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = _ReusedByKey()
    memo = Memo()
    memo.points = broken
    real = core._Cycle.run

    def run(self: core._Cycle, started: float) -> ScheduleResult:
        if self.memo is memo:
            broken.jobs = dict(self.snapshot.jobs)
        return real(self, started)

    monkeypatch.setattr(core._Cycle, "run", run)
    with pytest.raises(AssertionError):
        for seed in (1, 2, 3):
            _run_chain(seed, 40, memo, check_entries=False)
