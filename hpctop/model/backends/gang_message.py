"""Volcano's gang message parsed into its counts: how many tasks wait, of how many, and why.

Why: Volcano writes one sentence where a user needs numbers. Its scheduler records, on a
PodGroup it cannot place (``Unschedulable`` condition, reason ``NotEnoughResources``, and the
event of the same text), ``"%v/%v tasks in gang unschedulable: %v"`` with the pending and total
task counts and ``JobInfo.FitError()`` (volcano-sh/volcano ``pkg/scheduler/api/job_info.go``):
``pod group is not ready, <n> <Status>, ..., <m> minAvailable`` (a sorted histogram of task
states and the gang's minAvailable), then, since v1.8, ``; Pending: <a> Schedulable, <b>
Unschedulable`` (why each pending task waits: it would fit but the gang does not, or it does not
fit; ``Undetermined`` when not tried). Older releases end the histogram with a period.

:func:`parse_gang_message` returns those counts as plain data, or None for any other text (the
message then stays the evidence as it is). Neutral: Volcano's read side and the views use it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from hpctop.model.objects import Reason

_HEAD = re.compile(r"^\s*(\d+)/(\d+) tasks in gang unschedulable:\s*(.*)$", re.DOTALL)
_ENTRY = re.compile(r"^(\d+)\s+(\S.*?)\.?$")


@dataclass(frozen=True, slots=True)
class GangCounts:
    """The numbers in one Volcano gang message."""

    pending: int
    total: int
    ready: bool
    #: task state → count (``Pending``, ``Running``, ``Succeeded``, ``Releasing``, ...)
    states: tuple[tuple[str, int], ...]
    min_available: int | None
    #: why pending tasks wait → count (``Schedulable``, ``Unschedulable``, ``Undetermined``)
    pending_reasons: tuple[tuple[str, int], ...]

    def as_dict(self) -> dict[str, object]:
        return {
            "pending": self.pending,
            "total": self.total,
            "ready": self.ready,
            "states": dict(self.states),
            "min_available": self.min_available,
            "pending_reasons": dict(self.pending_reasons),
        }


def _histogram(text: str) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for part in text.split(","):
        m = _ENTRY.match(part.strip())
        if m is not None:
            out.append((m.group(2), int(m.group(1))))
    return out


def parse_gang_message(message: str) -> GangCounts | None:
    """``"3/4 tasks in gang unschedulable: pod group is not ready, 3 Pending, 4 minAvailable; ..."``."""
    head = _HEAD.match(message)
    if head is None:
        return None
    pending, total, rest = int(head.group(1)), int(head.group(2)), head.group(3)
    summary, _, why = rest.partition(";")
    status, _, histogram = summary.partition(",")
    entries = _histogram(histogram)
    minimum = next((n for name, n in entries if name == "minAvailable"), None)
    states = tuple((name, n) for name, n in entries if name != "minAvailable")
    reasons: tuple[tuple[str, int], ...] = ()
    label, _, counts = why.strip().partition(":")
    if label.strip() == "Pending":
        reasons = tuple(_histogram(counts))
    return GangCounts(pending, total, "not ready" not in status, states, minimum, reasons)


def gang_status(reasons: Iterable[Reason]) -> dict[str, object] | None:
    """The counts of the first Volcano gang message among a job's reasons, or None."""
    for reason in reasons:
        if reason.source == "vc:PodGroup.Unschedulable":
            counts = parse_gang_message(reason.message)
            if counts is not None:
                return counts.as_dict()
    return None
