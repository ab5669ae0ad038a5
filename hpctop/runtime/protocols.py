"""What the console needs of a session, as protocols: the simulator's and a live cluster's both fit.

The console (``hpctop.tui``) runs on any object with these attributes; the runtime's sessions
(:class:`~hpctop.runtime.session.Session`, :class:`~hpctop.runtime.live_console.LiveConsoleSession`,
the replay) provide them. They live here, beside the sessions, so the view layer depends on the
runtime's contract and not the other way round.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from hpctop.actions.audit import AuditRecord
from hpctop.actions.requests import ActionKind, Actuator, Permission
from hpctop.model.objects import JobKey
from hpctop.model.policy import Policy
from hpctop.model.store import Snapshot
from hpctop.scheduling.types import ScheduleResult


class SessionLike(Protocol):
    """What the console needs of ``hpctop.runtime.session.Session``."""

    policy: Policy
    actuator: Actuator
    source_name: str
    speed: float

    @property
    def snapshot(self) -> Snapshot: ...

    @property
    def result(self) -> ScheduleResult: ...

    @property
    def now(self) -> float: ...

    def step(self, virtual_seconds: float) -> None: ...

    def refresh(self) -> None: ...


@runtime_checkable
class LiveActions(Protocol):
    """What a live session adds for actions: permissions, identity, the audit log (all blocking)."""

    @property
    def default_namespace(self) -> str: ...

    def permissions(self, namespace: str, kind: str) -> Mapping[ActionKind, Permission]: ...

    def identity(self) -> str: ...

    def audit_entries(self, job: JobKey, limit: int = 50) -> list[AuditRecord]: ...


class LogFeed(Protocol):
    """One container's log as it grows (the console's ``l``): read without waiting."""

    def lines(self) -> list[str]:
        """The newest lines, oldest first (never blocks)."""
        ...

    @property
    def note(self) -> str:
        """How the feed stands: "following", "ended", or why it failed."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class ObjectViews(Protocol):
    """What a session offers for the console's ``y`` (YAML) and ``l`` (logs); both only read.

    ``manifests`` and ``containers`` may block (HTTP on a live cluster): the console calls them
    off its loop. ``follow_log`` returns at once; the feed fills in the background.
    """

    def manifests(self, job: JobKey) -> list[dict[str, object]]: ...

    def containers(self, namespace: str, pod: str) -> list[str]: ...

    def follow_log(self, namespace: str, pod: str, container: str) -> LogFeed: ...
