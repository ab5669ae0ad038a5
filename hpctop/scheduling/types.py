"""What the scheduling core returns: plain, frozen data for tables, panes and binders."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hpctop.model.objects import JobKey, PodKey, Reason
from hpctop.model.policy import PartitionState, QueueState
from hpctop.model.resources import Resources


@dataclass(frozen=True, slots=True)
class PartitionStatus:
    name: str
    priority_tier: int
    state: PartitionState
    nodes: tuple[str, ...]
    gpu_models: tuple[str, ...]
    capacity: Resources  # allocatable of its schedulable nodes
    allocated: Resources
    free: Resources
    nodes_down: int = 0  # not ready or cordoned
    evaluation_tier: int = 1  # Slurm's PriorityTier (evaluation order)
    priority_job_factor: int = 1  # Slurm's PriorityJobFactor (``PartitionSpec.job_factor``)


@dataclass(frozen=True, slots=True)
class QueueStatus:
    path: str
    parent: str | None
    children: tuple[str, ...]
    depth: int
    state: QueueState
    guaranteed: Resources
    max: Resources | None
    used: Resources
    pending: Resources
    running_jobs: int
    pending_jobs: int
    dominant_share: float  # usage relative to guaranteed (or to the cluster when none is set)
    dominant_resource: str
    cluster_share: float  # U: dominant share of the cluster in use
    normalized_share: float  # S: siblings' S sum to their parent's (scheduling.queues)
    fairshare_factor: float  # 2^(-U/S)
    borrowing: bool  # using more than guaranteed of a resource the guarantee sets

    @property
    def is_leaf(self) -> bool:
        return not self.children


@dataclass(frozen=True, slots=True)
class PriorityBreakdown:
    """Like ``sprio``: normalised factors in [0, 1], each times its weight, and the total."""

    factors: Mapping[str, float]
    weighted: Mapping[str, float]
    total: int


@dataclass(frozen=True, slots=True)
class PodAssignment:
    pod: PodKey
    node: str
    gpu_indices: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Placement:
    """Where all pending members of a job go now (all of them, or the job is not placed)."""

    job: JobKey
    assignments: tuple[PodAssignment, ...]
    partition: str | None = None
    backfilled: bool = False
    #: the job's priority when it is placed: Slurm stops recalculating a job's priority once it
    #: starts, so the session keeps this one for the job while it runs (``FrozenPriorities``)
    priority: PriorityBreakdown | None = None


@dataclass(frozen=True, slots=True)
class JobPlan:
    """The core's view of one job: priority, position, reason, ETA and placement."""

    job: JobKey
    priority: PriorityBreakdown
    partition: str | None  # where it runs or will run; comma-joined when several are eligible
    order: int | None = None  # position among pending jobs (0 = considered first)
    reason: Reason | None = None
    eta: float | None = None  # expected start (virtual/Unix seconds), None when unknown
    placement: Placement | None = None
    reserved_nodes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ScheduleResult:
    now: float
    cluster: Resources
    partitions: tuple[PartitionStatus, ...]
    queues: Mapping[str, QueueStatus]  # in tree order (depth-first, children sorted)
    plans: Mapping[JobKey, JobPlan]
    placements: tuple[Placement, ...]  # to bind now, in decision order
    pending_order: tuple[JobKey, ...]
    stats: Mapping[str, float] = field(default_factory=dict)
