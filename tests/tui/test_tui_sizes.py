"""The console at every size a user has: 80x24, 120x35 and 200x50 (issue 15, "a layout that fits").

SVG snapshots (pytest-textual-snapshot, as tests/tui/test_tui_snapshots.py) of the main screen, the job
detail, help and each dialog (confirm, prompt, pick) at the three sizes, on the seeded sample
session; plus checks a snapshot cannot make: the status bar with READ-ONLY and at least 10 job rows
on screen at each size, every dialog inside the screen, and no action on a row nobody can see.
Update with ``pytest tests/tui/test_tui_sizes.py --snapshot-update`` after an intended change.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Input, Static
from textual.widgets._footer import FooterKey

from hpctop.tui.app import HpctopApp, make_app
from hpctop.tui.screens.confirm import ConfirmScreen
from hpctop.tui.widgets.footer import MORE_KEYS, FittedFooter, hint_width
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.status import StatusBar
from tests.sample_session import SampleSession

# read under an idle loop: a starved worker looks idle to the pilot before the footer and
# dialogs are laid out (under -n 2: FooterKey regions of width 0, prompt snapshots half drawn)
pytestmark = pytest.mark.serial

SIZES = [(80, 24), (120, 35), (200, 50)]
IDS = ["80x24", "120x35", "200x50"]
#: what opens each screen from the main screen (the sample's second row is a pending job)
SCREENS = {
    "main": [],
    "detail": ["down", "enter"],
    "help": ["question_mark"],
    "confirm": ["down", "c"],
    "prompt": ["slash"],
    "pick": ["down", "m"],
}


def _app(read_only: bool = False, charts: bool = False) -> HpctopApp:
    session = SampleSession(seed=1, read_only=read_only)
    return make_app(
        session, tick_interval=0, clock=lambda: 0.0, user="alice", read_only=read_only, show_charts=charts
    )


@pytest.mark.parametrize("size", SIZES, ids=IDS)
@pytest.mark.parametrize("screen", list(SCREENS))
def test_screen_at_size(snap_compare: Any, screen: str, size: tuple[int, int]) -> None:
    async def open_it(pilot: Any) -> None:
        await pilot.press(*SCREENS[screen])
        await pilot.pause()
        for field in pilot.app.screen.query(Input):  # a blinking cursor is on or off by the clock
            field.cursor_blink = False

    assert snap_compare(_app(), terminal_size=size, run_before=open_it)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_status_bar_and_ten_job_rows_fit(size: tuple[int, int]) -> None:
    app = _app(read_only=True, charts=True)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        status = app.query_one(StatusBar)
        assert status.region.y == 0 and status.region.height == 1
        assert "READ-ONLY" in str(status.render()), str(status.render())
        jobs = app.query_one(JobsTable)
        assert jobs.region.bottom <= size[1] - 2  # above the info line and the footer
        assert jobs.content_region.height - 1 >= 10  # the header, then at least 10 rows
        # the columns fit the pane: no sideways scrolling needed to read a row
        assert sum(jobs._widths) + len(jobs._widths) + 2 <= jobs.content_region.width
        assert "JOB" in jobs.shown_columns and "ST" in jobs.shown_columns and "REASON" in jobs.shown_columns
        header = "".join(seg.text for seg in jobs.render_line(0))
        assert " NAME " not in header and " ID " not in header  # merged into JOB


@pytest.mark.parametrize("size", SIZES, ids=IDS)
@pytest.mark.parametrize("screen", ["help", "confirm", "prompt", "pick"])
async def test_dialog_inside_the_screen(screen: str, size: tuple[int, int]) -> None:
    app = _app()
    async with app.run_test(size=size) as pilot:
        await pilot.press(*SCREENS[screen])
        await pilot.pause()
        box = next(iter(app.screen.children)).region
        assert box.x >= 0 and box.y >= 0 and box.right <= size[0] and box.bottom <= size[1], box
        if screen == "confirm":
            yes = app.screen.query_one("#confirm-yes").region
            assert yes.bottom <= size[1] and yes.height > 0  # the buttons stay on screen


async def test_no_action_on_an_invisible_row() -> None:
    app = _app()
    async with app.run_test(size=(80, 24)) as pilot:
        jobs = app.query_one(JobsTable)
        await pilot.press("down")
        assert jobs.row_visible()
        jobs.scroll_to(y=jobs.cursor + 30, animate=False, immediate=True)  # the wheel moves the view
        await pilot.pause()
        assert not jobs.row_visible()
        await pilot.press("c")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        assert any("not on screen" in n.message for n in app._notifications)
        jobs.display = False  # a pane hidden: its cursor row is not visible either
        await pilot.pause()
        await pilot.press("h")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        jobs.display = True
        await pilot.pause()
        jobs.action_cursor(0)  # moving the cursor brings its row back into view
        await pilot.pause()
        assert jobs.row_visible()
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)


async def test_read_only_refusals_say_so() -> None:
    app = _app(read_only=True)
    async with app.run_test(size=(80, 24)) as pilot:
        for key in ("c", "h", "space", "p"):
            await pilot.press(key)
            await pilot.pause()
        messages = [n.message for n in app._notifications]
        for word in ("cancel", "hold", "mark", "priority"):
            assert any(m.startswith(f"Read-only: {word} refused") for m in messages), (word, messages)
        await pilot.press("2", "x")
        await pilot.pause()
        assert any(
            m.startswith("Read-only: close queue refused") for m in (n.message for n in app._notifications)
        )
        assert not isinstance(app.screen, ConfirmScreen)
        info = app.query_one("#jobs-info", Static)
        assert "marked" not in str(info.render())


async def _footer_after(pilot: Any, app: HpctopApp) -> tuple[FittedFooter, list[FooterKey]]:
    """The screen's footer once its hints are laid out: each hint has a region, and the same hints
    are there after one more pause. The hints come after the first refresh, and the footer composes
    them again when the screen's bindings change: a starved process (the pilot takes a process
    that gets no CPU for an idle one) read the hints of a new compose before their layout, a
    region of width 0 (flaky under load; 2-3 of these 6 tests in each run with the process stopped
    90 ms of every 95)."""
    footer = app.screen.query_one(FittedFooter)
    seen: list[FooterKey] = []
    for _ in range(100):
        await pilot.pause()
        keys = [k for k in footer.query(FooterKey) if not k.has_class("-command-palette")]
        laid_out = bool(keys) and all(k.region.width > 0 for k in keys)
        if laid_out and keys == seen:
            return footer, keys
        seen = keys if laid_out else []
    raise AssertionError("the footer laid out no hints")


@pytest.mark.parametrize("size", SIZES, ids=IDS)
@pytest.mark.parametrize("screen", ["main", "detail"])
async def test_footer_hints_are_whole_and_the_way_to_every_key_stays(
    screen: str, size: tuple[int, int]
) -> None:
    """At 80 columns the stock footer cut its row at the terminal's edge ("z ▏"): each hint shown
    must be whole, inside the screen and clear of the palette hint, Quit and Help always among them."""
    app = _app()
    async with app.run_test(size=size) as pilot:
        await pilot.press(*SCREENS[screen])
        footer, keys = await _footer_after(pilot, app)
        palette = footer.query_one(".-command-palette").region
        for key in keys:
            assert key.region.width >= hint_width(key, compact=footer.compact) - 1, key.description
            assert key.region.right <= palette.x, (key.description, key.region, palette)
        actions = {k.action for k in keys}
        assert actions & {"quit", "app.quit"} and actions & {"help", "app.help"}, actions
        if size == (200, 50):  # room for every hint: none left out, Help is Help
            assert footer.left_out == 0
            assert "Help" in {k.description for k in keys}
        elif footer.left_out:
            assert MORE_KEYS in {k.description for k in keys}, "the footer says where the rest are"
