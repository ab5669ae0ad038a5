"""The cluster roll-ups kept in the memo (``PodsByNode``, ``JobSplit``) equal the from-scratch ones.

Why these tests: the core no longer groups every pod by node, splits every job and sums every
running job's usage each cycle; the memo patches those roll-ups from the snapshot entries whose
object changed identity since the snapshot it saw last. A missed change would silently move a
decision, so a long sequence of random snapshot changes (pods added, deleted, bound, finished,
replaced unchanged; jobs added, deleted, started, finished, re-queued) is applied and after each
step the kept roll-ups are compared with the ones computed directly from the snapshot, and a
placements-only cycle on the kept memo with one on a fresh memo.
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
from hpctop.model.states import JobState
from hpctop.model.store import Snapshot
from hpctop.scheduling.memo import IntSum, JobSplit, Memo, PodsByNode, add_scaled
from hpctop.scheduling.partitions import to_resources

STATES = tuple(JobState)


def _grouped_from_scratch(pods: dict[PodKey, Pod]) -> dict[str, tuple[Pod, ...]]:
    """What the core computed every cycle before: holding pods per node, sorted by key."""
    grouped: dict[str, list[Pod]] = {}
    for pod in pods.values():
        if pod.node_name is not None and pod.phase not in ("Succeeded", "Failed"):
            grouped.setdefault(pod.node_name, []).append(pod)
    return {n: tuple(sorted(ps, key=lambda p: (p.namespace, p.name))) for n, ps in grouped.items()}


def _split_from_scratch(
    jobs: dict[JobKey, Job],
) -> tuple[dict[JobKey, Job], dict[JobKey, Job], int | None, dict[str | None, Resources]]:
    pending: dict[JobKey, Job] = {}
    active: dict[JobKey, Job] = {}
    used: dict[str | None, IntSum] = {}
    values = [j.priority_value for j in jobs.values() if j.priority_value is not None]
    for key, job in jobs.items():
        if job.state in core._PENDING_STATES:
            pending[key] = job
        elif job.state in core._ACTIVE_STATES:
            active[key] = job
            add_scaled(
                used.setdefault(job.queue, ([0, 0, 0], {})),
                job.per_member,
                job.members - len(job.pending_pods),
            )
    sums = {q: to_resources(ints, ext) for q, (ints, ext) in used.items()}
    return pending, active, max(values) if values else None, sums


def _same_objects(a: dict[object, object], b: dict[object, object]) -> bool:
    return a.keys() == b.keys() and all(a[k] is b[k] for k in a)


def _change_pods(rng: random.Random, pods: dict[PodKey, Pod], nodes: list[str], counter: list[int]) -> int:
    """Random pod changes; returns how many pods were deleted."""
    keys = list(pods)
    deleted = 0
    for _ in range(rng.randint(0, 6)):
        key = rng.choice(keys)
        pod = pods.get(key)
        if pod is None:
            continue
        op = rng.random()
        if op < 0.25:  # bind (or move)
            pods[key] = replace(pod, node_name=rng.choice(nodes), phase="Running")
        elif op < 0.45:  # finish
            pods[key] = replace(pod, phase=rng.choice(("Succeeded", "Failed")))
        elif op < 0.6:  # a new object with the same fields (a resourceVersion bump)
            pods[key] = replace(pod, resource_version=pod.resource_version + "x")
        elif op < 0.7:  # unbound again (a pod re-created by its controller)
            pods[key] = replace(pod, node_name=None, phase="Pending")
        elif op < 0.9:  # a new pod, bound or not
            counter[0] += 1
            new = replace(pod, name=f"new-{counter[0]}", node_name=rng.choice((None, *nodes[:5])))
            pods[new.key] = new
        elif rng.random() < 0.5:  # deleted: the others keep their order
            del pods[key]
            deleted += 1
        else:  # deleted and created again: it moves to the end, the roll-up starts over
            pods[key] = pods.pop(key)
    return deleted


def _change_jobs(rng: random.Random, jobs: dict[JobKey, Job], counter: list[int]) -> int:
    """Random job changes; returns how many jobs were deleted."""
    keys = list(jobs)
    deleted = 0
    queues = [*{j.queue for j in jobs.values()}, None, "elsewhere"]
    for _ in range(rng.randint(0, 6)):
        key = rng.choice(keys)
        job = jobs.get(key)
        if job is None:
            continue
        op = rng.random()
        if op < 0.35:  # started, finished, held, re-queued...
            pending = job.pods[: rng.randint(0, len(job.pods))]
            jobs[key] = replace(job, state=rng.choice(STATES), pending_pods=pending)
        elif op < 0.5:
            jobs[key] = replace(job, priority_value=rng.choice((None, 0, 10, 10_000, 99)))
        elif op < 0.6:
            jobs[key] = replace(job, queue=rng.choice(queues))
        elif op < 0.7:
            jobs[key] = replace(job, per_member=Resources(1000, 0, 500, (("example.com/fpga", 1),)))
        elif op < 0.9:
            counter[0] += 1
            new_key = (key[0], key[1], f"new-{counter[0]}")
            jobs[new_key] = replace(job, key=new_key, state=rng.choice(STATES))
        elif rng.random() < 0.5:
            del jobs[key]
            deleted += 1
        else:  # a job that came back (a tombstone in the store's order): the split starts over
            jobs[key] = jobs.pop(key)
    return deleted


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kept_roll_ups_equal_fresh_ones_over_random_changes(seed: int) -> None:
    rng = random.Random(seed)
    snap = cluster(48, 150, seed=seed)
    pods = dict(snap.pods)
    jobs = dict(snap.jobs)
    nodes = sorted(snap.nodes)
    by_node, split = PodsByNode(), JobSplit()
    counter = [0]
    patched = deleted = 0
    for _ in range(250):
        deletions = _change_pods(rng, pods, nodes, counter) + _change_jobs(rng, jobs, counter)
        rebuilds = by_node.rebuilds + split.rebuilds
        grouped = by_node.update(MappingProxyType(dict(pods)))
        split.update(MappingProxyType(dict(jobs)), core._PENDING_STATES, core._ACTIVE_STATES)
        patched += by_node.rebuilds + split.rebuilds == rebuilds
        deleted += deletions > 0 and by_node.rebuilds + split.rebuilds == rebuilds
        want = _grouped_from_scratch(pods)
        assert grouped.keys() == want.keys()
        assert all(
            grouped[n] == want[n] and all(a is b for a, b in zip(grouped[n], want[n], strict=True))
            for n in want
        )
        pending, active, top, used = _split_from_scratch(jobs)
        assert _same_objects(split.pending, pending)  # type: ignore[arg-type]
        assert _same_objects(split.active, active)  # type: ignore[arg-type]
        assert split.max_priority_value() == top
        kept = {q: to_resources(ints, ext) for q, (ints, ext) in split.used.items()}
        assert {q: r for q, r in kept.items() if r != Resources()} == {
            q: r for q, r in used.items() if r != Resources()
        }
    # most steps were patched, deletions included; an entry that moved forces a rebuild
    assert patched > 100 and deleted > 10 and by_node.rebuilds > 0 and split.rebuilds > 0


@pytest.mark.parametrize("seed", [4, 5])
def test_cycles_on_a_kept_memo_decide_as_on_a_fresh_one(seed: int) -> None:
    rng = random.Random(seed)
    snap = cluster(64, 200, seed=seed)
    pol = policy()
    pods, jobs = dict(snap.pods), dict(snap.jobs)
    nodes = sorted(snap.nodes)
    kept = Memo()
    counter = [0]
    for step in range(25):
        _change_pods(rng, pods, nodes, counter)
        _change_jobs(rng, jobs, counter)
        now_snap = Snapshot(
            version=step,
            taken_at=NOW,
            nodes=snap.nodes,
            pods=MappingProxyType(dict(pods)),
            jobs=MappingProxyType(dict(jobs)),
            workloads=snap.workloads,
            priority_classes=snap.priority_classes,
            pods_by_node=snap.pods_by_node,
        )
        for placements_only in (True, False):
            a = core.schedule(now_snap, pol, NOW + step, memo=kept, placements_only=placements_only)
            b = core.schedule(now_snap, pol, NOW + step, memo=Memo(), placements_only=placements_only)
            assert a.placements == b.placements and a.pending_order == b.pending_order
            assert dict(a.plans) == dict(b.plans) and a.queues == b.queues
        # the free-state maps patched for the changed nodes equal those built from scratch
        patched = kept.kept_free
        assert patched is not None and patched.source is kept.pods_by_node.grouped
        fresh = Memo()._free_from_scratch(patched.view, _grouped_from_scratch(pods))
        assert (
            patched.charges == fresh.charges and patched.used == fresh.used and patched.whole == fresh.whole
        )
        assert patched.entries.keys() == fresh.entries.keys()
        assert all(patched.entries[n].pods == fresh.entries[n].pods for n in fresh.entries)
