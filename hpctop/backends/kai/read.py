"""KAI-Scheduler's read side: Queues and PodGroups decoded, folded into the queue tree, explained.

Why: on a cluster that KAI schedules, the truth about a waiting job is in KAI's objects, not on
its pods. KAI's pod grouper makes one ``PodGroup`` (``scheduling.run.ai/v2alpha2``) per workload
(its top owner) and annotates every pod with ``pod-group-name``; the scheduler writes why the
group cannot be placed into ``status.schedulingConditions`` (type ``UnschedulableOnNodePool``,
per node pool) with structured ``reasons`` (``OverLimit``, ``NonPreemptibleOverQuota``,
``QueueDoesNotExist``, ``PreemptionDelayNotElapsed``) and the queue's numbers at that moment
(``details.queueDetails``: requested, deserved, allocated, limits). Queues
(``scheduling.run.ai/v2``) form a tree through ``spec.parentQueue``; only leaf queues take jobs.

Semantics followed (``kai-scheduler/KAI-Scheduler`` at the commit recorded in the fixtures):

- ``pkg/apis/scheduling/v2/resources.go``: per resource ``quota`` (guaranteed; GPUs in units,
  0.5 = half a GPU; CPU in millicores; memory in MB, 10^6 bytes), ``overQuotaWeight`` (how
  over-quota capacity is shared: hpctop's fair-share weight, the GPU's, else the CPU's) and
  ``limit`` (the hard cap). ``-1`` is unlimited in both (``pkg/common/constants``). A limit of
  0 means "nothing beyond 0" to KAI (``capacity_policy/max_allowed_check.go``); the neutral
  :class:`~hpctop.model.objects.QueueInfo` reads a 0 component of ``max`` as "no limit", so such
  a cap is not drawn as a bar, and KAI's own ``OverLimit`` condition is what tells the user.
- ``spec.priority`` (default 100, ``queue_info.go``); status ``allocated``,
  ``allocatedNonPreemptible``, ``requested`` summed over the queue and its children
  (``queuecontroller/controllers/resource_updater``). Quantities there are Kubernetes
  quantities; GPUs may be fractional (``"0.5"``), read in milli-GPU.
- ``pkg/apis/scheduling/v2alpha2/podgroup_types.go``: ``minMember`` (0 = no gang), ``subGroups``
  (each with its own ``minMember``, a ``parent``), ``minSubGroup``, ``preemptibility``,
  ``queue``, ``priorityClassName``. There is no phase: a group's state is its pods' state, and
  its blocker is a scheduling condition.

Reason codes: ``OverLimit`` and ``NonPreemptibleOverQuota`` are ``QuotaExceeded`` (KAI will not
place the group while the queue is at its cap: a blocker, so no hpctop ETA stands beside it);
``QueueDoesNotExist`` is ``Inadmissible``; ``PreemptionDelayNotElapsed`` is ``Backoff`` (it may
not evict others yet; it may still land on free capacity). A condition without structured
reasons (older KAI, or a plain fit failure) keeps its message as the evidence: ``Resources``
when it speaks of resources, else ``Unschedulable``.

Reservation pods (namespace ``kai-resource-reservation``, label ``runai-gpu-group``) hold the
physical GPU that fractional pods share (``pkg/binder/binding/resourcereservation``). They are
KAI's bookkeeping, not a user's job: their GPU is counted through the shares
(:mod:`hpctop.model.fractions`), they never make a job row, and :func:`reservations_of` names
the ones that serve a job (by the GPU group label KAI's binder stamps on both).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hpctop.backends.contract import Backend, QueuePlace, ResourceSpec
from hpctop.model import fractions
from hpctop.model.backends.evidence import JobEvidence
from hpctop.model.backends.queues import QueueIndex, escape, positive
from hpctop.model.fractions import KAI_GPU_GROUP, KAI_RESERVATION_NAMESPACE
from hpctop.model.objects import FolderBackendObject, ObjectKey, OwnerRef, Pod, PodGroup, QueueInfo, Reason
from hpctop.model.policy import ROOT
from hpctop.model.projection import DecodeError, count
from hpctop.model.quantity import AGGREGATE_LIMITS, bounded, to_int, to_milli
from hpctop.model.resources import GPU_RESOURCE, IGNORED_RESOURCES, ZERO, Resources
from hpctop.model.states import JobState, ReasonCode
from hpctop.model.structs import MetaS, WireStruct

KAI_GROUP = "scheduling.run.ai"
#: decoder keys (``Kind.group``: Volcano and coscheduling define PodGroup and Queue too)
KAI_QUEUE = "Queue.scheduling.run.ai"
KAI_PODGROUP = "PodGroup.scheduling.run.ai"
QUEUE_VERSION = "v2"
PODGROUP_VERSION = "v2alpha2"
#: the pod label a user names the queue with (``pkg/common/constants``: DefaultQueueLabel)
QUEUE_LABEL = "kai.scheduler/queue"
#: the annotation KAI's pod grouper writes on every pod: its PodGroup's name
PODGROUP_ANNOTATION = "pod-group-name"
SCHEDULER_NAME = "kai-scheduler"
UNLIMITED = -1.0
DEFAULT_PRIORITY = 100
_MB = 1_000_000

Quantity = str | int | float


# -- model objects ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KaiQueue(FolderBackendObject):
    """One KAI ``Queue``: per-resource quota/limit/weight in canonical units (None = unlimited)."""

    name: str
    resource_version: str
    parent: str | None
    display_name: str
    priority: int
    quota: Resources
    #: per-resource cap; a component is 0 where KAI has no limit (-1) or caps at 0 (see the module doc)
    limit: Resources
    unlimited_quota: tuple[str, ...]  # resources whose quota is -1
    weight: float | None
    allocated: Resources = ZERO
    allocated_non_preemptible: Resources = ZERO
    requested: Resources = ZERO
    children: tuple[str, ...] = ()
    orphan: bool = False  # condition Orphan=True: its parentQueue does not exist

    @property
    def key(self) -> ObjectKey:
        return (KAI_GROUP, "Queue", "", self.name)


@dataclass(frozen=True, slots=True)
class KaiSubGroup:
    name: str
    min_member: int | None
    parent: str | None


@dataclass(frozen=True, slots=True)
class KaiUnschedulable:
    """One reason of an ``UnschedulableOnNodePool`` condition, with KAI's queue numbers."""

    node_pool: str
    reason: str  # OverLimit | NonPreemptibleOverQuota | QueueDoesNotExist | ... | the condition's
    message: str
    queue: str = ""
    requested: Resources | None = None  # the gang's request (podGroupRequestedResources)
    queue_allocated: Resources | None = None
    queue_deserved: Resources | None = None
    queue_limit: Resources | None = None
    queue_requested: Resources | None = None


