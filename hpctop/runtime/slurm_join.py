"""One view of both sides of Slurm-on-Kubernetes: Slurm's jobs joined into a Kubernetes snapshot.

Why: on a Slinky cluster the jobs people submit with ``sbatch`` are no Kubernetes objects; the
API server sees only the slurmd pods of a NodeSet (each one a Slurm node) and, with slurm-bridge,
the pods Slurm placed. :func:`join` turns the poller's :class:`~hpctop.sources.slurm.poll.SlurmView`
into job rows of the snapshot every pane reads, so one console shows both:

- **Slurm jobs are job rows** (key ``("", "SlurmJob", id)``, shown ``Slurm/<id>``): Slurm's own
  state (squeue's code), Slurm's reason word as the observed reason (source ``slurm``), Slurm's
  priority, the account as the queue, Slurm's partition; Slurm's expected start is not a plan.
- **A Slurm node is a slurmd pod.** slurm-operator labels every NodeSet pod
  ``nodeset.slinky.slurm.net/pod-hostname`` with the pod's hostname, "used as Slurm node name"
  (``api/v1beta1/well_known.go``; ``GetSlurmNodeName`` in
  ``internal/controller/nodeset/utils/utils.go``, SlinkyProject/slurm-operator @ 19ee57da /
  1114699d): without the label the pod's name is the hostname (StatefulSet mode). The GPUs a
  slurmd pod holds on its Kubernetes node are Slurm's to hand out, so a Slurm job running on that
  Slurm node takes its share of them: a stand-in pod per (job, node) holds the job's GPUs on that
  Kubernetes node and the slurmd pod keeps the rest (the GPU pane then colours those GPUs by the
  Slurm job's account). Which GPUs: a running job's ``gres_detail`` names them per node
  (``gpu:2(IDX:0-1)``, the device indices slurmd gave it); where it is missing, the job's
  per-node request (``tres_per_node`` ``gres:gpu:2``) or its total (``gres/gpu=N`` in
  ``tres_req_str``) split evenly over its nodes, in the node's next free cells: a cell is then the
  job's share, not a named device (stated here, not hidden).
- **A slurm-bridge pod is a member of its Slurm job.** slurm-bridge labels every pod of an
  external job ``scheduler.slinky.slurm.net/slurm-jobid`` (docs/scheduler.md of
  SlinkyProject/slurm-bridge). Those pods join the Slurm job's row (they hold the GPUs
  themselves, so no stand-in is made) and the Kubernetes job row they formed is dropped: one job,
  one row, no duplicate.

Nothing of Slurm's is guessed: a job whose node has no slurmd pod keeps its row with no GPUs
placed, and the Slurm rows carry the poller's note when they are stale.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hpctop.backends.slurm.act import SLURM_JOB_KIND, is_held
from hpctop.backends.slurm.wire import SlurmJob, expand_hostlist, per_node_gpus, tres_gpus
from hpctop.model.objects import Job, JobKey, JobKind, OwnerRef, Pod, PodKey, Reason
from hpctop.model.policy import QueueState
from hpctop.model.resources import ZERO, Resources
from hpctop.model.states import JobState, ReasonCode
from hpctop.model.store import Snapshot
from hpctop.scheduling.types import QueueStatus
from hpctop.sources.slurm.poll import SlurmView

__all__ = [
    "BRIDGE_JOB_LABEL",
    "NODE_NAME_LABEL",
    "SLURM_BACKEND",
    "SLURM_QUEUE_ROOT",
    "SLURM_REASON_SOURCE",
    "bridged_rows",
    "job_state",
    "join",
    "slurm_id",
    "slurm_job_key",
    "slurm_partition_rows",
    "slurmd_pods",
]

#: slurm-operator's label on a NodeSet pod: its hostname, which is the Slurm node's name
NODE_NAME_LABEL = "nodeset.slinky.slurm.net/pod-hostname"
#: slurm-bridge's label on the pods of one external Slurm job
BRIDGE_JOB_LABEL = "scheduler.slinky.slurm.net/slurm-jobid"
NODESET_KIND = "NodeSet"
NODESET_GROUP = "slinky.slurm.net"
SLURM_BACKEND = "slurm"
#: the source of a Slurm job's observed reason: the row shows Slurm's own word
SLURM_REASON_SOURCE = "slurm"
#: the namespace part of a Slurm job's row id (``Slurm/123``): no Kubernetes namespace can be
#: spelled so (they are lower case), so a Slurm row never reads like a pod's; the key's stays ""
SLURM_ROW_NAMESPACE = "Slurm"
#: the stand-in pods that hold a Slurm job's GPUs on a slurmd pod's node (a namespace no
#: Kubernetes pod can have, so a stand-in never replaces a real pod)
STAND_IN_NAMESPACE = SLURM_ROW_NAMESPACE

_STATES = {
    "PENDING": JobState.PENDING,
    "RUNNING": JobState.RUNNING,
    "SUSPENDED": JobState.SUSPENDED,
    "COMPLETING": JobState.COMPLETING,
    "CONFIGURING": JobState.STARTING,
    "COMPLETED": JobState.COMPLETED,
    "CANCELLED": JobState.CANCELLED,
    "FAILED": JobState.FAILED,
    "TIMEOUT": JobState.TIMEOUT,
    "NODE_FAIL": JobState.NODE_FAIL,
    "PREEMPTED": JobState.PREEMPTED,
    "OUT_OF_MEMORY": JobState.OOM,
    "BOOT_FAIL": JobState.FAILED,
    "DEADLINE": JobState.TIMEOUT,
    "REQUEUED": JobState.REQUEUED,
    "REQUEUE_HOLD": JobState.HELD,
    "RESIZING": JobState.RUNNING,
    "SIGNALING": JobState.RUNNING,
    "STAGE_OUT": JobState.COMPLETING,
}

#: Slurm's reason words and the code each one mirrors (the inverse of ReasonCode.slurm, where
#: Slurm has a word for it); any other word is kept as Slurm wrote it under UNSCHEDULABLE
_REASONS = {
    "Resources": ReasonCode.RESOURCES,
    "Priority": ReasonCode.PRIORITY,
    "Dependency": ReasonCode.DEPENDENCY,
    "PartitionDown": ReasonCode.QUEUE_HELD,
    "BeginTime": ReasonCode.WAITING_FOR_SCHEDULING,
    "ReqNodeNotAvail": ReasonCode.NODE_UNAVAILABLE,
    "BadConstraints": ReasonCode.CONSTRAINTS,
}


def slurm_id(job: SlurmJob) -> str:
    """squeue's ``%i``: ``123``, or ``123_4`` for an array task."""
    if job.array_job_id is not None and job.array_task_id is not None:
        return f"{job.array_job_id}_{job.array_task_id}"
    return str(job.job_id)


