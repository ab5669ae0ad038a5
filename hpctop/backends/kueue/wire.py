"""Kueue's wire model: msgspec Structs of the fields hpctop reads, and their projections (§5).

Why apart from ``read``: these objects reach the store through the same path as pods (raw watch
event bytes → ``decode_event`` → ``Store.apply``), so they are decoded the same way: strict
first, then field by field (:mod:`hpctop.model.tolerant`), where an odd field hpctop does not need
is dropped and a malformed field it needs (``needed``) makes the object skipped, counted and
noted. One wire model reads both Kueue v1beta1 and v1beta2 (``cohort`` vs ``cohortName``,
``priorityClassName`` vs ``priorityClassRef``); lists marked ``omitempty`` upstream are optional
here, missing meaning empty. Quota amounts are summed over many nodes, so they are bounded as
aggregates (never negative, at most 2^60), not per node. The visibility API's
``PendingWorkloadsSummary`` (Kueue's own positions) is read here too; it is polled by
:mod:`hpctop.sources.kube.kueue_visibility`. Part of the read side: it imports the model only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import msgspec
import orjson

from hpctop.model.backends.wire import Quantity, amount, resource_map
from hpctop.model.objects import (
    ClusterQueue,
    Cohort,
    FlavorQuota,
    FlavorUsage,
    JobKey,
    KueueWorkload,
    LocalQueue,
    PodSetInfo,
    ResourceFlavor,
    Taint,
    TopologyDomain,
    TopologyLevels,
    TopologyPlacement,
    TopologyRequest,
)
from hpctop.model.projection import (
    DecodeError,
    conditions,
    controller_of,
    count,
    parse_time,
    template_requests,
)
from hpctop.model.quantity import to_milli
from hpctop.model.resources import Resources
from hpctop.model.structs import ConditionS, MetaS, TemplateS, WireStruct

#: decoder keys (the model's kinds, also ``ResourceSpec.kind``): ``Kind.group``, as Kueue's
#: ``Workload`` shares its name with the native gang API
KUEUE_WORKLOAD = "Workload.kueue.x-k8s.io"
CLUSTER_QUEUE = "ClusterQueue.kueue.x-k8s.io"
LOCAL_QUEUE = "LocalQueue.kueue.x-k8s.io"
COHORT = "Cohort.kueue.x-k8s.io"
RESOURCE_FLAVOR = "ResourceFlavor.kueue.x-k8s.io"


# -- Topology Aware Scheduling --------------------------------------------------------------
#
# Kueue Topology Aware Scheduling on the wire: ``Topology`` objects and compressed assignments.
#
# Why a module of its own: an admitted Workload's ``status.admission.podSetAssignments[].
# topologyAssignment`` says where its pods go, domain by domain, and Kueue v1beta2 writes it
# *compressed* (kubernetes-sigs/kueue ``apis/kueue/v1beta2/workload_types.go``,
# ``TopologyAssignment``): ``levels`` (node label keys, highest first) and ``slices``, each with a
# ``domainCount``, one ``valuesPerLevel`` entry per level (``universal``: one value for every domain
# of the slice, or ``individual``: ``prefix`` + each of ``roots`` + ``suffix``) and ``podCounts``
# (``universal`` or ``individual``). v1beta1 wrote it plain: ``domains[{values, count}]``. Both are
# decoded here into :class:`~hpctop.model.objects.TopologyPlacement` (domains and pod counts), so a
# view never sees the encoding. A slice whose lists do not match its ``domainCount`` is malformed
# (upstream validation refuses it), and so is one that would unfold into more domains than a job
# can have pods: either raises :class:`DecodeError` and the Workload is skipped and noted.
#
# The ``Topology`` kind (``spec.levels[].nodeLabel``, cluster-scoped) names the levels a
# ResourceFlavor's ``topologyName`` points at. Part of the read side: it imports the model only.

#: decoder key of Kueue's Topology (``Kind.group``: KAI and others define a ``Topology`` too)
KUEUE_TOPOLOGY = "Topology.kueue.x-k8s.io"
#: at most this many domains unfold from one Workload (a hostile domainCount must not fill memory)
MAX_DOMAINS = 100_000


class WireIndividualValues(WireStruct, frozen=True):
    prefix: str | None = None
    suffix: str | None = None
    roots: list[str] = msgspec.field(default_factory=list)


class WireLevelValues(WireStruct, frozen=True):
    universal: str | None = None
    individual: WireIndividualValues | None = None


class WirePodCounts(WireStruct, frozen=True):
    universal: int | None = None
    individual: list[int] | None = None


class WireSlice(WireStruct, frozen=True):
    needed = frozenset({"domainCount", "valuesPerLevel", "podCounts"})

    domainCount: int = 0
    valuesPerLevel: list[WireLevelValues] = msgspec.field(default_factory=list)
    podCounts: WirePodCounts = WirePodCounts()


class WireDomain(WireStruct, frozen=True):
    """v1beta1's plain domain: one value per level and the pod count."""

    values: list[str] = msgspec.field(default_factory=list)
    count: int = 0


