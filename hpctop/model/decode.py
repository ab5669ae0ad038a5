"""Raw Kubernetes JSON bytes → slim model objects, in one pass.

Every source (the simulator, a live API server, a recording) hands over watch events as the
bytes an API server sends: ``{"type": "ADDED", "object": {...}}``. The wire models below are
pydantic models of only the fields hpctop reads (``extra`` is ignored), validated straight from
bytes with ``model_validate_json``; they are then projected into the frozen objects of
:mod:`hpctop.model.objects`. Anything that does not validate, or that validates but makes no
sense (a pod without a name, a quantity that is garbage), raises :class:`DecodeError`, and the
store skips and counts it: an object is applied whole or not at all.

Pods and Nodes, the bulk of what a cluster sends, are first decoded by msgspec into the Structs
of :mod:`hpctop.model.structs` (strict types, unread fields skipped without being built); bytes
msgspec does not take fall back to the pydantic models here, which define what is accepted.
"""

from __future__ import annotations

import datetime as dt
import gc
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress
from operator import methodcaller
from typing import Any, NotRequired

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from hpctop.errors import HpctopError, QuantityError
from hpctop.model import structs
from hpctop.model.events import EventType, WatchEvent
from hpctop.model.objects import (
    Condition,
    GpuInventory,
    Node,
    OwnerRef,
    Pod,
    PriorityClass,
    ReplicaGroup,
    Taint,
    Toleration,
    Workload,
)
from hpctop.model.quantity import to_int, to_milli
from hpctop.model.resources import GPU_RESOURCE, MIG_PREFIX, ZERO, Resources

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
)

GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
ALIBABA_MODEL = "alibabacloud.com/gpu-card-model"
ALIBABA_MILLI = "alibabacloud.com/gpu-milli"
ALIBABA_COUNT = "alibabacloud.com/gpu-count"
ALIBABA_INDEX = "alibabacloud.com/gpu-index"
#: the model's kind for ``batch.volcano.sh`` Jobs (JobKey, ResourceSpec.kind, decoder key)
VOLCANO_JOB_KIND = "Job.batch.volcano.sh"


class DecodeError(HpctopError):
    """An object that cannot be understood; it is skipped and counted, never half-applied."""

    title = "undecodable object"


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class WireOwnerRef(_Wire):
    apiVersion: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool = False


class WireMeta(_Wire):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    resourceVersion: str = ""
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    ownerReferences: list[WireOwnerRef] | None = None
    creationTimestamp: str | None = None
    deletionTimestamp: str | None = None


class WireResources(_Wire):
    requests: dict[str, str | int | float] | None = None
    limits: dict[str, str | int | float] | None = None


class WireContainer(_Wire):
    name: str = ""
    resources: WireResources | None = None


class WireToleration(_Wire):
    key: str | None = None
    operator: str = "Equal"
    value: str | None = None
    effect: str | None = None


class WireGate(_Wire):
    name: str


class WirePodSpec(_Wire):
    nodeName: str | None = None
    schedulerName: str = "default-scheduler"
    containers: list[WireContainer] = Field(default_factory=list)
    initContainers: list[WireContainer] | None = None
    overhead: dict[str, str | int | float] | None = None
    nodeSelector: dict[str, str] | None = None
    tolerations: list[WireToleration] | None = None
    priority: int | None = None
    priorityClassName: str | None = None
    schedulingGates: list[WireGate] | None = None
    activeDeadlineSeconds: int | None = None


class WireCondition(_Wire):
    # Volcano's vcjob conditions carry status and lastTransitionTime but no type (batch/v1alpha1
    # JobCondition): a missing type must not drop the object (issue 11)
    type: str = ""
    status: str = "Unknown"
    reason: str | None = None
    message: str | None = None


class WireTerminated(_Wire):
    reason: str | None = None
    finishedAt: str | None = None


class WireContainerState(_Wire):
    terminated: WireTerminated | None = None


class WireContainerStatus(_Wire):
    restartCount: int = 0
    state: WireContainerState | None = None
    lastState: WireContainerState | None = None


class WirePodStatus(_Wire):
    phase: str = "Pending"
    reason: str | None = None
    startTime: str | None = None
    conditions: list[WireCondition] | None = None
    containerStatuses: list[WireContainerStatus] | None = None


class WirePod(_Wire):
    metadata: WireMeta
    spec: WirePodSpec = Field(default_factory=WirePodSpec)
    status: WirePodStatus = Field(default_factory=WirePodStatus)


class WireTaint(_Wire):
    key: str
    value: str = ""
    effect: str = "NoSchedule"


class WireNodeSpec(_Wire):
    unschedulable: bool = False
    taints: list[WireTaint] | None = None


class WireNodeStatus(_Wire):
    capacity: dict[str, str | int | float] | None = None
    allocatable: dict[str, str | int | float] | None = None
    conditions: list[WireCondition] | None = None


class WireNode(_Wire):
    metadata: WireMeta
    spec: WireNodeSpec = Field(default_factory=WireNodeSpec)
    status: WireNodeStatus = Field(default_factory=WireNodeStatus)


class WireTemplate(_Wire):
    metadata: WireMeta | None = None
    spec: WirePodSpec | None = None


class WireSchedulingPolicy(_Wire):
    minAvailable: int | None = None
    queue: str | None = None
    priorityClass: str | None = None


class WireRunPolicy(_Wire):
    suspend: bool | None = None
    schedulingPolicy: WireSchedulingPolicy | None = None


class WireReplicaSpec(_Wire):
    """A Kubeflow replica type (``Master``, ``Worker``, ``Launcher``, ...)."""

    replicas: int | None = None
    template: WireTemplate | None = None


class WireJobTemplateSpec(_Wire):
    parallelism: int | None = None
    completions: int | None = None
    template: WireTemplate | None = None


class WireJobTemplate(_Wire):
    spec: WireJobTemplateSpec | None = None


class WireReplicatedJob(_Wire):
    """A JobSet replicated job: ``replicas`` child Jobs of one template."""

    name: str = ""
    replicas: int | None = None
    template: WireJobTemplate | None = None


class WireLeaderWorkerTemplate(_Wire):
    size: int | None = None
    leaderTemplate: WireTemplate | None = None
    workerTemplate: WireTemplate | None = None


