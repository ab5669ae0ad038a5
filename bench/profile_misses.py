"""Profiles of the goals that miss, and the effect of the cyclic GC on bulk decode (``bench/README.md``).

``python -m bench.profile_misses [p1|p3|p4|p4b|p6|p7|p7h|p7phases|p7views|p7points|p7split|gc] [size]``:
cProfile's top functions by own time (``tottime``) and by cumulative time for the region a benchmark times
(``p4``: the console path P4's verdict times, its main thread; ``p4b``: ``list_once`` beside it;
``p7phases``: P7's CPU time split by phase and the GC's collections, no cProfile; ``p7views``:
the view reads alone from t = 2,400, the busy stretch; ``p7points``: the scheduling points
alone, the same stretch; ``p7split``: headless and view replays alternated in one process, each
split into the points' core, the view's cycles and the rest); ``gc`` times
``decode_list`` and ``orjson.loads`` with the GC as is, disabled and after ``gc.freeze()`` on a heap
that already holds a synced store (the situation of a relist or a burst), interleaved.
"""

from __future__ import annotations

import cProfile
import gc
import io
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson

from bench.common import gc_mode
from bench.payloads import pod_list


def profile(fn: Callable[[], object], top: int = 18) -> str:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def p1(pods: int) -> str:
    from hpctop.model.decode import decode_list

    raw = pod_list(pods)
    return profile(lambda: decode_list("Pod", raw))


def p3(pods: int) -> str:
    from bench.live_app import populate
    from bench.p3_watch import _replay, changing_updates
    from hpctop.model.store import Store

    store = Store()
    populate(store, pods, 0)
    events = changing_updates(pods)
    return profile(lambda: _replay(store, events, len(events) * 2))


