"""Wire models and projections for scheduler CRDs: Kueue, Volcano, coscheduling (§5, §6, §7.1).

Why: these objects reach the store through the same path as pods (raw watch-event bytes →
``decode_event`` → ``Store.apply``), so they are validated the same way (pydantic, only the fields
hpctop reads, anything malformed raises :class:`DecodeError` and is skipped and counted). Their
decoder keys are ``Kind.group`` (``PodGroup.scheduling.volcano.sh``), never the bare kind: Volcano
and scheduler-plugins both define ``PodGroup``, and Kueue's ``Workload`` shares its name with the
native gang API. One wire model reads both Kueue v1beta1 and v1beta2 (``cohort`` vs
``cohortName``, ``priorityClassName`` vs ``priorityClassRef``): lists marked ``omitempty`` upstream
are optional here, missing meaning empty.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pydantic import Field

from hpctop.model.decode import (
    DecodeError,
    WireCondition,
    WireMeta,
    WireTemplate,
    _condition,
    _controller,
    _Envelope,
    _kept,
    _Wire,
    container_requests,
    parse_time,
)
from hpctop.model.objects import (
    COSCHEDULING_GROUP,
    VOLCANO_GROUP,
    ClusterQueue,
    Cohort,
    FlavorQuota,
    FlavorUsage,
    KueueWorkload,
    LocalQueue,
    PodGroup,
    PodSetInfo,
    ResourceFlavor,
    Taint,
    VolcanoQueue,
)
from hpctop.model.quantity import to_int, to_milli
from hpctop.model.resources import GPU_RESOURCE, IGNORED_RESOURCES, Resources

Quantity = str | int | float

#: decoder key (the model's kind, also ``ResourceSpec.kind``) → (API group, kind)
KUEUE_WORKLOAD = "Workload.kueue.x-k8s.io"
CLUSTER_QUEUE = "ClusterQueue.kueue.x-k8s.io"
LOCAL_QUEUE = "LocalQueue.kueue.x-k8s.io"
COHORT = "Cohort.kueue.x-k8s.io"
RESOURCE_FLAVOR = "ResourceFlavor.kueue.x-k8s.io"
VOLCANO_QUEUE = "Queue.scheduling.volcano.sh"
VOLCANO_PODGROUP = "PodGroup.scheduling.volcano.sh"
COSCHEDULING_PODGROUP = "PodGroup.scheduling.x-k8s.io"

QUEUE_KINDS = frozenset({CLUSTER_QUEUE, LOCAL_QUEUE, COHORT, VOLCANO_QUEUE})


def split_kind(store_kind: str) -> tuple[str, str]:
    """``PodGroup.scheduling.volcano.sh`` → (``scheduling.volcano.sh``, ``PodGroup``)."""
    kind, _, group = store_kind.partition(".")
    return group, kind


# -- quantities ----------------------------------------------------------------------------------


def amount(resource: str, value: Quantity) -> int:
    """One quantity in canonical units (§1.6): cpu millicores, memory bytes, GPUs in milli-GPU."""
    if resource == "cpu":
        return to_milli(value)
    if resource == GPU_RESOURCE:
        return to_int(value) * 1000
    return to_int(value)


def resources_of(cells: Iterable[tuple[str, int]]) -> Resources:
    """Sum canonical (resource, amount) cells into a vector (bookkeeping resources dropped)."""
    cpu = memory = gpu = 0
    extended: dict[str, int] = {}
    for name, value in cells:
        if name == "cpu":
            cpu += value
        elif name == "memory":
            memory += value
        elif name == GPU_RESOURCE:
            gpu += value
        elif name not in IGNORED_RESOURCES:
            extended[name] = extended.get(name, 0) + value
    return Resources(cpu, memory, gpu, tuple(sorted((k, v) for k, v in extended.items() if v)))


def _resource_map(values: dict[str, Quantity] | None) -> Resources | None:
    if values is None:
        return None
    return Resources.from_k8s(values)


def _weight(value: Quantity | None) -> float | None:
    return None if value is None else to_milli(value) / 1000


# -- Kueue ---------------------------------------------------------------------------------------


class WirePodSet(_Wire):
    name: str = "main"
    count: int = 1
    minCount: int | None = None
    template: WireTemplate | None = None


class WirePriorityClassRef(_Wire):
    group: str = ""
    kind: str = ""
    name: str = ""


class WireKueueWorkloadSpec(_Wire):
    queueName: str = ""
    podSets: list[WirePodSet] = Field(default_factory=list)
    active: bool | None = None
    priority: int | None = None
    priorityClassName: str | None = None  # v1beta1
    priorityClassRef: WirePriorityClassRef | None = None  # v1beta2
    maximumExecutionTimeSeconds: int | None = None


class WireAdmission(_Wire):
    clusterQueue: str = ""


class WireRequeueState(_Wire):
    count: int | None = None
    requeueAt: str | None = None


class WireKueueWorkloadStatus(_Wire):
    conditions: list[WireCondition] | None = None
    admission: WireAdmission | None = None
    requeueState: WireRequeueState | None = None


class WireKueueWorkload(_Wire):
    apiVersion: str = ""
    metadata: WireMeta
    spec: WireKueueWorkloadSpec = Field(default_factory=WireKueueWorkloadSpec)
    status: WireKueueWorkloadStatus = Field(default_factory=WireKueueWorkloadStatus)


def _pod_set(ps: WirePodSet) -> PodSetInfo:
    if ps.count < 0 or (ps.minCount is not None and ps.minCount < 0):
        raise DecodeError(f"podSet {ps.name}: negative count")
    requests = Resources()
    if ps.template is not None and ps.template.spec is not None:
        meta = ps.template.metadata
        requests = container_requests(ps.template.spec, _kept(meta.annotations if meta else None))
    return PodSetInfo(ps.name, ps.count, ps.minCount, requests)


def kueue_workload_from_wire(w: WireKueueWorkload) -> KueueWorkload:
    meta, spec, status = w.metadata, w.spec, w.status
    if not meta.name or not meta.namespace:
        raise DecodeError("Workload without metadata.name or metadata.namespace")
    labels = meta.labels or {}
    requeue = status.requeueState
    pcls = spec.priorityClassRef.name if spec.priorityClassRef else spec.priorityClassName
    return KueueWorkload(
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid,
        resource_version=meta.resourceVersion,
        api_version=w.apiVersion,
        owner=_controller(meta),
        job_uid=labels.get("kueue.x-k8s.io/job-uid"),
        queue_name=spec.queueName,
        pod_sets=tuple(_pod_set(ps) for ps in spec.podSets),
        active=spec.active is not False,
        priority=spec.priority,
        priority_class=pcls or None,
        conditions=tuple(_condition(c) for c in status.conditions or []),
        cluster_queue=(status.admission.clusterQueue or None) if status.admission else None,
        requeue_count=(requeue.count or 0) if requeue else 0,
        requeue_at=parse_time(requeue.requeueAt) if requeue else None,
        created=parse_time(meta.creationTimestamp) or 0.0,
        max_execution_s=spec.maximumExecutionTimeSeconds,
    )


class WireFlavorResource(_Wire):
    name: str
    nominalQuota: Quantity = 0
    borrowingLimit: Quantity | None = None
    lendingLimit: Quantity | None = None


class WireFlavorQuotas(_Wire):
    name: str
    resources: list[WireFlavorResource] = Field(default_factory=list)


class WireResourceGroup(_Wire):
    coveredResources: list[str] = Field(default_factory=list)
    flavors: list[WireFlavorQuotas] = Field(default_factory=list)


class WireFairSharing(_Wire):
    weight: Quantity | None = None


class WireClusterQueueSpec(_Wire):
    cohort: str | None = None  # v1beta1
    cohortName: str | None = None  # v1beta2
    resourceGroups: list[WireResourceGroup] = Field(default_factory=list)
    stopPolicy: str | None = None
    queueingStrategy: str | None = None
    fairSharing: WireFairSharing | None = None


class WireUsageResource(_Wire):
    name: str
    total: Quantity = 0
    borrowed: Quantity = 0


class WireFlavorUsage(_Wire):
    name: str
    resources: list[WireUsageResource] = Field(default_factory=list)


class WireClusterQueueStatus(_Wire):
    conditions: list[WireCondition] | None = None
    flavorsUsage: list[WireFlavorUsage] | None = None
    flavorsReservation: list[WireFlavorUsage] | None = None
    pendingWorkloads: int | None = None
    reservingWorkloads: int | None = None
    admittedWorkloads: int | None = None


class WireClusterQueue(_Wire):
    metadata: WireMeta
    spec: WireClusterQueueSpec = Field(default_factory=WireClusterQueueSpec)
    status: WireClusterQueueStatus = Field(default_factory=WireClusterQueueStatus)


def _quotas(groups: list[WireResourceGroup]) -> tuple[FlavorQuota, ...]:
    out: list[FlavorQuota] = []
    for group in groups:
        for flavor in group.flavors:
            for r in flavor.resources:
                out.append(
                    FlavorQuota(
                        flavor.name,
                        r.name,
                        amount(r.name, r.nominalQuota),
                        None if r.borrowingLimit is None else amount(r.name, r.borrowingLimit),
                        None if r.lendingLimit is None else amount(r.name, r.lendingLimit),
                    )
                )
    return tuple(out)


def _usage(items: list[WireFlavorUsage] | None) -> tuple[FlavorUsage, ...]:
    return tuple(
        FlavorUsage(f.name, r.name, amount(r.name, r.total), amount(r.name, r.borrowed))
        for f in items or []
        for r in f.resources
    )


def cluster_queue_from_wire(w: WireClusterQueue) -> ClusterQueue:
    meta, spec, status = w.metadata, w.spec, w.status
    if not meta.name:
        raise DecodeError("ClusterQueue without metadata.name")
    return ClusterQueue(
        name=meta.name,
        resource_version=meta.resourceVersion,
        cohort=spec.cohortName or spec.cohort or None,
        quotas=_quotas(spec.resourceGroups),
        stop_policy=spec.stopPolicy or "None",
        queueing_strategy=spec.queueingStrategy or "BestEffortFIFO",
        weight=_weight(spec.fairSharing.weight) if spec.fairSharing else None,
        conditions=tuple(_condition(c) for c in status.conditions or []),
        usage=_usage(status.flavorsUsage),
        reservation=_usage(status.flavorsReservation),
        pending_workloads=status.pendingWorkloads or 0,
        reserving_workloads=status.reservingWorkloads or 0,
        admitted_workloads=status.admittedWorkloads or 0,
    )


class WireLocalQueueSpec(_Wire):
    clusterQueue: str = ""
    stopPolicy: str | None = None


class WireLocalQueueStatus(_Wire):
    pendingWorkloads: int | None = None
    reservingWorkloads: int | None = None
    admittedWorkloads: int | None = None


class WireLocalQueue(_Wire):
    metadata: WireMeta
    spec: WireLocalQueueSpec = Field(default_factory=WireLocalQueueSpec)
    status: WireLocalQueueStatus = Field(default_factory=WireLocalQueueStatus)


def local_queue_from_wire(w: WireLocalQueue) -> LocalQueue:
    meta = w.metadata
    if not meta.name or not meta.namespace or not w.spec.clusterQueue:
        raise DecodeError("LocalQueue without metadata.name, metadata.namespace or spec.clusterQueue")
    return LocalQueue(
        namespace=meta.namespace,
        name=meta.name,
        resource_version=meta.resourceVersion,
        cluster_queue=w.spec.clusterQueue,
        stop_policy=w.spec.stopPolicy or "None",
        pending_workloads=w.status.pendingWorkloads or 0,
        reserving_workloads=w.status.reservingWorkloads or 0,
        admitted_workloads=w.status.admittedWorkloads or 0,
    )


class WireCohortSpec(_Wire):
    parentName: str | None = None  # v1beta2
    parent: str | None = None  # v1alpha1
    resourceGroups: list[WireResourceGroup] = Field(default_factory=list)
    fairSharing: WireFairSharing | None = None


class WireCohort(_Wire):
    metadata: WireMeta
    spec: WireCohortSpec = Field(default_factory=WireCohortSpec)


def cohort_from_wire(w: WireCohort) -> Cohort:
    if not w.metadata.name:
        raise DecodeError("Cohort without metadata.name")
    spec = w.spec
    return Cohort(
        name=w.metadata.name,
        resource_version=w.metadata.resourceVersion,
        parent=spec.parentName or spec.parent or None,
        quotas=_quotas(spec.resourceGroups),
        weight=_weight(spec.fairSharing.weight) if spec.fairSharing else None,
    )


class WireFlavorTaint(_Wire):
    key: str
    value: str = ""
    effect: str = "NoSchedule"


class WireResourceFlavorSpec(_Wire):
    nodeLabels: dict[str, str] | None = None
    nodeTaints: list[WireFlavorTaint] | None = None
    topologyName: str | None = None


class WireResourceFlavor(_Wire):
    metadata: WireMeta
    spec: WireResourceFlavorSpec = Field(default_factory=WireResourceFlavorSpec)


def resource_flavor_from_wire(w: WireResourceFlavor) -> ResourceFlavor:
    if not w.metadata.name:
        raise DecodeError("ResourceFlavor without metadata.name")
    return ResourceFlavor(
        name=w.metadata.name,
        resource_version=w.metadata.resourceVersion,
        node_labels=tuple(sorted((w.spec.nodeLabels or {}).items())),
        node_taints=tuple(Taint(t.key, t.value, t.effect) for t in w.spec.nodeTaints or []),
        topology_name=w.spec.topologyName or None,
    )


# -- Volcano ---------------------------------------------------------------------------------------

HIERARCHY = "volcano.sh/hierarchy"


class WireGuarantee(_Wire):
    resource: dict[str, Quantity] | None = None


class WireVolcanoQueueSpec(_Wire):
    weight: int | None = None
    capability: dict[str, Quantity] | None = None
    deserved: dict[str, Quantity] | None = None
    guarantee: WireGuarantee | None = None
    reclaimable: bool | None = None
    priority: int | None = None
    parent: str | None = None


class WireVolcanoQueueStatus(_Wire):
    state: str | None = None
    allocated: dict[str, Quantity] | None = None
    pending: int | None = None
    inqueue: int | None = None
    running: int | None = None


class WireVolcanoQueue(_Wire):
    metadata: WireMeta
    spec: WireVolcanoQueueSpec = Field(default_factory=WireVolcanoQueueSpec)
    status: WireVolcanoQueueStatus = Field(default_factory=WireVolcanoQueueStatus)


def volcano_queue_from_wire(w: WireVolcanoQueue) -> VolcanoQueue:
    meta, spec, status = w.metadata, w.spec, w.status
    if not meta.name:
        raise DecodeError("Queue without metadata.name")
    hierarchy_text = (meta.annotations or {}).get(HIERARCHY, "")
    hierarchy = tuple(p for p in hierarchy_text.split("/") if p)
    parent = spec.parent or None
    if parent is None and len(hierarchy) > 1 and hierarchy[-1] == meta.name:
        parent = hierarchy[-2]
    return VolcanoQueue(
        name=meta.name,
        resource_version=meta.resourceVersion,
        parent=parent,
        hierarchy=hierarchy,
        weight=spec.weight,
        capability=_resource_map(spec.capability),
        deserved=_resource_map(spec.deserved),
        guarantee=_resource_map(spec.guarantee.resource) if spec.guarantee else None,
        state=status.state or "Open",
        priority=spec.priority,
        reclaimable=spec.reclaimable,
        allocated=Resources.from_k8s(status.allocated),
        pending=status.pending or 0,
        inqueue=status.inqueue or 0,
        running=status.running or 0,
    )


# -- PodGroup (Volcano and coscheduling share the shape that matters) ---------------------------


class WirePodGroupSpec(_Wire):
    minMember: int = 1
    minResources: dict[str, Quantity] | None = None
    queue: str | None = None
    priorityClassName: str | None = None
    scheduleTimeoutSeconds: int | None = None


class WirePodGroupStatus(_Wire):
    phase: str | None = None
    conditions: list[WireCondition] | None = None
    running: int | None = None
    succeeded: int | None = None
    failed: int | None = None
    scheduled: int | None = None


class WirePodGroup(_Wire):
    metadata: WireMeta
    spec: WirePodGroupSpec = Field(default_factory=WirePodGroupSpec)
    status: WirePodGroupStatus = Field(default_factory=WirePodGroupStatus)


def _pod_group(group: str) -> Callable[[WirePodGroup], PodGroup]:
    def project(w: WirePodGroup) -> PodGroup:
        meta, spec, status = w.metadata, w.spec, w.status
        if not meta.name or not meta.namespace:
            raise DecodeError("PodGroup without metadata.name or metadata.namespace")
        if spec.minMember < 0:
            raise DecodeError(f"PodGroup {meta.namespace}/{meta.name}: negative minMember")
        queue = spec.queue
        if group == VOLCANO_GROUP and not queue:
            queue = "default"  # Volcano's default queue
        return PodGroup(
            group=group,
            namespace=meta.namespace,
            name=meta.name,
            uid=meta.uid,
            resource_version=meta.resourceVersion,
            owner=_controller(meta),
            min_member=spec.minMember,
            min_resources=Resources.from_k8s(spec.minResources),
            queue=queue or None,
            phase=status.phase or "Pending",
            conditions=tuple(_condition(c) for c in status.conditions or []),
            priority_class=spec.priorityClassName,
            timeout_s=spec.scheduleTimeoutSeconds,
            running=status.running or 0,
            succeeded=status.succeeded or 0,
            failed=status.failed or 0,
            scheduled=status.scheduled or 0,
        )

    return project


# -- registry ------------------------------------------------------------------------------------


class KueueWorkloadEvent(_Envelope):
    object: WireKueueWorkload


class ClusterQueueEvent(_Envelope):
    object: WireClusterQueue


class LocalQueueEvent(_Envelope):
    object: WireLocalQueue


class CohortEvent(_Envelope):
    object: WireCohort


class ResourceFlavorEvent(_Envelope):
    object: WireResourceFlavor


class VolcanoQueueEvent(_Envelope):
    object: WireVolcanoQueue


class PodGroupEvent(_Envelope):
    object: WirePodGroup


BACKEND_DECODERS: dict[str, tuple[type[_Envelope], Any]] = {
    KUEUE_WORKLOAD: (KueueWorkloadEvent, kueue_workload_from_wire),
    CLUSTER_QUEUE: (ClusterQueueEvent, cluster_queue_from_wire),
    LOCAL_QUEUE: (LocalQueueEvent, local_queue_from_wire),
    COHORT: (CohortEvent, cohort_from_wire),
    RESOURCE_FLAVOR: (ResourceFlavorEvent, resource_flavor_from_wire),
    VOLCANO_QUEUE: (VolcanoQueueEvent, volcano_queue_from_wire),
    VOLCANO_PODGROUP: (PodGroupEvent, _pod_group(VOLCANO_GROUP)),
    COSCHEDULING_PODGROUP: (PodGroupEvent, _pod_group(COSCHEDULING_GROUP)),
}

#: decoder key → the (group, kind) its objects carry in their ``key``
STORE_KINDS: dict[str, tuple[str, str]] = {k: split_kind(k) for k in BACKEND_DECODERS}
