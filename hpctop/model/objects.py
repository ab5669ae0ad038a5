"""Slim, immutable objects: the parts of Kubernetes objects hpctop reads.

The official client's generated models keep ~69 KiB per pod (PERFORMANCE.md); these keep only
what the core and the console use, in ``slots`` dataclasses, and they are frozen so a snapshot
can be shared with the view and the core without copies or locks. A change in the cluster is a
new object replacing the old one in the store, never an in-place mutation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from hpctop.model.resources import ZERO, Resources, fast_frozen_init, gpu_equivalent_milli
from hpctop.model.states import JobState, ReasonCode

PodKey = tuple[str, str]  # (namespace, name)
#: set "true" on a pod by the binder (the simulator's session) when the scheduling core started it
#: by backfill (``Placement.backfilled``): once running, the job's plan has no placement left
BACKFILLED_ANNOTATION = "hpctop.io/backfilled"
#: the node label every kubelet sets to its node name (the topology key of "one per node")
HOSTNAME_LABEL = "kubernetes.io/hostname"

JobKey = tuple[str, str, str]  # (namespace, kind, name)
#: a scheduler backend object: (API group, kind, namespace or "", name). Volcano and
#: scheduler-plugins both define kind PodGroup, so the group is part of every key.
ObjectKey = tuple[str, str, str, str]


@fast_frozen_init  # built per event: see fast_frozen_init
@dataclass(frozen=True, slots=True)
class OwnerRef:
    api_version: str
    kind: str
    name: str
    uid: str


@fast_frozen_init  # built per event: see fast_frozen_init
@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str


@fast_frozen_init  # built per event: see fast_frozen_init
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


@fast_frozen_init  # built per event: see fast_frozen_init
@dataclass(frozen=True, slots=True)
class Condition:
    type: str
    status: str
    reason: str
    message: str


@fast_frozen_init  # built per event: see fast_frozen_init
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
    #: what the node advertises as ``nvidia.com/gpu`` when that is not one per physical GPU: MIG
    #: slices under the ``single`` strategy, replicas under time-slicing or MPS (0: one per GPU)
    shares: int = 0

    @property
    def share_total(self) -> int:
        """Schedulable ``nvidia.com/gpu`` units: the shares, or the physical GPUs when unshared."""
        return self.shares or self.count

    @property
    def is_shared(self) -> bool:
        """Whether a requested ``nvidia.com/gpu`` is a share (slice, replica), not a whole GPU."""
        return self.share_total != self.count

    @property
    def milli_total(self) -> int:
        """Capacity in thousandths of a schedulable unit, the unit pods request."""
        return self.share_total * 1000

    def used_milli(self, allocated: Resources) -> int:
        """What ``allocated`` takes of :attr:`milli_total`: shares where shared (``nvidia.com/gpu``
        or, renamed, ``nvidia.com/gpu.shared``), else milli-GPU with MIG devices (``mixed``
        strategy) counted as the share of a GPU each is."""
        return gpu_equivalent_milli(allocated)

    def physical_milli(self, allocated: Resources) -> int:
        """Physical milli-GPU that ``allocated`` holds on this node (a replica of 4: 250)."""
        used = gpu_equivalent_milli(allocated)
        if self.is_shared:
            return used * self.count // self.share_total if self.share_total else 0
        return used


@fast_frozen_init  # built per event: see fast_frozen_init
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

    @property
    def counts_gpus_apart(self) -> bool:
        """Whether ``allocatable.gpu`` is not this node's physical GPUs (shares, or MIG slices
        advertised per profile): capacity sums then count :attr:`GpuInventory.count` instead."""
        return self.gpu.is_shared or bool(self.gpu.mig_devices)

    @property
    def gpu_capacity_milli(self) -> int:
        """Physical GPUs in milli-GPU (a T4 time-sliced 4 ways is 1000, not 4000)."""
        return self.gpu.count * 1000 if self.counts_gpus_apart else self.allocatable.gpu


@dataclass(frozen=True, slots=True)
class PodClaims:
    """A pod's Dynamic Resource Allocation references (``resource.k8s.io``), when it has any.

    ``claims`` is (the pod's name for the claim, the ResourceClaim's name or ``None`` while the
    claim generated from a template is not yet named, the template's name or ``None``);
    ``extended_claim`` is the claim the scheduler generated for a DRA-served extended resource
    (``nvidia.com/gpu`` in the container requests, KEP-5004): those devices are already in the
    pod's requests and must not be counted again. ``health`` is the kubelet's device health
    (``allocatedResourcesStatus``: resource ID ``driver/pool/device`` → Healthy | Unhealthy | Unknown).
    """

    claims: tuple[tuple[str, str | None, str | None], ...] = ()
    extended_claim: str | None = None
    health: tuple[tuple[str, str], ...] = ()

    def claim_names(self) -> tuple[str, ...]:
        """The ResourceClaims this pod uses (generated ones once named), the extended one included."""
        names = tuple(c for _, c, _ in self.claims if c)
        return (*names, self.extended_claim) if self.extended_claim else names


@fast_frozen_init  # built per event: see fast_frozen_init
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
    #: every container is a ``pause`` image and its priority is negative: a pod that only holds
    #: capacity until a pod of normal priority preempts it (Kubernetes' "overprovision node
    #: capacity" placeholders at -1000, cluster-autoscaler's overprovisioning at -10), no work
    capacity_reservation: bool = False
    #: the node kube-scheduler preempted victims on for this pod (``status.nominatedNodeName``)
    nominated_node: str | None = None
    #: DRA claims (None for the pod that uses none: nearly all of them)
    claims: PodClaims | None = None
    #: the native gang API's ``spec.schedulingGroup.podGroupName`` (KEP-4671, Kubernetes 1.36+)
    scheduling_group: str | None = None
    #: a required pod anti-affinity on the hostname that selects this pod's own labels: no two
    #: such pods of one job on a node (``Job.one_per_node``, Slurm's ``--ntasks-per-node=1``)
    one_per_node: bool = False

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


@fast_frozen_init  # built per event: see fast_frozen_init
@dataclass(frozen=True, slots=True)
class ReplicaGroup:
    """One role of a multi-role job: a Kubeflow replica type, a JobSet replicated job, a vcjob task."""

    name: str
    replicas: int
    requests: Resources
    min_available: int | None = None


@fast_frozen_init  # built per event: see fast_frozen_init
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
    #: controller owner (a batch Job's JobSet, a StatefulSet's LeaderWorkerSet, ...)
    owner: OwnerRef | None = None
    #: member roles, each with its own count and template (empty for single-template kinds)
    groups: tuple[ReplicaGroup, ...] = ()
    #: gang minimum stated by the owner (Kubeflow schedulingPolicy.minAvailable, vcjob minAvailable,
    #: LeaderWorkerSet group size)
    min_available: int | None = None
    #: queue named by the owner itself (Kubeflow schedulingPolicy.queue, vcjob spec.queue)
    queue: str | None = None
    #: phase of owners that report one (vcjob status.state.phase)
    phase: str | None = None
    #: its pod template runs only ``pause`` containers: capacity held in reserve, not a job
    capacity_reservation: bool = False
    #: the DRA ResourceClaimTemplates its pod template names (each member gets a claim from each)
    template_claims: tuple[str, ...] = ()

    @property
    def key(self) -> JobKey:
        return (self.namespace, self.kind, self.name)

    @property
    def api_kind(self) -> str:
        """The kind as the API server spells it (``kind`` may be qualified: ``Job.batch.volcano.sh``)."""
        return self.kind.split(".", 1)[0]

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


@fast_frozen_init  # built per event: see fast_frozen_init
@dataclass(frozen=True, slots=True)
class Gang:
    """All-or-nothing group of pods (YuniKorn task groups, PodGroup, Kueue pod sets)."""

    name: str
    min_member: int
    style: str = "hard"  # hard | soft
    timeout_s: int | None = None
    placeholders: int = 0


@dataclass(frozen=True, slots=True)
class ReasonFragment:
    """One clause of a scheduler message: ``3 Insufficient nvidia.com/gpu`` → (3, Resources, ...)."""

    count: int
    code: ReasonCode
    detail: str


@fast_frozen_init  # built per event: see fast_frozen_init
@dataclass(frozen=True, slots=True)
class Reason:
    """Why a job is pending: a code, where the evidence came from, and the raw message."""

    code: ReasonCode
    source: str
    message: str
    #: the message parsed into clauses, for drill-down (pod Unschedulable messages)
    fragments: tuple[ReasonFragment, ...] = ()


@fast_frozen_init  # built per event: see fast_frozen_init
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
    #: every reason found, in precedence order (``observed_reason`` is the first); the detail pane
    #: lists them all so the one code never hides evidence (SCHEDULERS.md §10)
    reasons: tuple[Reason, ...] = ()
    #: backends with evidence about this job (``kueue``, ``volcano``, ``coscheduling``, ``yunikorn``)
    backends: tuple[str, ...] = ()
    #: the Kueue Workload, PodGroup, ... the job was joined with
    backend_objects: tuple[ObjectKey, ...] = ()
    #: the whole job's request summed over its roles / pod templates / pods, when they differ
    #: (an MPI job's CPU-only launcher and GPU workers); None: every member is ``per_member``
    requested_total: Resources | None = None
    #: the Slurm partition slurm-bridge is asked for (``slurmjob.slinky.slurm.net/partition``):
    #: Slurm's, not one of hpctop's partitions, so kept apart from ``partition``
    slurm_partition: str | None = None
    #: every member on its own node (Slurm's ``--nodes=N --ntasks-per-node=1`` for members smaller
    #: than a node; on Kubernetes a required pod anti-affinity on the hostname among the members)
    one_per_node: bool = False
    #: started by a backfill pass, not the main one (``BACKFILLED_ANNOTATION`` on its running pods)
    backfilled: bool = False

    @property
    def id(self) -> str:
        """A stable, readable identifier: ``namespace/name`` (kind when not a batch Job)."""
        return f"{self.namespace}/{self.name}"

    @property
    def requested(self) -> Resources:
        if self.requested_total is not None:
            return self.requested_total
        return self.per_member.scale(self.members)

    @property
    def pending_members(self) -> int:
        return len(self.pending_pods)

    @property
    def allocated(self) -> Resources:
        return self.per_member.scale(self.members - len(self.pending_pods)) if self.state.is_active else ZERO


# -- scheduler backend objects (SCHEDULERS.md §4-§7) ---------------------------------------------
#
# Each is the slim projection of one CRD object, keyed by ``ObjectKey`` (group, kind, namespace,
# name). They are evidence, not jobs: the store joins them to the job rows they explain and folds
# the queue objects into one neutral ``QueueInfo`` tree.

KUEUE_GROUP = "kueue.x-k8s.io"
VOLCANO_GROUP = "scheduling.volcano.sh"
VOLCANO_BATCH_GROUP = "batch.volcano.sh"
COSCHEDULING_GROUP = "scheduling.x-k8s.io"
#: the native gang API of sig-scheduling (KEP-4671): Workload and PodGroup
NATIVE_SCHEDULING_GROUP = "scheduling.k8s.io"
VOLCANO_TOPOLOGY_GROUP = "topology.volcano.sh"


@dataclass(frozen=True, slots=True)
class PodSetInfo:
    """A Kueue pod set: ``count`` pods, of which ``min_count`` suffice (partial admission)."""

    name: str
    count: int
    min_count: int | None = None
    requests: Resources = ZERO


@dataclass(frozen=True, slots=True)
class TopologyDomain:
    """One topology domain a gang's pods were placed in: its value per level, and the pod count."""

    values: tuple[str, ...]
    pods: int


@dataclass(frozen=True, slots=True)
class TopologyPlacement:
    """Where one pod set (or gang) was placed: the levels (highest first) and the domains."""

    pod_set: str
    levels: tuple[str, ...]
    domains: tuple[TopologyDomain, ...]


@dataclass(frozen=True, slots=True)
class TopologyRequest:
    """What one pod set asked of the topology: ``required``/``preferred``/``unconstrained`` at a level."""

    pod_set: str
    mode: str
    level: str | None


@dataclass(frozen=True, slots=True)
class TopologyLevels:
    """A named topology: its levels (node label keys or tier names), highest first.

    Kueue's ``Topology`` (``spec.levels[].nodeLabel``) is one; ``source`` says whose.
    """

    name: str
    resource_version: str
    levels: tuple[str, ...]
    source: str = "kueue"

    @property
    def key(self) -> ObjectKey:
        return (KUEUE_GROUP, "Topology", "", self.name)


@dataclass(frozen=True, slots=True)
class HyperNode:
    """A Volcano ``HyperNode`` (``topology.volcano.sh``): a network domain at a tier.

    ``members`` are (type, how, value): type ``Node`` or ``HyperNode``; how ``exactMatch``,
    ``regexMatch`` or ``labelMatch`` (value ``k=v,...`` for labels).
    """

    name: str
    resource_version: str
    tier: int
    tier_name: str
    members: tuple[tuple[str, str, str], ...]
    node_count: int = 0

    @property
    def key(self) -> ObjectKey:
        return (VOLCANO_TOPOLOGY_GROUP, "HyperNode", "", self.name)


@dataclass(frozen=True, slots=True)
class KueueWorkload:
    """A Kueue ``Workload``: the queue-side record of one job (v1beta1 and v1beta2 alike)."""

    namespace: str
    name: str
    uid: str
    resource_version: str
    api_version: str
    owner: OwnerRef | None  # controller owner: the job this Workload admits
    job_uid: str | None  # label kueue.x-k8s.io/job-uid
    queue_name: str  # LocalQueue in the same namespace
    pod_sets: tuple[PodSetInfo, ...]
    active: bool
    priority: int | None
    priority_class: str | None
    conditions: tuple[Condition, ...]
    cluster_queue: str | None  # status.admission.clusterQueue (set once quota is reserved)
    requeue_count: int = 0
    requeue_at: float | None = None
    created: float = 0.0
    max_execution_s: int | None = None
    #: Topology Aware Scheduling: what each pod set asked for, and the admission's placement
    topology_requests: tuple[TopologyRequest, ...] = ()
    placements: tuple[TopologyPlacement, ...] = ()
    #: MultiKueue: the worker cluster that runs it (``status.clusterName``), or those nominated
    cluster_name: str | None = None
    nominated_clusters: tuple[str, ...] = ()

    @property
    def key(self) -> ObjectKey:
        return (KUEUE_GROUP, "Workload", self.namespace, self.name)

    def condition(self, kind: str) -> Condition | None:
        """The condition of that type, whatever its status (``None`` when absent)."""
        for cond in self.conditions:
            if cond.type == kind:
                return cond
        return None


@dataclass(frozen=True, slots=True)
class FlavorQuota:
    """One (flavor, resource) cell of a Kueue quota; amounts in canonical units (§1.6), None = unset."""

    flavor: str
    resource: str
    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass(frozen=True, slots=True)
class FlavorUsage:
    flavor: str
    resource: str
    total: int
    borrowed: int = 0


@dataclass(frozen=True, slots=True)
class ClusterQueue:
    name: str
    resource_version: str
    cohort: str | None  # v1beta1 spec.cohort, v1beta2 spec.cohortName
    quotas: tuple[FlavorQuota, ...]
    stop_policy: str  # None | Hold | HoldAndDrain
    queueing_strategy: str
    weight: float | None
    conditions: tuple[Condition, ...]
    usage: tuple[FlavorUsage, ...]  # status.flavorsUsage (admitted)
    reservation: tuple[FlavorUsage, ...]  # status.flavorsReservation (quota reserved)
    pending_workloads: int = 0
    reserving_workloads: int = 0
    admitted_workloads: int = 0

    @property
    def key(self) -> ObjectKey:
        return (KUEUE_GROUP, "ClusterQueue", "", self.name)


@dataclass(frozen=True, slots=True)
class LocalQueue:
    namespace: str
    name: str
    resource_version: str
    cluster_queue: str
    stop_policy: str
    pending_workloads: int = 0
    reserving_workloads: int = 0
    admitted_workloads: int = 0
    #: admission fair sharing: ``status.fairSharing.admissionFairSharingStatus.consumedResources``
    consumed: Resources | None = None

    @property
    def key(self) -> ObjectKey:
        return (KUEUE_GROUP, "LocalQueue", self.namespace, self.name)


@dataclass(frozen=True, slots=True)
class Cohort:
    """A Kueue Cohort (v1beta2; v1alpha1 before): a node of the tree above the ClusterQueues."""

    name: str
    resource_version: str
    parent: str | None
    quotas: tuple[FlavorQuota, ...]
    weight: float | None = None

    @property
    def key(self) -> ObjectKey:
        return (KUEUE_GROUP, "Cohort", "", self.name)


@dataclass(frozen=True, slots=True)
class ResourceFlavor:
    name: str
    resource_version: str
    node_labels: tuple[tuple[str, str], ...]
    node_taints: tuple[Taint, ...]
    topology_name: str | None = None

    @property
    def key(self) -> ObjectKey:
        return (KUEUE_GROUP, "ResourceFlavor", "", self.name)


@dataclass(frozen=True, slots=True)
class VolcanoQueue:
    name: str
    resource_version: str
    parent: str | None  # spec.parent, or the volcano.sh/hierarchy annotation's second-to-last part
    hierarchy: tuple[str, ...]  # ("root", "eng", "prod") when the hierarchy annotation is used
    weight: int | None
    capability: Resources | None
    deserved: Resources | None
    guarantee: Resources | None
    state: str  # Open | Closed | Closing | Unknown
    priority: int | None = None
    reclaimable: bool | None = None
    allocated: Resources = ZERO
    pending: int = 0
    inqueue: int = 0
    running: int = 0

    @property
    def key(self) -> ObjectKey:
        return (VOLCANO_GROUP, "Queue", "", self.name)


@dataclass(frozen=True, slots=True)
class PodGroup:
    """A gang object: Volcano (``scheduling.volcano.sh``) or coscheduling (``scheduling.x-k8s.io``)."""

    group: str
    namespace: str
    name: str
    uid: str
    resource_version: str
    owner: OwnerRef | None
    min_member: int
    min_resources: Resources
    queue: str | None  # Volcano spec.queue (coscheduling has none)
    phase: str
    conditions: tuple[Condition, ...]
    priority_class: str | None = None
    timeout_s: int | None = None
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    scheduled: int = 0
    #: Volcano ``spec.networkTopology``: (mode hard|soft, highestTierAllowed or highestTierName)
    network_topology: tuple[str, str | None] | None = None
    #: the native API's ``spec.workloadRef`` (workloadName/templateName) and topology keys
    workload_ref: str | None = None
    topology_keys: tuple[str, ...] = ()

    @property
    def key(self) -> ObjectKey:
        return (self.group, "PodGroup", self.namespace, self.name)

    @property
    def backend(self) -> str:
        if self.group == VOLCANO_GROUP:
            return "volcano"
        return "workload-api" if self.group == NATIVE_SCHEDULING_GROUP else "coscheduling"

    def condition(self, kind: str) -> Condition | None:
        for cond in self.conditions:
            if cond.type == kind and cond.status == "True":
                return cond
        return None


@dataclass(frozen=True, slots=True)
class QueueInfo:
    """One queue of the neutral tree, whichever scheduler defines it (§1.3 Queue).

    ``path`` is dotted under ``root`` like hpctop's own queues (dots inside a backend name are
    written ``_dot_``, YuniKorn's convention). ``guaranteed`` is the Kueue nominal quota, Volcano
    ``deserved`` (else ``guarantee``) or YuniKorn ``guaranteedResource``; a 0 component of ``max``
    means no limit on that resource, as in :class:`hpctop.model.policy.QueueSpec`.
    """

    path: str
    name: str
    parent: str | None
    kind: str  # cohort | cluster | local | parent | leaf
    backend: str  # kueue | volcano | yunikorn
    state: str  # Open | Closed | Draining | Held | Unknown
    guaranteed: Resources = ZERO
    max: Resources | None = None
    borrowing_limit: Resources | None = None
    lending_limit: Resources | None = None
    weight: float | None = None
    priority: int | None = None
    allocated: Resources = ZERO
    borrowed: Resources = ZERO
    pending: Resources = ZERO
    pending_jobs: int = 0
    admitted_jobs: int = 0
    running_jobs: int = 0
    flavors: tuple[FlavorQuota, ...] = ()
    usage: tuple[FlavorUsage, ...] = ()
    state_reason: str = ""

    @property
    def borrowing(self) -> bool:
        """Using quota lent by other queues of its cohort."""
        return self.borrowed != ZERO

    @property
    def is_open(self) -> bool:
        return self.state == "Open"


class FolderBackendObject:
    """Base of the backend objects a backend folder defines itself (``hpctop/backends/<name>/``).

    Why: the model cannot import a backend's module (that module imports the model), yet the
    store keeps every backend object in one map; a subclass only needs a ``key``.
    """

    __slots__ = ()

    @property
    def key(self) -> ObjectKey:
        raise NotImplementedError


BackendObject = (
    KueueWorkload
    | ClusterQueue
    | LocalQueue
    | Cohort
    | ResourceFlavor
    | VolcanoQueue
    | PodGroup
    | TopologyLevels
    | HyperNode
    | FolderBackendObject
)
BACKEND_TYPES = (
    KueueWorkload,
    ClusterQueue,
    LocalQueue,
    Cohort,
    ResourceFlavor,
    VolcanoQueue,
    PodGroup,
    TopologyLevels,
    HyperNode,
    FolderBackendObject,
)
