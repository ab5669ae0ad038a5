"""The priority table (``hpctop prio``, like ``sprio``): why one pending job comes before another.

Slurm's multifactor priority (SCHEDULERS.md §8.2) is a weighted sum of factors in [0, 1]. The
core computes it per job (:class:`~hpctop.scheduling.types.PriorityBreakdown`); this table only
shows it. The text table shows the weighted terms, as ``sprio`` does, or the normalised factors
with ``--norm`` (``sprio -n``); JSON always carries both, so a script can check that the weighted
terms add up to the total.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from hpctop.model.states import JobState
from hpctop.model.store import Snapshot
from hpctop.scheduling.types import ScheduleResult
from hpctop.tables.jobs import JobFilters, select_jobs, short_partitions
from hpctop.tables.keys import PRIO_CSV_KEYS as CSV_KEYS
from hpctop.tables.keys import PRIO_FACTORS as FACTORS
from hpctop.tables.keys import PRIO_SORT_KEYS as SORT_KEYS
from hpctop.tables.render import Column, Row, number

_HEADERS = {"partition": "PARTPRIO"}

__all__ = ["COLUMNS", "CSV_KEYS", "FACTORS", "NORM_COLUMNS", "SORT_KEYS", "prio_rows"]


def prio_rows(
    snapshot: Snapshot,
    result: ScheduleResult,
    *,
    states: Collection[JobState] | None = None,
    queues: Iterable[str] = (),
    partitions: Iterable[str] = (),
    namespaces: Iterable[str] = (),
    users: Iterable[str] = (),
    default_queue: str | None = None,
) -> list[Row]:
    """One row per pending job (pending, requeued, preempted) that the core has a plan for.

    Held jobs are left out, as ``sprio`` leaves them out (a held job is not eligible, and its
    priority is 0), unless ``states`` names ``held``.
    """
    rows = []
    filters = JobFilters.of(
        states=states,
        queues=queues,
        partitions=partitions,
        namespaces=namespaces,
        users=users,
        pending_only=True,
    )
    held_asked = states is not None and JobState.HELD in states
    for job, plan, job_row in select_jobs(snapshot, result, filters, default_queue=default_queue):
        if plan is None:
            continue
        if job.state == JobState.HELD and not held_asked:
            continue  # sprio does not list held jobs (not eligible); ``--state held`` still shows them
        factors = dict.fromkeys(FACTORS, 0.0)
        factors.update({k: round(float(v), 6) for k, v in plan.priority.factors.items()})
        weighted = dict.fromkeys(FACTORS, 0.0)
        weighted.update({k: round(float(v), 3) for k, v in plan.priority.weighted.items()})
        rows.append(
            {
                "id": job_row["id"],
                "namespace": job_row["namespace"],
                "name": job_row["name"],
                "user": job_row["user"],
                "queue": job_row["queue"],
                "partition": job_row["partition"],
                "state": job_row["state"],
                "priority": plan.priority.total,
                "order": job_row["order"],
                "factors": factors,
                "weighted": weighted,
            }
        )
    return rows


def _weighted(name: str) -> Column:
    header = _HEADERS.get(name, name.upper())
    return Column(f"weighted.{name}", header, "right", lambda v, _: number(round(float(v or 0))))


def _factor(name: str) -> Column:
    header = _HEADERS.get(name, name.upper())
    return Column(f"factors.{name}", header, "right", lambda v, _: f"{float(v or 0):.4f}")


_LEAD = (
    Column("id", "JOBID"),
    Column("user", "USER"),
    Column("queue", "QUEUE"),
    Column("partition", "PARTITION", "left", short_partitions),
    Column("priority", "PRIORITY", "right"),
)
COLUMNS = (*_LEAD, *(_weighted(f) for f in FACTORS))
NORM_COLUMNS = (*_LEAD, *(_factor(f) for f in FACTORS))