class WireVolcanoTask(_Wire):
    name: str = ""
    replicas: int | None = None
    minAvailable: int | None = None
    template: WireTemplate | None = None


class WireWorkloadSpec(_Wire):
    suspend: bool | None = None
    parallelism: int | None = None
    completions: int | None = None
    replicas: int | None = None
    activeDeadlineSeconds: int | None = None
    template: WireTemplate | None = None
    runPolicy: WireRunPolicy | None = None
    # Kubeflow training-operator (kubeflow.org/v1) and mpi-operator (v2beta1)
    pytorchReplicaSpecs: dict[str, WireReplicaSpec] | None = None
    tfReplicaSpecs: dict[str, WireReplicaSpec] | None = None
    mpiReplicaSpecs: dict[str, WireReplicaSpec] | None = None
    xgbReplicaSpecs: dict[str, WireReplicaSpec] | None = None
    paddleReplicaSpecs: dict[str, WireReplicaSpec] | None = None
    jaxReplicaSpecs: dict[str, WireReplicaSpec] | None = None
    # JobSet, LeaderWorkerSet, Volcano vcjob
    replicatedJobs: list[WireReplicatedJob] | None = None
    leaderWorkerTemplate: WireLeaderWorkerTemplate | None = None
    tasks: list[WireVolcanoTask] | None = None
    minAvailable: int | None = None
    queue: str | None = None


class WireVolcanoJobState(_Wire):
    phase: str | None = None
    reason: str | None = None
    message: str | None = None


class WireWorkloadStatus(_Wire):
    conditions: list[WireCondition] | None = None
    startTime: str | None = None
    completionTime: str | None = None
    succeeded: int | None = None
    failed: int | None = None
    state: WireVolcanoJobState | None = None


class WireWorkload(_Wire):
    apiVersion: str = ""
    kind: str = ""
    metadata: WireMeta
    spec: WireWorkloadSpec = Field(default_factory=WireWorkloadSpec)
    status: WireWorkloadStatus = Field(default_factory=WireWorkloadStatus)


class WirePriorityClass(_Wire):
    metadata: WireMeta
    value: int = 0
    globalDefault: bool = False


class _Envelope(_Wire):
    type: str


class PodEvent(_Envelope):
    object: WirePod


class NodeEvent(_Envelope):
    object: WireNode


class WorkloadEvent(_Envelope):
    object: WireWorkload


class PriorityClassEvent(_Envelope):
    object: WirePriorityClass


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


def _kept(annotations: dict[str, str] | None) -> dict[str, str]:
    if not annotations:
        return {}
    return {k: v for k, v in annotations.items() if k.startswith(KEPT_ANNOTATION_PREFIXES)}


def _controller(meta: WireMeta) -> OwnerRef | None:
    refs = meta.ownerReferences or []
    for ref in refs:
        if ref.controller:
            return OwnerRef(ref.apiVersion, ref.kind, ref.name, ref.uid)
    return None


def _condition(c: WireCondition) -> Condition:
    return Condition(c.type, c.status, c.reason or "", c.message or "")


def container_requests(spec: WirePodSpec, annotations: dict[str, str]) -> Resources:
    """Effective pod request: max(Σ containers, largest init container) + overhead.

    Extended resources (GPUs) given only as limits count as requests. A fractional GPU from the
    trace's annotations (``alibabacloud.com/gpu-milli`` × ``gpu-count``) replaces ``nvidia.com/gpu``.
    """

    def one(container: WireContainer) -> Resources:
        res = container.resources
        if res is None:
            return Resources()
        merged: dict[str, str | int | float] = {}
        for key, value in (res.limits or {}).items():
            if key not in ("cpu", "memory"):
                merged[key] = value
        merged.update(res.requests or {})
        return Resources.from_k8s(merged)

    total = Resources()
    for container in spec.containers:
        total = total + one(container)
    for init in spec.initContainers or []:
        r = one(init)
        total = Resources(
            max(total.cpu, r.cpu),
            max(total.memory, r.memory),
            max(total.gpu, r.gpu),
            total.extended,
        )
    if spec.overhead:
        total = total + Resources.from_k8s(spec.overhead)
    milli = annotations.get(ALIBABA_MILLI)
    if milli is not None:
        count = to_int(annotations.get(ALIBABA_COUNT, "1"))
        total = Resources(total.cpu, total.memory, to_int(milli) * count, total.extended)
    return total


def _gpu_models(annotations: dict[str, str], selector: dict[str, str] | None) -> tuple[str, ...]:
    spec = annotations.get(ALIBABA_MODEL)
    if spec:
        return tuple(sorted(m for m in spec.split("|") if m))
    if selector and GPU_PRODUCT_LABEL in selector:
        return (selector[GPU_PRODUCT_LABEL],)
    return ()


@lru_cache(maxsize=4096)
def _toleration(key: str | None, operator: str, value: str | None, effect: str | None) -> Toleration:
    return Toleration(key, operator, value, effect)


def _tolerations(items: list[WireToleration] | None) -> tuple[Toleration, ...]:
    # pods of one workload carry identical tolerations: share the objects instead of copying them
    return tuple(_toleration(t.key, t.operator, t.value, t.effect) for t in items or [])


