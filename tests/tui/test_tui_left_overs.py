"""The console as a user meets it on the demo, session 15's left-overs (issue 16 session 17, ``hpctop
--demo`` in tmux at 80x24 and 160x48): what was wrong there, each checked on what the screen shows.
Each test fails on the code before its fix (run from a ``git archive main`` copy).

- at 80 columns a lagging simulation's "×44.3 of ×960" pushed "demo" out of the status bar:
  nothing said the cluster was not a live one;
- beside the GPU map at 80 columns (1) the queue pane had 40 cells and cut names to "rec…";
- a waiting job the core placed in its last pass had an empty REASON (squeue says ``None``);
- the job detail's long lines went on at the margin, as if the rest were a line of its own;
- the charts drawn while hidden (C at 160x48, twice) kept their first ticks, placed for a plot of
  height 0 (the middle one missing), until the next sample;
- the wait histogram's x ticks were its span's halves in minutes ("0.00 0.07 0.15");
- ctrl+c did not quit: a notification said to press ctrl+q (the footer says q).
"""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

from rich.console import Console
from rich.text import Text
from textual.widget import Widget

from hpctop.runtime.session import demo_session
from hpctop.tui.app import HpctopApp, make_app
from hpctop.tui.screens.detail import JobDetailScreen
from hpctop.tui.widgets.charts import Chart
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.queues import QueuePane
from hpctop.tui.widgets.status import StatusBar


def _line(widget: Widget, y: int) -> str:
    return "".join(seg.text for seg in widget.render_line(y))


def _demo(charts: bool = False) -> HpctopApp:
    return make_app(
        demo_session(seed=1, at=600), tick_interval=0, clock=lambda: 0.0, user="alice", show_charts=charts
    )


async def test_a_lagging_demo_still_says_demo_at_80_columns() -> None:
    app = _demo()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        bar = app.query_one(StatusBar)
        assert bar._last is not None
        info, colours = bar._last
        assert info.simulated and not info.read_only and info.source == "demo"
        # as seen in tmux at ×960 ("+" four times), the counts of a busy demo
        busy = replace(
            info,
            age=1.0,
            gpus_used=1704.46,
            gpus_total=6212,
            running=1669,
            pending=995,
            speed=960,
            achieved=44.3,
        )
        bar.show(busy, colours)
        shown = str(bar.render())
        assert "demo" in shown, shown  # the mode: this is not a live cluster
        assert "GPUs 1704.46/6212 used" in shown and "R 1669  PD 995" in shown, shown
        assert len(shown) <= 80, shown


async def test_queue_names_are_whole_beside_the_gpu_map_at_80_columns() -> None:
    app = _demo()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("1")  # the GPU map: the queue pane shares the top row with it
        await pilot.pause()
        pane = app.query_one(QueuePane)
        assert app.query_one("#gpus").display and pane.size.width < 60, pane.size
        # the demo's counts and GPUs an hour in, as seen in tmux ("rec…  398.46/1864/-  R284 PD1")
        busy = {
            p: replace(q, running_jobs=1819, pending_jobs=441, used=replace(q.used, gpu=398_460))
            for p, q in pane.queues.items()
        }
        pane.set_queues(busy, pane.cluster_gpu, pane.local, pane.kinds)
        await pilot.pause()
        for _ in range(3):  # every queue, a screenful at a time
            top = int(pane.scroll_y)
            for y, path in enumerate(pane.visible_paths()[top : top + pane.size.height]):
                line = _line(pane, y)
                name = path.rsplit(".", 1)[-1]
                assert f" {name} " in line and "…" not in line, (path, line)
                assert "R1819 PD441" in line, line  # and the counts stay whole
            pane.scroll_to(y=top + pane.size.height, animate=False, immediate=True)
            await pilot.pause()