class WireTopologyAssignment(WireStruct, frozen=True):
    needed = frozenset({"levels", "slices", "domains"})

    levels: list[str] = msgspec.field(default_factory=list)
    slices: list[WireSlice] | None = None  # v1beta2 (compressed)
    domains: list[WireDomain] | None = None  # v1beta1


class WirePodSetAssignment(WireStruct, frozen=True):
    needed = frozenset({"topologyAssignment"})

    name: str = "main"
    count: int | None = None
    topologyAssignment: WireTopologyAssignment | None = None


class WireTopologyRequest(WireStruct, frozen=True):
    required: str | None = None
    preferred: str | None = None
    unconstrained: bool | None = None


def _level_values(level: WireLevelValues, n: int, where: str) -> list[str]:
    if level.universal is not None:
        return [level.universal] * n
    if level.individual is not None:
        ind = level.individual
        if len(ind.roots) != n:
            raise DecodeError(
                f"{len(ind.roots)} roots for domainCount {n}", field=f"{where}.individual.roots"
            )
        return [f"{ind.prefix or ''}{root}{ind.suffix or ''}" for root in ind.roots]
    raise DecodeError("neither universal nor individual is set", field=where)


def _pod_counts(counts: WirePodCounts, n: int, where: str) -> list[int]:
    if counts.universal is not None:
        return [count(counts.universal, f"{where}.universal", 0)] * n
    if counts.individual is not None:
        if len(counts.individual) != n:
            raise DecodeError(
                f"{len(counts.individual)} counts for domainCount {n}", field=f"{where}.individual"
            )
        return [count(c, f"{where}.individual", 0) for c in counts.individual]
    raise DecodeError("neither universal nor individual is set", field=where)


def decode_assignment(ta: WireTopologyAssignment, pod_set: str, where: str) -> TopologyPlacement:
    """One pod set's placement, its domains unfolded from the compressed slices (or v1beta1's list)."""
    levels = tuple(ta.levels)
    domains: list[TopologyDomain] = []
    for i, dom in enumerate(ta.domains or []):
        if len(dom.values) != len(levels):
            raise DecodeError(
                f"{len(dom.values)} values for {len(levels)} levels", field=f"{where}.domains[{i}]"
            )
        domains.append(TopologyDomain(tuple(dom.values), count(dom.count, f"{where}.domains[{i}].count", 0)))
    for i, sl in enumerate(ta.slices or []):
        at = f"{where}.slices[{i}]"
        n = count(sl.domainCount, f"{at}.domainCount", 0)
        if len(domains) + n > MAX_DOMAINS:
            raise DecodeError(f"more than {MAX_DOMAINS:,} domains", field=f"{at}.domainCount")
        if len(sl.valuesPerLevel) != len(levels):
            raise DecodeError(
                f"{len(sl.valuesPerLevel)} values for {len(levels)} levels", field=f"{at}.valuesPerLevel"
            )
        columns = [_level_values(v, n, f"{at}.valuesPerLevel[{j}]") for j, v in enumerate(sl.valuesPerLevel)]
        pods = _pod_counts(sl.podCounts, n, f"{at}.podCounts")
        domains.extend(TopologyDomain(tuple(col[k] for col in columns), pods[k]) for k in range(n))
    return TopologyPlacement(pod_set, levels, tuple(domains))


def placements(assignments: list[WirePodSetAssignment] | None) -> tuple[TopologyPlacement, ...]:
    """Every pod set's placement in an admission (pod sets without a topologyAssignment left out)."""
    out: list[TopologyPlacement] = []
    for i, psa in enumerate(assignments or []):
        if psa.topologyAssignment is not None:
            where = f"status.admission.podSetAssignments[{i}].topologyAssignment"
            out.append(decode_assignment(psa.topologyAssignment, psa.name, where))
    return tuple(out)


def topology_request(pod_set: str, req: WireTopologyRequest | None) -> TopologyRequest | None:
    """A pod set's ``topologyRequest``: required beats preferred; unconstrained names no level."""
    if req is None:
        return None
    if req.required:
        return TopologyRequest(pod_set, "required", req.required)
    if req.preferred:
        return TopologyRequest(pod_set, "preferred", req.preferred)
    if req.unconstrained:
        return TopologyRequest(pod_set, "unconstrained", None)
    return None


# -- the Topology kind ---------------------------------------------------------------------------


class WireTopologyLevel(WireStruct, frozen=True):
    nodeLabel: str = ""


class WireTopologySpec(WireStruct, frozen=True):
    needed = frozenset({"levels"})

    levels: list[WireTopologyLevel] = msgspec.field(default_factory=list)


class WireTopology(WireStruct, frozen=True):
    needed = frozenset({"spec"})

    metadata: MetaS
    spec: WireTopologySpec = WireTopologySpec()


