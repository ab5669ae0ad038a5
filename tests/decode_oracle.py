"""The oracle of the decoder: the Pod and Node schema written again, in pydantic, with plain projections.

Why: hpctop decodes with msgspec Structs, a strict fast path and a field-by-field slow path
(:mod:`hpctop.model.tolerant`), and projects through cached, shared parts. This module states
the same contract independently, the way one would write it without caring for speed, and the
hypothesis tests (tests/model/test_decode_fast.py) check that both give the same object, or both
refuse it, on generated pods and nodes, malformed ones included:

- strict types (a str field takes a string, an int an integer, never a bool);
- a field hpctop does not need that has an odd value falls back to its default, an odd item of
  a list or entry of a map is dropped (:func:`tolerated`, :func:`lenient`);
- a malformed field it needs refuses the whole object (those fields are plain strict fields);
- quantities bounded as :mod:`hpctop.model.quantity` says.

These were the runtime's wire models before the decoder became msgspec only (issue 10).
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, WrapValidator

from hpctop.errors import QuantityError
from hpctop.model.objects import Condition, GpuInventory, Node, OwnerRef, Pod, Taint, Toleration
from hpctop.model.projection import KEPT_ANNOTATION_PREFIXES, DecodeError, mig_devices_per_gpu
from hpctop.model.quantity import LIMITS, MAX_GPUS, bounded, to_int
from hpctop.model.resources import GPU_RESOURCE, MIG_PREFIX, Resources, mig_profile_share

Quantity = str | int | float
_DROP = object()


def tolerated(tp: Any, default: Any) -> Any:
    """``tp``, or ``default`` when the value does not validate."""

    def validate(value: Any, handler: Any) -> Any:
        try:
            return handler(value)
        except ValidationError:
            return default

    return Annotated[tp, WrapValidator(validate)]


def lenient(container: Any, item: Any) -> Any:
    """A ``list[item]`` or ``dict[str, item]`` whose bad items are dropped; ``None`` if it is neither."""
    adapter: TypeAdapter[Any] = TypeAdapter(item)

    def one(value: Any) -> Any:
        try:
            return adapter.validate_python(value, strict=True)
        except ValidationError:
            return _DROP

    def validate(value: Any, handler: Any) -> Any:
        if container is list and isinstance(value, list):
            return [v for v in map(one, value) if v is not _DROP]
        if container is dict and isinstance(value, dict):
            return {k: v for k, v in ((k, one(x)) for k, x in value.items()) if v is not _DROP}
        return None

    return Annotated[Any, WrapValidator(validate)]


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)


class WireOwnerRef(_Wire):
    apiVersion: tolerated(str, "") = ""  # type: ignore[valid-type]
    kind: tolerated(str, "") = ""  # type: ignore[valid-type]
    name: tolerated(str, "") = ""  # type: ignore[valid-type]
    uid: tolerated(str, "") = ""  # type: ignore[valid-type]
    controller: tolerated(bool, False) = False  # type: ignore[valid-type]


class WireMeta(_Wire):
    name: str = ""
    namespace: str = ""
    uid: tolerated(str, "") = ""  # type: ignore[valid-type]
    resourceVersion: tolerated(str, "") = ""  # type: ignore[valid-type]
    labels: lenient(dict, str) = None  # type: ignore[valid-type]
    annotations: lenient(dict, str) = None  # type: ignore[valid-type]
    ownerReferences: lenient(list, WireOwnerRef) = None  # type: ignore[valid-type]
    creationTimestamp: str | None = None
    deletionTimestamp: str | None = None


class WireResources(_Wire):
    requests: dict[str, Quantity] | None = None
    limits: dict[str, Quantity] | None = None


class WireContainer(_Wire):
    name: tolerated(str, "") = ""  # type: ignore[valid-type]
    resources: WireResources | None = None


class WireToleration(_Wire):
    key: tolerated(str | None, None) = None  # type: ignore[valid-type]
    operator: tolerated(str, "Equal") = "Equal"  # type: ignore[valid-type]
    value: tolerated(str | None, None) = None  # type: ignore[valid-type]
    effect: tolerated(str | None, None) = None  # type: ignore[valid-type]


class WireGate(_Wire):
    name: str


class WirePodSpec(_Wire):
    nodeName: str | None = None
    schedulerName: tolerated(str, "default-scheduler") = "default-scheduler"  # type: ignore[valid-type]
    containers: list[WireContainer] = Field(default_factory=list)
    initContainers: list[WireContainer] | None = None
    overhead: dict[str, Quantity] | None = None
    nodeSelector: lenient(dict, str) = None  # type: ignore[valid-type]
    tolerations: lenient(list, WireToleration) = None  # type: ignore[valid-type]
    priority: int | None = None
    priorityClassName: tolerated(str | None, None) = None  # type: ignore[valid-type]
    schedulingGates: list[WireGate] | None = None
    activeDeadlineSeconds: tolerated(int | None, None) = None  # type: ignore[valid-type]


class WireCondition(_Wire):
    type: tolerated(str, "") = ""  # type: ignore[valid-type]
    status: tolerated(str, "Unknown") = "Unknown"  # type: ignore[valid-type]
    reason: tolerated(str | None, None) = None  # type: ignore[valid-type]
    message: tolerated(str | None, None) = None  # type: ignore[valid-type]


class WireTerminated(_Wire):
    reason: tolerated(str | None, None) = None  # type: ignore[valid-type]
    finishedAt: tolerated(str | None, None) = None  # type: ignore[valid-type]


class WireContainerState(_Wire):
    terminated: tolerated(WireTerminated | None, None) = None  # type: ignore[valid-type]


class WireContainerStatus(_Wire):
    restartCount: tolerated(int, 0) = 0  # type: ignore[valid-type]
    state: tolerated(WireContainerState | None, None) = None  # type: ignore[valid-type]
    lastState: tolerated(WireContainerState | None, None) = None  # type: ignore[valid-type]


class WirePodStatus(_Wire):
    phase: str = "Pending"
    reason: tolerated(str | None, None) = None  # type: ignore[valid-type]
    startTime: str | None = None
    conditions: lenient(list, WireCondition) = None  # type: ignore[valid-type]
    containerStatuses: lenient(list, WireContainerStatus) = None  # type: ignore[valid-type]


class WirePod(_Wire):
    metadata: WireMeta
    spec: WirePodSpec = Field(default_factory=WirePodSpec)
    status: WirePodStatus = Field(default_factory=WirePodStatus)


class PodEvent(_Wire):
    type: str
    object: WirePod


class WireTaint(_Wire):
    key: str
    value: tolerated(str, "") = ""  # type: ignore[valid-type]
    effect: tolerated(str, "NoSchedule") = "NoSchedule"  # type: ignore[valid-type]


class WireNodeSpec(_Wire):
    unschedulable: bool = False
    taints: list[WireTaint] | None = None


class WireNodeStatus(_Wire):
    capacity: dict[str, Quantity] | None = None
    allocatable: dict[str, Quantity] | None = None
    conditions: list[WireCondition] | None = None


class WireNode(_Wire):
    metadata: WireMeta
    spec: WireNodeSpec = Field(default_factory=WireNodeSpec)
    status: WireNodeStatus = Field(default_factory=WireNodeStatus)


class NodeEvent(_Wire):
    type: str
    object: WireNode


# -- plain projections ---------------------------------------------------------------------------------


def parse_time(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError as exc:
        raise DecodeError(f"bad timestamp {text!r}") from exc


def _kept(annotations: dict[str, str] | None) -> dict[str, str]:
    return {k: v for k, v in (annotations or {}).items() if k.startswith(KEPT_ANNOTATION_PREFIXES)}


def container_requests(spec: WirePodSpec, annotations: dict[str, str]) -> Resources:
    """max(Σ containers, largest init container) + overhead; GPUs given only as limits count."""

    def one(container: WireContainer) -> Resources:
        res = container.resources
        if res is None:
            return Resources()
        merged: dict[str, Quantity] = {
            k: v for k, v in (res.limits or {}).items() if k not in ("cpu", "memory")
        }
        merged.update(res.requests or {})
        return Resources.from_k8s(merged)

    total = Resources()
    for container in spec.containers:
        total = total + one(container)
    for init in spec.initContainers or []:
        r = one(init)
        total = Resources(
            max(total.cpu, r.cpu), max(total.memory, r.memory), max(total.gpu, r.gpu), total.extended
        )
    if spec.overhead:
        total = total + Resources.from_k8s(spec.overhead)
    milli = annotations.get("alibabacloud.com/gpu-milli")
    if milli is not None:
        count = bounded("count", to_int(annotations.get("alibabacloud.com/gpu-count", "1")), LIMITS["gpu"])
        total = Resources(
            total.cpu, total.memory, bounded("milli", to_int(milli) * count, LIMITS["gpu"]), total.extended
        )
    bounded(GPU_RESOURCE, total.gpu, LIMITS["gpu"])
    return total


def pod_from_wire(w: WirePod) -> Pod:
    meta, spec, status = w.metadata, w.spec, w.status
    if not meta.name or not meta.namespace:
        raise DecodeError("pod without metadata.name or metadata.namespace")
    annotations = _kept(meta.annotations)
    scheduled = None
    for cond in status.conditions or []:
        if cond.type == "PodScheduled":
            scheduled = Condition(cond.type, cond.status, cond.reason or "", cond.message or "")
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
    index = annotations.get("alibabacloud.com/gpu-index")
    gpu_indices = tuple(int(i) for i in index.split("-")) if index else ()
    if any(not 0 <= i < MAX_GPUS for i in gpu_indices):
        raise DecodeError("GPU index out of range")
    owner = next(
        (OwnerRef(r.apiVersion, r.kind, r.name, r.uid) for r in meta.ownerReferences or [] if r.controller),
        None,
    )
    models = annotations.get("alibabacloud.com/gpu-card-model")
    selector = spec.nodeSelector or {}
    return Pod(
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid,
        resource_version=meta.resourceVersion,
        labels=dict(meta.labels or {}),
        annotations=annotations,
        owner=owner,
        node_name=spec.nodeName or None,
        scheduler_name=spec.schedulerName,
        phase=status.phase,
        requests=container_requests(spec, annotations),
        gpu_indices=gpu_indices,
        gpu_models=tuple(sorted(m for m in models.split("|") if m))
        if models
        else ((selector["nvidia.com/gpu.product"],) if "nvidia.com/gpu.product" in selector else ()),
        node_selector=tuple(sorted(selector.items())),
        tolerations=tuple(Toleration(t.key, t.operator, t.value, t.effect) for t in spec.tolerations or []),
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


def node_from_wire(w: WireNode) -> Node:
    meta = w.metadata
    if not meta.name:
        raise DecodeError("node without metadata.name")
    labels = dict(meta.labels or {})
    allocatable_raw = dict(w.status.allocatable or {})
    capacity_raw = dict(w.status.capacity or allocatable_raw)
    replicas = bounded("replicas", to_int(labels.get("nvidia.com/gpu.replicas", "1")), LIMITS["gpu"]) or 1
    single = labels.get("nvidia.com/mig.strategy", "none") == "single"
    per_node = (MAX_GPUS * 1000 * (7 if single else replicas), "")

    def resources(raw: dict[str, Quantity]) -> Resources:
        r = Resources.from_k8s({k: v for k, v in raw.items() if k != GPU_RESOURCE})
        gpu = bounded(GPU_RESOURCE, to_int(raw[GPU_RESOURCE]) * 1000, per_node) if GPU_RESOURCE in raw else 0
        if not gpu and "alibabacloud.com/gpu-count" in raw:
            gpu = bounded("count", to_int(raw["alibabacloud.com/gpu-count"]) * 1000, LIMITS["gpu"])
        return Resources(
            r.cpu, r.memory, gpu, tuple(kv for kv in r.extended if kv[0] != "alibabacloud.com/gpu-count")
        )

    advertised = resources(allocatable_raw).gpu // 1000
    if not advertised and "nvidia.com/gpu.shared" in allocatable_raw:  # renameByDefault replicas
        shared = allocatable_raw["nvidia.com/gpu.shared"]
        advertised = bounded("nvidia.com/gpu.shared", to_int(shared), per_node)
    mig = tuple(
        (p, n)
        for p, n in sorted(
            (k[len(MIG_PREFIX) :], bounded(k, to_int(v), (MAX_GPUS * 7, "")))
            for k, v in allocatable_raw.items()
            if k.startswith(MIG_PREFIX)
        )
        if n > 0
    )
    count = advertised // replicas if replicas > 1 else advertised
    labelled = 0
    if replicas > 1 or single or mig:
        labelled = bounded("count", to_int(labels.get("nvidia.com/gpu.count", "0")), LIMITS["gpu"])
    shares = 0
    product = labels.get("nvidia.com/gpu.product") or ""
    per_gpu = mig_devices_per_gpu(product) if single else 0
    if advertised and per_gpu:
        # GFD overrides gpu.count with the MIG devices; a smaller one is a count of GPUs
        count = labelled if 0 < labelled < advertised else -(-advertised // per_gpu)
        shares = 0 if advertised == count else advertised
    elif advertised and replicas > 1:
        count = labelled if labelled else max(count, 1)
        shares = 0 if advertised == count else advertised
    bounded(GPU_RESOURCE, count, (MAX_GPUS, ""))
    if mig:
        whole_of_slices = math.ceil(sum(n * mig_profile_share(p) for p, n in mig))
        count = labelled if labelled > advertised else advertised + whole_of_slices
        bounded(GPU_RESOURCE, count, (MAX_GPUS, ""))
    sharing = labels.get("nvidia.com/gpu.sharing-strategy", "none")
    if sharing == "none" and labels.get("hpctop.io/gpu-sharing") == "milli":
        sharing = "milli"
    memory = labels.get("nvidia.com/gpu.memory")
    gpu = GpuInventory(
        product=labels.get("nvidia.com/gpu.product") or labels.get("alibabacloud.com/gpu-card-model"),
        count=count,
        memory_mib=to_int(memory) if memory else None,
        mig_strategy=labels.get("nvidia.com/mig.strategy", "none"),
        mig_devices=mig,
        sharing=sharing,
        replicas=replicas,
        clique=labels.get("nvidia.com/gpu.clique"),
        shares=shares,
    )
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


REFUSALS = (ValidationError, DecodeError, QuantityError, ValueError)


def reference_pod(raw: bytes) -> Pod | None:
    """The oracle's pod for a watch event's bytes, ``None`` where it refuses the object."""
    try:
        return pod_from_wire(PodEvent.model_validate_json(raw).object)
    except REFUSALS:
        return None


def reference_node(raw: bytes) -> Node | None:
    try:
        return node_from_wire(NodeEvent.model_validate_json(raw).object)
    except REFUSALS:
        return None
