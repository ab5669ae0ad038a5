"""Set-up shared by the command-line tests: a session that is only a snapshot and its schedule."""

from __future__ import annotations

from dataclasses import dataclass, field

from hpctop.model.policy import Policy
from hpctop.model.store import Snapshot
from hpctop.scheduling.types import ScheduleResult


@dataclass
class FakeSession:
    """What the table commands read of a session, over a hand-built snapshot and schedule."""

    snapshot: Snapshot
    result: ScheduleResult
    policy: Policy = field(default_factory=Policy)
    speed: float = 1.0
    now: float = 0.0