def p4(pods: int, beside: bool = False) -> str:
    """One P4 cold start (``bench/p4_cold.py``) profiled whole: the verdict's console path
    (``_console_start``; cProfile sees this thread only: the final tick, ``publish`` and the
    repaint, not the session's list thread nor the tick worker's listing views), or with
    ``beside`` (``p4b``) ``list_once`` beside the session (``_cold_start``: list, tick, repaint,
    all in this thread)."""
    import asyncio
    import tempfile
    from pathlib import Path

    from bench.p4_cold import PageServer, _cold_start, _console_start, kubeconfig, payload

    async def once() -> None:
        pages = payload(pods, max(pods // 20, 1))
        with tempfile.TemporaryDirectory() as tmp:
            async with PageServer(pages) as server:
                config = kubeconfig(Path(tmp), server.url)
                await (_cold_start if beside else _console_start)(config, pods)

    return profile(lambda: asyncio.run(once()), top=30)


def p4b(pods: int) -> str:
    return p4(pods, beside=True)


def p6(nodes: int) -> str:
    from bench.p6_core import NOW, cluster, policy
    from hpctop.scheduling.core import schedule
    from hpctop.scheduling.memo import Memo

    snap = cluster(nodes, nodes * 5)
    return profile(lambda: schedule(snap, policy(), NOW, memo=Memo()))


def p7(horizon: int, read_view: bool = True) -> str:
    """The P7 verdict's run (``bench/p7_sim.py``): the demo built and replayed in 60 s steps, the
    console's view read after each (``p7h``: headless, the view never read); the CSVs are read first."""
    from hpctop.runtime.session import demo_session

    demo_session(seed=1)  # the trace's CSVs, read once per process (outside the benchmark's time too)

    def replay() -> None:
        session = demo_session(seed=1)
        while session.elapsed < horizon:
            session.step(min(60, horizon - session.elapsed))
            if read_view:
                _ = session.result

    return profile(replay, top=30)


def p7h(horizon: int) -> str:
    return p7(horizon, read_view=False)


def p7_phases(horizon: int) -> str:
    """CPU time (``time.process_time``) of the P7 verdict's run split by phase, without cProfile's
    per-call overhead: each phase is timed at its entry point (an inner one is not counted twice),
    the core per mode (placements-only at scheduling points, full for the view)."""
    from hpctop.model.store import Store
    from hpctop.runtime import session as session_module
    from hpctop.scheduling import core
    from hpctop.sources.simulator.cluster import SimulatedCluster

    spent: dict[str, float] = {}
    depth = [0]
    undo: list[tuple[object, str, object]] = []

    def timed(owner: object, name: str, label: str, inside: bool = False) -> None:
        """``inside``: a part of a phase already timed (counted on its own line, not left out)."""
        inner = getattr(owner, name)

        def wrapper(*args: object, **kwargs: object) -> object:
            if depth[0] and not inside:
                return inner(*args, **kwargs)
            if inside:
                started = time.process_time()
                try:
                    return inner(*args, **kwargs)
                finally:
                    spent[label] = spent.get(label, 0.0) + time.process_time() - started
            depth[0] += 1
            started = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - started
                depth[0] -= 1

        undo.append((owner, name, inner))
        setattr(owner, name, wrapper)

    timed(SimulatedCluster, "advance", "simulator: arrivals and ends (advance)")
    timed(SimulatedCluster, "bind", "simulator: binds")
    timed(SimulatedCluster, "placement_possible", "simulator: placement_possible")
    timed(Store, "apply_raw", "decode + store apply")
    timed(Store, "snapshot", "store snapshot")
    timed(core._Cycle, "__init__", "core: _Cycle.__init__ (both modes)")
    timed(core._Cycle, "run", "core: run (both modes)")
    timed(core._Cycle, "_roll_up", "  of which _roll_up", inside=True)
    session_module.demo_session(seed=1)  # the CSVs, outside the figures as in the benchmark
    view = 0.0
    # the cyclic GC's collections, timed through ``gc.callbacks`` (inside the phases above too)
    in_view = [False]
    gc_started = [0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            gc_started[0] = time.process_time()
            return
        label = f"  GC collections, {'view reads' if in_view[0] else 'the loop'} (inside the above)"
        spent[label] = spent.get(label, 0.0) + time.process_time() - gc_started[0]

    gc.callbacks.append(on_gc)
    try:
        started = time.process_time()
        session = session_module.demo_session(seed=1)
        build = time.process_time() - started
        while session.elapsed < horizon:
            session.step(min(60, horizon - session.elapsed))
            at = time.process_time()
            in_view[0] = True
            _ = session.result
            in_view[0] = False
            view += time.process_time() - at
        total = time.process_time() - started
    finally:
        gc.callbacks.remove(on_gc)
        for owner, name, inner in undo:
            setattr(owner, name, inner)
    lines = [
        f"P7 to t = {horizon:,} virtual s with the view read every 60 s: {total:.2f} s CPU"
        f" = {horizon / total:,.0f}x per CPU second; {session.schedule_runs} core runs",
        f"  {'build (session, first events, first cycle)':<46} {build:7.3f} s",
        f"  {'view reads (snapshot + full cycle), in all':<46} {view:7.3f} s",
    ]
    for label, value in sorted(spent.items(), key=lambda kv: -kv[1]):
        if not label.startswith(" "):
            lines.append(f"  {label:<46} {value:7.3f} s  {value / total:6.1%}")
            if label == "core: run (both modes)" and "  of which _roll_up" in spent:
                part = spent["  of which _roll_up"]
                lines.append(f"  {'  of which _roll_up':<46} {part:7.3f} s  {part / total:6.1%}")
    for label, value in sorted(spent.items()):
        if label.startswith("  GC"):
            lines.append(f"{label:<48} {value:7.3f} s  {value / total:6.1%}")
    return "\n".join(lines)


def p7_views(horizon: int, since: float = 2_400.0, points: bool = False) -> str:
    """cProfile of the P7 verdict's view reads alone (the console's full cycles), from ``since``
    (or t = 0 when the horizon is shorter) to ``horizon``; the replay before and between is not
    profiled. The busy stretch (t ~ 2,400-6,000) is where a view read costs the most.
    ``points``: the scheduling points' placements-only cycles alone instead (``p7points``)."""
    from hpctop.runtime.session import demo_session

    session = demo_session(seed=1)
    start = since if horizon > since else 0.0
    while session.elapsed < start:
        session.step(60)
        _ = session.result
    prof = cProfile.Profile()
    if points:
        decide = session._decide

        def profiled(*args: Any) -> Any:
            prof.enable()
            try:
                return decide(*args)
            finally:
                prof.disable()

        session._decide = profiled
    while session.elapsed < horizon:
        session.step(min(60, horizon - session.elapsed))
        if not points:
            prof.enable()
        _ = session.result
        if not points:
            prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(30)
    stats.sort_stats("cumulative").print_stats(30)
    return out.getvalue()


def p7_points(horizon: int) -> str:
    return p7_views(horizon, points=True)


def _cpu_into(inner: Callable[..., Any], spent: dict[str, float], label: str) -> Callable[..., Any]:
    """``inner``, adding the CPU seconds of each call to ``spent[label]``."""

    def wrapper(*args: Any) -> Any:
        at = time.process_time()
        try:
            return inner(*args)
        finally:
            spent[label] += time.process_time() - at

    return wrapper


def p7_split(horizon: int, order: str = "HVHV") -> str:
    """P7's headless and view replays in one process, in ``order`` (``H`` headless, ``V`` with the
    view read every 60 s), each one's CPU split into the scheduling points' core, the view's full
    cycles and the rest (simulator, decode, store, snapshots, session), with its bind count.

    Why: session 14 asked whether the headless run is slower relative to the view run because of
    the order of the runs in one process (the heap, the GC, the memo left by the previous run);
    alternating both in one process answers it, and the split says which part moved."""
    from hpctop.runtime.session import demo_session

    demo_session(seed=1)  # the CSVs, read once per process, as in the benchmark
    lines = [f"P7 to t = {horizon:,} in one process, order {order} (CPU s)"]
    for side in order:
        spent = {"points": 0.0, "view": 0.0}
        started = time.process_time()
        session = demo_session(seed=1)

        session._decide = _cpu_into(session._decide, spent, "points")
        session._schedule = _cpu_into(session._schedule, spent, "view")
        while session.elapsed < horizon:
            session.step(min(60, horizon - session.elapsed))
            if side == "V":
                _ = session.result
        total = time.process_time() - started
        rest = total - spent["points"] - spent["view"]
        lines.append(
            f"  {'headless ' if side == 'H' else 'with view'} total {total:7.2f}  points' core"
            f" {spent['points']:7.2f}  view's full cycles {spent['view']:6.2f}  rest {rest:6.2f}"
            f"  binds {session.binds:,}  core runs {session.schedule_runs:,}"
        )
    return "\n".join(lines)


def gc_effect(pods: int, repeats: int = 5, held: int = 20_000) -> str:
    """decode_list / orjson.loads of ``pods`` pods with GC on, off, frozen; ``held`` pods already live."""
    from bench.live_app import populate
    from hpctop.model.decode import decode_list
    from hpctop.model.store import Store

    store = Store()
    populate(store, held, held // 20)  # a synced heap the GC would traverse again and again
    raw = pod_list(pods)
    gc.collect()
    times: dict[str, list[float]] = {}
    for _ in range(repeats):
        for mode in ("on", "off", "frozen"):
            for side, fn in (
                ("decode_list", lambda: decode_list("Pod", raw)),
                ("orjson", lambda: orjson.loads(raw)),
            ):
                with gc_mode(mode):
                    start = time.perf_counter()
                    fn()
                    times.setdefault(f"{side} gc {mode}", []).append(time.perf_counter() - start)
                gc.collect()
    lines = [f"{pods:,} pods decoded with {held:,} pods already held; median of {repeats}"]
    for name, values in times.items():
        med = statistics.median(values)
        lines.append(f"  {name:<22} {med * 1e3:8.0f} ms  {pods / med:>9,.0f} pods/s")
    del store
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    what = argv[0] if argv else "gc"
    size = int(argv[1]) if len(argv) > 1 else 0
    runs = {
        "p1": p1,
        "p3": p3,
        "p4": p4,
        "p4b": p4b,
        "p6": p6,
        "p7": p7,
        "p7h": p7h,
        "p7phases": p7_phases,
        "p7views": p7_views,
        "p7points": p7_points,
        "p7split": p7_split,
        "gc": gc_effect,
    }
    defaults = {
        "p1": 5000,
        "p3": 5000,
        "p4": 2000,
        "p4b": 2000,
        "p6": 2000,
        "p7": 1200,
        "p7h": 1200,
        "p7phases": 1200,
        "p7views": 4800,
        "p7points": 4800,
        "p7split": 4200,
        "gc": 5000,
    }
    print(runs[what](size or defaults[what]))


if __name__ == "__main__":
    main(sys.argv[1:])
