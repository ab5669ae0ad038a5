"""Volcano's read side: what hpctop watches, how it decodes it, how a PodGroup explains a gang.

Why: a Volcano gang's truth is its PodGroup (``Pending`` → not yet enqueued, ``Inqueue`` → the
queue has room, waiting for allocation; ``Unschedulable`` conditions with Volcano's reasons) and
its Queue (``Open``/``Closed``/``Closing``, ``capability``), not its pods, which are merely
Pending. Queues are placed under ``root`` by their ``spec.parent`` chain (or the
``volcano.sh/hierarchy`` annotation); the default queue is ``root.default``.
"""

from __future__ import annotations

from hpctop.backends.contract import Backend, QueuePlace, ResourceSpec
from hpctop.backends.volcano.topology import HYPERNODE, WireHyperNode, hypernode_from_wire
from hpctop.model.backends.evidence import JobEvidence, pod_group_reasons, pod_group_state
from hpctop.model.backends.queues import VOLCANO_PATHS, QueueIndex, fold_volcano
from hpctop.model.backends.wire import POD_GROUP_DECODERS, VOLCANO_PODGROUP, VOLCANO_QUEUE, workload_decoder
from hpctop.model.objects import VOLCANO_BATCH_GROUP, VOLCANO_GROUP, VOLCANO_TOPOLOGY_GROUP, VolcanoQueue
from hpctop.model.projection import VOLCANO_JOB_KIND
from hpctop.model.states import ReasonCode

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


REASONS: frozenset[ReasonCode] = frozenset(
    {
        ReasonCode.QUEUE_HELD,
        ReasonCode.RESOURCES,
        ReasonCode.GANG_INCOMPLETE,
        ReasonCode.UNSCHEDULABLE,
        ReasonCode.QUOTA_EXCEEDED,
        ReasonCode.PRIORITY,
        ReasonCode.WAITING_FOR_SCHEDULING,
    }
)

BACKEND = Backend(
    name="volcano",
    title="Volcano",
    upstream="https://github.com/volcano-sh/volcano",
    watches=((VOLCANO_QUEUES,), (VOLCANO_PODGROUPS,), (VOLCANO_JOBS,), (VOLCANO_HYPERNODES,)),
    fixtures=("tests/fixtures/live_truth/40_volcano.yaml", "tests/fixtures/backends/volcano.json"),
    reasons=REASONS,
    actions="hpctop.backends.volcano.act",
    detects={
        VOLCANO_GROUP: "volcano",
        VOLCANO_BATCH_GROUP: "volcano",
        "bus.volcano.sh": "volcano",
        VOLCANO_TOPOLOGY_GROUP: "volcano",
    },
    writes=(VOLCANO_COMMANDS,),
    decoders={
        VOLCANO_QUEUE: POD_GROUP_DECODERS[VOLCANO_QUEUE],
        VOLCANO_PODGROUP: POD_GROUP_DECODERS[VOLCANO_PODGROUP],
        VOLCANO_JOB_KIND: workload_decoder(VOLCANO_JOB_KIND),
        HYPERNODE: (WireHyperNode, hypernode_from_wire),
    },
    object_kinds=frozenset({VOLCANO_QUEUE, VOLCANO_PODGROUP, HYPERNODE}),
    # until coscheduling has its own, these hooks read both PodGroup kinds
    job_state=pod_group_state,
    job_reasons=pod_group_reasons,
    fold_queues=fold_volcano,
    queue_shape=queue_shape,
    place_in_queue=place_in_queue,
)
