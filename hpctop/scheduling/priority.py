"""Slurm multifactor priority (SCHEDULERS.md §8.2) with an ``sprio``-style breakdown.

Why: a single integer hides why one job is ahead of another; keeping every normalised factor and
its weighted value lets the console show ``sprio`` columns and lets tests check the arithmetic.
Slurm semantics kept here (hand-checked against priority_multifactor.shtml): the age factor
represents "the length of time a job has been sitting in the queue and eligible to run"
("Age Factor"), and a held job is not eligible: only ``PriorityFlags=ACCRUE_ALWAYS``
(slurm.conf(5)) increases the age factor "despite job ineligibility due to either dependencies,
holds or begin time in the future". So a held job's age factor is 0. The partition factor is
the partition's PriorityJobFactor over the largest one
(``PartitionSpec.job_factor``, not PriorityTier, which orders evaluation in ``core``).
Fair-share is the classic ``2^(-U/S)`` (not Fair Tree): it is a function of the queue alone, so a
whole queue's jobs share one factor and the computation is O(queues), not O(jobs x users).

A running job's priority is frozen at its start, all of it (:class:`FrozenPriorities`): Slurm
recalculates only pending jobs' priorities (priority_multifactor.c, slurm-22-05-8-1,
``decay_apply_weighted_factors``: "Priority 0 is reserved for held jobs. Also skip priority
re_calculation for non-pending jobs", unless ``PriorityFlags=CALCULATE_RUNNING``), so the value
``squeue -o %Q`` shows for a running job is the one it started with. The core is a pure function
of one snapshot and keeps no history, so the breakdown a job had when the core placed it rides on
its :class:`~hpctop.scheduling.types.Placement`, and whoever binds the placements (the session)
keeps it while the job runs. A job nobody saw start (running when the session began) falls back
to today's factors with the age taken at its start.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace

from hpctop.model.objects import Job, JobKey
from hpctop.model.policy import PriorityWeights
from hpctop.model.states import JobState
from hpctop.scheduling.types import JobPlan, Placement, PriorityBreakdown, ScheduleResult

FACTORS = ("age", "fairshare", "jobsize", "partition", "qos")


@dataclass(frozen=True, slots=True)
class PriorityInputs:
    """Cluster-wide normalisers, computed once per cycle."""

    max_tier: int
    max_qos: int


def requested_gpu_cpu(job: Job) -> tuple[int, int]:
    """``(job.requested.gpu, job.requested.cpu)`` without building the ``Resources`` sum.

    Why: ``Job.requested`` scales the member's request into a new vector on every read, and the
    job-size factor is read per job per cycle (every running job's plan in the console's first
    view: ~7 us of the ~25 us a running plan cost, profiled at P4's 50,000 jobs)."""
    total = job.requested_total
    if total is not None:
        return total.gpu, total.cpu
    per, members = job.per_member, job.members
    return per.gpu * members, per.cpu * members


def job_size_factor(job: Job, gpus_in_partitions: int, cpus_in_partitions: int) -> float:
    """Requested GPUs over the GPUs of the job's partition(s); CPUs when it asks no GPU."""
    gpu, cpu = requested_gpu_cpu(job)
    if gpu > 0:
        return min(gpu / gpus_in_partitions, 1.0) if gpus_in_partitions > 0 else 1.0
    if cpus_in_partitions <= 0:
        return 0.0
    return min(max(cpu, 0) / cpus_in_partitions, 1.0)


def age_factor(job: Job, now: float, weights: PriorityWeights) -> float:
    """Waiting time over ``max_age``, capped at 1; 0 while held (a held job is not eligible)."""
    if job.state == JobState.HELD:
        return 0.0
    wait = max(now - job.submit_time, 0.0)
    return min(wait / weights.max_age, 1.0) if weights.max_age > 0 else 1.0


def breakdown(
    job: Job,
    *,
    now: float,
    weights: PriorityWeights,
    inputs: PriorityInputs,
    fairshare: float,
    tier: int,
    gpus_in_partitions: int,
    cpus_in_partitions: int,
) -> PriorityBreakdown:
    """The five factors in [0, 1], each times its weight, and the rounded total (0 when held).

    ``tier`` is the PriorityJobFactor of the job's partition(s) (``PartitionSpec.job_factor``).
    """
    age = age_factor(job, now, weights)
    part = min(max(tier, 0) / inputs.max_tier, 1.0) if inputs.max_tier > 0 else 0.0
    value = job.priority_value or 0
    qos = min(max(value, 0) / inputs.max_qos, 1.0) if inputs.max_qos > 0 else 0.0
    factors = {
        "age": age,
        "fairshare": min(max(fairshare, 0.0), 1.0),
        "jobsize": job_size_factor(job, gpus_in_partitions, cpus_in_partitions),
        "partition": part,
        "qos": qos,
    }
    w = {
        "age": weights.age,
        "fairshare": weights.fairshare,
        "jobsize": weights.jobsize,
        "partition": weights.partition,
        "qos": weights.qos,
    }
    weighted = {name: factors[name] * w[name] for name in FACTORS}
    total = 0 if job.state == JobState.HELD else round(sum(weighted[name] for name in FACTORS))
    return PriorityBreakdown(factors=factors, weighted=weighted, total=total)


def static_terms(
    job: Job,
    *,
    weights: PriorityWeights,
    inputs: PriorityInputs,
    tier: int,
    gpus_in_partitions: int,
    cpus_in_partitions: int,
) -> tuple[float, float, float]:
    """The weighted job-size, partition and QoS factors: what of a total does not move with the
    clock or the queue's usage (kept per job between cycles by the core; ``total_with``)."""
    part = min(max(tier, 0) / inputs.max_tier, 1.0) if inputs.max_tier > 0 else 0.0
    value = job.priority_value or 0
    qos = min(max(value, 0) / inputs.max_qos, 1.0) if inputs.max_qos > 0 else 0.0
    size = job_size_factor(job, gpus_in_partitions, cpus_in_partitions)
    return size * weights.jobsize, part * weights.partition, qos * weights.qos


def total_with(
    job: Job, terms: tuple[float, float, float], *, now: float, weights: PriorityWeights, fairshare: float
) -> int:
    """``total`` from ``static_terms``: the same products, summed in the same order."""
    if job.state == JobState.HELD:
        return 0
    size, part, qos = terms
    return round(
        0
        + age_factor(job, now, weights) * weights.age
        + min(max(fairshare, 0.0), 1.0) * weights.fairshare
        + size
        + part
        + qos
    )


def total(
    job: Job,
    *,
    now: float,
    weights: PriorityWeights,
    inputs: PriorityInputs,
    fairshare: float,
    tier: int,
    gpus_in_partitions: int,
    cpus_in_partitions: int,
) -> int:
    """``breakdown(...).total`` without the breakdown's dicts (the cycle orders by it alone).

    The same factors, multiplied and summed in the same order (``FACTORS``), so the float sum and
    its rounding are the same.
    """
    if job.state == JobState.HELD:
        return 0
    terms = static_terms(
        job,
        weights=weights,
        inputs=inputs,
        tier=tier,
        gpus_in_partitions=gpus_in_partitions,
        cpus_in_partitions=cpus_in_partitions,
    )
    return total_with(job, terms, now=now, weights=weights, fairshare=fairshare)


class FrozenPriorities:
    """The priority each job had when it was placed, kept while it runs (Slurm freezes it then).

    :meth:`started` records the placements a scheduling point bound; :meth:`apply` gives a
    cycle's result whose running jobs' plans carry that priority instead of one computed now,
    and forgets the jobs that no longer run (ended, requeued, preempted: a job placed again gets
    the priority of its new start). Plans stay lazy: a running plan is made only when read.
    """

    __slots__ = ("_at_start",)

    def __init__(self) -> None:
        self._at_start: dict[JobKey, PriorityBreakdown] = {}

    def __len__(self) -> int:
        return len(self._at_start)

    def started(self, placements: Iterable[Placement]) -> None:
        for placement in placements:
            if placement.priority is not None:
                self._at_start[placement.job] = placement.priority

    def apply(self, result: ScheduleResult, jobs: Mapping[JobKey, Job]) -> ScheduleResult:
        at_start = self._at_start
        for key in [k for k in at_start if (job := jobs.get(k)) is None or not job.state.is_active]:
            del at_start[key]
        if not at_start:
            return result
        return replace(result, plans=_FrozenPlans(result.plans, dict(at_start)))


class _FrozenPlans(Mapping[JobKey, JobPlan]):
    """``plans`` with the running jobs' priorities as they were at their start."""

    __slots__ = ("_at_start", "_plans")

    def __init__(self, plans: Mapping[JobKey, JobPlan], at_start: dict[JobKey, PriorityBreakdown]) -> None:
        self._plans = plans
        self._at_start = at_start

    def __getitem__(self, key: JobKey) -> JobPlan:
        plan = self._plans[key]
        frozen = self._at_start.get(key)
        return plan if frozen is None or plan.order is not None else replace(plan, priority=frozen)

    def __contains__(self, key: object) -> bool:
        return key in self._plans

    def __iter__(self) -> Iterator[JobKey]:
        return iter(self._plans)

    def __len__(self) -> int:
        return len(self._plans)