def pod_from_wire(w: WirePod) -> Pod:
    meta, spec, status = w.metadata, w.spec, w.status
    if not meta.name or not meta.namespace:
        raise DecodeError("pod without metadata.name or metadata.namespace")
    annotations = _kept(meta.annotations)
    scheduled = None
    for cond in status.conditions or []:
        if cond.type == "PodScheduled":
            scheduled = _condition(cond)
    terminated_reason = None
    finished: float | None = None
    restarts = 0
    for cs in status.containerStatuses or []:
        restarts += cs.restartCount
        for state in (cs.state, cs.lastState):
            if state is not None and state.terminated is not None:
                terminated_reason = terminated_reason or state.terminated.reason
                end = parse_time(state.terminated.finishedAt)
                if end is not None:
                    finished = end if finished is None else max(finished, end)
    index = annotations.get(ALIBABA_INDEX)
    try:
        gpu_indices = tuple(int(i) for i in index.split("-")) if index else ()
    except ValueError as exc:
        raise DecodeError(f"pod {meta.namespace}/{meta.name}: bad {ALIBABA_INDEX} {index!r}") from exc
    return Pod(
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid,
        resource_version=meta.resourceVersion,
        labels=dict(meta.labels or {}),
        annotations=annotations,
        owner=_controller(meta),
        node_name=spec.nodeName or None,
        scheduler_name=spec.schedulerName,
        phase=status.phase,
        requests=container_requests(spec, annotations),
        gpu_indices=gpu_indices,
        gpu_models=_gpu_models(annotations, spec.nodeSelector),
        node_selector=tuple(sorted((spec.nodeSelector or {}).items())),
        tolerations=_tolerations(spec.tolerations),
        priority=spec.priority,
        priority_class=spec.priorityClassName,
        scheduling_gates=tuple(g.name for g in spec.schedulingGates or []),
        created=parse_time(meta.creationTimestamp) or 0.0,
        started=parse_time(status.startTime),
        finished=finished,
        deleted=parse_time(meta.deletionTimestamp),
        active_deadline_seconds=spec.activeDeadlineSeconds,
        scheduled=scheduled,
        status_reason=status.reason,
        terminated_reason=terminated_reason,
        restart_count=restarts,
    )


# -- the fast path for Pods ----------------------------------------------------------------------
#
# Why: pods are most of what a cluster sends (a relist of 100k pods, a watch stream of status
# updates), and the profile of ``decode_list`` (bench/README.md, P1) showed pydantic building
# the nested ``Wire*`` BaseModel instances at ~59 % of the time and the projection out of them
# (``pod_from_wire``) at ~46 % cumulative. Pods therefore go through TypedDicts instead: the same
# pydantic-core validators (so the same lax coercions, the same required fields, the same
# refusals) straight from the bytes, but producing plain dicts, which costs less than half of the
# model instances (measured: 1,000 GPU pods 98 ms → 42 ms with the GC on). ``orjson.loads`` plus
# hand-written type checks was the other candidate: it parses every field (env, volumes,
# container images) into Python objects only to drop them, and it would have to re-implement
# pydantic's coercions to refuse exactly what the wire models refuse. The projection below reads
# those dicts and shares what pods of one template repeat (owner references, conditions,
# requests, tolerations, kept annotations) through small bounded caches, which is also what keeps
# a stored pod under 3 KiB (P2). ``pod_from_wire`` stays the reference the tests compare it with.

_Quantity = str | int | float


class _OwnerTD(TypedDict, total=False):
    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: bool


class _MetaTD(TypedDict, total=False):
    name: str
    namespace: str
    uid: str
    resourceVersion: str
    labels: dict[str, str] | None
    annotations: dict[str, str] | None
    ownerReferences: list[_OwnerTD] | None
    creationTimestamp: str | None
    deletionTimestamp: str | None


class _ResourcesTD(TypedDict, total=False):
    requests: dict[str, _Quantity] | None
    limits: dict[str, _Quantity] | None


class _ContainerTD(TypedDict, total=False):
    name: str
    resources: _ResourcesTD | None


class _TolerationTD(TypedDict, total=False):
    key: str | None
    operator: str
    value: str | None
    effect: str | None


class _GateTD(TypedDict):
    name: str


class _PodSpecTD(TypedDict, total=False):
    nodeName: str | None
    schedulerName: str
    containers: list[_ContainerTD]
    initContainers: list[_ContainerTD] | None
    overhead: dict[str, _Quantity] | None
    nodeSelector: dict[str, str] | None
    tolerations: list[_TolerationTD] | None
    priority: int | None
    priorityClassName: str | None
    schedulingGates: list[_GateTD] | None
    activeDeadlineSeconds: int | None


class _ConditionTD(TypedDict):
    type: str
    status: NotRequired[str]
    reason: NotRequired[str | None]
    message: NotRequired[str | None]


class _TerminatedTD(TypedDict, total=False):
    reason: str | None
    finishedAt: str | None


class _ContainerStateTD(TypedDict, total=False):
    terminated: _TerminatedTD | None


class _ContainerStatusTD(TypedDict, total=False):
    restartCount: int
    state: _ContainerStateTD | None
    lastState: _ContainerStateTD | None


class _PodStatusTD(TypedDict, total=False):
    phase: str
    reason: str | None
    startTime: str | None
    conditions: list[_ConditionTD] | None
    containerStatuses: list[_ContainerStatusTD] | None


class _PodTD(TypedDict):
    metadata: _MetaTD
    spec: NotRequired[_PodSpecTD]
    status: NotRequired[_PodStatusTD]


class _PodEventTD(TypedDict):
    type: str
    object: _PodTD


# ``continue`` is a Python keyword: only the functional form can name it
_PodListMetaTD = TypedDict("_PodListMetaTD", {"resourceVersion": str, "continue": str | None}, total=False)


class _PodListTD(TypedDict, total=False):
    metadata: _PodListMetaTD
    items: list[_PodTD]


_POD_EVENT: TypeAdapter[_PodEventTD] = TypeAdapter(_PodEventTD)
_POD_LIST: TypeAdapter[_PodListTD] = TypeAdapter(_PodListTD)
_NO_SPEC: _PodSpecTD = {}
_NO_STATUS: _PodStatusTD = {}
_NOT_CPU_MEMORY = frozenset({"cpu", "memory"})
_IS_KEPT = methodcaller("startswith", KEPT_ANNOTATION_PREFIXES)
_ITEMS = methodcaller("items")


@lru_cache(maxsize=4096)
def _owner_ref(api_version: str, kind: str, name: str, uid: str) -> OwnerRef:
    # the pods of one job name the same controller: one shared object instead of one per pod
    return OwnerRef(api_version, kind, name, uid)


@lru_cache(maxsize=1024)
def _shared_condition(type_: str, status: str, reason: str, message: str) -> Condition:
    return Condition(type_, status, reason, message)


@lru_cache(maxsize=1024)
def _shared_kept(items: tuple[tuple[str, str], ...]) -> dict[str, str]:
    # Pods of one template carry the same kept annotations: they share one dict (never mutated:
    # Pod is frozen and nothing writes into its maps). Only the kept ones are the key, so the
    # cache holds a handful of small tuples, not every pod's annotations.
    return dict(items)


