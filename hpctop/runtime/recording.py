"""Record a cluster (live or simulated) to a file, and play a file back as a console session.

:class:`ReplaySession` has the interface of the demo :class:`~hpctop.runtime.session.Session`
(store, policy, actuator, snapshot, result, ``step``, ``refresh``, ``now``, ``speed``), so the
console and the tables take it as they take the demo. Its virtual clock is the recording's:
``now`` is ``started + t``, and stepping applies the lines up to the new ``t``. Its source name
starts with ``replay``, which the console treats as simulated: the clock, speed keys and pause
work as in the demo.

The core runs over the replayed snapshots with hpctop's default policy (the file holds the
cluster's objects, not an hpctop policy), so for a recording of the demo the queue quotas differ
from the demo's, while jobs, pods, nodes and GPUs are the same.

:func:`record_live` tees the reflectors' HTTP reads into a :class:`~hpctop.sources.record.Recorder`
(what hpctop read is what is saved), and :func:`record_simulation` saves what a simulated session
applies to its store, with the virtual time as ``t``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from hpctop.actions.requests import ActionRequest, ActionResult, Actuator, Preview
from hpctop.errors import ActionRefused
from hpctop.model.backends.queues import policy_from_snapshot
from hpctop.model.policy import Policy
from hpctop.model.store import Snapshot, Store
from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.runtime.session import Session
from hpctop.scheduling.types import ScheduleResult
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.resources import DEFAULT_RESOURCES
from hpctop.sources.record import Recorder, RecordingClient
from hpctop.sources.replay import Recording, Replayer
from hpctop.sources.scenario import Scenario
from hpctop.sources.simulator.cluster import EPOCH, Event, SimulatedCluster

ScheduleFn = Callable[[Snapshot, Policy, float], ScheduleResult]

REPLAY_REFUSAL = "a recording cannot be changed: actions are not available in a replay"
#: virtual seconds a schedule is reused for when nothing changed (as the demo session does)
REPLAY_INTERVAL = 10.0


class ReplayActuator:
    """Refuses every action: there is no cluster behind a recording."""

    def __init__(self) -> None:
        self.refused: list[ActionRequest] = []

    @property
    def read_only(self) -> bool:
        return True

    def preview(self, request: ActionRequest) -> Preview:
        return Preview(request, False, (), refusal=REPLAY_REFUSAL)

    def execute(self, request: ActionRequest) -> ActionResult:
        self.refused.append(request)
        raise ActionRefused(REPLAY_REFUSAL)


class ReplaySession:
    """A recording played into a store on a virtual clock; the console's and the tables' session."""

    def __init__(
        self,
        path: str | Path,
        *,
        policy: Policy | None = None,
        speed: float = 1.0,
        scheduler: ScheduleFn | None = None,
        interval: float = REPLAY_INTERVAL,
    ) -> None:
        self.recording = Recording(path)
        self.started = self.recording.started
        self._base_policy = policy if policy is not None else Policy()
        self.policy = self._base_policy
        self.source_name = f"replay:{Path(path).name}"
        self.speed = speed
        self.interval = interval
        self.lock = threading.RLock()
        self.store = Store(clock=lambda: self.now)
        self.replayer = Replayer(self.recording, self.store)
        self.actuator: Actuator = ReplayActuator()
        if scheduler is None:
            from hpctop.scheduling.core import schedule

            scheduler = schedule
        self._schedule = scheduler
        self._view_version = -1
        self.schedule_runs = 0
        self.snapshot: Snapshot
        self.result: ScheduleResult
        self.replayer.advance(0.0)
        self.refresh()

    @property
    def now(self) -> float:
        return self.started + self.replayer.t

    @property
    def elapsed(self) -> float:
        """Seconds since the recording began (what ``--at`` counts)."""
        return self.replayer.t

    @property
    def finished(self) -> bool:
        return self.replayer.next_time() is None

    @property
    def skipped_lines(self) -> int:
        return self.replayer.skipped_lines

    @property
    def read_only(self) -> bool:
        return True

    @property
    def connection(self) -> str:
        """For the status bar: where in the recording we are."""
        return "replay, ended" if self.finished else "replay"

    def step(self, virtual_seconds: float) -> None:
        if virtual_seconds < 0:
            raise ValueError("the virtual clock only moves forward")
        with self.lock:
            self.replayer.advance(self.replayer.t + virtual_seconds)
            self.refresh(force=False)

    def advance_to_elapsed(self, seconds: float) -> None:
        if seconds > self.replayer.t:
            self.step(seconds - self.replayer.t)

    def run_to_end(self) -> None:
        with self.lock:
            self.replayer.run_to_end()
            self.refresh()

    def refresh(self, force: bool = True) -> None:
        """Snapshot and schedule at the replay's ``now``; reused while nothing changed (see Session)."""
        with self.lock:
            now = self.now
            if (
                not force
                and self._view_version == self.store.version
                and now - self.result.now < self.interval
            ):
                self.result = replace(self.result, now=now)
                return
            self.snapshot = self.store.snapshot()
            # quotas from the recorded cluster's own schedulers when it has them
            self.policy = policy_from_snapshot(self.snapshot, self._base_policy)
            self.result = self._schedule(self.snapshot, self.policy, now)
            self.schedule_runs += 1
            self._view_version = self.store.version


