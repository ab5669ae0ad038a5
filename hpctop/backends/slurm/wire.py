"""The neutral Slurm model: jobs, nodes, partitions, shares, QOS and reservations, as Slurm shows them.

Why one model for every API version: Debian's and RHEL's Slurm serve slurmrestd v0.0.38-v0.0.41,
Slinky's v0.0.42 and newer, and the shapes differ. v0.0.38 sends plain integers (``-1`` or
``null`` for "infinite"/"unset"), a node state word plus ``state_flags``, and flat partitions;
v0.0.40+ wraps numbers as ``{"set", "infinite", "number"}``, sends a node's state as one list
(base state and flags together) and nests a partition (``priority.tier``, ``maximums.time``,
``partition.state``). The parsers here read both into the same frozen records, so nothing above
the source knows which version answered. slurmdbd's QOS have the same nesting in v0.0.38 and
v0.0.40+ (``limits.max.tres.per.user``...), only the numbers are wrapped; its associations stand in
for ``/shares`` before v0.0.40 (:func:`shares_from_associations`: what they cannot give is None).

A malformed object (no name, a non-object) raises :class:`MalformedObject`; the client skips it
and counts it, it is never half-applied.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hpctop.errors import PlainMessageError

__all__ = [
    "MalformedObject",
    "SlurmAssociation",
    "SlurmJob",
    "SlurmNode",
    "SlurmPartition",
    "SlurmQos",
    "SlurmReservation",
    "SlurmShare",
    "expand_hostlist",
    "number",
    "parse_association",
    "parse_job",
    "parse_node",
    "parse_partition",
    "parse_qos",
    "parse_reservation",
    "parse_share",
    "per_node_gpus",
    "real",
    "shares_from_associations",
    "state_word",
    "text",
    "tres_gpus",
    "tres_text",
]


class MalformedObject(PlainMessageError, ValueError):
    """An object slurmrestd sent that cannot be read (skipped and counted, never half-applied)."""


def number(value: object) -> int | None:
    """An integer as v0.0.38 (plain) or v0.0.40+ (``{"set", "infinite", "number"}``) sends it."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        if not value.get("set", True) or value.get("infinite", False):
            return None
        inner = value.get("number")
        return number(inner) if not isinstance(inner, Mapping) else None
    return None


def limit(value: object) -> int | None:
    """A limit: ``None`` when Slurm means "no limit" (v0.0.38's ``-1``, v0.0.40+'s ``infinite``)."""
    found = number(value)
    return None if found is None or found < 0 else found


