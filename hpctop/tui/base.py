"""The console's state and the plumbing every part of it shares.

:class:`ConsoleBase` holds what the app knows (the session, the last snapshot and result it
published, the journal, the permission cache, whether an action is waiting for the server) and
the few helpers every part uses: the main screen's widgets whichever screen is on top, running a
blocking call off Textual's loop (:meth:`ConsoleBase.off_loop`), the status bar, and the fault
handling (an unexpected exception in a key, a dialog's answer or a worker is a status-bar line
and an entry in the fault log; only one that Textual itself cannot survive ends the console, with
a one-line message and exit status 1, never a traceback with local variables).

The parts build on it in one line: :mod:`hpctop.tui.access` (permissions) →
:mod:`hpctop.tui.ticking` (the tick and publishing) → :mod:`hpctop.tui.flows` (action dialogs),
with :mod:`hpctop.tui.palette` and :mod:`hpctop.tui.detail_feed` beside; :mod:`hpctop.tui.app`
composes them and wires the keys.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from rich.text import Text
from textual.app import App
from textual.css.query import NoMatches
from textual.widget import Widget

from hpctop.actions.requests import (
    SLINKY_SCHEDULER,
    ActionKind,
    Permission,
)
from hpctop.errors import ConfigError
from hpctop.model.history import ActionJournal, History
from hpctop.model.objects import JobKey
from hpctop.runtime.protocols import LiveActions, SessionLike
from hpctop.tui.faults import FaultLog, one_line
from hpctop.tui.gpumap import GpuMap
from hpctop.tui.keymap import validate_keymap
from hpctop.tui.rows import RowCache
from hpctop.tui.sanitize import sanitize_display
from hpctop.tui.screens.detail import JobDetailScreen
from hpctop.tui.themes import DEFAULT_THEME, load_themes
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.queues import QueuePane
from hpctop.tui.widgets.status import StatusBar, StatusInfo

SIMULATED_PREFIXES = ("demo", "scenario", "sample", "replay")
#: real seconds of publishes the achieved speed is measured over
PACE_WINDOW = 5.0
PACE_SAMPLES = 256
#: below this share of the requested speed the status bar says the simulation cannot keep up
KEEPS_UP = 0.9
W = TypeVar("W", bound=Widget)
T = TypeVar("T")
A = TypeVar("A")


def survives(handler: Callable[..., None]) -> Callable[..., None]:
    """A message handler of the app whose exception is reported, not the end of the console
    (Textual stops a message pump whose handler raised: the app's own would stop with it)."""

    @functools.wraps(handler)
    def guarded(self: ConsoleBase, *args: Any) -> None:
        try:
            handler(self, *args)
        except Exception as exc:
            self.report_fault(handler.__name__, exc)

    return guarded


class ConsoleBase(App[None]):
    """State and shared plumbing of the console (see the module doc)."""

    def __init__(
        self,
        session: SessionLike,
        *,
        theme: str = DEFAULT_THEME,
        read_only: bool = False,
        keymap: Mapping[str, str] | None = None,
        tick_interval: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
        user: str | None = None,
        stale_after: float = 30.0,
        show_charts: bool = True,
    ) -> None:
        """The console for ``session``.

        ``keymap`` remaps bindings by name (``{"cancel": "x"}``; names in ``hpctop.tui.keymap.KEYMAP``);
        ``tick_interval`` is real seconds between steps (0: never step on its own, for tests); ``clock``
        is the real-time source for tick deltas (freeze it in tests).
        """
        super().__init__()
        self.session = session
        # decided once, here: no key, command or screen turns writes on (RELIABILITY.md R3)
        self._read_only = read_only or bool(getattr(session.actuator, "read_only", False))
        self.user_keymap = validate_keymap(keymap or {})
        self.tick_interval = tick_interval
        #: the most real time one step may cover (see :meth:`tick`)
        self.max_tick_lag = 2 * tick_interval if tick_interval > 0 else float("inf")
        self.clock = clock
        self.user = user or os.environ.get("USER") or ""
        self.stale_after = stale_after
        self.show_charts = show_charts
        #: the C key's choice (None: the terminal size decides)
        self.charts_wanted: bool | None = None
        self.history = History()
        self.journal = ActionJournal()
        self.paused = False
        self.hpctop_themes = load_themes()
        if theme not in self.hpctop_themes:
            raise ConfigError(f"unknown theme {theme!r}; available: {', '.join(sorted(self.hpctop_themes))}")
        self._initial_theme = theme
        self._lock = threading.Lock()
        self._stepping = False
        self._last_tick = clock()
        #: real time (``clock``) of the last publish: a simulated snapshot's age is real time since
        #: it was shown (its own timestamps are virtual, so they always said "<1s")
        self.published_at = clock()
        #: (real, virtual) at each publish, for the speed the simulation achieves
        self._pace: deque[tuple[float, float]] = deque(maxlen=PACE_SAMPLES)
        #: ctrl+r or an action's outcome asked for a refresh while a step held the session
        self._refresh_wanted = False
        self._rows = RowCache()
        self._gpu_version: int | None = None
        self._gpu_map = GpuMap([], [], [])
        self.snapshot = session.snapshot
        self.result = session.result
        self.publishes = 0
        self.skipped_ticks = 0
        self.live: LiveActions | None = session if isinstance(session, LiveActions) else None
        self.actions_in_thread = bool(getattr(session, "actions_in_thread", False))
        #: (namespace, owner kind) → what the rules review says; absent: not asked yet
        self.permission_cache: dict[tuple[str, str], Mapping[ActionKind, Permission]] = {}
        self._permissions_pending: set[str] = set()
        #: (namespace, kind, action) → (when, why): refused by the server itself (a 403), greyed out
        #: for DENIED_TTL seconds even where the rules review says yes
        self.denied: dict[tuple[str, str, ActionKind], tuple[float, str]] = {}
        self._binding_state: object = None
        #: an action is waiting for the server: a second one is refused rather than interleaved
        self.action_busy = False
        #: where unexpected exceptions go (never the screen: Textual's report prints locals)
        self.faults = FaultLog()
        #: the last one, as the status bar shows it
        self.fault_notice = ""
        self._fatal: BaseException | None = None
        self._fault_seen: tuple[str, str] = ("", "")

    @property
    def read_only(self) -> bool:
        """Read-only mode, fixed when the console starts (a property with no setter: no runtime toggle)."""
        return self._read_only

    def _main(self, kind: type[W], selector: str) -> W:
        """A widget of the main screen, whichever screen is on top (detail, help, a modal)."""
        if not self.screen_stack:
            raise NoMatches("no main screen (shutting down)")
        return self.screen_stack[0].query_one(selector, kind)

    @property
    def simulated(self) -> bool:
        return self.session.source_name.startswith(SIMULATED_PREFIXES)

    def _current_key(self) -> JobKey | None:
        screen = self.screen
        if isinstance(screen, JobDetailScreen):
            return screen.key
        try:
            return self._main(JobsTable, "#jobs").current_key
        except NoMatches:
            return None

    def _is_slinky(self, key: JobKey) -> bool:
        job = self.snapshot.jobs.get(key)
        return job is not None and job.scheduler_name == SLINKY_SCHEDULER

    def _selected_queue(self) -> str | None:
        try:
            return self._main(QueuePane, "#queues").current
        except NoMatches:
            return None

    def _update_status(self) -> None:
        running, pending = getattr(self, "_status_counts", (0, 0))
        result = self.result
        snapshot = self.snapshot
        total = sum(p.capacity.gpu for p in result.partitions) / 1000
        free = sum(p.free.gpu for p in result.partitions) / 1000
        down = sum(1 for n in snapshot.nodes.values() if not n.schedulable)
        if self.simulated:
            age = max(self.clock() - self.published_at, 0.0)
        else:  # a live snapshot's clock is the wall clock: its age goes on between publishes
            age = max(self.session.now - snapshot.taken_at, 0.0)
        connection = str(
            getattr(self.session, "connection", "") or ("simulated" if self.simulated else "live")
        )
        info = StatusInfo(
            source=self.session.source_name,
            connection=connection,
            age=age,
            stale=age > self.stale_after or connection.startswith("stale"),
            nodes=len(snapshot.nodes),
            nodes_down=down,
            gpus_used=round(sum(p.allocated.gpu for p in result.partitions) / 1000, 3),
            gpus_free=round(free, 3),
            gpus_total=round(total, 3),
            running=running,
            pending=pending,
            read_only=self.read_only,
            clock=self.session.now,
            speed=self.session.speed,
            paused=self.paused,
            simulated=self.simulated,
            notice=self.fault_notice,
            achieved=self.achieved_speed(),
        )
        self._main(StatusBar, "#status").show(info, self.theme_variables)

    def achieved_speed(self) -> float | None:
        """Virtual seconds per real second over the last :data:`PACE_WINDOW` seconds, when the
        simulation runs below :data:`KEEPS_UP` of the requested speed; None while it keeps up,
        is paused, is not simulated, or has not run long enough to say."""
        if not self.simulated or self.paused or len(self._pace) < 2:
            return None
        newest_real, newest_virtual = self._pace[-1]
        oldest = next(((r, v) for r, v in self._pace if newest_real - r <= PACE_WINDOW), None)
        if oldest is None or newest_real - oldest[0] < 1.0:
            return None
        achieved = (newest_virtual - oldest[1]) / (newest_real - oldest[0])
        return achieved if achieved < KEEPS_UP * self.session.speed else None

    def pace_reset(self) -> None:
        """Forget the measured speed (after a pause or a speed change)."""
        self._pace.clear()

    # -- faults ----------------------------------------------------------------------------------

    def report_fault(self, where: str, exc: BaseException) -> None:
        """An unexpected exception: details to the fault log, one line to the status bar; the
        console goes on. The same fault again (a tick failing each time) is logged once."""
        seen = (where, one_line(exc))
        if seen != self._fault_seen:
            self._fault_seen = seen
            path = self.faults.write(where, exc)
            self.fault_notice = f"{where} failed: {seen[1]} (details: {path})"
        with contextlib.suppress(NoMatches):
            self._update_status()

    def guarded(self, callback: Callable[[A], None]) -> Callable[[A], None]:
        """``callback`` (a dialog's answer), its exception reported instead of ending the console."""

        def run(value: A) -> None:
            try:
                callback(value)
            except Exception as exc:
                self.action_busy = False  # the flow that failed is over: the next action may start
                self.report_fault(getattr(callback, "__name__", "dialog"), exc)

        return run

    async def run_action(
        self,
        action: Any,
        default_namespace: Any = None,
        namespaces: Mapping[str, Any] | None = None,
    ) -> bool:
        """Every key binding's action (the app's, a pane's, a screen's): an exception in one is a
        status-bar line and a log entry, not the end of the console."""
        try:
            return await super().run_action(action, default_namespace, namespaces)
        except Exception as exc:
            self.action_busy = False  # the flow that failed is over: the next action may start
            self.report_fault(f"key {action}" if isinstance(action, str) else "key", exc)
            return True

    def _handle_exception(self, error: Exception) -> None:
        # Textual 8's hook for an exception nothing caught (it ends the app): remembered for
        # _fatal_error, which reports it without the locals Textual's own report would print
        self._fatal = error
        super()._handle_exception(error)

    def _fatal_error(self) -> None:
        error = self._fatal
        where = self.faults.write("fatal", error) if error is not None else "(no details)"
        shown = one_line(error) if error is not None else "unknown error"
        self._exit_renderables.append(Text(f"hpctop: fatal error: {shown} (details: {where})"))
        self._close_messages_no_wait()

    def off_loop(self, work: Callable[[], T], done: Callable[[T], None], name: str) -> None:
        """``done(work())``: in a thread worker for a live session, inline for the simulator.

        ``done`` runs on Textual's loop either way; ``work`` must not touch widgets.
        """
        if not self.actions_in_thread:
            done(work())
            return

        def in_thread() -> None:
            try:
                value = work()
            except Exception as exc:  # shown, never lost with the worker
                with contextlib.suppress(RuntimeError):
                    self.call_from_thread(self._worker_failed, name, exc)
                return
            with contextlib.suppress(RuntimeError):  # the app closed meanwhile
                self.call_from_thread(self.guarded(done), value)

        self.run_worker(in_thread, thread=True, group="actions", exit_on_error=False, name=name)

    def _worker_failed(self, name: str, exc: Exception) -> None:
        self.action_busy = False
        self.notify(
            sanitize_display(f"{name} failed: {type(exc).__name__}: {exc}", cap=400),
            severity="error",
            markup=False,
            timeout=8,
        )
