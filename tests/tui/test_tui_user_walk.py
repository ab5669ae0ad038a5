"""The console as a user meets it on the demo at 80x24 and 200x50 (issue 16 session 15, ``hpctop
--demo`` in tmux): what was wrong there, each checked on what the screen shows. Each test fails on
the code before its fix.

- a CPU-only job showed GPUS ``0`` in the jobs pane where ``hpctop jobs`` writes ``-``;
- at 80 columns a pending job showed TIME ``0:00`` (squeue's run time) while WAIT was not shown:
  the column is TIME/WAIT there and a waiting job's cell is its wait;
- a confirmation's refusal too long for the dialog went on at the dialog's margin;
- the charts' y axes were plotext's fifths of the span to one decimal ("1259.4", "11.6 pending
  jobs"), with the ticks that fell on a taken row dropped;
- C at 80x24 (the charts in the top panes' place) left the focus on the hidden queue pane, and 1
  or 2 there (or under 20 rows) focused a pane nobody could see.
"""

from __future__ import annotations

from itertools import pairwise

from textual.widget import Widget

from hpctop.runtime.session import demo_session
from hpctop.tui.app import HpctopApp, make_app
from hpctop.tui.rows import fmt_duration
from hpctop.tui.screens.confirm import ConfirmScreen
from hpctop.tui.widgets.charts import Chart
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.queues import QueuePane
from tests.sample_session import SampleSession


def _line(widget: Widget, y: int) -> str:
    return "".join(seg.text for seg in widget.render_line(y))


def _demo(charts: bool = False) -> HpctopApp:
    return make_app(
        demo_session(seed=1, at=600), tick_interval=0, clock=lambda: 0.0, user="alice", show_charts=charts
    )


def _sample(charts: bool = True) -> HpctopApp:
    return make_app(
        SampleSession(seed=1), tick_interval=0, clock=lambda: 0.0, user="alice", show_charts=charts
    )


def _column(jobs: JobsTable, name: str, line: str) -> str:
    """The text of column ``name`` in a drawn line of the pane (two cells of mark, a gap after each)."""
    start = 2
    for _, col, width in jobs._shown:
        if col.name == name:
            return line[start : start + width].strip()
        start += width + 1
    raise AssertionError(f"{name} not shown: {jobs.shown_columns}")


async def _filter_to(pilot: object, app: HpctopApp, text: str) -> None:
    await pilot.press("slash")  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]
    await pilot.press(*text, "enter")  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]


async def test_a_cpu_only_job_shows_no_gpus_as_hpctop_jobs_does() -> None:
    app = _demo()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        jobs = app.query_one(JobsTable)
        cpu_only = next(r for r in jobs.rows if r.gpus == 0)  # the openb trace has CPU-only pods
        gpu_job = next(r for r in jobs.rows if r.gpus >= 1)
        for row, shown in ((cpu_only, "-"), (gpu_job, f"{gpu_job.gpus:g}")):
            await _filter_to(pilot, app, row.id)
            assert jobs.view[0] is row, [r.id for r in jobs.view[:3]]
            assert _column(jobs, "GPUS", _line(jobs, 1)) == shown, _line(jobs, 1)
            await pilot.press("escape")
            await pilot.pause()


async def test_a_pending_job_shows_its_wait_where_wait_does_not_fit() -> None:
    for size, merged in (((80, 24), True), ((200, 50), False)):
        app = _demo()
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            jobs = app.query_one(JobsTable)
            for _ in range(60):  # until a job has waited a few simulated seconds
                waiting = [r for r in jobs.view if r.state.is_pending and r.waited(jobs.now) >= 2]
                if waiting:
                    break
                app.step_now(3)
                await pilot.pause()
            assert waiting, "no job waiting in the demo's first minutes"
            await pilot.press("f", "home")  # pending only, from the top
            await pilot.pause()
            y, row = next((i + 1, r) for i, r in enumerate(jobs.view) if r.waited(jobs.now) >= 2)
            assert y < jobs.content_region.height, y
            line = _line(jobs, y)
            header = _line(jobs, 0)
            wait = fmt_duration(row.waited(jobs.now))
            assert ("WAIT" in jobs.shown_columns) is not merged
            if merged:  # 80 columns: one TIME/WAIT column, the wait in it
                assert "TIME/WAIT" in header, header
                assert _column(jobs, "TIME", line) == wait, (line, wait)
                await pilot.press("f")  # running: a run time stays a run time
                await pilot.pause()
                started = jobs.view[0]
                assert started.start is not None and started.end is None
                ran = _line(jobs, 1)
                assert _column(jobs, "TIME", ran) == fmt_duration(started.elapsed(jobs.now)), ran
            else:  # both columns: TIME is squeue's run time, WAIT the wait
                assert "TIME/WAIT" not in header and " WAIT " in header + " ", header
                assert _column(jobs, "TIME", line) == "0:00", line
                assert _column(jobs, "WAIT", line) == wait, line


