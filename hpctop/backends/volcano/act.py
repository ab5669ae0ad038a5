"""Volcano's actions on a vcjob (``Job.batch.volcano.sh``, SCHEDULERS.md §6.4).

Why bus Commands: a vcjob has no suspend field. Hold, release and requeue are the Commands vcctl
creates (AbortJob, ResumeJob, RestartJob), which Volcano's controller consumes later. So:

- a Command names the job's uid twice, in ``target`` and as the controller ``ownerReference``
  (a create cannot carry a precondition on another object; a Command left behind by a replaced
  job is garbage-collected). ``blockOwnerDeletion`` is left out: with the
  OwnerReferencesPermissionEnforcement admission plugin it would also need ``update jobs/finalizers``;
- the create only says the API server stored it, so hpctop re-reads the vcjob (bounded) until
  ``status.state.phase`` moves, and otherwise says "sent, not yet confirmed": never sent again,
  because a second Command would act twice once the controller catches up. A lost answer stays
  "outcome unknown" unless the phase already moved, never "safe to try again";
- a Command the phase does not handle is refused before sending (Volcano would ignore it);
- priority is ``spec.priorityClassName``, only while Pending; move is refused (``spec.queue`` is
  immutable: the webhook rejects it).
"""

from __future__ import annotations

from typing import Any

from hpctop.actions.engine.objects import Notes, Obj, dig
from hpctop.actions.engine.plan import ActionTable, KindPlan, Need, PlanContext, Sending
from hpctop.actions.engine.targets import Seen, Step, Target, guarded_delete, guarded_patch, pinned
from hpctop.actions.requests import ActionKind, ActionRequest
from hpctop.errors import ActionFailed
from hpctop.sources.kube.resources import VOLCANO_COMMANDS as COMMANDS_RESOURCE

VOLCANO_JOB = "Job.batch.volcano.sh"
COMMAND_GROUP, COMMAND_VERSION = COMMANDS_RESOURCE.group, COMMANDS_RESOURCE.version
#: Volcano has no suspend field: hold/release/requeue are bus Commands its controller consumes
VOLCANO_COMMANDS: dict[ActionKind, str] = {
    ActionKind.HOLD: "AbortJob",
    ActionKind.RELEASE: "ResumeJob",
    ActionKind.REQUEUE: "RestartJob",
}
#: the vcjob phases that show the controller acted on each Command
VOLCANO_MOVED: dict[str, tuple[str, ...]] = {
    "AbortJob": ("Aborting", "Aborted"),
    "ResumeJob": ("Restarting", "Pending", "Running"),
    "RestartJob": ("Restarting", "Pending"),
}
VOLCANO_FINISHED = frozenset({"Completing", "Completed", "Terminating", "Terminated", "Failed"})
VOLCANO_MOVE_REFUSAL = (
    "a Volcano job cannot move to another queue: its spec.queue is immutable (the admission webhook "
    "rejects the change); delete it and resubmit it to the new queue"
)


def phase_of(obj: Any) -> str:
    return str(dig(obj, "status", "state", "phase") or "")


def command_step(target: Target, uid: str, action: str) -> Step:
    """The bus Command vcctl would create, naming the job's uid (see the module docstring)."""
    ref = {
        "apiVersion": f"{target.group}/{target.version}",
        "kind": "Job",
        "name": target.name,
        "uid": uid,
        "controller": True,
    }
    body = {
        "apiVersion": f"{COMMAND_GROUP}/{COMMAND_VERSION}",
        "kind": "Command",
        "metadata": {
            "generateName": f"{target.name}-{action.lower()}-",
            "namespace": target.namespace,
            "ownerReferences": [ref],
        },
        "action": action,
        "target": ref,
    }
    path = f"/apis/{COMMAND_GROUP}/{COMMAND_VERSION}/namespaces/{target.namespace}/commands"
    return Step("POST", path, body, "create", COMMAND_GROUP, "commands", verify_phase=VOLCANO_MOVED[action])


