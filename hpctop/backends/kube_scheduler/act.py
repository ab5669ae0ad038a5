"""The kube-scheduler backend's actions: plain batch Jobs, Deployments and bare Pods.

Why these requests (SCHEDULERS.md §2.3, §9.2): a batch Job is held through ``spec.suspend`` (the
job controller deletes its running pods and recreates them on release), and requeued as a hold
then a release carrying the resourceVersion the hold returned, so it keeps its name and uid. A
Deployment is a service: held by scaling to zero with the old count saved (the engine's
:class:`~hpctop.actions.engine.shapes.ScaledPlan`). A bare pod has no suspend: it can only be
cancelled, by an Eviction, which honours PodDisruptionBudgets (their 429 is final, never
bypassed); it is deleted only where the cluster serves no Eviction for it or the access review
denies the eviction and allows the delete.
"""

from __future__ import annotations

from typing import Any

from hpctop.actions.engine.objects import Obj
from hpctop.actions.engine.plan import (
    MOVE_REFUSAL,
    ActionTable,
    KindPlan,
    Need,
    PlanContext,
    immutable,
)
from hpctop.actions.engine.shapes import HELD_ANNOTATION, ScaledPlan, SuspendPlan
from hpctop.actions.engine.targets import Step, Target, guarded_delete, pinned
from hpctop.actions.requests import ActionKind, ActionRequest


class JobPlan(SuspendPlan):
    kind = "Job"
    on_cancel = "its pods are deleted by the garbage collector ({active} active)"
    on_hold = "the job controller deletes its {active} active pod(s) and resets startTime"
    on_release = "the job controller creates its pods again"


class DeploymentPlan(ScaledPlan):
    kind = "Deployment"
    children = "ReplicaSets"


class PodPlan(KindPlan):
    kind = "Pod"

    def offers(self, action: ActionKind) -> list[Need] | str:
        if action == ActionKind.CANCEL:
            return self.own("create", "eviction")
        if action == ActionKind.MOVE:
            return MOVE_REFUSAL
        return "a bare pod cannot be held, re-prioritized or moved (a SUNK pod: Slurm side only)"

    def state_refusal(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> str | None:
        refused = immutable(request.kind)
        if refused is not None:
            return refused
        return (
            f"a bare pod cannot be {request.kind.value}d: Kubernetes has no suspend for pods "
            "(cancel it, or run it under a Job)"
        )

    def steps(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> list[Step]:
        eviction = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": target.name, "namespace": target.namespace},
            "deleteOptions": {"preconditions": pinned(obj)},
        }
        return [
            Step(
                "POST", target.path + "/eviction", eviction, "create", target.group, target.plural, "eviction"
            )
        ]

    def fallback(self, step: Step, target: Target, obj: dict[str, Any]) -> Step | None:
        """A plain delete, only in place of an Eviction (never after a PDB's 429)."""
        if step.subresource != "eviction":
            return None
        return guarded_delete(target, pinned(obj), "Background", group="", resource="pods")


TABLE = ActionTable(
    "kube-scheduler",
    plans=(JobPlan(), DeploymentPlan(), PodPlan()),
    acted=(("spec", "suspend"), ("spec", "replicas")),
    annotations=(HELD_ANNOTATION,),
)

__all__ = ["TABLE", "DeploymentPlan", "JobPlan", "PodPlan"]
