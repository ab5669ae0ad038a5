"""The store: a reducer of watch events with indexes, publishing frozen snapshots.

``apply`` costs O(1) per event (plus the size of one pod's job): it replaces the object, moves
the pod between its node and job indexes, and marks the job dirty. Job rows are derived lazily,
only for dirty jobs, when a snapshot is taken. A snapshot is a set of read-only mappings copied
at that moment, so the console and the scheduling core read a consistent cluster while events
keep arriving; the view takes snapshots at a bounded rate, so a burst of ten thousand events is
one repaint (ARCHITECTURE.md "coalesce bursts").

Objects that do not decode are skipped and counted in ``skipped`` by reason; they never reach the
maps, so nothing is half-applied.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from hpctop.model.decode import DecodeError, decode_event
from hpctop.model.events import EventType, WatchEvent
from hpctop.model.jobs import cancelled, derive_job, job_key_for_pod
from hpctop.model.objects import Job, JobKey, Node, Pod, PodKey, PriorityClass, Workload

_EMPTY: frozenset[PodKey] = frozenset()
MAX_TOMBSTONES = 10_000


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A consistent, immutable view of the cluster at one moment."""

    version: int
    taken_at: float
    nodes: Mapping[str, Node]
    pods: Mapping[PodKey, Pod]
    jobs: Mapping[JobKey, Job]
    workloads: Mapping[JobKey, Workload]
    priority_classes: Mapping[str, PriorityClass]
    pods_by_node: Mapping[str, frozenset[PodKey]]
    skipped: Mapping[str, int] = field(default_factory=dict)

    def pods_on(self, node: str) -> list[Pod]:
        return [self.pods[k] for k in self.pods_by_node.get(node, _EMPTY) if k in self.pods]

    def job_pods(self, job: Job) -> list[Pod]:
        return [self.pods[k] for k in job.pods if k in self.pods]


