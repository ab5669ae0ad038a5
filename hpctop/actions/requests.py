"""Action requests and the actuator interface.

A key press makes an :class:`ActionRequest`; an :class:`Actuator` previews it (what will change)
and executes it. The simulator and a live cluster implement the same interface. Read-only mode is
a property of the actuator (:class:`ReadOnlyActuator` wraps any other and refuses everything),
so no screen or key can slip past it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, runtime_checkable

from hpctop.errors import ActionFailed, ActionRefused, HpctopError
from hpctop.model.objects import JobKey


class ActionKind(StrEnum):
    CANCEL = "cancel"
    REQUEUE = "requeue"
    HOLD = "hold"
    RELEASE = "release"
    PRIORITY = "priority"
    MOVE = "move"


#: what a result says was done, per action
VERBS: Mapping[ActionKind, str] = {
    ActionKind.CANCEL: "cancelled",
    ActionKind.HOLD: "held",
    ActionKind.RELEASE: "released",
    ActionKind.REQUEUE: "requeued",
    ActionKind.PRIORITY: "priority changed",
    ActionKind.MOVE: "moved",
}


@dataclass(frozen=True, slots=True)
class ActionRequest:
    kind: ActionKind
    job: JobKey
    #: the uid the user saw; an actuator refuses when the job now has another uid
    job_uid: str = ""
    #: the new priority value (PRIORITY) or queue path (MOVE; a Slurm partition for a Slinky job)
    value: str | int | None = None
    #: the ``schedulerName`` of the job's pods as the console saw it: a Slinky job's priority and
    #: partition are annotations its owner carries, which only a Slinky job may change
    scheduler: str = ""


class Outcome(StrEnum):
    """What became of an action's target, as the console's summary counts it (issue 12)."""

    #: the server did it (or re-reading after a lost answer showed it done)
    DONE = "done"
    #: a cancel found the object deleted already (404): nothing to do, not a failure
    GONE = "gone"
    #: the object changed since the preview (409 on a precondition): nothing was done (M2)
    CONFLICT = "conflict"
    #: refused: by hpctop before sending, by RBAC (403), by validation or admission (422, a webhook)
    REFUSED = "refused"
    #: the answer was lost and re-reading could not tell whether it happened (M5)
    UNKNOWN = "unknown"
    #: anything else that did not happen (throttled, re-read shows it did not take effect, ...)
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class ActionResult:
    request: ActionRequest
    ok: bool
    message: str
    changes: tuple[str, ...] = ()
    at: float = 0.0
    #: what became of the target (an :class:`Outcome`): "done", "gone" (a cancel found it deleted
    #: already: 404), or, for a result made from an error, "conflict", "refused", "unknown", "failed"
    outcome: str = Outcome.DONE


@dataclass(frozen=True, slots=True)
class Preview:
    request: ActionRequest
    allowed: bool
    changes: tuple[str, ...]
    refusal: str = ""
    requests: tuple[str, ...] = field(default_factory=tuple)  # what would be sent, for live clusters


#: SchedMD Slinky's slurm-bridge (SCHEDULERS.md §8.6): pods it schedules name it
SLINKY_SCHEDULER = "slurm-bridge-scheduler"

#: the job-key kind a YuniKorn queue's priority/quota change is reported under
YUNIKORN_QUEUE = "YuniKornQueue"

#: Kueue's queue kinds, and the ``spec.stopPolicy`` values that close (Hold, HoldAndDrain) or open
#: (None) one (SCHEDULERS.md §9.2)
QUEUE_KINDS = ("ClusterQueue", "LocalQueue")
STOP_POLICIES = ("None", "Hold", "HoldAndDrain")


def queue_request(kind: str, name: str, namespace: str, policy: str) -> ActionRequest:
    """The request a queue's stopPolicy change is keyed, previewed and reported under: closing
    (Hold, HoldAndDrain) is a hold, opening (None) a release; the job key is
    ``(namespace, kind, name)`` (namespace empty for a ClusterQueue) and ``value`` the policy."""
    action = ActionKind.RELEASE if policy == "None" else ActionKind.HOLD
    return ActionRequest(action, (namespace if kind != "ClusterQueue" else "", kind, name), value=policy)


def is_queue_request(request: ActionRequest) -> bool:
    """Whether ``request`` stands for a queue's stopPolicy change (no job owner kind is a queue kind)."""
    return request.job[1] in QUEUE_KINDS and request.value in STOP_POLICIES