def slurm_job_key(job_id: str) -> JobKey:
    """The key the Slurm actuator acts on (:func:`hpctop.backends.slurm.act.slurm_job_request`)."""
    return ("", SLURM_JOB_KIND, job_id)


def job_state(job: SlurmJob) -> JobState:
    if is_held(job):
        return JobState.HELD
    return _STATES.get(job.state, JobState.UNKNOWN)


def _reason(job: SlurmJob) -> Reason | None:
    if job.reason in ("", "None"):
        return None
    code = ReasonCode.HELD if job.reason.startswith("JobHeld") else _REASONS.get(job.reason)
    return Reason(code or ReasonCode.UNSCHEDULABLE, SLURM_REASON_SOURCE, job.reason)


def gres_detail_gpus(detail: str) -> tuple[int, tuple[int, ...]]:
    """The GPUs and their device indices in one ``gres_detail`` entry: ``gpu:2(IDX:0-1)``,
    ``gpu:a100:2(IDX:0,2)``, ``gpu:1(IDX:3),shard:0``; (0, ()) when it names no GPU."""
    count = 0
    indices: list[int] = []
    for part in _top_level(detail):
        name, _, rest = part.partition("(")
        fields = name.split(":")
        if fields[0] != "gpu" or len(fields) < 2 or not fields[-1].isdigit():
            continue
        count += int(fields[-1])
        spans = rest.rstrip(")").removeprefix("IDX:")
        for span in spans.split(","):
            first, _, last = span.partition("-")
            if first.isdigit() and (not last or last.isdigit()):
                indices.extend(range(int(first), int(last or first) + 1))
    return count, tuple(indices)