@dataclass(frozen=True, slots=True)
class KaiPodGroup(PodGroup):
    """A KAI PodGroup: the gang (``min_member``), and what the scheduler said about it."""

    preemptibility: str = ""  # preemptible | non-preemptible | "" (by priority: < 100 preemptible)
    sub_groups: tuple[KaiSubGroup, ...] = ()
    min_sub_group: int | None = None
    unschedulable: tuple[KaiUnschedulable, ...] = ()
    allocated: Resources = ZERO
    requested: Resources = ZERO
    top_owner: OwnerRef | None = None

    @property
    def backend(self) -> str:
        return "kai"


# -- quantities --------------------------------------------------------------------------------------


def _kai_amount(resource: str, value: float) -> int:
    """A Queue amount (KAI's units: GPUs, millicores, MB) in canonical units; -1 handled by callers."""
    if resource == "gpu":
        milli = round(value * 1000)
    elif resource == "cpu":
        milli = round(value)
    else:
        milli = round(value * _MB)
    return bounded(f"spec.resources.{resource}", milli, AGGREGATE_LIMITS["other"], value)


def resource_list(values: Mapping[str, Quantity] | None) -> Resources:
    """A status ResourceList (Kubernetes quantities) with fractional GPUs kept in milli-GPU."""
    cpu = memory = gpu = 0
    extended: list[tuple[str, int]] = []
    limit = AGGREGATE_LIMITS["other"]
    for key, raw in (values or {}).items():
        if key == "cpu":
            cpu = bounded(key, to_milli(raw), limit, raw)
        elif key == "memory":
            memory = bounded(key, to_int(raw), limit, raw)
        elif key == GPU_RESOURCE:
            gpu = bounded(key, to_milli(raw), limit, raw)
        elif key not in IGNORED_RESOURCES:
            amount = bounded(key, to_int(raw), limit, raw)
            if amount:
                extended.append((key, amount))
    return Resources(cpu, memory, gpu, tuple(sorted(extended)))


