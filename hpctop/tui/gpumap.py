"""Who holds which GPU: a per-node, per-index view of the snapshot for the GPU pane.

A pod's devices are ``pod.gpu_indices`` on ``pod.node_name``; fractional pods (``requests.gpu`` under
1000 milli-GPU) share an index. On a node whose GPUs are shared (MIG ``single`` slices, time-slicing
or MPS replicas: ``Node.gpu.is_shared``) a request counts shares, so it fills its share of a
physical GPU (a 1g.10gb slice a seventh, one of 4 replicas a quarter) and the node says both
counts (``4 GPUs / 16 shares, 5 used``); a MIG slice asked for by profile (``mixed`` strategy,
``nvidia.com/mig-3g.40gb``) fills the share of a GPU it is (3/7). A live pod rarely names its devices; with
``--prometheus`` the DCGM exporter's per-GPU ``pod``/``namespace`` labels do (``devices``), and
without them the holders are known per node only (``NodeGpus.unplaced``), which the pane says
rather than pretending to know the cell. This module folds that into one :class:`NodeGpus` per node (fill and
holding job per index) once per snapshot version, so the pane's three zoom levels only format. It
knows nothing of Textual; strings it keeps are sanitised because they reach the screen.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from hpctop.model.objects import Job, JobKey, Node, Pod, PodKey
from hpctop.model.resources import gpu_equivalent_milli, mig_counts
from hpctop.tui.sanitize import sanitize_display

FULL = "█"
FREE = "·"
DOWN = "✕"
CORDONED = "⊘"
PARTIAL = ("░", "▒", "▓", "█")  # up to 25%, 50%, 75%, 100% of one GPU in use


def fill_glyph(milli: int) -> str:
    """The glyph of one GPU by how much of it is allocated (0-1000 milli)."""
    if milli <= 0:
        return FREE
    if milli >= 1000:
        return FULL
    return PARTIAL[min((milli - 1) // 250, 3)]


@dataclass(slots=True)
class GpuSlot:
    used: int = 0  # milli-GPU allocated on this index
    holders: list[tuple[str, str, float]] = field(default_factory=list)  # (job id, queue, gpus)

    @property
    def queue(self) -> str:
        return self.holders[0][1] if self.holders else ""


@dataclass(slots=True)
class NodeGpus:
    name: str
    partition: str
    model: str
    ready: bool
    cordoned: bool
    slots: list[GpuSlot]
    unindexed: int = 0  # milli-GPU held by pods that did not say which device
    shares: int = 0  # schedulable shares where GPUs are shared (0: one per GPU)
    shares_used: int = 0  # milli-shares requested (where shared)
    #: holders of GPUs on this node whose device is unknown (no index, no DCGM holder label)
    unplaced: list[tuple[str, str, float]] = field(default_factory=list)
    #: MIG devices per profile under the ``mixed`` strategy: {profile: [in use, total]}
    mig: dict[str, list[int]] = field(default_factory=dict)

    @property
    def down(self) -> bool:
        return not self.ready or self.cordoned

    @property
    def used(self) -> int:
        return sum(min(s.used, 1000) for s in self.slots)

    @property
    def total(self) -> int:
        return 1000 * len(self.slots)

    def gpu_text(self) -> str:
        """``used/total GPUs``, or ``4 GPUs / 16 shares, 5 used`` where GPUs are shared."""
        if self.shares:
            return f"{len(self.slots)} GPUs / {self.shares} shares, {self.shares_used / 1000:g} used"
        text = f"{self.used / 1000:g}/{self.total / 1000:g} GPUs"
        if self.mig:
            text += ", MIG " + ",".join(f"{p}:{u}/{t}" for p, (u, t) in sorted(self.mig.items()))
        return text

    @property
    def fill(self) -> float:
        return self.used / self.total if self.slots else 0.0

    @property
    def dominant_queue(self) -> str:
        counts: dict[str, int] = {}
        for s in self.slots:
            if s.holders:
                counts[s.queue] = counts.get(s.queue, 0) + s.used
        return max(counts, key=lambda q: counts[q]) if counts else ""

    def glyph(self) -> str:
        """One character for the whole node (cluster heat map)."""
        if not self.ready:
            return DOWN
        if self.cordoned:
            return CORDONED
        return fill_glyph(int(self.fill * 1000) if self.fill < 1 else 1000)


@dataclass(slots=True)
class GroupTotals:
    name: str
    used: int = 0  # milli-GPU
    total: int = 0  # milli-GPU on schedulable nodes
    nodes: int = 0
    down: int = 0


@dataclass(slots=True)
class GpuMap:
    nodes: list[NodeGpus]
    partitions: list[GroupTotals]
    models: list[GroupTotals]

    def partition_names(self) -> list[str]:
        return [p.name for p in self.partitions]


def build_gpu_map(
    nodes: Mapping[str, Node],
    pods: Mapping[PodKey, Pod],
    pods_by_node: Mapping[str, Iterable[PodKey]],
    jobs: Mapping[JobKey, Job],
    partition_nodes: Iterable[tuple[str, Iterable[str]]],
    devices: Mapping[str, Mapping[PodKey, tuple[int, ...]]] | None = None,
) -> GpuMap:
    """Fold the snapshot into per-GPU slots, ordered by partition then node name.

    ``devices``: per node, the GPU indices the DCGM exporter saw each pod hold (for pods that do
    not name their devices themselves).
    """
    devices = devices or {}
    job_of = active_job_of(jobs)
    order, part_of = node_order(nodes, partition_nodes)
    out: list[NodeGpus] = []
    for name in order:
        ng = node_gpus(name, nodes[name], part_of.get(name, "other"), pods, pods_by_node, job_of, devices)
        if ng is not None:
            out.append(ng)
    return with_totals(out)


def node_gpus(
    name: str,
    node: Node,
    partition: str,
    pods: Mapping[PodKey, Pod],
    pods_by_node: Mapping[str, Iterable[PodKey]],
    job_of: Mapping[PodKey, Job],
    devices: Mapping[str, Mapping[PodKey, tuple[int, ...]]],
) -> NodeGpus | None:
    """One node's slots (None for a node without GPUs): :func:`build_gpu_map`'s work per node,
    also called alone by the GPU pane's cache for the nodes that changed."""
    count = node.gpu.count
    if count <= 0:
        return None
    ng = NodeGpus(
        name=sanitize_display(name, cap=64),
        partition=sanitize_display(partition, cap=64),
        model=sanitize_display(node.gpu.product or "unknown", cap=64),
        ready=node.ready,
        cordoned=node.unschedulable,
        slots=[GpuSlot() for _ in range(count)],
        shares=node.gpu.share_total if node.gpu.is_shared else 0,
        mig={profile: [0, total] for profile, total in node.gpu.mig_devices},
    )
    for pk in sorted(pods_by_node.get(name, ())):  # frozenset order varies per process
        pod = pods.get(pk)
        if pod is None or not pod.holds_resources:
            continue
        for profile, n in mig_counts(pod.requests).items():
            if profile in ng.mig:
                ng.mig[profile][0] += n
        # shares where shared, else milli-GPU with MIG slices as the share of a GPU each is
        amount = gpu_equivalent_milli(pod.requests)
        if amount <= 0:
            continue
        holder_job = job_of.get(pk)
        holder = (
            sanitize_display(holder_job.id if holder_job else f"{pk[0]}/{pk[1]}", cap=128),
            sanitize_display((holder_job.queue if holder_job else None) or "", cap=128),
            amount / 1000,
        )
        physical = amount
        if ng.shares:
            ng.shares_used += physical
            physical = physical * count // ng.shares
        indices = [i for i in pod.gpu_indices if 0 <= i < count]
        if not indices:
            indices = [i for i in devices.get(name, {}).get(pk, ()) if 0 <= i < count]
        if not indices:
            ng.unindexed += physical
            ng.unplaced.append(holder)
            continue
        share = physical // len(indices) if physical >= 1000 else physical
        for i in indices:
            slot = ng.slots[i]
            slot.used += min(share, 1000)
            slot.holders.append(holder)
    _place_unindexed(ng)
    return ng