def _top_level(text: str) -> list[str]:
    """``a(b,c),d`` split at the commas outside parentheses."""
    parts: list[str] = []
    depth = 0
    part = ""
    for char in text + ",":
        if char == "," and depth == 0:
            if part:
                parts.append(part)
            part = ""
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        part += char
    return parts


def slurmd_pods(pods: Mapping[PodKey, Pod]) -> dict[str, Pod]:
    """The Slurm node name of each running slurmd pod of a NodeSet (slurm-operator's label)."""
    found: dict[str, Pod] = {}
    for pod in pods.values():
        owner = pod.owner
        if owner is None or owner.kind != NODESET_KIND or not owner.api_version.startswith(NODESET_GROUP):
            continue
        if not pod.holds_resources:
            continue
        found[pod.labels.get(NODE_NAME_LABEL) or pod.name] = pod
    return found


@dataclass(frozen=True, slots=True)
class _Joined:
    jobs: dict[JobKey, Job]
    pods: dict[PodKey, Pod]
    pods_by_node: dict[str, frozenset[PodKey]]
    #: per Kubernetes node, the next GPU index a stand-in takes
    next_index: dict[str, int] = dataclasses.field(default_factory=dict)


#: the Slurm rows of the last join by squeue's id, with the Slurm job and placement they were made of
RowMemo = dict[str, tuple[SlurmJob, tuple[PodKey, ...], tuple[str, ...], Job]]


def join(snapshot: Snapshot, view: SlurmView, *, version: int, memo: RowMemo | None = None) -> Snapshot:
    """``snapshot`` with ``view``'s Slurm jobs as rows, slurmd GPUs attributed, bridge pods joined.

    ``memo`` (kept by the caller between joins, refilled each time) hands back the very ``Job``
    of a Slurm job whose fields and placement did not change: the console's row cache keys on a
    job's identity, so an unchanged Slurm job costs no new row on a tick that changed something else.
    """
    if not view.jobs and not view.note:
        return dataclasses.replace(snapshot, version=version)
    by_node = slurmd_pods(snapshot.pods)
    bridged: dict[str, list[Pod]] = {}
    for pod in snapshot.pods.values():
        slurm_job = pod.labels.get(BRIDGE_JOB_LABEL)
        if slurm_job:
            bridged.setdefault(slurm_job, []).append(pod)
    joined = _Joined(dict(snapshot.jobs), dict(snapshot.pods), dict(snapshot.pods_by_node))
    for key in bridged_rows(snapshot.jobs, snapshot.pods, view.jobs):
        del joined.jobs[key]
    last = memo.copy() if memo is not None else {}
    if memo is not None:
        memo.clear()
    for job in view.jobs:
        row = _slurm_row(job, joined, by_node, bridged.get(str(job.job_id), []), snapshot.taken_at, last)
        joined.jobs[row.key] = row
        if memo is not None:
            memo[row.name] = (job, row.pods, row.nodes, row)
    notes = (*snapshot.notes, view.note) if view.note else snapshot.notes
    return dataclasses.replace(
        snapshot,
        version=version,
        jobs=joined.jobs,
        pods=joined.pods,
        pods_by_node=joined.pods_by_node,
        notes=notes,
    )


def bridged_rows(
    jobs: Mapping[JobKey, Job], pods: Mapping[PodKey, Pod], slurm_jobs: Iterable[SlurmJob]
) -> set[JobKey]:
    """The Kubernetes rows that are a Slurm job's (every pod labelled with the id of one of
    ``slurm_jobs``): the Slurm job's row stands for them, so they are left out (one job, one row)."""
    known = {str(job.job_id) for job in slurm_jobs}
    if not known:
        return set()
    bridge_pods = {key for key, pod in pods.items() if pod.labels.get(BRIDGE_JOB_LABEL) in known}
    if not bridge_pods:
        return set()
    return {key for key, job in jobs.items() if job.pods and all(pk in bridge_pods for pk in job.pods)}