# -- wire --------------------------------------------------------------------------------------------


class WireQueueResource(WireStruct, frozen=True):
    needed = frozenset({"quota", "limit", "overQuotaWeight"})

    quota: float = 0.0
    overQuotaWeight: float = 0.0
    limit: float = 0.0


class WireQueueResources(WireStruct, frozen=True):
    needed = frozenset({"gpu", "cpu", "memory"})

    gpu: WireQueueResource = WireQueueResource()
    cpu: WireQueueResource = WireQueueResource()
    memory: WireQueueResource = WireQueueResource()


class WireQueueSpec(WireStruct, frozen=True):
    needed = frozenset({"parentQueue", "resources", "priority"})

    displayName: str = ""
    parentQueue: str = ""
    resources: WireQueueResources | None = None
    priority: int | None = None


class WireQueueCondition(WireStruct, frozen=True):
    type: str = ""
    status: str = "Unknown"
    reason: str | None = None
    message: str | None = None


class WireQueueStatus(WireStruct, frozen=True):
    needed = frozenset({"allocated", "requested", "allocatedNonPreemptible"})

    conditions: list[WireQueueCondition] | None = None
    childQueues: list[str] | None = None
    allocated: dict[str, Quantity] | None = None
    allocatedNonPreemptible: dict[str, Quantity] | None = None
    requested: dict[str, Quantity] | None = None


class WireQueue(WireStruct, frozen=True):
    needed = frozenset({"spec", "status"})

    metadata: MetaS
    spec: WireQueueSpec = WireQueueSpec()
    status: WireQueueStatus = WireQueueStatus()


def queue_from_wire(w: WireQueue, _api_version: str = "") -> KaiQueue:
    meta, spec, status = w.metadata, w.spec, w.status
    if not meta.name:
        raise DecodeError("Queue without metadata.name")
    res = spec.resources or WireQueueResources()
    cells = (("gpu", res.gpu), ("cpu", res.cpu), ("memory", res.memory))
    quota: dict[str, int] = {}
    limit: dict[str, int] = {}
    unlimited: list[str] = []
    for name, cell in cells:
        if cell.quota == UNLIMITED:
            unlimited.append(name)
        elif cell.quota < 0:
            raise DecodeError(f"{cell.quota} is negative", field=f"spec.resources.{name}.quota")
        else:
            quota[name] = _kai_amount(name, cell.quota)
        if cell.limit != UNLIMITED and cell.limit < 0:
            raise DecodeError(f"{cell.limit} is negative", field=f"spec.resources.{name}.limit")
        if cell.limit > 0:
            limit[name] = _kai_amount(name, cell.limit)
    weights = [c.overQuotaWeight for _, c in cells[:2] if c.overQuotaWeight > 0]
    orphan = any(c.type == "Orphan" and c.status == "True" for c in status.conditions or ())
    return KaiQueue(
        name=meta.name,
        resource_version=meta.resourceVersion,
        parent=spec.parentQueue or None,
        display_name=spec.displayName,
        priority=DEFAULT_PRIORITY if spec.priority is None else spec.priority,
        quota=Resources(quota.get("cpu", 0), quota.get("memory", 0), quota.get("gpu", 0)),
        limit=Resources(limit.get("cpu", 0), limit.get("memory", 0), limit.get("gpu", 0)),
        unlimited_quota=tuple(unlimited),
        weight=weights[0] if weights else None,
        allocated=resource_list(status.allocated),
        allocated_non_preemptible=resource_list(status.allocatedNonPreemptible),
        requested=resource_list(status.requested),
        children=tuple(status.childQueues or ()),
        orphan=orphan,
    )


