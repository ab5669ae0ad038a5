"""The console with Slurm beside it: any session, plus slurmrestd's jobs polled and joined in.

Why a wrapper and not a new session kind: the Slurm side is the same whatever the Kubernetes side
is (a live context, the demo, a scenario, or nothing but an empty cluster), so
:class:`SlurmConsoleSession` wraps a :class:`~hpctop.runtime.protocols.SessionLike` and adds:

- **the poll**: every ``step``/``refresh`` asks the :class:`~hpctop.sources.slurm.poll.SlurmPoller`
  (cheap until its interval is due; the console's steps run in a thread worker, so a slow
  slurmrestd never freezes a key); a refresh makes the next poll due at once;
- **the join**: :func:`hpctop.runtime.slurm_join.join` of the inner snapshot and the Slurm view,
  rebuilt only when either changed, under a version of its own so the panes' caches see the change;
- **the note**: a slurmrestd that is down or refuses the token leaves the last Slurm rows marked
  stale and the poller's one-line note in :attr:`slurm_note`, which the status bar shows; the
  Kubernetes rows and their connection state are untouched (only the Slurm side degrades);
- **the actions**: :class:`SlurmRouting` is the console's :class:`~hpctop.actions.requests.Actuator`:
  a request on a Slurm job (kind ``SlurmJob``) goes to :class:`~hpctop.backends.slurm.act.SlurmActions`
  (its own preview, read-only chokepoint and audit), any other to the inner session's actuator.

Everything else (live permissions, YAML and logs, the queue actions) is the inner session's.
"""

from __future__ import annotations

from typing import Any

from hpctop.actions.requests import ActionRequest, ActionResult, Actuator, Preview
from hpctop.backends.slurm.act import SLURM_JOB_KIND, SlurmActions
from hpctop.model.policy import Policy
from hpctop.model.store import Snapshot
from hpctop.runtime.protocols import SessionLike
from hpctop.runtime.slurm_join import RowMemo, join, slurm_partition_rows
from hpctop.scheduling.types import QueueStatus, ScheduleResult
from hpctop.sources.slurm.poll import SlurmPoller, SlurmView

__all__ = ["SlurmConsoleSession", "SlurmRouting"]


class SlurmRouting:
    """An actuator that sends Slurm jobs' actions to slurmrestd and the rest to ``inner``."""

    def __init__(self, inner: Actuator, slurm: SlurmActions) -> None:
        self.inner = inner
        self.slurm = slurm

    @property
    def read_only(self) -> bool:
        return self.inner.read_only

    def _for(self, request: ActionRequest) -> Actuator:
        return self.slurm if request.job[1] == SLURM_JOB_KIND else self.inner

    def preview(self, request: ActionRequest) -> Preview:
        return self._for(request).preview(request)

    def execute(self, request: ActionRequest) -> ActionResult:
        return self._for(request).execute(request)

    def __getattr__(self, name: str) -> Any:
        # the queue actions (Kueue, YuniKorn) are the inner actuator's
        return getattr(self.inner, name)


class SlurmConsoleSession:
    """``inner`` with slurmrestd's jobs joined in (see the module doc)."""

    def __init__(self, inner: SessionLike, poller: SlurmPoller, actions: SlurmActions) -> None:
        self.inner = inner
        self.poller = poller
        self.actuator: Actuator = SlurmRouting(inner.actuator, actions)
        self.source_name = f"{inner.source_name} + Slurm {poller.client.url}"
        self._version = 0
        self._seen: tuple[Snapshot, SlurmView] | None = None
        self._joined: Snapshot | None = None
        self._rows: RowMemo = {}  # the Slurm rows of the last join, handed back when unchanged
        self.poller.poll()

    # -- SessionLike -------------------------------------------------------------------------

    @property
    def policy(self) -> Policy:
        return self.inner.policy

    @policy.setter
    def policy(self, value: Policy) -> None:
        self.inner.policy = value

    @property
    def speed(self) -> float:
        return self.inner.speed

    @speed.setter
    def speed(self, value: float) -> None:
        self.inner.speed = value

    @property
    def now(self) -> float:
        return self.inner.now

    @property
    def result(self) -> ScheduleResult:
        return self.inner.result

    @property
    def snapshot(self) -> Snapshot:
        inner = self.inner.snapshot
        view = self.poller.view
        seen = self._seen
        if self._joined is None or seen is None or seen[0] is not inner or seen[1] is not view:
            self._version += 1
            self._joined = join(inner, view, version=self._version, memo=self._rows)
            self._seen = (inner, view)
        return self._joined

    def step(self, virtual_seconds: float) -> None:
        self.inner.step(virtual_seconds)
        self.poller.poll()

    def refresh(self) -> None:
        self.inner.refresh()
        self.poller.next_at = 0.0  # r: read Slurm now too
        self.poller.poll()

    @property
    def slurm_partitions(self) -> dict[str, QueueStatus]:
        """Slurm's partitions as queue-pane rows (:func:`~hpctop.runtime.slurm_join.slurm_partition_rows`)."""
        return slurm_partition_rows(self.poller.view)

    # -- what the status bar shows of Slurm --------------------------------------------------

    @property
    def slurm_note(self) -> str:
        """One line when the Slurm rows are stale (slurmrestd down, or refusing the token)."""
        return self.poller.view.note if self.poller.view.stale else ""

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()

    def __getattr__(self, name: str) -> Any:
        # live permissions, identity, audit, YAML/logs, connection: the inner session's
        return getattr(self.inner, name)
