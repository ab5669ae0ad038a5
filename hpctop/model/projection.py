"""Decoded Structs → the frozen objects of :mod:`hpctop.model.objects` (Pods, Nodes, owners).

Why a module of its own: the wire schema (:mod:`hpctop.model.structs`) and the scheduler CRDs
(each backend's ``hpctop/backends/<name>/read.py`` or ``wire.py``) both project through these
helpers (metadata, conditions, pod-template requests), and :mod:`hpctop.model.decode` dispatches
to both; with the helpers here, nothing a backend's read side imports leads back to ``decode``.

A projection refuses what makes no sense even though it is well typed (a pod without a name, a
quantity that is garbage, negative or beyond any real node, a count out of range) by raising
:class:`DecodeError` naming the field; the decoder adds the kind and the object's name, and the
store skips, counts and notes it: an object is applied whole or not at all.

Pods are most of what a cluster sends, so their projection shares what pods of one template
repeat (owner references, conditions, requests, tolerations, kept annotations, label strings)
through small bounded caches: that is also what keeps a stored pod under 3 KiB (P2).

Why one module of this size: it is the one projection of the core kinds (issue 10 deleted the two
others), and the GPU inventory rules (GFD's MIG single/mixed strategies, time-slicing and MPS
replicas, the DRA and KAI share rewrites it serves) must agree with the pod request rules they are
read beside; the next split is the GPU inventory (``gpu_inventory`` and the MIG helpers) into a
sibling module once no one is editing both at once.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable
from functools import lru_cache
from operator import itemgetter

from hpctop.errors import HpctopError, QuantityError
from hpctop.model import fractions, structs
from hpctop.model.objects import (
    HOSTNAME_LABEL,
    Condition,
    GpuInventory,
    Node,
    OwnerRef,
    Pod,
    PodClaims,
    PriorityClass,
    ReplicaGroup,
    Taint,
    Toleration,
    Workload,
)
from hpctop.model.quantity import LIMITS, MAX_GPUS, bounded, to_int
from hpctop.model.resources import (
    GPU_RESOURCE,
    GPU_SHARED_RESOURCE,
    MIG_PREFIX,
    MIG_PROFILE,
    ZERO,
    Resources,
    mig_profile_share,
)

# Annotations hpctop reads; others are dropped at decode time to keep objects small.
KEPT_ANNOTATION_PREFIXES = (
    "yunikorn.apache.org/",
    "internal.yunikorn.apache.org/",
    "alibabacloud.com/",
    "scheduling.k8s.io/",
    "scheduling.volcano.sh/",
    "kueue.x-k8s.io/",
    "hpctop.io/",
    "sunk.coreweave.com/",
    "slurmjob.slinky.slurm.net/",
    "batch.kubernetes.io/",
    "leaderworkerset.sigs.k8s.io/",
    "jobset.sigs.k8s.io/",
    # KAI-Scheduler: fractional GPUs (hpctop.model.fractions) and the pod's PodGroup
    *fractions.ANNOTATION_KEYS,
    "pod-group-name",
)

GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
ALIBABA_MODEL = "alibabacloud.com/gpu-card-model"
ALIBABA_MILLI = "alibabacloud.com/gpu-milli"
ALIBABA_COUNT = "alibabacloud.com/gpu-count"
ALIBABA_INDEX = "alibabacloud.com/gpu-index"
#: the model's kind for ``batch.volcano.sh`` Jobs (JobKey, ResourceSpec.kind, decoder key)
VOLCANO_JOB_KIND = "Job.batch.volcano.sh"
#: the most members one role of an owner may state (a count beyond it is malformed, not a job)
MAX_REPLICAS = 1_000_000


class DecodeError(HpctopError):
    """An object that cannot be understood; it is skipped and counted, never half-applied.

    ``field`` names what is malformed; ``kind`` and ``identity`` (``namespace/name``) are filled
    in by the decoder, which knows them; ``problem`` is what is wrong with the field.
    """

    title = "undecodable object"

    def __init__(self, problem: str, *, field: str = "", kind: str = "", identity: str = "") -> None:
        self.problem = problem
        self.field = field
        self.kind = kind
        self.identity = identity
        where = f"{kind} {identity}".strip()
        super().__init__(": ".join(p for p in (where, field, problem) if p))

    def located(self, kind: str, identity: str) -> DecodeError:
        """The same error with the object's kind and ``namespace/name`` filled in."""
        return DecodeError(self.problem, field=self.field, kind=kind, identity=identity or self.identity)


@lru_cache(maxsize=65536)
def parse_time(text: str | None) -> float | None:
    """RFC 3339 timestamp → Unix seconds (``None`` stays ``None``)."""
    if not text:
        return None
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError as exc:
        raise DecodeError(f"bad timestamp {text!r}") from exc


