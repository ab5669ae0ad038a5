"""The jobs pane at scale (PERFORMANCE.md P5): paint, scroll, sort and filter times, printed.

``pytest -s -m slow tests/tui/test_tui_perf.py`` runs 100k jobs; a 5k smoke runs by default. Budgets are
generous (these machines are noisy); ``bench/`` owns the side-by-side ratio against ``DataTable``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from statistics import median

import pytest

from hpctop.tui.app import make_app
from hpctop.tui.rows import Filters, RowCache, apply_view
from hpctop.tui.widgets.jobs import JobsTable
from tests.sample_session import SampleSession, big_session

N = 100_000


@pytest.fixture(
    scope="module",
    params=[pytest.param(5_000, id="5k-smoke"), pytest.param(N, id="100k", marks=pytest.mark.slow)],
)
def session(request: pytest.FixtureRequest) -> SampleSession:
    return big_session(request.param)


def _ms(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return median(times)


@pytest.mark.serial  # wall time: a paint within 100 ms
async def test_jobs_pane_100k(session: SampleSession) -> None:
    n = len(session.snapshot.jobs)
    cache = RowCache()
    t = time.perf_counter()
    rows = cache.rows(session.snapshot.jobs, session.result.plans)
    build_ms = (time.perf_counter() - t) * 1000
    reuse_ms = _ms(lambda: cache.rows(session.snapshot.jobs, session.result.plans), 3)
    app = make_app(session, tick_interval=0, clock=lambda: 0.0, show_charts=False)
    async with app.run_test(size=(160, 48)) as pilot:
        jobs = app.query_one("#jobs", JobsTable)
        assert len(jobs.rows) == n
        height = jobs.size.height

        def paint() -> None:
            for y in range(height):
                jobs.render_line(y)

        paint_ms = _ms(paint)

        def scroll() -> None:
            jobs.action_page(1)
            paint()

        scroll_ms = _ms(scroll, 20)
        sort_ms = _ms(lambda: jobs.sort_by("USER", reverse=False))
        sort_time_ms = _ms(lambda: jobs.sort_by("TIME", reverse=True))
        filter_ms = _ms(lambda: jobs.set_filters(Filters(text="sweep")))
        assert jobs.view and all("sweep" in r.haystack for r in jobs.view)
        state_ms = _ms(lambda: jobs.set_filters(Filters(state=1)))
        jobs.set_filters(Filters())
        t = time.perf_counter()
        await pilot.press("G")
        await pilot.press("g")
        keys_ms = (time.perf_counter() - t) * 1000 / 2
        ticks = []
        for _ in range(3):
            session.refresh()  # new snapshot and new plan objects for every job, as the core makes
            t = time.perf_counter()
            app.step_now(0)
            ticks.append((time.perf_counter() - t) * 1000)
        tick_ms = median(ticks)
        view_ms = _ms(lambda: apply_view(rows, Filters(), "PRIO", True, session.now))
    print(
        f"\n{n} jobs: rows build {build_ms:.0f} ms, reuse {reuse_ms:.0f} ms; "
        f"paint {height} lines {paint_ms:.1f} ms; "
        f"page+paint {scroll_ms:.1f} ms; sort USER {sort_ms:.0f} ms, TIME {sort_time_ms:.0f} ms; "
        f"filter text {filter_ms:.0f} ms, state {state_ms:.0f} ms; key G/g {keys_ms:.0f} ms; "
        f"publish tick {tick_ms:.0f} ms; sort PRIO (pure) {view_ms:.0f} ms"
    )
    assert paint_ms < 100  # only visible rows are drawn
    assert sort_ms < 2000 and filter_ms < 2000
