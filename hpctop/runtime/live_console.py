"""The console on a live cluster: reflectors in a background thread, the core on demand.

Why a thread with its own event loop, rather than reflector tasks inside Textual's loop: the
first list of a large cluster decodes thousands of objects (over a second of CPU for 10k pods),
and a burst of watch events does the same later; inside Textual's loop each of those chunks
would hold up key presses. In a thread of its own the reflectors never share a loop with the UI,
the same code serves ``hpctop record`` (no Textual at all) and the tests, and quitting is one
``call_soon_threadsafe(task.cancel)``. The GIL is still shared, but Python switches threads every
few milliseconds, which is far below what a person notices.

The connection is loaded in that thread's loop *before* the console starts (:meth:`connect`
blocks until then), so an interactive exec credential plugin prompts on a plain terminal and
never draws over the UI (C1), and a bad kubeconfig is one error line, not a broken screen.

The store is shared by two threads: the reflectors apply events to it, and the console takes
snapshots of it. :class:`LockedStore` serialises the two with one re-entrant lock (a relist's
``replace`` calls ``apply``); snapshots are frozen copies, so the core runs outside the lock.

How the view follows the cluster: the console does not step a live session's clock (there is no
virtual clock to move), it reads ``snapshot``/``result`` each tick. Reading ``snapshot`` therefore
refreshes when the store changed since the last view. The scheduling core runs only then, never
on a tick where nothing changed (issue 16: re-running it every 5 s on a quiet cluster was 17 % of
a core at 50k pods). A quiet tick only moves the result's ``now`` on, so ages and "ETA in" columns
keep counting; what the core itself derives from the clock (the age factor of priorities, a
fair-share decay, a reservation whose expected end has passed) moves slowly, so the core is re-run
on a quiet cluster once per ``idle_refresh`` (60 s), not per tick. A store that changed only in
what the core never reads (a restart count, a condition, a resourceVersion: most watch traffic)
is treated the same way: the new snapshot is shown with the last result, its ``now`` moved
(``scheduling.inputs.same_inputs``; counted in ``core_runs_skipped``).

The decision clock (issue 16, K1): a refresh that saw a change the core reads runs the core at
the ``now`` of its last clock move (:attr:`LiveConsoleSession.core_now`), not at the wall clock,
while that is under ``clock_step`` (15 s) old; the next refresh after that runs at the wall clock
and moves it. Why: every priority's age factor reads ``now``, so a new ``now`` on every refresh
invalidated all the memo's kept priorities (``memo.PendingDerivations``) and the last pass
(``core.PassRecord``) and made every event cost a full pass; at a kept ``now`` a submitted,
deleted or changed pending job re-plans only from its turn in the pass, and the result is the
one a full run at that ``now`` gives (``tests/kube/console/test_console_decision_clock.py``).
The shown result is ``replace(result, now=wall)``: ages and "ETA in" count from the wall clock
(an ETA the kept clock put before it reads "now"), and nothing observed is taken from the core's
clock (states, nodes and observed reasons come from the snapshot itself; ETAs stay forecasts).
Why 15 s: what the kept clock delays is what the clock alone changes, and that is slow: an age
factor over Slurm's default PriorityMaxAge (7 days) moves 0.0025 % in 15 s, fair-share decay
has a half-life of days, and Slurm itself recomputes priorities only every PriorityCalcPeriod
(5 minutes by default); a running job overrunning its limit is seen up to 15 s late. Against
that, the console's 0.5 s tick under a steady stream would otherwise pay two full passes a
second; with the step, one per 15 s, the rest incremental. A quiet cluster still re-runs once
per ``idle_refresh``, which moves the clock as well.

The core budget (issue 16, K1 on a stream the core reads): at 50k pods one event-driven core
run costs ~0.9 s of CPU (``_roll_up`` and the memo's free state over every running job), so a
stream that changes what the core reads in every 0.5 s tick (K1's honest stream: 1 event in 50 a
pod submitted, bound, finished or deleted) kept the tick worker at a full core and the key
presses waiting on the GIL. So a tick's read (a *deferrable* refresh) that comes less than
``cost * (1 / core_share - 1)`` real seconds after a core run that took ``cost``
(``core_share`` 0.25: three times its cost) shows the new snapshot (rows, states, nodes: all
current) with the last run's result, its ``now`` moved, and owes the core a run
(:attr:`LiveConsoleSession.core_runs_deferred`); the first read after the budget allows runs it,
events or not. Runs under ``CORE_DEFER_ABOVE`` (50 ms: every small cluster) are never deferred,
nor is a deliberate :meth:`refresh` (the refresh key, an action's outcome). Meanwhile a job
submitted since shows without a plan (as while listing) and a finished one keeps its last
reason; the cost is measured in wall time, so on a loaded machine the core runs less often
still, which is when the console most needs the GIL for keys.

The core does not run on a half-synced store either: until every resource has finished its first
list (or is forbidden / not served), a changed store gives a new snapshot (rows appear while the
lists stream in) with a result that has no plans, and the core's first run is the one after the
last first list. Why: on a big cluster the tick worker otherwise re-ran the core on each partial
store, some 30 % of the cold start, for plans that were wrong (half the nodes, half the jobs)
and replaced a tick later. A resource whose first list keeps failing does not hold the plans back
for ever: after ``list_patience`` seconds the core runs on what is there.

Coalescing (RELIABILITY.md W15): the store keeps the latest object per key, so a burst of fifty
thousand events between two ticks is one snapshot and one scheduling run. That alone bounds the
views by the readers, though, and a second reader (a detail screen, a metrics join, a test polling
``snapshot``) would multiply them; so the bound is explicit as well: reading ``snapshot`` rebuilds
the view at most once per ``min_refresh`` real seconds (below the console's tick, so a tick always
sees the newest state), however many events arrived and however often it is read. Only streams of
events are held back this way: when a resource changes state (synced, stale, relisted, forbidden)
the next read rebuilds at once, and a deliberate :meth:`refresh` (the refresh key, an action's
outcome) is never limited. :attr:`refreshes_coalesced` counts the reads that were served the
previous view because of the limit.

Actions (``docs/actions.md``): the session's actuator is a :class:`~hpctop.actions.actuator.KubeActuator`
over :class:`~hpctop.actions.kube.KubeActions`, on a loop thread of its own (not the reflectors'
loop: a first list's decoding burst must not delay a confirmed cancel, and the console calls it
from a worker thread, never from Textual's loop). Its client is made with ``read_only`` too, and in
read-only mode a :class:`~hpctop.actions.requests.ReadOnlyActuator` wraps it: the screen layer
refuses first, and the transport refuses again before any socket I/O if anything slips past (two
layers, RELIABILITY.md §2.4). Every mutation is written to the local audit log
(:mod:`hpctop.actions.audit`), whose records for a job the console shows in the job detail.

Beside the reflectors, on the same loop, run the optional extras (``docs/live.md``): GPU metrics
from Prometheus (``prometheus_url``; :attr:`LiveConsoleSession.gpu_metrics`), YuniKorn's queue
tree (polled only once YuniKorn is seen, or at ``yunikorn_url``), Kueue's own pending positions
(its visibility API, polled only while a ClusterQueue has pending workloads and the API is served;
:meth:`LiveConsoleSession.kueue_position`) and a job's Events while its detail is open
(:meth:`LiveConsoleSession.job_events`). Each is a task of its own that never
raises out: a failure is a note appended to :attr:`LiveConsoleSession.connection`, never a stop,
and the console only ever reads references they swap (no call from the UI thread waits on them).

Why one module of this size: most of it is this docstring, the rules above, and
:class:`LiveConsoleSession` is one object the console reads whose parts (the view and its
coalescing, the core's last inputs, the reflector statuses, the extras' published references) are
guarded by those rules together; the log follower (:class:`LiveLog`) and the extras' polling are
the parts that could move out: the first split to make when this module grows.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import gc
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

import orjson

from hpctop.actions.actuator import KubeActuator
from hpctop.actions.audit import AuditLog, AuditRecord
from hpctop.actions.kube import KINDS, KubeActions, Permission
from hpctop.actions.requests import ActionKind, Actuator, ReadOnlyActuator
from hpctop.model.backends.queues import policy_from_snapshot
from hpctop.model.decode import DecodeError
from hpctop.model.events import WatchEvent
from hpctop.model.metrics import MetricsView
from hpctop.model.objects import ClusterQueue, JobKey
from hpctop.model.policy import Policy
from hpctop.model.resources import Resources
from hpctop.model.store import Snapshot, Store
from hpctop.runtime import heap
from hpctop.scheduling.inputs import same_inputs
from hpctop.scheduling.types import ScheduleResult
from hpctop.sources.kube.connection import Connection, load_connection
from hpctop.sources.kube.events import EventRow, list_job_events
from hpctop.sources.kube.exec_plugin import EXEC_TIMEOUT, ExecIO
from hpctop.sources.kube.kueue_visibility import POLL_INTERVAL as KUEUE_INTERVAL
from hpctop.sources.kube.kueue_visibility import KueueVisibilityPoller, PendingPosition, PendingPositions
from hpctop.sources.kube.metrics import POLL_INTERVAL as METRICS_INTERVAL
from hpctop.sources.kube.metrics import PrometheusPoller
from hpctop.sources.kube.reflector import ReflectorSettings, ReflectorState, ReflectorStatus
from hpctop.sources.kube.resources import DEFAULT_RESOURCES, PODS, ResourceSpec
from hpctop.sources.kube.transport import KubeClient
from hpctop.sources.kube.yunikorn import NAMESPACE as YUNIKORN_NAMESPACE
from hpctop.sources.kube.yunikorn import POLL_INTERVAL as YUNIKORN_INTERVAL
from hpctop.sources.kube.yunikorn import YuniKornPoller

ScheduleFn = Callable[[Snapshot, Policy, float], ScheduleResult]

#: owner kinds hpctop can act on (the rest are refused with a reason by the actuator)
ACTION_KINDS: tuple[str, ...] = tuple(KINDS)
#: seconds one action call may wait for the server (the outcome is then reported unknown)
ACTION_TIMEOUT = 30.0
#: real seconds after which the core re-runs even when nothing changed (the age factor of
#: priorities, fair-share decay, overrun reservations: slow; ages shown move on every tick anyway)
IDLE_REFRESH = 60.0
#: real seconds the core's own clock stays put while events arrive (the decision clock, module doc):
#: refreshes in between run at the last full run's ``now``, so the memo's kept priorities and the
#: last pass (``core.PassRecord``) stay valid and an event re-plans only from its job's turn
CLOCK_STEP = 15.0
#: the most of a core that event-driven core runs may take while events stream (the core budget,
#: module doc): after a run that took ``c`` seconds the next one waits ``c * (1 / share - 1)``
CORE_SHARE = 0.25
#: core runs cheaper than this are never deferred (small clusters: every change is planned at once)
CORE_DEFER_ABOVE = 0.05
#: real seconds the core waits for every resource's first list before it runs on what is there
LIST_PATIENCE = 30.0
#: real seconds between two views rebuilt on read (W15: a burst of events is one view per tick;
#: below the console's tick of 0.5 s, so every tick sees the newest state)
MIN_REFRESH = 0.2
#: how long quitting may wait for the reflectors (RELIABILITY.md §1.5: the app exits within 1 s)
STOP_TIMEOUT = 1.0
#: real seconds a job's Events are shown before they are asked for again (while its detail is open)
EVENTS_TTL = 5.0
#: jobs whose Events are kept (the details opened last)
EVENTS_CACHED = 32
#: seconds a YAML or container read may wait for the API server
READ_TIMEOUT = 10.0
#: lines of a log asked for when following starts, and lines kept
LOG_TAIL = 500
LOG_KEPT = 5000
T = TypeVar("T")

_DEGRADED = {
    ReflectorState.FORBIDDEN: "forbidden",
    ReflectorState.UNAVAILABLE: "not served",
    ReflectorState.UNAUTHORIZED: "unauthorized",
}


class LockedStore(Store):
    """A store whose writes and snapshots hold one lock, for a writer thread and a reader thread."""

    def __init__(self, clock: Callable[[], float] = time.time, lock: threading.RLock | None = None) -> None:
        super().__init__(clock)
        self.lock = lock if lock is not None else threading.RLock()

    def apply(self, event: WatchEvent) -> None:
        with self.lock:
            super().apply(event)

    def apply_line(self, kind: str, raw: bytes) -> WatchEvent:
        with self.lock:
            return super().apply_line(kind, raw)

    def replace(self, kind: str, objects: Iterable[object], resource_version: str = "") -> None:
        with self.lock:
            super().replace(kind, objects, resource_version)

    def add_listed(self, kind: str, objects: Iterable[object]) -> None:
        with self.lock:
            super().add_listed(kind, objects)

    def end_listed(self, kind: str, objects: Iterable[object], resource_version: str = "") -> None:
        with self.lock:
            super().end_listed(kind, objects, resource_version)

    def snapshot(self) -> Snapshot:
        with self.lock:
            return super().snapshot()

    def apply_yunikorn_queues(self, raw: bytes, partition: str = "default") -> bool:
        with self.lock:
            return super().apply_yunikorn_queues(raw, partition)

    def skip(self, error: DecodeError, kind: str = "") -> None:
        with self.lock:  # the notes are read by snapshot() under this lock
            super().skip(error, kind)


class _PodNodes(Mapping[str, str]):
    """Pod name → node, built on first use only: the metrics join needs it just when a host label
    holds the exporter pod's name instead of a node's, and most clusters never ask."""

    def __init__(self, build: Callable[[], dict[str, str]]) -> None:
        self._build = build
        self._map: dict[str, str] | None = None

    def _get(self) -> dict[str, str]:
        if self._map is None:
            self._map = self._build()
        return self._map

    def __getitem__(self, key: str) -> str:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


#: how the status bar names the objects of a list under way ("listing… 12,345 pods")
_LISTED_NAMES = {"Pod": "pods", "Node": "nodes"}


def connection_text(statuses: Mapping[str, ReflectorStatus], now: float) -> str:
    """One short phrase for the status bar, worst news first.

    ``stale 42s (Pod)``: a watch failed 42 s ago and is being retried, so those rows may be out of
    date; ``listing… 12,345 pods``: the first list has not finished and the rows shown are the
    part read so far (``syncing Pod`` before its first page); ``synced``: every resource listed and
    watching. A resource that is forbidden or not served is named after that (``Job: forbidden``),
    because the rest of the console is still live and correct without it.
    """
    if not statuses:
        return "connecting"
    parts: list[str] = []
    retrying = [s for s in statuses.values() if s.state is ReflectorState.RETRYING]
    syncing = [s for s in statuses.values() if s.state is ReflectorState.SYNCING]
    stopped = [s for s in statuses.values() if s.state is ReflectorState.STOPPED]
    if retrying:
        since = min(s.since for s in retrying)
        kinds = ", ".join(s.kind for s in retrying)
        parts.append(f"stale {max(now - since, 0.0):.0f}s ({kinds})")
    waiting = [s.kind for s in syncing if not s.listed]
    if waiting:
        parts.append("syncing " + ", ".join(waiting))
    for s in syncing:
        if s.listed:
            parts.append(f"listing… {s.listed:,} {_LISTED_NAMES.get(s.kind, s.kind)}")
    if stopped:
        parts.append("stopped " + ", ".join(s.kind for s in stopped))
    if not parts:
        parts.append("synced")
    for status in statuses.values():
        degraded = _DEGRADED.get(status.state)
        if degraded is not None:
            parts.append(f"{status.kind}: {degraded}")
    return ", ".join(parts)


def _default_scheduler() -> ScheduleFn:
    from hpctop.scheduling.core import schedule

    return schedule


class LiveConsoleSession:
    """What ``make_app`` needs, for a live cluster: store, policy, actuator, snapshot, result, ...

    Build it with :meth:`connect` (loads the kubeconfig, starts the reflectors) and :meth:`close`
    it when the console ends (also a context manager).
    """

    def __init__(
        self,
        connection: Connection,
        *,
        namespace: str | None = None,
        policy: Policy | None = None,
        source_name: str | None = None,
        resources: Iterable[ResourceSpec] | None = None,
        settings: ReflectorSettings | None = None,
        scheduler: ScheduleFn | None = None,
        clock: Callable[[], float] = time.time,
        idle_refresh: float = IDLE_REFRESH,
        clock_step: float = CLOCK_STEP,
        core_share: float = CORE_SHARE,
        min_refresh: float = MIN_REFRESH,
        list_patience: float = LIST_PATIENCE,
        loop: asyncio.AbstractEventLoop | None = None,
        client_factory: Callable[[Connection], KubeClient] | None = None,
        read_only: bool = True,
        audit_path: str | os.PathLike[str] | None = None,
        action_timeout: float = ACTION_TIMEOUT,
        prometheus_url: str | None = None,
        yunikorn_url: str | None = None,
        metrics_interval: float = METRICS_INTERVAL,
        yunikorn_interval: float = YUNIKORN_INTERVAL,
        yunikorn_namespace: str = YUNIKORN_NAMESPACE,
        events_ttl: float = EVENTS_TTL,
        kueue_interval: float = KUEUE_INTERVAL,
    ) -> None:
        self.connection_settings = connection
        self.namespace = namespace
        self._base_policy = policy if policy is not None else Policy()
        self.policy = self._base_policy
        self.source_name = source_name or (f"context:{connection.context}" if connection.context else "live")
        self.speed = 1.0  # real time; the console shows no clock for live sources
        self.lock = threading.RLock()
        self.store: Store = LockedStore(clock, self.lock)
        # Two layers in read-only mode (RELIABILITY.md §2.4): ReadOnlyActuator refuses at the
        # screen's level, and the client itself refuses any mutating verb before socket I/O.
        self.audit = AuditLog(audit_path)
        self.kube_actuator = KubeActuator(
            KubeActions(KubeClient(connection, read_only=read_only), audit=self.audit),
            timeout=action_timeout,
        )
        self.kube_actuator.yunikorn_namespace = yunikorn_namespace  # queue edits follow --yunikorn-namespace
        self.actuator: Actuator = ReadOnlyActuator(self.kube_actuator) if read_only else self.kube_actuator
        #: the console runs previews and executes in a worker thread (they are HTTP round trips)
        self.actions_in_thread = True
        self._audit_cache: tuple[tuple[float, int], list[AuditRecord]] | None = None
        self.idle_refresh = idle_refresh
        self.clock_step = clock_step
        self.core_share = core_share
        #: event-driven refreshes that showed the new snapshot with the last result (core budget)
        self.core_runs_deferred = 0
        self._core_owed = False  # a deferred refresh saw a change the core has not planned yet
        self._core_cost = 0.0  # real seconds the last core run took
        self._core_ended = -float("inf")  # time.monotonic() when it ended
        self._core_snapshot: Snapshot | None = None  # what the core last ran on
        #: the newest snapshot found to have the core's inputs of ``_core_snapshot`` (see
        #: :meth:`_core_unchanged`); the core snapshot itself after each run
        self._inputs_snapshot: Snapshot | None = None
        #: the ``now`` the core last ran at with its clock moved (the decision clock, module doc)
        self.core_now = -float("inf")
        #: core runs at ``core_now`` on a refresh between two clock moves (event-driven)
        self.core_runs_at_kept_now = 0
        self.min_refresh = min_refresh
        self.list_patience = list_patience
        self._started_at = clock()  # list_patience counts from here
        #: views built without a core run because a first list was still under way
        self.listing_views = 0
        self._view_scheduled = False  # the view's result came from the core (not a listing view)
        #: reads of ``snapshot`` served the previous view because one was built < min_refresh ago
        self.refreshes_coalesced = 0
        self._built_at = -float("inf")  # time.monotonic() of the last view built
        self._view_states: tuple[tuple[str, str, int], ...] = ()  # the reflectors' states it saw
        self._clock = clock
        # None: read GET /apis at start and watch the scheduler resources the cluster serves
        self._discover = resources is None
        self._resources = tuple(resources) if resources is not None else tuple(DEFAULT_RESOURCES)
        self.discovery_note = ""
        self._settings = settings
        self._schedule = scheduler if scheduler is not None else _default_scheduler()
        #: ``same_inputs`` knows what the core reads; a scheduler given instead may read more
        self._skip_unchanged = scheduler is None
        self._client_factory = client_factory
        self._statuses: dict[str, ReflectorStatus] = {}
        self._loop = loop
        self._thread: threading.Thread | None = None
        self._task: concurrent.futures.Future[None] | None = None
        self._done = threading.Event()
        self._view_lock = threading.RLock()
        self._view_version = -1
        self._view_at = -float("inf")
        self.schedule_runs = 0
        #: refreshes that changed nothing the core reads (a restart count, a condition): no core run
        self.core_runs_skipped = 0
        self.schedule_seconds = 0.0
        self._frozen = False  # this session holds the heap frozen (_freeze_heap, until close)
        self._closed = False  # close() was called: no freeze after it
        self.error: BaseException | None = None  # what ended the reflectors, if not a quit
        self._snapshot: Snapshot
        self._result: ScheduleResult
        # -- extras beside the reflectors (module doc); their client only reads
        self._extra_client: KubeClient | None = None
        #: the last GPU metrics (stale-marked while Prometheus fails); None without ``prometheus_url``
        self.gpu_metrics: MetricsView | None = MetricsView() if prometheus_url else None
        self.metrics_poller: PrometheusPoller | None = None
        if prometheus_url:
            self.metrics_poller = PrometheusPoller(
                prometheus_url,
                self._publish_metrics,
                self._metrics_context,
                clock=clock,
                interval=metrics_interval,
            )
        self.yunikorn_poller = YuniKornPoller(
            self.store.apply_yunikorn_queues,
            client=None if yunikorn_url else self._extras_client(),
            url=yunikorn_url,
            pods_say_yunikorn=self._pods_say_yunikorn,
            interval=yunikorn_interval,
            namespace=yunikorn_namespace,
        )
        #: Kueue's own pending positions (visibility API), as last polled; empty without Kueue
        self.kueue_positions = PendingPositions()
        self.kueue_poller = KueueVisibilityPoller(
            self._extras_client(),
            self._pending_cluster_queues,
            self._publish_positions,
            interval=kueue_interval,
            clock=clock,
        )
        self.events_ttl = events_ttl
        self._events: dict[JobKey, tuple[float, list[EventRow]]] = {}
        self._events_error: dict[JobKey, str] = {}
        self._events_inflight: set[JobKey] = set()
        with self._view_lock:  # the empty store: a view without a core run (nothing listed yet)
            self._listing_view(self._states(), self.store.snapshot(), self._clock())

    # -- construction ----------------------------------------------------------------------------

    @classmethod
    def connect(
        cls,
        kubeconfig: str | None,
        context: str | None,
        namespace: str | None = None,
        *,
        policy: Policy | None = None,
        resources: Iterable[ResourceSpec] | None = None,
        settings: ReflectorSettings | None = None,
        client_factory: Callable[[Connection], KubeClient] | None = None,
        read_only: bool = True,
        audit_path: str | os.PathLike[str] | None = None,
        prometheus_url: str | None = None,
        yunikorn_url: str | None = None,
        exec_io: ExecIO | None = None,
        exec_timeout: float = EXEC_TIMEOUT,
        kueue_interval: float = KUEUE_INTERVAL,
    ) -> LiveConsoleSession:
        """Load the connection (blocking, before any UI), then start the reflectors in the background.

        Raises :class:`~hpctop.sources.kube.errors.KubeConfigError` for a kubeconfig that cannot be
        used, or an exec credential plugin that fails or runs past ``exec_timeout`` (C1; it may
        prompt on the terminal now, ``exec_io``, and never once the console runs); network trouble
        after that is per resource and shows in :attr:`connection`.
        """
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=_run_loop, args=(loop,), name="hpctop-live", daemon=True)
        thread.start()
        try:
            conn = asyncio.run_coroutine_threadsafe(
                load_connection(kubeconfig, context, exec_io=exec_io, exec_timeout=exec_timeout), loop
            ).result()
        except BaseException:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(STOP_TIMEOUT)
            raise
        session = cls(
            conn,
            namespace=namespace,
            policy=policy,
            resources=resources,
            settings=settings,
            client_factory=client_factory,
            loop=loop,
            read_only=read_only,
            audit_path=audit_path,
            prometheus_url=prometheus_url,
            yunikorn_url=yunikorn_url,
            kueue_interval=kueue_interval,
        )
        session._thread = thread
        session.start()
        return session

    def start(self) -> None:
        """Start the reflectors on the session's loop (a new background thread when it has none)."""
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        if self._thread is None:
            self._thread = threading.Thread(
                target=_run_loop, args=(self._loop,), name="hpctop-live", daemon=True
            )
            self._thread.start()
        self._done.clear()
        self._started_at = self._clock()
        self._task = asyncio.run_coroutine_threadsafe(self._reflect(), self._loop)

    async def _reflect(self) -> None:
        from hpctop.runtime.live import run_live

        extras = [
            asyncio.create_task(self._guarded(self.yunikorn_poller.run()), name="hpctop-yunikorn"),
            asyncio.create_task(self._guarded(self.kueue_poller.run()), name="hpctop-kueue-positions"),
        ]
        if self.metrics_poller is not None:
            extras.append(
                asyncio.create_task(self._guarded(self.metrics_poller.run()), name="hpctop-metrics")
            )
        try:
            if self._discover:
                await self._discover_resources()
            await run_live(
                None,
                None,
                self.namespace,
                self.store,
                resources=self._resources,
                settings=self._settings,
                on_status=self._on_status,
                connection=self.connection_settings,
                client_factory=self._client_factory,
            )
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # shown in the status bar instead of vanishing with the thread
            self.error = exc
            raise
        finally:
            for task in extras:
                task.cancel()
            await asyncio.gather(*extras, return_exceptions=True)
            if self._extra_client is not None:
                with contextlib.suppress(Exception):
                    await self._extra_client.close()
            self._done.set()  # streams closed, client closed: what quitting waits for

    async def _discover_resources(self) -> None:
        from hpctop.runtime.live import discover_resources

        factory = self._client_factory
        client = factory(self.connection_settings) if factory else KubeClient(self.connection_settings)
        notes: list[str] = []
        try:
            self._resources = await discover_resources(client, notes)
        finally:
            with contextlib.suppress(Exception):
                await client.close()
        self.discovery_note = "; ".join(notes)

    @staticmethod
    async def _guarded(work: Coroutine[Any, Any, None]) -> None:
        """Run an extra; a bug in it ends only it (the reflectors and the console go on)."""
        with contextlib.suppress(Exception):
            await work

    def _extras_client(self) -> KubeClient:
        """The read-only client of the extras (Events, the YuniKorn proxy): not the reflectors', whose
        streams it must not queue behind, and never able to write (R3)."""
        if self._extra_client is None:
            self._extra_client = KubeClient(self.connection_settings, read_only=True)
        return self._extra_client

    # -- extras: GPU metrics, YuniKorn, Events ---------------------------------------------------

    def _publish_metrics(self, view: MetricsView) -> None:
        self.gpu_metrics = view  # one reference swap: the console reads whichever is current

    def _metrics_context(self) -> tuple[Mapping[str, object], Mapping[str, str]]:
        def pod_nodes() -> dict[str, str]:
            with self.lock:
                return {p.name: p.node_name for p in self.store.pods.values() if p.node_name}

        with self.lock:
            nodes = dict.fromkeys(self.store.nodes)
        return nodes, _PodNodes(pod_nodes)

    def _pending_cluster_queues(self) -> list[str]:
        """The ClusterQueues with pending workloads: the only ones worth asking Kueue about."""
        with self.lock:
            objects = list(self.store.objects.values())
        return [o.name for o in objects if isinstance(o, ClusterQueue) and o.pending_workloads > 0]

    def _publish_positions(self, positions: PendingPositions) -> None:
        self.kueue_positions = positions  # one reference swap: the console reads whichever is current

    def kueue_position(self, job: JobKey) -> PendingPosition | None:
        """Where Kueue says a pending job stands (its Workload), or None when it does not say."""
        return self.kueue_positions.by_job.get(job)

    def _pods_say_yunikorn(self) -> bool:
        with self.lock:
            return any(p.scheduler_name == "yunikorn" for p in self.store.pods.values())

    def job_events(self, job: JobKey) -> list[EventRow]:
        """The Events of a job's owner and pods, as last fetched; never waits.

        The job detail calls this on every tick while it is open: the cached rows come back at
        once and, when they are older than :attr:`events_ttl` and no fetch is running, one is
        started on the background loop. The first call therefore returns ``[]``.
        """
        cached = self._events.get(job)
        loop = self._loop
        stale = cached is None or time.monotonic() - cached[0] >= self.events_ttl
        if stale and job not in self._events_inflight and loop is not None and loop.is_running():
            self._events_inflight.add(job)
            asyncio.run_coroutine_threadsafe(self._fetch_events(job), loop)
        return list(cached[1]) if cached is not None else []

    def job_events_error(self, job: JobKey) -> str:
        """Why the last fetch of a job's Events failed ("" when it did not)."""
        return self._events_error.get(job, "")

    async def _fetch_events(self, key: JobKey) -> None:
        try:
            with self.lock:
                job = self.store.job(key)
                pods = [name for _, name in job.pods] if job is not None else []
            namespace, kind, name = key
            objects = [(kind, name)] + [("Pod", p) for p in pods if (kind, p) != ("Pod", name)]
            try:
                rows = await list_job_events(self._extras_client(), namespace, objects)
            except Exception as exc:  # shown in the detail; the previous rows stay
                self._events_error[key] = type(exc).__name__
                rows = self._events[key][1] if key in self._events else []
            else:
                self._events_error.pop(key, None)
            self._events.pop(key, None)
            self._events[key] = (time.monotonic(), rows)
            while len(self._events) > EVENTS_CACHED:
                self._events.pop(next(iter(self._events)))
        finally:
            self._events_inflight.discard(key)

    # -- read-only views: the console's y (YAML) and l (logs) -----------------------------------

    def _read(self, work: Coroutine[Any, Any, T]) -> T:
        """Run a read on the session's loop and wait for it (a worker thread calls this)."""
        loop = self._loop
        if loop is None or not loop.is_running():
            raise RuntimeError("the session is closed")
        future = asyncio.run_coroutine_threadsafe(work, loop)
        try:
            return future.result(READ_TIMEOUT)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"the API server did not answer within {READ_TIMEOUT:.0f} s") from None

    def manifests(self, job: JobKey) -> list[dict[str, object]]:
        """The job's owner object and its pods, as the API server has them now (blocking)."""
        with self.lock:
            found = self.store.job(job)
            pods = [name for _, name in found.pods] if found is not None else []
        namespace, kind, name = job
        served = {spec.kind for spec in self._resources if spec.namespaced}
        owner = kind in served and kind != "Pod"
        paths = [object_path(kind, namespace, name, self._resources)] if owner else []
        paths += [object_path("Pod", namespace, pod) for pod in pods]

        async def fetch() -> list[dict[str, object]]:
            client = self._extras_client()
            return [orjson.loads(await client.get(path, {})) for path in paths]

        return self._read(fetch())

    def containers(self, namespace: str, pod: str) -> list[str]:
        """The pod's containers (init containers after), from the API server (blocking)."""

        async def fetch() -> list[str]:
            raw = orjson.loads(await self._extras_client().get(object_path("Pod", namespace, pod), {}))
            spec = raw.get("spec") or {}
            names = [c.get("name", "") for c in spec.get("containers") or []]
            return [n for n in names + [c.get("name", "") for c in spec.get("initContainers") or []] if n]

        return self._read(fetch())

    def follow_log(self, namespace: str, pod: str, container: str) -> LiveLog:
        """Follow a container's log (``GET .../pods/NAME/log?follow=true``) into a buffer."""
        feed = LiveLog()
        loop = self._loop
        if loop is None or not loop.is_running():
            feed.set_note("the session is closed")
            return feed
        path = object_path("Pod", namespace, pod) + "/log"
        params = {"follow": "true", "container": container, "tailLines": str(LOG_TAIL)}
        feed.future = asyncio.run_coroutine_threadsafe(feed.follow(self._extras_client(), path, params), loop)
        return feed

    def _on_status(self, status: ReflectorStatus) -> None:
        self._statuses = {**self._statuses, status.kind: status}  # a new dict: readers never see it change
        if not self._frozen and self.synced:
            self._freeze_heap()

    def _freeze_heap(self) -> None:
        """Once every resource is listed, move the heap out of the cyclic GC's reach (as the
        simulator's session did after its first load).

        Why (W15): the store of a big cluster and the console's view of it are millions of
        long-lived objects, and a burst of watch events allocates fast enough to trigger a full
        collection every few seconds; each one scanned them all and stopped every thread, the
        console's included, for 0.5-1.2 s (10k pods, 50k events, measured with ``gc.callbacks``).
        Frozen objects are still freed by reference counting when the store drops them (pods and
        nodes hold no cycles); only cyclic garbage that exists at this moment is kept, and only
        until :meth:`close`: a frozen object is never collected, and the session itself sits in
        cycles (its reflectors' and pollers' callbacks are its bound methods), so a session that
        stayed frozen after closing kept itself and its whole store in memory for good. Once a
        session (:data:`_HEAP`), frozen at most once however often it relists or reconnects.
        """
        with _HEAP.lock:
            if self._frozen or self._closed:
                return
            _HEAP.hold()
            self._frozen = True

    def close(self, timeout: float = STOP_TIMEOUT) -> bool:
        """Cancel the reflectors, close their streams, stop the thread; True when all ended in time.

        The heap this session froze is released first (:data:`_HEAP`: unfrozen when no other
        session holds it), so the session and its store can be collected once dropped.
        """
        with _HEAP.lock:
            self._closed = True
            if self._frozen:
                self._frozen = False
                _HEAP.release()
        with contextlib.suppress(Exception):  # its HTTP session and loop thread; never blocks quitting
            self.kube_actuator.close()
        loop, task, thread = self._loop, self._task, self._thread
        if loop is None or loop.is_closed():
            return True
        deadline = time.monotonic() + timeout
        stopped = True
        if task is not None:
            # Cancelling the concurrent future cancels the task in the loop; it is marked done at
            # once, so wait for the task's own ``finally`` (streams and the HTTP session closed).
            task.cancel()
            stopped = self._done.wait(timeout)
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(max(deadline - time.monotonic(), 0.05))
            stopped = stopped and not thread.is_alive()
        self._task = None
        return stopped

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- state for the console -------------------------------------------------------------------

    @property
    def now(self) -> float:
        return self._clock()

    @property
    def read_only(self) -> bool:
        return self.actuator.read_only

    @property
    def default_namespace(self) -> str:
        """The namespace asked about first: the session's, else the context's, else ``default``."""
        return self.namespace or self.connection_settings.namespace or "default"

    def permissions(self, namespace: str, kind: str) -> dict[ActionKind, Permission]:
        """Which actions the identity may use on a ``kind`` in ``namespace`` (blocking: a worker calls it).

        One SelfSubjectRulesReview per namespace, cached briefly by the core; in read-only mode
        every action is refused with that reason and nothing is asked.
        """
        return self.kube_actuator.permissions(namespace, kind)

    def identity(self) -> str:
        """The user name the server knows us by (SelfSubjectReview; blocking: a worker calls it)."""
        future = asyncio.run_coroutine_threadsafe(self.kube_actuator.core.whoami(), self.kube_actuator.loop)
        try:
            return future.result(self.kube_actuator.timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return f"context:{self.connection_settings.context or ''} (the server did not say)"

    def audit_entries(self, job: JobKey, limit: int = 50) -> list[AuditRecord]:
        """The audit log's records of one job, newest last.

        The job detail asks for these on every tick while it is open, so the parsed file is kept
        until its size or mtime changes: a quiet log is one ``stat`` per tick, not a re-read.
        """
        path = Path(self.audit.path)
        try:
            st = path.stat()
        except FileNotFoundError:
            return []
        stamp = (st.st_mtime, st.st_size)
        if self._audit_cache is None or self._audit_cache[0] != stamp:
            self._audit_cache = (stamp, list(self.audit.records()))
        wanted = "/".join(job)
        return [r for r in self._audit_cache[1] if r.job == wanted][-limit:]

    @property
    def statuses(self) -> Mapping[str, ReflectorStatus]:
        return self._statuses

    @property
    def connection(self) -> str:
        """The status bar's connection state, built from the reflectors' statuses."""
        if self.error is not None:
            return f"stopped: {type(self.error).__name__}"
        now = self._clock()
        parts = [connection_text(self._statuses, now)]
        if self.gpu_metrics is not None:
            parts.append(self.gpu_metrics.note(now))
        parts.append(self.yunikorn_poller.note)
        parts.append(self.kueue_positions.note)
        parts.append(self.discovery_note)
        parts.append(skipped_note(self.store))
        return ", ".join(p for p in parts if p)

    @property
    def synced(self) -> bool:
        """Every resource listed and watching, or known to be forbidden / not served."""
        statuses = self._statuses
        return len(statuses) == len(self._resources) and all(
            s.state is ReflectorState.SYNCED or s.state in _DEGRADED for s in statuses.values()
        )

    def wait_synced(self, timeout: float) -> bool:
        """Block until :attr:`synced` (tests, ``hpctop record``); False on timeout or failure."""
        deadline = time.monotonic() + timeout
        while not self.synced:
            if self.error is not None or time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    @property
    def listing(self) -> bool:
        """A first list is still under way: some resource has neither listed once nor been found
        forbidden / not served (and ``list_patience`` has not run out). The core waits for it.
        A session whose reflectors were never started (its store filled by its owner: the
        benchmarks) is never listing."""
        if self._task is None or self._clock() - self._started_at >= self.list_patience:
            return False
        statuses = self._statuses
        if len(statuses) < len(self._resources):
            return True
        return not all(s.synced_once or s.state in _DEGRADED for s in statuses.values())

    def _view_stale(self) -> bool:
        """The view must be rebuilt: the store changed, the last first list ended since a listing
        view, or the core's result is ``idle_refresh`` old (see module doc)."""
        if self.store.version != self._view_version:
            return True
        if self._core_owed and not self._core_deferred():
            return True
        if not self._view_scheduled:
            return not self.listing
        return self._clock() - self._view_at >= self.idle_refresh

    @property
    def snapshot(self) -> Snapshot:
        """The latest view; rebuilt first when :meth:`_view_stale`, else only its ``now`` moves on."""
        with self._view_lock:
            if self._view_stale():
                self._refresh_coalesced()
            elif self._view_version >= 0:
                self._result = replace(self._result, now=self._clock())
            return self._snapshot

    @snapshot.setter
    def snapshot(self, value: Snapshot) -> None:
        self._snapshot = value

    @property
    def result(self) -> ScheduleResult:
        return self._result

    @result.setter
    def result(self, value: ScheduleResult) -> None:
        self._result = value

    def step(self, virtual_seconds: float = 0.0) -> None:
        """A live cluster has no clock to advance: take a fresh view if anything changed."""
        with self._view_lock:
            if self._view_stale():
                self._refresh_coalesced()
            else:
                self._result = replace(self._result, now=self._clock())

    def _refresh_coalesced(self) -> None:
        """Rebuild the view unless one was built less than ``min_refresh`` seconds ago and no
        resource changed state since (W15)."""
        if time.monotonic() - self._built_at < self.min_refresh and self._states() == self._view_states:
            self.refreshes_coalesced += 1
            return
        self.refresh(deferrable=True)

    def _states(self) -> tuple[tuple[str, str, int], ...]:
        """What the reflectors' statuses say beyond event counts: state and relists per resource."""
        return tuple((s.kind, s.state.value, s.lists) for s in self._statuses.values())

    def refresh(self, *, deferrable: bool = False) -> None:
        """A fresh snapshot from the store, scheduled by the core at wall-clock ``now``.

        Only the copy holds the store's lock (shared with the reflectors); the core runs on the
        frozen snapshot with the reflectors free to go on. While a first list is under way
        (:attr:`listing`) the snapshot comes without a core run (see module doc). A
        ``deferrable`` refresh (a tick's read of :attr:`snapshot`, not the refresh key) inside
        the core budget shows the new snapshot with the last result (module doc).
        """
        with self._view_lock:
            states = self._states()  # before the copy: a change after it is seen by the next read
            listing = self.listing  # before the copy too: a list that ends after it gets a core run
            snapshot = self.store.snapshot()  # LockedStore: under the lock shared with the reflectors
            now = self._clock()
            if listing:
                self._listing_view(states, snapshot, now)
                return
            started = time.perf_counter()
            # quotas from the cluster's own schedulers (Kueue, Volcano, YuniKorn) when it has them
            policy = policy_from_snapshot(snapshot, self._base_policy)
            if self._core_unchanged(snapshot, policy, now):
                # nothing the core reads changed (module doc): like a quiet tick, only ``now`` moves
                self._snapshot, self._result = snapshot, replace(self._result, now=now)
                self._view_version, self._built_at, self._view_states = (
                    snapshot.version,
                    time.monotonic(),
                    states,
                )
                self._core_owed = False  # (what was owed, if anything, was undone since)
                self.core_runs_skipped += 1
                return
            if deferrable and self._view_scheduled and policy == self.policy and self._core_deferred():
                # the core budget (module doc): rows from the new snapshot, plans from the last run
                self._snapshot, self._result = snapshot, replace(self._result, now=now)
                self._view_version, self._built_at, self._view_states = (
                    snapshot.version,
                    time.monotonic(),
                    states,
                )
                self._core_owed = True
                self.core_runs_deferred += 1
                return
            self.policy = policy
            decided_at = self._decision_now(now)
            core_started = time.perf_counter()
            result = self._schedule(snapshot, self.policy, decided_at)
            self._core_cost, self._core_ended = time.perf_counter() - core_started, time.monotonic()
            self._core_owed = False
            self._core_snapshot = self._inputs_snapshot = snapshot
            if decided_at != now:  # shown at the wall clock: ages and "ETA in" count from now
                result = replace(result, now=now)
                self.core_runs_at_kept_now += 1
            self.schedule_seconds += time.perf_counter() - started
            self.schedule_runs += 1
            self._snapshot, self._result = snapshot, result
            self._view_version, self._view_at, self._view_scheduled = snapshot.version, now, True
            self._built_at, self._view_states = time.monotonic(), states

    def _core_deferred(self) -> bool:
        """Inside the core budget: the last core run took ``CORE_DEFER_ABOVE`` or more and ended
        less than ``cost * (1 / core_share - 1)`` ago (so event-driven runs take at most
        ``core_share`` of a core; module doc)."""
        cost = self._core_cost
        if cost < CORE_DEFER_ABOVE:
            return False
        return time.monotonic() - self._core_ended < cost * (1.0 / self.core_share - 1.0)

    def _decision_now(self, now: float) -> float:
        """The ``now`` the core decides at: the last clock move's while it is under ``clock_step``
        old (and not in the future: a clock set back moves it), else ``now``, which becomes it."""
        if 0.0 <= now - self.core_now < self.clock_step:
            return self.core_now
        self.core_now = now
        return now

    def _core_unchanged(self, snapshot: Snapshot, policy: Policy, now: float) -> bool:
        """The core (not a scheduler given instead) ran under ``idle_refresh`` ago, on the same
        policy, and ``snapshot`` changes nothing it reads (``scheduling.inputs.same_inputs``).

        ``snapshot`` is compared with the newest snapshot already found equal in inputs to the
        core's (``_inputs_snapshot``), not with the core's own: ``same_inputs`` is an equivalence
        (same keys in the same order, equal input tuples), so the answer is the same, but the
        comparison walks only the objects that changed since that snapshot. Why (issue 16, K1):
        against the core's snapshot it walked every job and pod changed since the last core run,
        a set that grows tick by tick on a busy cluster (~170 ms a tick at 50k pods, 5,000
        status events/s, some seconds after a core run: most of the 50k jobs)."""
        if not (
            self._skip_unchanged
            and self._view_scheduled
            and self._view_version >= 0
            and now - self._view_at < self.idle_refresh
            and policy == self.policy
            and self._core_snapshot is not None
        ):
            return False
        base = self._inputs_snapshot if self._inputs_snapshot is not None else self._core_snapshot
        if not same_inputs(base, snapshot):
            return False
        self._inputs_snapshot = snapshot
        return True

    def _listing_view(self, states: tuple[tuple[str, str, int], ...], snapshot: Snapshot, now: float) -> None:
        """Show ``snapshot`` without a core run (a first list is under way): rows, no plans."""
        self._snapshot, self._result = snapshot, _listing_result(now)
        self._view_version, self._view_at, self._view_scheduled = snapshot.version, now, False
        self._built_at, self._view_states = time.monotonic(), states
        self.listing_views += 1


#: allocations between two young collections once the store is synced (CPython's default: 700)
WATCH_GC_THRESHOLD = 100_000


def settle_heap() -> None:
    """Collect, freeze what is alive (the synced store and the view), and collect the young
    generation ``WATCH_GC_THRESHOLD`` allocations apart instead of 700.

    Why the threshold (issue 16, P3): every watch event replaces a pod and its job row, so the
    objects that survive are a steady stream, and the default threshold ran a young collection
    every ~400 events and a middle one every ~4,000, each traversing the new snapshot maps (one
    entry per pod) and everything that survived since: ~25 % of an event's CPU at 20k pods
    (bench/README.md, "Issue 16, fourth session"). At 10,000 the same collections run 14 times
    less often; cyclic garbage (none in the store) waits a little longer. The two older
    generations keep CPython's thresholds. Why 100,000 rather than 10,000 (session 13): each
    young collection traverses the fresh snapshot maps (one entry per pod), so at 50k pods under
    K1's honest stream a young collection held the GIL 27 ms (median) to 359 ms, 32 of them in
    60 ticks (2.1 s); at 100,000, one of 189 ms in the same ticks, and K1's key p95 was 35 / 5 ms
    against 146 / 42 ms at 10,000 (bench/README.md, session 13, live).
    """
    gc.collect()
    heap.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(WATCH_GC_THRESHOLD, middle, old)


class HeapFreeze:
    """The frozen heap, shared by the sessions of a process: frozen (:func:`settle_heap`) by the
    first session that syncs, unfrozen, with the GC's thresholds put back, when the last one that
    holds it closes. ``gc.freeze()`` is process-wide, so one session must not unfreeze the heap
    under another still open; and each later freeze only moves what came since (a second
    session's store). Callers hold :attr:`lock`."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.holders = 0
        self._threshold: tuple[int, int, int] | None = None

    def hold(self) -> None:
        if self.holders == 0:
            self._threshold = gc.get_threshold()
        self.holders += 1
        settle_heap()

    def release(self) -> None:
        self.holders -= 1
        if self.holders == 0:
            heap.unfreeze()
            if self._threshold is not None:
                gc.set_threshold(*self._threshold)


#: the process's frozen heap (:class:`HeapFreeze`)
_HEAP = HeapFreeze()


def _listing_result(now: float) -> ScheduleResult:
    """The result shown beside a snapshot taken during the first lists: no plans, no partitions
    (the jobs table shows its rows without priority or reason until the core's first run)."""
    return ScheduleResult(
        now=now, cluster=Resources(), partitions=(), queues={}, plans={}, placements=(), pending_order=()
    )


def object_path(kind: str, namespace: str, name: str, resources: Sequence[ResourceSpec] = ()) -> str:
    """The API path of a namespaced object: at the version the cluster serves (the discovered
    ``resources``, one registry), pods at ``v1``. ``KeyError`` for a kind it does not serve."""
    if kind == "Pod":
        return f"{PODS.path(namespace)}/{name}"
    for spec in resources:
        if spec.kind == kind and spec.namespaced:
            return f"{spec.path(namespace)}/{name}"
    raise KeyError(kind)


class LiveLog:
    """A container's log followed on the session's loop; the console reads :meth:`lines`."""

    def __init__(self) -> None:
        self._lines: deque[str] = deque(maxlen=LOG_KEPT)
        self._note = "connecting"
        self.future: concurrent.futures.Future[None] | None = None

    def set_note(self, note: str) -> None:
        self._note = note

    async def follow(self, client: KubeClient, path: str, params: Mapping[str, str]) -> None:
        try:
            async with client.stream(path, params) as lines:
                self._note = "following"
                async for raw in lines:
                    self._lines.append(raw.decode("utf-8", "replace").rstrip("\r\n"))
            self._note = "ended (the container stopped or the server closed the stream)"
        except asyncio.CancelledError:
            self._note = "closed"
            raise
        except Exception as exc:  # shown in the log screen's title line
            self._note = f"failed: {type(exc).__name__}: {exc}"

    def lines(self) -> list[str]:
        return list(self._lines)

    @property
    def note(self) -> str:
        return self._note

    def close(self) -> None:
        if self.future is not None:
            self.future.cancel()


def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        with contextlib.suppress(RuntimeError):
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()


__all__ = [
    "ACTION_KINDS",
    "LiveConsoleSession",
    "LiveLog",
    "LockedStore",
    "connection_text",
    "object_path",
    "settle_heap",
]


def skipped_note(store: Store) -> str:
    """The status bar's word on malformed objects: how many were skipped, and the latest note.

    Read without the store's lock (the status bar must never wait on the reflectors): a count
    changing under the read is simply read again at the next repaint.
    """
    try:
        total = sum(list(store.skipped.values()))
        latest = next(reversed(list(store.notes.values())), "") if total else ""
    except RuntimeError:  # changed while read
        return ""
    if not total:
        return ""
    return f"{total} malformed object(s) skipped" + (f" (latest: {latest[:120]})" if latest else "")
