"""Wire Structs and projections for scheduler CRDs: Kueue, Volcano, coscheduling (§5, §6, §7.1).

Why: these objects reach the store through the same path as pods (raw watch-event bytes →
``decode_event`` → ``Store.apply``), so they are decoded the same way: msgspec Structs of only
the fields hpctop reads, strict first, then field by field (:mod:`hpctop.model.tolerant`) where
an odd field it does not need is dropped, and a malformed field it needs (``needed``) makes the
object skipped, counted and noted. Quota amounts are summed over many nodes, so they are bounded
as aggregates (never negative, at most 2^60), not per node. Their
decoder keys are ``Kind.group`` (``PodGroup.scheduling.volcano.sh``), never the bare kind: Volcano
and scheduler-plugins both define ``PodGroup``, and Kueue's ``Workload`` shares its name with the
native gang API. One wire model reads both Kueue v1beta1 and v1beta2 (``cohort`` vs
``cohortName``, ``priorityClassName`` vs ``priorityClassRef``): lists marked ``omitempty`` upstream
are optional here, missing meaning empty.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from hpctop.backends.kai.read import STORE_KINDS as KAI_STORE_KINDS
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
from hpctop.model.projection import (
    DecodeError,
    conditions,
    controller_of,
    count,
    parse_time,
    template_requests,
)
from hpctop.model.quantity import AGGREGATE_LIMITS, bounded, to_int, to_milli
from hpctop.model.resources import GPU_RESOURCE, IGNORED_RESOURCES, Resources
from hpctop.model.structs import ConditionS, MetaS, TemplateS, WireStruct

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
    """One quantity in canonical units (§1.6): cpu millicores, memory bytes, GPUs in milli-GPU.

    Bounded as an aggregate (never negative, at most 2^60): a quota spans many nodes.
    """
    if resource == "cpu":
        milli = to_milli(value)
    elif resource == GPU_RESOURCE:
        milli = to_int(value) * 1000
    else:
        milli = to_int(value)
    return bounded(resource, milli, AGGREGATE_LIMITS["other"], value)


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
    return Resources.from_k8s(values, aggregate=True)


def _weight(value: Quantity | None) -> float | None:
    return None if value is None else to_milli(value) / 1000


# -- Kueue ---------------------------------------------------------------------------------------


class WirePodSet(WireStruct, frozen=True):
    needed = frozenset({"count", "minCount", "template"})

    name: str = "main"
    count: int = 1
    minCount: int | None = None
    template: TemplateS | None = None


class WirePriorityClassRef(WireStruct, frozen=True):
    group: str = ""
    kind: str = ""
    name: str = ""


class WireKueueWorkloadSpec(WireStruct, frozen=True):
    needed = frozenset({"queueName", "podSets", "active"})

    queueName: str = ""
    podSets: list[WirePodSet] = msgspec.field(default_factory=list)
    active: bool | None = None
    priority: int | None = None
    priorityClassName: str | None = None  # v1beta1
    priorityClassRef: WirePriorityClassRef | None = None  # v1beta2
    maximumExecutionTimeSeconds: int | None = None


class WireAdmission(WireStruct, frozen=True):
    clusterQueue: str = ""


class WireRequeueState(WireStruct, frozen=True):
    count: int | None = None
    requeueAt: str | None = None


class WireKueueWorkloadStatus(WireStruct, frozen=True):
    needed = frozenset({"conditions", "admission"})

    conditions: list[ConditionS] | None = None
    admission: WireAdmission | None = None
    requeueState: WireRequeueState | None = None


class WireKueueWorkload(WireStruct, frozen=True):
    needed = frozenset({"spec", "status"})

    metadata: MetaS
    apiVersion: str = ""
    spec: WireKueueWorkloadSpec = WireKueueWorkloadSpec()
    status: WireKueueWorkloadStatus = WireKueueWorkloadStatus()


def _pod_set(i: int, ps: WirePodSet) -> PodSetInfo:
    where = f"spec.podSets[{i}]"
    members = count(ps.count, f"{where}.count", 1)
    minimum = None if ps.minCount is None else count(ps.minCount, f"{where}.minCount", 0)
    return PodSetInfo(ps.name, members, minimum, template_requests(ps.template, f"{where}.template"))


def kueue_workload_from_wire(w: WireKueueWorkload, api_version: str = "") -> KueueWorkload:
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
        api_version=w.apiVersion or api_version,
        owner=controller_of(meta),
        job_uid=labels.get("kueue.x-k8s.io/job-uid"),
        queue_name=spec.queueName,
        pod_sets=tuple(_pod_set(i, ps) for i, ps in enumerate(spec.podSets)),
        active=spec.active is not False,
        priority=spec.priority,
        priority_class=pcls or None,
        conditions=conditions(status.conditions),
        cluster_queue=(status.admission.clusterQueue or None) if status.admission else None,
        requeue_count=(requeue.count or 0) if requeue else 0,
        requeue_at=parse_time(requeue.requeueAt) if requeue else None,
        created=parse_time(meta.creationTimestamp) or 0.0,
        max_execution_s=spec.maximumExecutionTimeSeconds,
    )


class WireFlavorResource(WireStruct, frozen=True):
    needed = frozenset({"nominalQuota", "borrowingLimit", "lendingLimit"})

    name: str
    nominalQuota: Quantity = 0
    borrowingLimit: Quantity | None = None
    lendingLimit: Quantity | None = None


class WireFlavorQuotas(WireStruct, frozen=True):
    needed = frozenset({"resources"})

    name: str
    resources: list[WireFlavorResource] = msgspec.field(default_factory=list)


class WireResourceGroup(WireStruct, frozen=True):
    needed = frozenset({"flavors"})

    coveredResources: list[str] = msgspec.field(default_factory=list)
    flavors: list[WireFlavorQuotas] = msgspec.field(default_factory=list)


class WireFairSharing(WireStruct, frozen=True):
    weight: Quantity | None = None


class WireClusterQueueSpec(WireStruct, frozen=True):
    needed = frozenset({"resourceGroups", "cohort", "cohortName", "stopPolicy"})

    cohort: str | None = None  # v1beta1
    cohortName: str | None = None  # v1beta2
    resourceGroups: list[WireResourceGroup] = msgspec.field(default_factory=list)
    stopPolicy: str | None = None
    queueingStrategy: str | None = None
    fairSharing: WireFairSharing | None = None


class WireUsageResource(WireStruct, frozen=True):
    needed = frozenset({"total", "borrowed"})

    name: str
    total: Quantity = 0
    borrowed: Quantity = 0


class WireFlavorUsage(WireStruct, frozen=True):
    needed = frozenset({"resources"})

    name: str
    resources: list[WireUsageResource] = msgspec.field(default_factory=list)


class WireClusterQueueStatus(WireStruct, frozen=True):
    needed = frozenset({"flavorsUsage", "flavorsReservation"})

    conditions: list[ConditionS] | None = None
    flavorsUsage: list[WireFlavorUsage] | None = None
    flavorsReservation: list[WireFlavorUsage] | None = None
    pendingWorkloads: int | None = None
    reservingWorkloads: int | None = None
    admittedWorkloads: int | None = None


class WireClusterQueue(WireStruct, frozen=True):
    needed = frozenset({"spec", "status"})

    metadata: MetaS
    spec: WireClusterQueueSpec = WireClusterQueueSpec()
    status: WireClusterQueueStatus = WireClusterQueueStatus()


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
        conditions=conditions(status.conditions),
        usage=_usage(status.flavorsUsage),
        reservation=_usage(status.flavorsReservation),
        pending_workloads=status.pendingWorkloads or 0,
        reserving_workloads=status.reservingWorkloads or 0,
        admitted_workloads=status.admittedWorkloads or 0,
    )


class WireLocalQueueSpec(WireStruct, frozen=True):
    needed = frozenset({"clusterQueue", "stopPolicy"})

    clusterQueue: str = ""
    stopPolicy: str | None = None


class WireLocalQueueStatus(WireStruct, frozen=True):
    pendingWorkloads: int | None = None
    reservingWorkloads: int | None = None
    admittedWorkloads: int | None = None


class WireLocalQueue(WireStruct, frozen=True):
    needed = frozenset({"spec"})

    metadata: MetaS
    spec: WireLocalQueueSpec = WireLocalQueueSpec()
    status: WireLocalQueueStatus = WireLocalQueueStatus()


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


class WireCohortSpec(WireStruct, frozen=True):
    needed = frozenset({"resourceGroups", "parent", "parentName"})

    parentName: str | None = None  # v1beta2
    parent: str | None = None  # v1alpha1
    resourceGroups: list[WireResourceGroup] = msgspec.field(default_factory=list)
    fairSharing: WireFairSharing | None = None


class WireCohort(WireStruct, frozen=True):
    needed = frozenset({"spec"})

    metadata: MetaS
    spec: WireCohortSpec = WireCohortSpec()


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


class WireFlavorTaint(WireStruct, frozen=True):
    key: str
    value: str = ""
    effect: str = "NoSchedule"


class WireResourceFlavorSpec(WireStruct, frozen=True):
    needed = frozenset({"nodeLabels", "nodeTaints"})

    nodeLabels: dict[str, str] | None = None
    nodeTaints: list[WireFlavorTaint] | None = None
    topologyName: str | None = None


class WireResourceFlavor(WireStruct, frozen=True):
    needed = frozenset({"spec"})

    metadata: MetaS
    spec: WireResourceFlavorSpec = WireResourceFlavorSpec()


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


class WireGuarantee(WireStruct, frozen=True):
    needed = frozenset({"resource"})

    resource: dict[str, Quantity] | None = None


class WireVolcanoQueueSpec(WireStruct, frozen=True):
    needed = frozenset({"capability", "deserved", "guarantee", "parent", "weight"})

    weight: int | None = None
    capability: dict[str, Quantity] | None = None
    deserved: dict[str, Quantity] | None = None
    guarantee: WireGuarantee | None = None
    reclaimable: bool | None = None
    priority: int | None = None
    parent: str | None = None


class WireVolcanoQueueStatus(WireStruct, frozen=True):
    needed = frozenset({"state", "allocated"})

    state: str | None = None
    allocated: dict[str, Quantity] | None = None
    pending: int | None = None
    inqueue: int | None = None
    running: int | None = None


class WireVolcanoQueue(WireStruct, frozen=True):
    needed = frozenset({"spec", "status"})

    metadata: MetaS
    spec: WireVolcanoQueueSpec = WireVolcanoQueueSpec()
    status: WireVolcanoQueueStatus = WireVolcanoQueueStatus()


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
        allocated=Resources.from_k8s(status.allocated, aggregate=True),
        pending=status.pending or 0,
        inqueue=status.inqueue or 0,
        running=status.running or 0,
    )


# -- PodGroup (Volcano and coscheduling share the shape that matters) ---------------------------


class WirePodGroupSpec(WireStruct, frozen=True):
    needed = frozenset({"minMember", "minResources", "queue"})

    minMember: int = 1
    minResources: dict[str, Quantity] | None = None
    queue: str | None = None
    priorityClassName: str | None = None
    scheduleTimeoutSeconds: int | None = None


class WirePodGroupStatus(WireStruct, frozen=True):
    needed = frozenset({"phase"})

    phase: str | None = None
    conditions: list[ConditionS] | None = None
    running: int | None = None
    succeeded: int | None = None
    failed: int | None = None
    scheduled: int | None = None


class WirePodGroup(WireStruct, frozen=True):
    needed = frozenset({"spec", "status"})

    metadata: MetaS
    spec: WirePodGroupSpec = WirePodGroupSpec()
    status: WirePodGroupStatus = WirePodGroupStatus()


def _pod_group(group: str) -> Callable[[WirePodGroup, str], PodGroup]:
    def project(w: WirePodGroup, _api_version: str = "") -> PodGroup:
        meta, spec, status = w.metadata, w.spec, w.status
        if not meta.name or not meta.namespace:
            raise DecodeError("PodGroup without metadata.name or metadata.namespace")
        min_member = count(spec.minMember, "spec.minMember", 1)
        queue = spec.queue
        if group == VOLCANO_GROUP and not queue:
            queue = "default"  # Volcano's default queue
        return PodGroup(
            group=group,
            namespace=meta.namespace,
            name=meta.name,
            uid=meta.uid,
            resource_version=meta.resourceVersion,
            owner=controller_of(meta),
            min_member=min_member,
            min_resources=Resources.from_k8s(spec.minResources, aggregate=True),
            queue=queue or None,
            phase=status.phase or "Pending",
            conditions=conditions(status.conditions),
            priority_class=spec.priorityClassName,
            timeout_s=spec.scheduleTimeoutSeconds,
            running=status.running or 0,
            succeeded=status.succeeded or 0,
            failed=status.failed or 0,
            scheduled=status.scheduled or 0,
        )

    return project


# -- registry ------------------------------------------------------------------------------------


#: decoder key → (the Struct of one object, its projection given the Struct and a list item's
#: apiVersion); :mod:`hpctop.model.decode` dispatches through it
BACKEND_DECODERS: dict[str, tuple[type[WireStruct], Callable[[Any, str], Any]]] = {
    KUEUE_WORKLOAD: (WireKueueWorkload, kueue_workload_from_wire),
    CLUSTER_QUEUE: (WireClusterQueue, lambda w, _: cluster_queue_from_wire(w)),
    LOCAL_QUEUE: (WireLocalQueue, lambda w, _: local_queue_from_wire(w)),
    COHORT: (WireCohort, lambda w, _: cohort_from_wire(w)),
    RESOURCE_FLAVOR: (WireResourceFlavor, lambda w, _: resource_flavor_from_wire(w)),
    VOLCANO_QUEUE: (WireVolcanoQueue, lambda w, _: volcano_queue_from_wire(w)),
    VOLCANO_PODGROUP: (WirePodGroup, _pod_group(VOLCANO_GROUP)),
    COSCHEDULING_PODGROUP: (WirePodGroup, _pod_group(COSCHEDULING_GROUP)),
}

#: decoder key → the (group, kind) its objects carry in their ``key``
STORE_KINDS: dict[str, tuple[str, str]] = {k: split_kind(k) for k in BACKEND_DECODERS}
STORE_KINDS.update(KAI_STORE_KINDS)
