"""Slurm's own tables from slurmrestd: ``nodes`` like ``sinfo``/``sinfo -N``, ``prio`` like ``sprio``,
``queues`` like ``sshare``.

Why separate rows from the cluster's: these are what Slurm itself says, read through slurmrestd
(``--slurm-url``), and they carry Slurm's words (``mixed``, ``drained``, ``RawShares parent``) so a
Slurm user reads them as the Slurm commands print them. hpctop's core adds nothing here.

What slurmrestd does not serve is left empty, never guessed: sprio's factors (slurmrestd serves
only a job's total priority, in every version up to v0.0.44; the QOS factor alone follows from
slurmdbd's QOS), and before v0.0.40 (no ``/shares``) sshare's usage and fair share: slurmdbd's
associations give the tree and the raw shares only, and the table says so in a note. ``queues
--qos`` is ``sacctmgr show qos``: slurmdbd's QOS, their priority, preemption and limits.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hpctop.backends.slurm.wire import (
    SlurmJob,
    SlurmNode,
    SlurmPartition,
    SlurmQos,
    SlurmShare,
    expand_hostlist,
)
from hpctop.tables.fmt import hostlist
from hpctop.tables.render import Column, Row

__all__ = [
    "NODE_COLUMNS",
    "NODE_CSV_KEYS",
    "PRIO_COLUMNS",
    "PRIO_CSV_KEYS",
    "QOS_COLUMNS",
    "QOS_CSV_KEYS",
    "SHARES_FROM_ASSOCIATIONS",
    "SHARE_COLUMNS",
    "SHARE_CSV_KEYS",
    "SUMMARY_COLUMNS",
    "SUMMARY_CSV_KEYS",
    "compact_state",
    "node_rows",
    "prio_rows",
    "qos_factors",
    "qos_rows",
    "share_rows",
    "shares_note",
    "summary_rows",
    "time_limit",
]

#: node states whose CPUs sinfo counts as "other" in CPUS(A/I/O/T), not idle
_UNAVAILABLE = ("drain", "down", "fail", "maint", "reboot", "unknown")


#: sinfo's compact state words (``%t``, what plain ``sinfo`` prints) for its long ones (``%T``)
_COMPACT = {
    "allocated": "alloc",
    "completing": "comp",
    "drained": "drain",
    "draining": "drng",
    "future": "futr",
    "mixed": "mix",
    "planned": "plnd",
    "reboot": "boot",
    "reserved": "resv",
    "unknown": "unk",
}


def compact_state(state: str) -> str:
    """``mixed`` as plain ``sinfo`` prints it (``mix``); the ``*`` of a node not responding is kept."""
    bare = state.rstrip("*")
    return _COMPACT.get(bare, bare) + state[len(bare) :]


def time_limit(minutes: int | None) -> str:
    """A limit as sinfo prints it: ``infinite``, ``30:00``, ``2:00:00``, ``1-00:00:00``."""
    if minutes is None:
        return "infinite"
    days, rest = divmod(minutes * 60, 86400)
    hours, rest = divmod(rest, 3600)
    mins, secs = divmod(rest, 60)
    if days:
        return f"{days}-{hours:02d}:{mins:02d}:{secs:02d}"
    if hours:
        return f"{hours}:{mins:02d}:{secs:02d}"
    return f"{mins}:{secs:02d}"


def _partition_name(partition: SlurmPartition | None, name: str) -> str:
    return f"{name}*" if partition is not None and partition.default else name


def _partitions_of(node: SlurmNode, known: Sequence[SlurmPartition]) -> list[str]:
    if node.partitions:
        return list(node.partitions)
    return [p.name for p in known if node.name in expand_hostlist(p.nodes)]


def node_rows(
    nodes: Iterable[SlurmNode],
    partitions: Sequence[SlurmPartition],
    *,
    wanted_partitions: Sequence[str] = (),
    states: Sequence[str] = (),
) -> list[Row]:
    """``sinfo -N``: one row per node and partition, in partition order (as slurm.conf lists them)."""
    by_name = {p.name: p for p in partitions}
    order = {p.name: i for i, p in enumerate(partitions)}
    rows: list[Row] = []
    for node in nodes:
        state = node.sinfo_state
        if states and not _state_matches(state, states):
            continue
        unavailable = state.rstrip("*").startswith(_UNAVAILABLE)
        idle = 0 if unavailable else max(node.cpus - node.alloc_cpus, 0)
        other = node.cpus - node.alloc_cpus - idle
        for name in _partitions_of(node, partitions) or [""]:
            if wanted_partitions and name not in wanted_partitions:
                continue
            rows.append(
                {
                    "backend": "slurm",
                    "node": node.name,
                    "partition": _partition_name(by_name.get(name), name) or None,
                    "state": state,
                    "cpus_alloc": node.alloc_cpus,
                    "cpus_idle": idle,
                    "cpus_other": other,
                    "cpus_total": node.cpus,
                    "memory_alloc": node.alloc_memory_mb * 2**20,
                    "memory_total": node.real_memory_mb * 2**20,
                    "gpus_alloc": node.gpus_used,
                    "gpus_total": node.gpus,
                    "gres": node.gres or None,
                    "gres_used": node.gres_used or None,
                    "reason": node.reason or None,
                    "reason_user": node.reason_user or None,
                    "_order": (order.get(name, len(order)), node.name),
                }
            )
    rows.sort(key=lambda r: r.pop("_order"))
    return rows


def _state_matches(state: str, wanted: Sequence[str]) -> bool:
    """sinfo ``-t``: a state word or its prefix (``drain`` matches ``drained`` and ``draining``)."""
    bare = state.rstrip("*")
    return any(bare.startswith(w.lower()) for w in wanted)


def summary_rows(
    nodes: Iterable[SlurmNode],
    partitions: Sequence[SlurmPartition],
    *,
    wanted_partitions: Sequence[str] = (),
    states: Sequence[str] = (),
) -> list[Row]:
    """``sinfo``: one row per partition and node state, with the count and the hostlist."""
    by_name = {p.name: p for p in partitions}
    groups: dict[tuple[str, str], list[str]] = {}
    for row in node_rows(nodes, partitions, wanted_partitions=wanted_partitions, states=states):
        name = (row["partition"] or "").rstrip("*")
        groups.setdefault((name, row["state"]), []).append(row["node"])
    order = {p.name: i for i, p in enumerate(partitions)}
    rows: list[Row] = []
    for (name, state), members in sorted(groups.items(), key=lambda g: (order.get(g[0][0], 99), g[0][1])):
        partition = by_name.get(name)
        rows.append(
            {
                "backend": "slurm",
                "partition": _partition_name(partition, name),
                "avail": partition.state.lower() if partition is not None else None,
                "timelimit": time_limit(partition.max_time_min) if partition is not None else None,
                "nodes": len(members),
                "state": state,
                "state_compact": compact_state(state),
                "nodelist": hostlist(members),
                "priority_tier": partition.priority_tier if partition is not None else None,
                "priority_job_factor": partition.priority_job_factor if partition is not None else None,
            }
        )
    return rows


#: the pending states sprio lists (sprio: pending jobs; a held job, priority 0, is left out)
_PRIO_STATES = frozenset({"PENDING"})


def prio_rows(
    jobs: Iterable[SlurmJob],
    *,
    partitions: Sequence[str] = (),
    users: Sequence[str] = (),
    accounts: Sequence[str] = (),
    qos_factors: Mapping[str, float] | None = None,
) -> list[Row]:
    """``sprio``: the pending jobs Slurm would schedule (held ones, priority 0, are left out).

    The total is Slurm's answer; slurmrestd serves no priority factors (sprio asks slurmctld with
    an RPC of its own), so ``factors`` is null rather than guessed. One factor can be had: with
    slurmdbd's QOS (``qos_factors``, from :func:`qos_factors`) ``qos_factor`` is the job's QOS
    factor before its weight, as ``sprio -n`` shows it (null without them).
    """
    rows: list[Row] = []
    for job in jobs:
        if job.state not in _PRIO_STATES or job.priority == 0:
            continue
        if partitions and job.partition not in partitions:
            continue
        if users and job.user not in users:
            continue
        if accounts and job.account not in accounts:
            continue
        rows.append(
            {
                "backend": "slurm",
                "id": str(job.job_id),
                "user": job.user,
                "queue": job.account or None,
                "partition": job.partition,
                "state": job.state,
                "priority": job.priority,
                "qos": job.qos or None,
                "qos_factor": qos_factors.get(job.qos) if qos_factors is not None else None,
                "factors": None,  # slurmrestd does not serve sprio's factors
            }
        )
    rows.sort(key=lambda r: int(r["id"]))
    return rows


def share_rows(shares: Iterable[SlurmShare], *, accounts: Sequence[str] = ()) -> list[Row]:
    """``sshare``: associations as a tree (account rows, then their users), with Slurm's numbers."""
    children: dict[str, list[SlurmShare]] = {}
    for share in shares:
        children.setdefault(share.parent, []).append(share)
    rows: list[Row] = []
    seen: set[str] = set()

    def walk(parent: str, depth: int) -> None:
        # sshare's order under an account: its users, then its sub-accounts, each by name
        for share in sorted(children.get(parent, []), key=lambda s: (not s.user, s.user or s.account)):
            if not accounts or share.account in accounts:
                rows.append(_share_row(share, depth))
            if not share.user and share.account not in seen:  # a cycle is not walked twice
                seen.add(share.account)
                walk(share.account, depth + 1)

    walk("", 0)
    return rows


