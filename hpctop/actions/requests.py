"""Action requests and the actuator interface.

A key press makes an :class:`ActionRequest`; an :class:`Actuator` previews it (what will change)
and executes it. The simulator and a live cluster implement the same interface. Read-only mode is
a property of the actuator (:class:`ReadOnlyActuator` wraps any other and refuses everything),
so no screen or key can slip past it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from hpctop.errors import ActionRefused
from hpctop.model.objects import JobKey


class ActionKind(StrEnum):
    CANCEL = "cancel"
    REQUEUE = "requeue"
    HOLD = "hold"
    RELEASE = "release"
    PRIORITY = "priority"
    MOVE = "move"


@dataclass(frozen=True, slots=True)
class ActionRequest:
    kind: ActionKind
    job: JobKey
    #: the uid the user saw; an actuator refuses when the job now has another uid
    job_uid: str = ""
    #: the new priority value (PRIORITY) or queue path (MOVE)
    value: str | int | None = None


@dataclass(frozen=True, slots=True)
class ActionResult:
    request: ActionRequest
    ok: bool
    message: str
    changes: tuple[str, ...] = ()
    at: float = 0.0


@dataclass(frozen=True, slots=True)
class Preview:
    request: ActionRequest
    allowed: bool
    changes: tuple[str, ...]
    refusal: str = ""
    requests: tuple[str, ...] = field(default_factory=tuple)  # what would be sent, for live clusters


class Actuator(Protocol):
    """Carries out actions on a cluster."""

    @property
    def read_only(self) -> bool: ...

    def preview(self, request: ActionRequest) -> Preview: ...

    def execute(self, request: ActionRequest) -> ActionResult: ...


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


def bulk(actuator: Actuator, requests: Sequence[ActionRequest]) -> list[ActionResult]:
    """Run several requests, reporting per job; one failure does not stop the others."""
    results: list[ActionResult] = []
    for request in requests:
        try:
            results.append(actuator.execute(request))
        except ActionRefused as exc:
            results.append(ActionResult(request, False, exc.detail))
    return results
