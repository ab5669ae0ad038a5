"""The per-queue sums and unheld members the memo patches equal the ones summed over every job.

Why these tests: ``core._roll_up`` no longer sums queue usage, pending demand, job counts and the
members no node holds over every running and pending job each cycle; ``memo.JobSplit`` keeps the
sums per queue name and ``memo.UnheldMembers`` the unheld count per job, both patched from the
jobs and the nodes' charges that changed. A missed change would silently move a queue's share
(and so the order) or a pane's used, so long random sequences of snapshot changes are applied and
after each step the kept values are compared with the from-scratch ones, and the queue status of
a cycle on the kept memo with that of a cycle on a fresh memo (placements-only cycles between the
full ones leave the change logs to accumulate). Pods bound to nodes outside the node list and
nodes filled beyond their allocatable make members unheld.
"""

from __future__ import annotations

import random
from dataclasses import replace
from types import MappingProxyType

import pytest

import hpctop.scheduling.core as core
from bench.p6_core import NOW, cluster, policy
from hpctop.model.objects import Job, JobKey, Pod, PodKey
from hpctop.model.resources import Resources
from hpctop.model.store import Snapshot
from hpctop.scheduling.memo import IntSum, JobSplit, Memo, add_scaled
from hpctop.scheduling.partitions import to_resources
from hpctop.scheduling.unheld import UnheldMembers
from tests.scheduling.test_scheduling_rollups import _change_jobs, _change_pods

Sums = dict[str | None, Resources]
Counts = dict[str | None, int]


def _sums_from_scratch(jobs: dict[JobKey, Job]) -> tuple[Sums, Counts, Sums, Counts]:
    """Running usage and count, pending demand and count per queue name, summed over every job."""
    used: dict[str | None, IntSum] = {}
    running: dict[str | None, int] = {}
    demand: dict[str | None, IntSum] = {}
    waiting: dict[str | None, int] = {}
    for job in jobs.values():
        if job.state in core._PENDING_STATES:
            add_scaled(demand.setdefault(job.queue, ([0, 0, 0], {})), job.per_member, len(job.pending_pods))
            waiting[job.queue] = waiting.get(job.queue, 0) + 1
        elif job.state in core._ACTIVE_STATES:
            running_members = job.members - len(job.pending_pods)
            add_scaled(used.setdefault(job.queue, ([0, 0, 0], {})), job.per_member, running_members)
            running[job.queue] = running.get(job.queue, 0) + 1
    return (
        {q: to_resources(*acc) for q, acc in used.items()},
        running,
        {q: to_resources(*acc) for q, acc in demand.items()},
        waiting,
    )


def _resources(sums: dict[str | None, IntSum]) -> dict[str | None, Resources]:
    return {q: to_resources(*acc) for q, acc in sums.items()}


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_kept_queue_sums_equal_the_sums_over_every_job(seed: int) -> None:
    rng = random.Random(seed)
    snap = cluster(48, 150, seed=seed)
    pods, jobs = dict(snap.pods), dict(snap.jobs)
    nodes = sorted(snap.nodes)
    split = JobSplit()
    counter = [0]
    patched = 0
    for _ in range(250):
        _change_pods(rng, pods, nodes, counter)
        _change_jobs(rng, jobs, counter)
        rebuilds = split.rebuilds
        split.update(MappingProxyType(dict(jobs)), core._PENDING_STATES, core._ACTIVE_STATES)
        patched += split.rebuilds == rebuilds
        used, running, demand, waiting = _sums_from_scratch(jobs)
        # the same names (a name whose last job left is dropped), the same sums, the same counts
        assert _resources(split.used) == used and split.running == running
        assert _resources(split.demand) == demand and split.waiting == waiting
    assert patched > 150  # most steps patched the sums rather than starting over