def _kept_shared(annotations: dict[str, str] | None) -> dict[str, str]:
    if not annotations:
        return {}
    # the filter runs in C (compress over a map of str.startswith): no Python loop per annotation
    kept = tuple(compress(annotations.items(), map(_IS_KEPT, annotations)))
    return _shared_kept(kept) if kept else {}


@lru_cache(maxsize=4096)
def _container_request(
    limits: tuple[tuple[str, _Quantity], ...], requests: tuple[tuple[str, _Quantity], ...]
) -> Resources:
    merged: dict[str, _Quantity] = {k: v for k, v in limits if k not in _NOT_CPU_MEMORY}
    merged.update(requests)
    return Resources.from_k8s(merged)


def _one_request(container: _ContainerTD) -> Resources:
    """One container's request (extended resources given only as limits count); cached by its maps."""
    res = container.get("resources")
    if res is None:
        return ZERO
    limits = res.get("limits")
    requests = res.get("requests")
    return _container_request(
        tuple(limits.items()) if limits else (), tuple(requests.items()) if requests else ()
    )


def _requests_from_dict(spec: _PodSpecTD, annotations: dict[str, str]) -> Resources:
    """:func:`container_requests` over the TypedDict spec (the same rules, the same result)."""
    containers = spec.get("containers") or ()
    inits = spec.get("initContainers")
    overhead = spec.get("overhead")
    milli = annotations.get(ALIBABA_MILLI)
    if len(containers) == 1 and not inits and not overhead and milli is None:
        return _one_request(containers[0])  # the common pod: a shared, cached vector
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
        count = to_int(annotations.get(ALIBABA_COUNT, "1"))
        total = Resources(total.cpu, total.memory, to_int(milli) * count, total.extended)
    return total


@lru_cache(maxsize=1024)
def _shared_selector(items: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(items))


@lru_cache(maxsize=1024)
def _shared_models(card_models: str | None, product: str | None) -> tuple[str, ...]:
    if card_models:
        return tuple(sorted(m for m in card_models.split("|") if m))
    return (product,) if product is not None else ()


@lru_cache(maxsize=1024)
def _shared_tolerations(items: tuple[tuple[tuple[str, Any], ...], ...]) -> tuple[Toleration, ...]:
    # keyed by each toleration's validated items (built in C); the same list in another key order
    # is another entry that builds equal objects
    out = []
    for pairs in items:
        t = dict(pairs)
        out.append(Toleration(t.get("key"), t.get("operator", "Equal"), t.get("value"), t.get("effect")))
    return tuple(out)


def pod_from_dict(d: _PodTD) -> Pod:
    """Project a validated pod (TypedDict form) into a :class:`Pod`; same result as :func:`pod_from_wire`."""
    meta = d["metadata"]
    name = meta.get("name", "")
    namespace = meta.get("namespace", "")
    if not name or not namespace:
        raise DecodeError("pod without metadata.name or metadata.namespace")
    spec = d.get("spec", _NO_SPEC)
    status = d.get("status", _NO_STATUS)
    annotations = _kept_shared(meta.get("annotations"))
    scheduled = None
    for cond in status.get("conditions") or ():
        if cond["type"] == "PodScheduled":
            scheduled = _shared_condition(
                "PodScheduled",
                cond.get("status", "Unknown"),
                cond.get("reason") or "",
                cond.get("message") or "",
            )
    terminated_reason = None
    finished: float | None = None
    restarts = 0
    for cs in status.get("containerStatuses") or ():
        restarts += cs.get("restartCount", 0)
        for state in (cs.get("state"), cs.get("lastState")):
            if state is not None:
                terminated = state.get("terminated")
                if terminated is not None:
                    terminated_reason = terminated_reason or terminated.get("reason")
                    end = parse_time(terminated.get("finishedAt"))
                    if end is not None:
                        finished = end if finished is None else max(finished, end)
    index = annotations.get(ALIBABA_INDEX)
    try:
        gpu_indices = tuple(int(i) for i in index.split("-")) if index else ()
    except ValueError as exc:
        raise DecodeError(f"pod {namespace}/{name}: bad {ALIBABA_INDEX} {index!r}") from exc
    owner = None
    for ref in meta.get("ownerReferences") or ():
        if ref.get("controller", False):
            owner = _owner_ref(
                ref.get("apiVersion", ""), ref.get("kind", ""), ref.get("name", ""), ref.get("uid", "")
            )
            break
    selector = spec.get("nodeSelector")
    tolerations = spec.get("tolerations")
    gates = spec.get("schedulingGates")
    labels = meta.get("labels")
    return Pod(
        namespace=namespace,
        name=name,
        uid=meta.get("uid", ""),
        resource_version=meta.get("resourceVersion", ""),
        labels=labels if labels is not None else {},  # a fresh dict from the validator: not copied
        annotations=annotations,
        owner=owner,
        node_name=spec.get("nodeName") or None,
        scheduler_name=spec.get("schedulerName", "default-scheduler"),
        phase=status.get("phase", "Pending"),
        requests=_requests_from_dict(spec, annotations),
        gpu_indices=gpu_indices,
        gpu_models=_shared_models(
            annotations.get(ALIBABA_MODEL), selector.get(GPU_PRODUCT_LABEL) if selector else None
        ),
        node_selector=_shared_selector(tuple(selector.items())) if selector else (),
        tolerations=_shared_tolerations(tuple(map(tuple, map(_ITEMS, tolerations)))) if tolerations else (),
        priority=spec.get("priority"),
        priority_class=spec.get("priorityClassName"),
        scheduling_gates=tuple(g["name"] for g in gates) if gates else (),
        created=parse_time(meta.get("creationTimestamp")) or 0.0,
        started=parse_time(status.get("startTime")),
        finished=finished,
        deleted=parse_time(meta.get("deletionTimestamp")),
        active_deadline_seconds=spec.get("activeDeadlineSeconds"),
        scheduled=scheduled,
        status_reason=status.get("reason"),
        terminated_reason=terminated_reason,
        restart_count=restarts,
    )


# -- the msgspec path for Pods -------------------------------------------------------------------
#
# Why: even into TypedDicts, pydantic-core builds every field of a pod it validates, and parsing
# alone was over the P1/P3 budgets (bench/README.md). :mod:`hpctop.model.structs` decodes into
# msgspec Structs that declare only what is read (the rest is skipped in C), strictly, so what it
# accepts the pydantic path accepts with the same values; what it refuses goes to the pydantic
# path, which coerces or refuses it exactly as before. ``pod_from_struct`` is ``pod_from_dict``
# over attributes, with the same shared parts.