#: why some of sshare's figures are empty when they come from slurmdbd's associations (v0.0.38/39)
SHARES_FROM_ASSOCIATIONS = (
    "Slurm's shares from slurmdbd's associations (this slurmrestd serves no /shares before v0.0.40): "
    "RawUsage, EffectvUsage and FairShare are not served (slurmctld keeps usage in memory); "
    "NormShares computed by hpctop from RawShares as Fair Tree does (Slurm's default)"
)


def shares_note(shares: Iterable[SlurmShare]) -> str:
    """The note a share table needs ("" when every figure is slurmctld's own)."""
    return SHARES_FROM_ASSOCIATIONS if any(s.source == "associations" for s in shares) else ""


def _share_row(share: SlurmShare, depth: int) -> Row:
    return {
        "backend": "slurm",
        "account": share.account,
        "user": share.user or None,
        "depth": depth,
        "root": not share.parent and not share.user,
        "partition": share.partition or None,
        "raw_shares": share.raw_shares,
        "norm_shares": share.norm_shares,
        "raw_usage": share.raw_usage,
        "norm_usage": share.norm_usage,
        "effective_usage": share.effective_usage,
        "fairshare": share.fairshare,
        "level_fs": share.level_fs,
        "source": share.source,  # "shares": slurmctld's figures; "associations": slurmdbd's (see the note)
    }