class Store:
    """Applies decoded events; indexes pods by node and by job; derives jobs on demand."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self.nodes: dict[str, Node] = {}
        self.pods: dict[PodKey, Pod] = {}
        self.workloads: dict[JobKey, Workload] = {}
        self.priority_classes: dict[str, PriorityClass] = {}
        self.pods_by_node: dict[str, frozenset[PodKey]] = {}
        self.pods_by_job: dict[JobKey, set[PodKey]] = {}
        self.job_of_pod: dict[PodKey, JobKey] = {}
        self._jobs: dict[JobKey, Job] = {}
        self._dirty: set[JobKey] = set()
        self._tombstones: dict[JobKey, Job] = {}
        self.skipped: Counter[str] = Counter()
        self.resource_versions: dict[str, str] = {}
        self.version = 0
        self.events_applied = 0

    # -- applying -------------------------------------------------------------------------------

    def apply_raw(self, kind: str, raw: bytes) -> bool:
        """Decode and apply one watch event; a malformed one is counted and skipped."""
        try:
            event = decode_event(kind, raw)
        except DecodeError as exc:
            self.skipped[f"{kind}: {exc.detail}"[:200]] += 1
            return False
        self.apply(event)
        return True

    def apply(self, event: WatchEvent) -> None:
        if event.resource_version:
            self.resource_versions[event.kind] = event.resource_version
        if event.type == EventType.BOOKMARK:
            return
        obj = event.obj
        deleted = event.type == EventType.DELETED
        if isinstance(obj, Pod):
            self._apply_pod(obj, deleted)
        elif isinstance(obj, Node):
            if deleted:
                self.nodes.pop(obj.name, None)
            else:
                self.nodes[obj.name] = obj
        elif isinstance(obj, Workload):
            self._apply_workload(obj, deleted)
        elif isinstance(obj, PriorityClass):
            if deleted:
                self.priority_classes.pop(obj.name, None)
            else:
                self.priority_classes[obj.name] = obj
        else:
            self.skipped[f"{event.kind}: unsupported object"] += 1
            return
        self.version += 1
        self.events_applied += 1

    def _index_node(self, key: PodKey, old: str | None, new: str | None) -> None:
        if old == new:
            return
        if old is not None:
            remaining = self.pods_by_node.get(old, _EMPTY) - {key}
            if remaining:
                self.pods_by_node[old] = remaining
            else:
                self.pods_by_node.pop(old, None)
        if new is not None:
            self.pods_by_node[new] = self.pods_by_node.get(new, _EMPTY) | {key}

    def _apply_pod(self, pod: Pod, deleted: bool) -> None:
        key = pod.key
        old = self.pods.get(key)
        old_node = old.node_name if old is not None and old.holds_resources else None
        job_key = self.job_of_pod.get(key) or job_key_for_pod(pod)
        if deleted:
            self.pods.pop(key, None)
            self._index_node(key, old_node, None)
            self.job_of_pod.pop(key, None)
            members = self.pods_by_job.get(job_key)
            if members is not None:
                members.discard(key)
                if not members:
                    del self.pods_by_job[job_key]
            if job_key not in self.workloads and job_key not in self.pods_by_job:
                self._tombstone(job_key)
        else:
            self.pods[key] = pod
            self._index_node(key, old_node, pod.node_name if pod.holds_resources else None)
            self.job_of_pod[key] = job_key
            self.pods_by_job.setdefault(job_key, set()).add(key)
            self._tombstones.pop(job_key, None)
        self._dirty.add(job_key)

    def _apply_workload(self, workload: Workload, deleted: bool) -> None:
        key = workload.key
        if deleted:
            self.workloads.pop(key, None)
            if key not in self.pods_by_job:
                self._tombstone(key)
        else:
            self.workloads[key] = workload
            self._tombstones.pop(key, None)
        self._dirty.add(key)

    def _tombstone(self, key: JobKey) -> None:
        job = self._jobs.get(key)
        if job is None:
            self._refresh()
            job = self._jobs.get(key)
        if job is not None and not job.state.is_finished:
            self._tombstones[key] = cancelled(job, self._clock())
            while len(self._tombstones) > MAX_TOMBSTONES:
                self._tombstones.pop(next(iter(self._tombstones)))

    def replace(self, kind: str, objects: Iterable[object], resource_version: str = "") -> None:
        """A relist: the given objects are now the whole set of ``kind``; the others vanished."""
        fresh = list(objects)
        if kind == "Pod":
            keep = {o.key for o in fresh if isinstance(o, Pod)}
            for pod_key in [k for k in self.pods if k not in keep]:
                self._apply_pod(self.pods[pod_key], deleted=True)
        elif kind == "Node":
            self.nodes = {}
        elif kind == "PriorityClass":
            self.priority_classes = {}
        else:
            keep_w = {o.key for o in fresh if isinstance(o, Workload)}
            for job_key in [k for k, w in self.workloads.items() if w.kind == kind and k not in keep_w]:
                self._apply_workload(self.workloads[job_key], deleted=True)
        for obj in fresh:
            self.apply(WatchEvent(EventType.ADDED, kind, obj))
        if resource_version:
            self.resource_versions[kind] = resource_version
        self.version += 1

    # -- reading --------------------------------------------------------------------------------

    def _refresh(self) -> None:
        dirty, self._dirty = self._dirty, set()
        for key in dirty:
            pods = [self.pods[k] for k in self.pods_by_job.get(key, ()) if k in self.pods]
            job = derive_job(key, pods, self.workloads.get(key))
            if job is None:
                self._jobs.pop(key, None)
            else:
                self._jobs[key] = job

    def job(self, key: JobKey) -> Job | None:
        self._refresh()
        return self._jobs.get(key) or self._tombstones.get(key)

    def snapshot(self) -> Snapshot:
        """Freeze the current state (jobs derived for what changed since the last snapshot)."""
        self._refresh()
        jobs = dict(self._tombstones)
        jobs.update(self._jobs)
        return Snapshot(
            version=self.version,
            taken_at=self._clock(),
            nodes=MappingProxyType(dict(self.nodes)),
            pods=MappingProxyType(dict(self.pods)),
            jobs=MappingProxyType(jobs),
            workloads=MappingProxyType(dict(self.workloads)),
            priority_classes=MappingProxyType(dict(self.priority_classes)),
            pods_by_node=MappingProxyType(dict(self.pods_by_node)),
            skipped=MappingProxyType(dict(self.skipped)),
        )
