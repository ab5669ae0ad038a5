"""What the scheduling core returns: plain, frozen data for tables, panes and binders."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import FrozenInstanceError, dataclass, field

from hpctop.model.objects import JobKey, PodKey, Reason
from hpctop.model.policy import PartitionState, QueueState
from hpctop.model.resources import Resources, fast_frozen_init


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


class PriorityBreakdown:
    """Like ``sprio``: normalised factors in [0, 1], each times its weight, and the total.

    Immutable, compared and printed by its three values like a frozen dataclass. Why not one:
    the core gives every job's plan a breakdown, but the tables read only ``total`` (the job
    list, at 17k running and 13k pending jobs in P6's cluster), and the factors' two dicts per
    job were most of the cost of reading the plans, with the collections their survivors set
    off. So a subclass may know its total and make the factors when first read (``_fill``: the
    core's deferred breakdown, ``core._Deferred``).
    """

    __slots__ = ("_factors", "_weighted", "total")

    total: int
    _factors: Mapping[str, float] | None
    _weighted: Mapping[str, float] | None

    def __init__(self, factors: Mapping[str, float], weighted: Mapping[str, float], total: int) -> None:
        _set(self, "_factors", factors)
        _set(self, "_weighted", weighted)
        _set(self, "total", total)

    def _fill(self) -> None:
        """Set ``_factors`` and ``_weighted`` (a deferred breakdown; this one has them)."""
        raise AssertionError("a priority breakdown without factors")

    @property
    def factors(self) -> Mapping[str, float]:
        found = self._factors
        if found is None:
            self._fill()
            found = self._factors
            assert found is not None
        return found

    @property
    def weighted(self) -> Mapping[str, float]:
        found = self._weighted
        if found is None:
            self._fill()
            found = self._weighted
            assert found is not None
        return found

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PriorityBreakdown):
            return NotImplemented
        return (self.factors, self.weighted, self.total) == (other.factors, other.weighted, other.total)

    __hash__ = None  # type: ignore[assignment]  # (a frozen dataclass of dicts cannot be hashed either)

    def __repr__(self) -> str:
        return (
            f"PriorityBreakdown(factors={self.factors!r}, weighted={self.weighted!r}, total={self.total!r})"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (PriorityBreakdown, (self.factors, self.weighted, self.total))


_set = object.__setattr__


@fast_frozen_init  # one per pod placed, every cycle (see fast_frozen_init)
@dataclass(frozen=True, slots=True)
class PodAssignment:
    pod: PodKey
    node: str
    gpu_indices: tuple[int, ...] = ()


@fast_frozen_init  # one per job placed, every cycle (see fast_frozen_init)
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


@fast_frozen_init  # one per job whose plan is read (all of them, by the job list)
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