class WireSubGroup(WireStruct, frozen=True):
    needed = frozenset({"name", "minMember"})

    name: str = ""
    minMember: int | None = None
    parent: str | None = None


class WirePodGroupSpec(WireStruct, frozen=True):
    needed = frozenset({"minMember", "minSubGroup", "queue", "subGroups"})

    minMember: int | None = None
    minSubGroup: int | None = None
    queue: str = ""
    priorityClassName: str = ""
    preemptibility: str = ""
    subGroups: list[WireSubGroup] | None = None


class WireQueueDetails(WireStruct, frozen=True):
    name: str = ""
    queueRequestedResources: dict[str, Quantity] | None = None
    queueDeservedResources: dict[str, Quantity] | None = None
    queueAllocatedResources: dict[str, Quantity] | None = None
    queueResourceLimits: dict[str, Quantity] | None = None
    podGroupRequestedResources: dict[str, Quantity] | None = None


class WireExplanationDetails(WireStruct, frozen=True):
    queueDetails: WireQueueDetails | None = None


class WireExplanation(WireStruct, frozen=True):
    reason: str = ""
    message: str = ""
    details: WireExplanationDetails | None = None


class WireSchedulingCondition(WireStruct, frozen=True):
    type: str = ""
    nodePool: str = ""
    reason: str = ""
    message: str = ""
    status: str = ""
    reasons: list[WireExplanation] | None = None


class WireResourcesStatus(WireStruct, frozen=True):
    allocated: dict[str, Quantity] | None = None
    requested: dict[str, Quantity] | None = None


class WirePodGroupStatus(WireStruct, frozen=True):
    schedulingConditions: list[WireSchedulingCondition] | None = None
    resourcesStatus: WireResourcesStatus | None = None


class WirePodGroup(WireStruct, frozen=True):
    needed = frozenset({"spec"})

    metadata: MetaS
    spec: WirePodGroupSpec = WirePodGroupSpec()
    status: WirePodGroupStatus = WirePodGroupStatus()


def _tolerant_list(values: Mapping[str, Quantity] | None) -> Resources | None:
    """Evidence numbers: an odd quantity drops the numbers (the message still says it), not the object."""
    if values is None:
        return None
    try:
        # KAI writes -1 where a queue has no quota or no limit on a resource: no number to show
        return resource_list({k: v for k, v in values.items() if not str(v).startswith("-")})
    except ValueError:
        return None


def _unschedulable(conds: list[WireSchedulingCondition] | None) -> tuple[KaiUnschedulable, ...]:
    out: list[KaiUnschedulable] = []
    for cond in conds or ():
        if cond.type != "UnschedulableOnNodePool" or cond.status == "False":
            continue
        pool = cond.nodePool or "default"
        for item in cond.reasons or ():
            q = item.details.queueDetails if item.details is not None else None
            out.append(
                KaiUnschedulable(
                    node_pool=pool,
                    reason=item.reason or cond.reason or "Unschedulable",
                    message=item.message or cond.message,
                    queue=q.name if q is not None else "",
                    requested=_tolerant_list(q.podGroupRequestedResources) if q else None,
                    queue_allocated=_tolerant_list(q.queueAllocatedResources) if q else None,
                    queue_deserved=_tolerant_list(q.queueDeservedResources) if q else None,
                    queue_limit=_tolerant_list(q.queueResourceLimits) if q else None,
                    queue_requested=_tolerant_list(q.queueRequestedResources) if q else None,
                )
            )
        if not cond.reasons:
            out.append(KaiUnschedulable(pool, cond.reason or "Unschedulable", cond.message))
    return tuple(out)


