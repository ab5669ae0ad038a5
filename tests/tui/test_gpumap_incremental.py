"""GpuMapCache's patch (issue 16, K1) against ``build_gpu_map`` from nothing, over random changes.

Why: between snapshots the cache rebuilds only the nodes touched by pods, jobs, nodes or per-node
pod sets that are other objects (found by position, :mod:`hpctop.tui.diffmap`), and patches its
pod → active job map from the changed jobs. A change it failed to follow would leave a GPU cell
showing a job that left or a free GPU as held until the next full build, so every step of a
random sequence (pods restarted, finished, moved to other GPUs, deleted, added; jobs requeued,
finished, deleted, added; a node cordoned) must give the map a fresh build gives. The same
sequence run on a cache that forgets job changes must be caught by the same comparison.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from hpctop.model.objects import Job, JobKey, Node, Pod, PodKey
from hpctop.model.states import JobState
from hpctop.model.store import Snapshot
from hpctop.tui.diffmap import align
from hpctop.tui.gpumap import GpuMap, build_gpu_map
from hpctop.tui.widgets.gpus import GpuMapCache
from tests.sample_session import SampleSession


def _snapshot(
    version: int,
    nodes: dict[str, Node],
    pods: dict[PodKey, Pod],
    jobs: dict[JobKey, Job],
    by_node: dict[str, frozenset[PodKey]],
) -> Snapshot:
    return Snapshot(
        version=version,
        taken_at=0.0,
        nodes=MappingProxyType(dict(nodes)),
        pods=MappingProxyType(dict(pods)),
        jobs=MappingProxyType(dict(jobs)),
        workloads=MappingProxyType({}),
        priority_classes=MappingProxyType({}),
        pods_by_node=MappingProxyType(dict(by_node)),
    )


def _fresh(snap: Snapshot, spec: list[tuple[str, Iterable[str]]]) -> GpuMap:
    return build_gpu_map(snap.nodes, snap.pods, snap.pods_by_node, snap.jobs, spec)


def _run(cache: GpuMapCache, steps: int = 60, seed: int = 3) -> tuple[int, int, int]:
    """Random changes, each step's map from ``cache`` compared with a fresh build; returns
    (steps that differed, steps patched, steps where a node was replaced)."""
    session = SampleSession(seed=9, nodes_per_partition=8, jobs=160)
    snap0 = session.snapshot
    partitions = session.result.partitions
    spec: list[tuple[str, Iterable[str]]] = [(p.name, p.nodes) for p in partitions]
    nodes, pods, jobs = dict(snap0.nodes), dict(snap0.pods), dict(snap0.jobs)
    by_node = {n: frozenset(ks) for n, ks in snap0.pods_by_node.items()}
    spare_pods = 0
    rng = random.Random(seed)
    differed = patched = changed = 0
    previous = cache.build(_snapshot(1, nodes, pods, jobs, by_node), partitions)
    assert previous == _fresh(_snapshot(1, nodes, pods, jobs, by_node), spec)

    def move(pk: PodKey, old: str | None, new: str | None) -> None:
        if old is not None:
            by_node[old] = by_node.get(old, frozenset()) - {pk}
        if new is not None:
            by_node[new] = by_node.get(new, frozenset()) | {pk}

    for step in range(steps):
        keys = list(pods)
        for pk in rng.sample(keys, min(6, len(keys))):  # status noise: nothing the map reads
            pods[pk] = dataclasses.replace(pods[pk], restart_count=pods[pk].restart_count + 1)
        kind = step % 6
        pk = rng.choice(keys)
        pod = pods[pk]
        if kind == 0:  # a pod finished
            pods[pk] = dataclasses.replace(pod, phase="Succeeded")
        elif kind == 1:  # a pod on other GPUs of its node
            pods[pk] = dataclasses.replace(pod, gpu_indices=tuple(reversed(pod.gpu_indices)) or (0,))
        elif kind == 2:  # a pod deleted
            del pods[pk]
            move(pk, pod.node_name, None)
        elif kind == 3:  # a pod added on some node, no job names it
            spare_pods += 1
            name = rng.choice(list(nodes))
            new = dataclasses.replace(pod, name=f"extra-{spare_pods}", node_name=name, gpu_indices=(1,))
            pods[new.key] = new
            move(new.key, None, name)
        elif kind == 4:  # a pod moved to another node (delete and re-create, same key)
            name = rng.choice(list(nodes))
            del pods[pk]
            pods[pk] = dataclasses.replace(pod, node_name=name, phase="Running")
            move(pk, pod.node_name, name)
        job_keys = list(jobs)
        key = rng.choice(job_keys)
        job = jobs[key]
        roll = rng.random()
        if roll < 0.3:  # a job in another queue: every cell it holds shows so
            jobs[key] = dataclasses.replace(job, queue=f"root.moved{step}")
        elif roll < 0.5:  # a job finished: its pods' cells lose their holder
            jobs[key] = dataclasses.replace(job, state=JobState.COMPLETED)
        elif roll < 0.6:
            del jobs[key]
        elif roll < 0.7:  # a job object re-derived, showing the same
            jobs[key] = dataclasses.replace(job)
        elif roll < 0.8:  # a new job naming pods that are there
            jobs[("extra", "Job", f"j{step}")] = dataclasses.replace(
                job, key=("extra", "Job", f"j{step}"), name=f"j{step}", state=JobState.RUNNING, pods=()
            )
        if step % 10 == 7:
            name = rng.choice(list(nodes))
            nodes[name] = dataclasses.replace(nodes[name], unschedulable=not nodes[name].unschedulable)
        snap = _snapshot(step + 2, nodes, pods, jobs, by_node)
        got = cache.build(snap, partitions)
        want = _fresh(snap, spec)
        if got != want:
            differed += 1
        patched += not cache.full
        changed += got is not previous
        previous = got
    return differed, patched, changed


def test_patched_map_equals_a_fresh_build_over_random_changes() -> None:
    cache = GpuMapCache()
    differed, patched, changed = _run(cache)
    assert differed == 0
    assert patched >= 40  # most steps took the patch, not a full build
    assert changed >= 30


class _ForgetsJobs(GpuMapCache):
    """A broken cache: job changes do not mark their pods' nodes."""

    def _changed_jobs(
        self,
        old: Mapping[JobKey, Job],
        jobs: Mapping[JobKey, Job],
        pods: Mapping[PodKey, Pod],
        dirty: set[str],
    ) -> bool:
        return super()._changed_jobs(old, jobs, pods, set())


def test_the_comparison_catches_a_cache_that_forgets_job_changes() -> None:
    differed, _, _ = _run(_ForgetsJobs())
    assert differed > 0


def test_an_unchanged_snapshot_gives_the_same_map_object() -> None:
    session = SampleSession(seed=2, nodes_per_partition=4, jobs=40)
    snap = session.snapshot
    cache = GpuMapCache()
    first = cache.build(snap, session.result.partitions)
    again = cache.build(dataclasses.replace(snap, version=snap.version + 1), session.result.partitions)
    assert again is first and not cache.full and cache.rebuilt == 0


def test_align_finds_deletions_and_refuses_a_move() -> None:
    old = [("a", i) for i in range(20)]
    new = [k for i, k in enumerate(old) if i not in (0, 5, 6, 19)] + [("b", 1)]
    assert align(old, new, set(new)) == [0, 5, 6, 19]
    moved = old[1:] + old[:1]
    assert align(old, moved, set(moved)) is None
    assert align(old, list(old), set(old)) == []
    assert align(old, [], set()) == list(range(20))
