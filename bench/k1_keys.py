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
import random
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection as Pipe
from pathlib import Path

import orjson
from aiohttp import web

from bench.common import Verdict, percentile
from bench.p3_watch import changing_updates, press_and_paint
from bench.p4_cold import _pages, kubeconfig
from bench.payloads import gpu_pod, node_event, pod_events
from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.sources.kube.reflector import ReflectorSettings
from hpctop.sources.kube.resources import NODES, PODS
from hpctop.tui.app import make_app
from hpctop.tui.widgets.jobs import JobsTable

GOAL_P95_MS = 100.0
#: share of the paced event rate the console must apply for the latency to count
KEPT_UP = 0.9
TICK = 0.5  # the console's default tick
#: the honest stream: one event in ``CORE_SHARE`` is one the core reads (see :class:`Churn`)
CORE_SHARE = 50
#: core events between two stages of one churn job (at 5,000 events/s: 100 core events/s, so a
#: job is submitted, bound ~2 s later, finishes ~2 s after that and is deleted ~2 s later)
CHURN_LAG = 200
STREAMS = ("status only", "honest")


class Churn:
    """The events the core reads, for the honest stream: jobs of one pod each (``churn-NNNNNN``)
    submitted pending (ADDED, no node), bound and started (MODIFIED: a node, ``Running``),
    finished (MODIFIED: ``Succeeded``) and deleted (DELETED), each stage ``CHURN_LAG`` core
    events after the one before, so a few hundred churn jobs are in flight at any time and the
    store neither grows nor shrinks once the first ones are deleted.

    Why 1 event in 50 (``CORE_SHARE``): at 5,000 events/s that is 100 lifecycle events/s, i.e.
    25 pods started and finished per second (90k a hour: the 50k-pod cluster turned over every
    ~35 minutes), a busy batch cluster; the other 49 are what most watch traffic is (kubelet
    status updates: restarts, conditions). What the verdict depends on is that *every* 0.5 s
    tick sees a change the core reads, which holds for any share above ~1 in 2,500 at this rate;
    1 in 50 also makes each such refresh carry ~50 of them (several submissions, bindings and
    finishes at once), the worst case for the core's incremental paths.
    """

    def __init__(self, first_index: int) -> None:
        self.first_index = first_index
        self.emitted = 0  # core events so far
        self.rv = 9_000_000

    def _pod(self, job: int, stage: int) -> dict[str, object]:
        pod = gpu_pod(self.first_index + job, random.Random(job), per_job=1)
        meta = pod["metadata"]
        name = f"churn-{job:06d}"
        meta["name"] = meta["generateName"] = name
        for label in ("batch.kubernetes.io/job-name", "job-name", "yunikorn.apache.org/app-id"):
            meta["labels"][label] = name
        meta["ownerReferences"][0]["name"] = name
        self.rv += 1
        meta["resourceVersion"] = str(self.rv)
        status = pod["status"]
        if stage == 0:  # submitted: not bound, nothing started
            del pod["spec"]["nodeName"]
            status.clear()
            status.update(
                phase="Pending",
                qosClass="Burstable",
                conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
            )
        elif stage >= 2:  # finished
            status["phase"] = "Succeeded"
            container = status["containerStatuses"][0]
            container.update(ready=False, started=False)
            container["state"] = {"terminated": {"exitCode": 0, "reason": "Completed"}}
        return pod

    def next(self) -> bytes:
        """The next core event: stage ``c % 4`` of job ``c // 4 - stage * CHURN_LAG``."""
        while True:
            c = self.emitted
            self.emitted += 1
            stage = c % 4
            job = c // 4 - stage * CHURN_LAG
            if job >= 0:
                kind = ("ADDED", "MODIFIED", "MODIFIED", "DELETED")[stage]
                return orjson.dumps({"type": kind, "object": self._pod(job, stage)})


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
    churn = Churn(first_index=pods)
    sent = 0
    honest = False  # the stream now: status updates only, or one core event in CORE_SHARE

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
            if honest:  # every CORE_SHARE-th event of the stream is one the core reads
                for j in range(per_chunk):
                    if (k + j) % CORE_SHARE == 0:
                        chunk[j] = churn.next()
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
    while (command := await loop.run_in_executor(None, pipe.recv)) != "stop":
        if command in STREAMS:
            honest = command == "honest"
        pipe.send((sent, churn.emitted))
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