async def test_a_long_refusal_goes_on_under_its_text_in_the_dialog() -> None:
    app = _demo()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        jobs = app.query_one(JobsTable)
        for _ in range(3):  # all -> pending -> running -> done
            await pilot.press("f")
        await pilot.pause()
        assert jobs.view and jobs.view[0].state.is_finished
        await pilot.press("home", "c")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        body = app.screen.query_one("#confirm-body")
        lines = [_line(body, y).rstrip() for y in range(body.size.height)]
        first = next(i for i, line in enumerate(lines) if "✗" in line)
        assert "already finished" not in lines[first] or lines[first + 1].strip(), lines
        continued = lines[first + 1]
        assert continued.strip() and not continued.lstrip().startswith(("✗", "→")), lines
        # under the refusal's text (after "  ✗ "), not at the margin
        assert continued.startswith(" " * 4) and not continued.startswith(" " * 5), lines


async def test_chart_y_axes_tick_at_round_values_on_rows_of_their_own() -> None:
    app = _sample()
    async with app.run_test(size=(200, 50)) as pilot:
        for _ in range(6):
            app.step_now(300)
        await pilot.pause()
        for chart in app.query(Chart):
            lines = [_line(chart, y) for y in range(chart.size.height)]
            labels = [line.split("┤", 1)[0].strip() for line in lines if "┤" in line]
            assert len(labels) >= 2, (chart.id, lines)
            # rising evenly from 0 in round steps, each written as short as it is ("0 250 500",
            # not "0.0 ... 441.0"), the top one on the canvas's top row, the data above half of it
            values = [float(label) for label in labels][::-1]
            assert values[0] == 0 and len(labels) <= 3, (chart.id, labels)
            assert all(label == f"{float(label):g}" for label in labels), (chart.id, labels)
            steps = {round(b - a, 9) for a, b in pairwise(values)}
            assert len(steps) == 1, (chart.id, labels)
            assert "┤" in lines[2], (chart.id, lines)  # under the title and the frame's top
            top = getattr(chart, "y_top", None)
            assert top is not None and top > values[-1] / 2, (chart.id, top, labels)
    from hpctop.tui.widgets.charts import y_ticks  # here: the screen's check above runs on any code

    assert y_ticks(441.0, 10) == [0, 250, 500]
    assert y_ticks(52.9, 10) == [0, 30, 60]
    assert y_ticks(11.6, 10) == [0, 6, 12]
    assert y_ticks(4.4, 10) == [0, 2.5, 5]
    assert y_ticks(1322.0, 7) == [0, 1500]  # 80x24: two canvas rows, two ticks
    assert y_ticks(0.0, 10) == [0, 1]


async def test_the_focus_stays_on_a_pane_that_is_shown() -> None:
    app = _sample()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2")  # the queue pane, then the charts in its place
        await pilot.pause()
        assert isinstance(app.focused, QueuePane)
        await pilot.press("C")
        await pilot.pause()
        assert app.has_class("-charts")
        assert isinstance(app.focused, JobsTable), app.focused
        await pilot.press("2")  # the queues asked for: the charts give way
        await pilot.pause()
        assert isinstance(app.focused, QueuePane) and app.focused.region.height > 0
        assert not app.has_class("-charts")
    app = _sample()
    async with app.run_test(size=(80, 18)) as pilot:  # under 20 rows: only the jobs pane
        await pilot.pause()
        assert app.query_one("#top").region.height == 0
        await pilot.press("2")
        await pilot.pause()
        queues = app.query_one(QueuePane)
        assert app.focused is queues and queues.region.height > 0, queues.region
        jobs = app.query_one(JobsTable)
        assert jobs.content_region.height - 1 >= 3  # some job rows stay
        footer_y = app.size.height - 1
        assert jobs.region.bottom <= footer_y - 1  # the info line and the footer stay on screen
