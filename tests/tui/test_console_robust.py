"""The console never dies on a key (issue 12), on the real demo session and its real actuator.

The session is the one ``make demo`` runs (the openb trace on the simulator, a
``SimulatorActuator``), ten minutes in. An Enter typed ahead into a confirmation never confirms; an
exception in a key's action, a dialog's answer or the tick is one line in the status bar and an
entry in the fault log (no locals), and the console goes on.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from textual import events

from hpctop.runtime.session import Session, demo_session
from hpctop.tui.app import HpctopApp, make_app
from hpctop.tui.screens.confirm import ConfirmScreen, PickScreen
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.status import StatusBar

SIZE = (160, 48)


@pytest.fixture(scope="module")
def demo() -> Session:
    return demo_session(seed=1, at=600)


@pytest.fixture(autouse=True)
def fault_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "console.log"
    monkeypatch.setenv("HPCTOP_LOG", str(path))
    yield path


def app_on(session: Session) -> HpctopApp:
    return make_app(session, tick_interval=0, clock=lambda: 0.0, user="alice", show_charts=False)


def status_text(app: HpctopApp) -> str:
    return str(app.query_one("#status", StatusBar).render())


async def test_enter_typed_ahead_never_confirms(demo: Session) -> None:
    app = app_on(demo)
    async with app.run_test(size=SIZE) as pilot:
        jobs = app.query_one("#jobs", JobsTable)
        await pilot.press("f")  # pending jobs: movable
        key = jobs.current_key
        assert key is not None
        queue_before = demo.snapshot.jobs[key].queue
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, PickScreen)
        for _ in range(2):  # the picker's Enter and one more, in one read of the terminal
            app.post_message(events.Key("enter", "\r"))
        await pilot.pause(0.3)
        assert app.is_running
        assert app.journal.of(key) == [], "the move was executed without its confirmation being seen"
        assert demo.snapshot.jobs[key].queue == queue_before
        if isinstance(app.screen, ConfirmScreen):
            await pilot.press("n")


async def test_exception_in_a_key_is_a_status_line(demo: Session, fault_log: Path) -> None:
    app = app_on(demo)
    secret = "tok-" + "9f8e7d"

    def broken() -> None:
        credential = secret  # a local the report must not print
        raise RuntimeError(f"planted failure {len(credential)}")

    async with app.run_test(size=SIZE) as pilot:
        app.refresh_session = broken  # type: ignore[method-assign]
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert app.is_running
        shown = status_text(app)
        assert "RuntimeError: planted failure" in shown
        log = fault_log.read_text()
        assert "planted failure" in log and "Traceback" in log
        assert secret not in log and secret not in shown
        await pilot.press("down")  # still answers keys
        await pilot.press("question_mark")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "HelpScreen"


async def test_exception_in_a_dialog_answer_is_a_status_line(demo: Session, fault_log: Path) -> None:
    app = app_on(demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f", "m")
        await pilot.pause()

        def broken(*args: object) -> None:
            raise ValueError("planted in the flow")

        app._confirm = broken  # type: ignore[method-assign, assignment]
        await pilot.press("enter")
        await pilot.pause()
        assert app.is_running and len(app.screen_stack) == 1
        assert "ValueError: planted in the flow" in status_text(app)


async def test_failing_tick_is_shown_not_a_silent_freeze(demo: Session, fault_log: Path) -> None:
    app = make_app(demo, tick_interval=0.05, clock=lambda: 0.0, user="alice", show_charts=False)
    async with app.run_test(size=SIZE) as pilot:

        def broken(*args: object) -> None:
            raise OverflowError("planted in publish")

        app.publish = broken  # type: ignore[method-assign, assignment]
        for _ in range(40):
            await pilot.pause(0.05)
            if "planted in publish" in status_text(app):
                break
        assert "tick failed: OverflowError: planted in publish" in status_text(app)
        assert fault_log.read_text().count("planted in publish") >= 1
        assert fault_log.read_text().count("--- ") == 1  # the same fault each tick: logged once
