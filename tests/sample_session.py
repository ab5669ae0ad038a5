"""A small, seeded, self-contained cluster that behaves like a runtime ``Session``.

The console's tests need a session whose every pixel is reproducible (SVG snapshots), that can grow
to 100k jobs for the jobs-pane timing test, and that does not move when the simulator or the core
change underneath (they are written by other people, at the same time). This module builds frozen
model objects (``Node``, ``Pod``, ``Job``) and a plausible ``ScheduleResult`` directly, with a tiny
deterministic "cluster" that starts and finishes jobs on :meth:`SampleSession.step` and an actuator
that applies cancel/hold/release/requeue/priority/move to it. A test helper, not part of the
package: the console's tests that must not move with the simulator use it; the ones about the
console as ``make demo`` runs it use the runtime's demo session (``tests/tui/test_console_robust.py``).

Nothing here is scheduling logic worth trusting: first-fit placement, a made-up priority breakdown.
"""

from __future__ import annotations

import random
from dataclasses import replace
from types import MappingProxyType

from hpctop.actions.requests import (
    ActionKind,
    ActionRequest,
    ActionResult,
    Actuator,
    Preview,
    ReadOnlyActuator,
)
from hpctop.errors import ActionRefused
from hpctop.model.objects import Condition, GpuInventory, Job, JobKey, JobKind, Node, Pod, PodKey, Reason
from hpctop.model.policy import PartitionSpec, PartitionState, Policy, QueueSpec, QueueState
from hpctop.model.resources import Resources
from hpctop.model.states import JobState, ReasonCode
from hpctop.model.store import Snapshot
from hpctop.scheduling.types import JobPlan, PartitionStatus, PriorityBreakdown, QueueStatus, ScheduleResult

GIB = 1024**3
EPOCH = 1_767_225_600.0  # 2026-01-01T00:00:00Z: a fixed clock for reproducible screens
LEAF_QUEUES = ("root.research.nlp", "root.research.vision", "root.prod.serving", "root.default")
USERS = ("alice", "bob", "carol", "dave", "erin")
PARTITIONS = (("h100", "NVIDIA-H100-80GB-HBM3", 8, 1000), ("a100", "NVIDIA-A100-SXM4-40GB", 8, 1000))
SHARED = ("t4", "Tesla-T4", 4)


def _node(name: str, product: str | None, gpus: int, ready: bool = True, cordoned: bool = False) -> Node:
    alloc = Resources(cpu=96_000, memory=1024 * GIB, gpu=gpus * 1000)
    labels = {"kubernetes.io/hostname": name}
    if product:
        labels["nvidia.com/gpu.product"] = product
    return Node(
        name=name,
        uid="uid-" + name,
        resource_version="1",
        labels=labels,
        taints=(),
        unschedulable=cordoned,
        ready=ready,
        capacity=alloc,
        allocatable=alloc,
        gpu=GpuInventory(product=product, count=gpus, sharing="milli" if product == SHARED[1] else "none"),
        created=EPOCH - 86400,
    )


class SampleActuator:
    """Applies actions to a :class:`SampleSession` (the simulator's actuator will do this for real)."""

    def __init__(self, session: SampleSession) -> None:
        self._session = session

    @property
    def read_only(self) -> bool:
        return False

    def _check(self, request: ActionRequest) -> tuple[Job, str]:
        job = self._session.jobs.get(request.job)
        if job is None:
            raise ActionRefused(f"job {request.job[0]}/{request.job[2]} no longer exists")
        kind = request.kind
        if kind in (ActionKind.CANCEL, ActionKind.REQUEUE) and job.state.is_finished:
            raise ActionRefused(f"job {job.id} already finished ({job.state.value})")
        if kind == ActionKind.HOLD and not job.state.is_pending:
            raise ActionRefused(f"only pending jobs can be held; {job.id} is {job.state.value}")
        if kind == ActionKind.RELEASE and job.state != JobState.HELD:
            raise ActionRefused(f"job {job.id} is not held")
        if kind == ActionKind.PRIORITY and not isinstance(request.value, int):
            raise ActionRefused("priority must be a whole number")
        if kind == ActionKind.MOVE and request.value not in LEAF_QUEUES:
            raise ActionRefused(f"no leaf queue named {request.value!s}")
        change = {
            ActionKind.CANCEL: f"{job.id}: {job.state.value} -> CANCELLED",
            ActionKind.REQUEUE: f"{job.id}: {job.state.value} -> PENDING (pods deleted, job kept)",
            ActionKind.HOLD: f"{job.id}: PENDING -> HELD (spec.suspend=true)",
            ActionKind.RELEASE: f"{job.id}: HELD -> PENDING (spec.suspend=false)",
            ActionKind.PRIORITY: f"{job.id}: priority {job.priority_value} -> {request.value}",
            ActionKind.MOVE: f"{job.id}: queue {job.queue} -> {request.value}",
        }[kind]
        return job, change

    def preview(self, request: ActionRequest) -> Preview:
        try:
            _, change = self._check(request)
        except ActionRefused as exc:
            return Preview(request, False, (), refusal=exc.detail)
        return Preview(request, True, (change,))

    def execute(self, request: ActionRequest) -> ActionResult:
        job, change = self._check(request)
        self._session.apply_action(job, request)
        return ActionResult(request, True, "done", (change,), at=self._session.now)


