"""SVG snapshots of each pane and modal (pytest-textual-snapshot), on the seeded sample session.

The sample session is built in-process with a fixed epoch, no ticking and a frozen clock, so the
screens are byte-for-byte reproducible. Update with ``pytest tests/tui/test_tui_snapshots.py
--snapshot-update`` after an intended change, and look at the report it writes.
"""

from __future__ import annotations

from typing import Any

import pytest

from hpctop.tui.app import HpctopApp, make_app
from tests.sample_session import SampleSession

# read under an idle loop: a starved worker looks idle to the pilot before the screen is drawn
# (under -n 2: the GPU partition zoom snapshot taken mid-layout; it was its 2 s toast gone, see
# _pressed_without_toasts)
pytestmark = pytest.mark.serial

SIZE = (160, 48)


def _app(theme: str = "hpctop-dark", charts: bool = True, read_only: bool = False) -> HpctopApp:
    session = SampleSession(seed=1, read_only=read_only)
    app = make_app(session, theme=theme, tick_interval=0, clock=lambda: 0.0, user="alice", show_charts=charts)
    return app


async def _steps(pilot: Any) -> None:
    app = pilot.app
    for _ in range(6):
        app.step_now(300)
    await pilot.pause()


def test_main_screen(snap_compare: Any) -> None:
    assert snap_compare(_app(), terminal_size=SIZE, run_before=_steps)


def test_main_light_theme(snap_compare: Any) -> None:
    assert snap_compare(_app("hpctop-light"), terminal_size=SIZE, run_before=_steps)


def test_colorblind_read_only(snap_compare: Any) -> None:
    assert snap_compare(_app("hpctop-colorblind", charts=False, read_only=True), terminal_size=SIZE)


def _pressed_without_toasts(*keys: str) -> Any:
    """``keys`` pressed, then the toasts cleared: "GPU pane: partition view" lasts 2 s of wall
    time, so a run slower than that (a starved process: the test under load) took the snapshot
    without it and failed against one taken with it."""

    async def run_before(pilot: Any) -> None:
        await pilot.press(*keys)
        await pilot.pause()
        pilot.app.clear_notifications()
        await pilot.pause()

    return run_before


def test_gpu_partition_zoom_and_queue_focus(snap_compare: Any) -> None:
    press = _pressed_without_toasts("z", "right", "2", "down", "enter")
    assert snap_compare(_app(charts=False), terminal_size=SIZE, run_before=press)


def test_gpu_node_zoom(snap_compare: Any) -> None:
    assert snap_compare(_app(charts=False), terminal_size=SIZE, run_before=_pressed_without_toasts("z", "z"))


def test_job_detail(snap_compare: Any) -> None:
    assert snap_compare(_app(charts=False), terminal_size=SIZE, press=["down", "down", "enter"])


def test_help(snap_compare: Any) -> None:
    assert snap_compare(_app(charts=False), terminal_size=SIZE, press=["question_mark"])


def test_confirm_cancel(snap_compare: Any) -> None:
    assert snap_compare(_app(charts=False), terminal_size=SIZE, press=["down", "c"])


def test_filtered_pending_sorted(snap_compare: Any) -> None:
    assert snap_compare(_app(charts=False), terminal_size=SIZE, press=["f", "s", "s", "space"])