class VolcanoJobPlan(KindPlan):
    kind = VOLCANO_JOB

    def offers(self, action: ActionKind) -> list[Need] | str:
        if action == ActionKind.MOVE:
            return VOLCANO_MOVE_REFUSAL
        if action in VOLCANO_COMMANDS:
            return [("create", COMMAND_GROUP, "commands", "")]
        return self.own("delete" if action == ActionKind.CANCEL else "patch")

    def static_refusal(self, request: ActionRequest) -> str | None:
        if request.kind == ActionKind.MOVE:
            return VOLCANO_MOVE_REFUSAL
        if request.kind == ActionKind.PRIORITY and not (isinstance(request.value, str) and request.value):
            return (
                "a Volcano job's priority is the name of a PriorityClass (spec.priorityClassName); "
                f"{request.value!r} is not one"
            )
        return None

    def state_refusal(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> str | None:
        """What the vcjob's phase allows: Volcano's state machine ignores a Command its current
        state does not handle, so hpctop refuses it instead of sending it."""
        action, phase = request.kind, phase_of(obj)
        if phase in VOLCANO_FINISHED:
            return f"{target} has finished (phase {phase}); there is nothing to {action.value}"
        if action == ActionKind.PRIORITY:
            if phase not in ("", "Pending"):
                return (
                    f"{target} is {phase}: a Volcano job's priority can be changed only while it is Pending "
                    "(its pods are already created with the old priority)"
                )
            return None
        if action == ActionKind.HOLD and phase in ("Aborting", "Aborted"):
            return f"{target} is already held (phase {phase})"
        if action == ActionKind.RELEASE and phase != "Aborted":
            if phase == "Aborting":
                return f"{target} is still aborting; release it once its phase is Aborted"
            return f"{target} is not held (phase {phase or '(none)'}; ResumeJob acts only on an Aborted job)"
        if action == ActionKind.REQUEUE:
            if phase in ("Aborting", "Aborted"):
                return f"{target} is held (phase {phase}); release it instead of requeueing"
            if phase == "Restarting":
                return f"{target} is already restarting"
        return None

    def steps(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> list[Step]:
        if request.kind == ActionKind.CANCEL:
            return [guarded_delete(target, pinned(obj), ctx.propagation)]
        if request.kind == ActionKind.PRIORITY:
            return [guarded_patch(target, obj, {"spec": {"priorityClassName": str(request.value)}})]
        return [command_step(target, str(dig(obj, "metadata", "uid") or ""), VOLCANO_COMMANDS[request.kind])]

    def dry_run(
        self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj, would: Any
    ) -> tuple[str, ...]:
        if request.kind not in VOLCANO_COMMANDS:
            return super().dry_run(ctx, request, target, obj, would)
        name = dig(would, "metadata", "name") or "a Command"
        command = VOLCANO_COMMANDS[request.kind]
        return (f"server dry run: Command {command} ({name}) for {target} would be created",)

    def expected(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> Notes:
        if request.kind == ActionKind.CANCEL:
            return ("its pods and PodGroup are deleted by the garbage collector",)
        if request.kind == ActionKind.PRIORITY:
            return ("its PodGroup should follow the new priority class (not verified by hpctop)",)
        action_name = VOLCANO_COMMANDS.get(request.kind, "")
        return (
            f"Volcano's controller runs {action_name} and deletes the Command; hpctop then checks that "
            f"status.state.phase moves to {' or '.join(VOLCANO_MOVED.get(action_name, ()))}",
        )

    async def verify(self, ctx: PlanContext, sending: Sending, step: Step) -> tuple[bool, str] | None:
        """After a Command: did the controller move the job's phase? (bounded wait, never resent)"""
        if not step.verify_phase:
            return None
        moved, target, seen = step.verify_phase, sending.target, sending.seen
        before = phase_of(seen.obj) or "(none)"
        try:
            now, phase = await ctx.poller.until(
                target, seen, lambda obj: phase_of(obj) if phase_of(obj) in moved else None, ctx.phase_timeout
            )
        except ActionFailed as exc:  # the job went away, or the API server, meanwhile
            return False, f"could not confirm the phase: {exc.detail}"
        if phase is None:
            still = phase_of(now or {}) or "(none)"
            return False, (
                f"status.state.phase is still {still} after {ctx.phase_timeout:g}s: Volcano's controller "
                "has not acted on the Command yet (is vc-controller-manager running?); do not send it again"
            )
        return True, f"status.state.phase: {before} → {phase}"

    def confirms(self, step: Step, seen: Seen, now: dict[str, Any]) -> str | None:
        if not step.verify_phase:
            return super().confirms(step, seen, now)
        phase = phase_of(now)
        moved = phase in step.verify_phase and phase != phase_of(seen.obj)
        return f": status.state.phase is {phase}" if moved else None

    def stays_unknown(self, step: Step, target: Target, now: dict[str, Any] | None, why: str) -> str | None:
        if not step.verify_phase:
            return None
        phase = phase_of(now or {}) or "(none)"
        return (
            f"the Command may have been stored and not yet handled (phase {phase}). "
            f"Check `kubectl get commands.bus.volcano.sh -n {target.namespace}` and the job's phase before "
            "trying again"
        )


TABLE = ActionTable("volcano", plans=(VolcanoJobPlan(),), acted=(("spec", "priorityClassName"),))

__all__ = ["TABLE", "VOLCANO_COMMANDS", "VOLCANO_JOB", "VolcanoJobPlan", "command_step"]