def _owner(meta: MetaS) -> OwnerRef | None:
    """KAI's pod grouper writes one owner reference, the top owner (controller or not)."""
    refs = meta.ownerReferences or []
    chosen = next((r for r in refs if r.controller), refs[0] if refs else None)
    if chosen is None:
        return None
    return OwnerRef(chosen.apiVersion, chosen.kind, chosen.name, chosen.uid)


def pod_group_from_wire(w: WirePodGroup, _api_version: str = "") -> KaiPodGroup:
    meta, spec, status = w.metadata, w.spec, w.status
    if not meta.name or not meta.namespace:
        raise DecodeError("PodGroup without metadata.name or metadata.namespace")
    subs = tuple(
        KaiSubGroup(
            s.name,
            None if s.minMember is None else count(s.minMember, f"spec.subGroups[{i}].minMember", 0),
            s.parent,
        )
        for i, s in enumerate(spec.subGroups or ())
    )
    if spec.minMember is not None:
        min_member = count(spec.minMember, "spec.minMember", 0)
    else:
        # minSubGroup (or nothing): the gang is the sum of the leaf sub-groups' minimums
        parents = {s.parent for s in subs if s.parent}
        min_member = sum(s.min_member or 0 for s in subs if s.name not in parents)
    resources = status.resourcesStatus or WireResourcesStatus()
    owner = _owner(meta)
    return KaiPodGroup(
        group=KAI_GROUP,
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid,
        resource_version=meta.resourceVersion,
        owner=owner,
        min_member=min_member,
        min_resources=ZERO,
        queue=spec.queue or None,
        phase="",
        conditions=(),
        priority_class=spec.priorityClassName or None,
        preemptibility=spec.preemptibility,
        sub_groups=subs,
        min_sub_group=spec.minSubGroup,
        unschedulable=_unschedulable(status.schedulingConditions),
        allocated=_tolerant_list(resources.allocated) or ZERO,
        requested=_tolerant_list(resources.requested) or ZERO,
        top_owner=owner,
    )


#: decoder key → (Struct, projection), merged into the model's decoder table
DECODERS: dict[str, tuple[type[WireStruct], Any]] = {
    KAI_QUEUE: (WireQueue, queue_from_wire),
    KAI_PODGROUP: (WirePodGroup, pod_group_from_wire),
}


# -- the queue tree ------------------------------------------------------------------------------


def queue_path(name: str, parents: Mapping[str, str | None]) -> str:
    """``root.<ancestors>.<name>``; a parent cycle is cut where it closes."""
    chain: list[str] = []
    seen: set[str] = set()
    cur: str | None = name
    while cur is not None and cur not in seen:
        seen.add(cur)
        chain.append(cur)
        cur = parents.get(cur)
    return ".".join([ROOT, *(escape(c) for c in reversed(chain))])


#: the queue index's lookup of KAI Queue names → paths
KAI_PATHS = "kai.queue"


def fold_queues(objects: Iterable[object], out: dict[str, QueueInfo]) -> Mapping[str, Mapping[Any, str]]:
    """The registry's hook: KAI's queues added to the neutral tree, and their name → path lookup."""
    queues = [o for o in objects if isinstance(o, KaiQueue)]
    return {KAI_PATHS: fold_kai(queues, out)} if queues else {}


