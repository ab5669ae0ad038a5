"""Partitions: named node sets chosen by label selector, like Slurm's ``PartitionName=``.

Why: users coming from Slurm think in partitions (``sinfo``), and Kubernetes GPU clusters already
label nodes by GPU product, so with no configured partitions each GPU product becomes one (plus
``cpu`` for nodes without GPUs). The node lists are built once per cycle and kept sorted by name;
everything downstream (placement scans, priorities' job-size factor, ``sinfo`` rows) indexes by
partition, which keeps a placement scan within the nodes that could ever matter.

A partition's ``capacity``/``allocated``/``free`` GPUs are physical GPUs, as the nodes and gpus
tables count them: a time-sliced or MIG node advertises shares (``nvidia.com/gpu`` = replicas or
slices, or one resource per MIG profile), and a pod there holds the share of a GPU its request
is (:meth:`~hpctop.model.objects.GpuInventory.physical_milli`), so one share never counts as a
whole GPU in the console's totals, the utilisation history or the forecasts' partition figures.
Placement itself still counts what the nodes advertise, as the device plugin and kube-scheduler do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from hpctop.model.objects import GpuInventory, Node, Pod
from hpctop.model.policy import CPU_PARTITION, PartitionSpec, PartitionState, Policy
from hpctop.model.resources import ZERO, Resources
from hpctop.scheduling.types import PartitionStatus


def node_product(node: Node, label: str) -> str | None:
    """The GPU product a node is partitioned by: the policy label, else GPU discovery's product."""
    return node.labels.get(label) or node.gpu.product


def node_has_gpu(node: Node) -> bool:
    return node.gpu.count > 0 or node.allocatable.gpu > 0 or bool(node.gpu.mig_devices)


def default_specs(nodes: Iterable[Node], label: str) -> tuple[PartitionSpec, ...]:
    """One partition per GPU product (selector on ``label``) plus ``cpu`` for nodes without GPUs."""
    products: set[str] = set()
    cpu = False
    for node in nodes:
        if node_has_gpu(node):
            product = node_product(node, label)
            if product:
                products.add(product)
        else:
            cpu = True
    return specs_for(products, cpu, label)


def specs_for(products: Iterable[str], cpu: bool, label: str) -> tuple[PartitionSpec, ...]:
    """The default specs from the set of GPU products and whether any node has no GPU."""
    specs = [PartitionSpec(name=p, selector=((label, p),)) for p in sorted(set(products))]
    if cpu:
        specs.append(PartitionSpec(name=CPU_PARTITION, selector=(), cpu_only=True))
    return tuple(specs)


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    spec: PartitionSpec
    nodes: tuple[str, ...]  # all member nodes, sorted by name (down ones included)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def up(self) -> bool:
        return self.spec.state == PartitionState.UP


def matches(spec: PartitionSpec, node: Node, label: str) -> bool:
    if spec.selector or spec.cpu_only:
        labels = node.labels
        if spec.selector and any(k == label for k, _ in spec.selector) and label not in labels:
            # the product label may be missing where GPU discovery reported the product itself
            product = node.gpu.product
            labels = {**labels, label: product} if product else labels
        count = 1 if node_has_gpu(node) else 0
        return spec.matches(labels, count)
    return True


def display_key(info: PartitionInfo) -> tuple[int, int, str]:
    """Display (and multi-partition CPU job) order: PriorityTier, then the older tier, then name."""
    return (-info.spec.evaluation_tier, -info.spec.priority_tier, info.name)


def build_partitions(nodes: Mapping[str, Node], policy: Policy) -> tuple[PartitionInfo, ...]:
    """The partitions in display order (``display_key``) with their sorted node lists."""
    ordered = [nodes[name] for name in sorted(nodes)]
    specs = policy.partitions or default_specs(ordered, policy.partition_label)
    infos = [
        PartitionInfo(spec, tuple(n.name for n in ordered if matches(spec, n, policy.partition_label)))
        for spec in specs
    ]
    infos.sort(key=display_key)
    return tuple(infos)


def partition_status(
    info: PartitionInfo,
    nodes: Mapping[str, Node],
    pods_by_node: Mapping[str, list[Pod]],
    label: str,
) -> PartitionStatus:
    """``sinfo`` numbers: capacity and allocation of schedulable nodes; down ones only counted."""
    capacity = allocated = ZERO
    down = 0
    models: set[str] = set()
    for name in info.nodes:
        node = nodes[name]
        product = node_product(node, label) if node_has_gpu(node) else None
        if product:
            models.add(product)
        if not node.schedulable:
            down += 1
            continue
        capacity = capacity + _physical(node.allocatable, node.gpu_capacity_milli)
        for pod in pods_by_node.get(name, ()):
            requests = pod.requests
            if node.counts_gpus_apart:
                requests = _physical(requests, node.gpu.physical_milli(requests))
            allocated = allocated + requests
    free = (capacity - allocated).clamp_min_zero()
    return PartitionStatus(
        name=info.name,
        priority_tier=info.spec.priority_tier,
        evaluation_tier=info.spec.evaluation_tier,
        priority_job_factor=info.spec.job_factor,
        state=info.spec.state,
        nodes=info.nodes,
        gpu_models=tuple(sorted(models)),
        capacity=capacity,
        allocated=allocated,
        free=free,
        nodes_down=down,
    )


