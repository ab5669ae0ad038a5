"""Polling slurmrestd: a sensible interval, backoff when it fails, and a note instead of an outage.

Why polling: slurmrestd has no watch. Every ``interval`` seconds (10 by default: Slurm's own
scheduler runs every few seconds and a backfill pass every 30, so faster reads show nothing new
and load slurmctld, whose RPCs every slurmrestd request becomes) the poller reads jobs, nodes and
partitions in one round.

Why backoff and a note: a slurmrestd that is down, or refuses the token, must cost neither
slurmctld nor the console. A failed round waits as the Kubernetes reflector does
(:class:`~hpctop.sources.kube.backoff.Backoff`: 0.8 s doubling to 30 s, jittered), a refused
token (401/403, Slurm's own authentication errors, or a token that has expired or names another
user: it will not fix itself in a second) waits the cap at once. Slurm 22.05's slurmrestd answers
a token slurmctld refuses with a bare 500 "Unspecified error", as it does when slurmctld is
down; the note says it is one or the other (:func:`~hpctop.sources.slurm.rest.token_verdict`).
The last good rows are kept and marked stale, and :attr:`SlurmView.note` says in one sanitised
line what is wrong and since when; only the Slurm side degrades, whatever else the console shows keeps going.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from hpctop.backends.slurm.wire import SlurmJob, SlurmNode, SlurmPartition
from hpctop.sanitize import sanitize_line
from hpctop.sources.kube.backoff import Backoff
from hpctop.sources.slurm.rest import SlurmError, SlurmRest

__all__ = ["DEFAULT_INTERVAL", "SlurmPoller", "SlurmView"]

DEFAULT_INTERVAL = 10.0


@dataclass(frozen=True, slots=True)
class SlurmView:
    """What the Slurm side shows now: the last good read, and a note when it is not current."""

    jobs: tuple[SlurmJob, ...] = ()
    nodes: tuple[SlurmNode, ...] = ()
    partitions: tuple[SlurmPartition, ...] = ()
    read_at: float | None = None  # wall clock of the last good read (None: never)
    stale: bool = False
    note: str = ""


@dataclass
class SlurmPoller:
    """Reads slurmrestd when due; ``poll(now)`` is cheap to call on every console tick."""

    client: SlurmRest
    interval: float = DEFAULT_INTERVAL
    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    backoff: Backoff | None = None
    view: SlurmView = field(default_factory=SlurmView)
    next_at: float = 0.0
    failures: int = 0

    def __post_init__(self) -> None:
        if self.backoff is None:  # on the poller's clock, not an event loop's
            self.backoff = Backoff(clock=self.clock)

    @property
    def _backoff(self) -> Backoff:
        assert self.backoff is not None  # set in __post_init__
        return self.backoff

    def due(self) -> bool:
        return self.clock() >= self.next_at

    def poll(self) -> SlurmView:
        """One round if it is due (else the current view); never raises for a slurmrestd failure."""
        if not self.due():
            return self.view
        try:
            jobs = self.client.jobs()
            nodes = self.client.nodes()
            partitions = self.client.partitions()
        except SlurmError as exc:
            return self._failed(exc)
        self.failures = 0
        self._backoff.reset()
        self.next_at = self.clock() + self.interval
        self.view = SlurmView(tuple(jobs), tuple(nodes), tuple(partitions), read_at=self.wall())
        return self.view

    def _failed(self, exc: SlurmError) -> SlurmView:
        self.failures += 1
        refused = exc.status in (401, 403) or exc.token == "refused"
        wait = self._backoff.cap if refused else self._backoff.next()
        self.next_at = self.clock() + wait
        since = (
            time.strftime("%H:%M:%S", time.gmtime(self.view.read_at))
            if self.view.read_at is not None
            else "never read"
        )
        what = (
            "refuses the token"
            if refused
            else "refused the token or cannot reach slurmctld"
            if exc.token == "maybe"
            else "failed"
        )
        note = sanitize_line(
            f"Slurm rows stale ({since}): slurmrestd {what} ({exc}); retrying in {wait:.0f} s"
        )
        self.view = SlurmView(
            self.view.jobs, self.view.nodes, self.view.partitions, self.view.read_at, stale=True, note=note
        )
        return self.view
