"""YuniKorn's queue tree from its REST API (``/ws/v1/partition/{p}/queues``, SCHEDULERS.md §4.4).

Why: YuniKorn has no CRDs; its queues exist only in the scheduler, whose REST service (reached
through the apiserver's service proxy) returns the whole tree as one JSON object with
``children``. This turns that document into the same :class:`QueueInfo` records as Kueue and
Volcano queues, so the queue pane and the core need not know which scheduler is running.

Traps handled (§4.4): ``isLeaf``/``isManaged`` are booleans in code but strings in the docs;
resources are ``map[string]int64`` with ``vcore`` in millicores, ``memory`` in bytes and other
resources as raw counts (GPUs become milli-GPU here); queue names are full dotted paths in current
releases, bare names under their parent in old ones.
"""

from __future__ import annotations

from pydantic import ValidationError

from hpctop.model.decode import DecodeError, _Wire
from hpctop.model.objects import QueueInfo
from hpctop.model.resources import GPU_RESOURCE, IGNORED_RESOURCES, ZERO, Resources

#: YuniKorn queue status → the neutral queue state
_STATES = {"Active": "Open", "Draining": "Draining", "Stopped": "Closed"}


class WireYkQueue(_Wire):
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
        root = WireYkQueue.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": str(exc)}
        where = ".".join(str(p) for p in first["loc"])
        raise DecodeError(f"YuniKorn queues: {where}: {first['msg']}") from None
    except ValueError as exc:
        raise DecodeError(f"YuniKorn queues: {exc}") from None
    out: list[QueueInfo] = []
    _walk(root, root.parent or None, out)
    return tuple(out)