async def test_a_job_the_core_places_next_says_so_as_a_forecast() -> None:
    from hpctop.scheduling.observed import FORECAST_MARK
    from hpctop.tui.screens.help import LEGEND

    app = _demo()
    async with app.run_test(size=(80, 24)) as pilot:
        app.step_now(7)  # between two scheduling points: the jobs submitted since are placed, not bound
        await pilot.pause()
        jobs = app.query_one(JobsTable)
        plans = app.result.plans
        placed = [
            r
            for r in jobs.rows
            if r.state.is_pending
            and plans.get(r.key) is not None
            and plans[r.key].placement is not None
            and plans[r.key].reason is None
        ]
        assert placed, "the demo at 607 s has jobs the core placed in its last pass"
        # hpctop's forecast, marked as one, not an empty cell nor the scheduler's word
        assert all(r.reason.startswith(FORECAST_MARK) for r in placed), {r.reason for r in placed}
        from hpctop.tui.rows import PLACED_NEXT

        assert all(r.reason == PLACED_NEXT for r in placed), {r.reason for r in placed}
        # the REASON cell on screen: the first rows sort by ORDER, the placed jobs first
        drawn = [_line(jobs, y) for y in range(jobs.size.height)]
        assert any(line.rstrip().endswith(PLACED_NEXT) for line in drawn), drawn
        # every other waiting job keeps a reason of its own (none is left empty)
        waiting = [r for r in jobs.rows if r.state.is_pending and plans.get(r.key) is not None]
        assert all(r.reason for r in waiting), [r.id for r in waiting if not r.reason]
    legend = dict(LEGEND)
    assert PLACED_NEXT in legend["~"], legend["~"]


async def test_the_detail_goes_on_under_its_values() -> None:
    app = _demo()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        jobs = app.query_one(JobsTable)
        done = next(r for r in jobs.rows if r.state.is_finished and r.start is not None)
        app.open_detail(done.key)
        await pilot.pause()
        assert isinstance(app.screen, JobDetailScreen)
        body = app.screen.query_one("#detail-text", Widget)
        drawn = [_line(body, y).rstrip() for y in range(body.size.height)]
        submitted = next(i for i, line in enumerate(drawn) if line.lstrip().startswith("submitted "))
        start = drawn[submitted].index("submitted ")
        # "submitted … started … (waited …)  ended …  time limit …" is longer than 80 columns
        rest = drawn[submitted + 1]
        assert "ended" in rest, drawn[submitted : submitted + 2]
        assert rest[: start + 10].strip() == "" and rest[start + 10] != " ", (rest, start)
        # what tests and a copy read is the whole text, unwrapped
        text = str(body.render())
        assert any(line.startswith("submitted ") and " ended " in line for line in text.splitlines()), text
    from hpctop.tui.screens.confirm import HangingText
    from hpctop.tui.screens.detail import value_hang

    t = Text("gang 1/1 running of 1 members; per member 8 GPU\n  cpu: needs 120 CPUs; largest node has 96")
    console = Console(width=30, record=True, color_system=None)
    console.print(HangingText(t, value_hang))
    lines = console.export_text().splitlines()
    assert lines[1].startswith(" " * 5) and lines[1][5] != " ", lines  # under "1/1", past "gang "
    section = next(i for i, line in enumerate(lines) if line.startswith("  cpu:"))
    assert lines[section + 1].startswith(" " * 4) and lines[section + 1][4] != " ", lines


def _labels(chart: Chart) -> list[str]:
    lines = [_line(chart, y) for y in range(chart.size.height)]
    return [line.split("┤", 1)[0].strip() for line in lines if "┤" in line]


