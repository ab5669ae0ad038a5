"""What a backend contributes to the actions: its plans, and the book that holds them all.

Why this protocol: the engine (:mod:`hpctop.actions.engine.core`) knows how to preview, send,
answer and settle any request, and nothing about Kueue or Volcano. A backend says, per owner kind
it acts on (a :class:`KindPlan`):

- which actions it offers and the RBAC each needs, or why it never offers one (:meth:`offers`,
  what ``permissions()`` greys out with);
- what is refused before any read (:meth:`static_refusal`) and after reading the object
  (:meth:`state_refusal`), with the reason shown to the user;
- the requests an action is (:meth:`steps`), built from the engine's guarded shapes;
- what its controllers do next (:meth:`expected`), which no dry run can say.

An :class:`Overlay` is a plan that claims requests on *other* backends' kinds: Slinky's priority
and partition are annotations on a Job or JobSet, a SUNK pod is cancelled differently, a Job that
Kueue manages is held through its Workload. A plan may also redirect a request to the job that
owns its object (:meth:`KindPlan.redirect`: a coscheduling PodGroup is held by its owner's
suspend). Each backend's plans and overlays come in one :class:`ActionTable`; a backend without
actions has a table that says "read-only: why". The :class:`PlanBook` is all tables together.

The shared plan shapes (kinds held by a suspend field, kinds held by scaling to zero) are in
:mod:`hpctop.actions.engine.shapes`, so no two backends write them twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from hpctop.actions.engine.objects import FieldSet, Notes, Obj, Path, contains, dig
from hpctop.actions.engine.settle import Poller
from hpctop.actions.engine.targets import Seen, Step, Target
from hpctop.actions.requests import VERBS, ActionKind, ActionRequest
from hpctop.sources.kube.registry import ALIASES
from hpctop.sources.kube.resources import BUILTIN_RESOURCES, OPTIONAL_RESOURCES, kueue_resources

#: the RBAC an action needs: (verb, API group, resource, subresource)
Need = tuple[str, str, str, str]

PRIORITY_REFUSAL = (
    "not supported on a live cluster for this kind: a pod's priority (spec.priority, resolved from "
    "its priorityClassName at admission) is immutable, and a batch Job's pod template is too; "
    "delete the job and resubmit it with the new priority class"
)
MOVE_REFUSAL = (
    "not supported on a live cluster for this kind: a batch Job, Deployment or pod has no queue to "
    "move to outside Kueue/YuniKorn/Volcano, and its pod template is immutable; delete and resubmit"
)
SUSPENDING = (ActionKind.HOLD, ActionKind.RELEASE, ActionKind.REQUEUE)


def immutable(action: ActionKind) -> str | None:
    """Why a priority or a move is refused on a kind with nothing to change them by (a pod's
    priority is immutable, and it has no queue), or None for any other action."""
    return {ActionKind.PRIORITY: PRIORITY_REFUSAL, ActionKind.MOVE: MOVE_REFUSAL}.get(action)


REORDERING = (ActionKind.PRIORITY, ActionKind.MOVE)

#: kind → (group, plural), whatever version is served: what an RBAC rule names
_WHERE: dict[str, tuple[str, str]] = {
    spec.kind: (spec.group, spec.plural)
    for spec in (*BUILTIN_RESOURCES, *(s for alts in OPTIONAL_RESOURCES for s in alts), *kueue_resources())
}
_WHERE.update({bare: _WHERE[full] for bare, full in ALIASES.items()})


def where(kind: str) -> tuple[str, str] | None:
    """The (group, plural) an RBAC rule names for ``kind``, or None for a kind hpctop does not know."""
    return _WHERE.get(kind)


class PlanContext(Protocol):
    """What a plan may ask of the engine while it builds requests."""

    @property
    def propagation(self) -> str: ...

    @property
    def evict_timeout(self) -> float: ...

    @property
    def book(self) -> PlanBook: ...

    @property
    def phase_timeout(self) -> float: ...

    @property
    def poller(self) -> Poller: ...

    def owner_target(self, namespace: str, kind: str, name: str) -> Target | None:
        """Where an owner object is served (from the registry discovery already read), or None."""
        ...

    def audit(self, **fields: Any) -> None:
        """Write an audit record (context and cluster are added)."""
        ...


@dataclass(frozen=True, slots=True)
class Redirect:
    """Act on the job that owns the object (an ownerReference to a kind with a suspend field).

    ``plan`` handles the owner's request (None: the owner kind's own plan): a Kueue Workload's
    label change is not an ordinary priority/move of its owner job, a PodGroup's hold is."""

    plan: KindPlan | None = None


