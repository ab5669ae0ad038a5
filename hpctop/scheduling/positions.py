"""A pending job's place in line, by the order its own scheduler documents, labelled as an estimate.

Why: users ask where they are in the queue (kueue #770, #2833, #4046), and only Kueue publishes
positions (its visibility API, shown beside these where a live session polls it). For every other
backend, and for Kueue where the visibility API is not served, hpctop ranks the pending jobs of
each queue by the rule the backend documents, and says so: every position carries
``source: "estimate"`` and the ``rule`` it used, never passing for the scheduler's word.

The rules (the keys are a job's queueing layer, :func:`hpctop.scheduling.observed.owner_of`):

- ``kueue``: per ClusterQueue, higher Workload priority first, then the older Workload (Kueue's
  ``StrictFIFO``/``BestEffortFIFO`` queueing strategies; a requeued Workload's eviction time,
  which Kueue uses by default, is not modelled);
- ``volcano``: per Volcano queue, higher priority first, then the older job (the ``priority``
  plugin's job order, then creation time);
- ``coscheduling``: cluster-wide, higher priority first, then the older PodGroup (its
  ``QueueSort`` ``Less``);
- ``workload-api``: cluster-wide, higher pod priority first, then the older (kube-scheduler's
  ``PrioritySort``);
- ``yunikorn``: per queue, the older application first (its default ``fifo`` sort policy).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hpctop.model.objects import Job, JobKey, KueueWorkload, ObjectKey
from hpctop.model.states import JobState
from hpctop.scheduling.observed import owner_of

#: layer → (whether jobs are ranked per queue, the rule as said to the user)
RULES: dict[str, tuple[bool, str]] = {
    "kueue": (
        True,
        "Kueue's ClusterQueue order: priority, then creation time (eviction requeues not modelled)",
    ),
    "volcano": (True, "Volcano's job order: priority, then creation time"),
    "coscheduling": (False, "coscheduling's QueueSort: priority, then PodGroup creation time"),
    "workload-api": (False, "kube-scheduler's PrioritySort: priority, then creation time"),
    "yunikorn": (True, "YuniKorn's fifo sort policy: submission time"),
}


@dataclass(frozen=True, slots=True)
class Position:
    """A job's estimated place: ``position`` of ``of`` pending jobs in ``queue`` (None: cluster-wide)."""

    position: int
    of: int
    queue: str | None
    rule: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "of": self.of,
            "queue": self.queue,
            "source": "estimate",
            "rule": self.rule,
        }


def _priority_and_age(job: Job, objects: Mapping[ObjectKey, Any]) -> tuple[int, float] | None:
    """The job's (priority, creation time) for the order; None: it is no longer in line."""
    for key in job.backend_objects:
        obj = objects.get(key)
        if isinstance(obj, KueueWorkload):
            reserved = obj.condition("QuotaReserved")
            if reserved is not None and reserved.status == "True":
                return None  # admitted (here or, with MultiKueue, on a worker): out of the queue
            return (obj.priority or 0, obj.created or job.submit_time)
    return (job.priority_value or 0, job.submit_time)


def estimated_positions(jobs: Iterable[Job], objects: Mapping[ObjectKey, Any]) -> dict[JobKey, Position]:
    """Every pending job whose layer has a documented order, ranked within its line (1 = next)."""
    lines: dict[tuple[str, str | None], list[tuple[int, float, str, Job]]] = {}
    for job in jobs:
        if not job.state.is_pending or job.state == JobState.HELD:
            continue  # a held job is out of line until released (Slurm: priority 0, not eligible)
        _binder, layer = owner_of(job)
        if layer is None or layer not in RULES:
            continue
        per_queue, _rule = RULES[layer]
        found = _priority_and_age(job, objects)
        if found is None:
            continue
        priority, age = found
        if layer == "yunikorn":
            priority = 0  # fifo: submission time only
        lines.setdefault((layer, job.queue if per_queue else None), []).append((-priority, age, job.id, job))
    out: dict[JobKey, Position] = {}
    for (layer, queue), members in lines.items():
        members.sort(key=lambda m: m[:3])
        for i, (_p, _a, _id, job) in enumerate(members, 1):
            out[job.key] = Position(i, len(members), queue, RULES[layer][1])
    return out
