"""``make_app``: wires a session to the panes. Panes, screens and widgets live in their own modules.

The app owns three things and nothing else: the tick (advance the session, then publish the new
snapshot to every pane), the key/palette wiring, and the action flow (preview → confirm → execute →
notify → refresh). It never mutates the session's data: it reads the session's ``snapshot`` and
``result`` references, which are replaced (not mutated) on each step.

Actions on a live cluster are HTTP round trips (a dry run, an access review, the request itself),
so a session that sets ``actions_in_thread`` gets its previews and executes run in a thread worker
and the answer handed back with ``call_from_thread``: a slow or stalled API server never freezes
the keyboard. The simulator's actuator is in memory and stays synchronous (its tests and
snapshots see the confirmation right after the key press). A session that also offers
:class:`LiveActions` (permissions, identity, audit log) gets the action keys greyed out where the
cluster's rules review says "probably denied", a "What may I do?" screen, and the audit log's
records in the job detail.

Ticking: a timer every ``tick_interval`` real seconds runs ``session.step(speed * dt)`` in a thread
worker, so a slow step (a big scenario at high speed) never blocks a keypress; rows for the jobs
pane are built in that worker too. The session is not thread-safe, so every call into it holds
``self._lock``, and a tick that finds a step still running is skipped rather than queued. With
``tick_interval=0`` (tests) nothing runs on its own: tests call :meth:`HpctopApp.step_now`.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar, runtime_checkable

from rich.text import Text
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Static

from hpctop.actions.requests import (
    SLINKY_SCHEDULER,
    YUNIKORN_QUEUE,
    ActionKind,
    ActionRequest,
    Actuator,
    Forbidden,
    Permission,
    Preview,
    QueueActuator,
    QueueChange,
    YuniKornActuator,
    is_queue_request,
    is_yunikorn_request,
    queue_request,
    yunikorn_request,
)
from hpctop.errors import ActionRefused, ConfigError, HpctopError
from hpctop.model.history import ActionJournal, History, JournalEntry
from hpctop.model.objects import JobKey
from hpctop.model.policy import Policy
from hpctop.model.store import Snapshot
from hpctop.scheduling.types import ScheduleResult
from hpctop.tui.commands import HpctopCommands
from hpctop.tui.gpumap import GpuMap
from hpctop.tui.keymap import MUTATING, bindings, validate_keymap
from hpctop.tui.rows import Filters, JobRow, RowCache
from hpctop.tui.sanitize import sanitize_display
from hpctop.tui.screens.confirm import ConfirmScreen, PickScreen, PromptScreen, preview_text
from hpctop.tui.screens.detail import JobDetailScreen, detail_text
from hpctop.tui.screens.help import HelpScreen
from hpctop.tui.screens.permissions import PermissionsScreen, permission_lines
from hpctop.tui.themes import DEFAULT_THEME, DEFAULT_VARIABLES, load_themes
from hpctop.tui.widgets.charts import ChartsPane
from hpctop.tui.widgets.gpus import GpuPane
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.queues import QueuePane, with_local_queues
from hpctop.tui.widgets.status import StatusBar, StatusInfo

if TYPE_CHECKING:
    from hpctop.actions.audit import AuditRecord

SIMULATED_PREFIXES = ("demo", "scenario", "sample", "replay")
#: Volcano's job kind as hpctop keys it: its priority is a PriorityClass name, not a number
VOLCANO_JOB = "Job.batch.volcano.sh"
#: owner kinds whose permissions are asked together (one rules review per namespace covers all);
#: a ClusterQueue's are kept under the session's default namespace (its rules review shows the
#: cluster-wide grants too), a LocalQueue's under its own namespace
PERMISSION_KINDS = ("Job", "Deployment", "Pod", "Workload", "ClusterQueue", "LocalQueue")
#: real seconds an action the server refused with a 403 stays greyed out, whatever the rules
#: review says: the server's answer outranks the review (a webhook or policy the review cannot see)
DENIED_TTL = 300.0
ACTION_VALUES = frozenset(k.value for k in ActionKind)
W = TypeVar("W", bound=Widget)
T = TypeVar("T")


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


class HpctopApp(App[None]):
    CSS_PATH = "hpctop.tcss"
    TITLE = "hpctop"
    BINDINGS: ClassVar[list[Binding | tuple[str, str] | tuple[str, str, str]]] = list(bindings("app"))
    COMMANDS = App.COMMANDS | {HpctopCommands}
    # no "quit" confirmation, no ctrl+c copy surprise: q quits
    ENABLE_COMMAND_PALETTE = True

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

    @property
    def read_only(self) -> bool:
        """Read-only mode, fixed when the console starts (a property with no setter: no runtime toggle)."""
        return self._read_only

    # -- composition -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with Horizontal(id="top"):
            yield GpuPane(id="gpus")
            yield QueuePane(id="queues")
        yield ChartsPane(id="charts")
        yield JobsTable(user=self.user, id="jobs")
        yield Static(id="jobs-info")
        yield Footer()

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {**super().get_theme_variable_defaults(), **DEFAULT_VARIABLES}

    def on_mount(self) -> None:
        for theme in self.hpctop_themes.values():
            self.register_theme(theme)
        self.theme = self._initial_theme
        if self.user_keymap:
            self.set_keymap(self.user_keymap)
        self._main(GpuPane, "#gpus").border_title = "GPUs"
        self._main(QueuePane, "#queues").border_title = "Queues"
        self._main(JobsTable, "#jobs").border_title = "Jobs"
        self._apply_size(self.size.width, self.size.height)
        self._main(JobsTable, "#jobs").read_only = self.read_only
        self._main(JobsTable, "#jobs").focus()
        self.theme_changed_signal.subscribe(self, lambda _theme: self._repaint_all())
        self.publish(
            self.session.snapshot,
            self.session.result,
            self._rows.rows(self.session.snapshot.jobs, self.session.result.plans),
        )
        if self.tick_interval > 0:
            self.set_interval(self.tick_interval, self.tick, name="tick")
        if self.live is not None and not self.read_only:
            self.fetch_permissions(self.live.default_namespace)

    # -- layout by terminal size (the classes are described in hpctop.tcss) ------------------------

    #: rows from which the charts are shown unless the user said otherwise (C)
    CHARTS_FROM_HEIGHT = 44

    def on_resize(self, event: Any) -> None:
        self._apply_size(event.size.width, event.size.height)

    def _apply_size(self, width: int, height: int) -> None:
        """Flip the size classes; the stylesheet decides what each one hides or shrinks."""
        band = "tall" if height >= 44 else "mid" if height >= 32 else "short" if height >= 20 else "tiny"
        for name in ("tall", "mid", "short", "tiny"):
            self.set_class(name == band, f"-h-{name}")
        self.set_class(width < 110, "-w-narrow")
        wanted = self.charts_wanted
        self._show_charts(
            self.show_charts and height >= self.CHARTS_FROM_HEIGHT if wanted is None else wanted
        )

    def _show_charts(self, shown: bool) -> None:
        was = self.has_class("-charts")
        self.set_class(shown, "-charts")
        if shown and not was and self.screen_stack:
            with contextlib.suppress(NoMatches):
                self._main(ChartsPane, "#charts").update_from(self.history)

    def action_toggle_charts(self) -> None:
        """C: show or hide the charts whatever the size (at a small size they take the GPU and
        queue panes' place, so the jobs keep their rows)."""
        self.charts_wanted = not self.has_class("-charts")
        self._show_charts(self.charts_wanted)

    def _main(self, kind: type[W], selector: str) -> W:
        """A widget of the main screen, whichever screen is on top (detail, help, a modal)."""
        if not self.screen_stack:
            raise NoMatches("no main screen (shutting down)")
        return self.screen_stack[0].query_one(selector, kind)

    # -- ticking ---------------------------------------------------------------------------------

    @property
    def simulated(self) -> bool:
        return self.session.source_name.startswith(SIMULATED_PREFIXES)

    def tick(self) -> None:
        """Timer callback: start one step in a thread unless one is still running."""
        if self._stepping:
            self.skipped_ticks += 1
            return
        now = self.clock()
        # When a step takes longer than the tick (a high speed on a big cluster), the simulation
        # falls behind the requested speed instead of catching up in ever larger steps: a step
        # never covers more than two ticks of real time, so the screen keeps moving smoothly.
        dt = min(now - self._last_tick, self.max_tick_lag)
        self._last_tick = now
        virtual = 0.0 if self.paused or not self.simulated else self.session.speed * dt
        self._stepping = True
        self.run_worker(
            lambda: self._step_in_thread(virtual), thread=True, group="tick", exit_on_error=False, name="step"
        )

    def _step_in_thread(self, virtual: float) -> None:
        try:
            with self._lock:
                if virtual > 0:
                    self.session.step(virtual)
                snapshot, result = self.session.snapshot, self.session.result
                rows = self._rows.rows(snapshot.jobs, result.plans)
                self.history.record(snapshot, result)  # O(jobs), here: publish's call then returns at once
            with contextlib.suppress(NoMatches):  # the panes' heavy publish work, off the UI thread
                self._main(JobsTable, "#jobs").prepare(rows, result.now)
                self._main(GpuPane, "#gpus").prepare(snapshot, result.partitions)
            previous = (self.snapshot, self.result)  # freed below, in this thread, not on the UI's
            self.call_from_thread(self.publish, snapshot, result, rows)
            del previous
        finally:
            self._stepping = False

    def step_now(self, virtual_seconds: float) -> None:
        """Advance and publish synchronously (tests, and ``tick_interval=0``)."""
        with self._lock:
            if virtual_seconds > 0:
                self.session.step(virtual_seconds)
            snapshot, result = self.session.snapshot, self.session.result
            rows = self._rows.rows(snapshot.jobs, result.plans)
        self.publish(snapshot, result, rows)

    def refresh_session(self) -> None:
        with self._lock:
            self.session.refresh()
            snapshot, result = self.session.snapshot, self.session.result
            rows = self._rows.rows(snapshot.jobs, result.plans)
        self.publish(snapshot, result, rows)

    def publish(self, snapshot: Snapshot, result: ScheduleResult, rows: list[JobRow]) -> None:
        """Show a new snapshot in every pane (main thread)."""
        self.publishes += 1
        self.snapshot, self.result = snapshot, result
        now = result.now
        queue_order = list(result.queues)
        jobs = self._main(JobsTable, "#jobs")
        jobs.set_queue_order(queue_order)
        # same rows as last time: keep the order (re-sorting 100k rows every tick costs ~50 ms)
        jobs.set_rows(rows, now, resort=self._rows.changed)
        self._update_jobs_info()
        if snapshot.version != self._gpu_version:
            self._gpu_version = snapshot.version
            self._gpu_map = self._main(GpuPane, "#gpus").map_for(snapshot, result.partitions)
            self._main(GpuPane, "#gpus").set_map(self._gpu_map, queue_order)
        self._main(GpuPane, "#gpus").set_metrics(getattr(self.session, "gpu_metrics", None))
        shown, local = with_local_queues(result.queues, snapshot.queues)
        self._main(QueuePane, "#queues").set_queues(shown, result.cluster.gpu, local)
        self.history.record(snapshot, result)
        charts = self._main(ChartsPane, "#charts")
        if charts.display:
            charts.update_from(self.history)
        counts = self._rows.counts
        self._status_counts = (counts.get("running", 0), counts.get("pending", 0))
        self._update_status()
        screen = self.screen
        if isinstance(screen, JobDetailScreen):
            screen.refresh_body()
        self._sync_bindings()

    def _update_status(self) -> None:
        running, pending = getattr(self, "_status_counts", (0, 0))
        result = self.result
        snapshot = self.snapshot
        total = sum(p.capacity.gpu for p in result.partitions) / 1000
        free = sum(p.free.gpu for p in result.partitions) / 1000
        down = sum(1 for n in snapshot.nodes.values() if not n.schedulable)
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
        )
        self._main(StatusBar, "#status").show(info, self.theme_variables)

    def _update_jobs_info(self) -> None:
        jobs = self._main(JobsTable, "#jobs")
        self._main(Static, "#jobs-info").update(Text(jobs.status_line(), no_wrap=True, overflow="ellipsis"))

    def _repaint_all(self) -> None:
        self._main(GpuPane, "#gpus").rebuild()
        self._main(QueuePane, "#queues").refresh()
        self._main(JobsTable, "#jobs").refresh()
        self._main(ChartsPane, "#charts").update_from(self.history)  # series take the theme's colours
        self._update_status()

    # -- read-only -------------------------------------------------------------------------------

    #: actions read-only mode refuses (check_action hides their keys), and the word for each
    REFUSED_READ_ONLY: ClassVar[dict[str, str]] = {
        "job_action": "",
        "queue_stop": "queue",
        "queue_edit": "edit queue",
        "mark": "mark",
    }

    async def run_action(self, action: Any, default_namespace: Any = None, namespaces: Any = None) -> bool:
        """Every key and command goes through here: in read-only mode a refused one says so
        (a key that silently did nothing looked broken), and is still not run."""
        if self.read_only and isinstance(action, str):
            name, _, rest = action.rpartition(".")[2].partition("(")
            if name in self.REFUSED_READ_ONLY:
                what = rest.strip("')\"") or self.REFUSED_READ_ONLY[name]
                if name == "queue_stop":
                    what = f"{what} queue"
                self.notify(
                    f"Read-only: {what} refused (nothing is sent)",
                    severity="warning",
                    markup=False,
                    timeout=4,
                )
                return True
        return await super().run_action(action, default_namespace, namespaces)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "job_action":
            if self.read_only:
                return False
            permission = self.permission_for(str(parameters[0])) if parameters else None
            # None greys the key out in the footer: the rules review is only a hint, but acting
            # against "probably denied" is not offered (help and "What may I do?" say why).
            return None if permission is not None and permission.allowed is False else True
        if action == "queue_edit":
            if self.read_only:
                return False
            permission = self.yunikorn_permission()
            return None if permission is not None and permission.allowed is False else True
        if action == "queue_stop":
            if self.read_only:
                return False
            permission = self.queue_permission(str(parameters[0])) if parameters else None
            return None if permission is not None and permission.allowed is False else True
        return not (action in ("speed", "pause") and not self.simulated)

    # -- permissions (live sessions) -------------------------------------------------------------

    def _current_key(self) -> JobKey | None:
        screen = self.screen
        if isinstance(screen, JobDetailScreen):
            return screen.key
        try:
            return self._main(JobsTable, "#jobs").current_key
        except NoMatches:
            return None

    def permission_for(self, kind: str, key: JobKey | None = None) -> Permission | None:
        """What the rules review said about ``kind`` on the selected job (None: unknown or not asked).

        A namespace not asked yet is asked now, in a worker; the footer follows when it answers.
        """
        if self.live is None or self.read_only or kind not in ACTION_VALUES:
            return None
        key = key if key is not None else self._current_key()
        if key is None:
            return None
        namespace, owner, _ = key
        action = ActionKind(kind)
        if action in (ActionKind.PRIORITY, ActionKind.MOVE) and self._is_slinky(key):
            # A Slinky priority/partition change is a merge patch of the owner, the RBAC of its
            # hold (patch <kind>); a bare pod has no patch-based hold: unknown, the server decides.
            if owner == "Pod":
                return self.denied_permission(namespace, owner, action)
            held = self._permission(namespace, owner, ActionKind.HOLD)
            return self.denied_permission(namespace, owner, action) or held
        return self._permission(namespace, owner, action)

    def _is_slinky(self, key: JobKey) -> bool:
        job = self.snapshot.jobs.get(key)
        return job is not None and job.scheduler_name == SLINKY_SCHEDULER

    def denied_permission(self, namespace: str, kind: str, action: ActionKind) -> Permission | None:
        """The server's own 403 for this action, while it still counts (``DENIED_TTL``)."""
        refused = self.denied.get((namespace, kind, action))
        if refused is None:
            return None
        at, why = refused
        if self.clock() - at < DENIED_TTL:
            return Permission(False, why)
        del self.denied[(namespace, kind, action)]
        return None

    def _permission(self, namespace: str, kind: str, action: ActionKind) -> Permission | None:
        """A 403 from the server first, else the cached rules review (asked now, in a worker, if absent)."""
        refused = self.denied_permission(namespace, kind, action)
        if refused is not None:
            return refused
        permissions = self.permission_cache.get((namespace, kind))
        if permissions is None:
            self.fetch_permissions(namespace, kinds=(kind,))
            return None
        return permissions.get(action)

    def queue_permission(self, mode: str, path: str | None = None) -> Permission | None:
        """What the rules review said about closing (``close``) or opening (``open``) a Kueue queue
        (the selected one by default); None: unknown, not asked yet, or not a Kueue queue."""
        if self.live is None or self.read_only:
            return None
        target = self.queue_target(path)
        if isinstance(target, str):
            return None
        kind, _, namespace = target
        action = ActionKind.RELEASE if mode == "open" else ActionKind.HOLD
        return self._permission(namespace or self.live.default_namespace, kind, action)

    def yunikorn_permission(self) -> Permission | None:
        """What the rules review of YuniKorn's namespace says about ``patch configmaps`` (``e``)."""
        if self.live is None or self.read_only:
            return None
        namespace = str(getattr(self.session.actuator, "yunikorn_namespace", "yunikorn"))
        return self._permission(namespace, YUNIKORN_QUEUE, ActionKind.PRIORITY)

    def _selected_queue(self) -> str | None:
        try:
            return self._main(QueuePane, "#queues").current
        except NoMatches:
            return None

    def queue_target(self, path: str | None = None) -> tuple[str, str, str] | str:
        """(kind, name, namespace) of the Kueue queue at ``path`` (the selected row by default), or
        why it cannot be closed or opened from here."""
        path = path if path is not None else self._selected_queue()
        if path is None:
            return "no queue selected"
        info = self.snapshot.queues.get(path)
        shown = sanitize_display(path, cap=200)
        if info is None:
            where = "the simulated cluster's" if self.simulated else "hpctop's own"
            return (
                f"{shown} is one of {where} queues, not a Kueue ClusterQueue or LocalQueue: only a "
                "Kueue queue is closed or opened from hpctop (its spec.stopPolicy)"
            )
        if info.backend != "kueue" or info.kind not in ("cluster", "local"):
            return (
                f"{shown} is a {info.backend} {info.kind} queue: only a Kueue ClusterQueue or LocalQueue "
                f"is closed or opened from hpctop (its spec.stopPolicy){_queue_how(info.backend, info.kind)}"
            )
        if info.kind == "cluster":
            return ("ClusterQueue", info.name, "")
        namespace = path.rsplit(".", 1)[-1].split("/", 1)[0]
        return ("LocalQueue", info.name, namespace)

    def fetch_permissions(
        self,
        namespace: str,
        then: Callable[[dict[tuple[str, str], Mapping[ActionKind, Permission]]], None] | None = None,
        kinds: Iterable[str] = (),
    ) -> None:
        """Ask the rules review of ``namespace`` for the usual owner kinds, ``kinds`` and the kinds
        of the jobs listed there (JobSet, Volcano, Kubeflow, ...), off Textual's loop; ``then`` gets
        the answer (after the cache and the footer took it). One review per namespace covers all."""
        live = self.live
        if live is None or self.read_only or namespace in self._permissions_pending:
            return
        self._permissions_pending.add(namespace)
        listed = {key[1] for key in self.snapshot.jobs if key[0] == namespace}
        wanted = list(dict.fromkeys([*PERMISSION_KINDS, *kinds, *sorted(listed)]))

        def ask() -> dict[tuple[str, str], Mapping[ActionKind, Permission]]:
            out: dict[tuple[str, str], Mapping[ActionKind, Permission]] = {}
            for kind in wanted:
                try:
                    out[(namespace, kind)] = live.permissions(namespace, kind)
                except Exception:  # unknown: offer the keys, the server decides (and says why)
                    out[(namespace, kind)] = {}
            return out

        def got(answer: dict[tuple[str, str], Mapping[ActionKind, Permission]]) -> None:
            self._permissions_pending.discard(namespace)
            self.permission_cache.update(answer)
            self._sync_bindings(force=True)
            if then is not None:
                then(answer)

        self.off_loop(ask, got, "permissions")

    def _sync_bindings(self, force: bool = False) -> None:
        """Refresh the footer when the selected job's permissions differ from what it shows.

        Only on a change: a footer refresh recomposes it, which every tick would make visible.
        """
        if self.live is None or self.read_only:
            return
        key = self._current_key()
        scope = (key[0], key[1]) if key is not None else None
        queue = self.queue_target()
        qscope = (queue[2] or self.live.default_namespace, queue[0]) if not isinstance(queue, str) else None
        state = (
            scope,
            id(self.permission_cache.get(scope)) if scope else None,
            qscope,
            id(self.permission_cache.get(qscope)) if qscope else None,
            len(self.denied),
        )
        if force or state != self._binding_state:
            self._binding_state = state
            self.refresh_bindings()

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
                self.call_from_thread(done, value)

        self.run_worker(in_thread, thread=True, group="actions", exit_on_error=False, name=name)

    def _worker_failed(self, name: str, exc: Exception) -> None:
        self.action_busy = False
        self.notify(
            sanitize_display(f"{name} failed: {type(exc).__name__}: {exc}", cap=400),
            severity="error",
            markup=False,
            timeout=8,
        )

    def action_what_may_i_do(self) -> None:
        """The "What may I do?" screen: identity and, per namespace and kind, each action's answer."""
        live = self.live
        if live is None:
            lines = permission_lines(
                "this console's simulated user",
                {("(simulated)", "any"): {}},
                "read-only mode: no action is offered" if self.read_only else "allowed (simulated cluster)",
            )
            self.push_screen(PermissionsScreen(lines))
            return
        key = self._current_key()
        namespaces = list(dict.fromkeys([live.default_namespace] + ([key[0]] if key else [])))
        read_only = self.read_only

        def ask() -> tuple[str, dict[tuple[str, str], Mapping[ActionKind, Permission]]]:
            who = live.identity()
            table: dict[tuple[str, str], Mapping[ActionKind, Permission]] = {}
            for namespace in namespaces:
                for kind in PERMISSION_KINDS:
                    try:
                        table[(namespace, kind)] = live.permissions(namespace, kind)
                    except Exception as exc:
                        table[(namespace, kind)] = {}
                        who += f" (permissions of {namespace} unknown: {type(exc).__name__})"
            return who, table

        def show(answer: tuple[str, dict[tuple[str, str], Mapping[ActionKind, Permission]]]) -> None:
            who, table = answer
            if not read_only:
                self.permission_cache.update(table)
                self._sync_bindings(force=True)
            fallback = "read-only mode: no action is offered" if read_only else "unknown (ask failed)"
            self.push_screen(PermissionsScreen(permission_lines(who, table, fallback)))

        self.off_loop(ask, show, "permissions")

    # -- simple actions --------------------------------------------------------------------------

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            permissions: dict[str, str] | None = None
            key = self._current_key()
            if self.live is not None and not self.read_only and key is not None:
                permissions = {}
                for kind in ActionKind:
                    permission = self.permission_for(kind.value, key)
                    permissions[kind.value] = (
                        "not asked yet"
                        if permission is None
                        else permission.reason or str(permission.allowed)
                    )
                permissions = {f"{key[0]}/{key[1]}": "", **permissions}
            self.push_screen(HelpScreen(self.user_keymap, self.read_only, permissions))

    def action_focus_pane(self, name: str) -> None:
        widget = self._main(Widget, f"#{name}")
        if not widget.display:
            widget.display = True
        widget.focus()

    def action_zoom(self) -> None:
        zoom = self._main(GpuPane, "#gpus").cycle_zoom()
        self.notify(f"GPU pane: {zoom} view", timeout=2, markup=False)

    def action_speed(self, factor: float) -> None:
        self.session.speed = min(max(self.session.speed * factor, 1 / 64), 100_000.0)
        self._update_status()

    def action_pause(self) -> None:
        self.paused = not self.paused
        self._update_status()

    def action_refresh(self) -> None:
        self.refresh_session()

    def set_theme(self, name: str) -> None:
        self.theme = name

    def toggle_pane(self, name: str) -> None:
        if name == "charts":
            self.action_toggle_charts()
            return
        widget = self._main(Widget, f"#{name}")
        widget.display = not widget.display
        if name == "charts" and widget.display:
            self._main(ChartsPane, "#charts").update_from(self.history)

    def clear_filters(self) -> None:
        self._main(JobsTable, "#jobs").action_clear_filters()
        self._update_jobs_info()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield SystemCommand("Help", "Show every key binding", self.action_help)
        yield SystemCommand("Quit", "Leave hpctop", self.action_quit)

    # -- jobs pane messages ----------------------------------------------------------------------

    def on_jobs_table_open_detail(self, message: JobsTable.OpenDetail) -> None:
        self.open_detail(message.key)

    def open_detail(self, key: JobKey) -> None:
        self.push_screen(JobDetailScreen(key, self._detail))

    def _detail(self, key: JobKey) -> Text:
        nodes = {n.name: n for n in self._gpu_map.nodes}
        return detail_text(
            self.snapshot.jobs.get(key),
            self.result.plans.get(key),
            self.snapshot,
            self.result.now,
            self.journal.of(key),
            nodes,
            audit=self.live.audit_entries(key) if self.live is not None else None,
            events=job_events(key) if (job_events := getattr(self.session, "job_events", None)) else None,
            scheduler_position=self._scheduler_position(key),
            order=self._main(JobsTable, "#jobs").ranks.get(key),
        )

    def _scheduler_position(self, key: JobKey) -> str | None:
        """Kueue's own queue position of a pending job (live sessions polling its visibility API)."""
        lookup = getattr(self.session, "kueue_position", None)
        position = lookup(key) if lookup is not None else None
        if position is None:
            return None
        return (
            f"Kueue position {position.in_cluster_queue + 1} in ClusterQueue {position.cluster_queue}, "
            f"{position.in_local_queue + 1} in LocalQueue {position.local_queue}"
        )

    def on_jobs_table_ask_filter(self, message: JobsTable.AskFilter) -> None:
        jobs = self._main(JobsTable, "#jobs")

        def done(value: str | None) -> None:
            if value is not None:
                jobs.set_filters(Filters(**{**_filters_dict(jobs.filters), "text": value}))
                self._update_jobs_info()

        self.push_screen(
            PromptScreen("Filter jobs (text in any column)", jobs.filters.text, "e.g. nlp or PD"), done
        )

    def on_queue_pane_filter_jobs(self, message: QueuePane.FilterJobs) -> None:
        jobs = self._main(JobsTable, "#jobs")
        jobs.set_filters(Filters(**{**_filters_dict(jobs.filters), "queue": message.path}))
        self._update_jobs_info()

    def on_queue_pane_selected(self, message: QueuePane.Selected) -> None:
        with contextlib.suppress(NoMatches):
            self._sync_bindings()

    def on_jobs_table_view_changed(self, message: JobsTable.ViewChanged) -> None:
        with contextlib.suppress(NoMatches):  # arrives after shutdown began
            self._update_jobs_info()
            self._sync_bindings()

    # -- palette targets -------------------------------------------------------------------------

    def palette_jobs(self, needle: str, limit: int) -> list[tuple[str, JobKey]]:
        out: list[tuple[str, JobKey]] = []
        for row in self._main(JobsTable, "#jobs").rows:
            if needle in row.id.lower():
                out.append((row.id, row.key))
                if len(out) >= limit:
                    break
        return out

    def palette_nodes(self, needle: str, limit: int) -> list[tuple[str, str]]:
        return [(n.name, n.name) for n in self._gpu_map.nodes if needle in n.name.lower()][:limit]

    def palette_queues(self, needle: str, limit: int) -> list[tuple[str, str]]:
        return [(sanitize_display(q), q) for q in self.result.queues if needle in q.lower()][:limit]

    def jump_to(self, kind: str, target: Any) -> None:
        if kind == "job":
            jobs = self._main(JobsTable, "#jobs")
            jobs.select_key(target)
            jobs.focus()
            self._update_jobs_info()
        elif kind == "node":
            gpus = self._main(GpuPane, "#gpus")
            gpus.display = True
            gpus.select_node(target)
            if gpus.zoom == "cluster":
                gpus.cycle_zoom()
            gpus.focus()
        elif kind == "queue":
            queues = self._main(QueuePane, "#queues")
            queues.display = True
            queues.select(target)
            queues.focus()

    # -- actions on jobs -------------------------------------------------------------------------

    def _targets(self) -> list[tuple[JobKey, str, str]]:
        screen = self.screen
        if isinstance(screen, JobDetailScreen):
            job = self.snapshot.jobs.get(screen.key)
            return [(screen.key, job.uid if job else "", job.id if job else "/".join(screen.key))]
        return [(r.key, r.uid, r.id) for r in self._main(JobsTable, "#jobs").targets()]

    def action_job_action(self, kind: str) -> None:
        if self.read_only or kind not in MUTATING:
            return
        if self.action_busy:
            self.notify("Still waiting for the server's answer to the last action", markup=False, timeout=3)
            return
        targets = self._targets()
        if not targets:
            self.notify("No job selected", severity="warning", markup=False)
            return
        jobs = self._main(JobsTable, "#jobs")
        if self.screen is self.screen_stack[0] and not jobs.marked and not jobs.row_visible():
            self.notify(
                f"{kind}: the selected job is not on screen; show the jobs pane (3) and pick one",
                severity="warning",
                markup=False,
            )
            return
        action = ActionKind(kind)
        permission = self.permission_for(kind, targets[0][0])
        if permission is not None and permission.allowed is False:
            self.notify(
                sanitize_display(f"{kind}: {permission.reason}", cap=400), severity="warning", markup=False
            )
            return
        if action == ActionKind.PRIORITY:
            self._ask_priority(targets)
        elif action == ActionKind.MOVE:
            self._ask_queue(targets)
        else:
            self._confirm(action, targets, None)

    # -- close / open a Kueue queue (spec.stopPolicy) ----------------------------------------------

    def action_queue_stop(self, mode: str) -> None:
        """``x`` (close: pick Hold or HoldAndDrain) and ``o`` (open) on the selected queue row."""
        if self.read_only or mode not in ("close", "open"):
            return
        if self.action_busy:
            self.notify("Still waiting for the server's answer to the last action", markup=False, timeout=3)
            return
        target = self.queue_target()
        if isinstance(target, str):
            self.notify(sanitize_display(target, cap=400), severity="warning", markup=False, timeout=6)
            return
        actuator = self.session.actuator
        if not isinstance(actuator, QueueActuator):
            self.notify(
                "This cluster's actuator cannot close or open queues", severity="warning", markup=False
            )
            return
        permission = self.queue_permission(mode)
        if permission is not None and permission.allowed is False:
            what = "close" if mode == "close" else "open"
            self.notify(
                sanitize_display(f"{what} queue: {permission.reason}", cap=400),
                severity="warning",
                markup=False,
            )
            return
        if mode == "open":
            self._confirm_queue(actuator, target, "None")
            return
        choices = {
            "Hold: admit nothing new; admitted workloads keep running": "Hold",
            "HoldAndDrain: admit nothing new and EVICT the admitted workloads": "HoldAndDrain",
        }

        def picked(choice: str | None) -> None:
            if choice is not None:
                self._confirm_queue(actuator, target, choices[choice])

        kind, name, namespace = target
        shown = f"{kind} {namespace + '/' if namespace else ''}{name}"
        self.push_screen(PickScreen(f"Close {shown}", list(choices)), picked)

    def action_queue_edit(self, path: str | None = None) -> None:
        """``e`` on a YuniKorn queue row: its priority offset and quota, typed as ``name=value``."""
        if self.read_only:
            return
        if self.action_busy:
            self.notify("Still waiting for the server's answer to the last action", markup=False, timeout=3)
            return
        path = path if path is not None else self._selected_queue()
        info = self.snapshot.queues.get(path) if path is not None else None
        if path is None or info is None or info.backend != "yunikorn":
            shown = sanitize_display(path or "no queue", cap=200)
            self.notify(
                f"{shown}: e changes a YuniKorn queue's priority offset and quota (its queues.yaml); "
                "this is not a YuniKorn queue (a Kueue queue's quota is its ClusterQueue's spec, which "
                "hpctop does not edit)",
                severity="warning",
                markup=False,
                timeout=6,
            )
            return
        actuator = self.session.actuator
        if not isinstance(actuator, YuniKornActuator):
            self.notify(
                "This cluster's actuator cannot change YuniKorn queues", severity="warning", markup=False
            )
            return
        permission = self.yunikorn_permission()
        if permission is not None and permission.allowed is False:
            self.notify(
                sanitize_display(f"edit queue: {permission.reason}", cap=400),
                severity="warning",
                markup=False,
            )
            return
        queue = info.path

        def typed(text: str | None) -> None:
            if not text:
                return
            try:
                change = QueueChange.parse(queue, text)
            except ValueError as exc:
                self.notify(sanitize_display(str(exc), cap=300), severity="error", markup=False)
                return
            self._confirm_yunikorn(actuator, change)

        self.push_screen(
            PromptScreen(
                f"YuniKorn queue {sanitize_display(queue, cap=120)}: priority.offset=N, "
                "guaranteed.<resource>=Q, max.<resource>=Q",
                "",
                "e.g. priority.offset=100 max.nvidia.com/gpu=16",
            ),
            typed,
        )

    def _confirm_yunikorn(self, actuator: YuniKornActuator, change: QueueChange) -> None:
        title = f"YuniKorn queue {change.queue}: {change.describe()}"
        self.action_busy = True
        if self.actions_in_thread:
            self.notify("Asking YuniKorn and the server what this would do…", markup=False, timeout=2)

        def work() -> Preview:
            try:
                return actuator.preview_yunikorn_queue(change)
            except HpctopError as exc:
                return Preview(yunikorn_request(change), False, (), refusal=exc.detail)
            except Exception as exc:  # a preview that cannot be had is a refusal, not a crash
                return Preview(
                    yunikorn_request(change),
                    False,
                    (),
                    refusal=f"preview failed: {type(exc).__name__}: {exc}",
                )

        def ask(preview: Preview) -> None:
            self.action_busy = False
            body = preview_text(title, [preview], [change.queue], noun="queue")
            self._ask(body, [preview.request], [preview])

        self.off_loop(work, ask, "preview")

    def _confirm_queue(self, actuator: QueueActuator, target: tuple[str, str, str], policy: str) -> None:
        """Preview (the server's dry run), then the same confirm → execute flow as the job actions."""
        kind, name, namespace = target
        shown = f"{kind} {namespace + '/' if namespace else ''}{name}"
        verb = "Open" if policy == "None" else "Close"
        title = f"{verb} {shown} (spec.stopPolicy {policy})"
        request = queue_request(kind, name, namespace, policy)
        self.action_busy = True
        if self.actions_in_thread:
            self.notify("Asking the server what this would do (dry run)…", markup=False, timeout=2)

        def work() -> Preview:
            try:
                return actuator.preview_queue_stop_policy(kind, name, namespace, policy)
            except HpctopError as exc:
                return Preview(request, False, (), refusal=exc.detail)
            except Exception as exc:  # a preview that cannot be had is a refusal, not a crash
                return Preview(request, False, (), refusal=f"preview failed: {type(exc).__name__}: {exc}")

        def ask(preview: Preview) -> None:
            self.action_busy = False
            self._ask(preview_text(title, [preview], [shown], noun="queue"), [preview.request], [preview])

        self.off_loop(work, ask, "preview")

    def _ask_priority(self, targets: list[tuple[JobKey, str, str]]) -> None:
        """The new priority, in the form the first target's backend takes it: a PriorityClass name
        for a Volcano job (picked from the cluster's), a number or a WorkloadPriorityClass name for a
        Kueue Workload, a number for the rest (a Slinky job's Slurm priority, the simulator's)."""
        action = ActionKind.PRIORITY
        key = targets[0][0]
        job = self.snapshot.jobs.get(key)
        if key[1] == VOLCANO_JOB:
            classes = sorted(self.snapshot.priority_classes.values(), key=lambda c: (-c.value, c.name))
            if classes:
                labels = {f"{c.name} ({c.value})": c.name for c in classes}

                def picked(choice: str | None) -> None:
                    if choice is not None:
                        self._confirm(action, targets, labels[choice])

                self.push_screen(
                    PickScreen("New PriorityClass (spec.priorityClassName)", list(labels)), picked
                )
                return

            def named(value: str | None) -> None:
                if value:
                    self._confirm(action, targets, value.strip())

            current = job.priority_class or "" if job is not None else ""
            self.push_screen(PromptScreen("New PriorityClass name", current, "e.g. high-priority"), named)
            return
        if key[1] == "Workload":

            def number_or_name(value: str | None) -> None:
                value = (value or "").strip()
                if value:
                    number = value.lstrip("-").isdigit()
                    self._confirm(action, targets, int(value) if number else value)

            self.push_screen(
                PromptScreen(
                    "New priority: a number (spec.priority) or a WorkloadPriorityClass name",
                    "",
                    "e.g. 1000 or high",
                ),
                number_or_name,
            )
            return
        slinky = self._is_slinky(key)
        # a Slinky job's Slurm priority is not its pods' priority: no value to start from
        current = "" if slinky or job is None or job.priority_value is None else str(job.priority_value)

        def got_priority(value: str | None) -> None:
            if value:
                try:
                    self._confirm(action, targets, int(value))
                except ValueError:
                    self.notify("Priority must be a whole number", severity="error", markup=False)

        title = "New Slurm priority (slurmjob.slinky.slurm.net/priority)" if slinky else "New priority value"
        self.push_screen(PromptScreen(title, current, "e.g. 1000", integer=True), got_priority)

    def _ask_queue(self, targets: list[tuple[JobKey, str, str]]) -> None:
        """Where to move: a Slurm partition for a Slinky job, else a leaf of the queue tree."""
        action = ActionKind.MOVE
        key = targets[0][0]

        def got_queue(value: str | None) -> None:
            if value:
                self._confirm(action, targets, value.strip())

        if self._is_slinky(key):
            job = self.snapshot.jobs.get(key)
            current = (job.slurm_partition or job.partition or "") if job is not None else ""
            self.push_screen(
                PromptScreen(
                    "Move to Slurm partition (slurmjob.slinky.slurm.net/partition)", current, "e.g. gpu"
                ),
                got_queue,
            )
            return
        leaves = [p for p, q in self.result.queues.items() if not q.children]
        self.push_screen(PickScreen("Move to queue", leaves), got_queue)

    def _previews(self, requests: list[ActionRequest]) -> list[Preview]:
        """The actuator's preview of each request (a dry run on a live cluster); never raises."""
        previews: list[Preview] = []
        for req in requests:
            try:
                previews.append(self.session.actuator.preview(req))
            except HpctopError as exc:
                previews.append(Preview(req, False, (), refusal=exc.detail))
            except Exception as exc:  # a preview that cannot be had is a refusal, not a crash
                previews.append(
                    Preview(req, False, (), refusal=f"preview failed: {type(exc).__name__}: {exc}")
                )
        return previews

    def _confirm(
        self, action: ActionKind, targets: list[tuple[JobKey, str, str]], value: str | int | None
    ) -> None:
        requests = [
            ActionRequest(action, key, uid, value, scheduler=self._scheduler_of(key))
            for key, uid, _ in targets
        ]
        names = [shown for _, _, shown in targets]
        title = f"{action.value.capitalize()} {len(targets)} job(s)"
        self.action_busy = True
        if self.actions_in_thread:
            self.notify("Asking the server what this would do (dry run)…", markup=False, timeout=2)

        def ask(previews: list[Preview]) -> None:
            self.action_busy = False
            self._ask(preview_text(title, previews, names), requests, previews)

        self.off_loop(lambda: self._previews(requests), ask, "preview")

    def _scheduler_of(self, key: JobKey) -> str:
        job = self.snapshot.jobs.get(key)
        return job.scheduler_name if job is not None else ""

    def _ask(self, body: Text, requests: list[ActionRequest], previews: list[Preview]) -> None:
        def decided(ok: bool | None) -> None:
            if ok:
                self._execute(requests, previews)

        self.push_screen(ConfirmScreen(body, any(p.allowed for p in previews)), decided)

    def _send(
        self, requests: list[ActionRequest], previews: list[Preview]
    ) -> list[tuple[ActionRequest, Any]]:
        """Execute the allowed requests; each outcome is an ActionResult or the HpctopError it raised.

        The simulator's session is not thread-safe, so its executes hold the tick lock; a live
        actuator does not touch the session, and holding the lock through HTTP would stall ticks.
        """
        outcomes: list[tuple[ActionRequest, Any]] = []
        lock = contextlib.nullcontext() if self.actions_in_thread else self._lock
        for req, preview in zip(requests, previews, strict=True):
            if not preview.allowed:
                continue
            try:
                with lock:
                    outcomes.append((req, self._execute_one(req)))
            except HpctopError as exc:
                outcomes.append((req, exc))
        return outcomes

    def _execute_one(self, req: ActionRequest) -> Any:
        actuator = self.session.actuator
        if is_yunikorn_request(req):
            if not isinstance(actuator, YuniKornActuator):
                raise ActionRefused("this cluster's actuator cannot change YuniKorn queues")
            return actuator.set_yunikorn_queue(QueueChange.parse(req.job[2], str(req.value)))
        if is_queue_request(req):
            if not isinstance(actuator, QueueActuator):
                raise ActionRefused("this cluster's actuator cannot close or open queues")
            namespace, kind, name = req.job
            return actuator.set_queue_stop_policy(kind, name, namespace, str(req.value))
        return actuator.execute(req)

    def _execute(self, requests: list[ActionRequest], previews: list[Preview]) -> None:
        self.action_busy = True
        self.off_loop(lambda: self._send(requests, previews), self._report, "execute")

    def _report(self, outcomes: list[tuple[ActionRequest, Any]]) -> None:
        """Journal and notify each outcome; jobs that changed since the preview are asked about again."""
        self.action_busy = False
        done = failed = 0
        stale: list[tuple[ActionRequest, tuple[str, ...], Preview | None]] = []
        for req, outcome in outcomes:
            if isinstance(outcome, HpctopError):
                failed += 1
                fresh = getattr(outcome, "preview", None)
                changed = getattr(outcome, "changed", None)
                if isinstance(changed, tuple):  # StaleTarget: a 409 on a precondition (M2)
                    stale.append((req, changed, fresh if isinstance(fresh, Preview) else None))
                if isinstance(outcome, Forbidden):
                    self._forbidden(outcome)
                self.journal.add(req.job, JournalEntry(self.session.now, req.kind.value, False, str(outcome)))
                self.notify(
                    sanitize_display(str(outcome), cap=400), severity="error", markup=False, timeout=8
                )
                continue
            ok = bool(outcome.ok)
            done += ok
            failed += not ok
            message = outcome.message + ("; " + "; ".join(outcome.changes) if outcome.changes else "")
            self.journal.add(req.job, JournalEntry(self.session.now, req.kind.value, ok, message))
        if done or failed:
            first = outcomes[0][0]
            action = (
                ("open queue" if first.value == "None" else "close queue")
                if is_queue_request(first)
                else "change queue"
                if is_yunikorn_request(first)
                else first.kind.value
            )
            summary = f"{action}: {done} done" + (f", {failed} failed" if failed else "")
            self.notify(summary, severity="error" if failed and not done else "information", markup=False)
        with contextlib.suppress(NoMatches):
            self._main(JobsTable, "#jobs").marked.clear()
            self.refresh_session()
        again = [(req, changed, fresh) for req, changed, fresh in stale if fresh is not None]  # None: gone
        if again:
            self._ask_again(again)

    def _forbidden(self, exc: Forbidden) -> None:
        """The server refused the request itself (403), whatever the review said: grey the action
        out, ask the rules review of that namespace again, and say what it says now. Never retried."""
        live = self.live
        if live is None:
            return
        namespace = exc.namespace or live.default_namespace  # a ClusterQueue's are kept there
        what = f"{exc.action.value} on {exc.kind} in {exc.namespace or 'the cluster'}"
        why = f"refused by the API server (403) when last tried; {what} is greyed out, not retried"
        self.denied[(namespace, exc.kind, exc.action)] = (self.clock(), why)
        for scope in [k for k in self.permission_cache if k[0] == namespace]:
            del self.permission_cache[scope]  # the actuator dropped its rules of it too: ask again

        def reviewed(answer: dict[tuple[str, str], Mapping[ActionKind, Permission]]) -> None:
            said = answer.get((namespace, exc.kind), {}).get(exc.action)
            review = said.reason if said is not None else "no answer"
            self.notify(
                sanitize_display(
                    f"{exc.action.value} is now greyed out for {exc.kind} in {namespace}: the API server "
                    f"refused it (403). Rules review asked again: {review}",
                    cap=400,
                ),
                severity="warning",
                markup=False,
                timeout=10,
            )

        self._sync_bindings(force=True)
        self.fetch_permissions(namespace, then=reviewed)

    def _ask_again(self, stale: list[tuple[ActionRequest, tuple[str, ...], Preview]]) -> None:
        """The confirmation again, on the state the server has now: what changed, then the fresh preview."""
        body = Text()
        body.append(f"{len(stale)} job(s) changed since you saw them; nothing was done.\n", style="bold")
        for req, changed, _ in stale:
            body.append("  ")
            body.append(sanitize_display("/".join(req.job), cap=200), style="bold")
            body.append("\n")
            for line in changed:
                body.append("    ~ ")
                body.append(sanitize_display(line, cap=400))
                body.append("\n")
        body.append("\n")
        previews = [fresh for _, _, fresh in stale]
        names = ["/".join(p.request.job) for p in previews]
        kind = previews[0].request.kind.value.capitalize()
        if all(is_yunikorn_request(p.request) for p in previews):
            title = f"YuniKorn queue {previews[0].request.job[2]}: {previews[0].request.value}, as it is now"
            body.append_text(preview_text(title, previews, names, noun="queue"))
        elif all(is_queue_request(p.request) for p in previews):
            policy = str(previews[0].request.value)
            kind = f"{'Open' if policy == 'None' else 'Close'} (spec.stopPolicy {policy})"
            body.append_text(preview_text(f"{kind}, as it is now", previews, names, noun="queue"))
        else:
            body.append_text(preview_text(f"{kind} {len(previews)} job(s), as they are now", previews, names))
        self._ask(body, [p.request for p in previews], previews)