@dataclass(frozen=True, slots=True)
class Permission:
    """Whether an action is offered: True, False ("probably denied": the review is a hint; or
    refused by the server itself), or None (unknown: the server said its answer is incomplete)."""

    allowed: bool | None
    reason: str


class ServerRejected(ActionFailed):
    """The API server rejected the request itself: validation (422) or an admission webhook or
    policy (its denial). Nothing was changed; never retried (M6)."""

    outcome = Outcome.REFUSED


class OutcomeUnknown(ActionFailed):
    """The answer was lost (no answer, a 5xx) and re-reading could not tell whether the action
    happened: check the cluster before trying again (M5)."""

    outcome = Outcome.UNKNOWN


class ActionForbidden(ActionFailed):
    """The API server answered 403 to the request itself (RBAC or an admission policy), even though
    the reviews may have said yes; never retried. ``namespace`` and ``kind`` (the owner kind, or
    ``ClusterQueue``/``LocalQueue``; namespace empty for a ClusterQueue) say which cached
    permissions are now wrong, so a console asks its rules review again and greys the action out."""

    outcome = Outcome.REFUSED

    def __init__(self, detail: str, *, namespace: str, kind: str, action: ActionKind) -> None:
        super().__init__(detail)
        self.namespace = namespace
        self.kind = kind
        self.action = action


@dataclass(frozen=True, slots=True)
class QueueChange:
    """What to change on one YuniKorn queue (dotted path under ``root``); None/empty: leave as is."""

    queue: str
    priority_offset: int | None = None
    guaranteed: Mapping[str, str] = field(default_factory=dict)
    maximum: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, queue: str, text: str) -> QueueChange:
        """``priority.offset=10 guaranteed.nvidia.com/gpu=8 max.cpu=64`` (space- or comma-separated),
        as typed in the console; raises ValueError with what is wrong."""
        offset: int | None = None
        guaranteed: dict[str, str] = {}
        maximum: dict[str, str] = {}
        for item in text.replace(",", " ").split():
            name, sep, value = item.partition("=")
            if not sep or not value:
                raise ValueError(f"{item!r} is not name=value")
            if name in ("priority.offset", "priority", "offset"):
                offset = int(value)
            elif name.startswith("guaranteed.") and len(name) > len("guaranteed."):
                guaranteed[name.removeprefix("guaranteed.")] = value
            elif name.startswith("max.") and len(name) > len("max."):
                maximum[name.removeprefix("max.")] = value
            else:
                raise ValueError(f"{name!r}: use priority.offset, guaranteed.<resource> or max.<resource>")
        return cls(queue, offset, guaranteed, maximum)

    def describe(self) -> str:
        parts = []
        if self.priority_offset is not None:
            parts.append(f"priority.offset={self.priority_offset}")
        parts += [f"guaranteed.{k}={v}" for k, v in self.guaranteed.items()]
        parts += [f"max.{k}={v}" for k, v in self.maximum.items()]
        return ", ".join(parts)


class Actuator(Protocol):
    """Carries out actions on a cluster."""

    @property
    def read_only(self) -> bool: ...

    def preview(self, request: ActionRequest) -> Preview: ...

    def execute(self, request: ActionRequest) -> ActionResult: ...


@runtime_checkable
class QueueActuator(Protocol):
    """An actuator that can also close and open Kueue queues (a live cluster's)."""

    @property
    def read_only(self) -> bool: ...

    def preview_queue_stop_policy(self, kind: str, name: str, namespace: str, policy: str) -> Preview: ...

    def set_queue_stop_policy(self, kind: str, name: str, namespace: str, policy: str) -> ActionResult: ...


@runtime_checkable
class YuniKornActuator(Protocol):
    """An actuator that can also change a YuniKorn queue's priority offset and quota (its ConfigMap)."""

    @property
    def read_only(self) -> bool: ...

    def preview_yunikorn_queue(self, change: QueueChange) -> Preview: ...

    def set_yunikorn_queue(self, change: QueueChange) -> ActionResult: ...


def yunikorn_request(change: QueueChange) -> ActionRequest:
    """The request a YuniKorn queue change is previewed and reported under (``value``: the change)."""
    return ActionRequest(ActionKind.PRIORITY, ("", YUNIKORN_QUEUE, change.queue), value=change.describe())


