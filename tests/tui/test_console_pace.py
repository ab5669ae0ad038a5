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

from hpctop.tui.app import make_app
from hpctop.tui.widgets.status import StatusBar
from tests.sample_session import SampleSession

SIZE = (160, 48)


class SlowSession(SampleSession):
    """Each step sleeps ``delay`` real seconds (held by the console's lock, as a real step is)."""

    delay = 0.1

    def step(self, virtual_seconds: float) -> None:
        time.sleep(self.delay)
        super().step(virtual_seconds)


def status(app: object) -> str:
    return str(app.query_one("#status", StatusBar).render())  # type: ignore[attr-defined]


async def test_status_says_when_the_simulation_cannot_keep_up() -> None:
    session = SlowSession(seed=1)
    session.speed = 600.0
    app = make_app(session, tick_interval=0.05, user="alice", show_charts=False)
    async with app.run_test(size=SIZE) as pilot:
        shown = ""
        for _ in range(60):
            await pilot.pause(0.1)
            shown = status(app)
            if " of ×600" in shown:
                break
        found = re.search(r"×([\d.]+) of ×600", shown)
        assert found, shown
        assert float(found.group(1)) < 0.9 * 600


async def test_age_is_real_time_during_a_long_step() -> None:
    session = SlowSession(seed=1)
    app = make_app(session, tick_interval=0.05, user="alice", show_charts=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        session.delay = 3.0  # the next step takes 3 s (sleeps in steps of the console's chunk)
        await pilot.pause(2.4)
        shown = status(app)
        assert re.search(r"age (0:0[12]|[12]s)", shown), shown
        started = time.monotonic()
        app.refresh_session()  # asked during the step: must not wait for it
        assert time.monotonic() - started < 0.2
        session.delay = 0.0
