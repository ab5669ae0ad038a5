"""The GPU pane's partition zoom at 80 columns (issue 16 session 14, ``make demo`` in tmux): the
other partitions' names after the current one's figures ran past the 40-cell pane and were cut
("G2 G3 P100 T"); names that do not fit now go on the next line, each still clickable."""

from __future__ import annotations

import pytest

from hpctop.tui.app import make_app
from hpctop.tui.widgets.gpus import GpuPane
from tests.sample_session import SampleSession


async def test_every_partition_name_is_whole_in_the_partition_zoom_at_80_columns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = make_app(SampleSession(seed=1), tick_interval=0, clock=lambda: 0.0, user="alice", show_charts=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("1")
        await pilot.pause()
        pane = app.query_one(GpuPane)
        if pane.zoom != "partition":
            await pilot.press("z")
            await pilot.pause()
        assert pane.zoom == "partition"
        # long names, as a cluster may have: one line of 40 cells cannot hold them all
        names = [f"partition-{c}-long" for c in "abcdef"]
        monkeypatch.setattr(type(pane.map), "partition_names", lambda self: names)
        pane.rebuild()
        await pilot.pause()
        width = pane.size.width
        assert width < 50, width
        shown = ["".join(seg.text for seg in pane.render_line(y)) for y in range(pane.size.height)]
        text = "\n".join(shown)
        for name in names:
            assert name in text, (name, shown)
        assert all(len(line.rstrip()) <= width for line in shown), shown
