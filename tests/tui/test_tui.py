"""The console driven like a person would: every binding, the action flow, read-only, terminal safety.

Runs on :class:`tests.sample_session.SampleSession` (seeded, frozen clock, ``tick_interval=0``) so no
test depends on the simulator or the core being written at the same time; one test drives the app on
the runtime's demo session when it is importable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

import pytest
from rich.text import Text
from textual.command import CommandPalette

from hpctop.actions.requests import ReadOnlyActuator, RecordingActuator
from hpctop.errors import ActionFailed, ConfigError
from hpctop.model.states import JobState
from hpctop.tui.app import HpctopApp, make_app
from hpctop.tui.commands import HpctopCommands
from hpctop.tui.keymap import KEYMAP
from hpctop.tui.screens.confirm import ConfirmScreen, PickScreen, PromptScreen
from hpctop.tui.screens.detail import JobDetailScreen
from hpctop.tui.screens.help import HelpScreen
from hpctop.tui.themes import parse_theme
from hpctop.tui.widgets.gpus import GpuPane
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.queues import QueuePane
from tests.sample_session import SampleSession

SIZE = (160, 48)
TESTED: set[str] = set()
F = TypeVar("F", bound=Callable[..., Any])


def covers(*names: str) -> Callable[[F], F]:
    """Declare which bindings a test presses (checked against KEYMAP by the last test)."""
    TESTED.update(names)
    return lambda fn: fn


def new_app(read_only: bool = False, **kw: Any) -> tuple[HpctopApp, SampleSession]:
    kw.setdefault("show_charts", False)  # plotext redraws cost ~0.1 s a frame; charts have their own test
    session = SampleSession(seed=1, read_only=read_only)
    app = make_app(session, tick_interval=0, clock=lambda: 0.0, user="alice", read_only=read_only, **kw)
    return app, session


def jobs_of(app: HpctopApp) -> JobsTable:
    return app.query_one("#jobs", JobsTable)


# -- app-wide keys -------------------------------------------------------------------------------


@covers("quit")
async def test_quit() -> None:
    app, _ = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


@covers("help")
async def test_help_lists_every_binding_and_closes() -> None:
    app, _ = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        shown = app.screen.query_one("#help-table").render()
        text = app.console.export_text() if False else str(shown)
        assert text  # a table was rendered
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


@covers("palette")
async def test_palette_opens_and_jumps() -> None:
    app, session = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press("escape")
        await pilot.pause()
        key = next(k for k in session.jobs if k[2] == "eval-00013")
        app.jump_to("job", key)
        assert jobs_of(app).current_key == key
        app.jump_to("node", "a100-002")
        gpus = app.query_one("#gpus", GpuPane)
        assert gpus.current is not None and gpus.current.name == "a100-002" and gpus.zoom == "partition"
        app.jump_to("queue", "root.prod.serving")
        assert app.query_one("#queues", QueuePane).current == "root.prod.serving"


async def test_palette_commands_search() -> None:
    app, _ = new_app()
    async with app.run_test(size=SIZE) as pilot:
        provider = HpctopCommands(app.screen)
        hits = [h async for h in provider.search("eval-0001")]
        assert any("job: team-" in str(h.text) for h in hits)
        hits = [h async for h in provider.search("theme light")]
        light = next(h for h in hits if h.text == "theme: hpctop-light")
        light.command()
        await pilot.pause()
        assert app.theme == "hpctop-light"
        hits = [h async for h in provider.search("toggle pane charts")]
        before = app.query_one("#charts").display
        next(h for h in hits if h.text == "toggle pane: charts").command()
        assert app.query_one("#charts").display is not before


@covers("next_pane", "prev_pane", "focus_gpus", "focus_queues", "focus_jobs")
async def test_tab_and_focus_keys() -> None:
    app, _ = new_app()
    async with app.run_test(size=SIZE) as pilot:
        assert app.focused is jobs_of(app)
        await pilot.press("1")
        assert app.focused is not None and app.focused.id == "gpus"
        await pilot.press("2")
        assert app.focused is not None and app.focused.id == "queues"
        await pilot.press("3")
        assert app.focused is not None and app.focused.id == "jobs"
        await pilot.press("tab")
        after_tab = app.focused
        assert after_tab is not None and after_tab.id != "jobs"
        await pilot.press("shift+tab")
        assert app.focused is not None and app.focused.id == "jobs"


@covers("zoom", "faster", "slower", "pause", "refresh")
async def test_zoom_speed_pause_refresh() -> None:
    app, session = new_app()
    async with app.run_test(size=SIZE) as pilot:
        gpus = app.query_one("#gpus", GpuPane)
        zooms = []
        for _ in range(3):
            await pilot.press("z")
            zooms.append(gpus.zoom)
        assert zooms == ["partition", "node", "cluster"]
        await pilot.press("plus")
        assert session.speed == 2.0
        await pilot.press("minus", "minus")
        assert session.speed == 0.5
        await pilot.press("P")
        assert app.paused
        app.tick()  # paused: no virtual time passes
        await app.workers.wait_for_complete()
        assert session.now == session.result.now
        steps = session.steps
        await pilot.press("P")
        assert not app.paused
        before = session.refreshes
        await pilot.press("ctrl+r")
        assert session.refreshes == before + 1
        assert session.steps == steps


async def test_tick_steps_in_a_worker_and_publishes() -> None:
    t = [0.0]
    session = SampleSession(seed=2)
    app = make_app(session, tick_interval=0, clock=lambda: t[0])
    async with app.run_test(size=SIZE) as pilot:
        session.speed = 60.0
        t[0] = 1.0
        app.tick()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert session.steps == 1
        assert app.result.now == session.now
        assert len(app.history.samples) == 2


async def test_a_late_tick_does_not_catch_up_in_one_giant_step() -> None:
    t = [0.0]
    session = SampleSession(seed=2)
    app = make_app(session, tick_interval=0, clock=lambda: t[0])
    async with app.run_test(size=SIZE):
        app.max_tick_lag = 1.0
        session.speed = 60.0
        start = session.now
        t[0] = 10.0  # the last step took ten seconds of real time
        app.tick()
        await app.workers.wait_for_complete()
        assert session.now - start == pytest.approx(60.0)  # one second's worth, not ten


# -- jobs pane ------------------------------------------------------------------------------------


@covers("cursor_down", "cursor_up", "page_down", "page_up", "first", "last")
async def test_jobs_cursor_keys() -> None:
    app, _ = new_app()
    async with app.run_test(size=SIZE) as pilot:
        jobs = jobs_of(app)
        await pilot.press("down", "j")
        assert jobs.cursor == 2
        await pilot.press("up")
        assert jobs.cursor == 1
        await pilot.press("k")
        assert jobs.cursor == 0
        await pilot.press("pagedown")
        page = jobs.cursor
        assert page > 5
        await pilot.press("pageup")
        assert jobs.cursor == 0
        await pilot.press("G")
        assert jobs.cursor == len(jobs.view) - 1
        assert jobs.scroll_y > 0  # the cursor row was scrolled into view
        await pilot.press("g")
        assert jobs.cursor == 0 and jobs.scroll_y == 0


@covers("detail", "close")
async def test_detail_and_close() -> None:
    app, _ = new_app()
    async with app.run_test(size=SIZE) as pilot:
        key = jobs_of(app).current_key
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, JobDetailScreen) and app.screen.key == key
        body = app._detail(key) if key else Text()
        assert "Priority (like sprio)" in body.plain and "Pods" in body.plain
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, JobDetailScreen)


@covers("mark", "sort", "sort_reverse", "filter", "filter_state", "filter_queue")
@covers("filter_partition", "filter_mine", "clear_filters")
async def test_mark_sort_filter_keys() -> None:
    app, _ = new_app()
    async with app.run_test(size=SIZE) as pilot:
        jobs = jobs_of(app)
        first = jobs.current_key
        await pilot.press("space")
        assert jobs.marked == {first} and jobs.cursor == 1
        assert jobs.sort_column == "ORDER"  # the scheduler's order by default
        await pilot.press("s")
        assert jobs.sort_column == "PRIO"
        await pilot.press("S")
        reversed_now = jobs.reverse
        await pilot.press("S")
        assert jobs.reverse is not reversed_now
        # sorted by the chosen column
        jobs.sort_by("USER", reverse=False)
        users = [r.user for r in jobs.view]
        assert users == sorted(users)
        await pilot.press("f")
        assert all(r.state.is_pending for r in jobs.view)
        await pilot.press("f")
        assert all(r.state.is_active for r in jobs.view) and jobs.view
        await pilot.press("f", "f")
        assert jobs.filters.state == 0
        await pilot.press("Q")
        queue = jobs.filters.queue
        assert queue and all(r.queue == queue for r in jobs.view)
        await pilot.press("A")
        part = jobs.filters.partition
        assert part and all(r.partition == part for r in jobs.view)
        await pilot.press("escape")
        assert not jobs.filters.active and not jobs.marked
        await pilot.press("M")
        assert jobs.view and all(r.user == "alice" for r in jobs.view)
        await pilot.press("M")
        await pilot.press("slash")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"infer")
        await pilot.press("enter")
        await pilot.pause()
        assert jobs.filters.text == "infer"
        assert jobs.view and all("infer" in r.haystack for r in jobs.view)
        assert "infer" in str(app.query_one("#jobs-info").render())


async def test_click_header_sorts_and_double_click_opens() -> None:
    app, _ = new_app()
    async with app.run_test(size=SIZE) as pilot:
        jobs = jobs_of(app)
        region = jobs.content_region
        x = jobs.column_at(3)
        assert x == "JOB"
        await pilot.click(JobsTable, offset=(3, 1))  # header line (below the 1-line top border)
        await pilot.pause()
        assert jobs.sort_column == "JOB"
        await pilot.click(JobsTable, offset=(5, 4), times=2)
        await pilot.pause()
        assert isinstance(app.screen, JobDetailScreen)
        assert region.height > 5


# -- GPU and queue panes --------------------------------------------------------------------------


@covers("gpu_down", "gpu_up", "gpu_next_part", "gpu_prev_part")
async def test_gpu_pane_keys() -> None:
    app, _ = new_app()
    async with app.run_test(size=SIZE) as pilot:
        gpus = app.query_one("#gpus", GpuPane)
        await pilot.press("1", "down", "j")
        assert gpus.cursor == 2
        await pilot.press("up", "k")
        assert gpus.cursor == 0
        assert gpus.current is not None
        first_part = gpus.current.partition
        await pilot.press("right")
        assert gpus.current.partition != first_part
        await pilot.press("left")
        assert gpus.current.partition == first_part


@covers("queue_down", "queue_up", "queue_toggle", "queue_expand", "queue_collapse")
async def test_queue_pane_keys() -> None:
    app, _ = new_app()
    async with app.run_test(size=SIZE) as pilot:
        queues = app.query_one("#queues", QueuePane)
        await pilot.press("2")
        assert queues.current == "root"
        await pilot.press("down", "j")
        assert queues.current == "root.prod"
        await pilot.press("up", "k")
        assert queues.current == "root"
        await pilot.press("down", "down")
        count = len(queues.visible_paths())
        await pilot.press("enter")
        assert len(queues.visible_paths()) == count - 1 and "root.prod" in queues.collapsed
        await pilot.press("right")
        assert "root.prod" not in queues.collapsed
        await pilot.press("left")
        assert "root.prod" in queues.collapsed


@covers("queue_close", "queue_open", "queue_edit")
async def test_queue_close_and_open_are_refused_on_a_simulated_queue() -> None:
    """The simulator has no Kueue or YuniKorn queues: x/o/e say so, and nothing reaches the actuator."""
    app, _ = new_app()
    recorder = RecordingActuator(app.session.actuator)
    app.session.actuator = recorder
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        assert app.query_one("#queues", QueuePane).select("root.prod")
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        assert not isinstance(app.screen, (PickScreen, ConfirmScreen, PromptScreen))
        *notes, edit = [n.message for n in app._notifications]
        assert "root.prod: e changes a YuniKorn queue's priority offset and quota" in edit
        assert len(notes) == 2
        assert all("root.prod is one of the simulated cluster's queues" in n for n in notes)
        assert all("only a Kueue queue is closed or opened" in n for n in notes)
    assert recorder.executed == []


def test_gpu_map_dense_view_fits_1523_nodes() -> None:
    from hpctop.model.resources import Resources
    from hpctop.tui.gpumap import build_gpu_map
    from tests.sample_session import _node

    nodes = {f"n{i:04d}": _node(f"n{i:04d}", "P100" if i % 3 else "V100M16", 8) for i in range(1523)}
    parts = [
        ("p100", [n for i, n in enumerate(nodes) if i % 3]),
        ("v100", [n for i, n in enumerate(nodes) if not i % 3]),
    ]
    gpu_map = build_gpu_map(nodes, {}, {}, {}, parts)
    assert len(gpu_map.nodes) == 1523
    assert {p.name for p in gpu_map.partitions} == {"p100", "v100"}
    assert sum(p.total for p in gpu_map.partitions) == 1523 * 8 * 1000
    assert Resources().gpu == 0


async def test_gpu_cluster_view_fits_in_pane() -> None:
    session = SampleSession(seed=1, nodes_per_partition=500, jobs=200)  # 1,250 GPU nodes
    app = make_app(session, tick_interval=0, clock=lambda: 0.0)
    async with app.run_test(size=SIZE):
        gpus = app.query_one("#gpus", GpuPane)
        assert len(gpus.map.nodes) == 1250
        assert gpus.line_count() <= gpus.size.height


# -- actions ---------------------------------------------------------------------------------------


async def _act(pilot: Any, key: str, confirm: str = "y") -> None:
    await pilot.press(key)
    await pilot.pause()
    await pilot.press(confirm)
    await pilot.pause()


def _find(app: HpctopApp, session: SampleSession, state: JobState) -> None:
    jobs = jobs_of(app)
    key = next(k for k, j in session.jobs.items() if j.state == state)
    assert jobs.select_key(key)


@covers("cancel", "requeue", "hold", "release", "priority", "move", "confirm", "deny")
async def test_actions_preview_confirm_execute_refresh() -> None:
    app, session = new_app()
    async with app.run_test(size=SIZE) as pilot:
        jobs = jobs_of(app)
        _find(app, session, JobState.RUNNING)
        key = jobs.current_key
        assert key is not None
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        body = app.screen.body_text
        assert "CANCELLED" in str(body)
        await pilot.press("n")  # deny: nothing happens
        await pilot.pause()
        assert session.jobs[key].state == JobState.RUNNING
        refreshes = session.refreshes
        await _act(pilot, "c")
        assert session.jobs[key].state == JobState.CANCELLED
        assert session.refreshes == refreshes + 1
        assert app.journal.of(key)[-1].action == "cancel"

        _find(app, session, JobState.RUNNING)
        key = jobs.current_key
        assert key is not None
        await _act(pilot, "r")
        assert session.jobs[key].state == JobState.PENDING

        _find(app, session, JobState.PENDING)
        key = jobs.current_key
        assert key is not None
        await _act(pilot, "h")
        assert session.jobs[key].state == JobState.HELD
        await _act(pilot, "u")
        assert session.jobs[key].state == JobState.PENDING

        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"4242", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await pilot.pause()
        assert session.jobs[key].priority_value == 4242

        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, PickScreen)
        await pilot.press("down", "enter")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert session.jobs[key].queue == "root.prod.serving"
        assert [e.action for e in app.journal.of(key)][-4:] == ["hold", "release", "priority", "move"]
        assert "move" in app._detail(key).plain


async def test_bulk_marked_jobs() -> None:
    app, session = new_app()
    async with app.run_test(size=SIZE) as pilot:
        jobs = jobs_of(app)
        await pilot.press("f", "g")  # pending only, from the top
        keys = [r.key for r in jobs.view[:3]]
        await pilot.press(*["space"] * len(keys))
        assert jobs.marked == set(keys)
        await _act(pilot, "h")
        assert all(session.jobs[k].state == JobState.HELD for k in keys)
        assert not jobs.marked


async def test_refused_preview_disables_confirm_and_failure_notifies() -> None:
    app, session = new_app()
    async with app.run_test(size=SIZE) as pilot:
        _find(app, session, JobState.RUNNING)
        await pilot.press("u")  # release a running job: refused in preview
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "not held" in app.screen.body_text
        await pilot.press("y")  # cannot confirm
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")
        await pilot.pause()

        def boom(request: object) -> object:
            raise ActionFailed("server said \x1b[2J[bold]no")

        session.actuator.execute = boom  # type: ignore[method-assign, assignment]
        key = jobs_of(app).current_key
        assert key is not None
        await _act(pilot, "c")
        entry = app.journal.of(key)[-1]
        assert not entry.ok and "server said" in entry.message
        notes = list(app._notifications)
        assert any("␛[2J[bold]no" in n.message and not n.markup for n in notes)


async def test_actions_in_detail_screen_target_that_job() -> None:
    app, session = new_app()
    async with app.run_test(size=SIZE) as pilot:
        _find(app, session, JobState.PENDING)
        key = jobs_of(app).current_key
        assert key is not None
        await pilot.press("enter")
        await pilot.pause()
        await _act(pilot, "h")
        assert session.jobs[key].state == JobState.HELD
        assert isinstance(app.screen, JobDetailScreen)
        assert "hold" in str(app.screen.query_one("#detail-text").render())


# -- read-only --------------------------------------------------------------------------------------


async def test_read_only_every_binding_and_palette_command_reaches_nothing() -> None:
    session = SampleSession(seed=1)
    recorder = RecordingActuator(session.actuator)
    session.actuator = ReadOnlyActuator(recorder)
    app = make_app(session, tick_interval=0, clock=lambda: 0.0, read_only=True, show_charts=False)
    pushed: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        app.screen_stack  # noqa: B018
        orig_push = app.push_screen

        def spy(screen: Any, *a: Any, **k: Any) -> Any:
            pushed.append(type(screen).__name__)
            return orig_push(screen, *a, **k)

        app.push_screen = spy  # type: ignore[method-assign]
        shown = {b.binding.action for b in app.active_bindings.values() if b.binding.show}
        assert not any(a.startswith("job_action") for a in shown)
        assert "READ-ONLY" in str(app.query_one("#status").render())
        keys = list(
            dict.fromkeys(k.strip() for spec in KEYMAP for k in spec.keys.split(",") if spec.name != "quit")
        )
        for pane, name in (("1", "gpus"), ("2", "queues"), ("3", "jobs")):
            await pilot.press(pane)
            for key in keys:
                await pilot.press(key)
                assert recorder.executed == [], key  # the key that reached the actuator, by name
                while len(app.screen_stack) > 1:
                    app.pop_screen()
                    await pilot.pause()
                # back to the pane only where the key moved the focus or hid the pane (each
                # press costs the pilot's two idle waits; focusing a shown, focused pane is a no-op)
                if app.focused is None or app.focused.id != name or not app.focused.display:
                    await pilot.press(pane)
        await pilot.press("3", "enter")  # detail screen, then every action key there
        await pilot.pause()
        for key in ("c", "r", "h", "u", "p", "m", "y", "space"):
            await pilot.press(key)
            await pilot.pause()
        while len(app.screen_stack) > 1:
            app.pop_screen()
        provider = HpctopCommands(app.screen)
        hits = [h async for h in provider.discover()]
        for query in ("train", "h100", "root", "cancel", "hold"):
            hits += [h async for h in provider.search(query)]
        for hit in hits:
            hit.command()
            await pilot.pause()
        app.action_job_action("cancel")  # even called directly it does nothing
    assert recorder.executed == []
    assert "ConfirmScreen" not in pushed and "PickScreen" not in pushed
    assert session.actuator.refused == []


# -- themes and keymap ------------------------------------------------------------------------------


def test_themes_load_and_validate() -> None:
    app, _ = new_app()
    assert {"hpctop-dark", "hpctop-light", "hpctop-colorblind"} <= set(app.hpctop_themes)
    cb = app.hpctop_themes["hpctop-colorblind"]
    assert cb.variables["job-pending"] == "#E69F00"  # Okabe-Ito orange
    with pytest.raises(ConfigError, match="missing semantic variables"):
        parse_theme('name = "x"\n[colors]\nprimary="#000000"\n[variables]\n', "x.toml")
    with pytest.raises(ConfigError, match="unknown theme"):
        new_app(theme="nope")


async def test_keymap_override() -> None:
    app, session = new_app(keymap={"cancel": "x"})
    async with app.run_test(size=SIZE) as pilot:
        _find(app, session, JobState.RUNNING)
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
    with pytest.raises(ConfigError, match="unknown key binding"):
        new_app(keymap={"cancle": "x"})


@covers("charts")
async def test_charts_follow_history() -> None:
    session = SampleSession(seed=4)
    app = make_app(session, tick_interval=0, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(4):
            app.step_now(300)
        await pilot.pause()
        assert len(app.history.samples) == 5
        from textual_plotext import PlotextPlot

        plot = app.query_one("#chart-alloc", PlotextPlot)
        assert "GPUs in use" in str(plot.render())
        assert "h100" in str(app.query_one("#legend-alloc").render())  # the legend, under the plot
        charts = app.query_one("#charts")
        assert charts.display
        await pilot.press("C")  # hidden by the key, whatever the size
        assert not charts.display
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not charts.display
        await pilot.press("C")  # at 80x24 they take the top panes' place: the jobs keep their rows
        await pilot.pause()
        assert charts.display and not app.query_one("#top").display
        assert app.query_one("#jobs").size.height >= 12


async def test_theme_switch_repaints() -> None:
    app, _ = new_app(theme="hpctop-colorblind")
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "hpctop-colorblind"
        app.set_theme("hpctop-light")
        await pilot.pause()
        assert app.theme_variables["gpu-busy"] == "#2E7D32"


# -- terminal safety (RELIABILITY.md T1, T2) -------------------------------------------------------

EVIL_NAME = "[@click=app.quit]x[/]"
EVIL_USER = "job-[/oops]"
EVIL_MSG = "\x1b[2J\x1b]52;c;ZXZpbA==\x07\x1b]8;;https://evil/\x1b\\CLICK\x9b31m\u202eevil[bold]"


def _plant(session: SampleSession) -> tuple[Any, ...]:
    from hpctop.model.objects import Reason
    from hpctop.model.states import ReasonCode

    key = next(k for k, j in session.jobs.items() if j.state == JobState.PENDING)
    job = session.jobs[key]
    session.jobs[key] = replace(
        job,
        name=EVIL_NAME,
        user=EVIL_USER,
        observed_reason=Reason(ReasonCode.RESOURCES, "event", EVIL_MSG),
        uid="uid\x1b]0;title\x1b\\",
    )
    session.refresh()
    return key


async def test_terminal_output_never_carries_planted_sequences(monkeypatch: pytest.MonkeyPatch) -> None:
    from textual.drivers.headless_driver import HeadlessDriver

    written: list[str] = []
    monkeypatch.setattr(HeadlessDriver, "is_headless", property(lambda self: False))
    monkeypatch.setattr(HeadlessDriver, "write", lambda self, data: written.append(data))
    session = SampleSession(seed=1)
    key = _plant(session)
    app = make_app(session, tick_interval=0, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        app.query_one("#jobs", JobsTable).sort_by("NAME", reverse=False)  # evil row first
        await pilot.pause()
        app.open_detail(key)
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        await pilot.pause(0.2)
    out = "".join(written)
    assert out, "the patched driver saw no output"
    for seq in ("\x1b]52", "\x1b]8;;https://evil", "\x1b]0;title", "\x1b[2J", "\x9b", "\u202e"):
        assert seq not in out, repr(seq)
    assert "␛]52;c;ZXZpbA==" in out  # shown visibly escaped
    assert app.return_code in (None, 0)


async def test_markup_in_cluster_strings_is_literal() -> None:
    session = SampleSession(seed=1)
    key = _plant(session)
    app = make_app(session, tick_interval=0, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        jobs = jobs_of(app)
        jobs.sort_by("NAME", reverse=False)
        jobs.action_jump(0)
        await pilot.pause()
        assert jobs.current is not None and jobs.current.key == key
        strip = jobs.render_line(1)
        text = "".join(seg.text for seg in strip)
        assert "team-erin/[@click=app.quit]" in text and "job-[/o" in text
        assert all(not (seg.style and seg.style.meta) for seg in strip)
        body = app._detail(key)
        assert EVIL_NAME in body.plain and EVIL_USER in body.plain
        assert "␛]52" in body.plain and "<U+202E>" in body.plain
        assert all("@click" not in str(span.style) and "link" not in str(span.style) for span in body.spans)
        app.open_detail(key)
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        confirm = app.screen.body_text
        assert EVIL_NAME in confirm
        shown = app.screen.query_one("#confirm-body")
        drawn = ["".join(seg.text for seg in shown.render_line(y)) for y in range(shown.size.height)]
        assert any(EVIL_NAME in line for line in drawn), drawn  # drawn as text, not as markup
    assert app.return_code in (None, 0)  # neither crashed nor quit by an injected click


@covers("logs", "yaml")
async def test_logs_and_yaml_on_the_demo_read_only_at_80x24() -> None:
    """``l`` and ``y`` on the real demo session (its simulator's objects and made-up, deterministic
    logs), in read-only mode, at 80x24: both are reads. The live path is
    tests/kube/console/test_console_logs."""
    from hpctop.runtime.session import demo_session
    from hpctop.sources.simulator.logs import log_lines
    from hpctop.tui.screens.textview import TextScreen

    session = demo_session(seed=1, at=900, read_only=True)
    app = make_app(session, tick_interval=0, clock=lambda: 0.0, read_only=True, show_charts=False)
    async with app.run_test(size=(80, 24)) as pilot:
        jobs = jobs_of(app)
        await pilot.press("f", "f")  # running jobs: their pods have logs
        assert jobs.current_key is not None
        job = session.snapshot.jobs[jobs.current_key]
        await pilot.press("l")
        await pilot.pause()
        if isinstance(app.screen, PickScreen):  # a job of several pods: the first
            await pilot.press("enter")
            await pilot.pause()
        assert isinstance(app.screen, TextScreen)
        shown = str(app.screen.query_one("#text-body").render())
        assert "Log of " in shown and "[main]" in shown and " INFO " in shown
        assert "the simulator's made-up log" in shown  # not to be read as a real job's log
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(app.screen, TextScreen)
        shown = str(app.screen.query_one("#text-body").render())
        assert "apiVersion:" in shown and f"name: {job.pods[0][1]}" in shown
        assert "as the simulated cluster has them now" in shown and "API server" not in shown
    # the same pod, container and span always give the same lines
    assert log_lines("p-0", "main", 0.0, 3600.0) == log_lines("p-0", "main", 0.0, 3600.0)
    assert log_lines("p-0", "main", 0.0, 3600.0) != log_lines("p-1", "main", 0.0, 3600.0)


def test_every_binding_has_a_test() -> None:
    """Every KEYMAP entry is declared (``@covers``) by a test that presses it."""
    names = {s.name for s in KEYMAP}
    missing = names - TESTED
    assert not missing, f"bindings without a Pilot test: {sorted(missing)}"
