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

from hpctop.model.objects import COSCHEDULING_GROUP, VOLCANO_GROUP, PodGroup, VolcanoQueue
from hpctop.model.projection import (
    DecodeError,
    conditions,
    controller_of,
    count,
    workload_from_struct,
)
from hpctop.model.quantity import AGGREGATE_LIMITS, bounded, to_int, to_milli
from hpctop.model.resources import GPU_RESOURCE, IGNORED_RESOURCES, Resources
from hpctop.model.structs import ConditionS, MetaS, WireStruct, WorkloadS

Quantity = str | int | float

VOLCANO_QUEUE = "Queue.scheduling.volcano.sh"
VOLCANO_PODGROUP = "PodGroup.scheduling.volcano.sh"
COSCHEDULING_PODGROUP = "PodGroup.scheduling.x-k8s.io"


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


def resource_map(values: dict[str, Quantity] | None) -> Resources | None:
    if values is None:
        return None
    return Resources.from_k8s(values, aggregate=True)


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
        capability=resource_map(spec.capability),
        deserved=resource_map(spec.deserved),
        guarantee=resource_map(spec.guarantee.resource) if spec.guarantee else None,
        state=status.state or "Open",
        priority=spec.priority,
        reclaimable=spec.reclaimable,
        allocated=Resources.from_k8s(status.allocated, aggregate=True),
        pending=status.pending or 0,
        inqueue=status.inqueue or 0,
        running=status.running or 0,
    )


# -- PodGroup (Volcano and coscheduling share the shape that matters) ---------------------------


class WireNetworkTopology(WireStruct, frozen=True):
    """Volcano ``networkTopology`` (volcano-sh/apis ``scheduling/v1beta1/types.go``)."""

    mode: str = "hard"
    highestTierAllowed: int | None = None
    highestTierName: str | None = None


class WirePodGroupSpec(WireStruct, frozen=True):
    needed = frozenset({"minMember", "minResources", "queue"})

    networkTopology: WireNetworkTopology | None = None

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
            network_topology=_network_topology(spec.networkTopology),
        )

    return project


def _network_topology(nt: WireNetworkTopology | None) -> tuple[str, str | None] | None:
    if nt is None:
        return None
    highest = str(nt.highestTierAllowed) if nt.highestTierAllowed is not None else nt.highestTierName
    return (nt.mode or "hard", highest or None)


# -- owner kinds -----------------------------------------------------------------------------


def workload_decoder(kind: str) -> tuple[type[WireStruct], Callable[[Any, str], Any]]:
    """The decoder of an owner kind (a Job, a JobSet, a PyTorchJob...): the shared owner Struct,
    projected as a :class:`hpctop.model.objects.Workload` of ``kind``."""

    def project(w: WorkloadS, api_version: str) -> Any:
        return workload_from_struct(w, kind, api_version)

    return WorkloadS, project


#: the decoders of the PodGroup kinds (until Volcano and coscheduling have their folders)
POD_GROUP_DECODERS: dict[str, tuple[type[WireStruct], Callable[[Any, str], Any]]] = {
    VOLCANO_QUEUE: (WireVolcanoQueue, lambda w, _: volcano_queue_from_wire(w)),
    VOLCANO_PODGROUP: (WirePodGroup, _pod_group(VOLCANO_GROUP)),
    COSCHEDULING_PODGROUP: (WirePodGroup, _pod_group(COSCHEDULING_GROUP)),
}