def fold_kai(objects: Iterable[object], out: dict[str, QueueInfo]) -> dict[str, str]:
    """Add KAI's queues to the neutral tree; returns Queue name → path."""
    queues = [o for o in objects if isinstance(o, KaiQueue)]
    parents: dict[str, str | None] = {q.name: q.parent for q in queues}
    has_children = {q.parent for q in queues if q.parent}
    paths: dict[str, str] = {}
    for q in queues:
        path = queue_path(q.name, parents)
        paths[q.name] = path
        unlimited = f" (unlimited quota: {', '.join(q.unlimited_quota)})" if q.unlimited_quota else ""
        out[path] = QueueInfo(
            path=path,
            name=q.name,
            parent=path.rsplit(".", 1)[0],
            kind="parent" if q.name in has_children else "leaf",
            backend="kai",
            state="Unknown" if q.orphan else "Open",
            guaranteed=q.quota,
            max=q.limit if q.limit != ZERO else None,
            weight=q.weight,
            priority=q.priority,
            allocated=q.allocated,
            borrowed=positive(q.allocated - q.quota) if q.quota != ZERO else ZERO,
            pending=positive(q.requested - q.allocated),
            state_reason=("kai:Queue.Orphan=True: parentQueue not found" if q.orphan else "") + unlimited,
        )
    return paths


def queue_shape(obj: object) -> tuple[object, ...] | None:
    """What of a Queue moves a job's queue path or reason (not its usage)."""
    if isinstance(obj, KaiQueue):
        return (obj.parent, obj.orphan, obj.limit)
    return None


# -- state and reasons -------------------------------------------------------------------------------

_REASON_CODES = {
    "OverLimit": ReasonCode.QUOTA_EXCEEDED,
    "NonPreemptibleOverQuota": ReasonCode.QUOTA_EXCEEDED,
    "QueueDoesNotExist": ReasonCode.INADMISSIBLE,
    "PreemptionDelayNotElapsed": ReasonCode.BACKOFF,
}
_RESOURCE_WORDS = re.compile(r"resource|insufficient|not enough|gpu|cpu|memory", re.IGNORECASE)


def _number(milli: int) -> str:
    return f"{milli / 1000:g}"


def _evidence(u: KaiUnschedulable) -> str:
    """The message and KAI's GPU numbers for the queue at the time, as one line."""
    parts = [u.message.strip() or u.reason]
    numbers = []
    for label, value in (
        ("requested", u.requested),
        ("allocated", u.queue_allocated),
        ("deserved", u.queue_deserved),
        ("limit", u.queue_limit),
    ):
        if value is not None:
            numbers.append(f"{label} {_number(value.gpu)}")
    if numbers:
        where = f"queue {u.queue}: " if u.queue else ""
        parts.append(f"[{where}GPUs {', '.join(numbers)}; node pool {u.node_pool}]")
    return " ".join(parts)


def job_state(ev: JobEvidence, state: JobState, bound: bool) -> JobState | None:
    """KAI writes no phase: the pods' state stands (a group KAI refuses is still pending)."""
    return None


def place_in_queue(ev: JobEvidence, queue_name: str | None, index: QueueIndex) -> QueuePlace | None:
    """A KAI PodGroup waits in the KAI Queue it names (path None while that Queue is unknown)."""
    if not isinstance(ev.pod_group, KaiPodGroup):
        return None
    return QueuePlace(index.lookup(KAI_PATHS).get(queue_name) if queue_name else None)


def job_reasons_hook(ev: JobEvidence, state: JobState, live_members: int) -> list[Reason] | None:
    """The registry's hook: KAI's reasons for a job whose gang is a KAI PodGroup (else None)."""
    pg = ev.pod_group
    if not isinstance(pg, KaiPodGroup):
        return None
    if state == JobState.STARTING:
        return []
    return job_reasons(pg, ev.queue_info, live_members, state)