def _queue_how(backend: str, kind: str) -> str:
    """How a queue hpctop does not close is closed, for the refusal."""
    if kind == "cohort":
        return "; a Kueue cohort has no stopPolicy: close its ClusterQueues"
    if backend == "volcano":
        return "; a Volcano queue closes with a CloseQueue bus Command, which hpctop does not send yet"
    if backend == "yunikorn":
        return (
            "; YuniKorn has no close/open switch (a queue removed from queues.yaml in the "
            "yunikorn-configs ConfigMap drains); e changes its priority offset and quota"
        )
    return ""


def _filters_dict(f: Filters) -> dict[str, Any]:
    return {"text": f.text, "state": f.state, "queue": f.queue, "partition": f.partition, "user": f.user}


def make_app(
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
) -> HpctopApp:
    """The console for ``session``.

    ``keymap`` remaps bindings by name (``{"cancel": "x"}``; names in ``hpctop.tui.keymap.KEYMAP``);
    ``tick_interval`` is real seconds between steps (0: never step on its own, for tests); ``clock``
    is the real-time source for tick deltas (freeze it in tests).
    """
    return HpctopApp(
        session,
        theme=theme,
        read_only=read_only,
        keymap=keymap,
        tick_interval=tick_interval,
        clock=clock,
        user=user,
        stale_after=stale_after,
        show_charts=show_charts,
    )
