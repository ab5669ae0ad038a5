"""The store: a reducer of watch events with indexes, publishing frozen snapshots.

``apply`` costs O(1) per event (plus the size of one pod's job): it replaces the object, moves
the pod between its node and job indexes, and marks the job dirty. Job rows are derived lazily,
only for dirty jobs, when a snapshot is taken. A snapshot is a set of read-only mappings copied
at that moment, so the console and the scheduling core read a consistent cluster while events
keep arriving; the view takes snapshots at a bounded rate, so a burst of ten thousand events is
one repaint (ARCHITECTURE.md "coalesce bursts").

Objects that do not decode are skipped and counted in ``skipped`` by reason; they never reach the
maps, so nothing is half-applied. Each is also noted once in ``notes`` (kind, ``namespace/name``,
field and what is wrong; the first :data:`MAX_NOTES`), which the CLI prints on stderr and the
console shows in its status: no object is dropped silently.

Scheduler backends (Kueue, Volcano, coscheduling CRDs; YuniKorn's REST queue tree) are kept in
``objects`` by (group, kind, namespace, name) and joined to the jobs they explain: a Kueue
Workload by its controller owner (or its ``kueue.x-k8s.io/job-uid`` label), a PodGroup by its
owner or by the pods' group label/annotation (these joins are still the store's own); what the
evidence then means (state, reasons, queue placement) and which kinds are backend objects come
from :mod:`hpctop.backends.registry`. A job is re-derived when its evidence changes, and
every joined job when the queue tree's shape (paths, states) changes. None of this runs until
such an object arrives: on a cluster without these backends, a pod event costs what it did.

DRA (:mod:`hpctop.backends.dra`) is not evidence but inventory: a node is stored with its
ResourceSlices' GPUs and a pod with its claims' devices in its request (the DRA index keeps the
objects as they came and rewrites them again when a slice, claim or template changes), so every
reader counts DRA GPUs as device-plugin GPUs. The index exists only once a DRA object, a pod with
claims or an owner whose template names claim templates arrives.

Why one module of this size: the store is one reducer whose indexes (pods by node and by job,
the owner chains, the backend joins, the DRA index, the watch path's pod digests) must change
together on every write, and each write path (an event, a relist, a listed page) goes through the
same few methods; the backend joins (Kueue, PodGroups, the queue tree) are the part that could
move into :mod:`hpctop.model.backends` once no one is editing both at once.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any

from hpctop.backends import registry
from hpctop.backends.dra.read import DraIndex, DraView, with_domain
from hpctop.backends.dra.wire import DRA_KINDS, DRA_TYPES, DraObject, ResourceClaimTemplate
from hpctop.backends.volcano.read import VOLCANO_GROUP_KEYS
from hpctop.backends.yunikorn.read import APP_ID_KEYS, decode_queue_tree
from hpctop.model import fractions
from hpctop.model.backends.evidence import JobEvidence
from hpctop.model.backends.queues import QueueIndex
from hpctop.model.decode import DecodeError, decode_event
from hpctop.model.events import EventType, WatchEvent
from hpctop.model.jobs import (
    NATIVE_PODGROUP_KIND,
    VOLCANO_PODGROUP_KIND,
    cancelled,
    derive_job,
    job_key_for_owner,
    job_key_for_pod,
)
from hpctop.model.objects import (
    BACKEND_TYPES,
    COSCHEDULING_GROUP,
    NATIVE_SCHEDULING_GROUP,
    VOLCANO_GROUP,
    BackendObject,
    Job,
    JobKey,
    KueueWorkload,
    Node,
    ObjectKey,
    Pod,
    PodGroup,
    PodKey,
    PriorityClass,
    QueueInfo,
    Workload,
)
from hpctop.model.pod_events import decode_pod_event

_EMPTY: frozenset[PodKey] = frozenset()
#: bound once: ``EventType.X`` goes through the enum metaclass's attribute hook on each access
#: (0.1-0.3 us in CPython 3.11), twice per applied event (P3)
_BOOKMARK, _DELETED = EventType.BOOKMARK, EventType.DELETED
#: the phases of a finished pod (``Pod.is_terminal``, read inline on the watch path)
_TERMINAL = ("Succeeded", "Failed")
MAX_TOMBSTONES = 10_000
#: distinct notes kept about skipped objects (a hostile cluster could send millions); the rest
#: are counted in ``skipped`` and ``notes_left_out``
MAX_NOTES = 200
_NO_OBJECTS: Mapping[ObjectKey, BackendObject] = MappingProxyType({})
_NO_QUEUES: Mapping[str, QueueInfo] = MappingProxyType({})
#: the Pod fields a watch event moves most often, compared first by :func:`_same_job_view`
_STATUS_FIRST = (
    "restart_count",
    "phase",
    "started",
    "finished",
    "deleted",
    "scheduled",
    "status_reason",
    "terminated_reason",
    "nominated_node",
    "uid",
    "created",
    "node_name",
)


def _job_view_comparer() -> Callable[[Pod, Pod], bool]:
    """``same(a, b)``: every field of a Pod but its resourceVersion equal (what a job row reads).

    The same answer as comparing the two tuples of those fields (``a.x is b.x or a.x == b.x``
    per field is what a tuple comparison does per item), without building the two 31-item tuples:
    it stops at the first field that differs, and the fields a status event moves are compared
    first. Why: the tuple pair was 2.3-4 us of the ~9 us the store spent applying a watch event
    (issue 16, P3; bench/README.md, session 13 watch). A field added to Pod is compared too: the
    list is built from ``fields(Pod)``.
    """
    names = [f.name for f in fields(Pod) if f.name != "resource_version"]
    ordered = [n for n in _STATUS_FIRST if n in names] + [n for n in names if n not in _STATUS_FIRST]
    body = " and ".join(f"(a.{n} is b.{n} or a.{n} == b.{n})" for n in ordered)
    scope: dict[str, Any] = {}
    exec(f"def same(a, b):\n    return bool({body})\n", scope)  # the names come from fields(Pod)
    same: Callable[[Pod, Pod], bool] = scope["same"]
    return same


_same_job_view = _job_view_comparer()
#: the maps a snapshot copies, each copied again only after it changed (copy-on-write)
_MAPS = ("nodes", "pods", "workloads", "priority_classes", "pods_by_node", "jobs")


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
    #: one line per skipped object: kind, namespace/name, field, what is wrong (see Store.notes)
    notes: tuple[str, ...] = ()
    #: scheduler backend objects (Kueue Workloads and queues, PodGroups, Volcano Queues, ...)
    objects: Mapping[ObjectKey, BackendObject] = field(default_factory=dict)
    #: every backend's queues in one tree, by dotted path (see hpctop.backends.registry.build_queues)
    queues: Mapping[str, QueueInfo] = field(default_factory=dict)
    #: DRA devices, their health and NVIDIA ComputeDomains (None: no DRA on this cluster)
    dra: DraView | None = None

    def pods_on(self, node: str) -> list[Pod]:
        return [self.pods[k] for k in self.pods_by_node.get(node, _EMPTY) if k in self.pods]

    def job_pods(self, job: Job) -> list[Pod]:
        return [self.pods[k] for k in job.pods if k in self.pods]


class Store:
    """Applies decoded events; indexes pods by node and by job; derives jobs on demand."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self.nodes: dict[str, Node] = {}
        #: node → bound KAI gpu-memory pods waiting for that node's GPU memory (see _memory_share)
        self._memory_share_waits: dict[str, set[PodKey]] = {}
        self.pods: dict[PodKey, Pod] = {}
        self.workloads: dict[JobKey, Workload] = {}
        self.priority_classes: dict[str, PriorityClass] = {}
        self.pods_by_node: dict[str, frozenset[PodKey]] = {}
        self.pods_by_job: dict[JobKey, set[PodKey]] = {}
        self.job_of_pod: dict[PodKey, JobKey] = {}
        self._jobs: dict[JobKey, Job] = {}
        #: pods stored exactly as projected from a watch line: the digest of its static segments
        #: (hpctop.model.pod_events); forgotten at every write of the pod
        self._pod_digests: dict[PodKey, int] = {}
        self._dirty: set[JobKey] = set()
        #: for a dirty job derived before without owner object or evidence: the pod its row (the
        #: one in ``_jobs``, which only _refresh writes) was derived from (see
        #: jobs._derive_lone_pod); emptied by each _refresh. The pod alone, not a (pod, row) pair:
        #: a tuple per event is one more GC-tracked object alive until the snapshot (P3)
        self._previous: dict[JobKey, Pod] = {}
        self._tombstones: dict[JobKey, Job] = {}
        self.skipped: Counter[str] = Counter()
        self.notes: dict[tuple[str, str, str], str] = {}
        self.notes_left_out = 0
        self.resource_versions: dict[str, str] = {}
        self.version = 0
        self.events_applied = 0
        # scheduler backends: empty (and never consulted) on a cluster without them
        self.objects: dict[ObjectKey, BackendObject] = {}
        self.yunikorn_queues: dict[str, QueueInfo] = {}
        self._kueue_of_job: dict[JobKey, ObjectKey] = {}
        self._job_of_kueue: dict[ObjectKey, JobKey] = {}
        self._kueue_by_uid: dict[str, ObjectKey] = {}
        self._job_by_uid: dict[str, JobKey] = {}
        self._group_of_job: dict[JobKey, ObjectKey] = {}
        self._job_of_group: dict[ObjectKey, JobKey] = {}
        self._evidence_jobs: set[JobKey] = set()
        # owner chains past the controller: a YuniKorn placeholder (owned by its originator pod,
        # controller: false) joins the job of the real pods of its application; a workload owned
        # by another workload hpctop reads (an MPIJob's launcher Job, a TrainJob's JobSet) folds
        # its pods into that top owner
        self._app_jobs: dict[tuple[str, str], JobKey] = {}
        self._child_workloads: dict[JobKey, set[JobKey]] = {}
        self._queue_index: QueueIndex | None = None
        #: DRA (hpctop.backends.dra): built at the first DRA object or pod with claims
        self.dra: DraIndex | None = None
        self._objects_view: Mapping[ObjectKey, BackendObject] = _NO_OBJECTS
        self._objects_stale = False
        self._backends_active = False
        # copy-on-write snapshots: the read-only copy of each map and whether it went stale
        self._views: dict[str, Mapping[Any, Any]] = {}
        self._stale: set[str] = set(_MAPS)

    # -- applying -------------------------------------------------------------------------------

    def apply_raw(self, kind: str, raw: bytes) -> bool:
        """Decode and apply one watch event; a malformed one is counted and skipped."""
        try:
            self.apply_line(kind, raw)
        except DecodeError as exc:
            self.skip(exc, kind)
            return False
        return True

    def apply_line(self, kind: str, raw: bytes) -> WatchEvent:
        """Decode one watch line of ``kind`` and apply it; return the event (its resourceVersion).

        Raises :class:`DecodeError`, with nothing applied, for a malformed line. A pod event of a
        pod held as projected decodes only what moves (:mod:`hpctop.model.pod_events`): the
        digest of its static segments is recorded here, after the write, when the stored pod is
        the projected one (no DRA claims, no rewrite); every write of a pod forgets it first.
        """
        if kind != "Pod":
            event = decode_event(kind, raw)
            self.apply(event)
            return event
        event, digest = decode_pod_event(raw, self.pods, self._pod_digests)
        self.apply(event)
        pod = event.obj
        if (
            digest is not None
            and isinstance(pod, Pod)
            and pod.claims is None
            and self.pods.get(pod.key) is pod
        ):
            self._pod_digests[pod.key] = digest
        return event

    def skip(self, error: DecodeError, kind: str = "") -> None:
        """Count a malformed object by reason, and note it once by (kind, name, field)."""
        kind = error.kind or kind
        reason = ": ".join(p for p in (kind, error.field, error.problem) if p)
        self.skipped[reason[:200]] += 1
        key = (kind, error.identity, error.field)
        if key in self.notes:
            return
        if len(self.notes) >= MAX_NOTES:
            self.notes_left_out += 1
            return
        where = f"{kind} {error.identity}".strip()
        text = ": ".join(p for p in (where, error.field, error.problem) if p)
        self.notes[key] = f"skipped {text}"[:300]

    def notes_text(self) -> tuple[str, ...]:
        """The notes about skipped objects, oldest first, with a count of those left out."""
        notes = tuple(self.notes.values())
        if self.dra is not None and self.dra.refused:
            notes += tuple(self.dra.refused[n] for n in sorted(self.dra.refused))
        if self.notes_left_out:
            notes += (f"and {self.notes_left_out} more skipped object(s) not listed",)
        return notes

    def apply(self, event: WatchEvent) -> None:
        if event.resource_version:
            self.resource_versions[event.kind] = event.resource_version
        if event.type == _BOOKMARK:
            return
        obj = event.obj
        deleted = event.type == _DELETED
        if isinstance(obj, Pod):
            if obj.claims is not None:
                obj = self._dra_index().pod(obj)
            self._apply_pod(obj, deleted)
        elif isinstance(obj, Node):
            if deleted:
                self.nodes.pop(obj.name, None)
                if self.dra is not None:
                    self.dra.forget_node(obj.name)
            else:
                self.nodes[obj.name] = obj if self.dra is None else self.dra.node(obj)
                for waiting in list(self._memory_share_waits.pop(obj.name, ())):
                    if waiting in self.pods:
                        self._apply_pod(self.pods[waiting], False)
            self._stale.add("nodes")
        elif isinstance(obj, Workload):
            if obj.template_claims:
                dra = self._dra_index()
                dra.raw_workloads[obj.key] = obj
                if deleted:
                    del dra.raw_workloads[obj.key]
                obj = dra.workload(obj)
            self._apply_workload(obj, deleted)
        elif isinstance(obj, PriorityClass):
            if deleted:
                self.priority_classes.pop(obj.name, None)
            else:
                self.priority_classes[obj.name] = obj
            self._stale.add("priority_classes")
        elif isinstance(obj, BACKEND_TYPES):
            self._apply_backend(obj, deleted)
        elif isinstance(obj, DRA_TYPES):
            self._apply_dra(obj, deleted)
        else:
            self.skipped[f"{event.kind}: unsupported object"] += 1
            return
        self.version += 1
        self.events_applied += 1

    def _index_node(self, key: PodKey, old: str | None, new: str | None) -> None:
        if old == new:
            return
        self._stale.add("pods_by_node")
        if old is not None:
            remaining = self.pods_by_node.get(old, _EMPTY) - {key}
            if remaining:
                self.pods_by_node[old] = remaining
            else:
                self.pods_by_node.pop(old, None)
        if new is not None:
            self.pods_by_node[new] = self.pods_by_node.get(new, _EMPTY) | {key}

    def _memory_share(self, pod: Pod) -> Pod:
        """A bound KAI ``gpu-memory`` pod with its share of its node's GPU (hpctop.model.fractions)."""
        node = self.nodes.get(pod.node_name or "")
        resolved = fractions.with_memory_share(pod.requests, node.gpu.memory_mib if node else None)
        waiting = self._memory_share_waits.setdefault(pod.node_name or "", set())
        if resolved is None:
            waiting.add(pod.key)  # resolved when the node (or its GPU memory label) arrives
            return pod
        waiting.discard(pod.key)
        return replace(pod, requests=resolved)

    def _apply_pod(self, pod: Pod, deleted: bool) -> None:
        extended = pod.requests.extended  # () for nearly every pod: one check on the hot path
        if (
            extended
            and not deleted
            and pod.node_name is not None
            and pod.requests.get(fractions.KAI_GPU_MEMORY)
        ):
            pod = self._memory_share(pod)
        key = pod.key
        old = self.pods.get(key)
        self._stale.add("pods")
        self._pod_digests.pop(key, None)
        if not deleted and old is not None and _same_job_view(old, pod):
            # Only the resourceVersion moved (a kubelet status heartbeat, a change to a field
            # hpctop does not read): the pod is replaced, but its indexes and its job row cannot
            # change, so the job is not derived again. Re-deriving a job per event was the
            # largest cost of the watch path in the profile (P3: 0.50 of 0.93 s).
            self.pods[key] = pod
            return
        # ``holds_resources`` of the old and the new pod, inline (two properties each, per event)
        old_node = old.node_name if old is not None and old.phase not in _TERMINAL else None
        job_key = self.job_of_pod.get(key) or self._job_key_of(pod)
        if deleted:
            self.pods.pop(key, None)
            if self.dra is not None:
                self.dra.forget_pod(key)
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
            self._index_node(key, old_node, pod.node_name if pod.phase not in _TERMINAL else None)
            self.job_of_pod[key] = job_key
            members = self.pods_by_job.get(job_key)
            if members is None:
                self.pods_by_job[job_key] = {key}
            else:
                members.add(key)  # (setdefault would build an empty set per event)
            if self._tombstones.pop(job_key, None) is not None:
                self._stale.add("jobs")
            if not pod.is_placeholder and pod.owner is not None:
                self._remember_application(pod, job_key)
            if old is not None and job_key not in self._dirty and not self._backends_active:
                row = self._jobs.get(job_key)
                if row is not None and row.labels is old.labels:
                    # the row was derived from ``old`` (a clean job: none of its pods changed
                    # since) without an owner object (whose labels it would have merged)
                    self._previous[job_key] = old
        self._dirty.add(job_key)

    # -- DRA (hpctop.backends.dra) ----------------------------------------------------------------

    def _dra_index(self) -> DraIndex:
        if self.dra is None:
            self.dra = DraIndex()
            for node in self.nodes.values():
                self.dra.node(node)
        return self.dra

    def _apply_dra(self, obj: DraObject, deleted: bool) -> None:
        """A DRA object: the nodes and pods it counts GPUs for are rewritten (and their jobs derived)."""
        dra = self._dra_index()
        nodes, pods = dra.apply(obj, deleted)
        if isinstance(obj, ResourceClaimTemplate):
            for job_key in dra.workloads_of(obj):
                self._apply_workload(dra.workload(dra.raw_workloads[job_key]), False)
        for name in nodes:
            raw = dra.raw_nodes.get(name)
            if raw is not None and name in self.nodes:
                self.nodes[name] = dra.node(raw)
                self._stale.add("nodes")
        for key in pods:
            raw_pod = dra.raw_pods.get(key)
            if raw_pod is not None and key in self.pods:
                self._apply_pod(dra.pod(raw_pod), False)
                job = self.job_of_pod.get(key)
                if job is not None:
                    self._dirty.add(job)  # a ComputeDomain's readiness is evidence about the job

    # -- owner chains past the controller reference -------------------------------------------------

    def _job_key_of(self, pod: Pod) -> JobKey:
        """The job of a pod not seen before: its controller chain, then the top workload owner."""
        key = job_key_for_pod(pod)
        if key[1] == "Application" and pod.is_placeholder:
            found = self._app_jobs.get((pod.namespace, key[2]))
            if found is not None:
                return found
        return self._top_workload(key)

    def _top_workload(self, key: JobKey) -> JobKey:
        """Follow workload owners while the owner is a workload in the store (a few levels)."""
        for _ in range(4):
            workload = self.workloads.get(key)
            if workload is None or workload.owner is None:
                return key
            parent = job_key_for_owner(workload.namespace, workload.owner)
            if parent not in self.workloads or parent == key:
                return key
            key = parent
        return key

    def _remember_application(self, pod: Pod, job_key: JobKey) -> None:
        """A real pod names its YuniKorn application: its placeholders belong to the same job."""
        labels = pod.labels
        app = None
        for k in APP_ID_KEYS:  # a loop, not a generator: this runs for every pod event (P3)
            app = labels.get(k)
            if app:
                break
        if not app:
            return
        where = (pod.namespace, app)
        if self._app_jobs.get(where) == job_key:
            return
        self._app_jobs[where] = job_key
        self._rekey((pod.namespace, "Application", app), job_key, placeholders_only=True)

    def _rekey(self, old: JobKey, new: JobKey, *, placeholders_only: bool = False) -> None:
        """Move pods indexed under job ``old`` to job ``new`` (both derived again)."""
        members = self.pods_by_job.get(old)
        if not members or old == new:
            return
        moving = [k for k in members if not placeholders_only or self.pods[k].is_placeholder]
        if not moving:
            return
        target = self.pods_by_job.setdefault(new, set())
        for pod_key in moving:
            members.discard(pod_key)
            target.add(pod_key)
            self.job_of_pod[pod_key] = new
        if not members:
            del self.pods_by_job[old]
        self._dirty.add(old)
        self._dirty.add(new)

    def _fold_workload(self, workload: Workload) -> None:
        """A workload owned by another workload hands its pods (and its children's) to the top one."""
        key = workload.key
        if workload.owner is not None:
            parent = job_key_for_owner(workload.namespace, workload.owner)
            if parent != key:
                self._child_workloads.setdefault(parent, set()).add(key)
        top = self._top_workload(key)
        stack = [key]
        seen: set[JobKey] = set()
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            if current != top:
                self._rekey(current, top)
            stack.extend(self._child_workloads.get(current, ()))

    def _is_part(self, workload: Workload | None) -> bool:
        """A workload whose owner is a workload in the store is a part of that job, not a row."""
        if workload is None or workload.owner is None:
            return False
        return job_key_for_owner(workload.namespace, workload.owner) in self.workloads

    def _apply_workload(self, workload: Workload, deleted: bool) -> None:
        key = workload.key
        self._stale.add("workloads")
        if deleted:
            self.workloads.pop(key, None)
            if key not in self.pods_by_job:
                self._tombstone(key)
            if workload.uid and self._job_by_uid.get(workload.uid) == key:
                del self._job_by_uid[workload.uid]
        else:
            self.workloads[key] = workload
            if self._tombstones.pop(key, None) is not None:
                self._stale.add("jobs")
            if workload.uid:
                self._job_by_uid[workload.uid] = key
                waiting = self._kueue_by_uid.get(workload.uid) if self._backends_active else None
                if waiting is not None and waiting not in self._job_of_kueue:
                    self._link_kueue(waiting, key)
            if workload.owner is not None or key in self._child_workloads:
                self._fold_workload(workload)
        self._dirty.add(key)

    # -- scheduler backends ---------------------------------------------------------------------

    def _apply_backend(self, obj: BackendObject, deleted: bool) -> None:
        key = obj.key
        old = self.objects.get(key)
        if deleted:
            self.objects.pop(key, None)
        else:
            self.objects[key] = obj
        self._activate_backends()
        self._objects_stale = True
        if isinstance(obj, KueueWorkload):
            self._apply_kueue(obj, deleted)
        elif isinstance(obj, PodGroup):
            self._apply_pod_group(obj, deleted)
        else:
            self._queue_index = None
            if registry.queue_shape(old) != registry.queue_shape(None if deleted else obj):
                self._dirty |= self._evidence_jobs

    def _activate_backends(self) -> None:
        """The first backend object: every job derived so far without evidence is derived again, once."""
        if not self._backends_active:
            self._backends_active = True
            self._dirty.update(self._jobs)
            self._dirty.update(self.pods_by_job)
            self._dirty.update(self.workloads)

    def _link_kueue(self, okey: ObjectKey, job: JobKey) -> None:
        stale = self._kueue_of_job.get(job)
        if stale is not None and stale != okey:
            self._job_of_kueue.pop(stale, None)
        self._kueue_of_job[job] = okey
        self._job_of_kueue[okey] = job
        self._dirty.add(job)

    def _apply_kueue(self, wl: KueueWorkload, deleted: bool) -> None:
        okey = wl.key
        previous = self._job_of_kueue.pop(okey, None)
        if previous is not None:
            if self._kueue_of_job.get(previous) == okey:
                del self._kueue_of_job[previous]
            self._dirty.add(previous)
        if wl.job_uid:
            if deleted:
                self._kueue_by_uid.pop(wl.job_uid, None)
            else:
                self._kueue_by_uid[wl.job_uid] = okey
        if deleted:
            return
        job: JobKey | None = None
        if wl.owner is not None:
            job = job_key_for_owner(wl.namespace, wl.owner)
        elif wl.job_uid:
            job = self._job_by_uid.get(wl.job_uid)
        if job is not None:
            self._link_kueue(okey, job)

    def _apply_pod_group(self, pg: PodGroup, deleted: bool) -> None:
        okey = pg.key
        job = self._job_of_group.get(okey)
        if job is None:
            if pg.owner is not None:
                job = job_key_for_owner(pg.namespace, pg.owner)
            elif pg.group == VOLCANO_GROUP:
                job = (pg.namespace, VOLCANO_PODGROUP_KIND, pg.name)
            elif pg.group == NATIVE_SCHEDULING_GROUP:
                job = (pg.namespace, NATIVE_PODGROUP_KIND, pg.name)
            else:
                job = (pg.namespace, "PodGroup", pg.name)
        if deleted:
            self._job_of_group.pop(okey, None)
            if self._group_of_job.get(job) == okey:
                del self._group_of_job[job]
        else:
            self._job_of_group[okey] = job
            self._group_of_job[job] = okey
        self._dirty.add(job)

    def _queues(self) -> QueueIndex:
        if self._queue_index is None:
            self._queue_index = registry.build_queues(self.objects.values(), self.yunikorn_queues.values())
        return self._queue_index

    def apply_yunikorn_queues(self, raw: bytes, partition: str = "default") -> bool:
        """Replace YuniKorn's queues with a ``/ws/v1/partition/{p}/queues`` document (§4.4).

        A malformed document is counted in ``skipped`` and the previous tree is kept.
        """
        try:
            infos = decode_queue_tree(raw)
        except DecodeError as exc:
            self.skip(DecodeError(exc.problem, field=exc.field, kind=f"YuniKorn queues ({partition})"))
            return False
        before = {p: (q.state, q.parent) for p, q in self.yunikorn_queues.items()}
        self.yunikorn_queues = {q.path: q for q in infos}
        self._activate_backends()
        self._queue_index = None
        if before != {p: (q.state, q.parent) for p, q in self.yunikorn_queues.items()}:
            self._dirty |= self._evidence_jobs
        self.version += 1
        return True

    def _pod_group_of(self, key: JobKey, pods: list[Pod]) -> PodGroup | None:
        okey = self._group_of_job.get(key)
        if okey is None and pods:
            sample = pods[0]
            name = sample.labels.get("scheduling.x-k8s.io/pod-group")
            if sample.scheduling_group:
                okey = (NATIVE_SCHEDULING_GROUP, "PodGroup", sample.namespace, sample.scheduling_group)
            elif name:
                okey = (COSCHEDULING_GROUP, "PodGroup", sample.namespace, name)
            else:
                for annotation in VOLCANO_GROUP_KEYS:
                    name = sample.annotations.get(annotation)
                    if name:
                        okey = (VOLCANO_GROUP, "PodGroup", sample.namespace, name)
                        break
                # KAI-Scheduler's pod grouper annotates every pod with its PodGroup's name
                name = sample.annotations.get("pod-group-name")
                if okey is None and name:
                    okey = ("scheduling.run.ai", "PodGroup", sample.namespace, name)
            if okey is not None and okey in self.objects:
                self._job_of_group[okey] = key
                self._group_of_job[key] = okey
        found = self.objects.get(okey) if okey is not None else None
        return found if isinstance(found, PodGroup) else None

    def _evidence(self, key: JobKey, pods: list[Pod], workload: Workload | None) -> JobEvidence | None:
        """What the backends say about job ``key`` (``None`` when they say nothing)."""
        okey = self._kueue_of_job.get(key)
        found = self.objects.get(okey) if okey is not None else None
        kueue = found if isinstance(found, KueueWorkload) else None
        pod_group = self._pod_group_of(key, pods)
        queue_name = pod_group.queue if pod_group is not None else None
        if queue_name is None and workload is not None:
            queue_name = workload.queue
        if kueue is None and pod_group is None and queue_name is None:
            self._evidence_jobs.discard(key)
            return None
        index = self._queues()
        found_so_far = JobEvidence(kueue=kueue, pod_group=pod_group)
        place = registry.place_in_queue(found_so_far, queue_name, index)
        path = place.path if place is not None else None
        if path is None and kueue is None and pod_group is None:
            # a queue name no backend defines (yet): the owner's own name stands, and the job
            # stays registered so that a queue of that name arriving later re-derives it
            self._evidence_jobs.add(key)
            return None
        self._evidence_jobs.add(key)
        return JobEvidence(
            kueue=kueue,
            pod_group=pod_group,
            queue=path,
            queue_info=index.queues.get(path) if path else None,
            local_queue=place.local if place is not None else None,
        )

    def _tombstone(self, key: JobKey) -> None:
        job = self._jobs.get(key)
        if job is None:
            self._refresh()
            job = self._jobs.get(key)
        if job is not None and not job.state.is_finished:
            self._stale.add("jobs")
            self._tombstones[key] = cancelled(job, self._clock())
            while len(self._tombstones) > MAX_TOMBSTONES:
                self._tombstones.pop(next(iter(self._tombstones)))

    def replace(self, kind: str, objects: Iterable[object], resource_version: str = "") -> None:
        """A relist: the given objects are now the whole set of ``kind``; the others vanished."""
        fresh = list(objects)
        if kind == "Node":
            self.nodes = {}
            self._stale.add("nodes")
            if self.dra is not None:
                self.dra.raw_nodes.clear()
        elif kind == "PriorityClass":
            self.priority_classes = {}
            self._stale.add("priority_classes")
        else:
            self._drop_unlisted(kind, fresh)
        self.add_listed(kind, fresh)
        if resource_version:
            self.resource_versions[kind] = resource_version
        self.version += 1

    def add_listed(self, kind: str, objects: Iterable[object]) -> None:
        """Objects of one list page, added or updated; nothing else of ``kind`` is dropped.

        A first list's pages go in as they arrive (the console shows rows while a big list
        streams, issue 16), and :meth:`end_listed` then drops what the whole list did not name.
        """
        apply_pod = self._apply_pod
        for obj in objects:
            if type(obj) is Pod:
                # what apply() does for an ADDED pod without a resourceVersion, minus the event
                # object and the dispatch: a relist applies 100k+ of them (P4)
                apply_pod(obj if obj.claims is None else self._dra_index().pod(obj), False)
                self.version += 1
                self.events_applied += 1
            else:
                self.apply(WatchEvent(EventType.ADDED, kind, obj))

    def end_listed(self, kind: str, objects: Iterable[object], resource_version: str = "") -> None:
        """The end of a list whose pages went in through :meth:`add_listed`: ``objects`` (the
        whole list) are now the set of ``kind``, the others vanished; as :meth:`replace` leaves it."""
        self._drop_unlisted(kind, list(objects))
        if resource_version:
            self.resource_versions[kind] = resource_version
        self.version += 1

    def _drop_unlisted(self, kind: str, fresh: list[object]) -> None:
        """Delete every object of ``kind`` that ``fresh`` (a whole list) does not hold."""
        if kind == "Pod":
            keep = {o.key for o in fresh if isinstance(o, Pod)}
            for pod_key in [k for k in self.pods if k not in keep]:
                self._apply_pod(self.pods[pod_key], deleted=True)
        elif kind == "Node":
            keep_n = {o.name for o in fresh if isinstance(o, Node)}
            for name in [n for n in self.nodes if n not in keep_n]:
                del self.nodes[name]
                if self.dra is not None:
                    self.dra.forget_node(name)
                self._stale.add("nodes")
        elif kind == "PriorityClass":
            keep_p = {o.name for o in fresh if isinstance(o, PriorityClass)}
            for name in [n for n in self.priority_classes if n not in keep_p]:
                del self.priority_classes[name]
                self._stale.add("priority_classes")
        elif kind in DRA_KINDS:
            keep_d = {o.key for o in fresh if isinstance(o, DRA_TYPES)}
            for gone in [o for o in self._dra_index().objects_of(DRA_KINDS[kind]) if o.key not in keep_d]:
                self._apply_dra(gone, deleted=True)
        elif kind in registry.OBJECT_KINDS:
            group, bare = registry.OBJECT_KINDS[kind]
            keep_o = {o.key for o in fresh if isinstance(o, BACKEND_TYPES)}
            for okey in [k for k in self.objects if k[0] == group and k[1] == bare and k not in keep_o]:
                self._apply_backend(self.objects[okey], deleted=True)
        else:
            keep_w = {o.key for o in fresh if isinstance(o, Workload)}
            for job_key in [k for k, w in self.workloads.items() if w.kind == kind and k not in keep_w]:
                self._apply_workload(self.workloads[job_key], deleted=True)

    # -- reading --------------------------------------------------------------------------------

    def _refresh(self) -> None:
        if not self._dirty:
            return
        dirty, self._dirty = self._dirty, set()
        previous, self._previous = self._previous, {}
        backends = self._backends_active
        pods_of = self.pods
        members_of = self.pods_by_job.get
        workload_of = self.workloads.get
        prior_of = previous.get
        rows = self._jobs
        dra = self.dra if self.dra is not None and self.dra.domains else None
        self._stale.add("jobs")
        for key in dirty:  # one row per dirty job: the loop's lookups are bound above (P3)
            pods = [pods_of[k] for k in members_of(key, ()) if k in pods_of]
            workload = workload_of(key)
            if not pods and self._is_part(workload):
                rows.pop(key, None)
                continue
            evidence = self._evidence(key, pods, workload) if backends else None
            prior = prior_of(key)
            job = derive_job(key, pods, workload, evidence, None if prior is None else (prior, rows[key]))
            if job is not None and dra is not None:
                job = with_domain(job, pods, dra)
            if job is None:
                rows.pop(key, None)
            else:
                rows[key] = job

    def job(self, key: JobKey) -> Job | None:
        self._refresh()
        return self._jobs.get(key) or self._tombstones.get(key)

    def _view(self, name: str) -> Mapping[Any, Any]:
        """The read-only copy of one map, copied again only if it changed since the last snapshot.

        Why: ``snapshot()`` copied every map on every call, O(pods + nodes + jobs) per snapshot
        even when only a few pods moved (bench/README.md, P3); nodes, workloads and priority
        classes change rarely, so their last copy is shared by consecutive snapshots. A copy,
        never the live dict: a snapshot must not change under its reader.
        """
        view = self._views.get(name)
        if view is None or name in self._stale:
            if name == "jobs":
                jobs = dict(self._tombstones)
                jobs.update(self._jobs)
                view = MappingProxyType(jobs)
            else:
                view = MappingProxyType(dict(getattr(self, name)))
            self._views[name] = view
            self._stale.discard(name)
        return view

    def snapshot(self) -> Snapshot:
        """Freeze the current state (jobs derived for what changed since the last snapshot)."""
        self._refresh()
        view = self._view
        return Snapshot(
            version=self.version,
            taken_at=self._clock(),
            nodes=view("nodes"),
            pods=view("pods"),
            jobs=view("jobs"),
            workloads=view("workloads"),
            priority_classes=view("priority_classes"),
            pods_by_node=view("pods_by_node"),
            skipped=MappingProxyType(dict(self.skipped)),
            notes=self.notes_text(),
            objects=self._objects_snapshot(),
            queues=MappingProxyType(self._queues().queues) if self._backends_active else _NO_QUEUES,
            dra=self.dra.view() if self.dra is not None else None,
        )

    def _objects_snapshot(self) -> Mapping[ObjectKey, BackendObject]:
        """A frozen copy of ``objects``, copied again only after a backend object changed."""
        if self._objects_stale:
            self._objects_view = MappingProxyType(dict(self.objects)) if self.objects else _NO_OBJECTS
            self._objects_stale = False
        return self._objects_view
