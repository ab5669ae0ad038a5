"""The simulated cluster written the way KAI-Scheduler writes it (``hpctop --demo --scheduler kai``).

Why: hpctop reads KAI's objects on a live cluster (``hpctop/backends/kai``); the demo should show
that reading too, through the same decode → store → core path. With this style on, the simulated
cluster also plays KAI's controllers (their upstream: ``kai-scheduler/KAI-Scheduler``):

- the queue controller: one ``Queue`` (``scheduling.run.ai/v2``) per queue of the scenario, named
  by the last part of its path, ``parentQueue`` its parent's (quota = guaranteed, limit = max or
  -1, over-quota weight 1; GPUs in units, CPU in millicores, memory in MB), with
  ``status.allocated`` / ``requested`` summed over the queue and its children;
- the pod grouper: one ``PodGroup`` (``v2alpha2``) per job, ``minMember`` the gang, the pods
  labelled ``kai.scheduler/queue`` and annotated ``pod-group-name``;
- GPU sharing: a member asking part of a GPU carries ``gpu-fraction`` (not the trace's
  ``alibabacloud.com/gpu-milli``), and the binder's reservation pod (namespace
  ``kai-resource-reservation``, label ``runai-gpu-group``) holds each GPU that shares run on, for
  as long as one does;
- the scheduler's verdict: a pending group whose gang would take its queue (or an ancestor) past
  its GPU limit gets ``UnschedulableOnNodePool`` with reason ``OverLimit`` and the queue's numbers,
  as ``capacity_policy/max_allowed_check.go`` computes them; the condition goes once it fits.

What does not change: hpctop's own core still decides placements (the simulator is a cluster,
not a scheduler), so the queue tree's limits bind the core the same way. Statuses are written at
most once a virtual minute (:data:`STATUS_PERIOD`), as controllers batch them. Without this style
nothing here runs and the demo's bytes are unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from hpctop.model.fractions import KAI_GPU_GROUP, KAI_RESERVATION_NAMESPACE
from hpctop.model.objects import JobKey
from hpctop.model.policy import ROOT, QueueSpec
from hpctop.model.resources import ZERO, Resources
from hpctop.sources.scenario import JobSpec, Scenario


# What this module reads of the cluster's own records (hpctop.sources.simulator.cluster imports
# this module, so these are protocols, not imports: no import cycle, not even for typing).
class _Pod(Protocol):
    name: str
    node: str | None
    gpu_indices: tuple[int, ...]

    @property
    def job(self) -> _Job: ...


class _Job(Protocol):
    spec: JobSpec
    uid: str
    queue: str
    priority_class: str
    deleted: bool
    suspended: bool

    @property
    def key(self) -> JobKey: ...

    @property
    def live_pods(self) -> list[Any]: ...

    @property
    def is_service(self) -> bool: ...


class SimulatedCluster(Protocol):
    scenario: Scenario

    @property
    def jobs(self) -> Mapping[JobKey, Any]: ...

    @property
    def now(self) -> float: ...

    def _emit(self, kind: str, etype: str, obj: dict[str, Any]) -> None: ...

    def _uid(self) -> str: ...

    def _suffix(self, n: int = 5) -> str: ...


STYLE = "kai"
QUEUE_KIND = "Queue.scheduling.run.ai"
PODGROUP_KIND = "PodGroup.scheduling.run.ai"
QUEUE_LABEL = "kai.scheduler/queue"
STATUS_PERIOD = 60.0
#: KAI's pod grouper keeps a PodGroup's spec.queue on every update (pkg/podgrouper/podgroup/handler.go)
MOVE_REFUSAL = (
    "KAI-Scheduler fixes a job's queue when its pod grouper creates the PodGroup; a changed "
    "kai.scheduler/queue label is never read back: delete the job and resubmit it to the new queue"
)
_MB = 1_000_000
_ALIBABA = ("alibabacloud.com/gpu-milli", "alibabacloud.com/gpu-count")
_YUNIKORN_GANG = ("yunikorn.apache.org/task-groups", "yunikorn.apache.org/task-group-name")


def _gpus(milli: int) -> str:
    return f"{milli / 1000:g}"


def _resource_list(r: Resources) -> dict[str, str]:
    out = {"cpu": f"{r.cpu}m", "memory": str(r.memory)}
    if r.gpu:
        out["nvidia.com/gpu"] = _gpus(r.gpu)
    return out


def _cell(quota: int, limit: int | None, scale: float) -> dict[str, float]:
    return {
        "quota": quota / scale,
        "limit": -1 if limit is None or limit == 0 else limit / scale,
        "overQuotaWeight": 1,
    }


@dataclass(slots=True)
class _Reservation:
    name: str
    uid: str
    group: str
    node: str
    index: int
    created: float
    holders: set[str] = field(default_factory=set)


class KaiStyle:
    """KAI's controllers over one :class:`~hpctop.sources.simulator.cluster.SimulatedCluster`."""

    def __init__(self, cluster: SimulatedCluster) -> None:
        self.cluster = cluster
        self.queues: dict[str, QueueSpec] = {
            q.path: q for q in cluster.scenario.policy.queues if q.path != ROOT
        }
        self.allocated: dict[str, Resources] = dict.fromkeys(self.queues, ZERO)
        self.reservations: dict[tuple[str, int], _Reservation] = {}
        self.over_limit: dict[tuple[str, str, str], str] = {}  # job key → the condition's message
        self._last_status = -1e18
        self._dirty = True

    # -- names ---------------------------------------------------------------------------------

    @staticmethod
    def queue_name(path: str) -> str:
        return path.rsplit(".", 1)[-1]

    def _chain(self, path: str) -> list[str]:
        """The queue and its ancestors under root, leaf first."""
        out = []
        cur = path
        while cur and cur != ROOT:
            if cur in self.queues:
                out.append(cur)
            cur = cur.rsplit(".", 1)[0] if "." in cur else ""
        return out

    @staticmethod
    def group_name(job: _Job) -> str:
        return f"pg-{job.spec.name}-{job.uid}"

    # -- what the pod grouper adds to pods ----------------------------------------------------------

    def pod_labels(self, job: _Job, labels: dict[str, str]) -> dict[str, str]:
        labels[QUEUE_LABEL] = self.queue_name(job.queue)
        return labels

    def pod_annotations(self, job: _Job, annotations: dict[str, str]) -> dict[str, str]:
        spec = job.spec
        annotations["pod-group-name"] = self.group_name(job)
        for key in _YUNIKORN_GANG:
            annotations.pop(key, None)  # the gang is KAI's PodGroup (minMember), not task groups
        if spec.gpu_count and spec.gpu_milli < 1000:
            for key in _ALIBABA:
                annotations.pop(key, None)
            annotations["gpu-fraction"] = _gpus(spec.gpu_milli)
            if spec.gpu_count > 1:
                annotations["gpu-fraction-num-devices"] = str(spec.gpu_count)
        return annotations

    def bound_labels(self, pod: _Pod, labels: Any) -> Any:
        """A bound share carries its GPU group (the binder's label), one per device it shares."""
        spec = pod.job.spec
        if not (spec.gpu_count and spec.gpu_milli < 1000) or pod.node is None or not pod.gpu_indices:
            return labels
        own = orjson.loads(orjson.dumps(labels))
        groups = [self._group(pod.node, i) for i in pod.gpu_indices]
        own[KAI_GPU_GROUP] = groups[0]
        for g in groups[1:]:
            own[f"{KAI_GPU_GROUP}/{g}"] = g
        return own

    @staticmethod
    def _group(node: str, index: int) -> str:
        return f"{node}-gpu{index}"

    # -- objects -------------------------------------------------------------------------------------

    def _queue_obj(self, path: str) -> dict[str, Any]:
        q = self.queues[path]
        cap = q.max
        parent = path.rsplit(".", 1)[0]
        children = sorted(self.queue_name(p) for p in self.queues if p.rsplit(".", 1)[0] == path)
        allocated = self.allocated[path]
        spec: dict[str, Any] = {
            "resources": {
                "gpu": _cell(q.guaranteed.gpu, cap.gpu if cap else None, 1000),
                "cpu": _cell(q.guaranteed.cpu, cap.cpu if cap else None, 1),
                "memory": _cell(q.guaranteed.memory, cap.memory if cap else None, _MB),
            }
        }
        if parent != ROOT:
            spec["parentQueue"] = self.queue_name(parent)
        status: dict[str, Any] = {
            "allocated": _resource_list(allocated),
            "requested": _resource_list(allocated),
        }
        if children:
            status["childQueues"] = children
        return {
            "apiVersion": "scheduling.run.ai/v2",
            "kind": "Queue",
            "metadata": {"name": self.queue_name(path), "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": spec,
            "status": status,
        }

    def _group_obj(self, job: _Job, condition: str | None) -> dict[str, Any]:
        spec = job.spec
        gang = max(spec.min_members, 1) if spec.kind == "batch" else 1
        owner = {"apiVersion": "batch/v1", "kind": "Job", "name": spec.name, "uid": job.uid}
        if job.is_service:
            owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": spec.name, "uid": job.uid}
        status: dict[str, Any] = {}
        if condition is not None:
            leaf = self.queue_name(job.queue)
            status["schedulingConditions"] = [
                {
                    "type": "UnschedulableOnNodePool",
                    "nodePool": "default",
                    "reason": "Unschedulable",
                    "message": condition,
                    "status": "True",
                    "reasons": [
                        {
                            "reason": "OverLimit",
                            "message": condition,
                            "details": {"queueDetails": self._details(job, leaf)},
                        }
                    ],
                }
            ]
        return {
            "apiVersion": "scheduling.run.ai/v2alpha2",
            "kind": "PodGroup",
            "metadata": {
                "name": self.group_name(job),
                "namespace": spec.namespace,
                "uid": f"pg-{job.uid}",
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "labels": {QUEUE_LABEL: self.queue_name(job.queue)},
                "ownerReferences": [owner],
            },
            "spec": {
                "minMember": gang,
                "queue": self.queue_name(job.queue),
                "priorityClassName": job.priority_class,
            },
            "status": status,
        }

    def _need(self, job: _Job) -> Resources:
        spec = job.spec
        gang = max(spec.min_members, 1) if spec.kind == "batch" else 1
        return spec.per_member.scale(gang)

    def _details(self, job: _Job, leaf: str) -> dict[str, Any]:
        path = job.queue
        q = self.queues.get(path)
        limit = q.max if q is not None and q.max is not None else ZERO
        return {
            "name": leaf,
            "queueAllocatedResources": _resource_list(self.allocated.get(path, ZERO)),
            "queueDeservedResources": _resource_list(q.guaranteed if q is not None else ZERO),
            "queueResourceLimits": {"nvidia.com/gpu": _gpus(limit.gpu)} if limit.gpu else {},
            "podGroupRequestedResources": _resource_list(self._need(job)),
        }

    def _reservation_obj(self, r: _Reservation) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": r.name,
                "namespace": KAI_RESERVATION_NAMESPACE,
                "uid": r.uid,
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "labels": {"app": KAI_RESERVATION_NAMESPACE, KAI_GPU_GROUP: r.group},
                "annotations": {"alibabacloud.com/gpu-index": str(r.index)},
            },
            "spec": {
                "nodeName": r.node,
                "containers": [
                    {
                        "name": "resource-reservation",
                        "resources": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}},
                    }
                ],
            },
            "status": {
                "phase": "Running",
                "conditions": [{"type": "PodScheduled", "status": "True"}],
                "containerStatuses": [
                    {
                        "name": "resource-reservation",
                        "ready": True,
                        "restartCount": 0,
                        "state": {"running": {}},
                    }
                ],
            },
        }

    # -- hooks the cluster calls ----------------------------------------------------------------------

    def initial(self) -> None:
        for path in sorted(self.queues, key=lambda p: (p.count("."), p)):
            self.cluster._emit(QUEUE_KIND, "ADDED", self._queue_obj(path))

    def job_added(self, job: _Job) -> None:
        self.cluster._emit(PODGROUP_KIND, "ADDED", self._group_obj(job, None))
        self._dirty = True

    def job_deleted(self, job: _Job) -> None:
        self.over_limit.pop(job.key, None)
        self.cluster._emit(PODGROUP_KIND, "DELETED", self._group_obj(job, None))

    def bound(self, pod: _Pod) -> None:
        spec = pod.job.spec
        for path in self._chain(pod.job.queue):
            self.allocated[path] = self.allocated[path] + spec.per_member
        self._dirty = True
        if not (spec.gpu_count and spec.gpu_milli < 1000) or pod.node is None:
            return
        for index in pod.gpu_indices:
            key = (pod.node, index)
            r = self.reservations.get(key)
            if r is None:
                cluster = self.cluster
                r = self.reservations[key] = _Reservation(
                    name=f"gpu-reservation-{pod.node}-{cluster._suffix()}",
                    uid=cluster._uid(),
                    group=self._group(pod.node, index),
                    node=pod.node,
                    index=index,
                    created=cluster.now,
                )
                cluster._emit("Pod", "ADDED", self._reservation_obj(r))
            r.holders.add(pod.name)

    def released(self, pod: _Pod) -> None:
        spec = pod.job.spec
        for path in self._chain(pod.job.queue):
            self.allocated[path] = self.allocated[path] - spec.per_member
        self._dirty = True
        for index in pod.gpu_indices:
            r = self.reservations.get((pod.node or "", index))
            if r is None:
                continue
            r.holders.discard(pod.name)
            if not r.holders:
                del self.reservations[(r.node, index)]
                self.cluster._emit("Pod", "DELETED", self._reservation_obj(r))

    def settle(self) -> None:
        """Queue statuses and OverLimit conditions, at most once per :data:`STATUS_PERIOD`."""
        now = self.cluster.now
        if not self._dirty or now - self._last_status < STATUS_PERIOD:
            return
        self._last_status, self._dirty = now, False
        for path in sorted(self.queues):
            self.cluster._emit(QUEUE_KIND, "MODIFIED", self._queue_obj(path))
        for job in list(self.cluster.jobs.values()):
            if job.deleted or job.suspended or any(p.node for p in job.live_pods) or not job.live_pods:
                message = None
            else:
                message = self._over_limit(job)
            if message != self.over_limit.get(job.key):
                if message is None:
                    self.over_limit.pop(job.key, None)
                else:
                    self.over_limit[job.key] = message
                self.cluster._emit(PODGROUP_KIND, "MODIFIED", self._group_obj(job, message))

    def _over_limit(self, job: _Job) -> str | None:
        """KAI's OverLimit message when the gang's GPUs would take a queue past its limit."""
        need = self._need(job).gpu
        if not need:
            return None
        for path in self._chain(job.queue):
            cap = self.queues[path].max
            if cap is None or not cap.gpu:
                continue
            used = self.allocated[path].gpu
            if used + need > cap.gpu:
                name = self.queue_name(path)
                return (
                    f"{name} quota has reached the allowable limit of GPUs. Limit is {_gpus(cap.gpu)} GPUs, "
                    f"currently {_gpus(used)} GPUs allocated and workload requested {_gpus(need)} GPUs"
                )
        return None
