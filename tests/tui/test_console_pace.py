"""Honest pace in the status bar (issue 15): the simulation's real speed, the snapshot's real age.

A session whose steps are slow (a sleep, standing in for the busy hour at ×600 on a big cluster)
behind the real tick: the status bar must say the speed achieved against the one asked
(``×N of ×600``) and, while one long step keeps new snapshots away, an age in real seconds (the
old bar said ``age <1s`` throughout a 7-11 s freeze, its age being virtual). The UI thread stays
free meanwhile: a refresh asked during the step returns at once.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from textual.pilot import Pilot

from hpctop.tui.app import make_app
from hpctop.tui.widgets.status import StatusBar
from tests.sample_session import SampleSession

SIZE = (160, 48)


class SlowSession(SampleSession):
    """Each step sleeps ``delay`` real seconds (held by the console's lock, as a real step is)."""

    delay = 0.1
    #: when the step now sleeping a long ``delay`` began (monotonic), None outside one
    long_step_since: float | None = None

    def step(self, virtual_seconds: float) -> None:
        long = self.delay >= 1.0
        if long:
            self.long_step_since = time.monotonic()
        try:
            time.sleep(self.delay)
        finally:
            if long:
                self.long_step_since = None
        super().step(virtual_seconds)


async def _until(pilot: Pilot[None], condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Let the console run until ``condition`` holds (a loaded machine is slower, never wrong)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout:.0f} s: {what}"
        await pilot.pause(0.05)


def _age_s(shown: str) -> int | None:
    """The status bar's age in whole seconds ("age 2s", "age 0:02"), None for "<1s" or none."""
    found = re.search(r"age (?:(\d+)s|(\d+):(\d\d))\b", shown)
    if found is None:
        return None
    if found.group(1) is not None:
        return int(found.group(1))
    return int(found.group(2)) * 60 + int(found.group(3))


def status(app: object) -> str:
    return str(app.query_one("#status", StatusBar).render())  # type: ignore[attr-defined]


async def test_status_says_when_the_simulation_cannot_keep_up() -> None:
    session = SlowSession(seed=1)
    session.speed = 600.0
    app = make_app(session, tick_interval=0.05, user="alice", show_charts=False)
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: " of ×600" in status(app), "the achieved speed beside the asked one")
        shown = status(app)
        found = re.search(r"×([\d.]+) of ×600", shown)
        assert found, shown
        assert float(found.group(1)) < 0.9 * 600


async def test_age_is_real_time_during_a_long_step() -> None:
    session = SlowSession(seed=1)
    app = make_app(session, tick_interval=0.05, user="alice", show_charts=False)
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: "age" in status(app), "a first status bar")
        session.delay = 4.0  # the next step takes 4 s, holding the console's lock
        await _until(pilot, lambda: session.long_step_since is not None, "the long step begins")
        began = session.long_step_since
        assert began is not None

        def aged() -> bool:
            age = _age_s(status(app))
            return age is not None and age >= 1

        await _until(pilot, aged, "an age of a second or more while the step runs")
        shown, since = status(app), time.monotonic() - began
        assert session.long_step_since is not None, "the age must be read during the step"
        age = _age_s(shown)
        # real seconds: at least one, no more than have passed since the last snapshot could
        # have been taken (the step's start, plus one tick); a virtual age would be ~×60 that
        assert age is not None and 1 <= age <= since + 1, (shown, since)
        app.refresh_session()  # asked during the step: must not wait for it
        assert session.long_step_since is not None, "refresh waited for the step to end"
        session.delay = 0.0
