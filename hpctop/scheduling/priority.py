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
"""

from __future__ import annotations

from dataclasses import dataclass

from hpctop.model.objects import Job
from hpctop.model.policy import PriorityWeights
from hpctop.model.states import JobState
from hpctop.scheduling.types import PriorityBreakdown

FACTORS = ("age", "fairshare", "jobsize", "partition", "qos")


@dataclass(frozen=True, slots=True)
class PriorityInputs:
    """Cluster-wide normalisers, computed once per cycle."""

    max_tier: int
    max_qos: int


def job_size_factor(job: Job, gpus_in_partitions: int, cpus_in_partitions: int) -> float:
    """Requested GPUs over the GPUs of the job's partition(s); CPUs when it asks no GPU."""
    requested = job.requested
    if requested.gpu > 0:
        return min(requested.gpu / gpus_in_partitions, 1.0) if gpus_in_partitions > 0 else 1.0
    if cpus_in_partitions <= 0:
        return 0.0
    return min(max(requested.cpu, 0) / cpus_in_partitions, 1.0)


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
    """``breakdown(...).total`` without the breakdown's dicts (the placements-only cycle orders by it alone).

    The same factors, multiplied and summed in the same order (``FACTORS``), so the float sum and
    its rounding are the same.
    """
    if job.state == JobState.HELD:
        return 0
    age = age_factor(job, now, weights)
    part = min(max(tier, 0) / inputs.max_tier, 1.0) if inputs.max_tier > 0 else 0.0
    value = job.priority_value or 0
    qos = min(max(value, 0) / inputs.max_qos, 1.0) if inputs.max_qos > 0 else 0.0
    size = job_size_factor(job, gpus_in_partitions, cpus_in_partitions)
    return round(
        0
        + age * weights.age
        + min(max(fairshare, 0.0), 1.0) * weights.fairshare
        + size * weights.jobsize
        + part * weights.partition
        + qos * weights.qos
    )
