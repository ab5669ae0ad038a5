"""scheduler-plugins coscheduling's actions on a gang (``PodGroup.scheduling.x-k8s.io``, SCHEDULERS.md §7.1).

Why: a PodGroup is not a job. Hold, release and requeue act on the job that owns it (its suspend
field: the engine redirects the request to the first ownerReference with one), and a cancel
deletes that owner *and* the PodGroup: deleting only the PodGroup would leave the pods Pending
forever at Permit, and deleting only the owner leaves a PodGroup that a resubmitted job of the
same name would join. A PodGroup has no priority or queue of its own.
"""

from __future__ import annotations

from hpctop.actions.engine.objects import Notes, Obj
from hpctop.actions.engine.plan import (
    REORDERING,
    SUSPENDING,
    ActionTable,
    KindPlan,
    Need,
    PlanContext,
    Redirect,
    immutable,
)
from hpctop.actions.engine.targets import Step, Target, guarded_delete, owner_refs, pinned
from hpctop.actions.requests import ActionKind, ActionRequest

COSCHED_PODGROUP = "PodGroup.scheduling.x-k8s.io"


class PodGroupPlan(KindPlan):
    kind = COSCHED_PODGROUP

    def offers(self, action: ActionKind) -> list[Need] | str:
        refused = immutable(action)
        if refused is not None:
            return refused
        if action == ActionKind.CANCEL:
            return self.own("delete")
        return "hold/release/requeue act on the PodGroup's owner job (its suspend field)"

    def static_refusal(self, request: ActionRequest) -> str | None:
        if request.kind in REORDERING:
            return (
                f"{request.kind.value} of a coscheduling PodGroup is not supported: it has no priority or "
                "queue of its own; act on the job that owns its pods"
            )
        return None

    def redirect(self, request: ActionRequest) -> Redirect | None:
        return Redirect() if request.kind in SUSPENDING else None

    def state_refusal(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> str | None:
        return (
            f"{target} has no owner job with a suspend field (Job, JobSet, Kubeflow): a coscheduling "
            f"PodGroup itself cannot be {request.kind.value}d; act on the workload that creates its pods"
        )

    def steps(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> list[Step]:
        """Delete the owner (which deletes the pods), then the PodGroup. The owner's delete carries
        the uid from the ownerReference (its resourceVersion is unknown without another read, and
        the uid is what pins the object the user saw)."""
        steps: list[Step] = []
        for ref in owner_refs(obj):
            owner = ctx.owner_target(target.namespace, str(ref.get("kind") or ""), str(ref.get("name") or ""))
            if owner is None or owner.kind in ("Pod", COSCHED_PODGROUP):
                continue
            steps.append(guarded_delete(owner, {"uid": str(ref.get("uid") or "")}, ctx.propagation))
            break
        steps.append(guarded_delete(target, pinned(obj), ctx.propagation))
        return steps

    def expected(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> Notes:
        if not owner_refs(obj):
            return (
                "the PodGroup has no owner: its pods (label scheduling.x-k8s.io/pod-group) are not deleted",
            )
        return ("its owner is deleted first (its pods go with it), then the PodGroup",)


TABLE = ActionTable("coscheduling", plans=(PodGroupPlan(),))

__all__ = ["COSCHED_PODGROUP", "TABLE", "PodGroupPlan"]