def qos_rows(qos: Iterable[SlurmQos], *, names: Sequence[str] = ()) -> list[Row]:
    """``sacctmgr show qos``: each QOS with its priority, preemption and limits, in Slurm's order.

    ``norm_priority`` is the QOS factor of a job's priority before its weight (sprio ``-n``'s
    QOS column): priority_multifactor divides a QOS's priority by the highest of all QOS.
    """
    listed = list(qos)
    highest = max((q.priority for q in listed), default=0)
    rows: list[Row] = []
    for q in listed:
        if names and q.name not in names:
            continue
        rows.append(
            {
                "backend": "slurm",
                "name": q.name,
                "description": q.description or None,
                "priority": q.priority,
                "norm_priority": q.priority / highest if highest > 0 else 0.0,
                "flags": list(q.flags),
                "preempt": list(q.preempt),
                "preempt_mode": list(q.preempt_mode),
                "grace_time": q.grace_time_s,
                "usage_factor": q.usage_factor,
                "usage_threshold": q.usage_threshold,
                "grp_tres": q.grp_tres or None,
                "grp_jobs": q.grp_jobs,
                "grp_submit": q.grp_submit,
                "grp_wall": q.grp_wall_min * 60 if q.grp_wall_min is not None else None,
                "max_tres": q.max_tres_per_job or None,
                "max_tres_per_node": q.max_tres_per_node or None,
                "max_tres_per_user": q.max_tres_per_user or None,
                "max_tres_per_account": q.max_tres_per_account or None,
                "max_jobs_per_user": q.max_jobs_per_user,
                "max_submit_per_user": q.max_submit_per_user,
                "max_jobs_per_account": q.max_jobs_per_account,
                "max_submit_per_account": q.max_submit_per_account,
                "max_wall": q.max_wall_min * 60 if q.max_wall_min is not None else None,  # seconds
                "min_tres": q.min_tres_per_job or None,
            }
        )
    return rows


def qos_factors(qos: Iterable[SlurmQos]) -> dict[str, float]:
    """Each QOS's normalised priority factor (its priority over the highest), as sprio ``-n`` shows it."""
    return {row["name"]: row["norm_priority"] for row in qos_rows(qos)}