def _one_request_s(container: structs.ContainerS) -> Resources:
    res = container.resources
    if res is None:
        return ZERO
    limits = res.limits
    requests = res.requests
    return _container_request(
        tuple(limits.items()) if limits else (), tuple(requests.items()) if requests else ()
    )


def _requests_from_struct(spec: structs.PodSpecS, annotations: dict[str, str]) -> Resources:
    """:func:`container_requests` over the Struct spec (the same rules, the same result)."""
    containers = spec.containers
    inits = spec.initContainers
    overhead = spec.overhead
    milli = annotations.get(ALIBABA_MILLI)
    if len(containers) == 1 and not inits and not overhead and milli is None:
        return _one_request_s(containers[0])  # the common pod: a shared, cached vector
    total = ZERO
    for container in containers:
        total = total + _one_request_s(container)
    for init in inits or ():
        r = _one_request_s(init)
        total = Resources(
            max(total.cpu, r.cpu), max(total.memory, r.memory), max(total.gpu, r.gpu), total.extended
        )
    if overhead:
        total = total + Resources.from_k8s(overhead)
    if milli is not None:
        count = to_int(annotations.get(ALIBABA_COUNT, "1"))
        total = Resources(total.cpu, total.memory, to_int(milli) * count, total.extended)
    return total


@lru_cache(maxsize=4096)
def _kept_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(k for k in keys if k.startswith(KEPT_ANNOTATION_PREFIXES))


def _kept_by_keys(annotations: dict[str, str] | None) -> dict[str, str]:
    """:func:`_kept_shared` with the prefix filter cached by the annotation keys (pods of one
    template carry the same keys, and msgspec hands short keys over as shared strings)."""
    if not annotations:
        return {}
    keys = _kept_keys(tuple(annotations))
    return _shared_kept(tuple([(k, annotations[k]) for k in keys])) if keys else {}


#: label keys and values seen, each kept once (see _shared_labels); cleared when it grows past
#: the bound, which costs sharing for a while, never correctness
_STRINGS: dict[str, str] = {}
_STRINGS_BOUND = 1 << 17


def _shared_labels(labels: dict[str, str]) -> dict[str, str]:
    """``labels`` with each key and value replaced by the one equal string already held.

    Why: pydantic-core hands repeated short strings over as one shared object (its string cache);
    msgspec builds a fresh string for each label of each pod, which took a stored pod from
    ~2.0 to ~2.9 KiB (P2's budget is 3). Pods of one job repeat most labels (job name,
    controller uid, queue, app), and every pod repeats the keys.
    """
    if len(_STRINGS) > _STRINGS_BOUND:
        _STRINGS.clear()
    share = _STRINGS.setdefault
    values = labels.values()
    # map/zip instead of a comprehension: the loop runs in C (~20 % less, the hashing remains)
    return dict(zip(map(share, labels, labels), map(share, values, values), strict=True))


#: controller references by uid (see _owner_by_uid)
_OWNERS: dict[str, OwnerRef] = {}


def _owner_by_uid(api_version: str, kind: str, name: str, uid: str) -> OwnerRef:
    """The shared :class:`OwnerRef` of a controller, found by its uid alone.

    Why: an lru_cache over the four strings hashes all four fresh strings of every pod; a dict by
    uid hashes one, and the caller checks the other three on the hit (a reference whose name
    or kind differs under the same uid gets its own object, and replaces the shared one).
    """
    if len(_OWNERS) > 65536:
        _OWNERS.clear()
    ref = _OWNERS[uid] = _owner_ref(api_version, kind, name, uid)
    return ref


@lru_cache(maxsize=1024)
def _struct_tolerations(items: tuple[structs.TolerationS, ...]) -> tuple[Toleration, ...]:
    # frozen Structs hash in C: pods of one template share one tuple of shared tolerations
    return tuple(_toleration(t.key, t.operator, t.value, t.effect) for t in items)


def pod_from_struct(w: structs.PodS) -> Pod:
    """Project a msgspec-decoded pod into a :class:`Pod`; same result as :func:`pod_from_wire`."""
    meta = w.metadata
    name = meta.name
    namespace = meta.namespace
    if not name or not namespace:
        raise DecodeError("pod without metadata.name or metadata.namespace")
    spec = w.spec
    status = w.status
    annotations = _kept_by_keys(meta.annotations)
    scheduled = None
    for cond in status.conditions or ():
        if cond.type == "PodScheduled":
            scheduled = _shared_condition("PodScheduled", cond.status, cond.reason or "", cond.message or "")
    terminated_reason = None
    finished: float | None = None
    restarts = 0
    for cs in status.containerStatuses or ():
        restarts += cs.restartCount
        for state in (cs.state, cs.lastState):
            if state is not None:
                terminated = state.terminated
                if terminated is not None:
                    terminated_reason = terminated_reason or terminated.reason
                    end = parse_time(terminated.finishedAt)
                    if end is not None:
                        finished = end if finished is None else max(finished, end)
    index = annotations.get(ALIBABA_INDEX)
    try:
        gpu_indices = tuple(int(i) for i in index.split("-")) if index else ()
    except ValueError as exc:
        raise DecodeError(f"pod {namespace}/{name}: bad {ALIBABA_INDEX} {index!r}") from exc
    owner = None
    for ref in meta.ownerReferences or ():
        if ref.controller:
            owner = _OWNERS.get(ref.uid)
            if (
                owner is None
                or owner.name != ref.name
                or owner.kind != ref.kind
                or owner.api_version != ref.apiVersion
            ):
                owner = _owner_by_uid(ref.apiVersion, ref.kind, ref.name, ref.uid)
            break
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
        _shared_labels(labels) if labels else {},
        annotations,
        owner,
        spec.nodeName or None,
        spec.schedulerName,
        status.phase,
        _requests_from_struct(spec, annotations),
        gpu_indices,
        _shared_models(annotations.get(ALIBABA_MODEL), selector.get(GPU_PRODUCT_LABEL) if selector else None),
        _shared_selector(tuple(selector.items())) if selector else (),
        _struct_tolerations(tuple(tolerations)) if tolerations else (),
        spec.priority,
        spec.priorityClassName,
        tuple(g.name for g in gates) if gates else (),
        parse_time(meta.creationTimestamp) or 0.0,
        parse_time(status.startTime),
        finished,
        parse_time(meta.deletionTimestamp),
        spec.activeDeadlineSeconds,
        scheduled,
        status.reason,
        terminated_reason,
        restarts,
    )


