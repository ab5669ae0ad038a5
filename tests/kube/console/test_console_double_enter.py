"""Two Enters in one read of the terminal, in each picker of a live console (issue 12).

A terminal delivers a double press (or a key repeat) as two key events back to back; the picker
used to answer twice: the second dismiss popped the main screen (``ScreenStackError``, the console
gone, exit status 0). Here both Enters are posted before either is handled, as the driver does,
on a LiveConsoleSession over the fake API server (its previews are HTTP round trips in a worker,
so the picker is gone and the confirmation not up yet when the second Enter arrives). The console
must survive, show one confirmation, and have sent no write.
"""

from __future__ import annotations

from textual import events
from textual.pilot import Pilot

from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.tui.app import HpctopApp, make_app
from hpctop.tui.screens.confirm import ConfirmScreen, PickScreen
from tests.kube.console.conftest import KEY, SIZE, VC_KEY, patches, real_patches, select, select_queue, settle
from tests.kube.fakeserver import FakeApiServer


async def double_enter(app: HpctopApp, pilot: Pilot[None]) -> None:
    assert isinstance(app.screen, PickScreen)
    for _ in range(2):
        app.post_message(events.Key("enter", "\r"))
    await pilot.pause()
    await settle(app, pilot)
    await pilot.pause(0.2)


async def test_priority_class_picker(fake: FakeApiServer, volcano: LiveConsoleSession) -> None:
    app = make_app(volcano, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await select(app, pilot, VC_KEY)
        await pilot.press("p")
        await pilot.pause()
        await double_enter(app, pilot)
        assert app.is_running and isinstance(app.screen, ConfirmScreen)
        assert len(app.screen_stack) == 2
        assert real_patches(fake) == []


async def test_close_queue_picker(fake: FakeApiServer, kueue: LiveConsoleSession) -> None:
    app = make_app(kueue, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await select_queue(app, pilot)
        await pilot.press("x")
        await pilot.pause()
        await double_enter(app, pilot)
        assert app.is_running and isinstance(app.screen, ConfirmScreen)
        assert len(app.screen_stack) == 2
        assert all(w.params.get("dryRun") == "All" for w in patches(fake))


async def test_move_queue_picker(fake: FakeApiServer, kueue: LiveConsoleSession) -> None:
    app = make_app(kueue, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await select(app, pilot, KEY)
        await pilot.press("m")
        await pilot.pause()
        await double_enter(app, pilot)
        assert app.is_running and len(app.screen_stack) == 2
        assert real_patches(fake) == []