class KindPlan:
    """One owner kind's actions (see the module docstring). Subclasses set ``kind`` and override
    what their kind does; the defaults are those of a kind with nothing but a guarded delete."""

    kind: str = ""
    #: a job's owner kind (listed among the kinds hpctop acts on), not a queue or a config
    job_kind: bool = True

    def own(self, verb: str, subresource: str = "") -> list[Need]:
        """The RBAC of ``verb`` on this kind's own resource."""
        group, plural = where(self.kind) or ("", self.kind.lower())
        return [(verb, group, plural, subresource)]

    def offers(self, action: ActionKind) -> list[Need] | str:
        """The RBAC ``action`` needs, or why it is never offered on this kind."""
        raise NotImplementedError

    def static_refusal(self, request: ActionRequest) -> str | None:
        """Why ``request`` is refused before anything is read, or None."""
        return None

    def redirect(self, request: ActionRequest) -> Redirect | None:
        """Whether ``request`` acts on the object's owner job instead (read first), or None."""
        return None

    def missing(self, request: ActionRequest, target: Target) -> str:
        """What a preview says when the object does not exist."""
        gone = "already gone: nothing to cancel" if request.kind == ActionKind.CANCEL else "no longer exists"
        return f"{target} {gone}"

    def state_refusal(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> str | None:
        """Why ``request`` is refused on the object as it is now (never called for a cancel), or None."""
        return None

    def steps(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> list[Step]:
        """The requests the action is, in order; the first is the one a preview dry-runs."""
        raise NotImplementedError

    def dry_run(
        self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj, would: Any
    ) -> tuple[str, ...]:
        """What the server's dry run of the first step says it would do."""
        prefix = "server dry run: "
        if request.kind == ActionKind.CANCEL:
            if self.steps(ctx, request, target, obj)[0].subresource == "eviction":
                return (f"{prefix}{target} would be evicted (PodDisruptionBudgets allow it now)",)
            if isinstance(would, dict) and dig(would, "metadata", "deletionTimestamp"):
                return (f"{prefix}{target} would be marked for deletion ({ctx.propagation} propagation)",)
            return (f"{prefix}{target} would be deleted ({ctx.propagation} propagation)",)
        if not isinstance(would, dict):
            return (f"{prefix}accepted",)
        changed = ctx.book.fields.diff(obj, would)
        return tuple(prefix + c for c in changed) or (f"{prefix}accepted, no visible change",)

    def expected(self, ctx: PlanContext, request: ActionRequest, target: Target, obj: Obj) -> Notes:
        """What controllers do after the request (not part of any dry run's answer)."""
        return ()

    def doing(self, request: ActionRequest, target: Target) -> str:
        """The action, as messages name it (``hold of Job team-a/train``)."""
        return f"{request.kind.value} of {target}"

    def forbidden_hint(self, target: Target) -> str:
        """A sentence on the RBAC this kind's action needs, for the 403 message (maybe empty)."""
        return ""

    def audit_action(self, request: ActionRequest) -> str:
        return request.kind.value

    def intent(self, request: ActionRequest, steps: Sequence[Step]) -> str:
        """What the intent record says will be sent (by default each request, as shown)."""
        return "; ".join(s.describe() for s in steps)

    def done_text(self, step: Step, answer: Any) -> str | None:
        """What one accepted request did, as the result lists it; None: the engine says it (the
        field a patch set, what a create made, a delete's propagation)."""
        return None

    def done(self, request: ActionRequest, target: Target, seen_obj: Mapping[str, Any]) -> str:
        """A successful result's message."""
        return f"{target} {VERBS[request.kind]}"

    def after(self, request: ActionRequest, target: Target, seen_obj: Mapping[str, Any]) -> tuple[str, ...]:
        """Notes a successful result ends with (what happens next), after what was done."""
        return ()

    def confirms(self, step: Step, seen: Seen, now: dict[str, Any]) -> str | None:
        """After a lost answer: how the re-read object shows ``step`` took effect (a note appended
        to "confirmed by re-reading after ...", maybe empty), or None when it does not."""
        wanted = step.wanted()
        return "" if wanted and contains(now, wanted) else None

    def stays_unknown(self, step: Step, target: Target, now: dict[str, Any] | None, why: str) -> str | None:
        """Why a step the re-read does not confirm may still have happened (the outcome stays
        unknown, never "safe to try again"), or None."""
        return None

    def fallback(self, step: Step, target: Target, obj: dict[str, Any]) -> Step | None:
        """The request to send instead of ``step`` where the cluster cannot take it (the access
        review denies it, or its subresource is not served), or None."""
        return None

    async def before(self, ctx: PlanContext, sending: Sending, step: Step, done: list[str]) -> Step:
        """Called before each step is sent: a plan that waits for its controller first waits here
        (bounded) and returns the step to send (with the resourceVersion it read)."""
        return step

    async def verify(self, ctx: PlanContext, sending: Sending, step: Step) -> tuple[bool, str] | None:
        """Called after a step is accepted: whether its controller acted (bounded), with a note;
        None when the server's answer is all there is to know."""
        return None


@dataclass(frozen=True, slots=True)
class Sending:
    """A checked action on its way: the request, the plan that decides it, what it acts on as the
    preview saw it, and who sends it (the audit's user and action name)."""

    request: ActionRequest
    plan: KindPlan
    target: Target
    seen: Seen
    user: str
    action: str

    @property
    def job(self) -> str:
        return "/".join(self.request.job)


class Overlay(KindPlan):
    """A plan for requests on another backend's kinds that this backend decides (see the module)."""

    def claims(self, book: PlanBook, request: ActionRequest, obj: Mapping[str, Any] | None) -> bool:
        """Whether this overlay decides ``request`` (``obj``: the object once read, else None)."""
        raise NotImplementedError

    def offers(self, action: ActionKind) -> list[Need] | str:  # the claimed kind's plan says
        return "decided by the kind's own plan"


@dataclass(frozen=True, slots=True)
class ActionTable:
    """What one backend contributes: its plans (per owner kind), its overlays, the fields its
    requests set (for summaries and results), and, for a backend with no actions, why."""

    backend: str
    plans: tuple[KindPlan, ...] = ()
    overlays: tuple[Overlay, ...] = ()
    acted: tuple[Path, ...] = ()
    annotations: tuple[str, ...] = ()
    read_only: str = ""

    def supports(self) -> dict[str, dict[ActionKind, str]]:
        """Per kind, each action: ``offered`` or ``not supported: why`` (the table a person reads)."""
        out: dict[str, dict[ActionKind, str]] = {}
        for plan in self.plans:
            row: dict[ActionKind, str] = {}
            for action in ActionKind:
                needs = plan.offers(action)
                row[action] = f"not supported: {needs}" if isinstance(needs, str) else "offered"
            out[plan.kind] = row
        return out


@dataclass
class PlanBook:
    """All backends' tables: which plan decides a request, and what every kind offers."""

    tables: Sequence[ActionTable]
    by_kind: dict[str, KindPlan] = field(init=False)
    overlays: tuple[Overlay, ...] = field(init=False)
    fields: FieldSet = field(init=False)

    def __post_init__(self) -> None:
        self.by_kind = {}
        for table in self.tables:
            for plan in table.plans:
                if plan.kind in self.by_kind:
                    raise ValueError(f"two backends plan {plan.kind}: {table.backend} and another")
                self.by_kind[plan.kind] = plan
        self.overlays = tuple(o for t in self.tables for o in t.overlays)
        self.fields = FieldSet(
            tuple(dict.fromkeys(p for t in self.tables for p in t.acted)),
            tuple(dict.fromkeys(a for t in self.tables for a in t.annotations)),
        )

    @property
    def job_kinds(self) -> tuple[str, ...]:
        """The owner kinds hpctop acts on (as it keys jobs: a vcjob is ``Job.batch.volcano.sh``)."""
        return tuple(kind for kind, plan in self.by_kind.items() if plan.job_kind)

    def plan_for(
        self, request: ActionRequest, obj: Mapping[str, Any] | None = None, redirected: KindPlan | None = None
    ) -> KindPlan | None:
        """The plan that decides ``request``: an overlay that claims it, the plan it was redirected
        to, else its kind's own; None for a kind no backend acts on."""
        if request.job[1] not in self.by_kind:
            return None
        for overlay in self.overlays:
            if overlay.claims(self, request, obj):
                return overlay
        return redirected or self.by_kind[request.job[1]]

    def suspend_path(self, kind: str) -> Path | None:
        """Where ``kind`` keeps its suspend flag, if it has one."""
        return getattr(self.by_kind.get(kind), "suspend_path", None)

    def needs(self, action: ActionKind, kind: str) -> list[Need] | str:
        """The RBAC an action on ``kind`` needs, or why it is never offered."""
        plan = self.by_kind.get(kind)
        if plan is None or (plan.job_kind and where(kind) is None):
            return self.unknown_kind(action, kind)
        return plan.offers(action)

    def unknown_kind(self, action: ActionKind, kind: str) -> str:
        if kind.startswith("PodGroup."):
            return (
                f"{action.value} of a {kind} is not supported: a PodGroup is the gang of a job; act on the "
                "job that owns it (a vcjob, a Job, a JobSet, ...)"
            )
        known = ", ".join(sorted(self.job_kinds))
        return (
            f"{action.value} of a {kind} is not supported on a live cluster: hpctop has no request for that "
            f"kind (it acts on: {known})"
        )


def not_served(kind: str) -> str:
    spec = where(kind)
    what = f"{spec[1]}.{spec[0]}" if spec is not None and spec[0] else kind
    return (
        f"this cluster does not serve {what}: its discovery (/apis) lists no such resource at a version "
        "hpctop understands, so nothing is sent"
    )


__all__ = [
    "MOVE_REFUSAL",
    "PRIORITY_REFUSAL",
    "REORDERING",
    "SUSPENDING",
    "ActionTable",
    "KindPlan",
    "Need",
    "Overlay",
    "PlanBook",
    "PlanContext",
    "Redirect",
    "Sending",
    "immutable",
    "not_served",
    "where",
]
