"""P3 watch: watch events/s through decode + store + coalesced snapshots; keypress latency under load.

Throughput: a store holding ``pods`` pods (the initial sync) receives ``events`` MODIFIED
events replayed from memory through ``Store.apply_raw`` (the call every watch line takes: decode
the bytes, validate, project, apply, index, mark the job dirty), and a snapshot is published
every ``COALESCE`` seconds of wall time (what the console's tick does) and once at the end;
snapshots (and the job rows they derive) are part of the time. Every replayed event is a real
change: two sets of updates (restartCount 1 and 2, each with its own resourceVersions) alternate,
so no event repeats the state the store already holds (a replay of identical bytes would only
measure the store's "nothing changed" short cut) and every event dirties its job row.
Interleaved with it, on the same bytes and in the same order: the same replay with the heap
settled as the live console settles it once its first lists are in
(:func:`hpctop.runtime.live_console.settle_heap`: frozen, young collections 10,000 allocations
apart), the same replay with the GC as Python starts it, and the floor of any Python decoder:
``orjson.loads`` of each event into a dict of the latest object per pod (the simplest store),
run under each of the two GC settings. The verdict is what the product does: the console's GC
setting on hpctop's side and on the floor's; the GC-as-is pair is printed beside it. The replay
continues across repetitions (repetition ``r`` starts where ``r - 1`` stopped), so no repetition
begins by replaying the states the store already holds, and every side is asserted to end in
the same final state (each pod's resourceVersion and restart count).

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
from hpctop.runtime import heap
from hpctop.runtime.live_console import settle_heap
from hpctop.tui.app import make_app
from hpctop.tui.widgets.jobs import JobsTable

COALESCE = 0.1  # seconds between two published snapshots
GOAL_RATE = 50_000
GOAL_KEY_MS = 100.0


def changing_updates(pods: int) -> list[bytes]:
    """Updates to replay cyclically where every event changes its pod (see the module doc)."""
    return pod_updates(pods, restarts=1) + pod_updates(pods, restarts=2, rv_base=3_000_000)


def _replay(store: Store, events: list[bytes], total: int, start: int = 0) -> int:
    """Apply ``total`` events cyclically from index ``start``; snapshots as the console's tick."""
    apply = store.apply_raw
    n = len(events)
    snapshots = 0
    last = time.perf_counter()
    for k in range(start, start + total):
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
        heap.unfreeze()  # recorded: settle_heap's freeze is (hpctop.runtime.heap)
        gc.set_threshold(*threshold)


def _floor(state: dict[tuple[str, str], object], events: list[bytes], total: int, start: int) -> None:
    """The reference: ``orjson.loads`` of each event, the object kept as the latest of its pod."""
    loads = orjson.loads
    n = len(events)
    for k in range(start, start + total):
        obj = loads(events[k % n])["object"]
        meta = obj["metadata"]
        state[meta["namespace"], meta["name"]] = obj


def _store_state(store: Store) -> dict[tuple[str, str], tuple[str, int]]:
    """Each pod's (resourceVersion, restarts of its containers) as the store holds it."""
    pods = store.snapshot().pods
    return {key: (pod.resource_version, pod.restart_count) for key, pod in pods.items()}


def _floor_state(state: dict[tuple[str, str], object]) -> dict[tuple[str, str], tuple[str, int]]:
    out = {}
    for key, obj in state.items():
        assert isinstance(obj, dict)
        restarts = sum(status["restartCount"] for status in obj["status"]["containerStatuses"])
        out[key] = (obj["metadata"]["resourceVersion"], restarts)
    return out


SIDES = ("as_is", "console", "floor_as_is", "floor_console")


def throughput(pods: int, total: int, repeats: int) -> dict[str, float]:
    """Events/s of each side: hpctop GC as is / as the console runs it, the floor under each."""
    events = changing_updates(pods)
    plain, settled = Store(), Store()
    populate(plain, pods, 0)
    populate(settled, pods, 0)
    plain.snapshot()
    settled.snapshot()
    floor_plain: dict[tuple[str, str], object] = {}
    floor_settled: dict[tuple[str, str], object] = {}
    gc.collect()

    times: dict[str, list[float]] = {side: [] for side in SIDES}
    for r in range(repeats):  # interleaved: each side once per repetition, the same events
        at = r * total
        start = time.perf_counter()
        _replay(plain, events, total, at)
        times["as_is"].append(time.perf_counter() - start)
        start = time.perf_counter()
        _floor(floor_plain, events, total, at)
        times["floor_as_is"].append(time.perf_counter() - start)
        with console_gc():  # the freeze itself is outside the timed region
            start = time.perf_counter()
            _replay(settled, events, total, at)
            times["console"].append(time.perf_counter() - start)
            start = time.perf_counter()
            _floor(floor_settled, events, total, at)
            times["floor_console"].append(time.perf_counter() - start)
    final = _store_state(plain)
    assert len(final) == pods
    assert _store_state(settled) == final, "the two GC settings ended in different stores"
    assert _floor_state(floor_plain) == final == _floor_state(floor_settled), "the floor ended elsewhere"
    return {side: total / statistics.median(times[side]) for side in SIDES}


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
    rates = throughput(pods, events, repeats)
    as_is, console = rates["as_is"], rates["console"]
    floor, floor_as_is = rates["floor_console"], rates["floor_as_is"]
    latencies, feed_rate = asyncio.run(_keypress(pods, nodes or max(pods // 20, 1), presses))
    key_med, key_max = statistics.median(latencies) * 1e3, max(latencies) * 1e3
    ok = console >= GOAL_RATE and key_max <= GOAL_KEY_MS
    return Verdict(
        "P3 watch",
        f"{console:,.0f} events/s ({ratio(console / floor)} orjson.loads, both GC as the console runs it),"
        f" key {key_med:.0f} ms (max {key_max:.0f})",
        ok,
        f"{pods:,} pods in the store, {events:,} events x {repeats}, snapshot every {COALESCE * 1e3:.0f} ms,"
        f" GC as the console runs it (settle_heap): hpctop {console:,.0f}/s, orjson floor {floor:,.0f}/s;"
        f" GC as is: hpctop {as_is:,.0f}/s, floor {floor_as_is:,.0f}/s ({ratio(as_is / floor_as_is)});"
        " every side ended in the same state;"
        f" key: {len(latencies)} presses while a feeder applied {feed_rate:,.0f} events/s;"
        f" goal >= {GOAL_RATE:,} events/s (met: {console >= GOAL_RATE}), key <= {GOAL_KEY_MS:.0f} ms"
        f" (met: {key_max <= GOAL_KEY_MS})",
    )


if __name__ == "__main__":
    import sys

    args = [int(a) for a in sys.argv[1:3]] or [20_000, 100_000]
    print(run(*args).line())
