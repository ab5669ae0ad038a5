"""Pending reasons with evidence: a code, where it came from, and numbers a user can check.

Why separate: the core decides, this module words the decision. Messages start with the scarce
resource or the blocking object and carry the numbers (``gpu: needs 8 GPUs/node; largest free 4
on h100``), because a bare ``Resources`` is what makes users open five other tools. Resource
messages are computed once per distinct (node set, request, members) and cached, so thousands of
identical blocked pods cost one scan.
"""

from __future__ import annotations

from collections.abc import Sequence

from hpctop.model.objects import Job, Reason
from hpctop.model.quantity import format_bytes
from hpctop.model.states import ReasonCode
from hpctop.scheduling.placement import NodeFree, Request

SOURCE = "core"


def reason(code: ReasonCode, kind: str, message: str) -> Reason:
    return Reason(code, f"{SOURCE}:{kind}", message)


def gpus(milli: int) -> str:
    return f"{milli // 1000}" if milli % 1000 == 0 else f"{milli / 1000:.2f}"


def held(job: Job) -> Reason:
    return reason(ReasonCode.HELD, "state", f"job {job.id} is held (suspended)")


def gated(job: Job) -> Reason:
    return reason(ReasonCode.GATED, "gates", "scheduling gates: " + ", ".join(job.scheduling_gates))


def gang_incomplete(job: Job) -> Reason:
    created = len(job.pending_pods) + job.running_members
    return reason(
        ReasonCode.GANG_INCOMPLETE,
        "gang",
        f"{created} of {job.min_members} gang members created ({len(job.pending_pods)} pending, "
        f"{job.running_members} running)",
    )


def queue_closed(queue: str) -> Reason:
    return reason(ReasonCode.QUEUE_HELD, "queue", f"queue {queue} is closed")


def partitions_down(states: Sequence[tuple[str, str]]) -> Reason:
    text = ", ".join(f"{name} is {state}" for name, state in states)
    return reason(ReasonCode.QUEUE_HELD, "partition", f"no eligible partition is up: {text}")


def _amount(resource: str, value: int) -> str:
    if resource == "gpu":
        return f"{gpus(value)} GPUs"
    if resource == "cpu":
        return f"{value / 1000:g} CPUs"
    if resource == "memory":
        return format_bytes(value)
    return f"{value} {resource}"


def quota(queue: str, resource: str, used: int, cap: int, need: int) -> Reason:
    return reason(
        ReasonCode.QUOTA_EXCEEDED,
        "quota",
        f"queue {queue} uses {_amount(resource, used)} of max {_amount(resource, cap)}, "
        f"job needs {_amount(resource, need)}",
    )


def unknown_partition(name: str) -> Reason:
    return reason(ReasonCode.CONSTRAINTS, "partition", f"partition {name} does not exist")


def _need_text(req: Request) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if req.whole:
        out.append(("gpu", f"{req.whole} GPUs/node"))
    elif req.frac:
        out.append(("gpu", f"{gpus(req.frac)} GPU"))
    if req.cpu:
        out.append(("cpu", f"{req.cpu / 1000:g} CPUs"))
    if req.memory:
        out.append(("memory", format_bytes(req.memory)))
    out.extend((k, f"{v} {k}") for k, v in req.ext)
    return out


def _largest(nodes: Sequence[NodeFree], resource: str, req: Request) -> tuple[int, str]:
    """Largest free amount of one resource on any node, and that node's name."""
    best, where = -1, ""
    for nf in nodes:
        if resource == "gpu":
            value = nf.whole_free() if req.whole else nf.max_gpu_free()
        elif resource == "cpu":
            value = nf.cpu
        elif resource == "memory":
            value = nf.memory
        else:
            value = nf.ext.get(resource, 0)
        if value > best:
            best, where = value, nf.name
    return max(best, 0), where


def _fits_alone(nf: NodeFree, resource: str, req: Request) -> bool:
    if resource == "gpu":
        return nf.whole_free() >= req.whole if req.whole else nf.max_gpu_free() >= req.frac
    if resource == "cpu":
        return nf.cpu >= req.cpu
    if resource == "memory":
        return nf.memory >= req.memory
    return nf.ext.get(resource, 0) >= dict(req.ext).get(resource, 0)