@dataclass
class Phase:
    """One stream's share of the presses: latencies, events applied, core runs, CPU per thread."""

    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0
    events: int = 0
    core_runs: int = 0
    process_cpu: float = 0.0
    threads: dict[str, float] = field(default_factory=dict)

    @property
    def applied(self) -> float:
        return self.events / self.seconds if self.seconds else 0.0

    def cpu_text(self) -> str:
        shares = sorted(((cpu / self.seconds, n) for n, cpu in self.threads.items()), reverse=True)
        return f"process {self.process_cpu / self.seconds:.0%} of a core; " + ", ".join(
            f"{n} {share:.0%}" for share, n in shares if share >= 0.01
        )


async def _measure(url: str, pipe: Pipe, presses: int, rounds: int) -> dict[str, Phase]:
    """Both streams on one console, interleaved: ``rounds`` x (status only, honest), each
    ``presses / rounds`` presses after a second of that stream (so its ticks have seen it)."""
    phases = {name: Phase() for name in STREAMS}
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
            async with app.run_test(size=(160, 48)):
                jobs = app.query_one("#jobs", JobsTable)
                jobs.cursor = 0
                k = 0
                for _ in range(rounds):
                    for name in STREAMS:
                        phase = phases[name]
                        pipe.send(name)
                        pipe.recv()
                        await asyncio.sleep(1.0)  # ticks running, this stream arriving
                        events, runs = session.statuses["Pod"].events, session.schedule_runs
                        cpu, process, started = thread_cpu(), time.process_time(), time.perf_counter()
                        for _ in range(max(presses // rounds, 1)):
                            key = "down" if k % 2 == 0 else "up"
                            phase.latencies.append(await press_and_paint(app, jobs, key, 30))
                            k += 1
                            await asyncio.sleep(0.1)
                        phase.seconds += time.perf_counter() - started
                        phase.events += session.statuses["Pod"].events - events
                        phase.core_runs += session.schedule_runs - runs
                        phase.process_cpu += time.process_time() - process
                        for n, seconds in thread_cpu().items():
                            phase.threads[n] = phase.threads.get(n, 0.0) + seconds - cpu.get(n, 0.0)
        finally:
            session.close()
    return phases


def run(pods: int, rate: int, presses: int = 40, nodes: int = 0, rounds: int = 2) -> Verdict:
    """K1 on both streams (``presses`` each); the verdict is the honest stream's."""
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
        phases = asyncio.run(_measure(url, pipe, presses, min(rounds, presses)))
        pipe.send("sent")
        _, core_events = pipe.recv()
    finally:
        pipe.send("stop")
        server.join(10)
        if server.is_alive():
            server.kill()
    figures = {}
    for name, phase in phases.items():
        ms = [1e3 * x for x in phase.latencies]
        figures[name] = (statistics.median(ms), percentile(ms, 0.95), max(ms))
        deciles = " ".join(f"{percentile(ms, q / 10):.0f}" for q in range(1, 10))
        print(
            f"  K1 {name} stream: {phase.applied:,.0f} events/s applied, {phase.core_runs} core runs"
            f" in {phase.seconds:.1f} s; CPU {phase.cpu_text()}\n"
            f"  K1 {name} key latency ms, deciles 10..90: {deciles};"
            f" all: {' '.join(f'{x:.0f}' for x in ms)}",
            file=sys.stderr,
        )
    honest, plain = phases["honest"], figures["status only"]
    p50, p95, worst = figures["honest"]
    # the goal is the latency *while* the events arrive: a console that falls behind the stream
    # applies fewer and answers keys under less load, so the rate must be kept up as well
    kept_up = honest.applied >= KEPT_UP * rate
    return Verdict(
        "K1 keys",
        f"key to screen p50 {p50:.0f} ms, p95 {p95:.0f} ms, max {worst:.0f} ms",
        p95 <= GOAL_P95_MS and kept_up,
        f"{pods:,} pods, {len(honest.latencies)} presses while the watch applied"
        f" {honest.applied:,.0f} events/s, 1 in {CORE_SHARE} read by the core (submit, bind,"
        f" finish, delete: {core_events:,} sent), {honest.core_runs} core runs"
        f" (server paced at {rate:,}/s, {sent:,.0f}/s to a bare reader; kept up, >= {KEPT_UP:.0%}:"
        f" {kept_up}); status-only stream: p50 {plain[0]:.0f} / p95 {plain[1]:.0f} / max"
        f" {plain[2]:.0f} ms, {phases['status only'].core_runs} core runs;"
        f" goal p95 <= {GOAL_P95_MS:.0f} ms at the paced rate, honest stream",
    )


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:]] or [50_000, 5_000, 40]
    print(run(*numbers).line())
