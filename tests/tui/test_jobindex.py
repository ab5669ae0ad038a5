"""The jobs pane's index (hpctop.tui.jobindex) and the incremental GPU map give what the plain code gives.

The index is the P5 fast path: cached orders, carried between publishes by inserting the changed
rows, and C-level filters. Each test compares against :func:`hpctop.tui.rows.apply_view` (and
:func:`hpctop.tui.gpumap.build_gpu_map`) on the same input, row for row, ties included.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from hpctop.tui.gpumap import GpuMap, build_gpu_map
from hpctop.tui.jobindex import MAX_ORDERS, WARM_ORDERS, JobIndex, filter_rows, index_of_key, locate
from hpctop.tui.rows import COLUMN_NAMES, SORT_KEYS, Filters, JobRow, RowCache, apply_view
from hpctop.tui.widgets.gpus import GpuMapCache
from tests.sample_session import SampleSession, big_session


@pytest.fixture(scope="module")
def rows() -> list[JobRow]:
    session = big_session(3_000, seed=3)
    return RowCache().rows(session.snapshot.jobs, session.result.plans)


def _filters(rows: list[JobRow]) -> list[Filters]:
    some = rows[len(rows) // 3]
    return [
        Filters(),
        Filters(text="sweep"),
        Filters(text="PD".lower()),
        Filters(state=1),
        Filters(state=2, user=some.user),
        Filters(queue=some.queue.rsplit(".", 1)[0]),
        Filters(queue=some.queue, partition=some.partition, text=some.name[:3].lower()),
    ]


def _same(a: list[JobRow], b: list[JobRow]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def test_view_is_apply_view_for_every_column_direction_and_filter(rows: list[JobRow]) -> None:
    index = JobIndex(rows)
    now = 1_000_000.0
    for column in COLUMN_NAMES:
        for reverse in (False, True):
            for filters in _filters(rows):
                want = apply_view(rows, filters, column, reverse, now)
                got = index.view(filters, column, reverse, now)
                assert _same(got, want), (column, reverse, filters)
    assert any(filter_rows(rows, f) != rows for f in _filters(rows)[1:])  # the filters do filter


def test_orders_are_cached_and_bounded(rows: list[JobRow]) -> None:
    index = JobIndex(rows)
    first = index.order("USER", False, 0.0)
    assert index.order("USER", False, 0.0) is first  # a lookup, not a sort
    for column in SORT_KEYS:
        index.order(column, True, 0.0)
        index.order(column, False, 0.0)
    assert 2 * len(SORT_KEYS) > MAX_ORDERS == len(index.cached())
    assert ("USER", False) not in index.cached()  # the least recently used went first
    time_order = index.order("TIME", True, 5.0)
    assert index.order("TIME", True, 6.0) is not time_order  # elapsed time moves with the clock


def _publish(rows: list[JobRow], rng: random.Random, changes: int) -> list[JobRow]:
    """The next publish's rows: some jobs changed (new row objects in place), some arrived (appended)."""
    out = list(rows)
    for i in rng.sample(range(len(out)), changes):
        row = out[i]
        out[i] = replace(row, prio=rng.choice([row.prio, 0, 5, 10**6]), user=rng.choice([row.user, "zed"]))
    arrived = rows[: changes // 4]
    fresh = [
        replace(r, key=(r.key[0], r.key[1], r.key[2] + f"-{len(out)}"), prio=rng.randrange(100))
        for r in arrived
    ]
    return out + fresh


def test_advance_inserts_changed_rows_where_a_full_sort_puts_them(rows: list[JobRow]) -> None:
    rng = random.Random(5)
    index = JobIndex(rows)
    specs = [("PRIO", True), ("USER", False), ("GPUS", True), ("ID", False)]
    for column, reverse in specs:
        index.view(Filters(), column, reverse, 0.0)
    current = rows
    for _ in range(5):
        previous = index
        current = _publish(current, rng, 40)
        shown = [list(previous.order(c, r, 0.0)) for c, r in specs]
        index = index.advance(current, 0.0)
        assert index.how == "incremental"
        assert sorted(index.cached()) == sorted(specs)
        for column, reverse in specs:
            for filters in _filters(current):
                want = apply_view(current, filters, column, reverse, 0.0)
                assert _same(index.view(filters, column, reverse, 0.0), want), (column, reverse)
        # the previous index's orders (maybe still on screen) were not touched
        assert all(_same(previous.order(c, r, 0.0), s) for (c, r), s in zip(specs, shown, strict=True))


def test_warm_orders_are_the_sorts_and_are_carried_over(rows: list[JobRow]) -> None:
    """The worker's warm-up gives each column's first sort, the same as sorting then; a publish
    carries them all (rows whose key is unchanged take their old row's place)."""
    rng = random.Random(11)
    index = JobIndex(rows)
    assert index.warm(now=0.0, limit=1) == 1  # the worker's one a tick
    assert index.warm(now=0.0) == len(WARM_ORDERS) - 1
    assert index.warm(now=0.0) == 0  # already there
    assert sorted(index.cached()) == sorted(WARM_ORDERS)
    for column, reverse in WARM_ORDERS:
        assert _same(
            index.view(Filters(), column, reverse, 0.0), apply_view(rows, Filters(), column, reverse, 0.0)
        )
    current = rows
    for _ in range(3):
        current = _publish(current, rng, 60)
        index = index.advance(current, 0.0)
        assert index.how == "incremental" and sorted(index.cached()) == sorted(WARM_ORDERS)
        for column, reverse in WARM_ORDERS:
            want = apply_view(current, Filters(), column, reverse, 0.0)
            assert _same(index.view(Filters(), column, reverse, 0.0), want), (column, reverse)


def test_advance_re_sorts_when_rows_moved_or_most_changed(rows: list[JobRow]) -> None:
    index = JobIndex(rows)
    index.order("PRIO", True, 0.0)
    moved = rows[1:] + rows[:1]  # same rows, another input order: ties would come out differently
    again = index.advance(moved, 0.0)
    assert again.how == "rebuilt" and not again.cached()
    assert _same(again.view(Filters(), "PRIO", True, 0.0), apply_view(moved, Filters(), "PRIO", True, 0.0))
    assert index.advance([], 0.0).how == "rebuilt"
    left = index.advance(rows[:10] + rows[11:], 0.0)  # a job left: carried, not re-sorted
    assert left.how == "incremental"
    assert _same(
        left.view(Filters(), "PRIO", True, 0.0),
        apply_view(rows[:10] + rows[11:], Filters(), "PRIO", True, 0.0),
    )
    assert index.advance(rows, 0.0).how == "same"


def test_index_of_key(rows: list[JobRow]) -> None:
    assert index_of_key(rows, rows[123].key) == 123
    assert index_of_key(rows, ("nowhere", "none")) is None
    index = JobIndex(rows)
    for column in COLUMN_NAMES:
        for reverse in (False, True):
            view = index.view(Filters(state=1), column, reverse, 50.0)
            for at in (0, len(view) // 2, len(view) - 1):
                assert locate(view, view[at], column, reverse, 50.0) == at, (column, reverse)
            newer = replace(view[3], prio=-1, user="zz")  # the job's row replaced, its key moved
            assert locate(view, newer, column, reverse, 50.0) == 3
            gone = replace(view[3], key=("x", "Job", "gone"))
            assert locate(view, gone, column, reverse, 50.0) is None


def _nodes_as_values(gpu_map: GpuMap) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    return [
        (
            n.name,
            n.partition,
            n.model,
            n.ready,
            n.cordoned,
            n.unindexed,
            [(s.used, s.holders) for s in n.slots],
        )
        for n in gpu_map.nodes
    ], [(g.name, g.used, g.total, g.nodes, g.down) for g in gpu_map.partitions + gpu_map.models]


def _full(session: SampleSession) -> GpuMap:
    snap = session.snapshot
    parts = ((p.name, p.nodes) for p in session.result.partitions)
    return build_gpu_map(snap.nodes, snap.pods, snap.pods_by_node, snap.jobs, parts)


def test_gpu_map_cache_matches_build_gpu_map_and_rebuilds_only_changed_nodes() -> None:
    session = SampleSession(seed=4)
    cache = GpuMapCache()
    first = cache.build(session.snapshot, session.result.partitions)
    assert _nodes_as_values(first) == _nodes_as_values(_full(session))
    assert cache.rebuilt == len(first.nodes) > 0
    assert cache.build(session.snapshot, session.result.partitions) is first  # same snapshot version
    changed_some = False
    for _ in range(8):
        session.step(30.0)
        built = cache.build(session.snapshot, session.result.partitions)
        assert _nodes_as_values(built) == _nodes_as_values(_full(session))
        if 0 < cache.rebuilt < len(built.nodes):
            changed_some = True
    assert changed_some  # some steps moved a few nodes, and only those were rebuilt
    session.refresh()  # a new snapshot where no GPU holder changed
    before = cache.build(session.snapshot, session.result.partitions)
    session.refresh()
    assert cache.build(session.snapshot, session.result.partitions) is before and cache.rebuilt == 0


async def test_prepared_publish_is_adopted_and_keeps_the_cursor_on_its_job() -> None:
    """The tick worker's ``prepare`` builds the view; ``set_rows`` then only swaps it in."""
    from hpctop.tui.app import make_app
    from hpctop.tui.widgets.jobs import JobsTable

    session = SampleSession(seed=2)
    app = make_app(session, tick_interval=0, clock=lambda: 0.0, show_charts=False)
    async with app.run_test(size=(160, 48)) as pilot:
        jobs = app.query_one("#jobs", JobsTable)
        jobs.sort_by("USER", reverse=False)
        jobs._move_to(5)
        followed = jobs.current_key
        rows = list(jobs.rows)
        rows[7] = replace(rows[7], prio=rows[7].prio + 1)
        rows.append(replace(rows[0], key=("x", "Job", "arrived"), user="aaa"))
        jobs.prepare(rows, jobs.now)  # what the tick worker does before the publish
        prepared = jobs._prepared
        assert prepared is not None and prepared.index.how == "incremental"
        jobs.set_rows(rows, jobs.now)
        assert jobs.view is prepared.view  # adopted, not recomputed
        assert _same(jobs.view, apply_view(rows, jobs.filters, "USER", False, jobs.now))
        assert jobs.current_key == followed
        assert jobs.view[0].key == ("x", "Job", "arrived")
        # the cursor's own job changed (a new row object, another sort key): found by the worker
        mine = next(i for i, r in enumerate(rows) if r.key == followed)
        rows = list(rows)
        rows[mine] = replace(rows[mine], user="zzz")
        jobs.prepare(rows, jobs.now)
        assert jobs._prepared is not None and jobs._prepared.cursor_at == len(rows) - 1
        jobs.set_rows(rows, jobs.now)
        assert jobs.current_key == followed and jobs.cursor == len(rows) - 1
        # a sort changed between prepare and publish: the view follows the new sort
        jobs.prepare(rows[:-1] + rows[-1:], jobs.now)
        jobs.sort_by("PRIO", reverse=True)
        again = jobs._prepared.rows if jobs._prepared else rows
        jobs.set_rows(again, jobs.now)
        assert _same(jobs.view, apply_view(again, jobs.filters, "PRIO", True, jobs.now))
        assert jobs.current_key == followed
        await pilot.pause()


async def test_drawn_lines_are_reused_only_while_what_they_show_is_unchanged() -> None:
    from hpctop.tui.app import make_app
    from hpctop.tui.widgets.jobs import JobsTable

    app = make_app(SampleSession(seed=2), tick_interval=0, clock=lambda: 0.0, show_charts=False)
    async with app.run_test(size=(160, 48)):
        jobs = app.query_one("#jobs", JobsTable)
        row = jobs.view[1]  # line 2 (line 0 is the header, line 1 the cursor's row)
        first = jobs.render_line(2)
        assert jobs.render_line(2) is first  # nothing changed: the same strip
        jobs.marked.add(row.key)
        marked = jobs.render_line(2)
        assert marked is not first and marked.text.startswith("* ") and not first.text.startswith("* ")
        jobs.marked.clear()
        assert jobs.render_line(2).text == first.text
        jobs._move_to(1)  # the cursor on that row: drawn with the cursor's style
        assert jobs.render_line(2) is not first
        assert jobs.render_line(2).text == first.text
        before = [jobs.render_line(y).text for y in range(1, 10)]
        jobs.now += 3600  # an hour later: the TIME column moved, the cached lines are not reused
        assert [jobs.render_line(y).text for y in range(1, 10)] != before


def test_advance_with_jobs_left_replaced_and_appended_is_a_full_sort(rows: list[JobRow]) -> None:
    """Jobs leave on most K1 publishes: the orders lose their rows instead of being re-sorted,
    and every order (and each filter of it) is still the stable sort of the new rows."""
    rng = random.Random(17)
    index = JobIndex(rows)
    specs = [("PRIO", True), ("USER", False), ("GPUS", True), ("ID", False), ("ORDER", False)]
    for column, reverse in specs:
        index.view(Filters(), column, reverse, 0.0)
    current = rows
    for step in range(6):
        gone = set(rng.sample(range(len(current)), 5 + step))
        current = [r for i, r in enumerate(current) if i not in gone]
        current = _publish(current, rng, 20)
        index = index.advance(current, 0.0)
        assert index.how == "incremental", step
        for column, reverse in specs:
            for filters in _filters(current):
                want = apply_view(current, filters, column, reverse, 0.0)
                assert _same(index.view(filters, column, reverse, 0.0), want), (step, column, reverse)