def job_reasons(
    pg: KaiPodGroup, queue: QueueInfo | None, live_members: int, state: JobState = JobState.PENDING
) -> list[Reason]:
    """Every reason KAI gives for a waiting group, unordered (observed: KAI's own words).

    A held (suspended) job has no pods by design: its missing members are not a gang's.
    """
    out: list[Reason] = []
    for u in pg.unschedulable:
        code = _REASON_CODES.get(u.reason)
        if code is None:
            # PodSchedulingErrors ("Resources were not found for pod ..."), the topology plugin's
            # "Not enough resources for the workload": capacity; any other is KAI's own word
            worded = _RESOURCE_WORDS.search(u.message) or _RESOURCE_WORDS.search(u.reason)
            code = ReasonCode.RESOURCES if worded else ReasonCode.UNSCHEDULABLE
        out.append(Reason(code, f"kai:PodGroup.schedulingConditions.{u.reason}", _evidence(u)))
    if queue is not None and queue.kind == "parent":
        out.append(
            Reason(
                ReasonCode.INADMISSIBLE,
                "kai:Queue.childQueues",
                f"queue {queue.path} is a parent queue: only leaf queues take jobs",
            )
        )
    if pg.min_member and live_members < pg.min_member and state != JobState.HELD:
        out.append(
            Reason(
                ReasonCode.GANG_INCOMPLETE,
                "kai:PodGroup.minMember",
                f"{live_members} of minMember {pg.min_member} pods exist",
            )
        )
    return out


# -- reservation pods ------------------------------------------------------------------------------------


def reservation_job_key(pod: Pod) -> tuple[str, str, str] | None:
    """The key a KAI reservation pod is filed under (no job row), or None for any other pod."""
    return fractions.reservation_job_key(pod.namespace, pod.labels)


def gpu_groups(pods: Iterable[Pod]) -> frozenset[str]:
    """The GPU groups KAI's binder assigned to these pods (``runai-gpu-group``, ``runai-gpu-group/*``)."""
    out: set[str] = set()
    for pod in pods:
        for key, value in pod.labels.items():
            if key == KAI_GPU_GROUP or key.startswith(KAI_GPU_GROUP + "/"):
                out.add(value)
    return frozenset(out)


def reservations_of(job_pods: Iterable[Pod], pods: Mapping[tuple[str, str], Pod]) -> list[Pod]:
    """The reservation pods that hold the physical GPUs this job's shares split."""
    groups = gpu_groups(job_pods)
    if not groups:
        return []
    return sorted(
        (
            p
            for p in pods.values()
            if p.namespace == KAI_RESERVATION_NAMESPACE and p.labels.get(KAI_GPU_GROUP) in groups
        ),
        key=lambda p: p.name,
    )


KAI_QUEUES = ResourceSpec(KAI_QUEUE, KAI_GROUP, QUEUE_VERSION, "queues", namespaced=False)
KAI_PODGROUPS = ResourceSpec(KAI_PODGROUP, KAI_GROUP, PODGROUP_VERSION, "podgroups", namespaced=True)

REASONS: frozenset[ReasonCode] = frozenset(
    {
        ReasonCode.QUOTA_EXCEEDED,
        ReasonCode.INADMISSIBLE,
        ReasonCode.BACKOFF,
        ReasonCode.RESOURCES,
        ReasonCode.UNSCHEDULABLE,
        ReasonCode.GANG_INCOMPLETE,
    }
)

BACKEND = Backend(
    name="kai",
    title="NVIDIA KAI-Scheduler",
    upstream="https://github.com/kai-scheduler/KAI-Scheduler",
    watches=((KAI_QUEUES,), (KAI_PODGROUPS,)),
    fixtures=("tests/fixtures/live_truth/95_kai.yaml",),
    reasons=REASONS,
    actions=None,
    read_only=(
        "hpctop acts on a KAI job through its owner (cancel deletes the Job or pod, hold suspends a "
        "batch Job: the owner plans) and writes no KAI object: KAI has no hold of its own, and a "
        "job's queue is fixed when the pod grouper makes its PodGroup (pkg/podgrouper/podgroup/"
        "handler.go keeps spec.queue on every update), so a kai.scheduler/queue label changed later "
        "is never read back"
    ),
    detects={KAI_GROUP: "kai"},
    decoders=DECODERS,
    object_kinds=frozenset({KAI_QUEUE, KAI_PODGROUP}),
    job_state=job_state,
    job_reasons=job_reasons_hook,
    fold_queues=fold_queues,
    queue_shape=queue_shape,
    place_in_queue=place_in_queue,
)
