"""The console on an 80-column terminal as a user meets it (issue 16 session 13, ``make demo`` in
tmux at 80x24): what was cut or wrapped there, each checked at the size it was seen at.

- the queue pane beside the GPU map (40 cells) cut the counts mid-token ("R1819 P"): the fair
  share now gives way, then the name, so every queue's R/PD count is whole;
- the help screen's action-name column took 18 of 80 cells and wrapped every description onto
  three or four lines: below 100 columns it is left out (and the title says so);
- a confirmation's request body (a DELETE's JSON) was drawn at the margin, as if it were a
  change of its own, instead of under "a live cluster would be sent".
"""

from __future__ import annotations

from dataclasses import replace

from rich.console import Console
from textual.widgets import Static

from hpctop.actions.requests import ActionKind, ActionRequest, Preview
from hpctop.tui.app import HpctopApp, make_app
from hpctop.tui.screens.confirm import preview_text
from hpctop.tui.screens.help import ACTION_COLUMN_MIN_WIDTH, HelpScreen
from hpctop.tui.widgets.queues import QueuePane
from tests.sample_session import SampleSession


def _app() -> HpctopApp:
    return make_app(
        SampleSession(seed=1), tick_interval=0, clock=lambda: 0.0, user="alice", show_charts=False
    )


def _lines(widget: Static) -> list[str]:
    """What ``widget`` shows, line by line."""
    return ["".join(seg.text for seg in widget.render_line(y)) for y in range(widget.size.height)]


def _text(widget: QueuePane, y: int) -> str:
    return "".join(seg.text for seg in widget.render_line(y))


async def test_queue_counts_are_whole_beside_the_gpu_map_at_80_columns() -> None:
    app = _app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("1")  # the GPU pane: the queue pane shares the top row with it
        await pilot.pause()
        pane = app.query_one(QueuePane)
        assert pane.size.width < 50, pane.size  # the narrow case this test is about
        # the demo's counts an hour in (the sample's are two digits)
        busy = {p: replace(q, running_jobs=1819, pending_jobs=441) for p, q in pane.queues.items()}
        pane.set_queues(busy, pane.cluster_gpu, pane.local, pane.kinds)
        await pilot.pause()
        shown = pane.visible_paths()[: pane.size.height]
        assert shown
        for y, path in enumerate(shown):
            q = pane.queues[path]
            line = _text(pane, y)
            assert f"R{q.running_jobs} PD{q.pending_jobs}" in line, (path, line)
            assert "fs" not in line, line  # the fair share gave way to the counts
    app = _app()  # the same pane with room keeps the fair share
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("1")
        await pilot.pause()
        pane = app.query_one(QueuePane)
        assert pane.size.width > 60 and "fs" in _text(pane, 0), _text(pane, 0)


async def test_help_leaves_out_action_names_below_100_columns() -> None:
    for width, shown in ((80, False), (ACTION_COLUMN_MIN_WIDTH, True)):
        app = _app()
        async with app.run_test(size=(width, 30)) as pilot:
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            title = _lines(app.screen.query_one("#help-title", Static))
            header = _lines(app.screen.query_one("#help-table", Static))[0]
            assert "esc closes" in title[0], title
            assert header.split()[:2] == ["where", "keys"], header
            assert ("action" in header.split()) is shown, header
            assert ("from 100 columns wide" in " ".join(title)) is not shown, title


def test_a_request_body_stays_under_its_request() -> None:
    request = ActionRequest(ActionKind.CANCEL, ("ns", "Job", "train"))
    # as the simulator lists it: one line, too long for the dialog (rich wrapped it at the margin)
    body_json = '{"propagationPolicy":"Background","preconditions":{"uid":"5b49"}}'
    sent = f"DELETE batch/v1 Job recsys/openb-pod-0026 {body_json}"
    preview = Preview(request, True, ("Job ns/train: deleted",), requests=(sent,))
    console = Console(width=76, record=True, color_system=None)  # the dialog's text at 80 columns
    console.print(preview_text("Cancel 1 job(s)", [preview], ["ns/train"], simulated=True))
    lines = console.export_text().splitlines()
    body = next(line for line in lines if "propagationPolicy" in line)
    request_line = next(line for line in lines if line.lstrip().startswith("DELETE"))
    assert request_line.startswith("      DELETE"), lines
    assert body == "        " + body_json, lines  # under its request, whole


def test_time_axes_tick_at_round_minutes() -> None:
    """A chart's minutes axis ticked where plotext split the span evenly ("0.0 1.0 1.9 2.9 3.9")."""
    from hpctop.tui.widgets.charts import nice_ticks, tick_labels

    assert tick_labels(nice_ticks(0.0, 3.9)) == ["0", "1", "2", "3"]
    assert tick_labels(nice_ticks(2.0, 3.87)) == ["2.0", "2.5", "3.0", "3.5"]
    assert tick_labels(nice_ticks(0.0, 0.15)) == ["0.00", "0.05", "0.10", "0.15"]
    assert nice_ticks(0.0, 47.0) == [0, 10, 20, 30, 40]
    assert nice_ticks(5.0, 5.0) == [5.0]
    for low, high in ((0.0, 3.9), (2.0, 3.87), (0.013, 0.9), (100.0, 7000.0)):
        ticks = nice_ticks(low, high)
        assert 2 <= len(ticks) <= 5 and low <= ticks[0] and ticks[-1] <= high, (low, high, ticks)
