"""Normalised job states and pending-reason codes (SCHEDULERS.md §1.4, §1.5).

Every backend's vocabulary (Kueue conditions, YuniKorn application states, PodGroup phases, pod
phases) is folded into these two enums, so the core, the tables and the console speak one
language, and users coming from Slurm see the squeue codes they know.
"""

from __future__ import annotations

from enum import StrEnum


class JobState(StrEnum):
    PENDING = "PENDING"
    HELD = "HELD"
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    SUSPENDED = "SUSPENDED"
    COMPLETING = "COMPLETING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    PREEMPTED = "PREEMPTED"
    REQUEUED = "REQUEUED"
    TIMEOUT = "TIMEOUT"
    NODE_FAIL = "NODE_FAIL"
    OOM = "OOM"
    UNKNOWN = "UNKNOWN"

    @property
    def code(self) -> str:
        """The squeue state code (``PD``, ``R``, ``CD``, ...)."""
        return _CODES[self]

    # The three predicates read module-level frozensets: a tuple of ``JobState.X`` built per
    # call looked each member up on the enum class (slow in CPython 3.11) and cost ~1.5 us, asked
    # several times per derived job row (issue 16, P3 profile: bench/README.md, session 12 watch).

    @property
    def is_pending(self) -> bool:
        return self in _PENDING

    @property
    def is_active(self) -> bool:
        """Holds resources on nodes now."""
        return self in _ACTIVE

    @property
    def is_finished(self) -> bool:
        return self in _FINISHED


_PENDING = frozenset((JobState.PENDING, JobState.HELD, JobState.REQUEUED, JobState.PREEMPTED))
_ACTIVE = frozenset((JobState.STARTING, JobState.RUNNING, JobState.COMPLETING, JobState.SUSPENDED))
_FINISHED = frozenset(
    (
        JobState.COMPLETED,
        JobState.FAILED,
        JobState.CANCELLED,
        JobState.TIMEOUT,
        JobState.NODE_FAIL,
        JobState.OOM,
    )
)


_CODES = {
    JobState.PENDING: "PD",
    JobState.HELD: "PD",
    JobState.STARTING: "CF",
    JobState.RUNNING: "R",
    JobState.SUSPENDED: "S",
    JobState.COMPLETING: "CG",
    JobState.COMPLETED: "CD",
    JobState.FAILED: "F",
    JobState.CANCELLED: "CA",
    JobState.PREEMPTED: "PR",
    JobState.REQUEUED: "RQ",
    JobState.TIMEOUT: "TO",
    JobState.NODE_FAIL: "NF",
    JobState.OOM: "OOM",
    JobState.UNKNOWN: "?",
}


class ReasonCode(StrEnum):
    """Why a job is pending, in precedence order (first match wins)."""

    HELD = "Held"
    QUEUE_HELD = "QueueHeld"
    INADMISSIBLE = "Inadmissible"
    NO_MATCHING_FLAVOR = "NoMatchingFlavor"
    QUOTA_EXCEEDED = "QuotaExceeded"
    PRIORITY = "Priority"
    BACKOFF = "Backoff"
    ADMISSION_CHECK = "AdmissionCheck"
    GATED = "Gated"
    DEPENDENCY = "Dependency"
    GANG_INCOMPLETE = "GangIncomplete"
    GANG_TIMEOUT = "GangTimeout"
    PREEMPTING = "Preempting"
    RESOURCES = "Resources"
    CONSTRAINTS = "Constraints"
    NODE_UNAVAILABLE = "NodeUnavailable"
    TOPOLOGY = "Topology"
    #: the scheduler refused it for a reason no known plugin states (its message is the evidence)
    UNSCHEDULABLE = "Unschedulable"
    WAITING_FOR_SCHEDULING = "WaitingForScheduling"
    STARTING = "Starting"

    @property
    def slurm(self) -> str:
        """The Slurm pending reason this code mirrors."""
        return _SLURM[self]


_SLURM = {
    ReasonCode.HELD: "JobHeldUser",
    ReasonCode.QUEUE_HELD: "PartitionDown",
    ReasonCode.INADMISSIBLE: "InvalidQOS",
    ReasonCode.NO_MATCHING_FLAVOR: "BadConstraints",
    ReasonCode.QUOTA_EXCEEDED: "QOSGrpGRES",
    ReasonCode.PRIORITY: "Priority",
    ReasonCode.BACKOFF: "BeginTime",
    ReasonCode.ADMISSION_CHECK: "Licenses",
    ReasonCode.GATED: "SchedDefer",
    ReasonCode.DEPENDENCY: "Dependency",
    ReasonCode.GANG_INCOMPLETE: "None",
    ReasonCode.GANG_TIMEOUT: "None",
    ReasonCode.PREEMPTING: "None",
    ReasonCode.RESOURCES: "Resources",
    ReasonCode.CONSTRAINTS: "BadConstraints",
    ReasonCode.NODE_UNAVAILABLE: "ReqNodeNotAvail",
    ReasonCode.TOPOLOGY: "Resources",
    ReasonCode.UNSCHEDULABLE: "BadConstraints",
    ReasonCode.WAITING_FOR_SCHEDULING: "None",
    ReasonCode.STARTING: "Prolog",
}
