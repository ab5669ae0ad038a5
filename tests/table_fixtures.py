"""Hand-built snapshots and schedule results for the table and CLI tests (no simulator, no core).

The table tests state exactly the job, node and plan fields a table reads, so a formatting bug
cannot hide behind the simulator's randomness. This module holds builders only (no tests).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from hpctop.model.objects import GpuInventory, Job, JobKind, Node, Pod, Reason
from hpctop.model.policy import PartitionState, QueueState
from hpctop.model.resources import Resources
from hpctop.model.states import JobState, ReasonCode
from hpctop.model.store import Snapshot
from hpctop.scheduling.types import (
    JobPlan,
    PartitionStatus,
    Placement,
    PriorityBreakdown,
    QueueStatus,
    ScheduleResult,
)
from hpctop.tables.fmt import EPOCH

GI = 1024**3
NS = "team-a"


def make_node(
    name: str,
    *,
    gpus: int = 8,
    product: str | None = "H100",
    cpu: int = 64_000,
    memory: int = 512 * GI,
    ready: bool = True,
    unschedulable: bool = False,
    mig: Sequence[tuple[str, int]] = (),
    sharing: str = "none",
) -> Node:
    extended = {f"nvidia.com/mig-{p}": n for p, n in mig}
    alloc = Resources.of(cpu=cpu, memory=memory, gpu=gpus * 1000, **extended)
    return Node(
        name=name,
        uid=name,
        resource_version="1",
        labels={},
        taints=(),
        unschedulable=unschedulable,
        ready=ready,
        capacity=alloc,
        allocatable=alloc,
        gpu=GpuInventory(
            product=product if gpus or mig else None,
            count=gpus,
            memory_mib=81559 if gpus else None,
            mig_strategy="mixed" if mig else "none",
            mig_devices=tuple(mig),
            sharing=sharing,
        ),
        created=EPOCH,
    )


def make_pod(
    name: str, node: str | None, *, gpu: int = 1000, cpu: int = 1000, phase: str = "Running", mig_3g: int = 0
) -> Pod:
    ext = {"nvidia.com/mig-3g.40gb": mig_3g} if mig_3g else {}
    return Pod(
        namespace=NS,
        name=name,
        uid=name,
        resource_version="1",
        labels={},
        annotations={},
        owner=None,
        node_name=node,
        scheduler_name="hpctop",
        phase=phase,
        requests=Resources.of(cpu=cpu, memory=GI, gpu=gpu, **ext),
        gpu_indices=(),
        gpu_models=(),
        node_selector=(),
        tolerations=(),
        priority=None,
        priority_class=None,
        scheduling_gates=(),
        created=EPOCH,
        started=EPOCH if node else None,
        finished=None,
        deleted=None,
        active_deadline_seconds=None,
        scheduled=None,
        status_reason=None,
        terminated_reason=None,
    )


def make_job(
    name: str,
    *,
    state: JobState = JobState.PENDING,
    namespace: str = NS,
    user: str = "alice",
    queue: str | None = "root.research.nlp",
    partition: str | None = None,
    gpu: int = 1000,
    cpu: int = 4000,
    members: int = 1,
    min_members: int = 1,
    running: int = 0,
    nodes: Sequence[str] = (),
    submit: float = EPOCH,
    start: float | None = None,
    end: float | None = None,
    observed: Reason | None = None,
    time_limit: int | None = None,
) -> Job:
    pending = tuple((namespace, f"{name}-{i}") for i in range(members - running)) if state.is_pending else ()
    return Job(
        key=(namespace, "Job", name),
        namespace=namespace,
        name=name,
        kind=JobKind.BATCH,
        owner_kind="Job",
        uid=name,
        user=user,
        queue=queue,
        partition=partition,
        priority_value=None,
        priority_class=None,
        state=state,
        observed_reason=observed,
        submit_time=submit,
        start_time=start,
        end_time=end,
        per_member=Resources.of(cpu=cpu, memory=GI, gpu=gpu),
        members=members,
        min_members=min_members,
        running_members=running,
        pending_pods=pending,
        pods=tuple((namespace, f"{name}-{i}") for i in range(members)),
        nodes=tuple(nodes),
        gpu_models=(),
        node_selector=(),
        tolerations=(),
        scheduler_name="hpctop",
        scheduling_gates=(),
        time_limit=time_limit,
    )


def make_plan(
    job: Job,
    *,
    total: int = 0,
    factors: Mapping[str, float] | None = None,
    weighted: Mapping[str, float] | None = None,
    partition: str | None = "h100",
    order: int | None = None,
    reason: ReasonCode | None = None,
    message: str = "",
    eta: float | None = None,
    backfilled: bool = False,
) -> JobPlan:
    return JobPlan(
        job=job.key,
        priority=PriorityBreakdown(factors=dict(factors or {}), weighted=dict(weighted or {}), total=total),
        partition=partition,
        order=order,
        reason=Reason(reason, "core", message) if reason is not None else None,
        eta=eta,
        placement=Placement(job.key, (), partition, backfilled) if backfilled else None,
    )


def make_partition(
    name: str, nodes: Iterable[str], *, state: PartitionState = PartitionState.UP
) -> PartitionStatus:
    names = tuple(nodes)
    return PartitionStatus(
        name=name,
        priority_tier=1,
        state=state,
        nodes=names,
        gpu_models=(),
        capacity=Resources(),
        allocated=Resources(),
        free=Resources(),
    )


def make_queue(
    path: str,
    *,
    children: Sequence[str] = (),
    guaranteed: int = 0,
    used: int = 0,
    max_gpu: int | None = None,
    pending: int = 0,
    running_jobs: int = 0,
    pending_jobs: int = 0,
    fairshare: float = 1.0,
    state: QueueState = QueueState.OPEN,
) -> QueueStatus:
    parent = path.rsplit(".", 1)[0] if "." in path else None
    return QueueStatus(
        path=path,
        parent=parent,
        children=tuple(children),
        depth=path.count("."),
        state=state,
        guaranteed=Resources.of(gpu=guaranteed),
        max=Resources.of(gpu=max_gpu) if max_gpu is not None else None,
        used=Resources.of(gpu=used, cpu=used * 8),
        pending=Resources.of(gpu=pending),
        running_jobs=running_jobs,
        pending_jobs=pending_jobs,
        dominant_share=used / guaranteed if guaranteed else 0.0,
        dominant_resource="gpu" if used else "",
        cluster_share=used / 16000,
        normalized_share=guaranteed / 16000,
        fairshare_factor=fairshare,
        borrowing=used > guaranteed,
    )


def make_snapshot(nodes: Sequence[Node], pods: Sequence[Pod], jobs: Sequence[Job]) -> Snapshot:
    by_node: dict[str, frozenset[tuple[str, str]]] = {}
    for pod in pods:
        if pod.node_name is not None:
            by_node[pod.node_name] = by_node.get(pod.node_name, frozenset()) | {pod.key}
    return Snapshot(
        version=1,
        taken_at=EPOCH,
        nodes=MappingProxyType({n.name: n for n in nodes}),
        pods=MappingProxyType({p.key: p for p in pods}),
        jobs=MappingProxyType({j.key: j for j in jobs}),
        workloads=MappingProxyType({}),
        priority_classes=MappingProxyType({}),
        pods_by_node=MappingProxyType(by_node),
    )


def make_result(
    now: float,
    plans: Sequence[JobPlan] = (),
    *,
    partitions: Sequence[PartitionStatus] = (),
    queues: Sequence[QueueStatus] = (),
) -> ScheduleResult:
    pending = tuple(
        p.job for p in sorted((p for p in plans if p.order is not None), key=lambda p: p.order or 0)
    )
    return ScheduleResult(
        now=now,
        cluster=Resources(),
        partitions=tuple(partitions),
        queues=MappingProxyType({q.path: q for q in queues}),
        plans=MappingProxyType({p.job: p for p in plans}),
        placements=(),
        pending_order=pending,
    )


def sample_cluster() -> tuple[Snapshot, ScheduleResult]:
    """A small cluster: two H100 nodes (one cordoned), one A100 node with MIG, a CPU node; five jobs."""
    nodes = [
        make_node("gpu-h100-001"),
        make_node("gpu-h100-002", unschedulable=True),
        make_node("gpu-a100-001", gpus=4, product="A100", mig=(("3g.40gb", 2),)),
        make_node("cpu-001", gpus=0),
    ]
    pods = [
        make_pod("train-0", "gpu-h100-001", gpu=4000),
        make_pod("train-1", "gpu-h100-001", gpu=2000),
        make_pod("notebook-0", "gpu-a100-001", gpu=250, mig_3g=1),
        make_pod("old-0", "gpu-h100-002", gpu=1000),
        make_pod("done-0", "gpu-h100-001", gpu=1000, phase="Succeeded"),
    ]
    hour = 3600.0
    train = make_job(
        "train",
        state=JobState.RUNNING,
        members=2,
        min_members=2,
        running=2,
        gpu=3000,
        nodes=["gpu-h100-001"],
        start=EPOCH + 600,
        time_limit=7200,
    )
    notebook = make_job(
        "notebook",
        state=JobState.RUNNING,
        user="bob",
        namespace="team-b",
        queue="root.sandbox",
        gpu=250,
        running=1,
        nodes=["gpu-a100-001"],
        start=EPOCH + 1200,
    )
    big = make_job("big", gpu=8000, members=4, min_members=4, submit=EPOCH + 60)
    held = make_job("held", state=JobState.HELD, user="bob", queue=None, submit=EPOCH + 30)
    done = make_job("done", state=JobState.COMPLETED, start=EPOCH + 10, end=EPOCH + 910)
    plans = [
        make_plan(train, total=1200),
        make_plan(notebook, total=900, partition="a100"),
        make_plan(
            big,
            total=11750,
            factors={"age": 0.5, "fairshare": 1.0, "jobsize": 0.25, "partition": 1.0, "qos": 0.0},
            weighted={"age": 500.0, "fairshare": 10000.0, "jobsize": 250.0, "partition": 1000.0, "qos": 0.0},
            order=0,
            reason=ReasonCode.RESOURCES,
            message="needs 32 GPUs, 10 free",
            eta=EPOCH + 2 * hour,
        ),
        make_plan(held, total=0, reason=ReasonCode.HELD, partition=None),
    ]
    partitions = [
        make_partition("h100", ["gpu-h100-001", "gpu-h100-002"]),
        make_partition("a100", ["gpu-a100-001"]),
        make_partition("cpu", ["cpu-001"]),
    ]
    queues = [
        make_queue(
            "root", children=["root.research", "root.sandbox"], used=6250, running_jobs=2, pending_jobs=2
        ),
        make_queue(
            "root.research",
            children=["root.research.nlp"],
            guaranteed=8000,
            used=6000,
            max_gpu=12000,
            pending=32000,
            running_jobs=1,
            pending_jobs=1,
            fairshare=0.594604,
        ),
        make_queue(
            "root.research.nlp", guaranteed=8000, used=6000, pending=32000, running_jobs=1, pending_jobs=1
        ),
        make_queue("root.sandbox", used=250, running_jobs=1, fairshare=0.25, state=QueueState.CLOSED),
    ]
    snapshot = make_snapshot(nodes, pods, [train, notebook, big, held, done])
    return snapshot, make_result(EPOCH + hour, plans, partitions=partitions, queues=queues)