def _gpu_inventory(labels: dict[str, str], allocatable: dict[str, str | int | float]) -> GpuInventory:
    replicas = to_int(labels.get("nvidia.com/gpu.replicas", "1")) or 1
    advertised = to_int(allocatable.get(GPU_RESOURCE, 0))
    if not advertised and ALIBABA_COUNT in allocatable:
        advertised = to_int(allocatable[ALIBABA_COUNT])
    mig = tuple(
        sorted((k[len(MIG_PREFIX) :], to_int(v)) for k, v in allocatable.items() if k.startswith(MIG_PREFIX))
    )
    sharing = labels.get("nvidia.com/gpu.sharing-strategy", "none")
    if sharing == "none" and labels.get("hpctop.io/gpu-sharing") == "milli":
        sharing = "milli"
    memory = labels.get("nvidia.com/gpu.memory")
    count = advertised // replicas if replicas > 1 else advertised
    if not count and mig:
        count = to_int(labels.get("nvidia.com/gpu.count", "0"))
    return GpuInventory(
        product=labels.get(GPU_PRODUCT_LABEL) or labels.get(ALIBABA_MODEL),
        count=count,
        memory_mib=to_int(memory) if memory else None,
        mig_strategy=labels.get("nvidia.com/mig.strategy", "none"),
        mig_devices=mig,
        sharing=sharing,
        replicas=replicas,
        clique=labels.get("nvidia.com/gpu.clique"),
    )


def node_from_wire(w: WireNode | structs.NodeS) -> Node:
    """Project a node, decoded by pydantic (``WireNode``) or msgspec (``NodeS``: the same fields)."""
    meta = w.metadata
    if not meta.name:
        raise DecodeError("node without metadata.name")
    labels = _shared_labels(meta.labels) if meta.labels else {}  # a copy, its strings shared
    allocatable_raw = dict(w.status.allocatable or {})
    capacity_raw = dict(w.status.capacity or allocatable_raw)
    gpu = _gpu_inventory(labels, allocatable_raw)

    def resources(raw: dict[str, str | int | float]) -> Resources:
        r = Resources.from_k8s(raw)
        if not r.gpu and ALIBABA_COUNT in raw:
            r = Resources(r.cpu, r.memory, to_int(raw[ALIBABA_COUNT]) * 1000, r.extended)
        return Resources(r.cpu, r.memory, r.gpu, tuple(kv for kv in r.extended if kv[0] != ALIBABA_COUNT))

    ready = False
    for cond in w.status.conditions or []:
        if cond.type == "Ready":
            ready = cond.status == "True"
    return Node(
        name=meta.name,
        uid=meta.uid,
        resource_version=meta.resourceVersion,
        labels=labels,
        taints=tuple(Taint(t.key, t.value, t.effect) for t in w.spec.taints or []),
        unschedulable=w.spec.unschedulable,
        ready=ready,
        capacity=resources(capacity_raw),
        allocatable=resources(allocatable_raw),
        gpu=gpu,
        created=parse_time(meta.creationTimestamp) or 0.0,
    )


def _template_requests(template: WireTemplate | None) -> Resources:
    if template is None or template.spec is None:
        return Resources()
    return container_requests(
        template.spec, _kept(template.metadata.annotations if template.metadata else None)
    )


def _replica_groups(spec: WireWorkloadSpec) -> list[tuple[ReplicaGroup, WireTemplate | None]]:
    """Member roles of multi-role owners, each with its template (empty for one-template kinds)."""
    out: list[tuple[ReplicaGroup, WireTemplate | None]] = []
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
            replicas = 1 if rs.replicas is None else rs.replicas
            out.append((ReplicaGroup(name, replicas, _template_requests(rs.template)), rs.template))
    elif spec.replicatedJobs:
        for rj in spec.replicatedJobs:
            jspec = (rj.template.spec if rj.template else None) or WireJobTemplateSpec()
            per_job = jspec.parallelism if jspec.parallelism is not None else 1
            replicas = (1 if rj.replicas is None else rj.replicas) * per_job
            out.append((ReplicaGroup(rj.name, replicas, _template_requests(jspec.template)), jspec.template))
    elif spec.leaderWorkerTemplate is not None:
        lwt = spec.leaderWorkerTemplate
        size = lwt.size or 1
        groups = 1 if spec.replicas is None else spec.replicas
        worker = lwt.workerTemplate or spec.template
        leader = lwt.leaderTemplate or worker
        out.append((ReplicaGroup("leader", groups, _template_requests(leader)), leader))
        if size > 1:
            out.append((ReplicaGroup("worker", groups * (size - 1), _template_requests(worker)), worker))
    elif spec.tasks:
        for task in spec.tasks:
            replicas = 1 if task.replicas is None else task.replicas
            group = ReplicaGroup(task.name, replicas, _template_requests(task.template), task.minAvailable)
            out.append((group, task.template))
    return out