# -- recording ---------------------------------------------------------------------------------


@dataclass
class RecordStats:
    path: Path
    events: int
    bytes: int
    seconds: float
    connection: str = ""
    stopped: bool = True  # the reflectors ended within the quit deadline


def record_live(
    path: str | Path,
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None = None,
    *,
    duration: float | None = None,
    stop: threading.Event | None = None,
    on_tick: Callable[[Recorder, LiveConsoleSession], None] | None = None,
    tick: float = 0.5,
) -> RecordStats:
    """Record a live cluster until ``duration`` seconds passed, ``stop`` is set, or Ctrl-C.

    The recorder is closed in every case (a clean gzip trailer); even a kill leaves a file that
    reads up to its last flush, at most a second before.
    """
    recorder: Recorder | None = None
    source = f"context:{context}" if context else "kubeconfig"

    def client(conn: Connection) -> RecordingClient:
        assert recorder is not None
        return RecordingClient(conn, recorder, DEFAULT_RESOURCES, namespace)

    recorder = Recorder(path, source, meta={"context": context, "namespace": namespace})
    started = time.monotonic()
    session: LiveConsoleSession | None = None
    try:
        session = LiveConsoleSession.connect(kubeconfig, context, namespace, client_factory=client)
        while duration is None or time.monotonic() - started < duration:
            if stop is not None and stop.wait(tick):
                break
            if stop is None:
                time.sleep(tick)
            recorder.flush_if_due()
            if on_tick is not None:
                on_tick(recorder, session)
    except KeyboardInterrupt:
        pass
    finally:
        connection = session.connection if session is not None else ""
        stopped = session.close() if session is not None else True
        recorder.close()
    seconds = time.monotonic() - started
    return RecordStats(recorder.path, recorder.events, recorder.bytes, seconds, connection, stopped)


class _RecordedSession(Session):
    """A simulated session that also writes each event it applies, at the virtual time it applies it."""

    def __init__(
        self, cluster: SimulatedCluster, recorder: Recorder, policy: Policy, source_name: str
    ) -> None:
        self.recorder = recorder  # before the base class applies the initial events
        super().__init__(cluster, policy, source_name)

    def _apply(self, events: list[Event]) -> None:
        super()._apply(events)
        t = round(self.cluster.now - EPOCH, 6)
        raw_event = self.recorder.raw_event
        for kind, raw in events:
            raw_event(kind, raw, t=t)


def record_simulation(
    path: str | Path,
    scenario: Scenario,
    *,
    seed: int,
    source_name: str,
    until: float,
    step: float = 60.0,
    gpu_api: str = "device-plugin",
) -> tuple[RecordStats, Session]:
    """Record a simulated cluster from t = 0 to ``until`` virtual seconds; returns the session too.

    Every event the session applies (nodes at the start, arrivals, binds by hpctop's core, pod
    ends) is recorded with its virtual time, so a replay at ``t`` shows what the demo showed at
    ``t`` (to the step: events are stamped with the time of the step that applied them). The
    header's ``started`` is the simulation's epoch, so clocks and ages match the demo's.
    """
    started = time.monotonic()
    cluster = SimulatedCluster(scenario, seed=seed, gpu_api=gpu_api)
    recorder = Recorder(
        path, source_name, started=EPOCH, clock=lambda: cluster.now - EPOCH, meta={"seed": seed}
    )
    try:
        session = _RecordedSession(cluster, recorder, scenario.policy, source_name)
        while session.elapsed < until:
            session.advance_to_elapsed(min(session.elapsed + step, until))
            recorder.flush_if_due()
    finally:
        recorder.close()
    stats = RecordStats(recorder.path, recorder.events, recorder.bytes, time.monotonic() - started)
    return stats, session


__all__ = [
    "REPLAY_REFUSAL",
    "RecordStats",
    "ReplayActuator",
    "ReplaySession",
    "record_live",
    "record_simulation",
]