def real(value: object) -> float | None:
    """A float, plain or wrapped (``shares_normalized``, ``fairshare.factor``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, Mapping):
        if not value.get("set", True) or value.get("infinite", False):
            return None
        return real(value.get("number"))
    return None


def text(value: object) -> str:
    return value if isinstance(value, str) else ""


def words(value: object) -> tuple[str, ...]:
    """A list of strings, or a comma-separated string (v0.0.44's ``csv_string`` or v0.0.38's text)."""
    if isinstance(value, str):
        return tuple(part for part in value.split(",") if part)
    if isinstance(value, Sequence):
        return tuple(str(part) for part in value if isinstance(part, str) and part)
    return ()


def words_list(value: object) -> tuple[str, ...]:
    """A list of strings kept whole (``gres_detail``'s entries hold commas: ``gpu:2(IDX:0,2)``)."""
    if isinstance(value, Sequence) and not isinstance(value, str):
        return tuple(str(part) for part in value if isinstance(part, str) and part)
    return ()


#: job state flags squeue shows instead of the base state (job_state_string's precedence)
_SHOWN_FLAGS = ("COMPLETING", "CONFIGURING", "RESIZING", "REQUEUED", "REQUEUE_HOLD", "STAGE_OUT", "SIGNALING")


def state_word(value: object) -> str:
    """A job state: v0.0.38 sends squeue's word; v0.0.40+ the base state and its flags.

    (``["RUNNING", "COMPLETING"]`` reads ``COMPLETING``, as squeue shows it.)
    """
    if isinstance(value, list):
        found = [str(v) for v in value]
        shown = [flag for flag in _SHOWN_FLAGS if flag in found]
        return shown[0] if shown else (found[0] if found else "")
    return str(value or "")


def _name(raw: Mapping[str, object], what: str) -> str:
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise MalformedObject(f"a Slurm {what} without a name")
    return name


#: the base node states (slurm.h ``node_states``); anything else in a state list is a flag
_NODE_BASE = frozenset({"UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED", "FUTURE"})


@dataclass(frozen=True, slots=True)
class SlurmNode:
    """One Slurm node (``sinfo -N``, ``scontrol show node``)."""

    name: str
    base_state: str  # IDLE, MIXED, ALLOCATED, DOWN, ...
    flags: tuple[str, ...]  # DRAIN, NOT_RESPONDING, COMPLETING, RESERVED, ...
    partitions: tuple[str, ...]
    cpus: int
    alloc_cpus: int
    real_memory_mb: int
    alloc_memory_mb: int
    gres: str  # ``gpu:2`` or ``gpu:a100:8(S:0-1)``
    gres_used: str
    reason: str
    reason_user: str
    reason_time: int | None

    @property
    def sinfo_state(self) -> str:
        """The state as ``sinfo -N -o %T`` prints it (node_state_string's order: drain, then the flags)."""
        base = self.base_state.lower() or "unknown"
        flags = set(self.flags)
        if "DRAIN" in flags:
            if "COMPLETING" in flags or self.base_state in ("ALLOCATED", "MIXED"):
                word = "draining"
            else:  # a down node that is also drained reads "drained" (seen on 22.05)
                word = "drained"
        elif "MAINTENANCE" in flags:
            word = "maint"
        elif "REBOOT_REQUESTED" in flags or "REBOOT_ISSUED" in flags:
            word = "reboot"
        elif "POWERED_DOWN" in flags or "POWER_DOWN" in flags:
            word = "idle" if self.base_state == "IDLE" else base
        elif "COMPLETING" in flags:
            word = "completing"
        elif "RESERVED" in flags and self.base_state == "IDLE":
            word = "reserved"
        elif "PLANNED" in flags and self.base_state == "IDLE":
            word = "planned"
        else:
            word = base
        return word + ("*" if "NOT_RESPONDING" in flags else "")

    @property
    def gpus(self) -> int:
        return _gres_count(self.gres, "gpu")

    @property
    def gpus_used(self) -> int:
        return _gres_count(self.gres_used, "gpu")


def _gres_count(gres: str, name: str) -> int:
    """The count of one GRES in ``gpu:2,gpu:a100:4(S:0-1),shard:8``; ``gpu:0`` and ``(null)`` are 0."""
    total = 0
    depth = 0
    part = ""
    for char in gres + ",":
        if char == "," and depth == 0:
            fields = part.split("(", 1)[0].split(":")
            if fields[0] == name and len(fields) >= 2 and fields[-1].isdigit():
                total += int(fields[-1])
            part = ""
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        part += char
    return total


def parse_node(raw: Mapping[str, object]) -> SlurmNode:
    name = _name(raw, "node")
    state = raw.get("state")
    if isinstance(state, list):  # v0.0.40+: base state and flags in one list
        found = [str(s).upper() for s in state]
        base = next((s for s in found if s in _NODE_BASE), "UNKNOWN")
        flags = tuple(s for s in found if s != base)
    else:  # v0.0.38: a lower-case word and a separate flag list
        base = text(state).upper() or "UNKNOWN"
        flags = words(raw.get("state_flags"))
    return SlurmNode(
        name=name,
        base_state=base,
        flags=flags,
        partitions=words(raw.get("partitions")),
        cpus=number(raw.get("cpus")) or 0,
        alloc_cpus=number(raw.get("alloc_cpus")) or 0,
        real_memory_mb=number(raw.get("real_memory")) or 0,
        alloc_memory_mb=number(raw.get("alloc_memory")) or 0,
        gres=text(raw.get("gres")),
        gres_used=text(raw.get("gres_used")),
        reason=text(raw.get("reason")),
        reason_user=text(raw.get("reason_set_by_user")),
        reason_time=number(raw.get("reason_changed_at")) or None,
    )


@dataclass(frozen=True, slots=True)
class SlurmPartition:
    """One Slurm partition (``scontrol show partition``): its tiers, state and limits."""

    name: str
    state: str  # UP, DOWN, DRAIN, INACTIVE
    priority_tier: int  # PriorityTier: partitions of a higher tier are scheduled first
    priority_job_factor: int  # PriorityJobFactor: feeds the job priority's partition factor
    nodes: str  # hostlist expression
    total_nodes: int
    total_cpus: int
    max_time_min: int | None  # None: no limit
    max_nodes: int | None
    default: bool | None  # None: this API version does not say
    qos: str


def _dig(raw: Mapping[str, object], *path: str) -> object:
    node: object = raw
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def parse_partition(raw: Mapping[str, object]) -> SlurmPartition:
    name = _name(raw, "partition")
    if isinstance(raw.get("priority"), Mapping):  # v0.0.40+: nested
        flags = words(raw.get("flags"))
        qos = _dig(raw, "qos", "assigned")
        return SlurmPartition(
            name=name,
            state=(words(_dig(raw, "partition", "state")) or ("UNKNOWN",))[0],
            priority_tier=number(_dig(raw, "priority", "tier")) or 0,
            priority_job_factor=number(_dig(raw, "priority", "job_factor")) or 0,
            nodes=text(_dig(raw, "nodes", "configured")),
            total_nodes=number(_dig(raw, "nodes", "total")) or 0,
            total_cpus=number(_dig(raw, "cpus", "total")) or 0,
            max_time_min=limit(_dig(raw, "maximums", "time")),
            max_nodes=limit(_dig(raw, "maximums", "nodes")),
            default=("DEFAULT" in {f.upper() for f in flags}) if "flags" in raw else None,
            qos=text(qos),
        )
    return SlurmPartition(
        name=name,
        state=text(raw.get("state")) or "UNKNOWN",
        priority_tier=number(raw.get("priority_tier")) or 0,
        priority_job_factor=number(raw.get("priority_job_factor")) or 0,
        nodes=text(raw.get("nodes")),
        total_nodes=number(raw.get("total_nodes")) or 0,
        total_cpus=number(raw.get("total_cpus")) or 0,
        max_time_min=limit(raw.get("max_time_limit")),
        max_nodes=limit(raw.get("maximum_nodes_per_job")),
        default="default" in {f.lower() for f in words(raw.get("flags"))},
        qos=text(raw.get("qos")),
    )


@dataclass(frozen=True, slots=True)
class SlurmShare:
    """One association row of ``sshare``.

    From slurmrestd ``/shares`` (v0.0.40 and newer) every figure is slurmctld's own. From
    ``/slurmdb/<v>/associations`` (what a v0.0.38/v0.0.39 slurmrestd with slurmdbd serves instead,
    ``source == "associations"``) only the tree and the raw shares are Slurm's: slurmdbd keeps no
    usage (slurmctld does, in memory), so usage and fair share are None, and ``norm_shares`` is
    computed from the siblings' raw shares as Fair Tree (Slurm's default) does (see
    :func:`shares_from_associations`).
    """

    account: str  # the account; for a user row, the account the user belongs to
    user: str  # "" for an account row
    parent: str
    partition: str
    raw_shares: int | None  # None: ``parent`` (the association shares its parent's), or the root
    norm_shares: float | None
    raw_usage: int | None  # None: not served (associations carry no usage)
    norm_usage: float | None
    effective_usage: float | None
    fairshare: float | None  # the fair-share factor (sshare's FairShare)
    level_fs: float | None
    source: str = "shares"  # "shares" (slurmctld's /shares) or "associations" (slurmdbd's)


def parse_share(raw: Mapping[str, object]) -> SlurmShare:
    name = _name(raw, "share")
    kinds = {k.upper() for k in words(raw.get("type"))}
    is_user = "USER" in kinds
    parent = text(raw.get("parent"))
    return SlurmShare(
        account=parent if is_user else name,
        user=name if is_user else "",
        parent=parent,
        partition=text(raw.get("partition")),
        raw_shares=limit(raw.get("shares")),
        norm_shares=real(raw.get("shares_normalized")),
        raw_usage=number(raw.get("usage")) or 0,
        norm_usage=real(raw.get("usage_normalized")),
        effective_usage=real(raw.get("effective_usage")),
        fairshare=real(_dig(raw, "fairshare", "factor")),
        level_fs=real(_dig(raw, "fairshare", "level")),
    )


#: v0.0.38's ``shares_raw`` for ``fairshare=parent`` (slurmdb.h ``SLURMDB_FS_USE_PARENT``)
_FS_USE_PARENT = 0x7FFFFFFF


@dataclass(frozen=True, slots=True)
class SlurmAssociation:
    """One association as slurmdbd keeps it (``sacctmgr show assoc``): the tree and its shares."""

    account: str
    user: str  # "" for an account's own association
    parent: str  # the parent account ("" for root; for a user's association, its account)
    partition: str
    raw_shares: int | None  # None: ``parent``
    qos: tuple[str, ...]
    default_qos: str


def parse_association(raw: Mapping[str, object]) -> SlurmAssociation:
    account = text(raw.get("account"))
    if not account:
        raise MalformedObject("a Slurm association without an account")
    user = text(raw.get("user"))
    parent = account if user else text(raw.get("parent_account"))
    shares = raw.get("shares_raw")
    found = number(shares)
    default = raw.get("default")
    return SlurmAssociation(
        account=account,
        user=user,
        parent=parent,
        partition=text(raw.get("partition")),
        raw_shares=None if found is None or found == _FS_USE_PARENT else found,
        qos=words(raw.get("qos")),
        default_qos=text(_dig(default, "qos")) if isinstance(default, Mapping) else "",
    )


def shares_from_associations(associations: Sequence[SlurmAssociation]) -> list[SlurmShare]:
    """sshare's rows from slurmdbd's associations: what can be had without slurmctld's usage.

    NormShares as Fair Tree computes it (``assoc_mgr``'s ``shares_norm = shares_raw /
    level_shares``, the sum of the raw shares of the association and its siblings): Slurm's
    default since 19.05; a cluster with ``PriorityFlags=NO_FAIR_TREE`` multiplies down the tree
    instead, which slurmrestd cannot tell. An account whose shares are ``parent`` is transparent
    (seen on 22.05): its children count among its parent's, and it shows its parent's NormShares.
    The root association shows as sshare shows it (no shares, 0). Usage, effective usage and fair
    share are None: slurmdbd has no usage.
    """
    accounts = {a.account: a for a in associations if not a.user}

    def level_of(assoc: SlurmAssociation) -> str:
        parent, seen = assoc.parent, set()
        while parent in accounts and accounts[parent].raw_shares is None and parent not in seen:
            seen.add(parent)
            if not accounts[parent].parent:
                break
            parent = accounts[parent].parent
        return parent

    level: dict[tuple[str, str], int] = {}
    for assoc in associations:
        if assoc.parent and assoc.raw_shares is not None:
            key = (level_of(assoc), assoc.partition)
            level[key] = level.get(key, 0) + assoc.raw_shares

    def norm(assoc: SlurmAssociation, depth: int = 0) -> float | None:
        if not assoc.parent and not assoc.user:
            return 0.0  # the root, as sshare prints it
        if assoc.raw_shares is None:  # ``parent``: its parent's
            above = accounts.get(level_of(assoc))
            return norm(above, depth + 1) if above is not None and depth < len(accounts) else None
        total = level.get((level_of(assoc), assoc.partition), 0)
        return assoc.raw_shares / total if total > 0 else None

    return [
        SlurmShare(
            account=assoc.account,
            user=assoc.user,
            parent=assoc.parent,
            partition=assoc.partition,
            raw_shares=assoc.raw_shares if assoc.parent or assoc.user else None,  # the root: none
            norm_shares=norm(assoc),
            raw_usage=None,
            norm_usage=None,
            effective_usage=None,
            fairshare=None,
            level_fs=None,
            source="associations",
        )
        for assoc in associations
    ]


@dataclass(frozen=True, slots=True)
class SlurmQos:
    """One QOS (``sacctmgr show qos``): its priority, preemption and limits.

    A limit is None when Slurm sets none; a TRES limit is ``"cpu=8,gres/gpu=4"`` ("" for none),
    as sacctmgr prints it. Times are minutes, as Slurm keeps them (GraceTime is seconds).
    """

    name: str
    description: str
    priority: int
    flags: tuple[str, ...]
    preempt: tuple[str, ...]
    preempt_mode: tuple[str, ...]
    grace_time_s: int | None
    usage_factor: float | None
    usage_threshold: float | None
    grp_tres: str
    grp_jobs: int | None
    grp_submit: int | None
    grp_wall_min: int | None
    max_tres_per_job: str
    max_tres_per_node: str
    max_tres_per_user: str
    max_tres_per_account: str
    max_jobs_per_user: int | None
    max_submit_per_user: int | None
    max_jobs_per_account: int | None
    max_submit_per_account: int | None
    max_wall_min: int | None
    min_tres_per_job: str


def tres_text(value: object) -> str:
    """A TRES list (``[{"type": "gres", "name": "gpu", "count": 4}]``) as ``gres/gpu=4``."""
    if isinstance(value, str):
        return value
    if not isinstance(value, Sequence):
        return ""
    parts = []
    for item in value:
        if not isinstance(item, Mapping):
            continue
        kind, name, count = text(item.get("type")), text(item.get("name")), number(item.get("count"))
        if kind and count is not None:
            parts.append(f"{kind}/{name}={count}" if name else f"{kind}={count}")
    return ",".join(parts)


def parse_qos(raw: Mapping[str, object]) -> SlurmQos:
    """A QOS as v0.0.38 (plain numbers, ``null`` for unset) or v0.0.40+ (wrapped) sends it."""
    name = _name(raw, "QOS")
    mx = _dig(raw, "limits", "max")
    mx = mx if isinstance(mx, Mapping) else {}
    preempt = raw.get("preempt")
    preempt = preempt if isinstance(preempt, Mapping) else {}
    priority = number(raw.get("priority"))
    return SlurmQos(
        name=name,
        description=text(raw.get("description")),
        priority=priority if priority is not None and priority >= 0 else 0,
        flags=tuple(f.upper() for f in words(raw.get("flags"))),
        preempt=words(preempt.get("list")),
        preempt_mode=tuple(m.upper() for m in words(preempt.get("mode"))),
        grace_time_s=limit(_dig(raw, "limits", "grace_time")),
        usage_factor=real(raw.get("usage_factor")),
        usage_threshold=real(raw.get("usage_threshold")),
        grp_tres=tres_text(_dig(mx, "tres", "total")),
        grp_jobs=limit(_dig(mx, "active_jobs", "count")),
        grp_submit=limit(_dig(mx, "jobs", "count")),
        grp_wall_min=limit(_dig(mx, "wall_clock", "per", "qos")),
        max_tres_per_job=tres_text(_dig(mx, "tres", "per", "job")),
        max_tres_per_node=tres_text(_dig(mx, "tres", "per", "node")),
        max_tres_per_user=tres_text(_dig(mx, "tres", "per", "user")),
        max_tres_per_account=tres_text(_dig(mx, "tres", "per", "account")),
        max_jobs_per_user=limit(_dig(mx, "jobs", "active_jobs", "per", "user")),
        max_submit_per_user=limit(_dig(mx, "jobs", "per", "user")),
        max_jobs_per_account=limit(_dig(mx, "jobs", "active_jobs", "per", "account")),
        max_submit_per_account=limit(_dig(mx, "jobs", "per", "account")),
        max_wall_min=limit(_dig(mx, "wall_clock", "per", "job")),
        min_tres_per_job=tres_text(_dig(raw, "limits", "min", "tres", "per", "job")),
    )


@dataclass(frozen=True, slots=True)
class SlurmReservation:
    """One advance reservation (``scontrol show reservation``)."""

    name: str
    nodes: str  # hostlist expression
    node_count: int
    start_time: int | None
    end_time: int | None
    users: tuple[str, ...]
    accounts: tuple[str, ...]
    partition: str
    flags: tuple[str, ...]


def parse_reservation(raw: Mapping[str, object]) -> SlurmReservation:
    return SlurmReservation(
        name=_name(raw, "reservation"),
        nodes=text(raw.get("node_list")),
        node_count=number(raw.get("node_count")) or 0,
        start_time=number(raw.get("start_time")) or None,
        end_time=number(raw.get("end_time")) or None,
        users=words(raw.get("users")),
        accounts=words(raw.get("accounts")),
        partition=text(raw.get("partition")),
        flags=tuple(f.upper() for f in words(raw.get("flags"))),
    )


@dataclass(frozen=True, slots=True)
class SlurmJob:
    """One Slurm job as ``squeue`` shows it, whatever the API version."""

    job_id: int
    name: str
    user: str
    account: str
    partition: str
    qos: str
    state: str  # Slurm's own base state: PENDING, RUNNING, ...
    reason: str  # Slurm's state_reason: None, Resources, Priority, JobHeldUser, ...
    priority: int
    nodes: str  # Slurm's hostlist expression ("" while pending)
    node_count: int
    submit_time: int
    start_time: int  # for a pending job: Slurm's own expected start (0 when unknown)
    time_limit_min: int | None
    array_job_id: int | None
    array_task_id: int | None
    het_job_id: int | None
    tres: str
    #: the GRES asked per node (``gres:gpu:2`` on 22.05, ``gres/gpu:2`` later; "" if none)
    tres_per_node: str = ""
    #: per allocated node, in node order: the GRES it holds there with device indices
    #: (``gpu:2(IDX:0-1)``); empty while pending
    gres_detail: tuple[str, ...] = ()

    @property
    def gpus(self) -> int:
        """Its GPUs: the job's TRES (``gres/gpu=4``), else what it asks per node times its nodes
        (Debian's 22.05 slurmrestd leaves ``gres/gpu`` out of a job's ``tres_req_str``)."""
        total = tres_gpus(self.tres)
        return total if total > 0 else per_node_gpus(self.tres_per_node) * max(self.node_count, 1)


def tres_gpus(tres: str) -> int:
    """The GPUs of ``cpu=2,mem=4000M,node=2,gres/gpu=4`` (0 when it names none)."""
    for item in tres.split(","):
        key, _, value = item.partition("=")
        if key == "gres/gpu" and value.isdigit():
            return int(value)
    return 0


def per_node_gpus(tres_per_node: str) -> int:
    """The GPUs per node of ``gres:gpu:2`` (22.05), ``gres/gpu:a100:2`` (later), ``gres/gpu`` (1)."""
    total = 0
    for item in tres_per_node.split(","):
        fields = item.removeprefix("gres:").removeprefix("gres/").split(":")
        if fields[0] != "gpu":
            continue
        total += int(fields[-1]) if len(fields) > 1 and fields[-1].isdigit() else 1
    return total


_RANGE = re.compile(r"^(?P<prefix>[^\[]*)\[(?P<ranges>[^\]]*)\](?P<suffix>.*)$")


def expand_hostlist(expression: str) -> list[str]:
    """Slurm's hostlist expression (``sn[1-2,5],gpu7``) as node names, zero padding kept."""
    names: list[str] = []
    depth = 0
    part = ""
    for char in expression + ",":
        if char == "," and depth == 0:
            if part:
                names.extend(_expand_one(part))
            part = ""
            continue
        depth += {"[": 1, "]": -1}.get(char, 0)
        part += char
    return names


def _expand_one(part: str) -> list[str]:
    match = _RANGE.match(part)
    if match is None:
        return [part]
    out: list[str] = []
    for span in match["ranges"].split(","):
        first, _, last = span.partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            return [part]
        for index in range(int(first), int(last or first) + 1):
            out.extend(
                f"{match['prefix']}{index:0{len(first)}d}{rest}" for rest in _expand_one(match["suffix"])
            )
    return out


def parse_job(raw: Mapping[str, object]) -> SlurmJob:
    array_task = number(raw.get("array_task_id"))
    array_job = number(raw.get("array_job_id"))
    het = number(raw.get("het_job_id"))
    return SlurmJob(
        job_id=number(raw.get("job_id")) or 0,
        name=text(raw.get("name")),
        user=text(raw.get("user_name")),
        account=text(raw.get("account")),
        partition=text(raw.get("partition")),
        qos=text(raw.get("qos")),
        state=state_word(raw.get("job_state")),
        reason=text(raw.get("state_reason")) or "None",
        priority=number(raw.get("priority")) or 0,
        nodes=text(raw.get("nodes")),
        node_count=number(raw.get("node_count")) or 0,
        submit_time=number(raw.get("submit_time")) or 0,
        start_time=number(raw.get("start_time")) or 0,
        time_limit_min=number(raw.get("time_limit")),
        array_job_id=array_job or None,
        array_task_id=array_task,
        het_job_id=het or None,
        tres=text(raw.get("tres_req_str")) or text(raw.get("tres_alloc_str")),
        tres_per_node=text(raw.get("tres_per_node")),
        gres_detail=words_list(raw.get("gres_detail")),
    )