def _slurm_row(
    job: SlurmJob,
    joined: _Joined,
    by_node: Mapping[str, Pod],
    bridge: list[Pod],
    now: float,
    last: RowMemo,
) -> Job:
    before = last.get(slurm_id(job))
    if before is not None and before[0] is job and not bridge and not job.nodes and not before[1]:
        return before[3]  # the same poll's job, placed nowhere: nothing it shows can have changed
    state = job_state(job)
    job_id = slurm_id(job)
    nodes = expand_hostlist(job.nodes) if state.is_active else []
    count = max(job.node_count, len(nodes), 1)
    per_node = _gpus_on_each_node(job, count)
    pods: list[PodKey] = [p.key for p in bridge]
    k8s_nodes: list[str] = sorted({p.node_name for p in bridge if p.node_name})
    if not bridge:
        for index, slurm_node in enumerate(nodes):
            slurmd = by_node.get(slurm_node)
            held = _held_on(job, index, per_node)
            if slurmd is None or slurmd.node_name is None or held[0] <= 0:
                continue
            pods.append(_stand_in(joined, job_id, slurm_node, slurmd, held, job))
            k8s_nodes.append(slurmd.node_name)
    placed = (tuple(pods), tuple(k8s_nodes) or tuple(nodes))
    if (
        before is not None
        and (before[0] is job or before[0] == job)  # the same poll's job, or an unchanged one
        and before[1:3] == placed
        and (job.submit_time or before[3].submit_time == now)
    ):
        return before[3]
    reason = _reason(job) if state.is_pending else None
    started = float(job.start_time) if job.start_time > 0 and (state.is_active or state.is_finished) else None
    return Job(
        key=slurm_job_key(job_id),
        namespace=SLURM_ROW_NAMESPACE,
        name=job_id,
        kind=JobKind.BATCH,
        owner_kind=SLURM_JOB_KIND,
        uid=f"slurm-{job_id}",
        user=job.user,
        queue=job.account or None,
        partition=job.partition or None,
        priority_value=job.priority,
        priority_class=None,
        state=state,
        observed_reason=reason,
        submit_time=float(job.submit_time or now),
        start_time=started,
        end_time=None,
        per_member=Resources(gpu=per_node * 1000),
        members=count,
        min_members=count,
        running_members=count if state.is_active else 0,
        pending_pods=(),
        pods=placed[0],
        nodes=placed[1],
        gpu_models=(),
        node_selector=(),
        tolerations=(),
        scheduler_name=SLURM_BACKEND,
        scheduling_gates=(),
        time_limit=job.time_limit_min * 60 if job.time_limit_min is not None else None,
        labels={"slurm.account": job.account, "slurm.qos": job.qos},
        reasons=(reason,) if reason is not None else (),
        backends=(SLURM_BACKEND,),
        slurm_partition=job.partition or None,
    )


def _gpus_on_each_node(job: SlurmJob, nodes: int) -> int:
    """GPUs per node: what the job asked per node, else its total split evenly over its nodes."""
    asked = per_node_gpus(job.tres_per_node)
    return asked if asked > 0 else tres_gpus(job.tres) // max(nodes, 1)


def _held_on(job: SlurmJob, index: int, per_node: int) -> tuple[int, tuple[int, ...]]:
    """The GPUs (and device indices, when Slurm says) the job holds on its ``index``-th node:
    ``gres_detail`` where slurmrestd sends it, else the per-node request with no index."""
    if index < len(job.gres_detail):
        count, indices = gres_detail_gpus(job.gres_detail[index])
        if count > 0:
            return count, indices
    return per_node, ()


