"""Scheduling policy as data: partitions, the queue tree's quotas, priority weights.

A policy comes from a scenario file, from hpctop's config file for a cluster without a batch
scheduler, or (issue "live read path") from a scheduler's own configuration. It lives in the
model layer because sources build it and the core reads it; it holds no behaviour but defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from hpctop.model.resources import Resources

ROOT = "root"
DEFAULT_QUEUE = "root.default"
DEFAULT_PARTITION_LABEL = "nvidia.com/gpu.product"
CPU_PARTITION = "cpu"


class PartitionState(StrEnum):
    UP = "up"
    DRAIN = "drain"  # running work continues, nothing new starts
    DOWN = "down"


class QueueState(StrEnum):
    OPEN = "open"
    CLOSED = "closed"  # pending work waits (QueueHeld)


@dataclass(frozen=True, slots=True)
class PartitionSpec:
    """A named set of nodes chosen by label selector (every pair must match).

    Slurm's two partition numbers (slurm.conf(5), "PARTITION CONFIGURATION"): ``PriorityTier``
    orders evaluation (``evaluation_tier``: "Jobs submitted to a partition with a higher
    PriorityTier value will be evaluated by the scheduler before pending jobs in a partition with
    a lower PriorityTier value") and ``PriorityJobFactor`` feeds the partition factor of the
    multifactor priority. ``priority_tier`` is hpctop's older field: it always meant the factor
    (docs/scheduler.md), and stays that factor unless ``priority_job_factor`` is given.
    """

    name: str
    selector: tuple[tuple[str, str], ...]
    priority_tier: int = 1  # the older name of the PriorityJobFactor (see ``job_factor``)
    state: PartitionState = PartitionState.UP
    #: a partition that selects nodes *without* GPUs (the default ``cpu`` partition)
    cpu_only: bool = False
    #: Slurm's PriorityJobFactor; None: ``priority_tier`` is the factor (the older meaning)
    priority_job_factor: int | None = None
    #: Slurm's PriorityTier: partitions of a higher tier are evaluated first, whatever the priority
    evaluation_tier: int = 1

    @property
    def job_factor(self) -> int:
        """The PriorityJobFactor: ``priority_job_factor`` when set, else the older ``priority_tier``."""
        return self.priority_tier if self.priority_job_factor is None else self.priority_job_factor

    def matches(self, labels: dict[str, str], gpu_count: int) -> bool:
        if self.cpu_only and gpu_count > 0:
            return False
        return all(labels.get(k) == v for k, v in self.selector)


@dataclass(frozen=True, slots=True)
class QueueSpec:
    """One queue of the tree, by dotted path (``root.research.nlp``)."""

    path: str
    guaranteed: Resources = field(default_factory=Resources)
    max: Resources | None = None
    state: QueueState = QueueState.OPEN

    @property
    def parent(self) -> str | None:
        return self.path.rsplit(".", 1)[0] if "." in self.path else None

    @property
    def name(self) -> str:
        return self.path.rsplit(".", 1)[-1]


@dataclass(frozen=True, slots=True)
class PriorityWeights:
    """Slurm multifactor weights (SCHEDULERS.md §8.2) and the age horizon in seconds."""

    age: int = 1000
    fairshare: int = 10000
    jobsize: int = 1000
    partition: int = 1000
    qos: int = 10000
    max_age: int = 7 * 24 * 3600


@dataclass(frozen=True, slots=True)
class Policy:
    """Everything the scheduling core needs beyond the snapshot.

    ``partitions`` empty means "derive the defaults from the nodes": one partition per value of
    ``partition_label`` (the GPU product) plus ``cpu`` for nodes without GPUs.
    """

    partitions: tuple[PartitionSpec, ...] = ()
    queues: tuple[QueueSpec, ...] = ()
    weights: PriorityWeights = field(default_factory=PriorityWeights)
    default_queue: str = DEFAULT_QUEUE
    partition_label: str = DEFAULT_PARTITION_LABEL
    backfill: bool = True
    #: how many blocked jobs get a reservation (Slurm's bf_max_job_test); the rest get no ETA
    reservation_depth: int = 100
    #: pods with this schedulerName are the ones the core places (hpctop as the binder)
    scheduler_name: str = "hpctop"
