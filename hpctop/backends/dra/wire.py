"""Wire Structs and projections of the DRA kinds (``resource.k8s.io/v1``) and NVIDIA's ComputeDomain.

Why msgspec Structs of a few fields, as for every other kind (:mod:`hpctop.model.structs`): a
ResourceSlice of a DGX node lists dozens of devices with a dozen attributes each, of which hpctop
reads five. The field names are the upstream ones (kubernetes/api ``resource/v1/types.go`` at
10b39a39bcee995dfe7cd5e8e7b922be5e46f1e2; NVIDIA's ``api/nvidia.com/resource/v1beta1/computedomain.go``
in kubernetes-sigs/dra-driver-nvidia-gpu at 95932046683719c43b6a0dd9613c2e5aad5d6703);
``v1beta2`` has the same shape for what is read here. What hpctop counts GPUs by (a slice's
driver, pool, node and devices with their ``type``; a claim's requests, allocation and
consumers) is ``needed``: malformed, the object is skipped, counted and noted, never half-applied.

The frozen objects the projections build come first (one module with the Structs, as the
backend-folder contract has it). Why DRA has objects of its own: DRA is not a scheduler's evidence
about a job but an inventory of devices (ResourceSlices) and the record of who holds which
(ResourceClaims). hpctop reads them only to count GPUs the way it counts device-plugin GPUs
(:class:`hpctop.backends.dra.read.DraIndex`), so each object keeps what that needs: a slice's
devices with their NVIDIA attributes (type, product, memory, MIG profile, parent GPU) and taints, a
claim's requests, its allocation (``driver/pool/device`` per request) and the pods it is reserved
for. Field meanings follow the upstream types (kubernetes/api ``resource/v1/types.go``) and the
NVIDIA driver's attribute reference (kubernetes-sigs/dra-driver-nvidia-gpu
``site/content/docs/reference/resourceslice-attributes.md``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from hpctop.errors import QuantityError
from hpctop.model.objects import Taint
from hpctop.model.projection import DecodeError
from hpctop.model.quantity import to_int
from hpctop.model.structs import MetaS, WireStruct

RESOURCE_GROUP = "resource.k8s.io"
NVIDIA_RESOURCE_GROUP = "resource.nvidia.com"
#: the NVIDIA DRA driver's name; every GPU, MIG and VFIO device is published under it
NVIDIA_GPU_DRIVER = "gpu.nvidia.com"
#: ``metadata.annotations`` of the claim the scheduler generates for a DRA-served extended resource
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
#: ``metadata.annotations`` of a claim generated from a pod's template: the pod's name for it
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"

DeviceId = tuple[str, str, str]  # (driver, pool, device): a device across the cluster


@dataclass(frozen=True, slots=True)
class Device:
    """One entry of a slice's ``spec.devices``; ``kind`` is NVIDIA's ``type`` attribute (gpu | mig | vfio)."""

    name: str
    kind: str
    uuid: str | None = None
    parent_uuid: str | None = None
    product: str | None = None
    memory_mib: int | None = None
    profile: str | None = None
    #: ``taints`` of the device (KEP-5055): NoSchedule / NoExecute keep it from new claims
    taints: tuple[Taint, ...] = ()
    #: partitionable (KEP-4815): one of several overlapping devices drawing on shared counters
    #: (NVIDIA's dynamic MIG advertises every possible partition this way)
    consumes_counters: bool = False
    #: ``nodeName`` of the device when the slice sets ``perDeviceNodeSelection``
    node_name: str | None = None

    @property
    def physical_id(self) -> str:
        """The physical GPU this device is or is part of (a MIG slice: its parent)."""
        return self.parent_uuid or self.uuid or self.name


@dataclass(frozen=True, slots=True)
class ResourceSlice:
    name: str
    resource_version: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str | None
    devices: tuple[Device, ...]
    shared_counters: bool = False

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (RESOURCE_GROUP, "ResourceSlice", "", self.name)


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """One ``spec.devices.requests[]`` entry: ``count`` devices of ``device_class`` (None: mode All).

    ``firstAvailable`` requests keep their alternatives in order; until the claim is allocated
    the first (the most preferred) stands for the request.
    """

    name: str
    device_class: str
    count: int | None = 1
    alternatives: tuple[tuple[str, str, int | None], ...] = ()
    #: the MIG profile the request's CEL selector names (``...].profile == '1g.5gb'``)
    profile: str | None = None


@dataclass(frozen=True, slots=True)
class AllocatedDevice:
    request: str
    driver: str
    pool: str
    device: str

    @property
    def id(self) -> DeviceId:
        return (self.driver, self.pool, self.device)


@dataclass(frozen=True, slots=True)
class ResourceClaim:
    namespace: str
    name: str
    uid: str
    resource_version: str
    requests: tuple[DeviceRequest, ...]
    #: ``status.allocation.devices.results`` (empty while unallocated)
    allocated: tuple[AllocatedDevice, ...] = ()
    allocated_node: str | None = None
    #: ``status.reservedFor``: (resource, name, uid) of each consumer, pods above all
    reserved_for: tuple[tuple[str, str, str], ...] = ()
    #: generated by the scheduler for a DRA-served extended resource (``nvidia.com/gpu``)
    extended: bool = False
    #: the pod that owns a claim generated from a template (its controller reference), and the
    #: pod's name for the claim (annotation ``resource.kubernetes.io/pod-claim-name``)
    owner_pod: str | None = None
    pod_claim_name: str | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (RESOURCE_GROUP, "ResourceClaim", self.namespace, self.name)

    @property
    def is_allocated(self) -> bool:
        return bool(self.allocated)

    def pod_consumers(self) -> tuple[str, ...]:
        return tuple(name for resource, name, _ in self.reserved_for if resource == "pods")


@dataclass(frozen=True, slots=True)
class ResourceClaimTemplate:
    namespace: str
    name: str
    resource_version: str
    requests: tuple[DeviceRequest, ...]

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (RESOURCE_GROUP, "ResourceClaimTemplate", self.namespace, self.name)


@dataclass(frozen=True, slots=True)
class DeviceClass:
    """A DeviceClass; ``device_kind``/``profile`` read from its CEL selector (NVIDIA's ``type == 'mig'``)."""

    name: str
    resource_version: str
    driver: str | None
    device_kind: str | None
    profile: str | None = None
    #: ``spec.extendedResourceName`` (KEP-5004): pods asking this resource are served by the class
    extended_resource_name: str | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (RESOURCE_GROUP, "DeviceClass", "", self.name)


@dataclass(frozen=True, slots=True)
class DeviceTaintRule:
    """A ``DeviceTaintRule``: a taint put on the devices its selector names (None: any)."""

    name: str
    resource_version: str
    driver: str | None
    pool: str | None
    device: str | None
    taint: Taint

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (RESOURCE_GROUP, "DeviceTaintRule", "", self.name)

    def matches(self, driver: str, pool: str, device: str) -> bool:
        return (
            (self.driver is None or self.driver == driver)
            and (self.pool is None or self.pool == pool)
            and (self.device is None or self.device == device)
        )


@dataclass(frozen=True, slots=True)
class ComputeDomainNode:
    name: str
    clique: str
    index: int
    status: str


@dataclass(frozen=True, slots=True)
class ComputeDomain:
    """NVIDIA's ``ComputeDomain`` (multi-node NVLink / IMEX): ``status`` Ready | NotReady."""

    namespace: str
    name: str
    uid: str
    resource_version: str
    num_nodes: int
    #: ``spec.channel.resourceClaimTemplate.name``: the pods that name it use this domain
    channel_template: str | None
    status: str
    nodes: tuple[ComputeDomainNode, ...] = ()

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (NVIDIA_RESOURCE_GROUP, "ComputeDomain", self.namespace, self.name)

    @property
    def ready(self) -> bool:
        return self.status == "Ready"

    @property
    def ready_nodes(self) -> int:
        return sum(1 for n in self.nodes if n.status == "Ready")


DraObject = (
    ResourceSlice | ResourceClaim | ResourceClaimTemplate | DeviceClass | DeviceTaintRule | ComputeDomain
)
DRA_TYPES = (ResourceSlice, ResourceClaim, ResourceClaimTemplate, DeviceClass, DeviceTaintRule, ComputeDomain)

Quantity = str | int | float

#: decoder keys (``Kind.group``, as for the other backends' kinds)
RESOURCE_SLICE = "ResourceSlice.resource.k8s.io"
RESOURCE_CLAIM = "ResourceClaim.resource.k8s.io"
RESOURCE_CLAIM_TEMPLATE = "ResourceClaimTemplate.resource.k8s.io"
DEVICE_CLASS = "DeviceClass.resource.k8s.io"
DEVICE_TAINT_RULE = "DeviceTaintRule.resource.k8s.io"
COMPUTE_DOMAIN = "ComputeDomain.resource.nvidia.com"

_MAX_DEVICES_PER_REQUEST = 4096
#: ``ResourceSliceMaxDevices`` (resource/v1/types.go): the API server refuses a bigger slice, so
#: one is not a slice hpctop can trust
MAX_DEVICES_PER_SLICE = 128
_CEL_DRIVER = re.compile(r"device\.driver\s*==\s*['\"]([^'\"]+)['\"]")
_CEL_TYPE = re.compile(r"\]\.type\s*==\s*['\"]([^'\"]+)['\"]")
_CEL_PROFILE = re.compile(r"\]\.profile\s*==\s*['\"]([^'\"]+)['\"]")


# -- ResourceSlice ----------------------------------------------------------------------------------


class AttributeS(WireStruct, frozen=True):
    """``DeviceAttribute``: exactly one of its typed values is set (the string ones say what a device is)."""

    needed = frozenset({"string"})

    int_: int | None = msgspec.field(default=None, name="int")
    bool_: bool | None = msgspec.field(default=None, name="bool")
    string: str | None = None
    version: str | None = None


class CapacityS(WireStruct, frozen=True):
    value: Quantity = 0


class DeviceTaintS(WireStruct, frozen=True):
    #: a taint keeps a device out of the allocatable count: a malformed one is not guessed at
    needed = frozenset({"key", "effect"})

    key: str = ""
    value: str = ""
    effect: str = "NoSchedule"


class CounterConsumptionS(WireStruct, frozen=True):
    counterSet: str = ""


class DeviceS(WireStruct, frozen=True):
    needed = frozenset({"name", "attributes", "nodeName", "consumesCounters", "taints"})

    name: str = ""
    attributes: dict[str, AttributeS] | None = None
    capacity: dict[str, CapacityS] | None = None
    consumesCounters: list[CounterConsumptionS] | None = None
    nodeName: str | None = None
    taints: list[DeviceTaintS] | None = None


class PoolS(WireStruct, frozen=True):
    needed = frozenset({"name", "generation", "resourceSliceCount"})

    name: str = ""
    generation: int = 0
    resourceSliceCount: int = 1


class CounterSetS(WireStruct, frozen=True):
    name: str = ""


class SliceSpecS(WireStruct, frozen=True):
    needed = frozenset({"driver", "pool", "nodeName", "devices", "sharedCounters"})

    driver: str = ""
    pool: PoolS = PoolS()
    nodeName: str | None = None
    devices: list[DeviceS] | None = None
    sharedCounters: list[CounterSetS] | None = None


class ResourceSliceS(WireStruct, frozen=True):
    needed = frozenset({"spec"})

    metadata: MetaS
    spec: SliceSpecS = SliceSpecS()


def _attribute(attributes: dict[str, AttributeS], driver: str, name: str) -> str | None:
    """A driver attribute by its bare name (``productName``) or qualified by the driver's domain."""
    found = attributes.get(name) or attributes.get(f"{driver}/{name}")
    if found is None:
        return None
    if found.string is not None:
        return found.string
    if found.version is not None:
        return found.version
    if found.int_ is not None:
        return str(found.int_)
    return None


def _device(d: DeviceS, driver: str) -> Device:
    attributes = d.attributes or {}
    memory: int | None = None
    raw_memory = (d.capacity or {}).get("memory")
    if raw_memory is not None:
        try:
            memory = to_int(raw_memory.value) // (1024 * 1024) or None
        except (QuantityError, ValueError):
            memory = None  # shown, never counted: an odd amount is dropped
    return Device(
        name=d.name,
        kind=_attribute(attributes, driver, "type") or "",
        uuid=_attribute(attributes, driver, "uuid"),
        parent_uuid=_attribute(attributes, driver, "parentUUID"),
        product=_attribute(attributes, driver, "productName"),
        memory_mib=memory,
        profile=_attribute(attributes, driver, "profile"),
        taints=tuple(Taint(t.key, t.value, t.effect) for t in d.taints or ()),
        consumes_counters=bool(d.consumesCounters),
        node_name=d.nodeName or None,
    )


def resource_slice_from_wire(w: ResourceSliceS) -> ResourceSlice:
    meta = w.metadata
    if not meta.name:
        raise DecodeError("missing", field="metadata.name")
    spec = w.spec
    if not spec.driver or not spec.pool.name:
        raise DecodeError("missing", field="spec.driver" if not spec.driver else "spec.pool.name")
    if len(spec.devices or ()) > MAX_DEVICES_PER_SLICE:
        raise DecodeError(f"more than {MAX_DEVICES_PER_SLICE} devices", field="spec.devices")
    devices = tuple(_device(d, spec.driver) for d in spec.devices or ())
    if any(not d.name for d in devices):
        raise DecodeError("a device without a name", field="spec.devices[].name")
    return ResourceSlice(
        name=meta.name,
        resource_version=meta.resourceVersion,
        driver=spec.driver,
        pool=spec.pool.name,
        generation=spec.pool.generation,
        slice_count=spec.pool.resourceSliceCount,
        node_name=spec.nodeName or None,
        devices=devices,
        shared_counters=bool(spec.sharedCounters),
    )


# -- ResourceClaim / ResourceClaimTemplate ---------------------------------------------------------


class CelS(WireStruct, frozen=True):
    needed = frozenset({"expression"})

    expression: str = ""


class SelectorS(WireStruct, frozen=True):
    needed = frozenset({"cel"})

    cel: CelS | None = None


class ExactS(WireStruct, frozen=True):
    needed = frozenset({"deviceClassName", "allocationMode", "count"})

    deviceClassName: str = ""
    allocationMode: str = "ExactCount"
    count: int = 1
    selectors: list[SelectorS] | None = None


class SubRequestS(WireStruct, frozen=True):
    needed = frozenset({"name", "deviceClassName", "allocationMode", "count"})

    name: str = ""
    deviceClassName: str = ""
    allocationMode: str = "ExactCount"
    count: int = 1
    selectors: list[SelectorS] | None = None


class RequestS(WireStruct, frozen=True):
    needed = frozenset({"name", "exactly", "firstAvailable"})

    name: str = ""
    exactly: ExactS | None = None
    firstAvailable: list[SubRequestS] | None = None


class DeviceClaimS(WireStruct, frozen=True):
    needed = frozenset({"requests"})

    requests: list[RequestS] | None = None


class ClaimSpecS(WireStruct, frozen=True):
    needed = frozenset({"devices"})

    devices: DeviceClaimS = DeviceClaimS()


class ResultS(WireStruct, frozen=True):
    needed = frozenset({"request", "driver", "pool", "device"})

    request: str = ""
    driver: str = ""
    pool: str = ""
    device: str = ""


class DeviceResultsS(WireStruct, frozen=True):
    needed = frozenset({"results"})

    results: list[ResultS] | None = None


class FieldRequirementS(WireStruct, frozen=True):
    key: str = ""
    operator: str = ""
    values: list[str] | None = None


class SelectorTermS(WireStruct, frozen=True):
    matchFields: list[FieldRequirementS] | None = None


class NodeSelectorS(WireStruct, frozen=True):
    nodeSelectorTerms: list[SelectorTermS] | None = None


class AllocationS(WireStruct, frozen=True):
    needed = frozenset({"devices"})

    devices: DeviceResultsS = DeviceResultsS()
    nodeSelector: NodeSelectorS | None = None


class ConsumerS(WireStruct, frozen=True):
    needed = frozenset({"resource", "name"})

    apiGroup: str = ""
    resource: str = ""
    name: str = ""
    uid: str = ""


class ClaimStatusS(WireStruct, frozen=True):
    needed = frozenset({"allocation", "reservedFor"})

    allocation: AllocationS | None = None
    reservedFor: list[ConsumerS] | None = None


class ResourceClaimS(WireStruct, frozen=True):
    needed = frozenset({"spec", "status"})

    metadata: MetaS
    spec: ClaimSpecS = ClaimSpecS()
    status: ClaimStatusS = ClaimStatusS()


class TemplateSpecS(WireStruct, frozen=True):
    needed = frozenset({"spec"})

    spec: ClaimSpecS = ClaimSpecS()


class ResourceClaimTemplateS(WireStruct, frozen=True):
    needed = frozenset({"spec"})

    metadata: MetaS
    spec: TemplateSpecS = TemplateSpecS()


def _count(mode: str, count: int, field: str) -> int | None:
    if mode == "All":
        return None
    if not 0 < count <= _MAX_DEVICES_PER_REQUEST:
        raise DecodeError(f"device count {count} out of range", field=field)
    return count


def _profile(selectors: list[SelectorS] | None) -> str | None:
    """The MIG profile a request's CEL selector names (``...].profile == '1g.5gb'``), if plainly."""
    for s in selectors or ():
        found = _CEL_PROFILE.search(s.cel.expression) if s.cel is not None else None
        if found:
            return found.group(1)
    return None


def _requests(spec: ClaimSpecS, where: str) -> tuple[DeviceRequest, ...]:
    out: list[DeviceRequest] = []
    for r in spec.devices.requests or ():
        if r.exactly is not None:
            e = r.exactly
            count = _count(e.allocationMode, e.count, where)
            out.append(DeviceRequest(r.name, e.deviceClassName, count, profile=_profile(e.selectors)))
        elif r.firstAvailable:
            alternatives = tuple(
                (s.name, s.deviceClassName, _count(s.allocationMode, s.count, where))
                for s in r.firstAvailable
            )
            first = alternatives[0]
            profile = _profile(r.firstAvailable[0].selectors)
            out.append(DeviceRequest(r.name, first[1], first[2], alternatives, profile))
        else:
            raise DecodeError("a request with neither exactly nor firstAvailable", field=where)
    return tuple(out)


def _allocated_node(selector: NodeSelectorS | None) -> str | None:
    """The node an allocation is bound to: ``matchFields metadata.name In [node]`` (a local device)."""
    for term in (selector.nodeSelectorTerms or ()) if selector else ():
        for req in term.matchFields or ():
            if req.key == "metadata.name" and req.operator == "In" and req.values and len(req.values) == 1:
                return req.values[0]
    return None


def resource_claim_from_wire(w: ResourceClaimS) -> ResourceClaim:
    meta = w.metadata
    if not meta.name or not meta.namespace:
        raise DecodeError("missing", field="metadata.name" if not meta.name else "metadata.namespace")
    allocation = w.status.allocation
    results = tuple(
        AllocatedDevice(r.request, r.driver, r.pool, r.device)
        for r in ((allocation.devices.results or ()) if allocation is not None else ())
    )
    owner = next((o.name for o in meta.ownerReferences or () if o.controller and o.kind == "Pod"), None)
    return ResourceClaim(
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid,
        resource_version=meta.resourceVersion,
        requests=_requests(w.spec, "spec.devices.requests"),
        allocated=results,
        allocated_node=_allocated_node(allocation.nodeSelector) if allocation is not None else None,
        reserved_for=tuple((c.resource, c.name, c.uid) for c in w.status.reservedFor or ()),
        extended=(meta.annotations or {}).get(EXTENDED_CLAIM_ANNOTATION) == "true",
        owner_pod=owner,
        pod_claim_name=(meta.annotations or {}).get(POD_CLAIM_NAME_ANNOTATION),
    )


def resource_claim_template_from_wire(w: ResourceClaimTemplateS) -> ResourceClaimTemplate:
    meta = w.metadata
    if not meta.name or not meta.namespace:
        raise DecodeError("missing", field="metadata.name" if not meta.name else "metadata.namespace")
    return ResourceClaimTemplate(
        namespace=meta.namespace,
        name=meta.name,
        resource_version=meta.resourceVersion,
        requests=_requests(w.spec.spec, "spec.spec.devices.requests"),
    )


# -- DeviceClass, DeviceTaintRule ----------------------------------------------------------------------


class DeviceClassSpecS(WireStruct, frozen=True):
    needed = frozenset({"selectors", "extendedResourceName"})

    selectors: list[SelectorS] | None = None
    extendedResourceName: str | None = None


class DeviceClassS(WireStruct, frozen=True):
    needed = frozenset({"spec"})

    metadata: MetaS
    spec: DeviceClassSpecS = DeviceClassSpecS()


def device_class_from_wire(w: DeviceClassS) -> DeviceClass:
    """A class's driver, device ``type`` and MIG profile, where its CEL selector states them plainly.

    NVIDIA's classes say ``device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type
    == 'mig'`` (``deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-*.yaml``); a class
    whose selector says something else keeps ``None`` there and is told by its name.
    """
    meta = w.metadata
    if not meta.name:
        raise DecodeError("missing", field="metadata.name")
    text = " && ".join(s.cel.expression for s in w.spec.selectors or () if s.cel is not None)
    driver = _CEL_DRIVER.search(text)
    kind = _CEL_TYPE.search(text)
    profile = _CEL_PROFILE.search(text)
    return DeviceClass(
        name=meta.name,
        resource_version=meta.resourceVersion,
        driver=driver.group(1) if driver else None,
        device_kind=kind.group(1) if kind else None,
        profile=profile.group(1) if profile else None,
        extended_resource_name=w.spec.extendedResourceName or None,
    )


class TaintSelectorS(WireStruct, frozen=True):
    needed = frozenset({"driver", "pool", "device"})

    driver: str | None = None
    pool: str | None = None
    device: str | None = None


class TaintRuleSpecS(WireStruct, frozen=True):
    needed = frozenset({"taint", "deviceSelector"})

    deviceSelector: TaintSelectorS | None = None
    taint: DeviceTaintS = DeviceTaintS()


class DeviceTaintRuleS(WireStruct, frozen=True):
    needed = frozenset({"spec"})

    metadata: MetaS
    spec: TaintRuleSpecS = TaintRuleSpecS()


def device_taint_rule_from_wire(w: DeviceTaintRuleS) -> DeviceTaintRule:
    meta = w.metadata
    if not meta.name:
        raise DecodeError("missing", field="metadata.name")
    sel = w.spec.deviceSelector or TaintSelectorS()
    t = w.spec.taint
    return DeviceTaintRule(
        name=meta.name,
        resource_version=meta.resourceVersion,
        driver=sel.driver,
        pool=sel.pool,
        device=sel.device,
        taint=Taint(t.key, t.value, t.effect),
    )


# -- ComputeDomain (resource.nvidia.com/v1beta1) ----------------------------------------------------


class ClaimTemplateRefS(WireStruct, frozen=True):
    name: str = ""


class ChannelS(WireStruct, frozen=True):
    resourceClaimTemplate: ClaimTemplateRefS = ClaimTemplateRefS()


class ComputeDomainSpecS(WireStruct, frozen=True):
    numNodes: int = 0
    channel: ChannelS | None = None


class ComputeDomainNodeS(WireStruct, frozen=True):
    name: str = ""
    cliqueID: str = ""
    index: int = 0
    status: str = ""


class ComputeDomainStatusS(WireStruct, frozen=True):
    status: str = ""
    nodes: list[ComputeDomainNodeS] | None = None


class ComputeDomainS(WireStruct, frozen=True):
    metadata: MetaS
    spec: ComputeDomainSpecS = ComputeDomainSpecS()
    status: ComputeDomainStatusS = ComputeDomainStatusS()


def compute_domain_from_wire(w: ComputeDomainS) -> ComputeDomain:
    meta = w.metadata
    if not meta.name or not meta.namespace:
        raise DecodeError("missing", field="metadata.name" if not meta.name else "metadata.namespace")
    channel = w.spec.channel
    return ComputeDomain(
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid,
        resource_version=meta.resourceVersion,
        num_nodes=max(w.spec.numNodes, 0),
        channel_template=(channel.resourceClaimTemplate.name or None) if channel is not None else None,
        status=w.status.status or "Unknown",
        nodes=tuple(ComputeDomainNode(n.name, n.cliqueID, n.index, n.status) for n in w.status.nodes or ()),
    )


#: decoder key → (its Struct, its projection), registered with the other kinds in hpctop.model.decode
DRA_DECODERS: dict[str, tuple[type[WireStruct], Callable[[Any, str], Any]]] = {
    RESOURCE_SLICE: (ResourceSliceS, lambda w, _: resource_slice_from_wire(w)),
    RESOURCE_CLAIM: (ResourceClaimS, lambda w, _: resource_claim_from_wire(w)),
    RESOURCE_CLAIM_TEMPLATE: (ResourceClaimTemplateS, lambda w, _: resource_claim_template_from_wire(w)),
    DEVICE_CLASS: (DeviceClassS, lambda w, _: device_class_from_wire(w)),
    DEVICE_TAINT_RULE: (DeviceTaintRuleS, lambda w, _: device_taint_rule_from_wire(w)),
    COMPUTE_DOMAIN: (ComputeDomainS, lambda w, _: compute_domain_from_wire(w)),
}
#: decoder key → the kind its objects carry in their ``key`` (for a relist)
DRA_KINDS: dict[str, str] = {key: key.split(".", 1)[0] for key in DRA_DECODERS}
