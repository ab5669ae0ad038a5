"""From scheduler evidence to a job's state and its pending reasons (SCHEDULERS.md §1.4, §1.5, §10).

Why: pods alone tell a misleading story on a cluster with a queueing layer. A Kueue job waiting
for quota is *suspended* (it looks held), a Volcano gang in ``Inqueue`` has pods that are merely
Pending, and the real "why" sits in a Workload condition or a PodGroup condition, not on a pod.
Each backend's ``read`` module reads its own objects and answers two questions for
:func:`hpctop.model.jobs.derive_job` (through :mod:`hpctop.backends.registry`): which normalised
state the job is in, and every ``Reason(code, source, message)`` that explains a wait, so the
detail pane can show them all and the REASON column the first by §1.5 precedence. What is
neutral is here: the evidence the store joins to a job, that precedence, and the QueueHeld
reason of a closed queue, whichever backend's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hpctop.model.backends.queues import CLOSED_STATES
from hpctop.model.objects import (
    KueueWorkload,
    PodGroup,
    QueueInfo,
    Reason,
)
from hpctop.model.states import ReasonCode

_PRECEDENCE = {code: i for i, code in enumerate(ReasonCode)}


@dataclass(frozen=True, slots=True)
class JobEvidence:
    """What the scheduler backends say about one job (the store joins these)."""

    kueue: KueueWorkload | None = None
    pod_group: PodGroup | None = None
    queue: str | None = None  # neutral queue path (Kueue ClusterQueue path, Volcano queue path)
    queue_info: QueueInfo | None = None
    local_queue: QueueInfo | None = None

    @property
    def backends(self) -> tuple[str, ...]:
        out = []
        if self.kueue is not None:
            out.append("kueue")
        if self.pod_group is not None:
            out.append(self.pod_group.backend)
        elif self.queue_info is not None and self.queue_info.backend not in out:
            out.append(self.queue_info.backend)
        return tuple(out)


def by_precedence(reasons: list[Reason]) -> tuple[Reason, ...]:
    """Reasons ordered by §1.5 precedence (stable among equals)."""
    return tuple(sorted(reasons, key=lambda r: _PRECEDENCE[r.code]))


# -- reasons -------------------------------------------------------------------------------------


def queue_reason(info: QueueInfo | None, source: str) -> Reason | None:
    """QueueHeld when the queue a job waits in is Closed, Draining or Held (the queue says why)."""
    if info is None or info.state not in CLOSED_STATES:
        return None
    where = re.split(r"[ =]", info.state_reason, maxsplit=1)[0] or source
    detail = f" ({info.state_reason})" if info.state_reason else ""
    return Reason(ReasonCode.QUEUE_HELD, where, f"queue {info.path} is {info.state}{detail}")
