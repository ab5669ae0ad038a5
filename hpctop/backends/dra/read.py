"""DRA's read side: what hpctop watches of ``resource.k8s.io`` and ComputeDomains, and how it counts them.

Why the descriptor is thin: DRA is not a scheduler with evidence about a job (no state, queue or
placement hooks); it is an inventory of devices and the record of who holds them, and hpctop
uses it to count GPUs on nodes and pods (:class:`DraIndex` below, which the store calls). The
descriptor tells the registry what to discover and decode: ``resource.k8s.io`` ``v1`` (GA in
1.34) before ``v1beta2`` (1.33, the same shape for what is read), DeviceTaintRule from ``v1``
(1.37) back to ``v1alpha3``, and ``resource.nvidia.com/v1beta1`` ComputeDomains.

The accounting (one module with the descriptor, as the backend-folder contract has it: read.py,
wire.py, act.py): DRA GPUs counted as device-plugin GPUs, slices become a node's inventory,
claims a pod's request.

Why this shape: every part of hpctop (the GPU pane, ``gpus``, ``nodes``, job rows, the
scheduling core) counts GPUs from ``Node.allocatable`` / ``Node.gpu`` and ``Pod.requests``. So the
DRA backend does not teach each of them about claims; it rewrites the two objects the way the
device plugin would have written them had it served the same GPUs:

- a node whose ResourceSlices (``resource.k8s.io/v1``, the current generation of each pool) list
  NVIDIA ``type: gpu`` (or ``vfio``) devices advertises that many more ``nvidia.com/gpu``; its
  ``type: mig`` devices are ``nvidia.com/mig-<profile>`` slices of their parent GPU, as under the
  device plugin's ``mixed`` MIG strategy; the physical GPU count is the distinct GPUs (a MIG
  slice's ``parentUUID``), so MIG never counts a GPU twice. The inventory is built by the same
  function that reads GPU Feature Discovery's labels (:func:`hpctop.model.projection.gpu_inventory`);
- a device that is tainted ``NoSchedule``/``NoExecute`` (its slice's ``taints`` or a
  ``DeviceTaintRule``, KEP-5055) is in the capacity but not the allocatable count, as the device
  plugin drops an unhealthy GPU from allocatable;
- a pod holding an allocated claim requests the devices of ``status.allocation.devices.results``
  (looked up in the slices: a GPU is 1000 milli-GPU, a MIG device one ``nvidia.com/mig-<profile>``,
  which every reader then counts as a device-plugin slice is counted: its share of one GPU,
  :func:`hpctop.model.resources.gpu_equivalent_milli`, a ``1g.5gb`` 1/7);
  a claim reserved for several pods splits its GPUs between them so the node's total stays exact;
  a claim not yet allocated (a pending pod) requests what its ``spec.devices.requests`` name
  (``count`` devices of a GPU or MIG class; ``allocationMode: All`` counts as one, the least it
  can mean);
- the claim the scheduler generates for a DRA-served extended resource (KEP-5004: the pod asks
  ``nvidia.com/gpu``, ``status.extendedResourceClaimStatus`` names the claim, which carries the
  annotation ``resource.kubernetes.io/extended-resource-claim``) is skipped: those GPUs are in
  the pod's container requests already.

The index keeps the objects as they came (raw nodes, raw pods with claims) and hands the store
the rewritten ones; which nodes and pods an object touches is returned by :meth:`DraIndex.apply`.
A cluster without DRA never builds one.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from hpctop.backends.contract import Backend, ResourceSpec
from hpctop.backends.dra.wire import (
    DRA_DECODERS,
    DRA_TYPES,
    NVIDIA_RESOURCE_GROUP,
    RESOURCE_GROUP,
    ComputeDomain,
    Device,
    DeviceClass,
    DeviceId,
    DeviceRequest,
    DeviceTaintRule,
    DraObject,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from hpctop.errors import QuantityError
from hpctop.model.objects import Job, JobKey, Node, Pod, PodKey, Reason, Workload
from hpctop.model.projection import DecodeError, gpu_inventory
from hpctop.model.resources import GPU_RESOURCE, MIG_PREFIX, Resources
from hpctop.model.states import ReasonCode

_G = RESOURCE_GROUP
COMPUTE_DOMAINS = ResourceSpec(
    "ComputeDomain.resource.nvidia.com", NVIDIA_RESOURCE_GROUP, "v1beta1", "computedomains", namespaced=True
)
#: each kind with the versions hpctop understands, preferred first
DRA_RESOURCES: tuple[tuple[ResourceSpec, ...], ...] = (
    *(
        tuple(ResourceSpec(f"{kind}.{_G}", _G, v, plural, namespaced) for v in versions)
        for kind, plural, namespaced, versions in (
            ("ResourceSlice", "resourceslices", False, ("v1", "v1beta2")),
            ("ResourceClaim", "resourceclaims", True, ("v1", "v1beta2")),
            ("ResourceClaimTemplate", "resourceclaimtemplates", True, ("v1", "v1beta2")),
            ("DeviceClass", "deviceclasses", False, ("v1", "v1beta2")),
            ("DeviceTaintRule", "devicetaintrules", False, ("v1", "v1beta2", "v1alpha3")),
        )
    ),
    (COMPUTE_DOMAINS,),
)

BACKEND = Backend(
    name="dra",
    title="Dynamic Resource Allocation (NVIDIA DRA driver)",
    upstream="https://github.com/kubernetes/api (resource/v1); https://github.com/kubernetes-sigs/dra-driver-nvidia-gpu",
    watches=DRA_RESOURCES,
    fixtures=("tests/fixtures/live_truth/90_dra.yaml",),
    # a NotReady ComputeDomain is a gang's Dependency (with_domain below)
    reasons=frozenset({ReasonCode.DEPENDENCY}),
    actions=None,
    read_only="Kubernetes does not preempt DRA resources; a claim is freed with its pod (cancel the job)",
    detects={_G: "dra", NVIDIA_RESOURCE_GROUP: "dra"},
    decoders=DRA_DECODERS,
)


#: device kinds (NVIDIA's ``type`` attribute) that are a whole physical GPU, and a MIG slice of one
WHOLE_GPU_KINDS = frozenset({"gpu", "vfio"})
MIG_KIND = "mig"
#: NVIDIA's built-in classes, for claims whose DeviceClass hpctop has not (yet) seen
_BUILTIN_CLASSES = {
    "gpu.nvidia.com": "gpu",
    "mig.nvidia.com": "mig",
    "vfio.gpu.nvidia.com": "vfio",
}
_BLOCKING_EFFECTS = frozenset({"NoSchedule", "NoExecute"})
_GPU_INDEX = re.compile(r"^gpu-(\d{1,4})$")


@dataclass(frozen=True, slots=True)
class NodeDevices:
    """What a node's slices say, for display: its GPU devices, the tainted ones, the unhealthy ones."""

    devices: tuple[tuple[DeviceId, Device], ...] = ()
    tainted: tuple[tuple[str, str], ...] = ()  # (device, "key=value:effect")
    unhealthy: tuple[tuple[str, str], ...] = ()  # (device, health reported in a pod's status)


