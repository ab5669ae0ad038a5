"""Volcano's read side: what hpctop watches, how it decodes it, how a PodGroup explains a gang.

Why one module: a Volcano gang's truth is its PodGroup (``Pending``: not yet enqueued;
``Inqueue``: the queue has room, waiting for allocation; ``Unschedulable`` conditions with
Volcano's reasons) and its Queue (``Open``/``Closed``/``Closing``, ``capability``), not its pods,
which are merely Pending (volcano-sh/volcano, SCHEDULERS.md §6). Here:

- **watches**: Queues and PodGroups (scheduling.volcano.sh/v1beta1), vcjobs
  (batch.volcano.sh/v1alpha1, decoder key ``Job.batch.volcano.sh``: same kind as batch/v1 Job);
  it writes bus Commands (bus.volcano.sh/v1alpha1) to abort/resume/restart a vcjob; HyperNodes
  (topology.volcano.sh/v1alpha1, ``wire``) where discovery lists them, and the PodGroup's
  ``networkTopology`` (copied there from the vcjob), for :mod:`hpctop.model.topology`;
- **decodes**: its Queue here; its PodGroup with the shape coscheduling shares
  (:mod:`hpctop.model.backends.podgroup`), a PodGroup naming no queue waiting in ``default``;
- **queues**: placed under ``root`` by the ``spec.parent`` chain (or the ``volcano.sh/hierarchy``
  annotation); the default queue is ``root.default``; ``Closing`` is the neutral ``Draining``.

It imports the model (and the neutral helpers in :mod:`hpctop.model.backends`) only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from hpctop.backends.contract import Backend, QueuePlace, ResourceSpec
from hpctop.backends.volcano.wire import HYPERNODE, WireHyperNode, hypernode_from_wire
from hpctop.model.backends.evidence import JobEvidence
from hpctop.model.backends.podgroup import WirePodGroup, gang_reasons, gang_state, pod_group_projection
from hpctop.model.backends.queues import QueueIndex, escape, positive
from hpctop.model.backends.wire import Quantity, resource_map, workload_decoder
from hpctop.model.objects import (
    VOLCANO_BATCH_GROUP,
    VOLCANO_GROUP,
    VOLCANO_TOPOLOGY_GROUP,
    PodGroup,
    QueueInfo,
    Reason,
    VolcanoQueue,
)
from hpctop.model.policy import ROOT
from hpctop.model.projection import VOLCANO_JOB_KIND, DecodeError
from hpctop.model.resources import ZERO, Resources
from hpctop.model.states import JobState, ReasonCode
from hpctop.model.structs import MetaS, WireStruct

# -- what it watches ---------------------------------------------------------------------------

VOLCANO_QUEUE = "Queue.scheduling.volcano.sh"
VOLCANO_PODGROUP = "PodGroup.scheduling.volcano.sh"

VOLCANO_QUEUES = ResourceSpec(VOLCANO_QUEUE, VOLCANO_GROUP, "v1beta1", "queues", namespaced=False)
VOLCANO_PODGROUPS = ResourceSpec(VOLCANO_PODGROUP, VOLCANO_GROUP, "v1beta1", "podgroups", namespaced=True)
VOLCANO_JOBS = ResourceSpec(VOLCANO_JOB_KIND, VOLCANO_BATCH_GROUP, "v1alpha1", "jobs", namespaced=True)
#: Volcano's network topology (v1.12+): watched where discovery lists it
VOLCANO_HYPERNODES = ResourceSpec(
    HYPERNODE, VOLCANO_TOPOLOGY_GROUP, "v1alpha1", "hypernodes", namespaced=False
)
#: Volcano's bus Commands (what vcctl creates to abort/resume/restart a vcjob, SCHEDULERS.md §6.4)
VOLCANO_COMMANDS = ResourceSpec(
    "Command.bus.volcano.sh", "bus.volcano.sh", "v1alpha1", "commands", namespaced=True
)
#: the annotations naming a pod's PodGroup (Volcano's, and the older scheduling.k8s.io one)
VOLCANO_GROUP_KEYS = ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name")
#: vcjob status.state.phase → state (SCHEDULERS.md §6.3)
VOLCANO_PHASES = {
    "Aborted": JobState.HELD,
    "Aborting": JobState.COMPLETING,
    "Completing": JobState.COMPLETING,
    "Terminating": JobState.COMPLETING,
    "Restarting": JobState.REQUEUED,
    "Terminated": JobState.CANCELLED,
    "Completed": JobState.COMPLETED,
    "Failed": JobState.FAILED,
}

# -- how it decodes ------------------------------------------------------------------------------

HIERARCHY = "volcano.sh/hierarchy"


class WireGuarantee(WireStruct, frozen=True):
    needed = frozenset({"resource"})

    resource: dict[str, Quantity] | None = None


class WireVolcanoQueueSpec(WireStruct, frozen=True):
    needed = frozenset({"capability", "deserved", "guarantee", "parent", "weight"})

    weight: int | None = None
    capability: dict[str, Quantity] | None = None
    deserved: dict[str, Quantity] | None = None
    guarantee: WireGuarantee | None = None
    reclaimable: bool | None = None
    priority: int | None = None
    parent: str | None = None


class WireVolcanoQueueStatus(WireStruct, frozen=True):
    needed = frozenset({"state", "allocated"})

    state: str | None = None
    allocated: dict[str, Quantity] | None = None
    pending: int | None = None
    inqueue: int | None = None
    running: int | None = None


class WireVolcanoQueue(WireStruct, frozen=True):
    needed = frozenset({"spec", "status"})

    metadata: MetaS
    spec: WireVolcanoQueueSpec = WireVolcanoQueueSpec()
    status: WireVolcanoQueueStatus = WireVolcanoQueueStatus()


def volcano_queue_from_wire(w: WireVolcanoQueue) -> VolcanoQueue:
    meta, spec, status = w.metadata, w.spec, w.status
    if not meta.name:
        raise DecodeError("Queue without metadata.name")
    hierarchy_text = (meta.annotations or {}).get(HIERARCHY, "")
    hierarchy = tuple(p for p in hierarchy_text.split("/") if p)
    parent = spec.parent or None
    if parent is None and len(hierarchy) > 1 and hierarchy[-1] == meta.name:
        parent = hierarchy[-2]
    return VolcanoQueue(
        name=meta.name,
        resource_version=meta.resourceVersion,
        parent=parent,
        hierarchy=hierarchy,
        weight=spec.weight,
        capability=resource_map(spec.capability),
        deserved=resource_map(spec.deserved),
        guarantee=resource_map(spec.guarantee.resource) if spec.guarantee else None,
        state=status.state or "Open",
        priority=spec.priority,
        reclaimable=spec.reclaimable,
        allocated=Resources.from_k8s(status.allocated, aggregate=True),
        pending=status.pending or 0,
        inqueue=status.inqueue or 0,
        running=status.running or 0,
    )


# -- how its evidence becomes state and reasons ----------------------------------------------------


def job_state(ev: JobEvidence, state: JobState, bound: bool) -> JobState | None:
    """A Volcano gang's PodGroup phase weighed against the pods (None: no say): ``Pending``
    (not yet enqueued) and ``Inqueue`` (waiting for allocation) are PENDING."""
    return gang_state(ev, state, bound, VOLCANO_GROUP, ("Pending", "Inqueue"))


#: PodGroup ``Unschedulable`` condition reasons (pkg/scheduler/api/job_info.go)
_UNSCHEDULABLE = {
    "NotEnoughResources": ReasonCode.RESOURCES,
    "NotEnoughTasks": ReasonCode.GANG_INCOMPLETE,
    "NotEnoughPodsOfTask": ReasonCode.GANG_INCOMPLETE,
}


def _volcano_reasons(pg: PodGroup, ev: JobEvidence, live_members: int) -> list[Reason]:
    out = gang_reasons(pg, ev, live_members, "vc", _UNSCHEDULABLE)
    if pg.condition("Unschedulable") is None:
        info = ev.queue_info
        if pg.phase == "Pending":
            if info is not None and info.max is not None and _used_up(info):
                out.append(
                    Reason(
                        ReasonCode.QUOTA_EXCEEDED,
                        "vc:Queue.capability",
                        f"queue {info.path} capability used up",
                    )
                )
            else:
                out.append(Reason(ReasonCode.PRIORITY, "vc:PodGroup.phase", "Pending: not yet enqueued"))
        elif pg.phase == "Inqueue":
            out.append(
                Reason(
                    ReasonCode.WAITING_FOR_SCHEDULING,
                    "vc:PodGroup.phase",
                    "Inqueue: the queue has room, waiting for allocation",
                )
            )
    return out


def _used_up(info: QueueInfo) -> bool:
    cap = info.max
    if cap is None:
        return False
    used = info.allocated
    if (cap.gpu and used.gpu >= cap.gpu) or (cap.cpu and used.cpu >= cap.cpu):
        return True
    if cap.memory and used.memory >= cap.memory:
        return True
    have = dict(used.extended)
    return any(v and have.get(k, 0) >= v for k, v in cap.extended) and cap != ZERO


def job_reasons(ev: JobEvidence, state: JobState, live_members: int) -> list[Reason] | None:
    """The PodGroup's reasons for a waiting Volcano gang (None: no Volcano PodGroup, or starting)."""
    pg = ev.pod_group
    if pg is None or pg.group != VOLCANO_GROUP or state == JobState.STARTING:
        return None
    return _volcano_reasons(pg, ev, live_members)


