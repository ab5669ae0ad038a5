"""The jobs table (``hpctop jobs``, like ``squeue``): one row per job, joined with the core's plan.

A row joins what the cluster says about a job (its :class:`~hpctop.model.objects.Job`: state,
members, nodes, times) with what the scheduling core concluded (its
:class:`~hpctop.scheduling.types.JobPlan`: priority, pending reason, position and ETA). The core's
reason wins over the one observed on the pods because it is computed from the whole cluster; the
observed one is the fallback for jobs the core has no plan for.

Finished jobs are left out unless asked for (``--all`` or a ``--state`` that names them), as
squeue does after ``MinJobAge``: a demo that has run for a day would otherwise show mostly
history. Default order: running jobs (oldest start first), then pending jobs in the order the
core considers them, then the other pending ones by priority, then finished jobs, newest first.

Slurm jobs read through slurmrestd (``--slurm-url``) become rows of the same shape with
``backend: "slurm"``: Slurm's own state word and squeue code, its reason and priority, and its
own expected start as the ETA (``eta_source: "scheduler"``); hpctop's core adds nothing to them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hpctop.backends.slurm.wire import SlurmJob, expand_hostlist
from hpctop.model.backends.gang_message import gang_status
from hpctop.model.objects import Job, Node
from hpctop.model.resources import gpu_equivalent_milli, mig_counts
from hpctop.model.states import JobState
from hpctop.model.store import Snapshot
from hpctop.model.topology import admission_fair_sharing, job_topology, multikueue_cluster, topology_objects
from hpctop.scheduling.observed import FORECAST_MARK, merge
from hpctop.scheduling.positions import estimated_positions
from hpctop.scheduling.types import JobPlan, ScheduleResult
from hpctop.tables.fmt import duration, from_milli, hostlist, iso
from hpctop.tables.keys import JOB_CSV_KEYS as CSV_KEYS
from hpctop.tables.keys import JOB_SORT_KEYS as SORT_KEYS
from hpctop.tables.render import Column, Row, number, plain
from hpctop.tables.select import partition_matches, queue_matches

__all__ = [
    "COLUMNS",
    "CSV_KEYS",
    "SORT_KEYS",
    "JobFilters",
    "job_row",
    "job_rows",
    "select_jobs",
    "short_partitions",
    "slurm_job_row",
    "slurm_job_rows",
]


def _reason_shown(job: Job) -> bool:
    return job.state.is_pending or job.state == JobState.STARTING


def job_row(
    job: Job,
    plan: JobPlan | None,
    now: float,
    default_queue: str | None = None,
    nodes: Mapping[str, Node] | None = None,
) -> Row:
    """One job as a dict of JSON values (times ISO-8601 UTC, GPUs as numbers, durations in seconds).

    State, reason and ETA come from :func:`hpctop.scheduling.observed.merge`: the owner
    scheduler's word first, the core's plan as a labelled forecast (``eta_source``,
    ``reason_source``).
    """
    view = merge(job, plan, nodes)
    reason = view.reason
    elapsed: float | None = None
    if job.start_time is not None:
        if job.state.is_active:
            elapsed = now - job.start_time
        elif job.state.is_finished and job.end_time is not None:
            elapsed = job.end_time - job.start_time
    eta = view.eta
    requested = job.requested
    row: Row = {
        "id": job.id,
        "namespace": job.namespace,
        "name": job.name,
        "user": job.user,
        "kind": job.kind.value,
        "owner_kind": job.owner_kind,
        "queue": job.queue or default_queue,
        "partition": (plan.partition if plan is not None and plan.partition else None) or job.partition,
        "state": view.state.value,
        "code": view.state.code,
        "reason": reason.code.value if reason is not None else None,
        "reason_message": reason.message if reason is not None and reason.message else None,
        "priority": plan.priority.total if plan is not None else 0,
        "priority_class": job.priority_class,
        "order": view.order,
        "members": job.members,
        "min_members": job.min_members,
        "running_members": job.running_members,
        "pending_members": job.pending_members,
        # a MIG slice asked for by profile (mixed strategy) is the share of a GPU it is
        "gpus": from_milli(gpu_equivalent_milli(requested)),
        "gpus_per_member": from_milli(gpu_equivalent_milli(job.per_member)),
        "cpus": from_milli(requested.cpu),
        "memory": requested.memory,
        "nodes": list(job.nodes),
        "submit_time": iso(job.submit_time),
        "start_time": iso(job.start_time),
        "end_time": iso(job.end_time),
        "eta": iso(eta),
        "elapsed": int(max(elapsed, 0.0)) if elapsed is not None else None,
        "time_limit": job.time_limit,
        "restart_count": job.restart_count,
        "backfilled": job.backfilled
        or bool(plan is not None and plan.placement is not None and plan.placement.backfilled),
        "eta_source": view.eta_source,
        "reason_source": view.reason_source,
        "binder": view.binder,
        "queue_layer": view.queue_layer,
    }
    slices = mig_counts(requested)
    if slices:
        row["mig"] = slices  # {"3g.40gb": 1}: which slices the GPUS figure is made of
    return row


def _default_order(job: Job, plan: JobPlan | None) -> tuple[Any, ...]:
    state = job.state
    if state.is_active:
        return (0, job.start_time or job.submit_time, 0, job.id)
    if state.is_pending:
        if plan is not None and plan.order is not None:
            return (1, plan.order, 0, job.id)
        priority = plan.priority.total if plan is not None else 0
        return (2, -priority, job.submit_time, job.id)
    if state.is_finished:
        return (4, -(job.end_time or job.submit_time), 0, job.id)
    return (3, job.submit_time, 0, job.id)


@dataclass(frozen=True, slots=True)
class JobFilters:
    """The jobs table's filters (``-t``, ``-a``, ``-q``, ``-p``, ``-n``, ``-u``, ``--start``), one rule
    for every backend: :func:`select_jobs` (the cluster's jobs) and :func:`slurm_job_rows` (Slurm's)
    both ask this value, so a filter cannot mean one thing for one and another for the other."""

    states: frozenset[JobState] | None = None
    include_finished: bool = False
    queues: tuple[str, ...] = ()
    partitions: tuple[str, ...] = ()
    namespaces: frozenset[str] = frozenset()
    users: frozenset[str] = frozenset()
    pending_only: bool = False

    @classmethod
    def of(
        cls,
        *,
        states: Collection[JobState] | None = None,
        include_finished: bool = False,
        queues: Iterable[str] = (),
        partitions: Iterable[str] = (),
        namespaces: Iterable[str] = (),
        users: Iterable[str] = (),
        pending_only: bool = False,
    ) -> JobFilters:
        return cls(
            states=frozenset(states) if states is not None else None,
            include_finished=include_finished,
            queues=tuple(queues),
            partitions=tuple(partitions),
            namespaces=frozenset(namespaces),
            users=frozenset(users),
            pending_only=pending_only,
        )

    def names_state(self, word: str, code: str) -> bool:
        """Whether ``--state`` names a state given as a word and squeue code (Slurm's, which
        need not be one of hpctop's :class:`JobState`: ``CONFIGURING``, ``REQUEUE_HOLD``)."""
        if self.states is None:
            return False
        return word in {s.value for s in self.states} or code in {s.code for s in self.states}

    def admits_state(self, named: bool, *, finished: bool, pending: bool) -> bool:
        """``named``: the state is one ``--state`` names; without ``--state``, finished jobs need ``-a``."""
        if self.states is not None:
            if not named:
                return False
        elif finished and not self.include_finished:
            return False
        return pending or not self.pending_only

    def admits_owner(self, namespace: str | None, user: str | None) -> bool:
        """``-n`` and ``-u``; a job in no namespace (a Slurm job) never passes ``-n``."""
        if self.namespaces and namespace not in self.namespaces:
            return False
        return not self.users or user in self.users

    def admits_place(self, queue: str | None, partition: str | None) -> bool:
        """``-q`` (a queue path, parent or leaf) and ``-p``."""
        if self.queues and not queue_matches(queue, list(self.queues)):
            return False
        return not self.partitions or partition_matches(partition, list(self.partitions))


def select_jobs(
    snapshot: Snapshot,
    result: ScheduleResult,
    filters: JobFilters | None = None,
    *,
    default_queue: str | None = None,
) -> list[tuple[Job, JobPlan | None, Row]]:
    """The jobs that pass the filters, each with its plan and row, in the default order."""
    wanted = filters or JobFilters()
    picked: list[tuple[tuple[Any, ...], Job, JobPlan | None, Row]] = []
    found_topology = topology_objects(snapshot.objects)
    positions = estimated_positions(snapshot.jobs.values(), snapshot.objects)
    for key, job in snapshot.jobs.items():
        named = wanted.states is not None and job.state in wanted.states
        if not wanted.admits_state(named, finished=job.state.is_finished, pending=job.state.is_pending):
            continue
        if not wanted.admits_owner(job.namespace, job.user):
            continue
        plan = result.plans.get(key)
        row = job_row(job, plan, result.now, default_queue, snapshot.nodes)
        # keys present only where a scheduler or a node label says something (a plain cluster's
        # rows keep their keys)
        topology = job_topology(job, snapshot.objects, snapshot.nodes, found_topology)
        if topology is not None:
            row["topology"] = topology
        remote = multikueue_cluster(job, snapshot.objects) if job.backend_objects else None
        if remote is not None:
            row["multikueue"] = remote
        fair = admission_fair_sharing(job, snapshot.objects) if job.backend_objects else None
        if fair is not None:
            row["admission_fair_sharing"] = fair
        counts = gang_status(job.reasons) if job.reasons else None
        if counts is not None:
            row["gang_status"] = counts
        position = positions.get(key)
        if position is not None:
            row["queue_position"] = position.as_dict()  # the backend's documented order: an estimate
        if not wanted.admits_place(row["queue"], row["partition"]):
            continue
        picked.append((_default_order(job, plan), job, plan, row))
    picked.sort(key=lambda item: item[0])
    return [(job, plan, row) for _, job, plan, row in picked]


def job_rows(
    snapshot: Snapshot,
    result: ScheduleResult,
    *,
    states: Collection[JobState] | None = None,
    include_finished: bool = False,
    queues: Iterable[str] = (),
    partitions: Iterable[str] = (),
    namespaces: Iterable[str] = (),
    users: Iterable[str] = (),
    default_queue: str | None = None,
) -> list[Row]:
    """Rows for the jobs that pass the filters, in the default order (see the module docstring)."""
    filters = JobFilters.of(
        states=states,
        include_finished=include_finished,
        queues=queues,
        partitions=partitions,
        namespaces=namespaces,
        users=users,
    )
    return [row for _, _, row in select_jobs(snapshot, result, filters, default_queue=default_queue)]


#: squeue's state codes (squeue.1, JOB STATE CODES)
SLURM_STATE_CODES = {
    "BOOT_FAIL": "BF",
    "CANCELLED": "CA",
    "COMPLETED": "CD",
    "CONFIGURING": "CF",
    "COMPLETING": "CG",
    "DEADLINE": "DL",
    "FAILED": "F",
    "NODE_FAIL": "NF",
    "OUT_OF_MEMORY": "OOM",
    "PENDING": "PD",
    "PREEMPTED": "PR",
    "RUNNING": "R",
    "RESV_DEL_HOLD": "RD",
    "REQUEUE_FED": "RF",
    "REQUEUE_HOLD": "RH",
    "REQUEUED": "RQ",
    "RESIZING": "RS",
    "REVOKED": "RV",
    "SIGNALING": "SI",
    "SPECIAL_EXIT": "SE",
    "STAGE_OUT": "SO",
    "STOPPED": "ST",
    "SUSPENDED": "S",
    "TIMEOUT": "TO",
}
_SLURM_ACTIVE = frozenset({"RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "SIGNALING", "STAGE_OUT"})
_SLURM_PENDING = frozenset({"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"})
_MEMORY_UNITS = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def _tres(text: str) -> dict[str, str]:
    """``cpu=2,mem=4000M,node=2,gres/gpu=4`` as a dict."""
    pairs = (item.partition("=") for item in text.split(",") if "=" in item)
    return {key: value for key, _, value in pairs}


def _tres_count(value: str | None) -> float:
    try:
        return float(value) if value else 0.0
    except ValueError:
        return 0.0


def _tres_memory(value: str | None) -> int | None:
    if not value:
        return None
    unit = _MEMORY_UNITS.get(value[-1].upper())
    digits = value[:-1] if unit is not None else value
    try:
        return int(float(digits) * (unit or _MEMORY_UNITS["M"]))  # Slurm's default unit is MB
    except ValueError:
        return None


def slurm_job_row(job: SlurmJob, now: float) -> Row:
    """One Slurm job as a job row: the keys of :func:`job_row`, Slurm's values, ``backend: slurm``.

    ``id`` is squeue's ``%i`` (``123_4`` for an array task); the queue is the Slurm account (what
    ``sshare`` groups by). A pending job's ``start_time`` from slurmrestd is Slurm's own expected
    start (what ``squeue --start`` prints), so it is the ETA, marked as the scheduler's.
    """
    active = job.state in _SLURM_ACTIVE
    pending = job.state in _SLURM_PENDING
    started = job.start_time if job.start_time > 0 and not pending else None
    eta = job.start_time if pending and job.start_time > 0 else None
    tres = _tres(job.tres)
    nodes = expand_hostlist(job.nodes)
    array = job.array_task_id is not None and job.array_job_id is not None
    reason = None if job.reason in ("", "None") else job.reason
    return {
        "id": f"{job.array_job_id}_{job.array_task_id}" if array else str(job.job_id),
        "backend": "slurm",
        "slurm_job_id": job.job_id,
        "namespace": None,
        "name": job.name,
        "user": job.user,
        "kind": "slurm",
        "owner_kind": None,
        "queue": job.account or None,
        "account": job.account or None,
        "qos": job.qos or None,
        "partition": job.partition or None,
        "state": job.state,
        "code": SLURM_STATE_CODES.get(job.state, job.state[:2]),
        "reason": reason,
        "reason_message": None,
        "priority": job.priority,
        "priority_class": None,
        "order": None,
        "members": None,  # a Slurm job has nodes (``nodes``), not pods
        "min_members": None,
        "running_members": None,
        "pending_members": None,
        "gpus": float(job.gpus),
        "gpus_per_member": None,
        "cpus": _tres_count(tres.get("cpu")),
        "memory": _tres_memory(tres.get("mem")),
        "nodes": nodes,
        "submit_time": iso(float(job.submit_time)) if job.submit_time else None,
        "start_time": iso(float(started)) if started is not None else None,
        "end_time": None,
        "eta": iso(float(eta)) if eta is not None else None,
        "elapsed": int(max(now - started, 0)) if started is not None and active else None,
        "time_limit": job.time_limit_min * 60 if job.time_limit_min is not None else None,
        "restart_count": None,
        "backfilled": None,  # slurmrestd does not say
        "eta_source": "scheduler" if eta is not None else None,
        "reason_source": "scheduler" if reason is not None else None,
        "binder": None,
        "queue_layer": None,
    }


def _slurm_order(row: Row) -> tuple[Any, ...]:
    """Like :func:`_default_order`: running (oldest start first), pending by priority, the rest."""
    if row["state"] in _SLURM_ACTIVE:
        return (0, row["start_time"] or "", 0, row["slurm_job_id"])
    if row["state"] in _SLURM_PENDING:
        return (2, -row["priority"], row["submit_time"] or "", row["slurm_job_id"])
    return (4, 0, "", row["slurm_job_id"])


def slurm_job_rows(jobs: Iterable[SlurmJob], now: float, filters: JobFilters | None = None) -> list[Row]:
    """Rows for the Slurm jobs that pass ``filters`` (states by name or squeue code), in squeue's order."""
    wanted = filters or JobFilters()
    rows: list[Row] = []
    for job in jobs:
        row = slurm_job_row(job, now)
        state = row["state"]
        named = wanted.names_state(state, row["code"])
        finished = state not in _SLURM_ACTIVE | _SLURM_PENDING
        if not wanted.admits_state(named, finished=finished, pending=state in _SLURM_PENDING):
            continue
        if not wanted.admits_owner(None, row["user"]):  # Slurm jobs live in no Kubernetes namespace
            continue
        if not wanted.admits_place(row["queue"], row["partition"]):
            continue
        rows.append(row)
    rows.sort(key=_slurm_order)
    return rows


def _nodelist_reason(_: Any, row: Row) -> str:
    if row["reason"] is not None and not row["nodes"]:
        return f"({row['reason']})"
    if row["nodes"]:
        return hostlist(row["nodes"])
    return "-"


def short_partitions(value: Any, _: Row) -> str:
    """A job eligible for many partitions shows the first two and a count (JSON has them all)."""
    names = str(value).split(",") if value else []
    if len(names) <= 3:
        return ",".join(names) or "-"
    return f"{names[0]},{names[1]},+{len(names) - 2}"


def _pods(_: Any, row: Row) -> str:
    if row["members"] is None:  # a Slurm job has nodes, not pods
        return "-"
    return f"{row['running_members']}/{row['members']}"


def _nodes(_: Any, row: Row) -> str:
    return str(len(row["nodes"])) if row["nodes"] else "-"


def _gpus(value: Any, row: Row) -> str:
    """``2``, or ``0.43 (1x3g.40gb)`` for a job holding MIG slices; ``-`` for a job that asks for
    no GPU (as the table writes every "none", and squeue leaves TRES empty): JSON and CSV, the
    data, keep the number 0."""
    if not value:
        return "-"
    text = number(float(value))
    slices = row.get("mig")
    if isinstance(slices, Mapping) and slices:
        text += " (" + ",".join(f"{n}x{p}" for p, n in sorted(slices.items())) + ")"
    return text


def _time(value: Any, _: Row) -> str:
    return duration(value)


def _eta(value: Any, row: Row) -> str:
    """An ETA as the table prints it: ``~`` before one that is hpctop's forecast, not the owner's."""
    text = plain(value)
    return f"{FORECAST_MARK}{text}" if value is not None and row.get("eta_source") == "forecast" else text


COLUMNS = (
    Column("id", "JOBID"),
    Column("name", "NAME"),
    Column("user", "USER"),
    Column("queue", "QUEUE"),
    Column("partition", "PARTITION", "left", short_partitions),
    Column("code", "ST"),
    Column("priority", "PRIO", "right"),
    Column("members", "PODS", "right", _pods),
    Column("nodes", "NODES", "right", _nodes),
    Column("gpus", "GPUS", "right", _gpus),
    Column("elapsed", "TIME", "right", _time),
    Column("eta", "ETA", "left", _eta),
    Column("reason", "NODELIST(REASON)", "left", _nodelist_reason, width=60),
)
