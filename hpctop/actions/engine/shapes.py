"""The plan shapes several backends share, written once.

Why: a batch Job, a JobSet and every Kubeflow job are held the same way (a suspend field: the
controller deletes the running pods, and recreates them on release; SCHEDULERS.md §2.3), and a
Deployment and a LeaderWorkerSet are both held by scaling to zero with the old count saved in
the ``hpctop.io/held-replicas`` annotation, in *one* RV-guarded patch (no window where one is done
and not the other). A backend's plan is one of these shapes with its own kind, field and words
for what its controller does next.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from hpctop.actions.engine.objects import Notes, Obj, Path, dig, finished, nest
from hpctop.actions.engine.plan import (
    PRIORITY_REFUSAL,
    KindPlan,
    Need,
    PlanContext,
    immutable,
)
from hpctop.actions.engine.targets import Step, Target, guarded_delete, guarded_patch, pinned
from hpctop.actions.requests import ActionKind, ActionRequest

HELD_ANNOTATION = "hpctop.io/held-replicas"
REQUEUE_AGAIN = "then spec.suspend is set back to false: same name and uid, pods recreated"


class DeletablePlan(KindPlan):
    """A kind whose cancel is a guarded DELETE (uid and resourceVersion, the engine's propagation),
    and whose priority and move are refused before any read (immutable pod priority, no queue)."""

    #: refused before any read, per action (besides priority and move)
    refused: ClassVar[Mapping[ActionKind, str]] = {}

    def static_refusal(self, request: ActionRequest) -> str | None:
        return immutable(request.kind) or self.refused.get(request.kind)

    def state_refusal(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> str | None:
        if request.kind in (ActionKind.PRIORITY, ActionKind.MOVE):
            return self.static_refusal(request)
        return self.held_refusal(request.kind, target, obj)

    def held_refusal(self, kind: ActionKind, target: Target, obj: Obj) -> str | None:
        """Why a hold, release or requeue is refused on the object as it is now, or None."""
        raise NotImplementedError

    def cancel(self, ctx: PlanContext, target: Target, obj: Obj) -> list[Step]:
        return [guarded_delete(target, pinned(obj), ctx.propagation)]


class SuspendPlan(DeletablePlan):
    """A kind held and released through a boolean suspend field (``suspend_path``)."""

    suspend_path: Path = ("spec", "suspend")
    #: what the controller does after a cancel, a hold (and a requeue's hold), a release;
    #: ``{active}`` is the object's ``status.active``
    on_cancel = ""
    on_hold = ""
    on_release = ""
    #: a requeue also says the release recreates the pods under the same name and uid
    requeue_again = True

    def offers(self, action: ActionKind) -> list[Need] | str:
        if action == ActionKind.PRIORITY:
            return PRIORITY_REFUSAL
        return self.own("delete" if action == ActionKind.CANCEL else "patch")

    def held_refusal(self, kind: ActionKind, target: Target, obj: Obj) -> str | None:
        field_ = ".".join(self.suspend_path)
        done = finished(obj)
        if done:
            return f"{target} has finished ({done}); there is nothing to {kind.value}"
        suspended = bool(dig(obj, *self.suspend_path))
        if kind == ActionKind.HOLD and suspended:
            return f"{target} is already held ({field_} is true)"
        if kind == ActionKind.RELEASE and not suspended:
            return f"{target} is not held ({field_} is false)"
        if kind == ActionKind.REQUEUE and suspended:
            return f"{target} is held; release it instead of requeueing"
        return None

    def steps(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> list[Step]:
        if request.kind == ActionKind.CANCEL:
            return self.cancel(ctx, target, obj)
        hold = guarded_patch(target, obj, nest(self.suspend_path, True))
        release = guarded_patch(
            target, obj, nest(self.suspend_path, False), chain=request.kind == ActionKind.REQUEUE
        )
        return {
            ActionKind.HOLD: [hold],
            ActionKind.RELEASE: [release],
            ActionKind.REQUEUE: [hold, release],
        }[request.kind]

    def expected(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> Notes:
        kind = request.kind
        text = {
            ActionKind.CANCEL: self.on_cancel,
            ActionKind.HOLD: self.on_hold,
            ActionKind.REQUEUE: self.on_hold,
            ActionKind.RELEASE: self.on_release,
        }.get(kind)
        if not text:
            return ()
        notes = [text.format(active=dig(obj, "status", "active") or 0)]
        if kind == ActionKind.REQUEUE and self.requeue_again:
            notes.append(REQUEUE_AGAIN)
        return tuple(notes)


class MetadataPlan(KindPlan):
    """A priority and a move that are one label or annotation on the object, in one RV-guarded
    merge patch (Kueue's priority class and queue on its job, Slinky's priority and partition)."""

    #: ``labels`` or ``annotations``
    section = "annotations"
    priority_key = ""
    move_key = ""

    def steps(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> list[Step]:
        key = self.priority_key if request.kind == ActionKind.PRIORITY else self.move_key
        return [guarded_patch(target, obj, {"metadata": {self.section: {key: str(request.value)}}})]


class ScaledPlan(DeletablePlan):
    """A service held by scaling it to zero, its old count saved in :data:`HELD_ANNOTATION`."""

    #: what a cancel deletes with it (``ReplicaSets``, ``StatefulSets``)
    children = ""

    def offers(self, action: ActionKind) -> list[Need] | str:
        refused = immutable(action)
        if refused is not None:
            return refused
        if action == ActionKind.REQUEUE:
            return f"requeue of a {self.kind} is not supported: hold, then release"
        return self.own("delete" if action == ActionKind.CANCEL else "patch")

    def held_refusal(self, kind: ActionKind, target: Target, obj: Obj) -> str | None:
        held = dig(obj, "metadata", "annotations", HELD_ANNOTATION)
        if kind == ActionKind.HOLD and dig(obj, "spec", "replicas") == 0:
            return f"{target} is already scaled to 0"
        if kind == ActionKind.RELEASE and held is None:
            return f"{target} was not held by hpctop (no {HELD_ANNOTATION} annotation): scale it yourself"
        if kind == ActionKind.REQUEUE:
            return f"requeue of a {target.kind} is not supported: hold, then release"
        return None

    def steps(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> list[Step]:
        if request.kind == ActionKind.CANCEL:
            return self.cancel(ctx, target, obj)
        if request.kind == ActionKind.HOLD:
            replicas = dig(obj, "spec", "replicas")
            saved = str(1 if replicas is None else replicas)
            body = {"metadata": {"annotations": {HELD_ANNOTATION: saved}}, "spec": {"replicas": 0}}
            return [guarded_patch(target, obj, body)]
        held = dig(obj, "metadata", "annotations", HELD_ANNOTATION)
        try:
            restore = max(0, int(str(held)))
        except ValueError:
            restore = 1
        body = {"metadata": {"annotations": {HELD_ANNOTATION: None}}, "spec": {"replicas": restore}}
        return [guarded_patch(target, obj, body)]

    def expected(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> Notes:
        if request.kind == ActionKind.CANCEL:
            return (f"this is a service ({self.kind}): its {self.children} and pods are deleted too",)
        if request.kind == ActionKind.HOLD:
            return (f"the old replica count is kept in the {HELD_ANNOTATION} annotation",)
        return ()


__all__ = ["HELD_ANNOTATION", "REQUEUE_AGAIN", "DeletablePlan", "MetadataPlan", "ScaledPlan", "SuspendPlan"]
