"""The embedded cluster: nodes, batch Jobs, Deployments and pods on a virtual clock.

The simulator is a *cluster*, not a scheduler (ARCHITECTURE.md): it plays the API server, the
Job and ReplicaSet controllers and the kubelets, and it never decides where a pod goes. Pods are
created pending with ``schedulerName: hpctop``; hpctop's own scheduling core chooses placements
and calls :meth:`SimulatedCluster.bind`, which checks capacity the way a kubelet and the device
plugin would (CPU, memory, pod slots, free GPU devices or GPU share, allowed GPU models) and
refuses what does not fit. Everything it says comes out as the bytes of Kubernetes watch events
(``{"type": "MODIFIED", "object": {...}}``) tagged with their kind, so the demo goes through the
very decode → store → core path a live cluster uses, and a decode bug shows up in the demo.

Determinism: all randomness (pod name suffixes, uids, ReplicaSet hashes) comes from one
``random.Random(seed)`` consumed in event order, and the clock is virtual, so the same scenario,
seed and sequence of calls give byte-identical events.

Semantics kept from Kubernetes (SCHEDULERS.md §2): ``suspend: true`` deletes active pods and
resets ``status.startTime``; a Job is Complete when ``completions`` pods succeeded and Failed on
the first failed pod (``backoffLimit: 0``); pod priority is immutable, so changing it (or the
queue label YuniKorn reads at submission) means recreating the pending pods, and is refused for
running pods. Deliberate simplifications: binding makes a pod Running at once (no image pulls),
deletion has no grace period, and the run-time limit is the *pod's* ``activeDeadlineSeconds``
(counted from the pod's start, like a Slurm time limit) rather than the Job's (which counts
pending time); a pod that hits it fails the Job with reason ``DeadlineExceeded`` (TIMEOUT).

Why one module of this size: the cluster is one state machine. The API server, the Job and
ReplicaSet controllers and the kubelets it plays share the same node, job and pod tables and the
one seeded random stream whose order of use decides the demo's bytes, so each action (submit, bind,
hold, requeue, expire) reads and writes all of them in one place. The part that stands on its own
is the rendering of objects as the API server would write them (``_node_obj`` to ``_pod_obj``,
a third of the file): that is the first split to make, into a sibling module, when this one grows.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from hpctop.errors import ActionFailed
from hpctop.model.decode import format_time
from hpctop.model.objects import BACKFILLED_ANNOTATION, HOSTNAME_LABEL, JobKey, PodKey
from hpctop.sources.scenario import JobSpec, NodeSpec, PriorityClassSpec, Scenario
from hpctop.sources.simulator.dra import DraPublisher
from hpctop.sources.simulator.kai import MOVE_REFUSAL as KAI_MOVE_REFUSAL
from hpctop.sources.simulator.kai import STYLE as KAI_STYLE
from hpctop.sources.simulator.kai import KaiStyle

#: virtual t = 0 is 2026-01-01T00:00:00Z; all simulator times are Unix seconds from here on
EPOCH = 1767225600.0

SCHEDULER_NAME = "hpctop"
GPU_SHARING_LABEL = "hpctop.io/gpu-sharing"
DEFAULT_PRIORITY_CLASS = "default"
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

Event = tuple[str, bytes]
#: what a pending pod needs from a node, as the kubelet and device plugin check it in :meth:`fits`:
#: (cpu milli, memory bytes, GPU count, milli-GPU per device, allowed GPU models, node selector)
Shape = tuple[int, int, int, int, tuple[str, ...], tuple[tuple[str, str], ...]]


class SimulatorError(ActionFailed):
    """The simulated cluster refused a request (a bind that does not fit, an action that does not apply)."""

    title = "simulated cluster refused"


def _cpu(milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def _mem(count: int) -> str:
    mib = 1024 * 1024
    return f"{count // mib}Mi" if count % mib == 0 else str(count)


_TIMES: dict[int, str] = {}


def _ts(seconds: float) -> str:
    key = int(seconds)
    text = _TIMES.get(key)
    if text is None:
        if len(_TIMES) > 200_000:
            _TIMES.clear()
        text = _TIMES[key] = format_time(key)
    return text


@dataclass(slots=True, eq=False)
class _Node:
    spec: NodeSpec
    uid: str
    free_cpu: int
    free_memory: int
    free_pods: int
    gpu_used: list[int]  # milli-GPU in use per device index
    labels: dict[str, str]


@dataclass(slots=True, eq=False)
class _Pod:
    name: str
    uid: str
    job: _Job
    created: float
    restarts: int
    node: str | None = None
    gpu_indices: tuple[int, ...] = ()
    phase: str = "Pending"
    started: float | None = None
    finished: float | None = None
    reason: str | None = None  # terminated reason (Completed, Error, DeadlineExceeded)
    backfilled: bool = False  # bound by a backfill decision (``BACKFILLED_ANNOTATION``)

    @property
    def live(self) -> bool:
        return self.phase in ("Pending", "Running")


@dataclass(slots=True, eq=False)
class _Wire:
    """The parts of a job's and its pods' objects that change only with its queue or priority,
    serialised once (PERFORMANCE.md P7: building and serialising them was most of the
    simulator's own cost per event). Spliced into each event with ``orjson.Fragment``: the bytes
    are those that serialising the dicts would give (``tests/test_simulator.py`` checks it)."""

    pod_labels: orjson.Fragment
    pod_annotations: dict[str, str]  # copied when a bound pod adds its GPU indices
    pod_annotations_json: orjson.Fragment
    owner_references: orjson.Fragment
    pod_spec: bytes  # the pod's spec object; a bound pod's adds "nodeName" at its end
    template: orjson.Fragment  # the Job's or Deployment's spec.template


@dataclass(slots=True, eq=False)
class _Job:
    spec: JobSpec
    kind: str  # Job | Deployment
    uid: str
    created: float
    queue: str
    priority_class: str
    priority: int
    rs_hash: str = ""
    rs_uid: str = ""
    suspended: bool = False
    deleted: bool = False
    finished: bool = False
    failed_reason: str | None = None
    succeeded: int = 0
    failed: int = 0
    start_time: float | None = None
    completion_time: float | None = None
    restarts: int = 0
    pods: dict[str, _Pod] = field(default_factory=dict)
    wire: _Wire | None = None  # built on first use; dropped when the queue or priority changes

    @property
    def key(self) -> JobKey:
        return (self.spec.namespace, self.kind, self.spec.name)

    @property
    def live_pods(self) -> list[_Pod]:
        return [p for p in self.pods.values() if p.live]

    @property
    def is_service(self) -> bool:
        return self.kind == "Deployment"


class SimulatedCluster:
    """A Kubernetes cluster in memory, driven by a virtual clock; emits watch events as bytes."""

    def __init__(
        self,
        scenario: Scenario,
        seed: int = 1,
        gpu_api: str = "device-plugin",
        scheduler_style: str = SCHEDULER_NAME,
    ) -> None:
        self.scenario = scenario
        #: ``gpu_api="dra"``: GPUs in ResourceSlices, held through claims (hpctop.sources.simulator.dra)
        self._dra = DraPublisher(self._emit, _ts) if gpu_api == "dra" else None
        self.seed = seed
        self._rng = random.Random(seed)
        self._now = EPOCH
        self._rv = 0
        self._seq = 0
        self._initial_done = False
        self._arrivals = sorted(scenario.jobs, key=lambda j: j.submit)
        self._next_arrival = 0
        self._heap: list[tuple[float, int, int, Any]] = []
        self._out: list[Event] = []
        self.nodes: dict[str, _Node] = {}
        self.jobs: dict[JobKey, _Job] = {}
        self.pods: dict[PodKey, _Pod] = {}
        self.priority_classes: dict[str, PriorityClassSpec] = {}
        self._queues = {q.path for q in scenario.policy.queues}
        for spec in scenario.nodes:
            labels = self._node_labels(spec)
            self.nodes[spec.name] = _Node(
                spec=spec,
                uid=self._uid(),
                free_cpu=spec.cpu,
                free_memory=spec.memory,
                free_pods=spec.max_pods,
                gpu_used=[0] * spec.gpus,
                labels=labels,
            )
        for pc in scenario.priority_classes:
            self.priority_classes[pc.name] = pc
        if DEFAULT_PRIORITY_CLASS not in self.priority_classes and not any(
            pc.global_default for pc in scenario.priority_classes
        ):
            self.priority_classes[DEFAULT_PRIORITY_CLASS] = PriorityClassSpec(DEFAULT_PRIORITY_CLASS, 0, True)
        self._default_class = next(pc for pc in self.priority_classes.values() if pc.global_default)
        for job in scenario.jobs:
            if job.priority_class is None and job.priority is not None:
                self._class_for_value(job.priority, emit=False)
        # counters for callers (stats panes, benchmarks)
        self.events_emitted = 0
        self.binds = 0
        # What :meth:`placement_possible` needs, kept as pods come and go: pending pods per shape,
        # shapes known to fit on no node (true when checked; since then only the nodes in
        # ``_freed`` gained room), and the node each other shape last fitted on.
        self._pending_shapes: dict[Shape, int] = {}
        self._blocked: set[Shape] = set()
        self._witness: dict[Shape, _Node] = {}
        self._freed: dict[str, _Node] = {}
        #: KAI-Scheduler's objects written too (``--scheduler kai``): see hpctop.sources.simulator.kai
        self.kai = KaiStyle(self) if scheduler_style == KAI_STYLE else None

    # -- clock -----------------------------------------------------------------------------------

    @property
    def now(self) -> float:
        return self._now

    @property
    def elapsed(self) -> float:
        """Virtual seconds since t = 0."""
        return self._now - EPOCH

    def next_event_time(self) -> float | None:
        """When the cluster will next change by itself (an arrival or a pod ending); None when never."""
        times = []
        if self._next_arrival < len(self._arrivals):
            times.append(EPOCH + self._arrivals[self._next_arrival].submit)
        if self._heap:
            times.append(self._heap[0][0])
        return min(times) if times else None

    @property
    def arrivals_left(self) -> int:
        return len(self._arrivals) - self._next_arrival

    # -- helpers ---------------------------------------------------------------------------------

    def _uid(self) -> str:
        r = self._rng.getrandbits(128)
        h = f"{r:032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{h[16:20]}-{h[20:]}"

    def _suffix(self, n: int = 5) -> str:
        return "".join(self._rng.choice(_SUFFIX_ALPHABET) for _ in range(n))

    def _emit(self, kind: str, etype: str, obj: dict[str, Any]) -> None:
        self._rv += 1
        obj["metadata"]["resourceVersion"] = str(self._rv)
        self._out.append((kind, orjson.dumps({"type": etype, "object": obj})))

    def _drain(self) -> list[Event]:
        out, self._out = self._out, []
        self.events_emitted += len(out)
        return out

    def _push(self, when: float, action: int, payload: Any) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (when, self._seq, action, payload))

    def _class_for_value(self, value: int, emit: bool) -> PriorityClassSpec:
        for pc in self.priority_classes.values():
            if pc.value == value:
                return pc
        pc = PriorityClassSpec(f"priority-{value}", value)
        self.priority_classes[pc.name] = pc
        if emit:
            self._emit("PriorityClass", "ADDED", self._priority_class_obj(pc))
        return pc

    # -- objects ---------------------------------------------------------------------------------

    @staticmethod
    def _node_labels(spec: NodeSpec) -> dict[str, str]:
        labels = {
            "kubernetes.io/hostname": spec.name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
        }
        if spec.gpus:
            model = spec.gpu_model or "GPU"
            labels.update(
                {
                    "nvidia.com/gpu.present": "true",
                    "nvidia.com/gpu.product": model,
                    "nvidia.com/gpu.count": str(spec.gpus),
                    "nvidia.com/gpu.memory": str(spec.gpu_memory_mib or 0),
                    "alibabacloud.com/gpu-card-model": model,
                    GPU_SHARING_LABEL: "milli",
                }
            )
        labels.update(dict(spec.labels))
        return labels

    def _node_obj(self, node: _Node) -> dict[str, Any]:
        spec = node.spec
        alloc: dict[str, str] = {
            "cpu": _cpu(spec.cpu),
            "memory": _mem(spec.memory),
            "pods": str(spec.max_pods),
        }
        if spec.gpus and self._dra is None:
            alloc["nvidia.com/gpu"] = str(spec.gpus)
        body: dict[str, Any] = {"unschedulable": spec.unschedulable}
        if spec.taints:
            body["taints"] = [{"key": k, "value": v, "effect": e} for k, v, e in spec.taints]
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": spec.name,
                "uid": node.uid,
                "creationTimestamp": _ts(EPOCH),
                "labels": node.labels,
            },
            "spec": body,
            "status": {
                "capacity": alloc,
                "allocatable": alloc,
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True" if spec.ready else "False",
                        "reason": "KubeletReady" if spec.ready else "KubeletNotReady",
                        "message": "kubelet is posting ready status" if spec.ready else "node is not ready",
                    }
                ],
                "nodeInfo": {"kubeletVersion": "v1.33.1", "containerRuntimeVersion": "containerd://2.0.5"},
            },
        }

    @staticmethod
    def _priority_class_obj(pc: PriorityClassSpec) -> dict[str, Any]:
        return {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": pc.name},
            "value": pc.value,
            "globalDefault": pc.global_default,
            "preemptionPolicy": "PreemptLowerPriority",
        }

    def _pod_labels(self, job: _Job) -> dict[str, str]:
        spec = job.spec
        labels = dict(spec.labels)
        labels["yunikorn.apache.org/app-id"] = spec.name
        labels["yunikorn.apache.org/queue"] = job.queue
        labels["hpctop.io/user"] = spec.user or spec.namespace
        if spec.partition:
            labels["hpctop.io/partition"] = spec.partition
        if job.is_service:
            labels["app"] = spec.name
            labels["pod-template-hash"] = job.rs_hash
        else:
            labels["batch.kubernetes.io/job-name"] = spec.name
            labels["batch.kubernetes.io/controller-uid"] = job.uid
        return labels if self.kai is None else self.kai.pod_labels(job, labels)

    @staticmethod
    def _pod_annotations(job: _Job) -> dict[str, str]:
        spec = job.spec
        ann: dict[str, str] = {}
        if spec.members > 1 and spec.kind == "batch":
            group: dict[str, Any] = {
                "name": "workers",
                "minMember": spec.min_members,
                "minResource": SimulatedCluster._requests(spec),
            }
            ann["yunikorn.apache.org/task-group-name"] = "workers"
            ann["yunikorn.apache.org/task-groups"] = orjson.dumps([group]).decode()
        if spec.gpu_count and spec.gpu_milli < 1000:
            ann["alibabacloud.com/gpu-milli"] = str(spec.gpu_milli)
            ann["alibabacloud.com/gpu-count"] = str(spec.gpu_count)
        if spec.gpu_models:
            ann["alibabacloud.com/gpu-card-model"] = "|".join(spec.gpu_models)
        return ann

    @staticmethod
    def _requests(spec: JobSpec) -> dict[str, str]:
        req = {"cpu": _cpu(spec.cpu), "memory": _mem(spec.memory)}
        if spec.gpu_count and spec.gpu_milli >= 1000:
            req["nvidia.com/gpu"] = str(spec.gpu_count)
        return req

    def _pod_spec(self, job: _Job) -> dict[str, Any]:
        spec = job.spec
        requests = self._requests(spec)
        limits = {"nvidia.com/gpu": requests["nvidia.com/gpu"]} if "nvidia.com/gpu" in requests else {}
        body: dict[str, Any] = {
            "schedulerName": SCHEDULER_NAME,
            "priorityClassName": job.priority_class,
            "priority": job.priority,
            "restartPolicy": "Always" if job.is_service else "Never",
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example/hpctop/" + ("server:1" if job.is_service else "trainer:1"),
                    "resources": {"requests": requests, "limits": limits},
                }
            ],
        }
        if spec.time_limit and not job.is_service:
            body["activeDeadlineSeconds"] = spec.time_limit
        if spec.node_selector:
            body["nodeSelector"] = dict(spec.node_selector)
        if spec.tolerations:
            body["tolerations"] = [
                {k: v for k, v in (("key", key), ("operator", op), ("value", value), ("effect", effect)) if v}
                for key, op, value, effect in spec.tolerations
            ]
        if spec.one_per_node:
            # one member per node (Slurm's --ntasks-per-node=1): the members repel each other
            body["affinity"] = {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "topologyKey": HOSTNAME_LABEL,
                            "labelSelector": {"matchLabels": {"batch.kubernetes.io/job-name": spec.name}},
                        }
                    ]
                }
            }
        return body if self._dra is None else self._dra.pod_spec(body, spec)

    @staticmethod
    def _template(
        labels: dict[str, str], annotations: dict[str, str], pod_spec: dict[str, Any]
    ) -> dict[str, Any]:
        """The controller's pod template: the pods' labels, annotations (before KAI's) and spec
        without the priority the admission fills in."""
        return {
            "metadata": {"labels": labels, "annotations": annotations},
            "spec": {key: value for key, value in pod_spec.items() if key != "priority"},
        }

    def _job_obj(self, job: _Job) -> dict[str, Any]:
        spec = job.spec
        meta = {
            "name": spec.name,
            "namespace": spec.namespace,
            "uid": job.uid,
            "creationTimestamp": _ts(job.created),
            "labels": {"yunikorn.apache.org/queue": job.queue, "hpctop.io/user": spec.user or spec.namespace},
        }
        conditions: list[dict[str, str]] = []
        status: dict[str, Any] = {}
        if job.is_service:
            ready = sum(1 for p in job.pods.values() if p.phase == "Running")
            status = {"replicas": len(job.live_pods), "readyReplicas": ready, "availableReplicas": ready}
            conditions.append(
                {
                    "type": "Available",
                    "status": "True" if ready >= spec.members else "False",
                    "reason": "MinimumReplicasAvailable"
                    if ready >= spec.members
                    else "MinimumReplicasUnavailable",
                    "message": f"{ready} of {spec.members} replicas available",
                }
            )
            status["conditions"] = conditions
            return {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": meta,
                "spec": {
                    "replicas": spec.members,
                    "selector": {"matchLabels": {"app": spec.name}},
                    "template": self._wire(job).template,
                },
                "status": status,
            }
        if job.suspended:
            conditions.append(
                {"type": "Suspended", "status": "True", "reason": "JobSuspended", "message": "Job suspended"}
            )
        if job.finished:
            when = _ts(job.completion_time or self._now)
            if job.failed_reason is None:
                conditions.append(
                    {
                        "type": "SuccessCriteriaMet",
                        "status": "True",
                        "reason": "CompletionsReached",
                        "message": "Reached expected number of succeeded pods",
                    }
                )
                conditions.append(
                    {
                        "type": "Complete",
                        "status": "True",
                        "reason": "CompletionsReached",
                        "message": "Reached expected number of succeeded pods",
                        "lastTransitionTime": when,
                    }
                )
            else:
                message = (
                    "Pod was active longer than specified deadline"
                    if job.failed_reason == "DeadlineExceeded"
                    else "Job has reached the specified backoff limit"
                )
                conditions.append(
                    {
                        "type": "FailureTarget",
                        "status": "True",
                        "reason": job.failed_reason,
                        "message": message,
                    }
                )
                conditions.append(
                    {
                        "type": "Failed",
                        "status": "True",
                        "reason": job.failed_reason,
                        "message": message,
                        "lastTransitionTime": when,
                    }
                )
            status["completionTime"] = when
        if conditions:
            status["conditions"] = conditions
        if job.start_time is not None:
            status["startTime"] = _ts(job.start_time)
        live = job.live_pods
        status["active"] = len(live)
        status["ready"] = sum(1 for p in live if p.phase == "Running")
        if job.succeeded:
            status["succeeded"] = job.succeeded
        if job.failed:
            status["failed"] = job.failed
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta,
            "spec": {
                "parallelism": spec.members,
                "completions": spec.members,
                "backoffLimit": 0,
                "suspend": job.suspended,
                "completionMode": "NonIndexed",
                "template": self._wire(job).template,
            },
            "status": status,
        }

    def _wire(self, job: _Job) -> _Wire:
        wire = job.wire
        if wire is None:
            spec = job.spec
            # each part built once, for the pods and the template both (the simulator's profile)
            labels = self._pod_labels(job)
            template_annotations = annotations = self._pod_annotations(job)
            if self.kai is not None:
                annotations = self.kai.pod_annotations(job, dict(annotations))  # (it edits its input)
            pod_spec = self._pod_spec(job)
            owner: dict[str, Any]
            if job.is_service:
                owner = {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"{spec.name}-{job.rs_hash}",
                    "uid": job.rs_uid,
                }
            else:
                owner = {"apiVersion": "batch/v1", "kind": "Job", "name": spec.name, "uid": job.uid}
            owner["controller"] = True
            owner["blockOwnerDeletion"] = True
            wire = job.wire = _Wire(
                pod_labels=orjson.Fragment(orjson.dumps(labels)),
                pod_annotations=annotations,
                pod_annotations_json=orjson.Fragment(orjson.dumps(annotations)),
                owner_references=orjson.Fragment(orjson.dumps([owner])),
                pod_spec=orjson.dumps(pod_spec),
                template=orjson.Fragment(
                    orjson.dumps(self._template(labels, template_annotations, pod_spec))
                ),
            )
        return wire

    def _pod_obj(self, pod: _Pod) -> dict[str, Any]:
        job = pod.job
        spec = job.spec
        wire = self._wire(job)
        annotations: Any = wire.pod_annotations_json
        body = orjson.Fragment(wire.pod_spec)
        status: dict[str, Any] = {"phase": pod.phase, "qosClass": "Burstable"}
        if pod.node is not None:
            body = orjson.Fragment(b'%s,"nodeName":%s}' % (wire.pod_spec[:-1], orjson.dumps(pod.node)))
            if pod.gpu_indices or pod.backfilled:
                annotations = dict(wire.pod_annotations)
                if pod.gpu_indices:
                    annotations["alibabacloud.com/gpu-index"] = "-".join(str(i) for i in pod.gpu_indices)
                if pod.backfilled:
                    annotations[BACKFILLED_ANNOTATION] = "true"
            started = _ts(pod.started or self._now)
            status["conditions"] = [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": started},
                {"type": "Ready", "status": "True" if pod.phase == "Running" else "False"},
            ]
            status["startTime"] = started
            state: dict[str, Any]
            if pod.phase == "Running":
                state = {"running": {"startedAt": started}}
            else:
                state = {
                    "terminated": {
                        "exitCode": 0 if pod.phase == "Succeeded" else 1,
                        "reason": pod.reason or "Completed",
                        "startedAt": started,
                        "finishedAt": _ts(pod.finished or self._now),
                    }
                }
                if pod.reason == "DeadlineExceeded":
                    status["reason"] = "DeadlineExceeded"
                    status["message"] = "Pod was active on the node longer than the specified deadline"
            status["containerStatuses"] = [
                {
                    "name": "main",
                    "ready": pod.phase == "Running",
                    "restartCount": pod.restarts,
                    "state": state,
                }
            ]
        elif pod.restarts:
            status["containerStatuses"] = [
                {
                    "name": "main",
                    "ready": False,
                    "restartCount": pod.restarts,
                    "state": {"waiting": {"reason": "PodInitializing"}},
                }
            ]
        if self._dra is not None:
            self._dra.pod_status(spec.namespace, pod.name, pod.uid, status)
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": pod.name,
                "namespace": spec.namespace,
                "uid": pod.uid,
                "creationTimestamp": _ts(pod.created),
                "labels": wire.pod_labels
                if self.kai is None
                else self.kai.bound_labels(pod, wire.pod_labels),
                "annotations": annotations,
                "ownerReferences": wire.owner_references,
            },
            "spec": body,
            "status": status,
        }

    def _emit_job(self, job: _Job, etype: str = "MODIFIED") -> None:
        self._emit(job.kind, etype, self._job_obj(job))

    def _emit_pod(self, pod: _Pod, etype: str = "MODIFIED") -> None:
        self._emit("Pod", etype, self._pod_obj(pod))

    # -- lifecycle -------------------------------------------------------------------------------

    def initial_events(self) -> list[Event]:
        """Nodes, priority classes and the jobs submitted at t ≤ 0, as ADDED events (once)."""
        if not self._initial_done:
            self._initial_done = True
            for node in self.nodes.values():
                self._emit("Node", "ADDED", self._node_obj(node))
            if self._dra is not None:
                inventory = [
                    (n.spec.name, n.uid, n.spec.gpus, n.spec.gpu_model, n.spec.gpu_memory_mib)
                    for n in self.nodes.values()
                ]
                self._dra.initial(inventory, EPOCH)
            for pc in self.priority_classes.values():
                self._emit("PriorityClass", "ADDED", self._priority_class_obj(pc))
            if self.kai is not None:
                self.kai.initial()
            self._run_until(self._now)
        return self._drain()

    def advance(self, until: float) -> list[Event]:
        """Process arrivals and pod completions up to ``until`` (Unix seconds); events in order."""
        if not self._initial_done:
            self.initial_events()
            self._out = []
        self._run_until(until)
        self._now = max(self._now, until)
        if self.kai is not None:
            self.kai.settle()
        return self._drain()

    def _run_until(self, until: float) -> None:
        arrivals = self._arrivals
        while True:
            t_arrival = (
                EPOCH + arrivals[self._next_arrival].submit if self._next_arrival < len(arrivals) else None
            )
            t_heap = self._heap[0][0] if self._heap else None
            if t_arrival is not None and t_arrival <= until and (t_heap is None or t_arrival <= t_heap):
                self._now = max(self._now, t_arrival)
                spec = arrivals[self._next_arrival]
                self._next_arrival += 1
                self._submit(spec)
            elif t_heap is not None and t_heap <= until:
                when, _, action, payload = heapq.heappop(self._heap)
                self._now = max(self._now, when)
                if action == 0:
                    self._pod_ends(payload)
                else:
                    self._expire(payload)
            else:
                return

    def _submit(self, spec: JobSpec) -> None:
        kind = "Deployment" if spec.kind == "service" else "Job"
        key = (spec.namespace, kind, spec.name)
        if key in self.jobs and not self.jobs[key].deleted:
            return  # a name clash with a live object: the API server would answer 409 Conflict
        if spec.priority_class is not None:
            pc = self.priority_classes.get(spec.priority_class) or self._class_for_value(
                spec.priority or 0, True
            )
        elif spec.priority is not None:
            pc = self._class_for_value(spec.priority, True)
        else:
            pc = self._default_class
        job = _Job(
            spec=spec,
            kind=kind,
            uid=self._uid(),
            created=self._now,
            queue=spec.queue,
            priority_class=pc.name,
            priority=pc.value,
            suspended=spec.held and kind == "Job",
        )
        if job.is_service:
            job.rs_hash = self._suffix(10)
            job.rs_uid = self._uid()
        self.jobs[key] = job
        self._emit_job(job, "ADDED")
        if self.kai is not None:
            self.kai.job_added(job)
        if not job.suspended:
            self._create_pods(job)

    def _create_pods(self, job: _Job) -> None:
        missing = job.spec.members - len(job.live_pods) - (0 if job.is_service else job.succeeded)
        for _ in range(max(missing, 0)):
            prefix = f"{job.spec.name}-{job.rs_hash}-" if job.is_service else f"{job.spec.name}-"
            while True:
                name = prefix + self._suffix()
                if (job.spec.namespace, name) not in self.pods:
                    break
            pod = _Pod(name=name, uid=self._uid(), job=job, created=self._now, restarts=job.restarts)
            job.pods[name] = pod
            self.pods[(job.spec.namespace, name)] = pod
            self._pending_changed(job.spec, 1)
            self._emit_pod(pod, "ADDED")
            if self._dra is not None:
                self._dra.created(job.spec.namespace, name, pod.uid, job.spec, self._now)

    def _release_resources(self, pod: _Pod) -> None:
        if self._dra is not None and pod.node is not None:
            self._dra.released(pod.job.spec.namespace, pod.name)
        if pod.node is None:
            if pod.live:
                self._pending_changed(pod.job.spec, -1)
            return
        node = self.nodes[pod.node]
        self._freed[node.spec.name] = node
        if self.kai is not None:
            self.kai.released(pod)
        spec = pod.job.spec
        node.free_cpu += spec.cpu
        node.free_memory += spec.memory
        node.free_pods += 1
        for i in pod.gpu_indices:
            node.gpu_used[i] -= min(spec.gpu_milli, 1000)

    def _delete_pod(self, pod: _Pod) -> None:
        obj = self._pod_obj(pod)
        obj["metadata"]["deletionTimestamp"] = _ts(self._now)
        obj["metadata"]["deletionGracePeriodSeconds"] = 0
        if pod.live:
            self._release_resources(pod)
            pod.phase = "Deleted"
        del pod.job.pods[pod.name]
        self.pods.pop((pod.job.spec.namespace, pod.name), None)
        self._emit("Pod", "DELETED", obj)
        if self._dra is not None:
            self._dra.deleted(pod.job.spec.namespace, pod.name)

    def _pod_ends(self, pod: _Pod) -> None:
        job = pod.job
        if pod.phase != "Running" or job.pods.get(pod.name) is not pod or job.finished:
            return  # deleted, requeued or already failed with its job
        spec = job.spec
        timed_out = (
            spec.time_limit is not None and spec.duration is not None and spec.time_limit < spec.duration
        )
        if spec.fail or timed_out:
            reason = "DeadlineExceeded" if timed_out else "Error"
            self._finish_pod(pod, "Failed", reason)
            job.failed += 1
            for other in job.live_pods:
                if other.node is not None:
                    self._finish_pod(other, "Failed", reason)
                    job.failed += 1
                else:
                    self._delete_pod(other)
            self._finish_job(job, reason if timed_out else "BackoffLimitExceeded")
        else:
            self._finish_pod(pod, "Succeeded", "Completed")
            job.succeeded += 1
            if job.succeeded >= spec.members:
                self._finish_job(job, None)

    def _finish_pod(self, pod: _Pod, phase: str, reason: str) -> None:
        self._release_resources(pod)
        pod.phase = phase
        pod.reason = reason
        pod.finished = self._now
        self._emit_pod(pod)

    def _finish_job(self, job: _Job, failed_reason: str | None) -> None:
        job.finished = True
        job.failed_reason = failed_reason
        job.completion_time = self._now
        self._emit_job(job)
        ttl = self.scenario.ttl_after_finished
        if ttl is not None:
            self._push(self._now + ttl, 1, job)

    def _expire(self, job: _Job) -> None:
        if job.deleted or self.jobs.get(job.key) is not job:
            return
        self._delete_job(job)

    def _delete_job(self, job: _Job) -> None:
        job.deleted = True
        self._emit(job.kind, "DELETED", self._job_obj(job))
        if self.kai is not None:
            self.kai.job_deleted(job)
        for pod in list(job.pods.values()):
            self._delete_pod(pod)
        del self.jobs[job.key]

    # -- binding ---------------------------------------------------------------------------------

    def fits(self, pod_key: PodKey, node_name: str, gpu_indices: tuple[int, ...] = ()) -> str | None:
        """Why ``pod_key`` cannot run on ``node_name`` with those GPUs now; None when it can."""
        pod = self.pods.get(pod_key)
        if pod is None:
            return f"pod {pod_key[0]}/{pod_key[1]} does not exist"
        if pod.node is not None or pod.phase != "Pending":
            return f"pod {pod_key[0]}/{pod_key[1]} is already bound to {pod.node} ({pod.phase})"
        node = self.nodes.get(node_name)
        if node is None:
            return f"node {node_name} does not exist"
        if not node.spec.ready:
            return f"node {node_name} is not ready"
        spec = pod.job.spec
        for key, value in spec.node_selector:
            if node.labels.get(key) != value:
                return f"node {node_name} does not match the pod's node selector {key}={value}"
        if spec.gpu_models and spec.gpu_count and node.spec.gpu_model not in spec.gpu_models:
            have = node.spec.gpu_model or "no GPUs"
            return f"node {node_name} has {have}, the pod allows {'|'.join(spec.gpu_models)}"
        short = []
        if spec.cpu > node.free_cpu:
            short.append(f"cpu (needs {_cpu(spec.cpu)}, free {_cpu(node.free_cpu)})")
        if spec.memory > node.free_memory:
            short.append(f"memory (needs {_mem(spec.memory)}, free {_mem(node.free_memory)})")
        if node.free_pods < 1:
            short.append("pods")
        if short:
            return f"node {node_name}: insufficient " + ", ".join(short)
        if spec.gpu_count:
            chosen = self._choose_gpus(node, spec, gpu_indices)
            if isinstance(chosen, str):
                return chosen
        return None

    def _choose_gpus(self, node: _Node, spec: JobSpec, wanted: tuple[int, ...]) -> tuple[int, ...] | str:
        used = node.gpu_used
        milli = min(spec.gpu_milli, 1000)
        if wanted:
            if len(wanted) != spec.gpu_count or len(set(wanted)) != len(wanted):
                return f"node {node.spec.name}: {len(wanted)} GPU indices given for {spec.gpu_count} GPUs"
            for i in wanted:
                if not 0 <= i < len(used):
                    return f"node {node.spec.name}: no GPU {i} (it has {len(used)})"
                if used[i] + milli > 1000:
                    return (
                        f"node {node.spec.name}: GPU {i} has {1000 - used[i]} milli-GPU free, needs {milli}"
                    )
            return tuple(wanted)
        # the device plugin's choice: whole GPUs first-fit; a share goes on the fullest GPU it fits on
        if milli >= 1000:
            free = [i for i, u in enumerate(used) if u == 0]
            if len(free) < spec.gpu_count:
                return f"node {node.spec.name}: {len(free)} free GPUs, needs {spec.gpu_count}"
            return tuple(free[: spec.gpu_count])
        candidates = sorted((-u, i) for i, u in enumerate(used) if u + milli <= 1000)
        if len(candidates) < spec.gpu_count:
            return f"node {node.spec.name}: no GPU has {milli} milli-GPU free"
        return tuple(sorted(i for _, i in candidates[: spec.gpu_count]))

    # -- could anything be bound? ---------------------------------------------------------------

    @staticmethod
    def _shape(spec: JobSpec) -> Shape:
        return (spec.cpu, spec.memory, spec.gpu_count, spec.gpu_milli, spec.gpu_models, spec.node_selector)

    def _pending_changed(self, spec: JobSpec, delta: int) -> None:
        shape = self._shape(spec)
        count = self._pending_shapes.get(shape, 0) + delta
        if count > 0:
            self._pending_shapes[shape] = count
        else:
            self._pending_shapes.pop(shape, None)
            self._blocked.discard(shape)
            self._witness.pop(shape, None)

    @staticmethod
    def _shape_fits(shape: Shape, node: _Node) -> bool:
        """:meth:`fits` for a pod of ``shape`` with the device plugin choosing GPUs, without messages."""
        cpu, memory, gpu_count, gpu_milli, gpu_models, node_selector = shape
        if cpu > node.free_cpu or memory > node.free_memory or node.free_pods < 1 or not node.spec.ready:
            return False
        if gpu_count:
            if gpu_models and node.spec.gpu_model not in gpu_models:
                return False
            milli = min(gpu_milli, 1000)
            room = 1000 - milli
            if sum(1 for used in node.gpu_used if used <= room) < gpu_count:
                return False
        if node_selector:
            labels = node.labels
            return all(labels.get(key) == value for key, value in node_selector)
        return True

    def placement_possible(self) -> bool:
        """Whether some pending pod would fit on some node now, i.e. whether any bind could succeed.

        A scheduling cycle can only place pods that pass :meth:`fits`, so when this is False a
        cycle would bind nothing, whatever its order, quotas or reservations: the session skips
        it. Incremental, so it is cheap on every scheduling point: a shape found to fit on no
        node stays blocked until a node gains room (a pod ends or is deleted), and is then checked
        against those nodes only; a shape that fitted is checked first on the node it fitted on.
        """
        freed = list(self._freed.values())
        self._freed.clear()
        shapes = self._pending_shapes
        if not shapes:
            return False
        fits = self._shape_fits
        blocked = self._blocked
        if freed:
            for shape in [s for s in blocked if any(fits(s, node) for node in freed)]:
                blocked.discard(shape)
        nodes = self.nodes.values()
        witness = self._witness
        for shape in shapes:
            if shape in blocked:
                continue
            node = witness.get(shape)
            if node is not None and fits(shape, node):
                return True
            node = next((n for n in nodes if fits(shape, n)), None)
            if node is not None:
                witness[shape] = node
                return True
            blocked.add(shape)
            witness.pop(shape, None)
        return False

    def bind(
        self, pod: PodKey, node: str, gpu_indices: tuple[int, ...] = (), *, backfilled: bool = False
    ) -> list[Event]:
        """Bind a pending pod to a node (and GPU devices); it starts running at once.

        ``backfilled``: the scheduler started it by backfill; the pod carries ``BACKFILLED_ANNOTATION``.

        Raises :class:`SimulatorError` (nothing changes) when the pod is gone or bound, or the
        node lacks room, as a kubelet's admission would.
        """
        why = self.fits(pod, node, gpu_indices)
        if why is not None:
            raise SimulatorError(f"bind {pod[0]}/{pod[1]} → {node} refused: {why}")
        sim_pod = self.pods[pod]
        sim_node = self.nodes[node]
        spec = sim_pod.job.spec
        indices: tuple[int, ...] = ()
        if spec.gpu_count:
            chosen = self._choose_gpus(sim_node, spec, tuple(gpu_indices))
            assert not isinstance(chosen, str)
            indices = chosen
            for i in indices:
                sim_node.gpu_used[i] += min(spec.gpu_milli, 1000)
        sim_node.free_cpu -= spec.cpu
        sim_node.free_memory -= spec.memory
        sim_node.free_pods -= 1
        sim_pod.node = node
        sim_pod.gpu_indices = indices
        sim_pod.backfilled = backfilled
        self._pending_changed(spec, -1)
        sim_pod.phase = "Running"
        sim_pod.started = self._now
        self.binds += 1
        job = sim_pod.job
        first = job.start_time is None
        if first:
            job.start_time = self._now
        if self._dra is not None:
            self._dra.bound(spec.namespace, sim_pod.name, sim_pod.uid, node, indices, self._now)
        self._emit_pod(sim_pod)
        if self.kai is not None:
            self.kai.bound(sim_pod)
        if job.is_service or first:
            self._emit_job(job)
        if spec.duration is not None and not job.is_service:
            run = spec.duration
            if spec.time_limit is not None:
                run = min(run, spec.time_limit)
            self._push(self._now + run, 0, sim_pod)
        return self._drain()

    def unbind(self, pod: PodKey) -> list[Event]:
        """Undo a bind (a gang not placed whole): delete the pod; its controller recreates it pending."""
        sim_pod = self.pods.get(pod)
        if sim_pod is None or sim_pod.node is None or not sim_pod.live:
            raise SimulatorError(f"unbind {pod[0]}/{pod[1]}: the pod is not bound")
        job = sim_pod.job
        self._delete_pod(sim_pod)
        if not any(p.node for p in job.live_pods) and not job.succeeded:
            job.start_time = None
            self._emit_job(job)
        self._create_pods(job)
        return self._drain()

    # -- read-only views: the console's y (manifests) and l (logs) -----------------------------

    def manifests(self, key: JobKey) -> list[dict[str, Any]]:
        """The job's object and its live pods, as the API would serve them (plain dicts)."""
        job = self._job(key)
        objects = [self._job_obj(job), *(self._pod_obj(p) for p in job.live_pods)]
        return [orjson.loads(orjson.dumps(o)) for o in objects]

    def pod_log_span(self, namespace: str, name: str) -> tuple[float, float, bool] | None:
        """(started, until, is a service) of a pod's log, None before it started or when unknown."""
        pod = self.pods.get((namespace, name))
        if pod is None or pod.started is None:
            return None
        until = pod.finished if pod.finished is not None else self._now
        return pod.started, until, pod.job.is_service

    # -- actions ---------------------------------------------------------------------------------

    def _job(self, key: JobKey) -> _Job:
        job = self.jobs.get(tuple(key))  # type: ignore[arg-type]
        if job is None or job.deleted:
            raise SimulatorError(f"{key[1]} {key[0]}/{key[2]} does not exist")
        return job

    def job_uid(self, key: JobKey) -> str | None:
        job = self.jobs.get(key)
        return job.uid if job is not None and not job.deleted else None

    def plan(self, action: str, key: JobKey, value: str | int | None = None) -> list[str]:
        """What ``action`` would change, line by line; raises :class:`SimulatorError` if it does not apply."""
        job = self._job(key)
        spec = job.spec
        ident = f"{job.kind} {spec.namespace}/{spec.name}"
        live = job.live_pods
        running = [p for p in live if p.node is not None]
        pending = [p for p in live if p.node is None]
        if action == "move" and self.kai is not None:
            raise SimulatorError(f"{ident}: {KAI_MOVE_REFUSAL}")
        if action == "cancel":
            if job.finished:
                raise SimulatorError(
                    f"{ident} has already finished ({'failed' if job.failed_reason else 'complete'})"
                )
            out = [f"{ident}: deleted (propagationPolicy Background)"]
            if running:
                out.append(
                    f"{len(running)} running pod(s) deleted, freeing "
                    + ", ".join(sorted({p.node or "" for p in running}))
                )
            if pending:
                out.append(f"{len(pending)} pending pod(s) deleted")
            return out
        if action in ("hold", "release", "requeue") and job.is_service:
            raise SimulatorError(
                f"{ident} is a Deployment: it cannot be suspended; "
                "scale it (kubectl scale --replicas=0) instead"
            )
        if action == "hold":
            if job.finished:
                raise SimulatorError(f"{ident} has already finished")
            if job.suspended:
                raise SimulatorError(f"{ident} is already held (spec.suspend is true)")
            out = [f"{ident}: spec.suspend false → true"]
            if running:
                out.append(f"{len(running)} running pod(s) deleted (work since start is lost)")
            if pending:
                out.append(f"{len(pending)} pending pod(s) deleted")
            return out
        if action == "release":
            if not job.suspended:
                raise SimulatorError(f"{ident} is not held (spec.suspend is false)")
            n = spec.members - job.succeeded
            return [f"{ident}: spec.suspend true → false", f"{n} pod(s) created pending"]
        if action == "requeue":
            if job.finished:
                raise SimulatorError(f"{ident} has already finished")
            if job.suspended:
                raise SimulatorError(f"{ident} is held: release it instead")
            out = [
                f"{ident}: spec.suspend false → true → false (same name and uid)",
                f"restart count {job.restarts} → {job.restarts + 1}",
            ]
            if running:
                out.append(f"{len(running)} running pod(s) deleted")
            out.append(f"{spec.members - job.succeeded} pod(s) recreated pending")
            return out
        if action in ("priority", "move"):
            if job.finished:
                raise SimulatorError(f"{ident} has already finished")
            if running:
                what = "priority" if action == "priority" else "queue"
                raise SimulatorError(
                    f"{ident} has {len(running)} running pod(s): pod {what} is fixed once a pod is admitted; "
                    "requeue or hold it first"
                )
            if action == "priority":
                if value is None or isinstance(value, bool):
                    raise SimulatorError("a priority value is required")
                try:
                    new = int(value)
                except (TypeError, ValueError):
                    raise SimulatorError(f"priority {value!r} is not a whole number") from None
                if not -2_147_483_648 <= new <= 1_000_000_000:
                    raise SimulatorError(
                        f"priority {new} is out of range (user classes are at most 1000000000)"
                    )
                if new == job.priority:
                    raise SimulatorError(f"{ident} already has priority {new}")
                existing = next((pc.name for pc in self.priority_classes.values() if pc.value == new), None)
                cls = existing or f"priority-{new} (new PriorityClass)"
                out = [f"{ident}: priority {job.priority} ({job.priority_class}) → {new} ({cls})"]
            else:
                queue = str(value or "")
                if not queue:
                    raise SimulatorError("a queue path is required")
                if self._queues and queue not in self._queues:
                    raise SimulatorError(
                        f"queue {queue!r} does not exist (known: {', '.join(sorted(self._queues))})"
                    )
                if queue == job.queue:
                    raise SimulatorError(f"{ident} is already in {queue}")
                out = [f"{ident}: queue {job.queue} → {queue}"]
            if pending:
                out.append(
                    f"{len(pending)} pending pod(s) deleted and recreated (Kubernetes pods cannot change "
                    f"{'priority' if action == 'priority' else 'their queue'} in place)"
                )
            else:
                out.append("pod template updated (the job has no pods now)")
            return out
        raise SimulatorError(f"unknown action {action!r}")

    def cancel(self, key: JobKey) -> list[Event]:
        self.plan("cancel", key)
        self._delete_job(self._job(key))
        return self._drain()

    def hold(self, key: JobKey) -> list[Event]:
        self.plan("hold", key)
        job = self._job(key)
        job.suspended = True
        job.start_time = None
        self._emit_job(job)
        for pod in job.live_pods:
            self._delete_pod(pod)
        return self._drain()

    def release(self, key: JobKey) -> list[Event]:
        self.plan("release", key)
        job = self._job(key)
        job.suspended = False
        self._emit_job(job)
        self._create_pods(job)
        return self._drain()

    def requeue(self, key: JobKey) -> list[Event]:
        self.plan("requeue", key)
        job = self._job(key)
        job.suspended = True
        job.start_time = None
        self._emit_job(job)
        for pod in job.live_pods:
            self._delete_pod(pod)
        job.restarts += 1
        job.suspended = False
        self._emit_job(job)
        self._create_pods(job)
        return self._drain()

    def set_priority(self, key: JobKey, value: int) -> list[Event]:
        self.plan("priority", key, value)
        job = self._job(key)
        pc = self._class_for_value(int(value), emit=True)
        job.priority_class = pc.name
        job.priority = pc.value
        job.wire = None
        self._recreate_pending(job)
        return self._drain()

    def move(self, key: JobKey, queue: str) -> list[Event]:
        self.plan("move", key, queue)
        job = self._job(key)
        job.queue = queue
        job.wire = None
        self._recreate_pending(job)
        return self._drain()

    def _recreate_pending(self, job: _Job) -> None:
        self._emit_job(job)
        pending = [p for p in job.live_pods if p.node is None]
        for pod in pending:
            self._delete_pod(pod)
        if not job.suspended:
            self._create_pods(job)

    # -- introspection (tests, stats) ------------------------------------------------------------

    def gpu_free(self, node: str) -> list[int]:
        """Free milli-GPU per device of ``node``."""
        return [1000 - u for u in self.nodes[node].gpu_used]

    def job_names(self) -> Iterable[JobKey]:
        return self.jobs.keys()
