"""K1 key latency under load: key press to visible change in the live console while events stream.

The whole live path: a server process of the bench's own (aiohttp on 127.0.0.1, pre-built bytes)
answers the pod and node lists and then streams ``MODIFIED`` pod events on the open watch at a
paced rate (``rate`` events/s, in 10 ms chunks; every event a real change, as in P3); the
console is :class:`~hpctop.runtime.live_console.LiveConsoleSession` through a real kubeconfig
(reflectors in their thread, the store, the core on its tick) under the real app
(``make_app``, the console's 0.5 s tick). Keys (``down``/``up``) are delivered through the
driver as a terminal's are; the time runs to the jobs cursor moved and the screen repainted
(:func:`bench.p3_watch.press_and_paint`). Printed: the distribution (p50/p95/max and every
decile), the event rate the reflector actually applied meanwhile, the rate the server delivers to
a bare reader (measured first, :func:`server_rate`) and each thread's share of a core during the
presses (:func:`thread_cpu`). Goal: p95 <= 100 ms while the
console applies at least ``KEPT_UP`` (90 %) of the paced rate (one that falls behind answers
keys under less load than the goal's).

The server runs in a process of its own so that its JSON writing does not share the GIL with
the console (as a real API server would not).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import statistics
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Connection as Pipe
from pathlib import Path

import orjson
from aiohttp import web

from bench.common import Verdict, percentile
from bench.p3_watch import changing_updates, press_and_paint
from bench.p4_cold import _pages, kubeconfig
from bench.payloads import node_event, pod_events
from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.sources.kube.reflector import ReflectorSettings
from hpctop.sources.kube.resources import NODES, PODS
from hpctop.tui.app import make_app
from hpctop.tui.widgets.jobs import JobsTable

GOAL_P95_MS = 100.0
#: share of the paced event rate the console must apply for the latency to count
KEPT_UP = 0.9
TICK = 0.5  # the console's default tick


def _strip(raw: bytes) -> bytes:
    obj = orjson.loads(raw)["object"]
    del obj["kind"], obj["apiVersion"]
    return orjson.dumps(obj)


async def _serve(pipe: Pipe, pods: int, nodes: int, rate: int) -> None:
    pages = {
        PODS.path(): _pages("Pod", [_strip(e) for e in pod_events(pods)], 5000),
        NODES.path(): _pages("Node", [_strip(node_event(i)) for i in range(nodes)], 5000),
    }
    updates = changing_updates(pods)
    sent = 0

    async def answer(request: web.Request) -> web.StreamResponse:
        nonlocal sent
        if request.path not in pages:
            return web.Response(status=404, body=b'{"kind":"Status","code":404}')
        if request.query.get("watch") not in ("1", "true"):
            index = int(request.query.get("continue") or 0)
            return web.Response(body=pages[request.path][index], content_type="application/json")
        stream = web.StreamResponse(headers={"Content-Type": "application/json"})
        await stream.prepare(request)
        if request.path != PODS.path():
            await asyncio.sleep(3600)  # nodes: a quiet watch
            return stream
        per_chunk = max(1, rate // 100)
        start = time.perf_counter()
        k = 0
        while True:
            chunk = [updates[(k + j) % len(updates)] for j in range(per_chunk)]
            try:
                await stream.write(b"\n".join(chunk) + b"\n")
            except ConnectionError:  # the console quit
                return stream
            k += per_chunk
            sent = k
            ahead = start + k / rate - time.perf_counter()
            await asyncio.sleep(max(ahead, 0))

    app = web.Application()
    app.router.add_get("/{tail:.*}", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    pipe.send(f"http://127.0.0.1:{port}")
    loop = asyncio.get_running_loop()
    while await loop.run_in_executor(None, pipe.recv) != "stop":
        pipe.send(sent)
    # no runner.cleanup(): it would wait for the open watches (the nodes' sleeps) to end;
    # asyncio.run cancels them as the process ends


def _server_main(pipe: Pipe, pods: int, nodes: int, rate: int) -> None:
    asyncio.run(_serve(pipe, pods, nodes, rate))


async def server_rate(url: str, seconds: float = 2.0) -> float:
    """Watch lines/s the bench's server delivers to a bare reader (aiohttp, no decoding): proof
    that the paced rate is really sent, measured before the console connects."""
    import aiohttp

    async with (
        aiohttp.ClientSession() as http,
        http.get(url + PODS.path(), params={"watch": "1"}) as response,
    ):
        lines = 0
        start = time.perf_counter()
        async for chunk in response.content.iter_any():
            lines += chunk.count(b"\n")
            if time.perf_counter() - start >= seconds:
                break
        return lines / (time.perf_counter() - start)


def thread_cpu() -> dict[str, float]:
    """CPU seconds of each thread of this process (``/proc/self/task``), by Python thread name."""
    names = {str(t.native_id): t.name for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        name = names.get(tid, f"thread {tid}")
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


async def _measure(url: str, pods: int, presses: int) -> tuple[list[float], float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        config = kubeconfig(Path(tmp), url)
        session = await asyncio.to_thread(
            LiveConsoleSession.connect,
            config,
            None,
            resources=[PODS, NODES],
            settings=ReflectorSettings(backoff_initial=0.05, backoff_cap=0.2),
        )
        try:
            deadline = time.monotonic() + 600
            while not session.synced:
                if time.monotonic() > deadline or session.error is not None:
                    raise RuntimeError(f"the first list did not finish: {session.connection}")
                await asyncio.sleep(0.05)
            app = make_app(session, tick_interval=TICK, show_charts=False)
            latencies: list[float] = []
            async with app.run_test(size=(160, 48)):
                jobs = app.query_one("#jobs", JobsTable)
                jobs.cursor = 0
                await asyncio.sleep(1.0)  # ticks running, events arriving
                events_before, started = session.statuses["Pod"].events, time.perf_counter()
                cpu_before, process_before = thread_cpu(), time.process_time()
                for k in range(presses):
                    latencies.append(await press_and_paint(app, jobs, "down" if k % 2 == 0 else "up", 30))
                    await asyncio.sleep(0.1)
                wall = time.perf_counter() - started
                applied = (session.statuses["Pod"].events - events_before) / wall
                runs = session.schedule_runs
                cpu = thread_cpu()
                shares = sorted(((cpu[n] - cpu_before.get(n, 0.0)) / wall, n) for n in cpu)
                print(
                    f"  K1 CPU over the {wall:.1f} s of presses: process"
                    f" {(time.process_time() - process_before) / wall:.0%} of a core; "
                    + ", ".join(f"{n} {share:.0%}" for share, n in reversed(shares) if share >= 0.01),
                    file=sys.stderr,
                )
        finally:
            session.close()
    return latencies, applied, runs


def run(pods: int, rate: int, presses: int = 40, nodes: int = 0) -> Verdict:
    ctx = multiprocessing.get_context("spawn")
    pipe, child = ctx.Pipe()
    server = ctx.Process(
        target=_server_main, args=(child, pods, nodes or max(pods // 8, 1), rate), daemon=True
    )
    server.start()
    try:
        if not pipe.poll(300):
            raise RuntimeError("the bench's API server did not start")
        url = pipe.recv()
        sent = asyncio.run(server_rate(url))
        latencies, applied, runs = asyncio.run(_measure(url, pods, presses))
        pipe.send("sent")
        pipe.recv()
    finally:
        pipe.send("stop")
        server.join(10)
        if server.is_alive():
            server.kill()
    ms = [1e3 * x for x in latencies]
    p50, p95, worst = statistics.median(ms), percentile(ms, 0.95), max(ms)
    deciles = " ".join(f"{percentile(ms, q / 10):.0f}" for q in range(1, 10))
    print(
        f"  K1 key latency ms, deciles 10..90: {deciles}; all: {' '.join(f'{x:.0f}' for x in ms)}",
        file=sys.stderr,
    )
    # the goal is the latency *while* the events arrive: a console that falls behind the stream
    # applies fewer and answers keys under less load, so the rate must be kept up as well
    kept_up = applied >= KEPT_UP * rate
    return Verdict(
        "K1 keys",
        f"key to screen p50 {p50:.0f} ms, p95 {p95:.0f} ms, max {worst:.0f} ms",
        p95 <= GOAL_P95_MS and kept_up,
        f"{pods:,} pods, {len(ms)} presses while the watch applied {applied:,.0f} events/s"
        f" (server paced at {rate:,}/s, {sent:,.0f}/s to a bare reader; kept up, >= {KEPT_UP:.0%}:"
        f" {kept_up}), {runs} core runs;"
        f" goal p95 <= {GOAL_P95_MS:.0f} ms at the paced rate",
    )


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:]] or [50_000, 5_000, 40]
    print(run(*numbers).line())