def _stand_in(
    joined: _Joined,
    job_id: str,
    slurm_node: str,
    slurmd: Pod,
    held: tuple[int, tuple[int, ...]],
    job: SlurmJob,
) -> PodKey:
    """A pod that holds ``held`` (GPUs, device indices) of ``slurmd``'s GPUs for Slurm job
    ``job_id``; the slurmd pod keeps what is left (never below zero: Slurm hands out only what
    slurmd has)."""
    take = min(held[0] * 1000, slurmd.requests.gpu)
    current = joined.pods[slurmd.key]
    joined.pods[slurmd.key] = dataclasses.replace(
        current, requests=dataclasses.replace(current.requests, gpu=max(current.requests.gpu - take, 0))
    )
    name = f"{job_id}-{slurm_node}"
    node = slurmd.node_name or ""
    indices = held[1]
    if not indices:  # Slurm did not say which devices: the next cells of the node, in turn
        first = joined.next_index.get(node, 0)
        indices = tuple(range(first, first + max(-(-take // 1000), 1)))
        joined.next_index[node] = first + len(indices)
    pod = dataclasses.replace(
        slurmd,
        namespace=STAND_IN_NAMESPACE,
        name=name,
        uid=f"slurm-{name}",
        labels={},
        annotations={},
        owner=OwnerRef("slurm", SLURM_JOB_KIND, job_id, f"slurm-{job_id}"),
        requests=Resources(gpu=take),
        gpu_indices=indices,
        phase="Running",
        started=float(job.start_time) if job.start_time else slurmd.started,
    )
    joined.pods[pod.key] = pod
    joined.pods_by_node[node] = joined.pods_by_node.get(node, frozenset()) | {pod.key}
    return pod.key


#: the queue pane's root row of Slurm's partitions (its children are ``slurm.<partition>``)
SLURM_QUEUE_ROOT = "slurm"


def slurm_partition_rows(view: SlurmView) -> dict[str, QueueStatus]:
    """Slurm's partitions as rows of the queue pane, under one ``slurm`` row: Slurm's state (an
    UP partition is open, DOWN/DRAIN/INACTIVE closed: Slurm starts nothing there), its jobs
    running and pending, and the GPUs its running jobs hold. Slurm sets no guarantee and
    slurmrestd's partitions carry no fair share (that is per account: ``hpctop queues
    --slurm-url``), so these rows show no bar and no factor: nothing is made up."""
    if not view.partitions:
        return {}
    running: dict[str, int] = {}
    pending: dict[str, int] = {}
    used: dict[str, int] = {}
    for job in view.jobs:
        state = job_state(job)
        for name in job.partition.split(","):
            if state.is_active:
                running[name] = running.get(name, 0) + 1
                used[name] = used.get(name, 0) + _gpus_on_each_node(job, job.node_count) * max(
                    job.node_count, 1
                )
            elif state.is_pending:
                pending[name] = pending.get(name, 0) + 1
    names = sorted(p.name for p in view.partitions)
    rows = {
        SLURM_QUEUE_ROOT: _queue_row(
            SLURM_QUEUE_ROOT, None, tuple(f"{SLURM_QUEUE_ROOT}.{n}" for n in names), 0
        )
    }
    total = rows[SLURM_QUEUE_ROOT]
    for partition in sorted(view.partitions, key=lambda p: p.name):
        name = partition.name
        row = _queue_row(
            f"{SLURM_QUEUE_ROOT}.{name}",
            SLURM_QUEUE_ROOT,
            (),
            1,
            closed=partition.state.upper() != "UP",
            running=running.get(name, 0),
            pending=pending.get(name, 0),
            gpus=used.get(name, 0),
        )
        rows[row.path] = row
        total = dataclasses.replace(
            total,
            running_jobs=total.running_jobs + row.running_jobs,
            pending_jobs=total.pending_jobs + row.pending_jobs,
        )
    rows[SLURM_QUEUE_ROOT] = total
    return rows


def _queue_row(
    path: str,
    parent: str | None,
    children: tuple[str, ...],
    depth: int,
    *,
    closed: bool = False,
    running: int = 0,
    pending: int = 0,
    gpus: int = 0,
) -> QueueStatus:
    return QueueStatus(
        path=path,
        parent=parent,
        children=children,
        depth=depth,
        state=QueueState.CLOSED if closed else QueueState.OPEN,
        guaranteed=ZERO,
        max=None,
        used=Resources(gpu=gpus * 1000),
        pending=ZERO,
        running_jobs=running,
        pending_jobs=pending,
        dominant_share=0.0,
        dominant_resource="",
        cluster_share=0.0,
        normalized_share=0.0,
        fairshare_factor=1.0,
        borrowing=False,
    )