def workload_from_wire(w: WireWorkload, kind: str | None = None) -> Workload:
    """Project an owner object; ``kind`` overrides the wire kind (``Job.batch.volcano.sh``)."""
    meta, spec, status = w.metadata, w.spec, w.status
    kind = kind or w.kind
    if not meta.name or not meta.namespace or not kind:
        raise DecodeError("workload without kind, metadata.name or metadata.namespace")
    groups = _replica_groups(spec)
    template = spec.template or WireTemplate()
    if groups:
        # the most numerous role (the workers) stands for every member: Job rows have one shape
        template = max(groups, key=lambda g: g[0].replicas)[1] or template
    tmeta = template.metadata or WireMeta()
    tspec = template.spec or WirePodSpec()
    tannotations = _kept(tmeta.annotations)
    policy = spec.runPolicy.schedulingPolicy if spec.runPolicy else None
    suspend = bool(spec.suspend) or bool(spec.runPolicy and spec.runPolicy.suspend)
    parallelism = spec.parallelism if spec.parallelism is not None else spec.replicas
    if groups:
        parallelism = sum(g.replicas for g, _ in groups)
    min_available = (policy.minAvailable if policy else None) or spec.minAvailable
    if spec.leaderWorkerTemplate is not None:
        min_available = spec.leaderWorkerTemplate.size or 1  # one leader-worker group is the gang
    return Workload(
        api_version=w.apiVersion,
        kind=kind,
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid,
        resource_version=meta.resourceVersion,
        labels=dict(meta.labels or {}),
        annotations=_kept(meta.annotations),
        suspend=suspend,
        parallelism=1 if parallelism is None else parallelism,
        completions=spec.completions,
        template_requests=container_requests(tspec, tannotations),
        template_annotations=tannotations,
        template_labels=dict(tmeta.labels or {}),
        template_node_selector=tuple(sorted((tspec.nodeSelector or {}).items())),
        priority_class=tspec.priorityClassName or (policy.priorityClass if policy else None),
        active_deadline_seconds=spec.activeDeadlineSeconds or tspec.activeDeadlineSeconds,
        conditions=tuple(_condition(c) for c in status.conditions or []),
        created=parse_time(meta.creationTimestamp) or 0.0,
        start_time=parse_time(status.startTime),
        completion_time=parse_time(status.completionTime),
        succeeded=status.succeeded or 0,
        failed=status.failed or 0,
        owner=_controller(meta),
        groups=tuple(g for g, _ in groups),
        min_available=min_available,
        queue=(policy.queue if policy else None) or spec.queue,
        phase=status.state.phase if status.state is not None else None,
    )


def priority_class_from_wire(w: WirePriorityClass) -> PriorityClass:
    if not w.metadata.name:
        raise DecodeError("PriorityClass without metadata.name")
    return PriorityClass(w.metadata.name, w.value, w.globalDefault)


#: resource kind → (envelope model, projection)
_DECODERS: dict[str, tuple[type[_Envelope], Any]] = {
    "Pod": (PodEvent, pod_from_wire),
    "Node": (NodeEvent, node_from_wire),
    "Job": (WorkloadEvent, workload_from_wire),
    "Deployment": (WorkloadEvent, workload_from_wire),
    "StatefulSet": (WorkloadEvent, workload_from_wire),
    "JobSet": (WorkloadEvent, workload_from_wire),
    "PyTorchJob": (WorkloadEvent, workload_from_wire),
    "TFJob": (WorkloadEvent, workload_from_wire),
    "MPIJob": (WorkloadEvent, workload_from_wire),
    "XGBoostJob": (WorkloadEvent, workload_from_wire),
    "PaddleJob": (WorkloadEvent, workload_from_wire),
    "JAXJob": (WorkloadEvent, workload_from_wire),
    "LeaderWorkerSet": (WorkloadEvent, workload_from_wire),
    "TrainJob": (WorkloadEvent, workload_from_wire),
    # batch.volcano.sh Job: same kind as batch/v1 Job, so the model names it with its group
    VOLCANO_JOB_KIND: (WorkloadEvent, lambda w: workload_from_wire(w, VOLCANO_JOB_KIND)),
    "PriorityClass": (PriorityClassEvent, priority_class_from_wire),
}


def _decoder(kind: str) -> tuple[type[_Envelope], Any] | None:
    """The decoder of ``kind``: core kinds here, scheduler CRDs (``Kind.group``) in backends.wire."""
    found = _DECODERS.get(kind)
    if found is None and "." in kind:
        from hpctop.model.backends.wire import BACKEND_DECODERS

        found = BACKEND_DECODERS.get(kind)
    return found


_BOOKMARK = b'"BOOKMARK"'


class _BookmarkMeta(_Wire):
    resourceVersion: str = ""


class _BookmarkObject(_Wire):
    metadata: _BookmarkMeta = Field(default_factory=_BookmarkMeta)


class _BookmarkEvent(_Envelope):
    object: _BookmarkObject = Field(default_factory=_BookmarkObject)


class _ListMeta(_Wire):
    resourceVersion: str = ""
    # "continue" is a Python keyword: read it through an alias
    continue_: str | None = Field(default=None, alias="continue")


class PodList(_Wire):
    metadata: _ListMeta = Field(default_factory=_ListMeta)
    items: list[WirePod] = Field(default_factory=list)


class NodeList(_Wire):
    metadata: _ListMeta = Field(default_factory=_ListMeta)
    items: list[WireNode] = Field(default_factory=list)


class WorkloadList(_Wire):
    metadata: _ListMeta = Field(default_factory=_ListMeta)
    items: list[WireWorkload] = Field(default_factory=list)


class PriorityClassList(_Wire):
    metadata: _ListMeta = Field(default_factory=_ListMeta)
    items: list[WirePriorityClass] = Field(default_factory=list)


_LISTS: dict[str, type[_Wire]] = {
    "Pod": PodList,
    "Node": NodeList,
    "PriorityClass": PriorityClassList,
}


@dataclass(frozen=True, slots=True)
class DecodedList:
    """One page of a list response: the objects that decoded, the count that did not, the cursor."""

    objects: list[Any]
    resource_version: str
    continue_token: str | None
    skipped: list[str]


def decode_list(kind: str, raw: bytes) -> DecodedList:
    """Decode a list response page (``PodList``, ``NodeList``, ...) in one validation pass.

    The page is validated whole for speed; if that fails (one malformed item), items are decoded
    one by one so that only the bad ones are skipped.
    """
    decoder = _decoder(kind)
    if decoder is None:
        raise DecodeError(f"no decoder for kind {kind!r}")
    if kind not in _DECODERS:
        return _decode_list_item_by_item(kind, raw)  # scheduler CRDs: lists are small
    if kind == "Pod":
        return _decode_pod_list(raw)
    if kind == "Node":
        try:
            nodes = structs.NODE_LIST.decode(raw)
        except structs.NotTaken:
            pass  # one item (or the page) is not strictly typed: the pydantic path decides
        else:
            return _project_page(kind, nodes.items, node_from_wire, nodes.metadata)
    list_model = _LISTS.get(kind, WorkloadList)
    project = decoder[1]
    try:
        page = list_model.model_validate_json(raw)
    except ValidationError:
        return _decode_list_item_by_item(kind, raw)
    objects: list[Any] = []
    skipped: list[str] = []
    for item in page.items:  # type: ignore[attr-defined]
        try:
            objects.append(project(item))
        except (DecodeError, QuantityError, ValueError) as exc:
            skipped.append(f"{kind}: {exc}")
    meta = page.metadata  # type: ignore[attr-defined]
    return DecodedList(objects, meta.resourceVersion, meta.continue_ or None, skipped)


