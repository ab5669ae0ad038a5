"""P3 watch: watch events/s through decode + store + coalesced snapshots; keypress latency under load.

Throughput: a store holding ``pods`` pods (the initial sync) receives ``events`` MODIFIED
events replayed from memory through ``Store.apply_raw`` (the call every watch line takes: decode
the bytes, validate, project, apply, index, mark the job dirty), and a snapshot is published
every ``COALESCE`` seconds of wall time (what the console's tick does) and once at the end;
snapshots (and the job rows they derive) are part of the time. Every replayed event is a real
change: two sets of updates (restartCount 1 and 2, each with its own resourceVersions) alternate,
so no event repeats the state the store already holds (a replay of identical bytes would only
measure the store's "nothing changed" short cut) and every event dirties its job row.
Interleaved with it, on the same bytes: the same replay with the
heap settled as the live console settles it once its first lists are in
(:func:`hpctop.runtime.live_console.settle_heap`: frozen, young collections 10,000 allocations
apart), the same replay with the GC as Python starts it, and ``orjson.loads`` of each event alone
(the floor of any Python decoder). The verdict uses the console's setting: the live console is
what consumes a watch stream for hours; the GC-as-is figure is printed beside it.

Keypress latency: the real app (``make_app``) on a :class:`LiveConsoleSession` (the live console:
its tick worker snapshots and runs the core whenever the store changed) while a feeder thread
applies events as fast as it can; ``down`` is pressed through Textual's Pilot and the time runs
until the key was handled and the screen repainted. Median and worst of ``presses``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import statistics
import time
from collections.abc import Iterator

import orjson
from textual import events
from textual.app import App

from bench.common import Verdict, ratio
from bench.live_app import Feeder, live_session, populate
from bench.payloads import pod_updates
from hpctop.model.store import Store
from hpctop.runtime.live_console import settle_heap
from hpctop.tui.app import make_app
from hpctop.tui.widgets.jobs import JobsTable

COALESCE = 0.1  # seconds between two published snapshots
GOAL_RATE = 50_000
GOAL_KEY_MS = 100.0


def changing_updates(pods: int) -> list[bytes]:
    """Updates to replay cyclically where every event changes its pod (see the module doc)."""
    return pod_updates(pods, restarts=1) + pod_updates(pods, restarts=2, rv_base=3_000_000)


def _replay(store: Store, events: list[bytes], total: int) -> int:
    apply = store.apply_raw
    n = len(events)
    snapshots = 0
    last = time.perf_counter()
    for k in range(total):
        apply("Pod", events[k % n])
        if k % 64 == 0 and time.perf_counter() - last >= COALESCE:
            store.snapshot()
            snapshots += 1
            last = time.perf_counter()
    store.snapshot()
    return snapshots + 1


@contextlib.contextmanager
def console_gc() -> Iterator[None]:
    """The GC as the live console runs it once synced (``settle_heap``), undone afterwards."""
    threshold = gc.get_threshold()
    settle_heap()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


def throughput(pods: int, total: int, repeats: int) -> tuple[float, float, float]:
    """(events/s GC as is, events/s GC as the console runs it, orjson.loads events/s)."""
    events = changing_updates(pods)
    plain, frozen = Store(), Store()
    populate(plain, pods, 0)
    populate(frozen, pods, 0)
    plain.snapshot()
    frozen.snapshot()
    gc.collect()

    times: dict[str, list[float]] = {"as_is": [], "frozen": [], "orjson": []}
    loads = orjson.loads
    n = len(events)
    for _ in range(repeats):  # interleaved: as is, frozen, floor, as is, ...
        start = time.perf_counter()
        _replay(plain, events, total)
        times["as_is"].append(time.perf_counter() - start)
        with console_gc():  # the freeze itself is outside the timed region
            start = time.perf_counter()
            _replay(frozen, events, total)
            times["frozen"].append(time.perf_counter() - start)
        start = time.perf_counter()
        for k in range(total):
            loads(events[k % n])
        times["orjson"].append(time.perf_counter() - start)
    as_is, freeze, floor = (total / statistics.median(times[side]) for side in ("as_is", "frozen", "orjson"))
    return as_is, freeze, floor


async def press_and_paint(app: App[None], jobs: JobsTable, key: str, timeout: float = 5.0) -> float:
    """Seconds from a key arriving at the app (as the terminal driver delivers it) to the repaint.

    Pilot's ``press`` waits for the CPU to go idle (up to a second per key), which never happens
    while a feeder thread is busy; so the key is sent through the driver like a real terminal's,
    the loop runs until the jobs cursor moved, and the screen is repainted.
    """
    assert app._driver is not None
    before = jobs.cursor
    start = time.perf_counter()
    app._driver.send_message(events.Key(key, None))
    while jobs.cursor == before:
        if time.perf_counter() - start > timeout:
            raise RuntimeError(f"the key {key!r} did not move the jobs cursor within {timeout:.0f} s")
        await asyncio.sleep(0)
    app.screen._on_timer_update()  # the repaint a frame does now
    return time.perf_counter() - start


async def _keypress(pods: int, nodes: int, presses: int) -> tuple[list[float], float]:
    session = live_session(pods, nodes)
    app = make_app(session, tick_interval=0.1, show_charts=False)
    latencies: list[float] = []
    async with app.run_test(size=(160, 48)):
        jobs = app.query_one("#jobs", JobsTable)
        jobs.cursor = 0
        feeder = Feeder(session.store, changing_updates(pods), rate=None)
        feeder.start()
        try:
            await asyncio.sleep(0.3)  # ticks running, events arriving
            for k in range(presses):
                latencies.append(await press_and_paint(app, jobs, "down" if k % 2 == 0 else "up"))
                await asyncio.sleep(0.05)
        finally:
            rate = feeder.stop()
    return latencies, rate


def run(pods: int, events: int, repeats: int = 5, nodes: int = 0, presses: int = 10) -> Verdict:
    as_is, console, floor = throughput(pods, events, repeats)
    latencies, feed_rate = asyncio.run(_keypress(pods, nodes or max(pods // 20, 1), presses))
    key_med, key_max = statistics.median(latencies) * 1e3, max(latencies) * 1e3
    ok = console >= GOAL_RATE and key_max <= GOAL_KEY_MS
    return Verdict(
        "P3 watch",
        f"{console:,.0f} events/s ({ratio(console / floor)} orjson.loads),"
        f" key {key_med:.0f} ms (max {key_max:.0f})",
        ok,
        f"{pods:,} pods in the store, {events:,} events x {repeats}, snapshot every {COALESCE * 1e3:.0f} ms,"
        f" GC as the console runs it (settle_heap); GC as is: {as_is:,.0f} events/s;"
        f" orjson.loads alone {floor:,.0f}/s;"
        f" key: {len(latencies)} presses while a feeder applied {feed_rate:,.0f} events/s;"
        f" goal >= {GOAL_RATE:,} events/s (met: {console >= GOAL_RATE}), key <= {GOAL_KEY_MS:.0f} ms"
        f" (met: {key_max <= GOAL_KEY_MS})",
    )


if __name__ == "__main__":
    import sys

    args = [int(a) for a in sys.argv[1:3]] or [20_000, 100_000]
    print(run(*args).line())