def format_time(seconds: float) -> str:
    """Unix seconds → RFC 3339 with a ``Z`` suffix, as the API server writes it."""
    return dt.datetime.fromtimestamp(seconds, tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _time(text: str | None, field: str) -> float | None:
    try:
        return parse_time(text)
    except DecodeError as exc:
        raise DecodeError(exc.problem, field=field) from None


def count(value: int | None, field: str, default: int) -> int:
    """A member count as stated, ``default`` when absent; refused when negative or absurd."""
    if value is None:
        return default
    if 0 <= value <= MAX_REPLICAS:
        return value
    raise DecodeError(f"{value} is out of range (0 to {MAX_REPLICAS:,})", field=field)


# -- shared parts -------------------------------------------------------------------------------------


#: annotation keys of a pod (their order) → (the kept ones, a getter of their values)
_KEPT_KEYS: dict[tuple[str, ...], tuple[tuple[str, ...], Callable[[dict[str, str]], tuple[str, ...]]]] = {}
#: (kept keys, their values) → the one dict pods with those kept annotations share
_KEPT: dict[tuple[tuple[str, ...], tuple[str, ...]], dict[str, str]] = {}
_KEPT_BOUND = 4096


def _kept_getter(keys: tuple[str, ...]) -> Callable[[dict[str, str]], tuple[str, ...]]:
    if len(keys) == 1:  # itemgetter of one key returns the value, not a 1-tuple
        (only,) = keys
        return lambda annotations: (annotations[only],)
    return itemgetter(*keys)


def kept_annotations(annotations: dict[str, str] | None) -> dict[str, str]:
    """The annotations hpctop reads, one shared dict per distinct content.

    Why this shape (P1): pods of one template carry the same annotation keys (msgspec hands short
    keys over as shared strings, and a tuple of keys hashes their cached hashes), so the prefix
    filter and an ``itemgetter`` of the kept keys are found by the keys once; the kept values
    are then read in C and the (keys, values) pair finds the shared dict, which pods of one
    template share (never mutated: the objects are frozen and nothing writes into their maps).
    Both caches are cleared when they pass their bound, which costs sharing, never correctness.
    """
    if not annotations:
        return {}
    names = tuple(annotations)
    found = _KEPT_KEYS.get(names)
    if found is None:
        if len(_KEPT_KEYS) > _KEPT_BOUND:
            _KEPT_KEYS.clear()
        keys = tuple(k for k in names if k.startswith(KEPT_ANNOTATION_PREFIXES))
        found = _KEPT_KEYS[names] = (keys, _kept_getter(keys) if keys else _no_values)
    keys, values_of = found
    if not keys:
        return {}
    key = (keys, values_of(annotations))
    shared = _KEPT.get(key)
    if shared is None:
        if len(_KEPT) > _KEPT_BOUND:
            _KEPT.clear()
        shared = _KEPT[key] = dict(zip(*key, strict=True))
    return shared


def _no_values(annotations: dict[str, str]) -> tuple[str, ...]:
    return ()


#: label values seen, each kept once (see shared_labels); cleared when it grows past the bound,
#: which costs sharing for a while, never correctness
_STRINGS: dict[str, str] = {}
_STRINGS_BOUND = 1 << 17
#: the label keys of a pod (their order) → the same keys as the strings held once
_LABEL_KEYS: dict[tuple[str, ...], tuple[str, ...]] = {}
#: label keys seen, each kept once: a small table apart from the values' (see shared_labels)
_KEY_STRINGS: dict[str, str] = {}
_KEYS_BOUND = 4096


def shared_labels(labels: dict[str, str] | None) -> dict[str, str]:
    """A copy of ``labels`` with each key and value replaced by the one equal string already held.

    Why: msgspec builds a fresh string for each label of each pod, which took a stored pod from
    ~2.0 to ~2.9 KiB (P2's budget is 3). Pods of one job repeat most labels (job name,
    controller uid, queue, app), and every pod repeats the keys. The keys are found as one tuple
    (their hashes are already cached: msgspec hashed them into the dict) in a table of key
    tuples, not one by one in the values' table, whose size (every distinct value) makes each
    lookup a cache miss (P1: -11 to -14 % of this function on fresh pods).
    """
    if not labels:
        return {}
    names = tuple(labels)
    keys = _LABEL_KEYS.get(names)
    if keys is None:
        if len(_LABEL_KEYS) > _KEYS_BOUND:
            _LABEL_KEYS.clear()
            _KEY_STRINGS.clear()
        held = _KEY_STRINGS.setdefault
        keys = _LABEL_KEYS[names] = tuple(map(held, names, names))
    if len(_STRINGS) > _STRINGS_BOUND:
        _STRINGS.clear()
    share = _STRINGS.setdefault
    values = labels.values()
    # map/zip instead of a comprehension: the loop runs in C (~20 % less, the hashing remains)
    return dict(zip(keys, map(share, values, values), strict=True))


@lru_cache(maxsize=4096)
def _owner_ref(api_version: str, kind: str, name: str, uid: str) -> OwnerRef:
    return OwnerRef(api_version, kind, name, uid)


#: controller references by uid (see controller_of)
_OWNERS: dict[str, OwnerRef] = {}


def controller_of(meta: structs.MetaS) -> OwnerRef | None:
    """The controller owner reference, one shared :class:`OwnerRef` per controller.

    Why by uid: an lru_cache over the four strings hashes all four fresh strings of every pod; a
    dict by uid hashes one, and the other three are checked on the hit (a reference whose name
    or kind differs under the same uid gets its own object, and replaces the shared one).
    """
    for ref in meta.ownerReferences or ():
        if ref.controller:
            owner = _OWNERS.get(ref.uid)
            if (
                owner is None
                or owner.name != ref.name
                or owner.kind != ref.kind
                or owner.api_version != ref.apiVersion
            ):
                if len(_OWNERS) > 65536:
                    _OWNERS.clear()
                owner = _OWNERS[ref.uid] = _owner_ref(ref.apiVersion, ref.kind, ref.name, ref.uid)
            return owner
    return None


@lru_cache(maxsize=1024)
def _shared_condition(type_: str, status: str, reason: str, message: str) -> Condition:
    return Condition(type_, status, reason, message)


def condition(c: structs.ConditionS) -> Condition:
    return _shared_condition(c.type, c.status, c.reason or "", c.message or "")


def conditions(items: list[structs.ConditionS] | None) -> tuple[Condition, ...]:
    return tuple(condition(c) for c in items or ())


@lru_cache(maxsize=4096)
def _container_request(
    limits: tuple[tuple[str, structs.Quantity], ...], requests: tuple[tuple[str, structs.Quantity], ...]
) -> Resources:
    merged: dict[str, structs.Quantity] = {k: v for k, v in limits if k != "cpu" and k != "memory"}
    merged.update(requests)
    return Resources.from_k8s(merged)


def _one_request(container: structs.ContainerS) -> Resources:
    """One container's request (extended resources given only as limits count); cached by its maps."""
    res = container.resources
    if res is None:
        return ZERO
    limits = res.limits
    requests = res.requests
    return _container_request(
        tuple(limits.items()) if limits else (), tuple(requests.items()) if requests else ()
    )


def container_requests(spec: structs.PodSpecS, annotations: dict[str, str]) -> Resources:
    """Effective pod request: max(Σ containers, largest init container) + overhead.

    Extended resources (GPUs) given only as limits count as requests. A fractional GPU from the
    trace's annotations (``alibabacloud.com/gpu-milli`` × ``gpu-count``) replaces ``nvidia.com/gpu``.
    Every amount is bounded (:mod:`hpctop.model.quantity`); a bad one raises :class:`DecodeError`.
    """
    try:
        return _requests(spec, annotations)
    except QuantityError as exc:
        raise DecodeError(exc.detail, field="spec.containers[].resources") from None


def _requests(spec: structs.PodSpecS, annotations: dict[str, str]) -> Resources:
    containers = spec.containers
    inits = spec.initContainers
    overhead = spec.overhead
    if (
        len(containers) == 1
        and not inits
        and not overhead
        and ALIBABA_MILLI not in annotations
        and fractions.KAI_FRACTION not in annotations
        and fractions.KAI_GPU_MEMORY_ANNOTATION not in annotations
    ):
        return _one_request(containers[0])  # the common pod: a shared, cached vector
    milli = annotations.get(ALIBABA_MILLI)
    share = fractions.annotated_gpu_milli(annotations)
    shared_memory = fractions.annotated_gpu_memory(annotations)
    total = ZERO
    for container in containers:
        total = total + _one_request(container)
    for init in inits or ():
        r = _one_request(init)
        total = Resources(
            max(total.cpu, r.cpu), max(total.memory, r.memory), max(total.gpu, r.gpu), total.extended
        )
    if overhead:
        total = total + Resources.from_k8s(overhead)
    if milli is not None:
        gpus = to_int(annotations.get(ALIBABA_COUNT, "1"))
        bounded(ALIBABA_COUNT, gpus, LIMITS["gpu"])
        total = Resources(
            total.cpu,
            total.memory,
            bounded(ALIBABA_MILLI, to_int(milli) * gpus, LIMITS["gpu"]),
            total.extended,
        )
    if share is not None:
        # a KAI fractional pod asks no nvidia.com/gpu (KAI refuses both): its share is its GPUs
        total = Resources(total.cpu, total.memory, share, total.extended)
    elif shared_memory is not None:
        extended = tuple(sorted((*total.extended, (fractions.KAI_GPU_MEMORY, shared_memory))))
        total = Resources(total.cpu, total.memory, total.gpu, extended)
    if total.gpu > LIMITS["gpu"][0]:
        bounded(GPU_RESOURCE, total.gpu, LIMITS["gpu"])
    return total


@lru_cache(maxsize=1024)
def _shared_selector(items: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(items))


def node_selector(selector: dict[str, str] | None) -> tuple[tuple[str, str], ...]:
    return _shared_selector(tuple(selector.items())) if selector else ()


@lru_cache(maxsize=1024)
def _shared_models(card_models: str | None, product: str | None) -> tuple[str, ...]:
    if card_models:
        return tuple(sorted(m for m in card_models.split("|") if m))
    return (product,) if product is not None else ()


@lru_cache(maxsize=4096)
def _toleration(key: str | None, operator: str, value: str | None, effect: str | None) -> Toleration:
    return Toleration(key, operator, value, effect)


@lru_cache(maxsize=1024)
def _tolerations(items: tuple[structs.TolerationS, ...]) -> tuple[Toleration, ...]:
    # frozen Structs hash in C: pods of one template share one tuple of shared tolerations
    return tuple(_toleration(t.key, t.operator, t.value, t.effect) for t in items)


def _gpu_indices(index: str | None) -> tuple[int, ...]:
    if not index:
        return ()
    try:
        indices = tuple(int(i) for i in index.split("-"))
    except ValueError:
        raise DecodeError(
            f"bad GPU index list {index!r}", field=f"metadata.annotations[{ALIBABA_INDEX}]"
        ) from None
    if len(indices) > MAX_GPUS or any(not 0 <= i < MAX_GPUS for i in indices):
        raise DecodeError(
            f"GPU index out of range in {index[:40]!r}", field=f"metadata.annotations[{ALIBABA_INDEX}]"
        )
    return indices


# -- Pod ------------------------------------------------------------------------------------------------


def _repels_itself(affinity: structs.AffinityS | None, labels: dict[str, str] | None) -> bool:
    """Whether a required anti-affinity on the hostname selects the pod's own labels (one per node).

    Only ``matchLabels`` selectors are read; a term that selects other pods, or that uses
    ``matchExpressions``, says nothing about the job's own members and is not counted.
    """
    anti = affinity.podAntiAffinity if affinity is not None else None
    terms = anti.requiredDuringSchedulingIgnoredDuringExecution if anti is not None else None
    if not terms or not labels:
        return False
    for term in terms:
        selector = term.labelSelector.matchLabels if term.labelSelector is not None else None
        if (
            term.topologyKey == HOSTNAME_LABEL
            and selector
            and all(labels.get(k) == v for k, v in selector.items())
        ):
            return True
    return False


def _shares_counted(requests: Resources, namespace: str, labels: dict[str, str] | None) -> Resources:
    """A KAI reservation pod's whole GPU is the one its group's shares split: counted once, by them."""
    if requests.gpu and labels and fractions.is_kai_reservation(namespace, labels):
        return Resources(requests.cpu, requests.memory, 0, requests.extended)
    return requests


def pod_status_parts(
    status: structs.PodStatusS,
) -> tuple[Condition | None, str | None, float | None, int]:
    """What a pod's status says beyond its phase: (PodScheduled condition, a terminated
    container's reason, the last container end, restarts). Shared with the watch path's
    :mod:`hpctop.model.pod_events`, which decodes only a held pod's status again."""
    scheduled = None
    for cond in status.conditions or ():
        if cond.type == "PodScheduled":
            scheduled = _shared_condition("PodScheduled", cond.status, cond.reason or "", cond.message or "")
    terminated_reason = None
    finished: float | None = None
    restarts = 0
    for cs in status.containerStatuses or ():
        restarts += cs.restartCount
        state = cs.state
        last = cs.lastState
        # a running container (nearly all) has neither state terminated: one test, no inner loop
        if (state is None or state.terminated is None) and (last is None or last.terminated is None):
            continue
        for either in (state, last):
            if either is not None:
                terminated = either.terminated
                if terminated is not None:
                    terminated_reason = terminated_reason or terminated.reason
                    end = _time(
                        terminated.finishedAt, "status.containerStatuses[].state.terminated.finishedAt"
                    )
                    if end is not None:
                        finished = end if finished is None else max(finished, end)
    return scheduled, terminated_reason, finished, restarts


def pod_from_struct(w: structs.PodS) -> Pod:
    """Project a decoded pod into a :class:`Pod`."""
    meta = w.metadata
    name = meta.name
    namespace = meta.namespace
    if not name or not namespace:
        raise DecodeError("missing", field="metadata.name" if not name else "metadata.namespace")
    spec = w.spec
    status = w.status
    annotations = kept_annotations(meta.annotations)
    scheduled, terminated_reason, finished, restarts = pod_status_parts(status)
    selector = spec.nodeSelector
    tolerations = spec.tolerations
    gates = spec.schedulingGates
    labels = meta.labels
    # positional, in field order: a 27-keyword call costs twice a positional one (P1)
    return Pod(
        namespace,
        name,
        meta.uid,
        meta.resourceVersion,
        shared_labels(labels) if labels else {},
        annotations,
        controller_of(meta) if meta.ownerReferences else None,
        spec.nodeName or None,
        spec.schedulerName,
        status.phase,
        _shares_counted(container_requests(spec, annotations), namespace, labels),
        _gpu_indices(annotations.get(ALIBABA_INDEX)),
        _shared_models(annotations.get(ALIBABA_MODEL), selector.get(GPU_PRODUCT_LABEL) if selector else None),
        _shared_selector(tuple(selector.items())) if selector else (),
        _tolerations(tuple(tolerations)) if tolerations else (),
        spec.priority,
        spec.priorityClassName,
        tuple(g.name for g in gates) if gates else (),
        _time(meta.creationTimestamp, "metadata.creationTimestamp") or 0.0,
        _time(status.startTime, "status.startTime"),
        finished,
        _time(meta.deletionTimestamp, "metadata.deletionTimestamp"),
        spec.activeDeadlineSeconds,
        scheduled,
        status.reason,
        terminated_reason,
        restarts,
        # a pause pod below every default priority is held capacity (pause images also make
        # test workloads: those keep priority >= 0 and stay jobs)
        spec.priority is not None and spec.priority < 0 and pause_only(spec),
        status.nominatedNodeName or None,
        _pod_claims(spec, status) if spec.resourceClaims or status.extendedResourceClaimStatus else None,
        spec.schedulingGroup.podGroupName or None if spec.schedulingGroup is not None else None,
        _repels_itself(spec.affinity, labels) if spec.affinity is not None else False,
    )


def _pod_claims(spec: structs.PodSpecS, status: structs.PodStatusS) -> PodClaims:
    """A pod's DRA claims: each by its own name, the generated claim's name once the status has it."""
    generated = {s.name: s.resourceClaimName for s in status.resourceClaimStatuses or ()}
    claims = tuple(
        (c.name, c.resourceClaimName or generated.get(c.name), c.resourceClaimTemplateName)
        for c in spec.resourceClaims or ()
    )
    extended = status.extendedResourceClaimStatus
    health = tuple(
        (r.resourceID, r.health)
        for cs in status.containerStatuses or ()
        for rs in cs.allocatedResourcesStatus or ()
        for r in rs.resources or ()
    )
    return PodClaims(claims, extended.resourceClaimName or None if extended else None, health)


# -- Node -----------------------------------------------------------------------------------------------


#: the pause container (``registry.k8s.io/pause:3.9``, ``k8s.gcr.io/pause``, ``.../pause-amd64:3.1``)
_PAUSE_IMAGE = re.compile(r"(?:^|/)pause(?:-[a-z0-9]+)?(?:[:@].*)?$")


def pause_only(spec: structs.PodSpecS) -> bool:
    """Whether every container of ``spec`` is the pause image: a pod that holds capacity and runs
    nothing, as Kubernetes' "Overprovision Node Capacity" task and cluster-autoscaler's
    overprovisioning FAQ build their placeholders (their images are ``registry.k8s.io/pause``)."""
    containers = spec.containers
    return bool(containers) and all(_PAUSE_IMAGE.search(c.image) for c in containers)


def _label_count(labels: dict[str, str], key: str, default: str) -> int:
    try:
        return bounded(key, to_int(labels.get(key, default)), LIMITS["gpu"])
    except QuantityError as exc:
        raise DecodeError(exc.detail, field=f"metadata.labels[{key}]") from None


def mig_devices_per_gpu(product: str | None) -> int:
    """MIG devices one GPU holds under the ``single`` strategy, from GFD's product label
    (``NVIDIA-A100-SXM4-80GB-MIG-1g.10gb``): the fewer of compute slices over the profile's and
    the GPU's memory over the profile's (an H100's ``1g.20gb`` is 4 of 7, memory-bound). 0: unknown.
    """
    if not product or "-MIG-" not in product:
        return 0
    model, profile = product.rsplit("-MIG-", 1)
    match = MIG_PROFILE.match(profile)
    if match is None:
        return 0
    by_compute = int(1 / mig_profile_share(profile))
    whole = _GPU_MEMORY_GB.search(model)
    if whole is None:
        return max(by_compute, 1)
    by_memory = int(int(whole.group(1)) / int(match.group(2)) + 0.1) if int(match.group(2)) else by_compute
    return max(min(by_compute, by_memory), 1)


_GPU_MEMORY_GB = re.compile(r"(\d+)GB")


def gpu_inventory(labels: dict[str, str], allocatable: dict[str, structs.Quantity]) -> GpuInventory:
    """A node's GPUs from GPU Feature Discovery's labels and the device plugin's allocatable counts.

    Public because the DRA backend describes a node's ResourceSlice GPUs in these same terms, so
    that they count exactly as device-plugin GPUs do (:mod:`hpctop.backends.dra.read`).
    """
    return _gpu_inventory(labels, allocatable)


def _gpu_inventory(labels: dict[str, str], allocatable: dict[str, structs.Quantity]) -> GpuInventory:
    """GPUs of a node from its allocatable and GPU Feature Discovery's labels.

    GFD (``internal/lm/mig-strategy.go``): ``gpu.count`` is the physical GPUs, except under the MIG
    ``single`` strategy, where it is overridden to the MIG devices (as ``nvidia.com/gpu`` is); the
    physical GPUs then follow from the profile in ``gpu.product``. Under ``mixed``, ``gpu.count``
    still counts every GPU, ``nvidia.com/gpu`` only those with MIG disabled, and each profile has
    its own ``nvidia.com/mig-<profile>`` resource.
    """
    replicas = _label_count(labels, "nvidia.com/gpu.replicas", "1") or 1
    gpu_limit = (MAX_GPUS * replicas, f"{MAX_GPUS} GPUs of {replicas} shares each")
    mig_strategy = labels.get("nvidia.com/mig.strategy", "none")
    if mig_strategy == "single":  # the advertised are slices: bound them as MIG devices
        gpu_limit = (MAX_GPUS * 7, f"{MAX_GPUS * 7} MIG devices")
    advertised = bounded(GPU_RESOURCE, to_int(allocatable.get(GPU_RESOURCE, 0)), gpu_limit)
    if not advertised and GPU_SHARED_RESOURCE in allocatable:
        # time-slicing/MPS with renameByDefault: the replicas are advertised as nvidia.com/gpu.shared
        advertised = bounded(GPU_SHARED_RESOURCE, to_int(allocatable[GPU_SHARED_RESOURCE]), gpu_limit)
    if not advertised and ALIBABA_COUNT in allocatable:
        advertised = bounded(ALIBABA_COUNT, to_int(allocatable[ALIBABA_COUNT]), LIMITS["gpu"])
    mig = tuple(
        sorted(
            (k[len(MIG_PREFIX) :], bounded(k, to_int(v), (MAX_GPUS * 7, f"{MAX_GPUS * 7} MIG devices")))
            for k, v in allocatable.items()
            if k.startswith(MIG_PREFIX)
        )
    )
    mig = tuple(kv for kv in mig if kv[1] > 0)
    sharing = labels.get("nvidia.com/gpu.sharing-strategy", "none")
    if sharing == "none" and labels.get("hpctop.io/gpu-sharing") == "milli":
        sharing = "milli"
    memory = labels.get("nvidia.com/gpu.memory")
    gpus = advertised // replicas if replicas > 1 else advertised
    product = labels.get(GPU_PRODUCT_LABEL) or labels.get(ALIBABA_MODEL)
    # read only where it matters, so an odd gpu.count label on a plain node drops nothing
    needs_count = replicas > 1 or mig_strategy == "single" or bool(mig)
    labelled = _label_count(labels, "nvidia.com/gpu.count", "0") if needs_count else 0
    shares = 0
    if advertised and mig_strategy == "single" and (per_gpu := mig_devices_per_gpu(product)):
        # gpu.count is the MIG devices (GFD overrides it); one given below them is a count of GPUs
        physical = labelled if 0 < labelled < advertised else -(-advertised // per_gpu)
        gpus, shares = physical, advertised if advertised != physical else 0
    elif advertised and replicas > 1:
        # time-slicing, MPS: gpu.count is the physical GPUs, each request takes one replica
        gpus = labelled or max(gpus, 1)
        shares = advertised if advertised != gpus else 0
    whole = (MAX_GPUS, f"{MAX_GPUS} GPUs")  # physical GPUs of one node (LIMITS are milli-GPU)
    bounded(GPU_RESOURCE, gpus, whole)
    if mig:
        # mixed: MIG-enabled GPUs are advertised per profile, not as nvidia.com/gpu
        sliced = math.ceil(sum(n * mig_profile_share(p) for p, n in mig))
        gpus = labelled if labelled > advertised else advertised + sliced
        bounded(GPU_RESOURCE, gpus, whole)
    return GpuInventory(
        product=product,
        count=gpus,
        memory_mib=to_int(memory) if memory else None,
        mig_strategy=mig_strategy,
        mig_devices=mig,
        sharing=sharing,
        replicas=replicas,
        clique=labels.get("nvidia.com/gpu.clique"),
        shares=shares,
    )


def _node_resources(raw: dict[str, structs.Quantity], gpu_limit: tuple[int, str]) -> Resources:
    r = Resources.from_k8s({k: v for k, v in raw.items() if k != GPU_RESOURCE})
    gpu = bounded(GPU_RESOURCE, to_int(raw[GPU_RESOURCE]) * 1000, gpu_limit) if GPU_RESOURCE in raw else 0
    if not gpu and ALIBABA_COUNT in raw:
        gpu = bounded(ALIBABA_COUNT, to_int(raw[ALIBABA_COUNT]) * 1000, LIMITS["gpu"])
    return Resources(r.cpu, r.memory, gpu, tuple(kv for kv in r.extended if kv[0] != ALIBABA_COUNT))


def node_from_struct(w: structs.NodeS) -> Node:
    """Project a decoded node; its GPU counts and amounts are bounded (a bad one: DecodeError)."""
    meta = w.metadata
    if not meta.name:
        raise DecodeError("missing", field="metadata.name")
    labels = shared_labels(meta.labels)
    allocatable_raw = dict(w.status.allocatable or {})
    capacity_raw = dict(w.status.capacity or allocatable_raw)
    field = "status.allocatable"
    try:
        gpu = _gpu_inventory(labels, allocatable_raw)
        # time-sliced GPUs advertise replicas × GPUs shares: the bound is on physical GPUs
        per_gpu = 7 if gpu.mig_strategy == "single" else gpu.replicas  # MIG slices, replicas
        gpu_limit = (MAX_GPUS * 1000 * per_gpu, f"{MAX_GPUS} GPUs of {per_gpu} shares each")
        allocatable = _node_resources(allocatable_raw, gpu_limit)
        field = "status.capacity"
        capacity = _node_resources(capacity_raw, gpu_limit)
    except QuantityError as exc:
        raise DecodeError(exc.detail, field=field) from None
    ready = False
    for cond in w.status.conditions or ():
        if cond.type == "Ready":
            ready = cond.status == "True"
    return Node(
        name=meta.name,
        uid=meta.uid,
        resource_version=meta.resourceVersion,
        labels=labels,
        taints=tuple(Taint(t.key, t.value, t.effect) for t in w.spec.taints or ()),
        unschedulable=w.spec.unschedulable,
        ready=ready,
        capacity=capacity,
        allocatable=allocatable,
        gpu=gpu,
        created=_time(meta.creationTimestamp, "metadata.creationTimestamp") or 0.0,
    )


# -- owner kinds ------------------------------------------------------------------------------------


def template_requests(template: structs.TemplateS | None, field: str = "spec.template") -> Resources:
    """What one member of a pod template asks for (zero for an absent template)."""
    if template is None or template.spec is None:
        return ZERO
    annotations = kept_annotations(template.metadata.annotations if template.metadata else None)
    try:
        return container_requests(template.spec, annotations)
    except DecodeError as exc:
        raise DecodeError(exc.problem, field=f"{field}.{exc.field}") from None


def _replica_groups(spec: structs.WorkloadSpecS) -> list[tuple[ReplicaGroup, structs.TemplateS | None]]:
    """Member roles of multi-role owners, each with its template (empty for one-template kinds)."""
    out: list[tuple[ReplicaGroup, structs.TemplateS | None]] = []
    kubeflow = (
        spec.pytorchReplicaSpecs
        or spec.tfReplicaSpecs
        or spec.mpiReplicaSpecs
        or spec.xgbReplicaSpecs
        or spec.paddleReplicaSpecs
        or spec.jaxReplicaSpecs
    )
    if kubeflow:
        for name, rs in kubeflow.items():
            where = f"spec.replicaSpecs[{name}]"
            replicas = count(rs.replicas, f"{where}.replicas", 1)
            out.append(
                (
                    ReplicaGroup(name, replicas, template_requests(rs.template, f"{where}.template")),
                    rs.template,
                )
            )
    elif spec.replicatedJobs:
        for i, rj in enumerate(spec.replicatedJobs):
            where = f"spec.replicatedJobs[{i}]"
            jspec = (rj.template.spec if rj.template else None) or structs.NO_JOB_TEMPLATE_SPEC
            per_job = count(jspec.parallelism, f"{where}.template.spec.parallelism", 1)
            replicas = count(count(rj.replicas, f"{where}.replicas", 1) * per_job, f"{where}.replicas", 1)
            requests = template_requests(jspec.template, f"{where}.template.spec.template")
            out.append((ReplicaGroup(rj.name, replicas, requests), jspec.template))
    elif spec.leaderWorkerTemplate is not None:
        lwt = spec.leaderWorkerTemplate
        size = count(lwt.size, "spec.leaderWorkerTemplate.size", 1) or 1
        groups = count(spec.replicas, "spec.replicas", 1)
        worker = lwt.workerTemplate or spec.template
        leader = lwt.leaderTemplate or worker
        out.append(
            (ReplicaGroup("leader", groups, template_requests(leader, "spec.leaderWorkerTemplate")), leader)
        )
        if size > 1:
            members = count(groups * (size - 1), "spec.replicas", 1)
            out.append(
                (
                    ReplicaGroup("worker", members, template_requests(worker, "spec.leaderWorkerTemplate")),
                    worker,
                )
            )
    elif spec.trainer is not None and spec.trainer.resourcesPerNode is not None:
        # a TrainJob's own per-node resources override its runtime's (trainer.kubeflow.org v1alpha1)
        nodes = count(spec.trainer.numNodes, "spec.trainer.numNodes", 1)
        try:
            per_node = _one_request(structs.ContainerS(resources=spec.trainer.resourcesPerNode))
        except QuantityError as exc:
            raise DecodeError(exc.detail, field="spec.trainer.resourcesPerNode") from None
        out.append((ReplicaGroup("node", nodes, per_node), None))
    elif spec.tasks:
        for i, task in enumerate(spec.tasks):
            where = f"spec.tasks[{i}]"
            replicas = count(task.replicas, f"{where}.replicas", 1)
            minimum = (
                None if task.minAvailable is None else count(task.minAvailable, f"{where}.minAvailable", 0)
            )
            group = ReplicaGroup(
                task.name, replicas, template_requests(task.template, f"{where}.template"), minimum
            )
            out.append((group, task.template))
    return out


_NO_TEMPLATE = structs.TemplateS()
_NO_META = structs.MetaS()


def workload_from_struct(w: structs.WorkloadS, kind: str | None = None, api_version: str = "") -> Workload:
    """Project an owner object; ``kind`` overrides the wire kind (``Job.batch.volcano.sh``), and
    ``api_version`` stands in for a list item's missing ``apiVersion``."""
    meta, spec, status = w.metadata, w.spec, w.status
    kind = kind or w.kind
    if not meta.name or not meta.namespace:
        raise DecodeError("missing", field="metadata.name" if not meta.name else "metadata.namespace")
    if not kind:
        raise DecodeError("missing", field="kind")
    groups = _replica_groups(spec)
    template = spec.template or _NO_TEMPLATE
    if groups:
        # the most numerous role (the workers) stands for every member: Job rows have one shape
        template = max(groups, key=lambda g: g[0].replicas)[1] or template
    tmeta = template.metadata or _NO_META
    tspec = template.spec or structs.NO_SPEC
    tannotations = kept_annotations(tmeta.annotations)
    policy = spec.runPolicy.schedulingPolicy if spec.runPolicy else None
    suspend = bool(spec.suspend) or bool(spec.runPolicy and spec.runPolicy.suspend)
    parallelism = count(
        spec.parallelism if spec.parallelism is not None else spec.replicas, "spec.parallelism", 1
    )
    if groups:
        parallelism = sum(g.replicas for g, _ in groups)
    min_available = (policy.minAvailable if policy else None) or spec.minAvailable
    if min_available is not None:
        min_available = count(min_available, "spec.minAvailable", 0)
    if spec.leaderWorkerTemplate is not None:
        min_available = count(spec.leaderWorkerTemplate.size, "spec.leaderWorkerTemplate.size", 1) or 1
    try:
        requests = container_requests(tspec, tannotations)
    except DecodeError as exc:
        raise DecodeError(exc.problem, field=f"spec.template.{exc.field}") from None
    return Workload(
        api_version=w.apiVersion or api_version,
        kind=kind,
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid,
        resource_version=meta.resourceVersion,
        labels=dict(meta.labels or {}),
        annotations=kept_annotations(meta.annotations),
        suspend=suspend,
        parallelism=parallelism,
        completions=None if spec.completions is None else count(spec.completions, "spec.completions", 1),
        template_requests=requests,
        template_annotations=tannotations,
        template_labels=dict(tmeta.labels or {}),
        template_node_selector=node_selector(tspec.nodeSelector),
        priority_class=tspec.priorityClassName or (policy.priorityClass if policy else None),
        active_deadline_seconds=spec.activeDeadlineSeconds or tspec.activeDeadlineSeconds,
        conditions=conditions(status.conditions),
        created=_time(meta.creationTimestamp, "metadata.creationTimestamp") or 0.0,
        start_time=_time(status.startTime, "status.startTime"),
        completion_time=_time(status.completionTime, "status.completionTime"),
        succeeded=status.succeeded or 0,
        failed=status.failed or 0,
        owner=controller_of(meta),
        groups=tuple(g for g, _ in groups),
        min_available=min_available,
        queue=(policy.queue if policy else None) or spec.queue,
        phase=status.state.phase if status.state is not None else None,
        capacity_reservation=pause_only(tspec),
        template_claims=tuple(
            c.resourceClaimTemplateName for c in tspec.resourceClaims or () if c.resourceClaimTemplateName
        ),
    )


def priority_class_from_struct(w: structs.PriorityClassS) -> PriorityClass:
    if not w.metadata.name:
        raise DecodeError("missing", field="metadata.name")
    return PriorityClass(w.metadata.name, w.value, w.globalDefault)


__all__ = [
    "KEPT_ANNOTATION_PREFIXES",
    "VOLCANO_JOB_KIND",
    "DecodeError",
    "condition",
    "conditions",
    "container_requests",
    "controller_of",
    "count",
    "format_time",
    "kept_annotations",
    "node_from_struct",
    "parse_time",
    "pod_from_struct",
    "pod_status_parts",
    "priority_class_from_struct",
    "template_requests",
    "workload_from_struct",
]
