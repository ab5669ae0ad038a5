"""Kueue's actions: a Workload's hold, release, requeue and priority; its job's queue and
priority class; a ClusterQueue's or LocalQueue's stopPolicy (SCHEDULERS.md §5.6, §9.2).

Why these requests:

- **hold / release** is ``spec.active`` on the Workload: Kueue evicts a deactivated admitted
  Workload and suspends its job. A job Kueue manages (its ``kueue.x-k8s.io/queue-name`` label) is
  never held through its own suspend field, which Kueue owns: that is refused with the reason.
- **requeue** is ``active: false``, then a bounded wait (polling) for ``Evicted=True`` or no quota
  held, then ``active: true`` carrying the resourceVersion of the read that saw the eviction
  (Kueue rewrites the status while evicting, so the hold's RV is stale by then). Releasing earlier
  would only undo the hold; on a timeout hpctop stops and says the Workload is left held.
- **priority** as a number is the Workload's ``spec.priority`` (only while pending); as a
  WorkloadPriorityClass name, and **move**, are labels on the *owner job* (Kueue rebuilds the
  Workload from the job, and its webhook allows the change only while the job is suspended).
- **close / open a queue** is a merge patch of ``spec.stopPolicy`` (``Hold``, ``HoldAndDrain``,
  which also evicts what is admitted, or ``None``), through the same preview and answer rules.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from hpctop.actions.engine.objects import Notes, Obj, dig, finished, true_conditions
from hpctop.actions.engine.plan import (
    SUSPENDING,
    ActionTable,
    KindPlan,
    Need,
    Overlay,
    PlanBook,
    PlanContext,
    Redirect,
    Sending,
    immutable,
)
from hpctop.actions.engine.shapes import MetadataPlan
from hpctop.actions.engine.targets import Step, Target, guarded_patch
from hpctop.actions.requests import QUEUE_KINDS, STOP_POLICIES, ActionKind, ActionRequest
from hpctop.errors import ActionFailed

KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"


def evicted(obj: Mapping[str, Any]) -> str | None:
    """Why a Workload counts as evicted for a requeue (``Evicted=True``, or holding no quota), or None."""
    conditions = {
        str(c.get("type")): c for c in dig(obj, "status", "conditions") or [] if isinstance(c, dict)
    }
    condition = conditions.get("Evicted")
    if condition is not None and condition.get("status") == "True":
        return f"Evicted=True ({condition.get('reason') or 'no reason given'})"
    if not any(conditions.get(t, {}).get("status") == "True" for t in ("QuotaReserved", "Admitted")):
        return "not admitted (holds no quota)"
    return None


def admitted(obj: Mapping[str, Any]) -> str | None:
    """Why a Workload is no longer pending (QuotaReserved, Admitted or Finished is True), or None."""
    found = next((t for t in true_conditions(obj) if t in ("QuotaReserved", "Admitted", "Finished")), None)
    return f"{found}=True" if found else None


class OwnerLabelsPlan(MetadataPlan):
    """A Kueue job's priority class and queue: labels on the owner job a Workload was redirected to."""

    section = "labels"
    priority_key = KUEUE_PRIORITY_LABEL
    move_key = KUEUE_QUEUE_LABEL

    def offers(self, action: ActionKind) -> list[Need] | str:
        return "decided by the Workload's plan"

    def state_refusal(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> str | None:
        action, value = request.kind, request.value
        what = "priority" if action == ActionKind.PRIORITY else "queue"
        done = finished(obj)
        if done:
            return f"{target} has finished ({done}); there is nothing to re-{what}"
        labels = dig(obj, "metadata", "labels") or {}
        if KUEUE_QUEUE_LABEL not in labels:
            return immutable(action)
        if not isinstance(value, str) or not value:
            noun = "WorkloadPriorityClass" if action == ActionKind.PRIORITY else "LocalQueue"
            return f"a Kueue job's {what} is the name of a {noun}; {value!r} is not one" + (
                " (a number goes on the Workload's spec.priority)" if action == ActionKind.PRIORITY else ""
            )
        suspend_path = ctx.book.suspend_path(target.kind)
        if suspend_path is None or not dig(obj, *suspend_path):
            return (
                f"{target} is admitted by Kueue (not suspended): Kueue's webhook allows changing its "
                f"{'priority class' if action == ActionKind.PRIORITY else 'queue'} only while the job is "
                "suspended (pending); hold its Workload first"
            )
        if action == ActionKind.MOVE and labels.get(KUEUE_QUEUE_LABEL) == value:
            return f"{target} is already in LocalQueue {value}"
        return None

    def expected(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> Notes:
        if request.kind == ActionKind.MOVE:
            return ("Kueue recreates the Workload in the new LocalQueue",)
        return ("Kueue propagates the class to the Workload (version-dependent, §5.6)",)


OWNER_LABELS = OwnerLabelsPlan()


class WorkloadPlan(KindPlan):
    kind = "Workload"

    def offers(self, action: ActionKind) -> list[Need] | str:
        if action == ActionKind.MOVE:
            return "move a Kueue job by its owner job's queue-name label"
        if action == ActionKind.CANCEL:
            return "not for a Kueue Workload: act on its owner job"
        return self.own("patch")

    def static_refusal(self, request: ActionRequest) -> str | None:
        if request.kind == ActionKind.MOVE:
            return (
                f"{request.job[2]} has no owner job: a Kueue job moves by its owner's {KUEUE_QUEUE_LABEL} "
                "label (Kueue rebuilds the Workload from the job)"
            )
        if request.kind == ActionKind.CANCEL:
            return "cancel a Kueue Workload by deleting its owner job; the Workload is garbage-collected"
        return None

    def redirect(self, request: ActionRequest) -> Redirect | None:
        """A move, and a priority given as a WorkloadPriorityClass name, are the owner job's labels."""
        by_name = request.kind == ActionKind.PRIORITY and isinstance(request.value, str)
        return Redirect(OWNER_LABELS) if request.kind == ActionKind.MOVE or by_name else None

    def state_refusal(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> str | None:
        action, value = request.kind, request.value
        if action == ActionKind.MOVE:
            return "move a Kueue job by its owner job's queue-name label"
        if action == ActionKind.PRIORITY:
            if not isinstance(value, int) or isinstance(value, bool):
                return (
                    f"a Workload's spec.priority is a number; {value!r} is not, and a WorkloadPriorityClass "
                    f"name needs an owner job to carry the {KUEUE_PRIORITY_LABEL} label (this one has none)"
                )
            why = admitted(obj)
            if why:
                return (
                    f"{target} is no longer pending ({why}): Kueue changes a Workload's priority only while "
                    "it waits (a running one keeps its admission; kueue#7138)"
                )
            return None
        active = dig(obj, "spec", "active")
        active = True if active is None else bool(active)
        if action == ActionKind.HOLD and not active:
            return f"{target} is already held (spec.active is false)"
        if action == ActionKind.RELEASE and active:
            return f"{target} is not held (spec.active is true)"
        if action == ActionKind.REQUEUE and not active:
            return f"{target} is held (spec.active is false); release it instead of requeueing"
        return None

    def steps(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> list[Step]:
        if request.kind == ActionKind.PRIORITY:
            return [guarded_patch(target, obj, {"spec": {"priority": request.value}})]
        if request.kind == ActionKind.REQUEUE:
            return [
                guarded_patch(target, obj, {"spec": {"active": False}}),
                guarded_patch(target, obj, {"spec": {"active": True}}, wait=True),
            ]
        return [guarded_patch(target, obj, {"spec": {"active": request.kind == ActionKind.RELEASE}})]

    def expected(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> Notes:
        evicts = "Kueue evicts it if admitted (Deactivated) and suspends its job"
        if request.kind == ActionKind.PRIORITY:
            return ("Kueue re-sorts its queue by the new priority (pod priority is unchanged)",)
        if request.kind == ActionKind.HOLD:
            return (evicts,)
        if request.kind == ActionKind.REQUEUE:
            return (
                evicts,
                f"hpctop waits up to {ctx.evict_timeout:g}s for Evicted=True, then sets spec.active back "
                "to true: Kueue requeues it (Requeued, Reactivated)",
            )
        return ()

    async def before(self, ctx: PlanContext, sending: Sending, step: Step, done: list[str]) -> Step:
        """Requeue's middle step: wait (bounded) until the deactivated Workload is evicted."""
        if not step.wait_evicted:
            return step
        target, seen = sending.target, sending.seen
        started = asyncio.get_running_loop().time()
        try:
            now, reason = await ctx.poller.until(target, seen, evicted, ctx.evict_timeout)
        except ActionFailed as exc:
            raise ActionFailed(f"{exc.detail} ({'; '.join(done)} before this)") from None
        if reason is None or now is None:
            message = (
                f"{target} was deactivated (spec.active=false) but Kueue did not evict it within "
                f"{ctx.evict_timeout:g}s; it is left held. Release it to let it run again, or requeue "
                "once Kueue has evicted it"
            )
            ctx.audit(
                phase="outcome", user=sending.user, action=sending.action, job=sending.job,
                uid=seen.uid, ok=False, message=message,
            )  # fmt: skip
            raise ActionFailed(message)
        done.append(f"{reason} after {asyncio.get_running_loop().time() - started:.0f}s")
        return step.with_rv(str(dig(now, "metadata", "resourceVersion") or ""))


class KueueManagedOverlay(Overlay):
    """A job Kueue manages is held and released through its Workload: Kueue owns its suspend field."""

    def claims(self, book: PlanBook, request: ActionRequest, obj: Mapping[str, Any] | None) -> bool:
        return (
            obj is not None
            and request.kind in SUSPENDING
            and book.suspend_path(request.job[1]) is not None
            and KUEUE_QUEUE_LABEL in (dig(obj, "metadata", "labels") or {})
        )

    def state_refusal(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> str | None:
        field_ = ".".join(ctx.book.suspend_path(target.kind) or ())
        return (
            f"{target} is managed by Kueue, which owns {field_}: hold or release its Workload instead "
            "(spec.active)"
        )


def queue_kind_refusal(kind: str) -> str | None:
    if kind not in QUEUE_KINDS:
        return f"{kind!r} is not a Kueue queue kind: stopPolicy is set on a ClusterQueue or a LocalQueue"
    return None


class QueuePlan(KindPlan):
    """Close (``Hold``, ``HoldAndDrain``) or open (``None``) a ClusterQueue or LocalQueue; the
    request is :func:`~hpctop.actions.requests.queue_request`'s (its ``value`` is the policy)."""

    job_kind = False

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def offers(self, action: ActionKind) -> list[Need] | str:
        if action in (ActionKind.HOLD, ActionKind.RELEASE):  # close / open: spec.stopPolicy
            return self.own("patch")
        return (
            f"a Kueue {self.kind} is closed (hold) or opened (release) through its spec.stopPolicy; "
            "nothing else"
        )

    def static_refusal(self, request: ActionRequest) -> str | None:
        namespace, kind, name = request.job
        policy = request.value
        if policy not in STOP_POLICIES:
            return (
                f"{policy!r} is not a Kueue stopPolicy: use Hold (admit nothing new), HoldAndDrain (also "
                "evict what is admitted) or None (open the queue)"
            )
        if not name:
            return f"a {kind} needs a name"
        if kind == "LocalQueue" and not namespace:
            return "a LocalQueue is namespaced: name its namespace"
        return None

    def missing(self, request: ActionRequest, target: Target) -> str:
        return f"{target} does not exist (read at {target.version})"

    def state_refusal(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> str | None:
        policy = str(request.value)
        if str(dig(obj, "spec", "stopPolicy") or "None") == policy:
            state = "open" if policy == "None" else "closed"
            return f"{target} already has spec.stopPolicy {policy} ({state}); nothing to change"
        if dig(obj, "metadata", "deletionTimestamp"):
            return f"{target} is being deleted"
        return None

    def steps(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> list[Step]:
        # metadata first, as the request is shown: {"metadata":{"resourceVersion":RV},"spec":{...}}
        return [guarded_patch(target, obj, {"metadata": {}, "spec": {"stopPolicy": str(request.value)}})]

    def expected(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> Notes:
        return self.after(request, target, obj)

    def after(self, request: ActionRequest, target: Target, seen_obj: Mapping[str, Any]) -> tuple[str, ...]:
        """What Kueue does once the queue's stopPolicy changes (not part of the dry run's answer)."""
        policy = str(request.value)
        count = dig(seen_obj, "status", "admittedWorkloads")
        count = f"{count} " if isinstance(count, int) and not isinstance(count, bool) else ""
        scope = (
            "workloads of every LocalQueue that points at it"
            if target.kind == "ClusterQueue"
            else "workloads submitted through this LocalQueue"
        )
        if policy == "HoldAndDrain":
            return (
                f"HoldAndDrain EVICTS the {count}admitted workload(s) of {target}: Kueue deletes their pods "
                "(running work is lost unless it checkpoints) and they go back to pending",
                f"Kueue admits no new {scope} until the queue is opened again (stopPolicy None)",
            )
        if policy == "Hold":
            return (f"Kueue admits no new {scope}; the {count}admitted workload(s) keep running",)
        return (f"Kueue admits {scope} again (was {dig(seen_obj, 'spec', 'stopPolicy') or 'None'})",)

    def doing(self, request: ActionRequest, target: Target) -> str:
        return f"stopPolicy {request.value} on {target}"

    def audit_action(self, request: ActionRequest) -> str:
        return f"stop-policy:{request.value}"

    def done(self, request: ActionRequest, target: Target, seen_obj: Mapping[str, Any]) -> str:
        return f"{target}: stopPolicy {dig(seen_obj, 'spec', 'stopPolicy') or 'None'} → {request.value}"

    def forbidden_hint(self, target: Target) -> str:
        return f"Closing or opening a queue needs RBAC patch on {target.resource}; "


TABLE = ActionTable(
    "kueue",
    plans=(WorkloadPlan(), *(QueuePlan(kind) for kind in QUEUE_KINDS)),
    overlays=(KueueManagedOverlay(),),
    acted=(
        ("spec", "active"),
        ("spec", "priority"),
        ("spec", "stopPolicy"),
        ("metadata", "labels", KUEUE_QUEUE_LABEL),
        ("metadata", "labels", KUEUE_PRIORITY_LABEL),
    ),
)

__all__ = [
    "KUEUE_PRIORITY_LABEL",
    "KUEUE_QUEUE_LABEL",
    "OWNER_LABELS",
    "TABLE",
    "KueueManagedOverlay",
    "QueuePlan",
    "WorkloadPlan",
    "queue_kind_refusal",
]
