"""YuniKorn's read side: its queue tree from its REST API (``/ws/v1/partition/{p}/queues``, §4.4).

Why: YuniKorn has no CRDs; its queues exist only in the scheduler, whose REST service (reached
through the apiserver's service proxy) returns the whole tree as one JSON object with
``children``. This turns that document into the same :class:`QueueInfo` records as Kueue and
Volcano queues, so the queue pane and the core need not know which scheduler is running.

Traps handled (§4.4): ``isLeaf``/``isManaged`` are booleans in code but strings in the docs;
resources are ``map[string]int64`` with ``vcore`` in millicores, ``memory`` in bytes and other
resources as raw counts (GPUs become milli-GPU here); queue names are full dotted paths in current
releases, bare names under their parent in old ones.

The rest of what YuniKorn says is on the pods, read by :mod:`hpctop.model.jobs`: the application
(``applicationId``/``yunikorn.apache.org/app-id``) groups pods into a job, placeholders (owned by
the originator pod with ``controller: false``) join its gang, ``SchedulingSkipped`` on a pod is
a used-up queue quota, and unallocated placeholders are an incomplete gang.
"""

from __future__ import annotations

import msgspec

from hpctop.backends.contract import Backend
from hpctop.model.objects import QueueInfo
from hpctop.model.projection import DecodeError
from hpctop.model.resources import GPU_RESOURCE, IGNORED_RESOURCES, ZERO, Resources
from hpctop.model.states import ReasonCode
from hpctop.model.structs import WireStruct

#: YuniKorn queue status → the neutral queue state
_STATES = {"Active": "Open", "Draining": "Draining", "Stopped": "Closed"}
#: the pod labels naming a YuniKorn application (the k8shim's, and Spark's)
APP_ID_KEYS = ("yunikorn.apache.org/app-id", "applicationId", "spark-app-selector")
#: gang scheduling: the task groups and their policy (annotations on the originator pod)
TASK_GROUPS = "yunikorn.apache.org/task-groups"
POLICY_PARAMETERS = "yunikorn.apache.org/schedulingPolicyParameters"


class WireYkQueue(WireStruct, frozen=True):
    queuename: str
    status: str | None = None
    parent: str | None = None
    children: list[WireYkQueue] | None = None
    isLeaf: bool | str | None = None
    maxResource: dict[str, int | float] | None = None
    guaranteedResource: dict[str, int | float] | None = None
    allocatedResource: dict[str, int | float] | None = None
    pendingResource: dict[str, int | float] | None = None
    runningApps: int | None = None
    maxRunningApps: int | None = None
    currentPriority: int | None = None
    priorityOffset: int | None = None


_QUEUE = msgspec.json.Decoder(WireYkQueue)


def yk_resources(values: dict[str, int | float] | None) -> Resources:
    """A YuniKorn resource map in canonical units (vcore is already millicores)."""
    cpu = memory = gpu = 0
    extended: list[tuple[str, int]] = []
    for key, raw in (values or {}).items():
        value = int(raw)
        if key in ("vcore", "cpu"):
            cpu = value
        elif key == "memory":
            memory = value
        elif key == GPU_RESOURCE:
            gpu = value * 1000
        elif key not in IGNORED_RESOURCES and value:
            extended.append((key, value))
    return Resources(cpu, memory, gpu, tuple(sorted(extended)))


def _flag(value: bool | str | None) -> bool | None:
    if isinstance(value, str):
        return value.strip().lower() == "true"
    return value


def _walk(q: WireYkQueue, parent: str | None, out: list[QueueInfo]) -> None:
    name = q.queuename
    path = name if parent is None or name.startswith(parent + ".") else f"{parent}.{name}"
    children = q.children or []
    leaf = _flag(q.isLeaf)
    if leaf is None:
        leaf = not children
    allocated = yk_resources(q.allocatedResource)
    guaranteed = yk_resources(q.guaranteedResource)
    borrowed = allocated - guaranteed if guaranteed != ZERO else ZERO
    out.append(
        QueueInfo(
            path=path,
            name=path.rsplit(".", 1)[-1],
            parent=parent,
            kind="leaf" if leaf else "parent",
            backend="yunikorn",
            state=_STATES.get(q.status or "Active", "Unknown"),
            guaranteed=guaranteed,
            max=yk_resources(q.maxResource) if q.maxResource else None,
            priority=q.currentPriority,
            allocated=allocated,
            borrowed=Resources(
                max(borrowed.cpu, 0),
                max(borrowed.memory, 0),
                max(borrowed.gpu, 0),
                tuple((k, v) for k, v in borrowed.extended if v > 0),
            ),
            pending=yk_resources(q.pendingResource),
            running_jobs=q.runningApps or 0,
            state_reason=f"yk:queue.status={q.status}" if q.status and q.status != "Active" else "",
        )
    )
    for child in children:
        _walk(child, path, out)


def decode_queue_tree(raw: bytes) -> tuple[QueueInfo, ...]:
    """The queues of one partition, parents before children; raises DecodeError when malformed."""
    try:
        root = _QUEUE.decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise DecodeError(str(exc), kind="YuniKorn queues") from None
    except RecursionError:
        raise DecodeError("queue tree nested too deeply", kind="YuniKorn queues") from None
    out: list[QueueInfo] = []
    try:
        _walk(root, root.parent or None, out)
    except RecursionError:
        raise DecodeError("queue tree nested too deeply", kind="YuniKorn queues") from None
    return tuple(out)


#: what YuniKorn's own evidence says of a job: a gang whose placeholders are not all allocated
#: (``yk:placeholders``). Its ``SchedulingSkipped`` is a pod condition, read with the others
#: (kube-scheduler's list); a closed queue is the scheduling core's QueueHeld, from this tree.
REASONS: frozenset[ReasonCode] = frozenset({ReasonCode.GANG_INCOMPLETE})

BACKEND = Backend(
    name="yunikorn",
    title="Apache YuniKorn",
    upstream="https://github.com/apache/yunikorn-k8shim",
    watches=(),  # no CRDs: found by its Service or schedulerName, queues read over REST
    fixtures=("tests/fixtures/live_truth/30_yunikorn.yaml", "tests/fixtures/backends/yunikorn_queues.json"),
    reasons=REASONS,
    actions="hpctop.backends.yunikorn.act",
    labels=("yunikorn.apache.org/", "applicationId"),
)