REASONS: frozenset[ReasonCode] = frozenset(
    {
        *_UNSCHEDULABLE.values(),
        ReasonCode.UNSCHEDULABLE,
        ReasonCode.QUEUE_HELD,
        ReasonCode.GANG_INCOMPLETE,
        ReasonCode.QUOTA_EXCEEDED,
        ReasonCode.PRIORITY,
        ReasonCode.WAITING_FOR_SCHEDULING,
    }
)


# -- its queues ----------------------------------------------------------------------------------

#: the lookup :func:`fold_queues` adds: Volcano Queue name → path
VOLCANO_PATHS = "volcano.queue"


def fold_queues(objects: Iterable[object], out: dict[str, QueueInfo]) -> Mapping[str, Mapping[Any, str]]:
    """Volcano's Queues into the neutral tree (see the module)."""
    queues = [obj for obj in objects if isinstance(obj, VolcanoQueue)]
    if not queues:
        return {}
    return {VOLCANO_PATHS: _volcano(queues, out)}


_VOLCANO_STATES = {"Open": "Open", "Closed": "Closed", "Closing": "Draining"}


def _volcano(queues: list[VolcanoQueue], out: dict[str, QueueInfo]) -> dict[str, str]:
    by_name = {q.name: q for q in queues}
    paths: dict[str, str] = {}

    def path_of(name: str) -> str:
        if name in paths:
            return paths[name]
        q = by_name.get(name)
        if q is not None and q.hierarchy and q.hierarchy[-1] == name:
            parts = [escape(p) for p in q.hierarchy]
        else:
            chain: list[str] = []
            seen: set[str] = set()
            cur: str | None = name
            while cur is not None and cur not in seen:
                seen.add(cur)
                chain.append(cur)
                node = by_name.get(cur)
                cur = node.parent if node is not None else None
            parts = [escape(c) for c in reversed(chain)]
        if parts[0] != ROOT:
            parts.insert(0, ROOT)
        paths[name] = ".".join(parts)
        return paths[name]

    for q in queues:
        path = path_of(q.name)
        guaranteed = q.deserved or q.guarantee or ZERO
        state = _VOLCANO_STATES.get(q.state, "Unknown")
        out[path] = QueueInfo(
            path=path,
            name=q.name,
            parent=path.rsplit(".", 1)[0] if "." in path else None,
            kind="leaf",
            backend="volcano",
            state=state,
            guaranteed=guaranteed,
            max=q.capability,
            weight=None if q.weight is None else float(q.weight),
            priority=q.priority,
            allocated=q.allocated,
            borrowed=positive(q.allocated - guaranteed) if guaranteed != ZERO else ZERO,
            pending_jobs=q.pending + q.inqueue,
            running_jobs=q.running,
            state_reason=f"vc:Queue.state={q.state}" if state != "Open" else "",
        )
    for info in list(out.values()):
        if info.backend == "volcano" and info.parent is not None and info.parent in out:
            parent = out[info.parent]
            if parent.kind == "leaf" and parent.backend == "volcano":
                out[info.parent] = replace(parent, kind="parent")
    return paths


