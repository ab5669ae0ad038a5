"""The status bar at 80 columns in read-only mode names its source (issue 16 session 14, ``make
demo --read-only`` in tmux at 80x24): the READ-ONLY badge, never left out, pushed out the source
("demo") once the demo's counts grew to four digits; the badge now carries it, "demo · READ-ONLY".
"""

from __future__ import annotations

from dataclasses import replace

from hpctop.tui.app import HpctopApp, make_app
from hpctop.tui.widgets.status import READ_ONLY_SOURCE_CAP, StatusBar
from tests.sample_session import SampleSession


def _app(read_only: bool) -> HpctopApp:
    session = SampleSession(seed=1, read_only=read_only, source_name="demo")
    return make_app(
        session, tick_interval=0, clock=lambda: 0.0, user="alice", read_only=read_only, show_charts=False
    )


async def test_read_only_keeps_the_source_at_80_columns() -> None:
    for read_only in (True, False):
        app = _app(read_only)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            bar = app.query_one(StatusBar)
            assert bar._last is not None
            info, colours = bar._last
            # the demo's counts twenty minutes in, at a speed it cannot keep up with
            busy = replace(info, gpus_used=1115.48, gpus_total=6212, running=1143, pending=12, achieved=44.7)
            bar.show(busy, colours)
            shown = str(bar.render())
            assert "R 1143  PD 12" in shown and "GPUs 1115.48/6212 used" in shown, shown
            assert ("demo · READ-ONLY" in shown) is read_only, shown
            assert "demo" in shown, shown


async def test_a_long_source_is_cut_in_the_badge() -> None:
    app = _app(True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        bar = app.query_one(StatusBar)
        assert bar._last is not None
        info, colours = bar._last
        bar.show(replace(info, source="context:" + "x" * 80 + "\x1b[31m"), colours)
        shown = str(bar.render())
        assert "READ-ONLY" in shown and "\x1b" not in shown, shown
        badge = shown.split(" · READ-ONLY")[0].split("hpctop")[-1].strip()
        assert len(badge) == READ_ONLY_SOURCE_CAP and badge.endswith("…"), badge
