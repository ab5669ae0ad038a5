"""``make_app``: the console, composed from its parts, and its key wiring.

The app composes the panes and wires keys, palette and pane messages to the parts that do the
work: :mod:`hpctop.tui.base` (state, off-loop calls, faults), :mod:`hpctop.tui.access`
(permissions), :mod:`hpctop.tui.ticking` (the tick), :mod:`hpctop.tui.flows` (action dialogs),
:mod:`hpctop.tui.palette` (the palette's back end) and :mod:`hpctop.tui.detail_feed` (the job
detail's text). The session protocols it runs on are :mod:`hpctop.runtime.protocols`.
Read-only is decided once, at start (:meth:`HpctopApp.check_action` hides every mutating key).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any, ClassVar

from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from hpctop.actions.requests import (
    ActionKind,
)
from hpctop.runtime.slurm_join import SLURM_QUEUE_ROOT
from hpctop.tui.base import survives
from hpctop.tui.commands import HpctopCommands
from hpctop.tui.detail_feed import DetailFeed
from hpctop.tui.flows import ActionFlows
from hpctop.tui.keymap import bindings
from hpctop.tui.objectviews import ObjectViewFlows
from hpctop.tui.palette import PaletteTargets
from hpctop.tui.rows import Filters
from hpctop.tui.screens.confirm import PromptScreen
from hpctop.tui.screens.help import HelpScreen
from hpctop.tui.themes import DEFAULT_VARIABLES
from hpctop.tui.widgets.charts import ChartsPane
from hpctop.tui.widgets.footer import FittedFooter
from hpctop.tui.widgets.gpus import GpuPane
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.queues import QueuePane
from hpctop.tui.widgets.status import StatusBar

#: real seconds between two status-bar refreshes that do not wait for a publish
STATUS_INTERVAL = 1.0


class HpctopApp(ActionFlows, PaletteTargets, DetailFeed, ObjectViewFlows):
    CSS_PATH = "hpctop.tcss"
    TITLE = "hpctop"
    BINDINGS: ClassVar[list[Binding | tuple[str, str] | tuple[str, str, str]]] = list(bindings("app"))
    COMMANDS = App.COMMANDS | {HpctopCommands}
    # no "quit" confirmation, no ctrl+c copy surprise: q quits
    ENABLE_COMMAND_PALETTE = True

    # -- composition -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with Horizontal(id="top"):
            yield GpuPane(id="gpus")
            yield QueuePane(id="queues")
        yield ChartsPane(id="charts")
        yield JobsTable(user=self.user, id="jobs")
        yield Static(id="jobs-info")
        yield FittedFooter()

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
        if shown:
            self.remove_class("-top")  # the charts take the top panes' place again
        if shown and not was and self.screen_stack:
            with contextlib.suppress(NoMatches):
                self._main(ChartsPane, "#charts").update_from(self.history)
        self._focus_a_shown_pane()

    def top_hidden(self) -> bool:
        """Whether the stylesheet hides the GPU and queue panes (hpctop.tcss): under 20 rows unless
        1 or 2 asked for them, and below 44 rows while the charts are shown in their place."""
        if self.has_class("-charts"):
            return not self.has_class("-h-tall")
        return self.has_class("-h-tiny") and not self.has_class("-top")

    def _focus_a_shown_pane(self) -> None:
        """The jobs pane takes the focus from a GPU or queue pane the layout just hid: at 80x24, C
        (the charts in their place) left the focus on the hidden queue pane, its keys in the
        footer and the arrows moving a cursor nobody saw."""
        if not self.screen_stack or not self.top_hidden():
            return
        with contextlib.suppress(NoMatches):
            focused = self.screen_stack[0].focused
            if focused is not None and self._main(Widget, "#top") in focused.ancestors:
                self._main(JobsTable, "#jobs").focus()

    def _show_top(self) -> None:
        """1 and 2 where the top panes are hidden: the charts give way (below 44 rows they stand
        in their place), and under 20 rows the panes come in over some of the jobs' rows."""
        if self.has_class("-charts") and not self.has_class("-h-tall"):
            self.charts_wanted = False
            self._show_charts(False)
        if self.has_class("-h-tiny"):
            self.add_class("-top")

    def action_toggle_charts(self) -> None:
        """C: show or hide the charts whatever the size (at a small size they take the GPU and
        queue panes' place, so the jobs keep their rows)."""
        self.charts_wanted = not self.has_class("-charts")
        self._show_charts(self.charts_wanted)

    def toggle_pane(self, name: str) -> None:
        if name == "charts":
            self.action_toggle_charts()
            return
        widget = self._main(Widget, f"#{name}")
        widget.display = not widget.display
        if name == "charts" and widget.display:
            self._main(ChartsPane, "#charts").update_from(self.history)

    def _status_tick(self) -> None:
        with contextlib.suppress(NoMatches):  # shutting down
            self._update_status()

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
            # the age and the achieved speed move on while a slow step keeps publishes away
            self.set_interval(STATUS_INTERVAL, self._status_tick, name="status")
        if self.live is not None and not self.read_only:
            self.fetch_permissions(self.live.default_namespace)

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
        (a key that silently did nothing looked broken), and is still not run; the rest run
        guarded (:meth:`ConsoleBase.run_action`: an exception is a status-bar line)."""
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

    def action_help_quit(self) -> None:
        """ctrl+c quits, as in top and htop. Textual's own ctrl+c only said "Press ctrl+q to quit
        the app" (not hpctop's q): a user's ctrl+c took a notification, a read and another key.
        Text selected on the screen is still copied (the screen's ctrl+c comes first), and in a
        text field (the filter prompt) ctrl+c is the field's copy. As q's ``action_quit``: exit."""
        self.exit()

    def action_focus_pane(self, name: str) -> None:
        widget = self._main(Widget, f"#{name}")
        if name in ("gpus", "queues"):
            self._show_top()
        if not widget.display:
            widget.display = True
        widget.focus()

    def action_zoom(self) -> None:
        zoom = self._main(GpuPane, "#gpus").cycle_zoom()
        self.notify(f"GPU pane: {zoom} view", timeout=2, markup=False)

    def action_speed(self, factor: float) -> None:
        self.session.speed = min(max(self.session.speed * factor, 1 / 64), 100_000.0)
        self.pace_reset()
        self._update_status()

    def action_pause(self) -> None:
        self.paused = not self.paused
        self.pace_reset()
        self._update_status()

    def action_refresh(self) -> None:
        self.refresh_session()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield SystemCommand("Help", "Show every key binding", self.action_help)
        yield SystemCommand("Quit", "Leave hpctop", self.action_quit)

    # -- jobs pane messages ----------------------------------------------------------------------

    @survives
    def on_jobs_table_open_detail(self, message: JobsTable.OpenDetail) -> None:
        self.open_detail(message.key)

    @survives
    def on_jobs_table_ask_filter(self, message: JobsTable.AskFilter) -> None:
        jobs = self._main(JobsTable, "#jobs")

        def done(value: str | None) -> None:
            if value is not None:
                jobs.set_filters(Filters(**{**_filters_dict(jobs.filters), "text": value}))
                self._update_jobs_info()

        self.push_screen(
            PromptScreen("Filter jobs (text in any column)", jobs.filters.text, "e.g. nlp or PD"),
            self.guarded(done),
        )

    @survives
    def on_queue_pane_filter_jobs(self, message: QueuePane.FilterJobs) -> None:
        jobs = self._main(JobsTable, "#jobs")
        root, _, partition = message.path.partition(".")
        if root == SLURM_QUEUE_ROOT and partition:  # a Slurm partition's row: its jobs by partition
            jobs.set_filters(Filters(**{**_filters_dict(jobs.filters), "partition": partition}))
            self._update_jobs_info()
            return
        jobs.set_filters(Filters(**{**_filters_dict(jobs.filters), "queue": message.path}))
        self._update_jobs_info()

    @survives
    def on_queue_pane_selected(self, message: QueuePane.Selected) -> None:
        with contextlib.suppress(NoMatches):
            self._sync_bindings()

    @survives
    def on_jobs_table_view_changed(self, message: JobsTable.ViewChanged) -> None:
        with contextlib.suppress(NoMatches):  # arrives after shutdown began
            self._update_jobs_info()
            self._sync_bindings()


def _filters_dict(f: Filters) -> dict[str, Any]:
    return {"text": f.text, "state": f.state, "queue": f.queue, "partition": f.partition, "user": f.user}


#: The console for ``session``: ``make_app(session, tick_interval=0, read_only=True, ...)``. Its
#: options are the app's own (``ConsoleBase.__init__``), declared there once.
make_app = HpctopApp
