"""Nodes and GPUs (``hpctop nodes`` and ``hpctop gpus``, like ``sinfo`` with GPU columns).

Both tables start from the same per-node accounting: what is allocated on a node is the sum of
the requests of the pods bound to it that have not finished (the scheduler's view, as in
``kubectl describe node``), not what the containers use. Node states use sinfo's words:

- ``down``: the node is not Ready;
- ``drain`` / ``drng``: cordoned, idle / cordoned with work still on it;
- ``alloc``: every GPU allocated (every CPU, for a node without GPUs);
- ``mix``: something allocated; ``idle``: nothing allocated.

``hpctop gpus`` sums whole and fractional GPUs (milli-GPU, the trace's ``gpu_milli``) per
partition and GPU model: ``total`` counts every physical GPU, ``allocated`` what pods requested,
``free`` what is left on schedulable nodes and ``unavailable`` what is left on down or cordoned
nodes, so ``total = allocated + free + unavailable``; ``memory_mib`` is the smallest GPU memory in
the group. A node in several partitions is counted in
each, as sinfo lists it under each partition.

Shared GPUs (MIG ``single`` strategy slices, time-slicing or MPS replicas: the node advertises
more ``nvidia.com/gpu`` than it has GPUs, as GPU Feature Discovery's ``nvidia.com/gpu.count`` and
``nvidia.com/gpu.replicas`` labels say) are counted twice, because a pod requests a share, not a
GPU: the GPU totals stay physical GPUs, and a row that holds shared GPUs also carries the share
total (``gpu_shares`` in ``hpctop nodes``, ``shares`` in ``hpctop gpus``), in which allocated, free
and unavailable are then counted (``shares = allocated + free + unavailable``), so free is never
negative, nor zero while shares are free. The text reads ``4 GPUs / 16 shares, 5 used``.

MIG ``mixed`` strategy (GFD's ``nvidia.com/mig.strategy=mixed``): the node advertises each profile
as its own resource (``nvidia.com/mig-3g.40gb``) and ``nvidia.com/gpu`` only for GPUs with MIG
off, while ``nvidia.com/gpu.count`` counts every GPU. The GPU totals stay physical GPUs, a slice
in use counts as the share of a GPU it is (a ``3g.40gb`` 3/7), and ``mig`` gives allocated and
total per profile; such a node is ``alloc`` when its whole GPUs and every slice are taken.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hpctop.backends.dra.read import gpu_health
from hpctop.model.jobs import NODE_SERVICE_KINDS
from hpctop.model.objects import Node
from hpctop.model.quantity import format_bytes
from hpctop.model.resources import MIG_PREFIX, Resources
from hpctop.model.store import Snapshot
from hpctop.scheduling.types import ScheduleResult
from hpctop.tables.fmt import from_milli, hostlist
from hpctop.tables.keys import (
    GPU_CSV_KEYS,
    GPU_SORT_KEYS,
    NODE_CSV_KEYS,
    NODE_SORT_KEYS,
    SUMMARY_CSV_KEYS,
    SUMMARY_SORT_KEYS,
)
from hpctop.tables.render import Column, Row, number

NO_PARTITION = "(none)"

__all__ = [
    "GPU_COLUMNS",
    "GPU_CSV_KEYS",
    "GPU_SORT_KEYS",
    "NODE_COLUMNS",
    "NODE_CSV_KEYS",
    "NODE_SORT_KEYS",
    "SUMMARY_COLUMNS",
    "SUMMARY_CSV_KEYS",
    "SUMMARY_SORT_KEYS",
    "gpu_rows",
    "node_rows",
    "summary_rows",
]


@dataclass(frozen=True, slots=True)
class NodeUsage:
    node: Node
    allocated: Resources
    pods: int
    #: bound pods that are work, not node services (DaemonSet pods run on every node, cordoned
    #: or not, and never keep a cordoned node draining)
    work_pods: int | None = None
    #: bound pods that only hold capacity in reserve (pause containers: kube-scheduler's
    #: placeholders, cluster-autoscaler's overprovisioning), counted in ``allocated``
    reserved_pods: int = 0

    @property
    def state(self) -> str:
        node, alloc = self.node, self.allocated
        if not node.ready:
            return "down"
        busy = not alloc.is_zero()
        if node.unschedulable:
            working = busy if self.work_pods is None else self.work_pods > 0
            return "drng" if working else "drain"
        if node.gpu.mig_devices:
            full = alloc.gpu >= node.allocatable.gpu and all(
                alloc.get(MIG_PREFIX + profile) >= total for profile, total in node.gpu.mig_devices
            )
        elif node.gpu.count > 0:
            full = node.gpu.used_milli(alloc) >= node.gpu.milli_total
        else:
            full = node.allocatable.cpu > 0 and alloc.cpu >= node.allocatable.cpu
        if full:
            return "alloc"
        return "mix" if busy else "idle"


def node_usage(snapshot: Snapshot) -> dict[str, NodeUsage]:
    """Allocated resources per node: requests of bound, unfinished pods."""
    out: dict[str, NodeUsage] = {}
    for name in sorted(snapshot.nodes):
        node = snapshot.nodes[name]
        alloc = Resources()
        count = work = reserved = 0
        for pod in snapshot.pods_on(name):
            if pod.holds_resources:
                alloc = alloc + pod.requests
                count += 1
                if pod.capacity_reservation:
                    reserved += 1  # capacity held in reserve (pause containers): no work runs there
                    continue
                if pod.owner is None or pod.owner.kind not in NODE_SERVICE_KINDS:
                    work += 1
        out[name] = NodeUsage(node, alloc, count, work, reserved)
    return out


def node_partitions(snapshot: Snapshot, result: ScheduleResult) -> dict[str, list[str]]:
    """The partitions each node belongs to (in the core's partition order)."""
    member: dict[str, list[str]] = {name: [] for name in snapshot.nodes}
    for part in result.partitions:
        for name in part.nodes:
            if name in member:
                member[name].append(part.name)
    return member


def _mig(node: Node, alloc: Resources) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for profile, total in node.gpu.mig_devices:
        used = alloc.get(MIG_PREFIX + profile)
        out[profile] = {"total": total, "allocated": used, "free": max(total - used, 0)}
    return out


# -- nodes -------------------------------------------------------------------------------------


def node_rows(
    snapshot: Snapshot,
    result: ScheduleResult,
    *,
    partitions: Iterable[str] = (),
    states: Collection[str] | None = None,
) -> list[Row]:
    """One row per node (``sinfo -N``): its partitions comma-joined, state, CPUs, memory and GPUs."""
    wanted = set(partitions)
    membership = node_partitions(snapshot, result)
    rows = []
    for name, usage in node_usage(snapshot).items():
        parts = membership.get(name) or []
        if wanted and not wanted.intersection(parts):
            continue
        state = usage.state
        if states is not None and state not in states:
            continue
        node, alloc = usage.node, usage.allocated
        row: Row = {
            "node": name,
            "partition": ",".join(parts) if parts else None,
            "state": state,
            "cpus_alloc": from_milli(alloc.cpu),
            "cpus_total": from_milli(node.allocatable.cpu),
            "memory_alloc": alloc.memory,
            "memory_total": node.allocatable.memory,
            "gpus_alloc": from_milli(node.gpu.used_milli(alloc)),
            "gpus_total": node.gpu.count,
            "gpu_model": node.gpu.product,
            "gpu_memory_mib": node.gpu.memory_mib,
            "gpu_sharing": node.gpu.sharing,
            "pods": usage.pods,
            "ready": node.ready,
            "schedulable": node.schedulable,
        }
        if node.gpu.is_shared:
            row["gpu_shares"] = node.gpu.share_total
        if usage.reserved_pods:
            row["reserved_pods"] = usage.reserved_pods  # pause pods holding capacity in reserve
        mig = _mig(node, alloc)
        if mig:
            row["mig"] = mig
        health = gpu_health(snapshot.dra, name)  # DRA device taints and pod-reported health
        if health:
            row["gpu_health"] = health
        rows.append(row)
    return rows


def summary_rows(
    snapshot: Snapshot,
    result: ScheduleResult,
    *,
    partitions: Iterable[str] = (),
    states: Collection[str] | None = None,
) -> list[Row]:
    """One row per partition and node state (plain ``sinfo``), in partition order."""
    wanted = set(partitions)
    usage = node_usage(snapshot)
    order = [(p.name, p.state.value, p.nodes) for p in result.partitions]
    placed = {n for _, _, nodes in order for n in nodes}
    orphans = tuple(n for n in usage if n not in placed)
    if orphans:
        order.append((NO_PARTITION, "-", orphans))
    rows = []
    for part, avail, names in order:
        if wanted and part not in wanted:
            continue
        groups: dict[str, list[NodeUsage]] = {}
        for name in sorted(names):
            if name in usage:
                groups.setdefault(usage[name].state, []).append(usage[name])
        for state in sorted(groups, key=_STATE_ORDER.index):
            if states is not None and state not in states:
                continue
            members = groups[state]
            alloc = sum((u.allocated for u in members), Resources())
            row: Row = {
                "partition": part,
                "avail": avail,
                "state": state,
                "nodes": len(members),
                "nodelist": hostlist(u.node.name for u in members),
                "cpus_alloc": from_milli(alloc.cpu),
                "cpus_total": from_milli(sum(u.node.allocatable.cpu for u in members)),
                "memory_alloc": alloc.memory,
                "memory_total": sum(u.node.allocatable.memory for u in members),
                "gpus_alloc": from_milli(sum(u.node.gpu.used_milli(u.allocated) for u in members)),
                "gpus_total": sum(u.node.gpu.count for u in members),
                "gpu_models": sorted({u.node.gpu.product for u in members if u.node.gpu.product}),
            }
            if any(u.node.gpu.is_shared for u in members):
                row["gpu_shares"] = sum(u.node.gpu.share_total for u in members)
            rows.append(row)
    return rows


_STATE_ORDER = ["alloc", "mix", "idle", "drng", "drain", "down"]


def _pair(alloc_key: str, total_key: str, show: Any = None) -> Any:
    def text(_: Any, row: Row) -> str:
        a, t = row[alloc_key], row[total_key]
        if show is not None:
            return f"{show(a)}/{show(t)}"
        return f"{number(float(a))}/{number(float(t))}"

    return text


def _gpu_pair(_: Any, row: Row) -> str:
    """``A/T`` GPUs, or ``4 GPUs / 16 shares, 5 used`` where requests take shares of GPUs."""
    alloc, total = number(float(row["gpus_alloc"])), number(float(row["gpus_total"]))
    if "gpu_shares" not in row:
        mig = row.get("mig")
        if isinstance(mig, Mapping) and mig:  # a mixed-strategy node: its slices in use per profile
            return f"{alloc}/{total}, MIG " + _mig_text(mig, row)
        return f"{alloc}/{total}"
    return f"{total} GPUs / {number(float(row['gpu_shares']))} shares, {alloc} used"


def _gpu_model(value: Any, row: Row) -> str:
    """The GPU model, with the GPUs DRA says are tainted or unwell (``gpu-7 tainted ...``)."""
    text = str(value) if value is not None else ""
    health = row.get("gpu_health")
    return f"{text} ({'; '.join(health)})" if health else text


def _bytes(value: Any) -> str:
    return format_bytes(int(value)) if value else "0"


#: the text table cuts a node list here (JSON and CSV keep it whole); sinfo's lists wrap screens
NODELIST_WIDTH = 60


def _nodelist(value: Any, _: Row) -> str:
    text = str(value or "-")
    if len(text) <= NODELIST_WIDTH:
        return text
    cut = text.rfind(",", 0, NODELIST_WIDTH - 3)
    return text[: cut if cut > 0 else NODELIST_WIDTH - 3] + "..."


NODE_COLUMNS = (
    Column("node", "NODELIST"),
    Column("partition", "PARTITION"),
    Column("state", "STATE"),
    Column("cpus_alloc", "CPUS(A/T)", "right", _pair("cpus_alloc", "cpus_total")),
    Column("memory_alloc", "MEMORY(A/T)", "right", _pair("memory_alloc", "memory_total", _bytes)),
    Column("gpus_alloc", "GPUS(A/T)", "right", _gpu_pair),
    Column("gpu_model", "GPU_MODEL", "left", _gpu_model),
)
SUMMARY_COLUMNS = (
    Column("partition", "PARTITION"),
    Column("avail", "AVAIL"),
    Column("nodes", "NODES", "right"),
    Column("state", "STATE"),
    Column("cpus_alloc", "CPUS(A/T)", "right", _pair("cpus_alloc", "cpus_total")),
    Column("memory_alloc", "MEMORY(A/T)", "right", _pair("memory_alloc", "memory_total", _bytes)),
    Column("gpus_alloc", "GPUS(A/T)", "right", _gpu_pair),
    Column("gpu_models", "GPU_MODEL"),
    Column("nodelist", "NODELIST", "left", _nodelist, width=NODELIST_WIDTH),
)


# -- gpus --------------------------------------------------------------------------------------


def gpu_rows(
    snapshot: Snapshot,
    result: ScheduleResult,
    *,
    partitions: Iterable[str] = (),
    states: Collection[str] | None = None,
) -> list[Row]:
    """GPUs per partition and GPU model; nodes without GPUs (or MIG devices) are left out."""
    wanted = set(partitions)
    usage = node_usage(snapshot)
    membership = node_partitions(snapshot, result)
    order = [p.name for p in result.partitions]
    acc: dict[tuple[str, str | None], dict[str, Any]] = {}
    for name, use in usage.items():
        node = use.node
        if node.gpu.count == 0 and not node.gpu.mig_devices:
            continue
        if states is not None and use.state not in states:
            continue
        for part in membership.get(name) or [NO_PARTITION]:
            if wanted and part not in wanted:
                continue
            entry = acc.setdefault(
                (part, node.gpu.product),
                {
                    "nodes": 0,
                    "total": 0,
                    "alloc": 0,
                    "free": 0,
                    "unavail": 0,
                    "memory": set(),
                    "sharing": set(),
                    "shares": 0,
                    "shared": False,
                    "mig": {},
                },
            )
            capacity = node.gpu.milli_total
            used = node.gpu.used_milli(use.allocated)
            taken = min(used, capacity) if capacity else used
            left = max(capacity - used, 0)
            entry["nodes"] += 1
            entry["total"] += node.gpu.count * 1000
            entry["shares"] += capacity
            entry["shared"] = entry["shared"] or node.gpu.is_shared
            entry["alloc"] += taken
            if node.schedulable:
                entry["free"] += left
            else:
                entry["unavail"] += left
            if node.gpu.memory_mib:
                entry["memory"].add(node.gpu.memory_mib)
            entry["sharing"].add(node.gpu.sharing)
            for profile, counts in _mig(node, use.allocated).items():
                slot = entry["mig"].setdefault(profile, {"total": 0, "allocated": 0, "free": 0})
                for k, v in counts.items():
                    slot[k] += v if k != "free" or node.schedulable else 0
    rows = []
    rank = {name: i for i, name in enumerate(order)}
    for (part, model), e in sorted(
        acc.items(), key=lambda kv: (rank.get(kv[0][0], len(rank)), kv[0][0], kv[0][1] or "")
    ):
        row: Row = {
            "partition": part,
            "model": model,
            "nodes": e["nodes"],
            "total": from_milli(e["total"]),
            "allocated": from_milli(e["alloc"]),
            "free": from_milli(e["free"]),
            "unavailable": from_milli(e["unavail"]),
            "memory_mib": min(e["memory"]) if e["memory"] else None,
            "sharing": ",".join(sorted(e["sharing"])),
        }
        if e["shared"]:
            row["shares"] = from_milli(e["shares"])
        if e["mig"]:
            row["mig"] = {p: e["mig"][p] for p in sorted(e["mig"])}
        rows.append(row)
    return rows


def _mig_text(value: Any, _: Row) -> str:
    if not isinstance(value, Mapping):
        return "-"
    return ",".join(f"{p}:{c['allocated']}/{c['total']}" for p, c in value.items())


def _gpu_amount(value: Any, _: Row) -> str:
    return number(float(value))


def _gpu_total(value: Any, row: Row) -> str:
    if "shares" not in row:
        return number(float(value))
    return f"{number(float(value))} GPUs / {number(float(row['shares']))} shares"


GPU_COLUMNS = (
    Column("partition", "PARTITION"),
    Column("model", "GPU_MODEL"),
    Column("nodes", "NODES", "right"),
    Column("total", "TOTAL", "right", _gpu_total),
    Column("allocated", "ALLOC", "right", _gpu_amount),
    Column("free", "FREE", "right", _gpu_amount),
    Column("unavailable", "UNAVAIL", "right", _gpu_amount),
    Column("sharing", "SHARING"),
    Column("mig", "MIG(A/T)", "left", _mig_text),
)