@dataclass(frozen=True, slots=True)
class DraView:
    """The DRA part of a snapshot: per-node devices and health, and the ComputeDomains."""

    nodes: dict[str, NodeDevices] = field(default_factory=dict)
    domains: tuple[ComputeDomain, ...] = ()


class DraIndex:
    """The DRA objects of a cluster and the node and pod rewrites they imply.

    Every lookup an event needs is an index kept as objects come and go (devices by pool and by
    node, claims by the pod that owns them and by pool, pods by the claim and template they
    name), so an event costs what the objects it touches cost, not the cluster's size: the DRA
    demo's 1,523 nodes and thousands of claims showed why (a rescan per event took minutes).
    """

    def __init__(self) -> None:
        self.slices: dict[str, ResourceSlice] = {}
        self.claims: dict[tuple[str, str], ResourceClaim] = {}
        self.templates: dict[tuple[str, str], ResourceClaimTemplate] = {}
        self.classes: dict[str, DeviceClass] = {}
        self.taint_rules: dict[str, DeviceTaintRule] = {}
        self.domains: dict[tuple[str, str], ComputeDomain] = {}
        self.raw_nodes: dict[str, Node] = {}
        self.raw_pods: dict[PodKey, Pod] = {}
        self._pool_slices: dict[tuple[str, str], set[str]] = {}
        self._pool_devices: dict[tuple[str, str], set[DeviceId]] = {}
        self._devices: dict[DeviceId, Device] = {}
        self._device_node: dict[DeviceId, str] = {}
        self._node_devices: dict[str, dict[DeviceId, Device]] = {}
        self._claims_by_pod_claim: dict[tuple[str, str, str], tuple[str, str]] = {}
        self._claims_by_pool: dict[tuple[str, str], set[tuple[str, str]]] = {}
        self._allocated: dict[DeviceId, int] = {}
        self._pods_by_claim: dict[tuple[str, str], set[PodKey]] = {}
        self._pods_by_template: dict[tuple[str, str], set[PodKey]] = {}
        self._unwell_pods: set[PodKey] = set()
        #: node → why its slices' GPUs were not counted (shown with the store's notes)
        self.refused: dict[str, str] = {}
        #: owners (a suspended Job has no pods yet) whose pod template names claim templates
        self.raw_workloads: dict[JobKey, Workload] = {}
        self._view: DraView | None = None

    # -- applying --------------------------------------------------------------------------------

    def objects_of(self, kind: str) -> list[DraObject]:
        """Every object of a bare kind (``ResourceSlice``, ...), for a relist."""
        stores: dict[str, Iterable[DraObject]] = {
            "ResourceSlice": self.slices.values(),
            "ResourceClaim": self.claims.values(),
            "ResourceClaimTemplate": self.templates.values(),
            "DeviceClass": self.classes.values(),
            "DeviceTaintRule": self.taint_rules.values(),
            "ComputeDomain": self.domains.values(),
        }
        return list(stores.get(kind, ()))

    def workloads_of(self, template: ResourceClaimTemplate) -> list[JobKey]:
        """The owners whose pod template names ``template``."""
        return [
            k
            for k, w in self.raw_workloads.items()
            if w.namespace == template.namespace and template.name in w.template_claims
        ]

    def apply(self, obj: DraObject, deleted: bool) -> tuple[set[str], set[PodKey]]:
        """Record one object; the nodes and the pods whose rewrite it may change."""
        if isinstance(obj, ResourceSlice):
            return self._apply_slice(obj, deleted)
        if isinstance(obj, ResourceClaim):
            return self._apply_claim(obj, deleted)
        if isinstance(obj, ResourceClaimTemplate):
            tkey = (obj.namespace, obj.name)
            if deleted:
                self.templates.pop(tkey, None)
            else:
                self.templates[tkey] = obj
            return set(), set(self._pods_by_template.get(tkey, ()))
        if isinstance(obj, DeviceClass):
            if deleted:
                self.classes.pop(obj.name, None)
            else:
                self.classes[obj.name] = obj
            return set(), set(self.raw_pods)  # rare: a class changes what every claim asks
        self._view = None
        if isinstance(obj, DeviceTaintRule):
            if deleted:
                self.taint_rules.pop(obj.name, None)
            else:
                self.taint_rules[obj.name] = obj
            return set(self._node_devices), set()
        dkey = (obj.namespace, obj.name)
        old_domain = self.domains.get(dkey)
        if deleted:
            self.domains.pop(dkey, None)
        else:
            self.domains[dkey] = obj
        pods: set[PodKey] = set()
        for domain in (old_domain, obj):
            if domain is not None and domain.channel_template:
                pods |= self._pods_by_template.get((domain.namespace, domain.channel_template), set())
        return set(), pods

    def _apply_slice(self, obj: ResourceSlice, deleted: bool) -> tuple[set[str], set[PodKey]]:
        self._view = None
        pool = (obj.driver, obj.pool)
        old = self.slices.get(obj.name)
        if old is not None and (old.driver, old.pool) != pool:
            self._pool_slices.get((old.driver, old.pool), set()).discard(obj.name)
            self._reindex_pool((old.driver, old.pool))
        if deleted:
            self.slices.pop(obj.name, None)
            self._pool_slices.get(pool, set()).discard(obj.name)
        else:
            self.slices[obj.name] = obj
            self._pool_slices.setdefault(pool, set()).add(obj.name)
        nodes = self._reindex_pool(pool) | self._slice_nodes(old) | self._slice_nodes(obj)
        pods: set[PodKey] = set()
        for claim_key in self._claims_by_pool.get(pool, ()):
            pods |= self._pods_of_claim(self.claims[claim_key])
        return nodes, pods

    def _reindex_pool(self, pool: tuple[str, str]) -> set[str]:
        """Index the devices of the pool's current generation (older slices are being replaced).

        Returns the nodes whose devices changed.
        """
        touched: set[str] = set()
        for did in self._pool_devices.pop(pool, set()):
            self._devices.pop(did, None)
            node = self._device_node.pop(did, None)
            if node is not None:
                touched.add(node)
                on_node = self._node_devices.get(node)
                if on_node is not None:
                    on_node.pop(did, None)
                    if not on_node:
                        del self._node_devices[node]
        slices = [self.slices[n] for n in self._pool_slices.get(pool, ()) if n in self.slices]
        if not slices:
            self._pool_slices.pop(pool, None)
            return touched
        current = max(s.generation for s in slices)
        ids: set[DeviceId] = set()
        for s in slices:
            if s.generation != current:
                continue
            for d in s.devices:
                did = (s.driver, s.pool, d.name)
                ids.add(did)
                self._devices[did] = d
                node = d.node_name or s.node_name
                if node:
                    self._device_node[did] = node
                    touched.add(node)
                    if d.kind in WHOLE_GPU_KINDS or d.kind == MIG_KIND:
                        self._node_devices.setdefault(node, {})[did] = d
        self._pool_devices[pool] = ids
        return touched

    def _apply_claim(self, obj: ResourceClaim, deleted: bool) -> tuple[set[str], set[PodKey]]:
        key = (obj.namespace, obj.name)
        old = self.claims.get(key)
        if old is not None:
            self._unindex_claim(key, old)
        if deleted:
            self.claims.pop(key, None)
        else:
            self.claims[key] = obj
            if obj.owner_pod and obj.pod_claim_name:
                self._claims_by_pod_claim[(obj.namespace, obj.owner_pod, obj.pod_claim_name)] = key
            for a in obj.allocated:
                self._allocated[a.id] = self._allocated.get(a.id, 0) + 1
                self._claims_by_pool.setdefault((a.driver, a.pool), set()).add(key)
        pods = self._pods_of_claim(obj) | (self._pods_of_claim(old) if old is not None else set())
        return self._partitioned_nodes(obj, old), pods

    def _unindex_claim(self, key: tuple[str, str], claim: ResourceClaim) -> None:
        if claim.owner_pod and claim.pod_claim_name:
            where = (claim.namespace, claim.owner_pod, claim.pod_claim_name)
            if self._claims_by_pod_claim.get(where) == key:
                del self._claims_by_pod_claim[where]
        for a in claim.allocated:
            left = self._allocated.get(a.id, 0) - 1
            if left > 0:
                self._allocated[a.id] = left
            else:
                self._allocated.pop(a.id, None)
            in_pool = self._claims_by_pool.get((a.driver, a.pool))
            if in_pool is not None:
                in_pool.discard(key)

    def _partitioned_nodes(self, *claims: ResourceClaim | None) -> set[str]:
        """Nodes whose partitionable (dynamic MIG) inventory counts a device of these claims."""
        out: set[str] = set()
        for claim in claims:
            for a in claim.allocated if claim is not None else ():
                device = self._devices.get(a.id)
                node = self._device_node.get(a.id)
                if device is not None and device.consumes_counters and node:
                    out.add(node)
        return out

    def _slice_nodes(self, s: ResourceSlice | None) -> set[str]:
        if s is None:
            return set()
        out = {s.node_name} if s.node_name else set()
        out.update(d.node_name for d in s.devices if d.node_name)
        return out

    def _pods_of_claim(self, claim: ResourceClaim) -> set[PodKey]:
        ns = claim.namespace
        found = {(ns, name) for name in claim.pod_consumers()}
        if claim.owner_pod:
            found.add((ns, claim.owner_pod))
        found |= self._pods_by_claim.get((ns, claim.name), set())
        return {k for k in found if k in self.raw_pods}

    def _index_pod(self, pod: Pod, add: bool) -> None:
        claims = pod.claims
        if claims is None:
            return
        for index, names in (
            (self._pods_by_claim, claims.claim_names()),
            (self._pods_by_template, tuple(t for _, _, t in claims.claims if t)),
        ):
            for name in names:
                where = (pod.namespace, name)
                if add:
                    index.setdefault(where, set()).add(pod.key)
                else:
                    members = index.get(where)
                    if members is not None:
                        members.discard(pod.key)
                        if not members:
                            del index[where]

    def forget_pod(self, key: PodKey) -> None:
        old = self.raw_pods.pop(key, None)
        if old is not None:
            self._index_pod(old, add=False)
        if key in self._unwell_pods:
            self._unwell_pods.discard(key)
            self._view = None

    def forget_node(self, name: str) -> None:
        self.raw_nodes.pop(name, None)

    # -- nodes -----------------------------------------------------------------------------------

    def _taint_of(self, did: DeviceId, device: Device) -> str | None:
        for t in device.taints:
            if t.effect in _BLOCKING_EFFECTS:
                return f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"
        for rule in self.taint_rules.values():
            if rule.taint.effect in _BLOCKING_EFFECTS and rule.matches(*did):
                t = rule.taint
                return f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"
        return None

    def node_devices(self, name: str) -> list[tuple[DeviceId, Device]]:
        """The GPU and MIG devices the slices place on node ``name``."""
        return sorted(self._node_devices.get(name, {}).items())

    def node(self, raw: Node) -> Node:
        """Remember ``raw`` and return it with its DRA GPUs (itself when its slices list none)."""
        self.raw_nodes[raw.name] = raw
        devices = self.node_devices(raw.name)
        if not devices:
            return raw
        allocated = self._allocated
        physical: set[str] = set()
        whole = whole_free = 0
        mig: dict[str, int] = {}
        mig_free: dict[str, int] = {}
        product = None
        memory = None
        for did, d in devices:
            physical.add(d.physical_id)
            product = product or d.product
            blocked = self._taint_of(did, d) is not None
            if d.kind in WHOLE_GPU_KINDS:
                memory = memory or d.memory_mib
                whole += 1
                whole_free += 0 if blocked else 1
            elif d.profile and (not d.consumes_counters or did in allocated):
                # a partitionable MIG device (dynamic MIG) is a possible partition, not inventory,
                # until a claim holds it
                resource = f"{MIG_PREFIX}{d.profile}"
                mig[resource] = mig.get(resource, 0) + 1
                mig_free[resource] = mig_free.get(resource, 0) + (0 if blocked else 1)
        labels = dict(raw.labels)
        if product and "nvidia.com/gpu.product" not in labels:
            labels["nvidia.com/gpu.product"] = product.replace(" ", "-")  # GFD's spelling
        if memory and "nvidia.com/gpu.memory" not in labels:
            labels["nvidia.com/gpu.memory"] = str(memory)
        if mig:
            labels["nvidia.com/mig.strategy"] = "mixed"
            labels["nvidia.com/gpu.count"] = str(len(physical) + raw.gpu.count)
        advertised: dict[str, str | int | float] = {GPU_RESOURCE: raw.allocatable.gpu // 1000 + whole_free}
        for resource, n in mig_free.items():
            advertised[resource] = raw.allocatable.get(resource) + n
        # GFD's and the device plugin's terms, read by the one function that reads them for
        # device-plugin nodes: a MIG-partitioned GPU counts as the mixed strategy counts it
        try:
            inventory = gpu_inventory(labels, advertised)
        except (QuantityError, DecodeError) as exc:
            # beyond any real node (slices of many pools naming one node): not counted, and said
            self.refused[raw.name] = f"node {raw.name}: its ResourceSlices' GPUs not counted: {exc}"
            return raw
        self.refused.pop(raw.name, None)
        extra_capacity = Resources(0, 0, whole * 1000, tuple(sorted(mig.items())))
        extra_allocatable = Resources(0, 0, whole_free * 1000, tuple(sorted(mig_free.items())))
        return dataclasses.replace(
            raw,
            capacity=raw.capacity + extra_capacity,
            allocatable=raw.allocatable + extra_allocatable,
            gpu=inventory,
        )

    # -- pods ------------------------------------------------------------------------------------

    def _class_kind(self, name: str) -> tuple[str | None, str | None]:
        """(device kind, MIG profile) a class hands out, from the class or NVIDIA's built-in names."""
        found = self.classes.get(name)
        if found is not None and found.device_kind is not None:
            return found.device_kind, found.profile
        return _BUILTIN_CLASSES.get(name), None

    def _claim_of(self, pod: Pod, pod_claim: str, claim_name: str | None) -> ResourceClaim | None:
        if claim_name:
            return self.claims.get((pod.namespace, claim_name))
        key = self._claims_by_pod_claim.get((pod.namespace, pod.name, pod_claim))
        return self.claims.get(key) if key else None

    def _requested(self, requests: Iterable[DeviceRequest]) -> tuple[int, dict[str, int]]:
        gpu = 0
        mig: dict[str, int] = {}
        for r in requests:
            kind, profile = self._class_kind(r.device_class)
            profile = r.profile or profile
            n = r.count if r.count is not None else 1
            if kind in WHOLE_GPU_KINDS:
                gpu += n * 1000
            elif kind == MIG_KIND and profile:
                mig[f"{MIG_PREFIX}{profile}"] = mig.get(f"{MIG_PREFIX}{profile}", 0) + n
        return gpu, mig

    def _held(self, pod: Pod, claim: ResourceClaim) -> tuple[int, dict[str, int], list[int]]:
        """What ``pod`` holds of an allocated claim: its share of the GPUs, the MIG devices, GPU indices."""
        reserved = set(claim.pod_consumers())
        if reserved and pod.name not in reserved:
            # another pod holds it and this one is not reserved yet: its GPUs are counted once,
            # for the pods that hold them
            return 0, {}, []
        consumers = sorted(reserved | {pod.name})
        place = consumers.index(pod.name)
        whole = 0
        mig: dict[str, int] = {}
        indices: list[int] = []
        kinds: dict[str, tuple[str | None, str | None]] = {
            r.name: self._class_kind(r.device_class) for r in claim.requests
        }
        for a in claim.allocated:
            device = self._devices.get(a.id)
            kind: str | None
            profile: str | None
            if device is not None:
                kind, profile = device.kind, device.profile
            else:
                kind, profile = kinds.get(a.request, (None, None))
            if kind in WHOLE_GPU_KINDS:
                whole += 1
                m = _GPU_INDEX.match(a.device)
                if m:
                    indices.append(int(m.group(1)))
            elif kind == MIG_KIND and profile and place == 0:
                mig[f"{MIG_PREFIX}{profile}"] = mig.get(f"{MIG_PREFIX}{profile}", 0) + 1
        # split the GPUs between the pods the claim is reserved for; the first ones take the rest
        total = whole * 1000
        share = total // len(consumers) + (1 if place < total % len(consumers) else 0)
        return share, mig, indices

    def workload(self, raw: Workload) -> Workload:
        """An owner whose pod template names claim templates: its members' request with their GPUs."""
        gpu = 0
        mig: dict[str, int] = {}
        for name in raw.template_claims:
            template = self.templates.get((raw.namespace, name))
            if template is not None:
                g, m = self._requested(template.requests)
                gpu += g
                for k, v in m.items():
                    mig[k] = mig.get(k, 0) + v
        if not gpu and not mig:
            return raw
        extra = Resources(0, 0, gpu, tuple(sorted(mig.items())))
        return dataclasses.replace(raw, template_requests=raw.template_requests + extra)

    def pod(self, raw: Pod) -> Pod:
        """Remember ``raw`` (a pod with claims) and return it with its DRA devices in its request.

        A claim generated for a DRA-served extended resource is never among ``claims.claims``
        (the pod's spec names none; ``extended_claim`` names it), so it is not counted again.
        """
        old = self.raw_pods.get(raw.key)
        if old is not raw:
            if old is not None:
                self._index_pod(old, add=False)
            self._index_pod(raw, add=True)
            self.raw_pods[raw.key] = raw
        claims = raw.claims
        if claims is None:
            return raw
        unwell = any(h != "Healthy" for _, h in claims.health)
        if unwell or raw.key in self._unwell_pods:
            self._view = None
            if unwell:
                self._unwell_pods.add(raw.key)
            else:
                self._unwell_pods.discard(raw.key)
        gpu = 0
        mig: dict[str, int] = {}
        indices: list[int] = []
        extended = self.claims.get((raw.namespace, claims.extended_claim)) if claims.extended_claim else None
        if extended is not None:
            # the GPUs are in the container requests already (KEP-5004): only which ones is news
            indices.extend(self._held(raw, extended)[2])
        for pod_claim, claim_name, template in claims.claims:
            claim = self._claim_of(raw, pod_claim, claim_name)
            if claim is not None and claim.is_allocated:
                g, m, i = self._held(raw, claim)
                indices.extend(i)
            elif claim is not None:
                g, m = self._requested(claim.requests)
            elif template is not None and (raw.namespace, template) in self.templates:
                g, m = self._requested(self.templates[(raw.namespace, template)].requests)
            else:
                continue
            gpu += g
            for k, v in m.items():
                mig[k] = mig.get(k, 0) + v
        if not gpu and not mig and not indices:
            return raw
        extra = Resources(0, 0, gpu, tuple(sorted(mig.items())))
        return dataclasses.replace(
            raw,
            requests=raw.requests + extra,
            gpu_indices=raw.gpu_indices or tuple(sorted(indices)),
        )

    # -- reading ---------------------------------------------------------------------------------

    def view(self) -> DraView:
        """The per-node devices and health, and the ComputeDomains (rebuilt after a change)."""
        if self._view is not None:
            return self._view
        health: dict[str, list[tuple[str, str]]] = {}
        for key in self._unwell_pods:
            pod = self.raw_pods[key]
            for resource_id, state in pod.claims.health if pod.claims is not None else ():
                if state != "Healthy":
                    parts = resource_id.split("/")
                    if len(parts) == 3:
                        node = self._device_node.get((parts[0], parts[1], parts[2]))
                        if node:
                            health.setdefault(node, []).append((parts[2], state))
        nodes: dict[str, NodeDevices] = {}
        for name in sorted(set(self._node_devices) | set(health)):
            devices = self.node_devices(name)
            tainted = tuple((did[2], t) for did, d in devices if (t := self._taint_of(did, d)) is not None)
            nodes[name] = NodeDevices(tuple(devices), tainted, tuple(sorted(set(health.get(name, ())))))
        self._view = DraView(
            nodes=nodes,
            domains=tuple(self.domains[k] for k in sorted(self.domains)),
        )
        return self._view

    def domain_of(self, pod: Pod) -> ComputeDomain | None:
        """The ComputeDomain whose channel template one of ``pod``'s claims is made from."""
        if pod.claims is None or not self.domains:
            return None
        for _, _, template in pod.claims.claims:
            if template is None:
                continue
            for domain in self.domains.values():
                if domain.namespace == pod.namespace and domain.channel_template == template:
                    return domain
        return None


def with_domain(job: Job, pods: Iterable[Pod], index: DraIndex) -> Job:
    """A job whose pods use a ComputeDomain's channel: ``dra`` evidence, and a NotReady domain as a reason.

    NVIDIA's ComputeDomain (multi-node NVLink / IMEX) is ``Ready`` once the IMEX daemons of its
    ``numNodes`` nodes run; until then the pods that claim its channel wait (their containers do
    not start). A NotReady domain is the job's reason (``Dependency``, source ``dra``) when its
    scheduler gave none, and among its reasons always; a Ready one only marks the evidence.
    """
    domain = next((d for p in pods if (d := index.domain_of(p)) is not None), None)
    if domain is None:
        return job
    backends = job.backends if "dra" in job.backends else (*job.backends, "dra")
    if domain.ready or job.state.is_finished:
        return dataclasses.replace(job, backends=backends)
    nodes = f"{domain.ready_nodes}/{domain.num_nodes} nodes ready" if domain.num_nodes else "no nodes yet"
    reason = Reason(
        ReasonCode.DEPENDENCY,
        "dra",
        f"ComputeDomain {domain.name} {domain.status}: {nodes} (its IMEX channel is not ready)",
    )
    return dataclasses.replace(
        job,
        backends=backends,
        observed_reason=job.observed_reason or reason,
        reasons=(*(job.reasons or ((job.observed_reason,) if job.observed_reason else ())), reason),
    )


def gpu_health(view: DraView | None, node: str) -> list[str]:
    """A node's DRA GPU health for display: tainted devices (with the taint), devices a pod reports unwell."""
    found = view.nodes.get(node) if view is not None else None
    if found is None:
        return []
    return [f"{d} tainted {t}" for d, t in found.tainted] + [f"{d} {h}" for d, h in found.unhealthy]


__all__ = ["DRA_TYPES", "DraIndex", "DraView", "NodeDevices", "gpu_health", "with_domain"]
