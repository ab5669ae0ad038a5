"""Mouse in the GPU and queue panes, driven with ``pilot.click`` like a person would.

Offsets are relative to the widget's region, so they include its borders: both panes have a one-line
top border (content row = offset y - 1) and the queue pane a one-column left border. Each expected
target is read from the pane's own state (``hit_at``, ``visible_paths``) before the click, so a test
fails when a click lands on the wrong thing rather than passing on a lucky layout.
"""

from __future__ import annotations

from hpctop.tui.app import HpctopApp, make_app
from hpctop.tui.widgets.gpus import GpuPane
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.queues import QueuePane
from tests.sample_session import SampleSession

SIZE = (160, 48)


def _app() -> HpctopApp:
    session = SampleSession(seed=1)
    return make_app(session, tick_interval=0, clock=lambda: 0.0, user="alice", show_charts=False)


def _find(gpus: GpuPane, kind: str, skip: object = None) -> tuple[int, int, int | str]:
    """The content cell of the first ``kind`` hit (other than ``skip``): (x, y, value)."""
    for y, line in enumerate(gpus._hits):
        for start, _end, k, value in line:
            if k == kind and value != skip:
                return start, y, value
    raise AssertionError(f"no {kind} drawn")


async def test_click_node_cell_selects_it_and_double_click_zooms() -> None:
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        gpus = app.query_one("#gpus", GpuPane)
        assert gpus.zoom == "cluster" and gpus.cursor == 0
        x, y, _ = _find(gpus, "node", skip=0)
        x += 3  # a later node on the same line
        hit = gpus.hit_at(x, y)
        assert hit is not None and hit[0] == "node" and hit[1] != 0
        await pilot.click(GpuPane, offset=(x, y + 1))
        await pilot.pause()
        assert gpus.cursor == hit[1] and app.focused is gpus and gpus.zoom == "cluster"
        name = gpus.current.name if gpus.current else ""
        await pilot.click(GpuPane, offset=(x, y + 1), times=2)
        await pilot.pause()
        assert gpus.zoom == "node" and gpus.current is not None and gpus.current.name == name
        assert name in "".join(seg.text for seg in gpus.render_line(0))


async def test_click_partition_name_shows_that_partition() -> None:
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        gpus = app.query_one("#gpus", GpuPane)
        assert gpus.current is not None
        first = gpus.current.partition
        x, y, name = _find(gpus, "partition", skip=first)  # the totals line of the cluster view
        await pilot.click(GpuPane, offset=(x, y + 1))
        await pilot.pause()
        assert gpus.zoom == "partition" and gpus.current.partition == name != first
        # in the partition zoom the header names the other partitions: a click switches back
        x, y, other = _find(gpus, "partition", skip=name)
        assert other == first or other != name
        await pilot.click(GpuPane, offset=(x + 1, y + 1))
        await pilot.pause()
        assert gpus.zoom == "partition" and gpus.current.partition == other


async def test_click_node_row_in_partition_zoom_selects_it() -> None:
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        gpus = app.query_one("#gpus", GpuPane)
        await pilot.press("1", "z")
        assert gpus.zoom == "partition" and gpus.cursor == 0
        # content line 0 is the partition header, line 3 the third node of the partition
        await pilot.click(GpuPane, offset=(4, 4))
        await pilot.pause()
        assert gpus.cursor == 2 and gpus.zoom == "partition"
        await pilot.click(GpuPane, offset=(4, 3), times=2)
        await pilot.pause()
        assert gpus.cursor == 1 and gpus.zoom == "node"


async def test_click_queue_selects_marker_toggles_double_click_filters_jobs() -> None:
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        queues = app.query_one("#queues", QueuePane)
        jobs = app.query_one("#jobs", JobsTable)
        vis = queues.visible_paths()
        parent = vis.index("root.prod")
        assert queues.queues["root.prod"].children and queues.current == "root"
        await pilot.click(QueuePane, offset=(12, 1 + 3))  # content line 3, on the name
        await pilot.pause()
        assert queues.current == vis[3] and app.focused is queues
        assert "root.prod" not in queues.collapsed
        depth = queues.queues["root.prod"].depth
        await pilot.click(QueuePane, offset=(1 + 2 * depth, 1 + parent))  # the ▾ of root.prod
        await pilot.pause()
        assert "root.prod" in queues.collapsed and queues.current == "root.prod"
        assert len(queues.visible_paths()) < len(vis)
        await pilot.click(QueuePane, offset=(1 + 2 * depth + 1, 1 + parent))  # right half of the ▸
        await pilot.pause()
        assert "root.prod" not in queues.collapsed
        leaf = next(p for p in queues.visible_paths() if not queues.queues[p].children)
        line = queues.visible_paths().index(leaf)
        await pilot.click(QueuePane, offset=(12, line + 1), times=2)
        await pilot.pause()
        assert queues.current == leaf
        assert jobs.filters.queue == leaf
        assert jobs.view and all(r.queue == leaf for r in jobs.view)
        # a parent queue's filter covers its children's jobs
        await pilot.click(QueuePane, offset=(12, 1), times=2)
        await pilot.pause()
        assert jobs.filters.queue == "root" and len(jobs.view) == len(jobs.rows)