class SampleSession:
    """Implements the runtime ``Session`` interface the console drives, over a synthetic cluster."""

    def __init__(
        self,
        seed: int = 1,
        nodes_per_partition: int = 6,
        jobs: int = 60,
        read_only: bool = False,
        source_name: str = "sample",
        at: float = EPOCH,
    ) -> None:
        self._rng = random.Random(seed)
        self.source_name = source_name
        self.speed = 1.0
        self.now = at
        self.version = 0
        self.steps = 0
        self.refreshes = 0
        specs = [PartitionSpec(p, (("nvidia.com/gpu.product", prod),)) for p, prod, _, _ in PARTITIONS]
        specs.append(PartitionSpec(SHARED[0], (("nvidia.com/gpu.product", SHARED[1]),)))
        self.policy = Policy(
            partitions=tuple(specs),
            queues=(
                QueueSpec("root"),
                QueueSpec("root.research", Resources(gpu=48_000), Resources(gpu=96_000)),
                QueueSpec("root.research.nlp", Resources(gpu=32_000), Resources(gpu=64_000)),
                QueueSpec("root.research.vision", Resources(gpu=16_000), Resources(gpu=48_000)),
                QueueSpec("root.prod", Resources(gpu=32_000)),
                QueueSpec("root.prod.serving", Resources(gpu=32_000)),
                QueueSpec("root.default", Resources(gpu=4_000), state=QueueState.OPEN),
            ),
        )
        self.nodes: dict[str, Node] = {}
        self.part_of: dict[str, str] = {}
        for part, product, gpus, _ in PARTITIONS:
            for i in range(nodes_per_partition):
                name = f"{part}-{i:03d}"
                self.nodes[name] = _node(
                    name, product, gpus, ready=(i != nodes_per_partition - 1 or part != "a100")
                )
                self.part_of[name] = part
        for i in range(max(2, nodes_per_partition // 2)):
            name = f"{SHARED[0]}-{i:03d}"
            self.nodes[name] = _node(name, SHARED[1], SHARED[2], cordoned=(i == 1))
            self.part_of[name] = SHARED[0]
        self.free: dict[str, list[int]] = {n: [1000] * node.gpu.count for n, node in self.nodes.items()}
        self.jobs: dict[JobKey, Job] = {}
        self.pods: dict[PodKey, Pod] = {}
        self._full: set[tuple[str | None, int]] = set()  # (partition, per-member GPUs) known not to fit
        for i in range(jobs):
            self._submit(i)
        inner: Actuator = SampleActuator(self)
        self.actuator: Actuator = ReadOnlyActuator(inner) if read_only else inner
        self._publish()

    # -- building --------------------------------------------------------------------------------

    def _submit(self, i: int) -> None:
        rng = self._rng
        part = rng.choice(("h100", "h100", "a100", "t4"))
        shared = part == "t4"
        per_gpu = rng.choice((250, 500)) if shared else rng.choice((1000, 1000, 2000, 4000, 8000))
        members = 1 if shared else rng.choice((1, 1, 1, 2, 4))
        queue = LEAF_QUEUES[i % len(LEAF_QUEUES)] if i % 7 else "root.default"
        user = USERS[(i * 3 + len(queue)) % len(USERS)]
        name = f"{('train', 'eval', 'infer', 'sweep')[i % 4]}-{i:05d}"
        key: JobKey = (f"team-{user}", "Job", name)
        submit = self.now - rng.randint(60, 7200)
        job = Job(
            key=key,
            namespace=key[0],
            name=name,
            kind=JobKind.BATCH,
            owner_kind="Job",
            uid=f"uid-{i}",
            user=user,
            queue=queue,
            partition=part,
            priority_value=rng.choice((0, 100, 1000)),
            priority_class=None,
            state=JobState.PENDING,
            observed_reason=None,
            submit_time=submit,
            start_time=None,
            end_time=None,
            per_member=Resources(cpu=8000, memory=64 * GIB, gpu=per_gpu),
            members=members,
            min_members=members,
            running_members=0,
            pending_pods=tuple((key[0], f"{name}-{m}") for m in range(members)),
            pods=tuple((key[0], f"{name}-{m}") for m in range(members)),
            nodes=(),
            gpu_models=(),
            node_selector=(),
            tolerations=(),
            scheduler_name="hpctop",
            scheduling_gates=(),
            time_limit=rng.choice((None, 3600, 86400)),
        )
        roll = rng.random()
        if roll < 0.08:
            job = replace(
                job, state=JobState.HELD, observed_reason=Reason(ReasonCode.HELD, "job", "suspended")
            )
        elif roll < 0.15:
            job = replace(
                job,
                state=JobState.COMPLETED if roll < 0.12 else JobState.FAILED,
                start_time=submit + 30,
                end_time=submit + 50,
                pending_pods=(),
            )
        self.jobs[key] = job
        if job.state == JobState.PENDING:
            self._try_start(key, start_at=min(submit + rng.randint(5, 300), self.now))

    def _try_start(self, key: JobKey, start_at: float) -> bool:
        job = self.jobs[key]
        need = job.per_member.gpu
        if (job.partition, need) in self._full:
            return False
        placed: list[tuple[str, tuple[int, ...]]] = []
        taken: dict[str, list[int]] = {}
        for _ in range(job.members):
            spot = self._find(job.partition or "", need, taken)
            if spot is None:
                if not taken:
                    self._full.add((job.partition, need))
                return False
            placed.append(spot)
        pods: list[Pod] = []
        for m, (node, idx) in enumerate(placed):
            per_index = need if need < 1000 else 1000
            for gi in idx:
                self.free[node][gi] -= per_index
            pods.append(self._pod(job, m, node, idx, start_at))
        for pod in pods:
            self.pods[pod.key] = pod
        self.jobs[key] = replace(
            job,
            state=JobState.RUNNING,
            start_time=start_at,
            running_members=job.members,
            pending_pods=(),
            nodes=tuple(sorted({n for n, _ in placed})),
            observed_reason=None,
        )
        return True

    def _find(self, part: str, need: int, taken: dict[str, list[int]]) -> tuple[str, tuple[int, ...]] | None:
        for name, node in self.nodes.items():
            if self.part_of[name] != part or not node.schedulable:
                continue
            free = [
                f - (taken.get(name, []).count(i) * min(need, 1000)) for i, f in enumerate(self.free[name])
            ]
            if need < 1000:
                for gi, f in enumerate(free):
                    if f >= need:
                        taken.setdefault(name, []).append(gi)
                        return name, (gi,)
                continue
            whole = [gi for gi, f in enumerate(free) if f == 1000]
            count = need // 1000
            if len(whole) >= count:
                idx = tuple(whole[:count])
                taken.setdefault(name, []).extend(idx)
                return name, idx
        return None

    def _pod(self, job: Job, m: int, node: str, idx: tuple[int, ...], started: float) -> Pod:
        return Pod(
            namespace=job.namespace,
            name=f"{job.name}-{m}",
            uid=f"{job.uid}-{m}",
            resource_version="1",
            labels={},
            annotations={},
            owner=None,
            node_name=node,
            scheduler_name="hpctop",
            phase="Running",
            requests=job.per_member,
            gpu_indices=idx,
            gpu_models=(),
            node_selector=(),
            tolerations=(),
            priority=job.priority_value,
            priority_class=None,
            scheduling_gates=(),
            created=job.submit_time,
            started=started,
            finished=None,
            deleted=None,
            active_deadline_seconds=None,
            scheduled=Condition("PodScheduled", "True", "", ""),
            status_reason=None,
            terminated_reason=None,
        )

    def _release_pods(self, job: Job) -> None:
        self._full.clear()
        for pk in job.pods:
            pod = self.pods.pop(pk, None)
            if pod is None or pod.node_name is None:
                continue
            per_index = min(pod.requests.gpu, 1000)
            for gi in pod.gpu_indices:
                self.free[pod.node_name][gi] += per_index

    def apply_action(self, job: Job, request: ActionRequest) -> None:
        key = job.key
        kind = request.kind
        if kind == ActionKind.CANCEL:
            self._release_pods(job)
            self.jobs[key] = replace(
                job, state=JobState.CANCELLED, end_time=self.now, nodes=(), pending_pods=()
            )
        elif kind == ActionKind.REQUEUE:
            self._release_pods(job)
            self.jobs[key] = replace(
                job,
                state=JobState.PENDING,
                start_time=None,
                nodes=(),
                running_members=0,
                pending_pods=job.pods,
            )
        elif kind == ActionKind.HOLD:
            self.jobs[key] = replace(job, state=JobState.HELD)
        elif kind == ActionKind.RELEASE:
            self.jobs[key] = replace(job, state=JobState.PENDING)
        elif kind == ActionKind.PRIORITY:
            self.jobs[key] = replace(job, priority_value=int(request.value or 0))
        elif kind == ActionKind.MOVE:
            self.jobs[key] = replace(job, queue=str(request.value))

    # -- the Session interface -------------------------------------------------------------------

    def step(self, virtual_seconds: float) -> None:
        """Advance the clock; finish some running jobs and start pending ones that now fit."""
        self.steps += 1
        self.now += virtual_seconds
        rng = self._rng
        for key, job in list(self.jobs.items()):
            if job.state == JobState.RUNNING and rng.random() < min(0.02 * virtual_seconds / 10, 0.5):
                self._release_pods(job)
                self.jobs[key] = replace(job, state=JobState.COMPLETED, end_time=self.now, nodes=())
        for key, job in list(self.jobs.items()):
            if job.state == JobState.PENDING:
                self._try_start(key, self.now)
        self._publish()

    def refresh(self) -> None:
        self.refreshes += 1
        self._publish()

    def _publish(self) -> None:
        self.version += 1
        by_node: dict[str, set[PodKey]] = {}
        for pk, pod in self.pods.items():
            if pod.node_name:
                by_node.setdefault(pod.node_name, set()).add(pk)
        self.snapshot = Snapshot(
            version=self.version,
            taken_at=self.now,
            nodes=MappingProxyType(dict(self.nodes)),
            pods=MappingProxyType(dict(self.pods)),
            jobs=MappingProxyType(dict(self.jobs)),
            workloads=MappingProxyType({}),
            priority_classes=MappingProxyType({}),
            pods_by_node=MappingProxyType({n: frozenset(s) for n, s in by_node.items()}),
        )
        self.result = self._schedule()

    def _schedule(self) -> ScheduleResult:
        now = self.now
        parts: list[PartitionStatus] = []
        cluster = Resources()
        for name in [p for p, *_ in PARTITIONS] + [SHARED[0]]:
            nodes = tuple(n for n, p in self.part_of.items() if p == name)
            up = [self.nodes[n] for n in nodes if self.nodes[n].schedulable]
            cap = Resources(gpu=sum(n.allocatable.gpu for n in up))
            used = sum(1000 * len(self.free[n]) - sum(self.free[n]) for n in nodes)
            alloc = Resources(gpu=used)
            cluster = cluster + cap
            parts.append(
                PartitionStatus(
                    name=name,
                    priority_tier=1,
                    state=PartitionState.UP,
                    nodes=nodes,
                    gpu_models=tuple(sorted({self.nodes[n].gpu.product or "" for n in nodes})),
                    capacity=cap,
                    allocated=alloc,
                    free=cap - alloc,
                    nodes_down=len(nodes) - len(up),
                )
            )
        used_q: dict[str, int] = {}
        pend_q: dict[str, int] = {}
        run_n: dict[str, int] = {}
        pend_n: dict[str, int] = {}
        for job in self.jobs.values():
            q = job.queue or "root.default"
            chain = [q[:i] for i in range(len(q)) if q[i] == "."] + [q]
            for path in chain:
                if job.state.is_active:
                    used_q[path] = used_q.get(path, 0) + job.per_member.gpu * job.members
                    run_n[path] = run_n.get(path, 0) + 1
                elif job.state.is_pending:
                    pend_q[path] = pend_q.get(path, 0) + job.per_member.gpu * job.members
                    pend_n[path] = pend_n.get(path, 0) + 1
        queues: dict[str, QueueStatus] = {}
        specs = {q.path: q for q in self.policy.queues}
        total = max(cluster.gpu, 1)
        for spec in self.policy.queues:
            children = tuple(sorted(p for p in specs if specs[p].parent == spec.path))
            used = used_q.get(spec.path, 0)
            guar = spec.guaranteed.gpu
            share = used / guar if guar else used / total
            norm = guar / total if guar else 1.0
            queues[spec.path] = QueueStatus(
                path=spec.path,
                parent=spec.parent,
                children=children,
                depth=spec.path.count("."),
                state=spec.state,
                guaranteed=spec.guaranteed,
                max=spec.max,
                used=Resources(gpu=used),
                pending=Resources(gpu=pend_q.get(spec.path, 0)),
                running_jobs=run_n.get(spec.path, 0),
                pending_jobs=pend_n.get(spec.path, 0),
                dominant_share=share,
                dominant_resource="gpu",
                cluster_share=used / total,
                normalized_share=norm,
                fairshare_factor=2 ** (-(used / total) / norm) if norm else 0.0,
                borrowing=bool(guar) and used > guar,
            )
        ordered = [q for q in _tree_order(queues)]
        plans: dict[JobKey, JobPlan] = {}
        pending: list[tuple[int, JobKey]] = []
        for key, job in self.jobs.items():
            qs = queues.get(job.queue or "root.default")
            factors = {
                "age": min((now - job.submit_time) / (7 * 86400), 1.0),
                "fairshare": qs.fairshare_factor if qs else 0.0,
                "jobsize": min(job.per_member.gpu * job.members / 64_000, 1.0),
                "partition": 1.0,
                "qos": (job.priority_value or 0) / 1000,
            }
            weights = {"age": 1000, "fairshare": 10000, "jobsize": 1000, "partition": 1000, "qos": 10000}
            weighted = {k: factors[k] * weights[k] for k in factors}
            total_p = int(sum(weighted.values()))
            reason = None
            eta = None
            if job.state == JobState.HELD:
                reason = Reason(ReasonCode.HELD, "job:spec.suspend", "job is suspended")
            elif job.state.is_pending:
                reason = job.observed_reason or Reason(
                    ReasonCode.RESOURCES,
                    f"partition:{job.partition}",
                    f"needs {job.per_member.gpu * job.members / 1000:g} GPUs in {job.partition}; "
                    "none free until running jobs end",
                )
                eta = now + 600 + (len(pending) % 10) * 300
                pending.append((-total_p, key))
            plans[key] = JobPlan(
                job=key,
                priority=PriorityBreakdown(factors, weighted, total_p),
                partition=job.partition,
                reason=reason,
                eta=eta,
            )
        pending.sort()
        order = tuple(k for _, k in pending)
        for pos, key in enumerate(order):
            plans[key] = replace(plans[key], order=pos)
        return ScheduleResult(
            now=now,
            cluster=cluster,
            partitions=tuple(parts),
            queues=MappingProxyType({q: queues[q] for q in ordered}),
            plans=MappingProxyType(plans),
            placements=(),
            pending_order=order,
        )


def _tree_order(queues: dict[str, QueueStatus]) -> list[str]:
    out: list[str] = []

    def walk(path: str) -> None:
        out.append(path)
        for child in queues[path].children:
            walk(child)

    for root in sorted(p for p, q in queues.items() if q.parent is None):
        walk(root)
    return out


def big_session(jobs: int = 100_000, seed: int = 7) -> SampleSession:
    """A session with many jobs (most of them pending: the cluster is small) for scale tests."""
    return SampleSession(seed=seed, nodes_per_partition=40, jobs=jobs)