def _snapshot(base: Snapshot, step: int, pods: dict[PodKey, Pod], jobs: dict[JobKey, Job]) -> Snapshot:
    return replace(base, version=step, pods=MappingProxyType(dict(pods)), jobs=MappingProxyType(dict(jobs)))


def _unheld_from_scratch(memo: Memo, jobs: dict[JobKey, Job]) -> dict[JobKey, int]:
    kept = memo.kept_free
    assert kept is not None
    counts = {}
    for key, job in jobs.items():
        if job.state in core._ACTIVE_STATES:
            n = UnheldMembers.count(job, kept.charges, kept.over)
            if n:
                counts[key] = n
    return counts


def _crowd(rng: random.Random, pods: dict[PodKey, Pod], nodes: list[str]) -> None:
    """Bind running pods elsewhere: to a node outside the node list, or all onto one node (beyond
    its allocatable): both leave members counted as running that no node holds."""
    keys = [k for k, p in pods.items() if p.node_name is not None]
    for key in rng.sample(keys, min(len(keys), rng.randint(0, 4))):
        where = rng.choice(("ghost-node", nodes[0], nodes[1]))
        pods[key] = replace(pods[key], node_name=where, phase="Running")


@pytest.mark.parametrize("seed", [21, 22, 23])
def test_queue_status_on_a_kept_memo_equals_a_fresh_cycle(seed: int) -> None:
    rng = random.Random(seed)
    snap = cluster(48, 150, seed=seed)
    pol = policy()
    pods, jobs = dict(snap.pods), dict(snap.jobs)
    nodes = sorted(snap.nodes)
    kept = Memo()
    counter = [0]
    unheld_seen = 0
    for step in range(60):
        _change_pods(rng, pods, nodes, counter)
        _change_jobs(rng, jobs, counter)
        _crowd(rng, pods, nodes)
        now_snap = _snapshot(snap, step, pods, jobs)
        # placements-only cycles (the simulator's) between full ones: the change logs accumulate
        for _ in range(rng.randint(0, 2)):
            core.schedule(now_snap, pol, NOW, memo=kept, placements_only=True)
            _change_pods(rng, pods, nodes, counter)
            _change_jobs(rng, jobs, counter)
            now_snap = _snapshot(snap, step, pods, jobs)
        a = core.schedule(now_snap, pol, NOW, memo=kept)
        b = core.schedule(now_snap, pol, NOW, memo=Memo())
        assert a.queues == b.queues  # used (held only), pending, running and pending job counts
        assert a.pending_order == b.pending_order and a.placements == b.placements
        counts = _unheld_from_scratch(kept, jobs)
        assert dict(kept.unheld.counts) == counts
        unheld_seen += bool(counts)
    assert unheld_seen > 10  # the unheld path was exercised, not only the empty case


def test_a_pod_claimed_by_two_running_jobs_is_counted_for_each() -> None:
    snap = cluster(48, 150, seed=3)
    pol = policy()
    jobs = dict(snap.jobs)
    running = [j for j in jobs.values() if j.state in core._ACTIVE_STATES and j.pods]
    a, b = running[0], running[1]
    memo = Memo()
    core.schedule(snap, pol, NOW, memo=memo)
    # job b now also lists a's first pod; then that pod leaves its node: both jobs lose a member
    jobs[b.key] = replace(b, pods=(*b.pods, a.pods[0]), members=b.members + 1)
    pods = dict(snap.pods)
    pods[a.pods[0]] = replace(pods[a.pods[0]], node_name="ghost-node")
    for step, cut in enumerate((jobs, jobs)):
        now_snap = _snapshot(snap, step, pods, cut)
        fresh = core.schedule(now_snap, pol, NOW, memo=Memo())
        assert core.schedule(now_snap, pol, NOW, memo=memo).queues == fresh.queues
        assert dict(memo.unheld.counts) == _unheld_from_scratch(memo, jobs)
    assert memo.unheld.counts.get(a.key) and memo.unheld.counts.get(b.key)
