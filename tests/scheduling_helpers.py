"""Small builders for scheduling-core tests: nodes, pending jobs, running jobs with bound pods.

Objects are built directly (not through the store) so a test states exactly the job fields the
core reads, and a 1,500-node snapshot builds in milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from types import MappingProxyType

from hpctop.model.objects import (
    GpuInventory,
    Job,
    JobKind,
    Node,
    Pod,
    PriorityClass,
    Taint,
    Toleration,
)
from hpctop.model.resources import Resources
from hpctop.model.states import JobState
from hpctop.model.store import Snapshot

GI = 1024**3
NS = "ns"


def node(
    name: str,
    *,
    gpus: int = 8,
    cpu: int = 64_000,
    memory: int = 512 * GI,
    product: str | None = "H100",
    labels: dict[str, str] | None = None,
    taints: Sequence[Taint] = (),
    ready: bool = True,
    unschedulable: bool = False,
    extended: dict[str, int] | None = None,
) -> Node:
    all_labels = dict(labels or {})
    if gpus and product:
        all_labels.setdefault("nvidia.com/gpu.product", product)
    alloc = Resources.of(cpu=cpu, memory=memory, gpu=gpus * 1000, **(extended or {}))
    return Node(
        name=name,
        uid=name,
        resource_version="1",
        labels=all_labels,
        taints=tuple(taints),
        unschedulable=unschedulable,
        ready=ready,
        capacity=alloc,
        allocatable=alloc,
        gpu=GpuInventory(product=product if gpus else None, count=gpus),
        created=0.0,
    )


def job(
    name: str,
    *,
    gpu: int = 0,
    cpu: int = 1000,
    memory: int = GI,
    members: int = 1,
    min_members: int | None = None,
    created: int | None = None,
    queue: str | None = None,
    state: JobState = JobState.PENDING,
    priority: int | None = None,
    submit: float = 0.0,
    time_limit: int | None = None,
    partition: str | None = None,
    gates: Sequence[str] = (),
    gpu_models: Sequence[str] = (),
    selector: dict[str, str] | None = None,
    tolerations: Sequence[Toleration] = (),
    extended: dict[str, int] | None = None,
) -> Job:
    """A pending job with ``created`` (default ``members``) unbound pods."""
    count = members if created is None else created
    pods = tuple((NS, f"{name}-{i}") for i in range(count))
    return Job(
        key=(NS, "Job", name),
        namespace=NS,
        name=name,
        kind=JobKind.BATCH,
        owner_kind="Job",
        uid=name,
        user="u",
        queue=queue,
        partition=partition,
        priority_value=priority,
        priority_class=None,
        state=state,
        observed_reason=None,
        submit_time=submit,
        start_time=None,
        end_time=None,
        per_member=Resources.of(cpu=cpu, memory=memory, gpu=gpu, **(extended or {})),
        members=members,
        min_members=members if min_members is None else min_members,
        running_members=0,
        pending_pods=pods if state.is_pending else (),
        pods=pods,
        nodes=(),
        gpu_models=tuple(gpu_models),
        node_selector=tuple(sorted((selector or {}).items())),
        tolerations=tuple(tolerations),
        scheduler_name="hpctop",
        scheduling_gates=tuple(gates),
        time_limit=time_limit,
    )


def running(
    name: str,
    on: Sequence[tuple[str, Sequence[int]]],
    *,
    gpu: int = 0,
    cpu: int = 1000,
    memory: int = GI,
    queue: str | None = None,
    start: float = 0.0,
    time_limit: int | None = None,
    priority: int | None = None,
) -> tuple[Job, list[Pod]]:
    """A running job with one bound pod per (node, gpu indices) in ``on``."""
    per = Resources.of(cpu=cpu, memory=memory, gpu=gpu)
    pods = [
        Pod(
            namespace=NS,
            name=f"{name}-{i}",
            uid=f"{name}-{i}",
            resource_version="1",
            labels={},
            annotations={},
            owner=None,
            node_name=node_name,
            scheduler_name="hpctop",
            phase="Running",
            requests=per,
            gpu_indices=tuple(indices),
            gpu_models=(),
            node_selector=(),
            tolerations=(),
            priority=priority,
            priority_class=None,
            scheduling_gates=(),
            created=start,
            started=start,
            finished=None,
            deleted=None,
            active_deadline_seconds=time_limit,
            scheduled=None,
            status_reason=None,
            terminated_reason=None,
        )
        for i, (node_name, indices) in enumerate(on)
    ]
    j = Job(
        key=(NS, "Job", name),
        namespace=NS,
        name=name,
        kind=JobKind.BATCH,
        owner_kind="Job",
        uid=name,
        user="u",
        queue=queue,
        partition=None,
        priority_value=priority,
        priority_class=None,
        state=JobState.RUNNING,
        observed_reason=None,
        submit_time=start,
        start_time=start,
        end_time=None,
        per_member=per,
        members=len(on),
        min_members=len(on),
        running_members=len(on),
        pending_pods=(),
        pods=tuple(p.key for p in pods),
        nodes=tuple(sorted({n for n, _ in on})),
        gpu_models=(),
        node_selector=(),
        tolerations=(),
        scheduler_name="hpctop",
        scheduling_gates=(),
        time_limit=time_limit,
    )
    return j, pods


def snapshot(
    nodes: Iterable[Node],
    jobs: Iterable[Job] = (),
    running_jobs: Iterable[tuple[Job, list[Pod]]] = (),
    priority_classes: Iterable[PriorityClass] = (),
) -> Snapshot:
    node_map = {n.name: n for n in nodes}
    job_map = {j.key: j for j in jobs}
    pod_map = {}
    by_node: dict[str, frozenset[tuple[str, str]]] = {}
    for j, pods in running_jobs:
        job_map[j.key] = j
        for p in pods:
            pod_map[p.key] = p
            assert p.node_name is not None
            by_node[p.node_name] = by_node.get(p.node_name, frozenset()) | {p.key}
    return Snapshot(
        version=1,
        taken_at=0.0,
        nodes=MappingProxyType(node_map),
        pods=MappingProxyType(pod_map),
        jobs=MappingProxyType(job_map),
        workloads=MappingProxyType({}),
        priority_classes=MappingProxyType({pc.name: pc for pc in priority_classes}),
        pods_by_node=MappingProxyType(by_node),
    )