def topology_from_wire(w: WireTopology, _api_version: str = "") -> TopologyLevels:
    if not w.metadata.name:
        raise DecodeError("Topology without metadata.name")
    levels = tuple(level.nodeLabel for level in w.spec.levels)
    if not all(levels):
        raise DecodeError("a level without nodeLabel", field="spec.levels")
    return TopologyLevels(w.metadata.name, w.metadata.resourceVersion, levels, "kueue")


# -- Workload ------------------------------------------------------------------------------


def _weight(value: Quantity | None) -> float | None:
    return None if value is None else to_milli(value) / 1000


class WirePodSet(WireStruct, frozen=True):
    needed = frozenset({"count", "minCount", "template"})

    name: str = "main"
    count: int = 1
    minCount: int | None = None
    template: TemplateS | None = None
    topologyRequest: WireTopologyRequest | None = None


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
    needed = frozenset({"podSetAssignments"})

    clusterQueue: str = ""
    podSetAssignments: list[WirePodSetAssignment] | None = None


class WireRequeueState(WireStruct, frozen=True):
    count: int | None = None
    requeueAt: str | None = None


class WireKueueWorkloadStatus(WireStruct, frozen=True):
    needed = frozenset({"conditions", "admission"})

    conditions: list[ConditionS] | None = None
    admission: WireAdmission | None = None
    requeueState: WireRequeueState | None = None
    clusterName: str | None = None  # MultiKueue: the worker cluster it runs on
    nominatedClusterNames: list[str] | None = None


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
    requests = (topology_request(ps.name, ps.topologyRequest) for ps in spec.podSets)
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
        topology_requests=tuple(r for r in requests if r is not None),
        placements=placements(status.admission.podSetAssignments) if status.admission else (),
        cluster_name=status.clusterName or None,
        nominated_clusters=tuple(status.nominatedClusterNames or ()),
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


class WireAdmissionFairSharingStatus(WireStruct, frozen=True):
    needed = frozenset({"consumedResources"})

    consumedResources: dict[str, Quantity] | None = None


class WireLocalQueueFairSharing(WireStruct, frozen=True):
    needed = frozenset({"admissionFairSharingStatus"})

    admissionFairSharingStatus: WireAdmissionFairSharingStatus | None = None


class WireLocalQueueStatus(WireStruct, frozen=True):
    needed = frozenset({"fairSharing"})

    fairSharing: WireLocalQueueFairSharing | None = None
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
        consumed=_consumed(w.status.fairSharing),
    )


def _consumed(fair: WireLocalQueueFairSharing | None) -> Resources | None:
    afs = fair.admissionFairSharingStatus if fair is not None else None
    return resource_map(afs.consumedResources) if afs is not None else None


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


# -- the visibility API's pending positions (visibility.kueue.x-k8s.io, SCHEDULERS.md §5.5) -------


@dataclass(frozen=True, slots=True)
class PendingPosition:
    """Where one pending Workload stands in Kueue's queues (positions count from 0, as Kueue's)."""

    workload: str
    cluster_queue: str
    local_queue: str
    in_cluster_queue: int
    in_local_queue: int
    priority: int


@dataclass(frozen=True, slots=True)
class PendingPositions:
    """The positions of every pending Workload found at the last poll, by job."""

    by_job: Mapping[JobKey, PendingPosition] = field(default_factory=lambda: MappingProxyType({}))
    at: float | None = None  # wall-clock time of the poll that produced them
    note: str = ""  # why positions are missing or old ("" when fine)


def parse_pending(raw: bytes, cluster_queue: str) -> dict[JobKey, PendingPosition]:
    """A ``PendingWorkloadsSummary`` → positions by job; items it cannot read are skipped."""
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    items = doc.get("items") if isinstance(doc, dict) else None
    out: dict[JobKey, PendingPosition] = {}
    for item in items if isinstance(items, list) else ():
        try:
            meta = item["metadata"]
            namespace, name = str(meta.get("namespace") or ""), str(meta["name"])
            position = PendingPosition(
                workload=name,
                cluster_queue=cluster_queue,
                local_queue=str(item.get("localQueueName") or ""),
                in_cluster_queue=int(item.get("positionInClusterQueue", -1)),
                in_local_queue=int(item.get("positionInLocalQueue", -1)),
                priority=int(item.get("priority") or 0),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
        out[_job_of(item, namespace, name)] = position
    return out


def _job_of(item: Mapping[str, Any], namespace: str, name: str) -> JobKey:
    owners = item["metadata"].get("ownerReferences") or []
    chosen = next((o for o in owners if isinstance(o, dict) and o.get("controller")), None)
    if chosen is None and owners and isinstance(owners[0], dict):
        chosen = owners[0]
    if chosen is not None and chosen.get("kind") and chosen.get("name"):
        return (namespace, str(chosen["kind"]), str(chosen["name"]))
    return (namespace, "Workload", name)