#: per-node sums kept as plain ints: (cpu, memory, gpu, extended by name)
IntVector = tuple[int, int, int, dict[str, int]]


def add_into(acc: list[int], ext: dict[str, int], r: Resources) -> None:
    """``acc += r`` on plain ints (a ``Resources`` sum allocates a new vector per addition)."""
    acc[0] += r.cpu
    acc[1] += r.memory
    acc[2] += r.gpu
    for key, value in r.extended:
        ext[key] = ext.get(key, 0) + value


def to_resources(acc: Sequence[int], ext: Mapping[str, int]) -> Resources:
    """The ``Resources`` of an int sum: extended sorted, zeros dropped (what chained ``+`` gives)."""
    return Resources(acc[0], acc[1], acc[2], tuple(sorted((k, v) for k, v in ext.items() if v != 0)))


@dataclass(frozen=True, slots=True)
class PartitionStatic:
    """The node-only side of a partition's ``sinfo`` numbers (kept between cycles with the nodes)."""

    capacity: Resources
    down: int
    models: tuple[str, ...]
    schedulable: tuple[str, ...]
    #: schedulable nodes whose advertised GPUs are shares or MIG slices: their pods' GPU sums
    #: are turned into physical milli-GPU by these inventories
    shared: tuple[tuple[str, GpuInventory], ...] = ()


def partition_static(
    info: PartitionInfo, nodes: Mapping[str, Node], products: Mapping[str, str | None]
) -> PartitionStatic:
    cap = [0, 0, 0]
    cap_ext: dict[str, int] = {}
    down = 0
    models: set[str] = set()
    schedulable: list[str] = []
    shared: list[tuple[str, GpuInventory]] = []
    for name in info.nodes:
        node = nodes[name]
        product = products[name]
        if product:
            models.add(product)
        if not node.schedulable:
            down += 1
            continue
        schedulable.append(name)
        add_into(cap, cap_ext, node.allocatable)
        if node.counts_gpus_apart:
            cap[2] += node.gpu_capacity_milli - node.allocatable.gpu
            shared.append((name, node.gpu))
    return PartitionStatic(
        to_resources(cap, cap_ext), down, tuple(sorted(models)), tuple(schedulable), tuple(shared)
    )


def partition_status_fast(
    info: PartitionInfo, static: PartitionStatic, used: Mapping[str, IntVector]
) -> PartitionStatus:
    """``partition_status`` from the partition's static part and per-node pod sums (same numbers).

    The profile of the demo showed ``partition_status`` adding ``Resources`` for every node and
    pod each cycle; ``used`` is the per-node sum of pod requests, kept between cycles by the memo.
    """
    alloc = [0, 0, 0]
    alloc_ext: dict[str, int] = {}
    get = used.get
    for name in static.schedulable:
        mine = get(name)
        if mine is not None:
            alloc[0] += mine[0]
            alloc[1] += mine[1]
            alloc[2] += mine[2]
            for key, value in mine[3].items():
                alloc_ext[key] = alloc_ext.get(key, 0) + value
    for name, gpu in static.shared:  # shares and MIG slices held there, as physical milli-GPU
        mine = get(name)
        if mine is not None:
            held = Resources(0, 0, mine[2], tuple(sorted((k, v) for k, v in mine[3].items() if v)))
            alloc[2] += gpu.physical_milli(held) - mine[2]
    allocated = to_resources(alloc, alloc_ext)
    return PartitionStatus(
        name=info.name,
        priority_tier=info.spec.priority_tier,
        evaluation_tier=info.spec.evaluation_tier,
        priority_job_factor=info.spec.job_factor,
        state=info.spec.state,
        nodes=info.nodes,
        gpu_models=static.models,
        capacity=static.capacity,
        allocated=allocated,
        free=(static.capacity - allocated).clamp_min_zero(),
        nodes_down=static.down,
    )


def _physical(r: Resources, gpu_milli: int) -> Resources:
    """``r`` with its GPUs as ``gpu_milli`` physical milli-GPU (MIG slices stay per profile)."""
    return r if r.gpu == gpu_milli else Resources(r.cpu, r.memory, gpu_milli, r.extended)


def cluster_capacity(nodes: Mapping[str, Node]) -> Resources:
    """Allocatable of all schedulable nodes: the denominator of cluster shares."""
    acc = ZERO
    for name in sorted(nodes):
        if nodes[name].schedulable:
            acc = acc + nodes[name].allocatable
    return acc
