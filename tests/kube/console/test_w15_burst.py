"""W15: a 10k-object list, then a burst of 50k watch events, with the console running on it.

RELIABILITY.md §6 W15: input latency stays under 100 ms, updates are coalesced per key, and a
DELETED is never dropped. The whole live path runs: a kubeconfig, real HTTP to the fake API
server, the reflectors in the session's thread, the store, the scheduling core and the Textual
console (``App.run_test()``) ticking on its own timer, as it does for a user.

The fake API server runs in a process of its own (``multiprocessing`` spawn), as a real API server
would: in a thread of the test process its JSON encoding would share the GIL with the console and
measure the test harness instead of hpctop. The test tells it what to do over a pipe (seed, burst,
report its state).

What is measured and asserted, while the burst is applied:

- key handling: the sort key is pressed every few tenths of a second, and the time from the key
  event to the jobs table's new sort column is recorded; the median must be under 100 ms (the
  catalogue's figure) and the worst under a looser bound: a key that arrives during a full
  cyclic-GC collection waits for it (the session freezes the heap after the first sync, so only
  what the burst allocated is scanned, but on a loaded 2-core machine that is still 0.2-0.6 s);
- coalescing: the console publishes a new view at most once per tick however many events arrive
  (``publishes`` and the session's ``schedule_runs`` against the ticks that fired), and the
  reflectors applied every event (``ReflectorStatus.events``): per key, the view holds the latest;
- convergence: after the burst, the store's pods and their resourceVersions equal the server's,
  and every key whose last event was a DELETED is gone.

``make test`` runs a smaller size (1k objects, 5k events); the full size is ``@pytest.mark.slow``.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from multiprocessing.connection import Connection as Pipe
from pathlib import Path
from typing import Any

import kmock
import pytest

from hpctop.sources.kube.resources import NODES as NODE_SPEC
from hpctop.sources.kube.resources import PODS as POD_SPEC
from hpctop.tui.app import make_app
from hpctop.tui.widgets.jobs import JobsTable
from tests.kube.conftest import live_console, write_kubeconfig
from tests.kube.fakeserver import NODES, PODS, FakeApiServer
from tests.kube.reflectors import server_pods
from tests.model_fixtures import node, pod
from tests.polling import until

NODE_COUNT = 64
TICK = 0.25  # the console's tick in these tests (real seconds)


# -- the fake API server in a process of its own ------------------------------------------------


def _pod(i: int, generation: int) -> dict[str, Any]:
    """Pod ``i`` at a generation: running on a node, or pending, with a label that changes."""
    running = (i + generation) % 3 != 0
    obj = pod(
        f"p{i:06d}",
        node=f"n{i % NODE_COUNT:03d}" if running else None,
        phase="Running" if running else "Pending",
        gpus=1 if i % 5 == 0 else 0,
        labels={"generation": str(generation)},
    )
    return obj


def burst_plan(objects: int, rounds: int) -> Iterator[tuple[str, int, int]]:
    """(op, key, generation): ``rounds`` passes over every key, mixing MODIFIED, DELETED, ADDED.

    Round 1 deletes every fourth key, round 2 adds those back (new uids), the last round deletes
    the keys ``k % 4 in (0, 1)``; the rest are modified. So some keys are deleted, re-added and
    deleted again within the burst, and half the keys end deleted.
    """
    for r in range(rounds):
        for k in range(objects):
            if r == 1 and k % 4 == 0:
                yield ("delete", k, r)
            elif r == 2 and k % 4 == 0:
                yield ("add", k, r)
            elif r == rounds - 1 and k % 4 in (0, 1):
                yield ("delete", k, r)
            else:
                yield ("modify", k, r)


async def _serve(pipe: Pipe) -> None:
    loop = asyncio.get_running_loop()
    async with FakeApiServer(window=1_000_000) as fake, kmock.Server(fake):
        pipe.send(str(fake.url).rstrip("/"))
        while True:
            command, *args = await loop.run_in_executor(None, pipe.recv)
            if command == "seed":
                (objects,) = args
                for n in range(NODE_COUNT):
                    fake.upsert(NODES, node(f"n{n:03d}"))
                for i in range(objects):
                    fake.upsert(PODS, _pod(i, 0))
                pipe.send(len(fake.items_of(PODS)))
            elif command == "burst":
                objects, rounds, chunk = args
                started = time.perf_counter()
                sent = 0
                for op, k, r in burst_plan(objects, rounds):
                    if op == "delete":
                        fake.remove(PODS, f"p{k:06d}", "team-a")
                    else:
                        fake.upsert(PODS, _pod(k, r + 1))
                    sent += 1
                    if sent % chunk == 0:
                        await asyncio.sleep(0)  # let the open watch write what is queued
                pipe.send((sent, time.perf_counter() - started))
            elif command == "versions":
                pipe.send({(ns or "", name): rv for (ns, name), rv in fake.versions(PODS).items()})
            elif command == "stop":
                pipe.send("stopped")
                return


def _server_main(pipe: Pipe) -> None:
    asyncio.run(_serve(pipe))


class ServerProcess:
    """The test's handle on the fake API server process."""

    def __init__(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.pipe, child = ctx.Pipe()
        self.process = ctx.Process(target=_server_main, args=(child,), daemon=True, name="fake-apiserver")
        self.process.start()
        self.url: str = self.ask(None, timeout=60)

    def ask(self, command: tuple[Any, ...] | None, timeout: float = 120) -> Any:
        if command is not None:
            self.pipe.send(command)
        if not self.pipe.poll(timeout):
            raise AssertionError(f"the fake API server did not answer {command!r} in {timeout}s")
        return self.pipe.recv()

    async def ask_async(self, command: tuple[Any, ...], timeout: float = 120) -> Any:
        return await asyncio.to_thread(self.ask, command, timeout)

    def stop(self) -> None:
        with suppress(AssertionError, OSError, EOFError):
            self.ask(("stop",), timeout=5)
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()


@contextmanager
def server_process() -> Iterator[ServerProcess]:
    server = ServerProcess()
    try:
        yield server
    finally:
        server.stop()


# -- the test ---------------------------------------------------------------------------------


async def burst_under_console(tmp_path: Path, objects: int, rounds: int) -> dict[str, Any]:
    """Run one W15 scenario; returns what was measured (and asserts the invariants)."""
    with server_process() as server:
        assert server.ask(("seed", objects)) == objects
        kubeconfig = write_kubeconfig(tmp_path / "config", server.url)
        async with live_console(
            kubeconfig,
            resources=[POD_SPEC, NODE_SPEC],
            ready=lambda session: session.synced,
            timeout=120,
            what="the first list",
        ) as session:
            assert len(session.store.pods) == objects
            app = make_app(session, tick_interval=TICK, show_charts=False)
            async with app.run_test(size=(160, 50)) as pilot:
                await pilot.pause()
                table = app.query_one("#jobs", JobsTable)
                pod_status = session.statuses["Pod"]
                events_before = pod_status.events
                publishes_before, runs_before = app.publishes, session.schedule_runs
                total_events = objects * rounds

                burst = asyncio.ensure_future(server.ask_async(("burst", objects, rounds, 500)))
                started = time.perf_counter()
                latencies: list[float] = []

                def applied() -> int:
                    return session.statuses["Pod"].events - events_before

                # keys while the burst is on its way in (until every event has been applied)
                while applied() < total_events:
                    if time.perf_counter() - started > 300:
                        raise AssertionError(f"only {applied()} of {total_events} events applied in 300 s")
                    before = table.sort_column
                    pressed = time.perf_counter()
                    press = asyncio.ensure_future(pilot.press("s"))
                    while table.sort_column == before:
                        await asyncio.sleep(0.001)
                    latencies.append(time.perf_counter() - pressed)
                    await press
                    await asyncio.sleep(0.2)
                applied_at = time.perf_counter() - started
                sent, sent_in = await burst
                assert sent == total_events
                publishes = app.publishes - publishes_before
                runs = session.schedule_runs - runs_before
                ticks = applied_at / TICK
                await pilot.press("q")
            server_versions = await server.ask_async(("versions",))
            store_versions = {k: p.resource_version for k, p in session.store.pods.items()}

    # DELETED never dropped: every key whose last event was a delete is gone, the rest converge
    deleted = {("team-a", f"p{k:06d}") for k in range(objects) if k % 4 in (0, 1)}
    assert len(server_versions) == objects - len(deleted)
    assert not deleted & set(store_versions)
    assert store_versions == server_versions
    assert session.statuses["Pod"].lists == 1, "the burst was followed, not relisted"
    # coalesced: at most one new view per tick, and at most one per min_refresh however it is read
    assert publishes <= ticks + 2, (publishes, ticks)
    assert runs <= min(ticks, applied_at / session.min_refresh) + 2, (runs, ticks)
    assert latencies, "no key was pressed during the burst"
    return {
        "objects": objects,
        "events": total_events,
        "server_sent_s": sent_in,
        "applied_s": applied_at,
        "publishes": publishes,
        "schedule_runs": runs,
        "ticks": ticks,
        "keys": len(latencies),
        "latency_median_ms": statistics.median(latencies) * 1000,
        "latency_p90_ms": sorted(latencies)[int(0.9 * (len(latencies) - 1))] * 1000,
        "latency_max_ms": max(latencies) * 1000,
    }


@pytest.mark.serial  # wall time: counts rebuilds in one wall second
async def test_w15_views_are_rebuilt_at_most_once_per_min_refresh(
    fake: FakeApiServer, kubeconfig: Path
) -> None:
    """The bound holds whoever reads: a reader polling ``snapshot`` in a tight loop while events
    stream in gets at most one rebuilt view per ``min_refresh``, and still ends on the latest."""
    fake.upsert(NODES, node("n000"))
    async with live_console(
        kubeconfig,
        resources=[POD_SPEC, NODE_SPEC],
        ready=lambda session: session.synced,
        timeout=10,
        what="the first list",
    ) as session:
        runs_before, coalesced_before = session.schedule_runs, session.refreshes_coalesced
        started = time.monotonic()
        reads = changes = 0
        while time.monotonic() - started < 1.0:
            fake.upsert(PODS, pod(f"q{changes % 40}", labels={"change": str(changes)}))
            changes += 1
            await asyncio.sleep(0.002)  # the server writes it, the reflector applies it
            assert session.snapshot is not None
            reads += 1
        elapsed = time.monotonic() - started
        runs = session.schedule_runs - runs_before
        assert reads > 100 and changes > 100
        assert 1 <= runs <= elapsed / session.min_refresh + 1, (runs, reads)
        coalesced = session.refreshes_coalesced - coalesced_before
        assert coalesced > 0 and coalesced + runs <= reads + 1  # the other reads found nothing new

        def latest() -> bool:
            shown = {k: p.resource_version for k, p in session.snapshot.pods.items()}
            return shown == server_pods(fake)

        await until(latest, 10, "the view to show the last change of every key")


@pytest.mark.serial  # wall time: key latency median < 100 ms, max < 1 s
async def test_w15_small_burst_is_coalesced_and_converges(tmp_path: Path) -> None:
    measured = await burst_under_console(tmp_path, objects=1_000, rounds=5)
    print(measured)
    assert measured["latency_median_ms"] < 100, measured
    assert measured["latency_max_ms"] < 1000, measured


@pytest.mark.slow
async def test_w15_10k_objects_50k_events(tmp_path: Path) -> None:
    measured = await burst_under_console(tmp_path, objects=10_000, rounds=5)
    print(measured)
    assert measured["latency_median_ms"] < 100, measured
    # the worst key waits for a full collection of what the burst allocated since the heap was
    # frozen (0.2-0.6 s on a loaded 2-core machine): reported, bounded loosely
    assert measured["latency_max_ms"] < 1000, measured