def _decode_pod_list(raw: bytes) -> DecodedList:
    """A ``PodList`` page through the TypedDict fast path, with the cyclic GC paused.

    Why the pause: a page holds thousands of pods alive at once, and each gen-0 collection they
    trigger re-traverses the young ones; on a realistic heap the GC more than doubled bulk decode
    (bench/README.md, ``profile_misses gc``). Nothing built here is cyclic, so reference counting
    frees the validated dicts; the collector resumes (if it was on) before returning.
    """
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        try:
            fast = structs.POD_LIST.decode(raw)
        except structs.NotTaken:
            pass  # one item (or the page) is not strictly typed: the pydantic path decides
        else:
            return _project_page("Pod", fast.items, pod_from_struct, fast.metadata)
        try:
            page = _POD_LIST.validate_json(raw)
        except ValidationError:
            return _decode_list_item_by_item("Pod", raw)
        objects: list[Any] = []
        skipped: list[str] = []
        append = objects.append
        for item in page.get("items") or ():
            try:
                append(pod_from_dict(item))
            except (DecodeError, QuantityError, ValueError) as exc:
                skipped.append(f"Pod: {exc}")
        meta = page.get("metadata") or {}
        del page  # the validated dicts go while the collector is still paused
        return DecodedList(objects, meta.get("resourceVersion", ""), meta.get("continue") or None, skipped)
    finally:
        if paused:
            gc.enable()


def _project_page(
    kind: str, items: list[Any], project: Callable[[Any], Any], meta: structs.ListMetaS
) -> DecodedList:
    """A msgspec-decoded page projected item by item; an item that makes no sense is skipped."""
    objects: list[Any] = []
    skipped: list[str] = []
    append = objects.append
    for item in items:
        try:
            append(project(item))
        except (DecodeError, QuantityError, ValueError) as exc:
            skipped.append(f"{kind}: {exc}")
    return DecodedList(objects, meta.resourceVersion, meta.continue_ or None, skipped)


def _decode_list_item_by_item(kind: str, raw: bytes) -> DecodedList:
    import orjson

    try:
        doc = orjson.loads(raw)
        items = doc.get("items") or []
        meta = doc.get("metadata") or {}
    except (orjson.JSONDecodeError, AttributeError) as exc:
        raise DecodeError(f"{kind} list: not a list response: {exc}") from None
    objects: list[Any] = []
    skipped: list[str] = []
    for item in items:
        try:
            objects.append(decode_object(kind, orjson.dumps(item)))
        except DecodeError as exc:
            skipped.append(exc.detail)
    return DecodedList(objects, str(meta.get("resourceVersion", "")), meta.get("continue") or None, skipped)


def supported_kinds() -> tuple[str, ...]:
    from hpctop.model.backends.wire import BACKEND_DECODERS

    return (*_DECODERS, *BACKEND_DECODERS)


#: EventType by its wire name: a dict lookup costs a tenth of ``EventType(name)``
_EVENT_TYPES: dict[str, EventType] = {t.value: t for t in EventType}


def _event(etype: EventType, kind: str, obj: Any) -> WatchEvent:
    return WatchEvent(etype, kind, obj, getattr(obj, "resource_version", ""))


def decode_event(kind: str, raw: bytes) -> WatchEvent:
    """Decode one watch event of a resource ``kind`` from the bytes the server sent.

    Raises :class:`DecodeError` for anything that is not a whole, sensible object.
    """
    decoder = _DECODERS.get(kind) or _decoder(kind)
    if decoder is None:
        raise DecodeError(f"no decoder for kind {kind!r}")
    envelope, project = decoder
    try:
        if _BOOKMARK in raw[:64]:
            bookmark = _BookmarkEvent.model_validate_json(raw)
            if bookmark.type == "BOOKMARK":
                return WatchEvent(EventType.BOOKMARK, kind, None, bookmark.object.metadata.resourceVersion)
        if kind == "Node":
            try:
                node_event = structs.NODE_EVENT.decode(raw)
            except structs.NotTaken:
                pass  # not strictly typed: the pydantic model below coerces it or refuses it
            else:
                return _event(EventType(node_event.type), kind, node_from_wire(node_event.object))
        if kind == "Pod":
            try:
                fast = structs.POD_EVENT.decode(raw)
            except structs.NotTaken:  # not strictly typed: pydantic coerces it or refuses it
                pod_event = _POD_EVENT.validate_json(raw)
                etype = EventType(pod_event["type"])
                obj = pod_from_dict(pod_event["object"])
            else:
                etype = _EVENT_TYPES.get(fast.type) or EventType(fast.type)  # unknown: ValueError
                obj = pod_from_struct(fast.object)
        else:
            event = envelope.model_validate_json(raw)
            etype = EventType(event.type)
            obj = project(event.object)  # type: ignore[attr-defined]
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": str(exc)}
        where = ".".join(str(p) for p in first["loc"])
        raise DecodeError(f"{kind}: {where}: {first['msg']}") from None
    except (QuantityError, ValueError) as exc:
        raise DecodeError(f"{kind}: {exc}") from None
    return WatchEvent(etype, kind, obj, getattr(obj, "resource_version", ""))


def decode_object(kind: str, raw: bytes) -> Any:
    """Decode a bare object (an item of a list response) of ``kind``."""
    return decode_event(kind, b'{"type":"ADDED","object":' + raw + b"}").obj


__all__ = [
    "VOLCANO_JOB_KIND",
    "DecodeError",
    "DecodedList",
    "decode_event",
    "decode_list",
    "decode_object",
    "format_time",
    "node_from_wire",
    "parse_time",
    "pod_from_dict",
    "pod_from_wire",
    "supported_kinds",
    "to_milli",
]