def shares_gpus(nf: NodeFree | None) -> bool:
    """Whether a node's ``nvidia.com/gpu`` units are shares, not GPUs: GPU Feature Discovery names
    such a product ``<model>-SHARED`` (time-slicing, MPS) or ``<model>-MIG-<profile>`` (MIG single)."""
    product = (nf.product if nf is not None else None) or ""
    return product.endswith("-SHARED") or "-MIG-" in product


def _free_text(resource: str, value: int, req: Request, nf: NodeFree | None = None) -> str:
    if resource == "gpu":
        if shares_gpus(nf):  # what is free there is shares of GPUs, not whole GPUs
            return f"{value} GPU shares" if req.whole else f"{gpus(value)} GPU share"
        return f"{value} GPUs" if req.whole else f"{gpus(value)} GPU"
    return _amount(resource, value)


def scarce(
    code: ReasonCode, kind: str, parts: Sequence[tuple[str, Sequence[NodeFree]]], req: Request, m: int
) -> Reason:
    """Name the resource that stops ``m`` members of ``req`` fitting in the given partitions' nodes."""
    where = ",".join(name for name, _ in parts) or "-"
    nodes = [nf for _, group in parts for nf in group]
    needs = _need_text(req)
    if not nodes:
        return reason(code, "nodes", f"no schedulable node in {where}")
    for resource, need in needs:
        if not any(_fits_alone(nf, resource, req) for nf in nodes):
            value, node = _largest(nodes, resource, req)
            at = next((nf for nf in nodes if nf.name == node), None)
            return reason(
                code,
                kind,
                f"{resource}: needs {need}; largest free {_free_text(resource, value, req, at)} on {where}"
                + (f" ({node})" if node else ""),
            )
    first = needs[0][0] if needs else "pods"
    if req.whole:  # a node without that many whole free GPUs hosts none: skip it cheaply
        k = req.whole
        total = sum(nf.hosts(req, m) for nf in nodes if nf.whole >= k)
    else:
        total = sum(nf.hosts(req, m) for nf in nodes)
    what = ", ".join(n for _, n in needs) or "nothing"
    if m > 1:
        return reason(code, kind, f"{first}: gang needs {m} x ({what}); only {total} fit on {where}")
    return reason(code, kind, f"{first}: no single node in {where} has {what} free at once")


def never_fits(parts: Sequence[tuple[str, Sequence[NodeFree]]], req: Request, m: int, matched: int) -> Reason:
    """Constraints: nothing matches, or even empty nodes cannot hold the request."""
    where = ",".join(name for name, _ in parts) or "any partition"
    if matched == 0:
        return reason(
            ReasonCode.CONSTRAINTS,
            "constraints",
            f"no node in {where} matches node selector/GPU model/taints",
        )
    inner = scarce(ReasonCode.CONSTRAINTS, "constraints", parts, req, m)
    return reason(
        ReasonCode.CONSTRAINTS, "constraints", inner.message.replace("largest free", "largest node has")
    )


def unavailable(parts: Sequence[str]) -> Reason:
    return reason(
        ReasonCode.NODE_UNAVAILABLE,
        "nodes",
        f"only nodes that are not ready or cordoned in {','.join(parts)} could hold it",
    )


def priority_reservation(blocker: str, start: float, nodes: Sequence[str], now: float) -> Reason:
    shown = ",".join(nodes[:4]) + ("..." if len(nodes) > 4 else "")
    return reason(
        ReasonCode.PRIORITY,
        "backfill",
        f"fits now but would delay {blocker}'s reservation at now+{max(start - now, 0):.0f}s on {shown}",
    )


def priority_strict(partition: str, blocker: str) -> Reason:
    return reason(
        ReasonCode.PRIORITY,
        "priority",
        f"strict priority: partition {partition} waits for higher-priority {blocker}",
    )


def priority_behind(partition: str, blocker: str) -> Reason:
    """Slurm's ``Priority`` for a job queued behind the first blocked job of its partition.

    job_reason_codes.shtml: "Priority: One or more higher priority jobs exist for this partition
    or advanced reservation. Other jobs in the queue have higher priority than this job." Only the
    first blocked job of a partition reads ``Resources``.
    """
    return reason(
        ReasonCode.PRIORITY,
        "priority",
        f"partition {partition}: queued behind higher-priority {blocker}, waiting for resources",
    )
