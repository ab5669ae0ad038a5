"""A user at 80x24 on the real demo session (the openb trace cluster, not the sample): they can
see the jobs, sort, filter, open a job and cancel it, and the cancel really reaches the simulator."""

from __future__ import annotations

from hpctop.runtime.session import demo_session
from hpctop.tui.app import make_app
from hpctop.tui.screens.confirm import ConfirmScreen, PromptScreen
from hpctop.tui.screens.detail import JobDetailScreen
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.status import StatusBar


async def test_demo_at_80x24_see_sort_filter_open_cancel() -> None:
    session = demo_session(seed=1, at=600)
    app = make_app(session, tick_interval=0, clock=lambda: 0.0, user="alice", show_charts=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        jobs = app.query_one(JobsTable)
        for _ in range(60):  # a few simulated seconds until jobs that arrived wait their turn
            if jobs.ranks:
                break
            app.step_now(3)
        await pilot.pause()
        assert jobs.ranks, "no job waiting its turn in the demo's first minutes"
        # see: the status bar and 10+ rows, pending jobs first in the scheduler's order
        assert "GPUs" in str(app.query_one(StatusBar).render())
        assert jobs.content_region.height - 1 >= 10
        assert jobs.sort_column == "ORDER"
        # the jobs waiting their turn come first, in the core's order (1, 2, ...); held ones have none
        ranked = [jobs.ranks[r.key] for r in jobs.view if r.key in jobs.ranks]
        assert ranked == list(range(1, len(ranked) + 1))
        assert all(r.key in jobs.ranks for r in jobs.view[: len(ranked)])
        assert "ORDER 1: the scheduler tries it 1." in app._detail(jobs.view[0].key).plain
        # sort
        await pilot.press("s")
        assert jobs.sort_column != "ORDER"
        await pilot.press("s")
        column = jobs.sort_column
        assert column in jobs.shown_columns
        # filter: pending only, then a text filter on the first pending job's namespace
        await pilot.press("f")
        assert jobs.view and all(r.state.is_pending for r in jobs.view)
        namespace = jobs.view[0].key[0]
        await pilot.press("slash")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*namespace, "enter")
        await pilot.pause()
        assert jobs.view and all(namespace in r.haystack for r in jobs.view)
        # open a job
        await pilot.press("home", "enter")
        await pilot.pause()
        assert isinstance(app.screen, JobDetailScreen)
        key = app.screen.key
        assert key == jobs.current_key
        body = app._detail(key).plain
        assert "Why pending" in body
        # cancel it, from the detail screen
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        yes = app.screen.query_one("#confirm-yes").region
        assert yes.bottom <= 24 and yes.right <= 80
        await pilot.press("y")
        await pilot.pause()
        job = session.snapshot.jobs.get(key)
        assert job is None or job.state.is_finished, job
        assert any("cancel: 1 done" in n.message for n in app._notifications)
