"""Partitions: named node sets chosen by label selector, like Slurm's ``PartitionName=``.

Why: users coming from Slurm think in partitions (``sinfo``), and Kubernetes GPU clusters already
label nodes by GPU product, so with no configured partitions each GPU product becomes one (plus
``cpu`` for nodes without GPUs). The node lists are built once per cycle and kept sorted by name;
everything downstream (placement scans, priorities' job-size factor, ``sinfo`` rows) indexes by
partition, which keeps a placement scan within the nodes that could ever matter.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hpctop.model.objects import Node, Pod
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
    specs = [PartitionSpec(name=p, selector=((label, p),)) for p in sorted(products)]
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


def _matches(spec: PartitionSpec, node: Node, label: str) -> bool:
    if spec.selector or spec.cpu_only:
        labels = node.labels
        if spec.selector and any(k == label for k, _ in spec.selector) and label not in labels:
            # the product label may be missing where GPU discovery reported the product itself
            product = node.gpu.product
            labels = {**labels, label: product} if product else labels
        count = 1 if node_has_gpu(node) else 0
        return spec.matches(labels, count)
    return True


def build_partitions(nodes: Mapping[str, Node], policy: Policy) -> tuple[PartitionInfo, ...]:
    """The partitions in display order (tier descending, then name) with their sorted node lists."""
    ordered = [nodes[name] for name in sorted(nodes)]
    specs = policy.partitions or default_specs(ordered, policy.partition_label)
    infos = [
        PartitionInfo(spec, tuple(n.name for n in ordered if _matches(spec, n, policy.partition_label)))
        for spec in specs
    ]
    infos.sort(key=lambda p: (-p.spec.priority_tier, p.name))
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
        capacity = capacity + node.allocatable
        for pod in pods_by_node.get(name, ()):
            allocated = allocated + pod.requests
    free = (capacity - allocated).clamp_min_zero()
    return PartitionStatus(
        name=info.name,
        priority_tier=info.spec.priority_tier,
        state=info.spec.state,
        nodes=info.nodes,
        gpu_models=tuple(sorted(models)),
        capacity=capacity,
        allocated=allocated,
        free=free,
        nodes_down=down,
    )


def cluster_capacity(nodes: Mapping[str, Node]) -> Resources:
    """Allocatable of all schedulable nodes: the denominator of cluster shares."""
    acc = ZERO
    for name in sorted(nodes):
        if nodes[name].schedulable:
            acc = acc + nodes[name].allocatable
    return acc