def active_job_of(jobs: Mapping[JobKey, Job]) -> dict[PodKey, Job]:
    """The active job each pod belongs to (what a GPU cell is coloured and labelled by)."""
    job_of: dict[PodKey, Job] = {}
    for job in jobs.values():
        if job.state.is_active:
            for pk in job.pods:
                job_of[pk] = job
    return job_of


def node_order(
    nodes: Mapping[str, Node], partition_nodes: Iterable[tuple[str, Iterable[str]]]
) -> tuple[list[str], dict[str, str]]:
    """Node names in map order (by partition, then name; GPU nodes of no partition last) and the
    partition of each (a node in two partitions shows under the first)."""
    part_of: dict[str, str] = {}
    order: list[str] = []
    for part, names in partition_nodes:
        for n in sorted(names):
            if n not in part_of and n in nodes:
                part_of[n] = part
                order.append(n)
    order.extend(sorted(n for n in nodes if n not in part_of and nodes[n].gpu.count > 0))
    return order, part_of


def with_totals(out: list[NodeGpus]) -> GpuMap:
    """The map of ``out`` with its totals per partition and per GPU model."""
    parts: dict[str, GroupTotals] = {}
    models: dict[str, GroupTotals] = {}
    for ng in out:
        for group, key in ((parts, ng.partition), (models, ng.model)):
            totals = group.setdefault(key, GroupTotals(key))
            totals.nodes += 1
            if ng.down:
                totals.down += 1
            else:
                totals.total += ng.total
            totals.used += ng.used
    return GpuMap(out, list(parts.values()), list(models.values()))


def with_nodes_replaced(
    gpu_map: GpuMap, nodes: list[NodeGpus], pairs: Iterable[tuple[NodeGpus, NodeGpus]]
) -> GpuMap:
    """``with_totals(nodes)`` where ``nodes`` is ``gpu_map.nodes`` with each pair's old node
    replaced by its new one: the totals of the groups they are in adjusted rather than summed
    again over every node (~6k nodes' slots per tick at 50k pods, issue 16 K1). A node whose
    partition or model changed may change the groups' order: then they are summed again.
    ``gpu_map``'s groups are not mutated (it may still be on screen)."""
    parts = {g.name: dataclasses.replace(g) for g in gpu_map.partitions}
    models = {g.name: dataclasses.replace(g) for g in gpu_map.models}
    for old, new in pairs:
        if old.partition != new.partition or old.model != new.model:
            return with_totals(nodes)
        for totals in (parts[new.partition], models[new.model]):
            totals.used += new.used - old.used
            totals.down += new.down - old.down
            totals.total += (0 if new.down else new.total) - (0 if old.down else old.total)
    return GpuMap(nodes, list(parts.values()), list(models.values()))


def _place_unindexed(ng: NodeGpus) -> None:
    """Pods without device indices (no device plugin data yet) fill the lowest free slots."""
    left = ng.unindexed
    for slot in ng.slots:
        if left <= 0:
            break
        room = 1000 - slot.used
        take = min(room, left)
        if take > 0:
            slot.used += take
            slot.holders.append(("(unindexed)", "", take / 1000))
            left -= take