async def test_charts_shown_again_tick_for_their_height() -> None:
    from hpctop.tui.widgets.charts import y_ticks

    app = _demo(charts=True)
    async with app.run_test(size=(160, 48)) as pilot:
        for _ in range(3):
            app.step_now(300)
        await pilot.pause()
        first = {chart.id: _labels(chart) for chart in app.query(Chart)}
        await pilot.press("C")  # hidden, then shown: drawn before the layout gave them a height
        await pilot.pause()
        await pilot.press("C")
        await pilot.pause()
        for chart in app.query(Chart):
            assert chart.y_top is not None, chart.id
            ticks = y_ticks(chart.y_top, chart.size.height)
            assert _labels(chart) == [f"{t:g}" for t in reversed(ticks)], (chart.id, _labels(chart))
            assert _labels(chart) == first[chart.id], (chart.id, first[chart.id], _labels(chart))
        assert len(_labels(app.query_one("#chart-alloc", Chart))) == 3  # 0, the middle one, the top


async def test_the_wait_axis_ticks_round_values_in_a_unit_that_suits() -> None:
    app = _demo(charts=True)
    async with app.run_test(size=(160, 48)) as pilot:
        for _ in range(3):
            app.step_now(300)
        await pilot.pause()
        chart = app.query_one("#chart-waits", Chart)
        lines = [_line(chart, y) for y in range(chart.size.height)]
        axis = next(i for i, line in enumerate(lines) if "└" in line)
        labels = lines[axis + 1].split()
        unit = lines[axis + 2].strip()
        longest = max(app.history.waits)
        values = [float(label) for label in labels]
        assert all(label == f"{v:g}" for label, v in zip(labels, values, strict=True)), labels
        assert len({round(b - a, 9) for a, b in pairwise(values)}) == 1, labels  # even steps
        assert longest < 120 and unit == "seconds waited", (unit, longest)  # 9 s, not 0.15 minutes
        assert values[0] == 0 and values[-1] >= longest and values[-1] == int(values[-1]), values
    from hpctop.tui.widgets.charts import round_ticks, wait_unit

    assert wait_unit(9.0) == ("seconds", 1.0)
    assert wait_unit(600.0) == ("minutes", 60.0)
    assert wait_unit(20 * 3600.0) == ("hours", 3600.0)
    assert wait_unit(5 * 86400.0) == ("days", 86400.0)
    assert round_ticks(9.0, 4) == [0, 3, 6, 9]
    assert round_ticks(47.0, 4) == [0, 25, 50]
    assert round_ticks(0.0, 4) == [0, 1]


async def test_ctrl_c_quits_but_copies_in_a_text_field() -> None:
    from textual.widgets import Input

    app = _demo()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("slash")  # the filter prompt: ctrl+c there is the field's copy
        await pilot.pause()
        assert isinstance(app.focused, Input)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running and app.return_code is None
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("ctrl+c")  # on the jobs pane: the console ends at once, as with q
        await pilot.pause()
    assert app.return_code == 0 and not app.is_running


def _time_axis(chart: Chart) -> tuple[list[str], str]:
    lines = [_line(chart, y) for y in range(chart.size.height)]
    axis = next(i for i, line in enumerate(lines) if "└" in line)
    return lines[axis + 1].split(), lines[axis + 2].strip()


async def test_the_line_charts_time_axis_reads_seconds_first_then_minutes() -> None:
    """The line charts' time axis was always in minutes: the first seconds of a session (or a slow
    demo) read "0.0 0.1 0.2 0.3 minutes", and spans under a tenth of a second "0.000 0.000 0.000".
    Now the unit follows the span, as the wait axis's does."""
    app = _demo(charts=True)
    async with app.run_test(size=(160, 48)) as pilot:
        for _ in range(3):
            app.step_now(10)
        await pilot.pause()
        labels, unit = _time_axis(app.query_one("#chart-alloc", Chart))
        span = app.history.samples[-1].t - app.history.samples[0].t
        assert span < 120 and unit == "seconds", (unit, span)
        assert len(set(labels)) == len(labels) >= 2 and all(label.isdigit() for label in labels), labels
        for _ in range(3):
            app.step_now(300)
        await pilot.pause()
        labels, unit = _time_axis(app.query_one("#chart-alloc", Chart))
        assert unit == "minutes" and len(set(labels)) == len(labels) >= 2, (unit, labels)
