"""Slurm on Kubernetes: SchedMD Slinky (slurm-bridge) and CoreWeave SUNK (SCHEDULERS.md §8.6).

Why overlays: neither has objects of its own to act on. They decide requests on other kinds:

- **Slinky**: a Slurm job's priority and partition are the ``slurmjob.slinky.slurm.net/priority``
  and ``/partition`` annotations on the top workload object (Job, JobSet, LeaderWorkerSet,
  Kubeflow job, bare pod), which slurm-bridge passes to Slurm. Slurm takes a change only while
  the job is pending and says no in the pods' events, not to the API server, so hpctop checks
  "pending" on the object first. Only a request the console marked as Slinky's (its pods'
  ``schedulerName``) is read for it, and the object must say so too.
- **SUNK**: a pod SUNK schedules is cancelled by deleting it with a uid precondition only (its
  syncer rewrites the pod's status all the time, so a resourceVersion precondition would 409 for
  no reason; no Eviction: deleting the pod is what cancels its placeholder Slurm job). Its
  queueing lives in Slurm: hold, requeue and priority are refused, "Slurm side only".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hpctop.actions.engine.objects import Notes, Obj, dig, finished
from hpctop.actions.engine.plan import (
    REORDERING,
    ActionTable,
    Overlay,
    PlanBook,
    PlanContext,
    immutable,
)
from hpctop.actions.engine.shapes import MetadataPlan
from hpctop.actions.engine.targets import Step, Target, guarded_delete
from hpctop.actions.requests import SLINKY_SCHEDULER, ActionKind, ActionRequest

SLINKY_PREFIX = "slurmjob.slinky.slurm.net/"
SLINKY_PRIORITY = SLINKY_PREFIX + "priority"
SLINKY_PARTITION = SLINKY_PREFIX + "partition"
SLINKY_NODE = "slinky.slurm.net/slurm-node"
SUNK_PREFIX = "sunk.coreweave.com/"
SLURM_ONLY = (
    "Slurm side only: this pod is scheduled by SUNK, whose placeholder Slurm job owns its queueing; "
    "hold, requeue and priority are done with scontrol/scancel in Slurm (hpctop is read-only there)"
)


def is_sunk(pod: Mapping[str, Any]) -> bool:
    """A pod CoreWeave SUNK schedules: its queueing lives in a placeholder Slurm job."""
    scheduler = str(dig(pod, "spec", "schedulerName") or "")
    annotations = dig(pod, "metadata", "annotations") or {}
    return scheduler.endswith("-slurm-scheduler") or any(str(k).startswith(SUNK_PREFIX) for k in annotations)


def is_slinky(obj: Mapping[str, Any]) -> bool:
    """Whether slurm-bridge schedules this workload: one of its annotations, or its pods name it."""
    annotations = dig(obj, "metadata", "annotations") or {}
    if any(str(k).startswith(SLINKY_PREFIX) for k in annotations):
        return True

    def names_it(node: Any) -> bool:
        if isinstance(node, dict):
            return node.get("schedulerName") == SLINKY_SCHEDULER or any(names_it(v) for v in node.values())
        if isinstance(node, list):
            return any(names_it(v) for v in node)
        return False

    return names_it(obj.get("spec"))


def started(obj: Mapping[str, Any]) -> str | None:
    """Why a Slinky workload's Slurm job is no longer pending, or None."""
    if dig(obj, "spec", "nodeName") or dig(obj, "metadata", "annotations", SLINKY_NODE):
        return "its pod is bound to a node"
    for counter in ("ready", "readyReplicas", "succeeded"):
        value = dig(obj, "status", counter)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return f"status.{counter} is {value}"
    for child in dig(obj, "status", "replicatedJobsStatus") or []:
        if isinstance(child, dict) and isinstance(child.get("ready"), int) and child["ready"] > 0:
            return "a replicated job has ready pods"
    return None


class SlinkyOverlay(MetadataPlan, Overlay):
    """Priority and partition of a job slurm-bridge schedules: annotations on its owner."""

    priority_key = SLINKY_PRIORITY
    move_key = SLINKY_PARTITION

    def claims(self, book: PlanBook, request: ActionRequest, obj: Mapping[str, Any] | None) -> bool:
        kind = request.job[1]
        groups_pods = kind in ("Pod", "LeaderWorkerSet") or book.suspend_path(kind) is not None
        return request.scheduler == SLINKY_SCHEDULER and request.kind in REORDERING and groups_pods

    def state_refusal(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> str | None:
        action, value = request.kind, request.value
        if not is_slinky(obj):
            return (
                f"{target} is not scheduled by Slinky (no {SLINKY_PREFIX}* annotation, no schedulerName "
                f"{SLINKY_SCHEDULER}): {immutable(action)}"
            )
        done = finished(obj)
        if done:
            return f"{target} has finished ({done}); there is nothing to change"
        running = started(obj)
        if running:
            return (
                f"{target} is running ({running}): Slurm changes a job's "
                f"{'priority' if action == ActionKind.PRIORITY else 'partition'} only while it is pending"
            )
        if action == ActionKind.PRIORITY:
            text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
            if not isinstance(text, str) or not text.isdigit():
                return f"a Slurm job's priority is a whole number of 0 or more; {value!r} is not one"
            return None
        if not isinstance(value, str) or not all(value.split(",")):
            return f"a Slurm partition is a name (or a comma-separated list); {value!r} is not one"
        if dig(obj, "metadata", "annotations", SLINKY_PARTITION) == value:
            return f"{target} already asks for partition {value}"
        return None

    def expected(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> Notes:
        what = "priority" if request.kind == ActionKind.PRIORITY else "partition"
        return (
            f"slurm-bridge passes the new {what} to its Slurm job, which Slurm validates and applies "
            "only while the job is pending (a refusal shows in the pods' events, not here)",
        )


class SunkOverlay(Overlay):
    """A pod SUNK schedules: cancelled by a uid-pinned delete, everything else Slurm side only."""

    def claims(self, book: PlanBook, request: ActionRequest, obj: Mapping[str, Any] | None) -> bool:
        return request.job[1] == "Pod" and obj is not None and is_sunk(obj)

    def state_refusal(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> str | None:
        return SLURM_ONLY

    def steps(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> list[Step]:
        uid = str(dig(obj, "metadata", "uid") or "")
        return [guarded_delete(target, {"uid": uid}, "Background", group="", resource="pods")]


TABLE = ActionTable(
    "slinky",
    overlays=(SlinkyOverlay(), SunkOverlay()),
    acted=(("metadata", "annotations", SLINKY_PRIORITY), ("metadata", "annotations", SLINKY_PARTITION)),
)

__all__ = [
    "SLINKY_PARTITION",
    "SLINKY_PRIORITY",
    "SLURM_ONLY",
    "TABLE",
    "SlinkyOverlay",
    "SunkOverlay",
    "is_slinky",
    "is_sunk",
]