def is_yunikorn_request(request: ActionRequest) -> bool:
    return request.job[1] == YUNIKORN_QUEUE and isinstance(request.value, str)


class ReadOnlyActuator:
    """Wraps an actuator and refuses every action: previews say why, execute raises."""

    def __init__(self, inner: Actuator) -> None:
        self._inner = inner
        self.refused: list[ActionRequest] = []

    @property
    def read_only(self) -> bool:
        return True

    def preview(self, request: ActionRequest) -> Preview:
        return Preview(request, False, (), refusal="read-only mode: no action is sent to the cluster")

    def execute(self, request: ActionRequest) -> ActionResult:
        self.refused.append(request)
        raise ActionRefused("read-only mode: no action is sent to the cluster")

    def preview_queue_stop_policy(self, kind: str, name: str, namespace: str, policy: str) -> Preview:
        return self.preview(queue_request(kind, name, namespace, policy))

    def set_queue_stop_policy(self, kind: str, name: str, namespace: str, policy: str) -> ActionResult:
        return self.execute(queue_request(kind, name, namespace, policy))

    def preview_yunikorn_queue(self, change: QueueChange) -> Preview:
        return self.preview(yunikorn_request(change))

    def set_yunikorn_queue(self, change: QueueChange) -> ActionResult:
        return self.execute(yunikorn_request(change))


class RecordingActuator:
    """An actuator that records what reached it (for tests that prove what did or did not act)."""

    def __init__(self, inner: Actuator) -> None:
        self._inner = inner
        self.executed: list[ActionRequest] = []

    @property
    def read_only(self) -> bool:
        return self._inner.read_only

    def preview(self, request: ActionRequest) -> Preview:
        return self._inner.preview(request)

    def execute(self, request: ActionRequest) -> ActionResult:
        self.executed.append(request)
        return self._inner.execute(request)


def outcome_of(error: HpctopError) -> Outcome:
    """The outcome an error stands for: its own (a conflict, a server's refusal, a lost answer),
    else refused for what hpctop refused before sending, else failed."""
    own = getattr(error, "outcome", None)
    if isinstance(own, Outcome):
        return own
    return Outcome.REFUSED if isinstance(error, ActionRefused) else Outcome.FAILED


def failed_result(request: ActionRequest, error: HpctopError, at: float = 0.0) -> ActionResult:
    """A bulk action's result for a request that raised ``error``."""
    return ActionResult(request, False, error.detail, at=at, outcome=outcome_of(error))


#: how the console's summary names each outcome (a count before each)
_SUMMARY_WORDS: tuple[tuple[Outcome, str], ...] = (
    (Outcome.DONE, "done"),
    (Outcome.GONE, "already gone (deleted before the {action} arrived)"),
    (Outcome.CONFLICT, "changed since you saw it (nothing done)"),
    (Outcome.REFUSED, "refused"),
    (Outcome.UNKNOWN, "outcome unknown (check the cluster before trying again)"),
    (Outcome.FAILED, "failed"),
)


def summary(action: str, outcomes: Sequence[ActionResult | HpctopError]) -> str:
    """The console's one-line summary of a (bulk) action: ``hold: 2 done, 1 refused``.

    Each result counts under its :class:`Outcome` (an error under :func:`outcome_of`); the done
    count is left out only where some were already gone and none done."""
    counts = dict.fromkeys(Outcome, 0)
    for item in outcomes:
        if isinstance(item, ActionResult):
            counts[Outcome(item.outcome) if item.ok else _failed_outcome(item)] += 1
        else:
            counts[outcome_of(item)] += 1
    parts = [
        f"{counts[outcome]} {words.format(action=action)}"
        for outcome, words in _SUMMARY_WORDS
        if counts[outcome] or (outcome == Outcome.DONE and not counts[Outcome.GONE])
    ]
    return f"{action}: " + ", ".join(parts)


def _failed_outcome(result: ActionResult) -> Outcome:
    outcome = Outcome(result.outcome)
    return Outcome.FAILED if outcome in (Outcome.DONE, Outcome.GONE) else outcome


def bulk(actuator: Actuator, requests: Sequence[ActionRequest]) -> list[ActionResult]:
    """Run several requests, reporting per job; one failure does not stop the others."""
    results: list[ActionResult] = []
    for request in requests:
        try:
            results.append(actuator.execute(request))
        except ActionRefused as exc:
            results.append(failed_result(request, exc))
    return results