def _cpus(_: Any, row: Row) -> str:
    return f"{row['cpus_alloc']}/{row['cpus_idle']}/{row['cpus_other']}/{row['cpus_total']}"


def _reason(value: Any, _: Row) -> str:
    return str(value) if value else "none"


def _account(value: Any, row: Row) -> str:
    return " " * int(row["depth"]) + str(value)


def _raw_shares(value: Any, row: Row) -> str:
    if value is None:
        return "" if row.get("root") else "parent"  # sshare prints the root's shares as nothing
    return str(value)


def _fraction(value: Any, _: Row) -> str:
    return "" if value is None else f"{float(value):.6f}"


def _maybe(value: Any, _: Row) -> str:
    return "" if value is None else str(value)


def _words(value: Any, _: Row) -> str:
    return ",".join(str(v) for v in value or ())


def _wall(value: Any, _: Row) -> str:
    """Seconds as sacctmgr prints a wall limit: ``01:00:00``, ``2-00:00:00``, "" for none."""
    if value is None:
        return ""
    days, rest = divmod(int(value), 86400)
    hours, rest = divmod(rest, 3600)
    clock = f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
    return f"{days}-{clock}" if days else clock


def _dash(value: Any, _: Row) -> str:
    return "-" if value is None else str(value)


NODE_COLUMNS = (
    Column("node", "NODELIST"),
    Column("partition", "PARTITION"),
    Column("state", "STATE"),
    Column("cpus_alloc", "CPUS(A/I/O/T)", "right", _cpus),
    Column("gres", "GRES", "left", _dash),
    Column("gres_used", "GRES_USED", "left", _dash),
    Column("reason", "REASON", "left", _reason),
)
NODE_CSV_KEYS = ("node", "partition", "state", "cpus_alloc", "cpus_idle", "cpus_other", "cpus_total")

SUMMARY_COLUMNS = (
    Column("partition", "PARTITION"),
    Column("avail", "AVAIL"),
    Column("timelimit", "TIMELIMIT", "right"),
    Column("nodes", "NODES", "right"),
    Column("state_compact", "STATE"),
    Column("nodelist", "NODELIST"),
)
SUMMARY_CSV_KEYS = ("partition", "avail", "timelimit", "nodes", "state", "state_compact", "nodelist")

PRIO_COLUMNS = (
    Column("id", "JOBID"),
    Column("partition", "PARTITION"),
    Column("user", "USER"),
    Column("queue", "ACCOUNT"),
    Column("qos", "QOS", "left", _maybe),
    Column("priority", "PRIORITY", "right"),
    Column("qos_factor", "QOS_FACTOR", "right", _fraction),
)
PRIO_CSV_KEYS = ("id", "partition", "user", "queue", "qos", "priority", "qos_factor")

SHARE_COLUMNS = (
    Column("account", "Account", "left", _account),
    Column("user", "User", "left", lambda v, _: str(v or "")),
    Column("raw_shares", "RawShares", "right", _raw_shares),
    Column("norm_shares", "NormShares", "right", _fraction),
    Column("raw_usage", "RawUsage", "right", _maybe),
    Column("effective_usage", "EffectvUsage", "right", _fraction),
    Column("fairshare", "FairShare", "right", _fraction),
)
SHARE_CSV_KEYS = ("account", "user", "raw_shares", "norm_shares", "raw_usage", "effective_usage", "fairshare")

QOS_COLUMNS = (
    Column("name", "Name"),
    Column("priority", "Priority", "right"),
    Column("preempt", "Preempt", "left", _words),
    Column("flags", "Flags", "left", _words),
    Column("usage_factor", "UsageFactor", "right", _fraction),
    Column("grp_tres", "GrpTRES", "left", _maybe),
    Column("grp_jobs", "GrpJobs", "right", _maybe),
    Column("max_tres", "MaxTRES", "left", _maybe),
    Column("max_tres_per_user", "MaxTRESPU", "left", _maybe),
    Column("max_jobs_per_user", "MaxJobsPU", "right", _maybe),
    Column("max_submit_per_user", "MaxSubmitPU", "right", _maybe),
    Column("max_wall", "MaxWall", "right", _wall),
)
QOS_CSV_KEYS = (
    "name",
    "priority",
    "norm_priority",
    "usage_factor",
    "grp_tres",
    "grp_jobs",
    "max_tres",
    "max_tres_per_user",
    "max_jobs_per_user",
    "max_submit_per_user",
    "max_wall",
)