def queue_shape(obj: object) -> tuple[object, ...] | None:
    """What of a Volcano Queue moves a job's queue path or QueueHeld reason (not its usage)."""
    if isinstance(obj, VolcanoQueue):
        return (obj.parent, obj.hierarchy, obj.state, obj.capability)
    return None


def place_in_queue(_ev: JobEvidence, queue_name: str | None, index: QueueIndex) -> QueuePlace | None:
    """A gang (or owner) naming a queue waits in the Volcano Queue of that name, if one exists."""
    if queue_name is None:
        return None
    return QueuePlace(index.lookup(VOLCANO_PATHS).get(queue_name))


# -- the descriptor ------------------------------------------------------------------------------

BACKEND = Backend(
    name="volcano",
    title="Volcano",
    upstream="https://github.com/volcano-sh/volcano",
    watches=((VOLCANO_QUEUES,), (VOLCANO_PODGROUPS,), (VOLCANO_JOBS,), (VOLCANO_HYPERNODES,)),
    fixtures=("tests/fixtures/live_truth/40_volcano.yaml", "tests/fixtures/backends/volcano.json"),
    reasons=REASONS,
    actions="hpctop.backends.volcano.act",
    labels=("scheduling.k8s.io/group-name", "scheduling.volcano.sh/", "volcano.sh/"),
    detects={
        VOLCANO_GROUP: "volcano",
        VOLCANO_BATCH_GROUP: "volcano",
        "bus.volcano.sh": "volcano",
        VOLCANO_TOPOLOGY_GROUP: "volcano",
    },
    writes=(VOLCANO_COMMANDS,),
    decoders={
        VOLCANO_QUEUE: (WireVolcanoQueue, lambda w, _: volcano_queue_from_wire(w)),
        VOLCANO_PODGROUP: (WirePodGroup, pod_group_projection(VOLCANO_GROUP, default_queue="default")),
        VOLCANO_JOB_KIND: workload_decoder(VOLCANO_JOB_KIND),
        HYPERNODE: (WireHyperNode, hypernode_from_wire),
    },
    object_kinds=frozenset({VOLCANO_QUEUE, VOLCANO_PODGROUP, HYPERNODE}),
    job_state=job_state,
    job_reasons=job_reasons,
    fold_queues=fold_queues,
    queue_shape=queue_shape,
    place_in_queue=place_in_queue,
)
