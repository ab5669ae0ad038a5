"""Slim, immutable objects: the parts of Kubernetes objects hpctop reads.

The official client's generated models keep ~69 KiB per pod (PERFORMANCE.md); these keep only
what the core and the console use, in ``slots`` dataclasses, and they are frozen so a snapshot
can be shared with the view and the core without copies or locks. A change in the cluster is a
new object replacing the old one in the store, never an in-place mutation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from hpctop.model.resources import ZERO, Resources
from hpctop.model.states import JobState, ReasonCode

PodKey = tuple[str, str]  # (namespace, name)
JobKey = tuple[str, str, str]  # (namespace, kind, name)


@dataclass(frozen=True, slots=True)
class OwnerRef:
    api_version: str
    kind: str
    name: str
    uid: str


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str | None
    operator: str  # Equal | Exists
    value: str | None
    effect: str | None

    def tolerates(self, taint: Taint) -> bool:
        """Kubernetes toleration matching (an empty key with Exists tolerates everything)."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key is None or self.key == "":
            return self.operator == "Exists"
        if self.key != taint.key:
            return False
        return self.operator == "Exists" or (self.value or "") == taint.value


@dataclass(frozen=True, slots=True)
class Condition:
    type: str
    status: str
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class GpuInventory:
    """What a node says about its GPUs (allocatable counts and GPU Feature Discovery labels)."""

    product: str | None = None
    count: int = 0  # physical GPUs (time-sliced replicas divided out)
    memory_mib: int | None = None
    mig_strategy: str = "none"  # none | single | mixed
    mig_devices: tuple[tuple[str, int], ...] = ()  # ("3g.40gb", 2) per MIG profile (mixed strategy)
    sharing: str = "none"  # none | time-slicing | mps | milli (fractional scheme of the trace)
    replicas: int = 1
    clique: str | None = None

    @property
    def milli_total(self) -> int:
        return self.count * 1000


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    uid: str
    resource_version: str
    labels: dict[str, str]
    taints: tuple[Taint, ...]
    unschedulable: bool
    ready: bool
    capacity: Resources
    allocatable: Resources
    gpu: GpuInventory
    created: float

    @property
    def schedulable(self) -> bool:
        return self.ready and not self.unschedulable


@dataclass(frozen=True, slots=True)
class Pod:
    namespace: str
    name: str
    uid: str
    resource_version: str
    labels: dict[str, str]
    annotations: dict[str, str]
    owner: OwnerRef | None
    node_name: str | None
    scheduler_name: str
    phase: str
    requests: Resources
    gpu_indices: tuple[int, ...]
    gpu_models: tuple[str, ...]  # allowed GPU products (empty = any)
    node_selector: tuple[tuple[str, str], ...]
    tolerations: tuple[Toleration, ...]
    priority: int | None
    priority_class: str | None
    scheduling_gates: tuple[str, ...]
    created: float
    started: float | None
    finished: float | None
    deleted: float | None
    active_deadline_seconds: int | None
    scheduled: Condition | None
    status_reason: str | None
    terminated_reason: str | None
    restart_count: int = 0

    @property
    def key(self) -> PodKey:
        return (self.namespace, self.name)

    @property
    def is_terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @property
    def holds_resources(self) -> bool:
        """Bound to a node and not finished: its requests count against the node."""
        return self.node_name is not None and not self.is_terminal

    @property
    def is_placeholder(self) -> bool:
        a = self.annotations
        return (
            a.get("internal.yunikorn.apache.org/placeholder") == "true"
            or a.get("yunikorn.apache.org/placeholder") == "true"
            or self.labels.get("placeholder") == "true"
        )


@dataclass(frozen=True, slots=True)
class Workload:
    """An owner that makes a job: batch Job, JobSet, Kubeflow job, Deployment (an inference service), ..."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str
    resource_version: str
    labels: dict[str, str]
    annotations: dict[str, str]
    suspend: bool
    parallelism: int
    completions: int | None
    template_requests: Resources
    template_annotations: dict[str, str]
    template_labels: dict[str, str]
    template_node_selector: tuple[tuple[str, str], ...]
    priority_class: str | None
    active_deadline_seconds: int | None
    conditions: tuple[Condition, ...]
    created: float
    start_time: float | None
    completion_time: float | None
    succeeded: int = 0
    failed: int = 0

    @property
    def key(self) -> JobKey:
        return (self.namespace, self.kind, self.name)

    def condition(self, kind: str) -> Condition | None:
        for cond in self.conditions:
            if cond.type == kind and cond.status == "True":
                return cond
        return None


@dataclass(frozen=True, slots=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False


class JobKind(StrEnum):
    BATCH = "batch"
    SERVICE = "service"


@dataclass(frozen=True, slots=True)
class Gang:
    """All-or-nothing group of pods (YuniKorn task groups, PodGroup, Kueue pod sets)."""

    name: str
    min_member: int
    style: str = "hard"  # hard | soft
    timeout_s: int | None = None
    placeholders: int = 0


@dataclass(frozen=True, slots=True)
class Reason:
    """Why a job is pending: a code, where the evidence came from, and the raw message."""

    code: ReasonCode
    source: str
    message: str


@dataclass(frozen=True, slots=True)
class Job:
    """Pods grouped by owner or gang: the row a user sees in the jobs table."""

    key: JobKey
    namespace: str
    name: str
    kind: JobKind
    owner_kind: str
    uid: str
    user: str
    queue: str | None
    partition: str | None  # requested partition, if the job names one
    priority_value: int | None
    priority_class: str | None
    state: JobState
    observed_reason: Reason | None
    submit_time: float
    start_time: float | None
    end_time: float | None
    per_member: Resources
    members: int
    min_members: int
    running_members: int
    pending_pods: tuple[PodKey, ...]
    pods: tuple[PodKey, ...]
    nodes: tuple[str, ...]
    gpu_models: tuple[str, ...]
    node_selector: tuple[tuple[str, str], ...]
    tolerations: tuple[Toleration, ...]
    scheduler_name: str
    scheduling_gates: tuple[str, ...]
    time_limit: int | None
    gang: Gang | None = None
    restart_count: int = 0
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """A stable, readable identifier: ``namespace/name`` (kind when not a batch Job)."""
        return f"{self.namespace}/{self.name}"

    @property
    def requested(self) -> Resources:
        return self.per_member.scale(self.members)

    @property
    def pending_members(self) -> int:
        return len(self.pending_pods)

    @property
    def allocated(self) -> Resources:
        return self.per_member.scale(self.members - len(self.pending_pods)) if self.state.is_active else ZERO
