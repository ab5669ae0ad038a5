"""P7 simulation: the openb trace replayed through the simulator, the store and the core, timed.

``demo_session`` builds the demo (1,523 nodes, 8,152 trace tasks) and ``step`` advances it in
chunks of ``CHUNK`` virtual seconds, as the console does at speed: the simulator emits event
bytes, the store decodes and applies them, the core schedules at every scheduling point where a
bind could succeed and its placements are bound back through the simulator. Building the session
(turning the trace into jobs, the nodes' first events, the first cycle; not reading the CSVs,
done once per process before both timed runs) is included in the verdict's time; the line also
gives the replay alone, since at the quick size the build is a large part of the run.

Two clocks (see ``hpctop/sources/simulator/trace.py``): the demo compresses *arrivals* by
``COMPRESSION`` (720: one trace hour in five virtual seconds) but not run times, so the virtual
clock is the one the simulated jobs really run on. The verdict uses **virtual seconds per real
second**, the conservative figure; the trace-time equivalent (virtual x COMPRESSION: how fast the
trace's arrival history is replayed) is printed beside it, but it is not a like-for-like replay
speed since run times are not compressed. ``horizon`` is the virtual time replayed to; the full
size goes past the last batch job's end (~18,500 s), i.e. end to end.

The verdict is on the wall clock (what a user sees); the line also gives the CPU time of the same
runs and the load average, since on a shared machine the wall time is the CPU time plus the wait
for a core (at a load of 4 on 2 cores, about twice it). Not timed: importing hpctop and reading
the trace's CSVs into the scenario (~0.5 s and ~0.2 s of CPU, once per process).

The view (snapshot and core answer the console shows: plans, reasons, ETAs) is computed when
read, so the verdict's run reads it once per chunk, as a console does once per frame: without
that read the benchmark would skip work a user's console does. The same replay headless (decisions
only, what ``hpctop jobs --demo --at T`` and a recording run) is timed first and printed beside it,
with a check that both runs bound the same jobs' pods to the same nodes and GPUs at the same
virtual times, in the same order, and refused the same binds (``bind_difference``: the sessions
record every bind, ``record_binds``); a difference fails the line. Reading the view must not
change a decision, and before session 14 only the number of binds was compared.

The whole-trace average is carried by an idle tail (past t ~ 10,000 few jobs are left and the
scheduling points are skipped), so the line also gives the CPU speed of each ``STRETCH`` of
virtual time with the view read: the busy stretch (t ~ 2,000-6,000, pending jobs piled up on
quota) is the one a console watched during it sees.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

from bench.common import Verdict
from hpctop.runtime.session import BindFailure, BindRecord, demo_session
from hpctop.sources.simulator.trace import COMPRESSION

CHUNK = 60.0
GOAL = 1000.0


#: virtual seconds per stretch in the per-stretch speeds (the trace's busy stretch is ~2,400-6,000)
STRETCH = 2_000.0


@dataclass(frozen=True, slots=True)
class Replay:
    """One timed replay: virtual seconds reached, build and replay wall seconds, CPU seconds,
    the session's stats, the CPU seconds of each ``STRETCH`` of virtual time (build excluded),
    and every bind and refused bind of the run, in order."""

    elapsed: float
    build: float
    replay: float
    cpu: float
    stats: dict[str, float]
    stretches: list[tuple[float, float, float]]  # (from, to, CPU s)
    binds: list[BindRecord]
    failures: list[BindFailure]


def bind_difference(
    reference: tuple[list[BindRecord], list[BindFailure]], other: tuple[list[BindRecord], list[BindFailure]]
) -> str | None:
    """The first difference between two runs' binds (job, pods, nodes, GPUs, time, backfill) and
    refused binds, or ``None`` when they are the same lists."""
    for what, ours, theirs in (("bind", reference[0], other[0]), ("refused bind", reference[1], other[1])):
        for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
            if a != b:
                return f"{what} {i:,} differs: {a} vs {b}"
        if len(ours) != len(theirs):
            i = min(len(ours), len(theirs))
            extra = ours[i] if len(ours) > i else theirs[i]
            return f"{len(ours):,} vs {len(theirs):,} {what}s; the first one only one side has: {extra}"
    return None


def _replay(horizon: float, read_view: bool) -> Replay:
    """Build the demo and replay it to ``horizon`` in ``CHUNK`` steps, the view read after each if asked."""
    cpu = time.process_time()
    start = time.perf_counter()
    session = demo_session(seed=1, record_binds=True)
    built = time.perf_counter()
    stretches: list[tuple[float, float, float]] = []
    mark, mark_cpu = session.elapsed, time.process_time()
    while session.elapsed < horizon:
        session.step(min(CHUNK, horizon - session.elapsed))
        if read_view:
            _ = session.result  # the console's view, once per chunk
        if session.elapsed - mark >= STRETCH or session.elapsed >= horizon:
            now_cpu = time.process_time()
            stretches.append((mark, session.elapsed, now_cpu - mark_cpu))
            mark, mark_cpu = session.elapsed, now_cpu
    end = time.perf_counter()
    assert session.bind_log is not None
    return Replay(
        session.elapsed,
        built - start,
        end - built,
        time.process_time() - cpu,
        session.stats(),
        stretches,
        session.bind_log,
        list(session.bind_failures),
    )


def stretch_speeds(stretches: list[tuple[float, float, float]]) -> str:
    """``t = a-b: Nx`` per stretch (virtual seconds per CPU second), the slowest marked."""
    speeds = [(b - a) / cpu if cpu > 0 else math.inf for a, b, cpu in stretches]
    slowest = min(range(len(speeds)), key=speeds.__getitem__) if speeds else -1
    return ", ".join(
        f"{a:,.0f}-{b:,.0f} {speed:,.0f}x{' (slowest)' if i == slowest and len(speeds) > 1 else ''}"
        for i, ((a, b, _), speed) in enumerate(zip(stretches, speeds, strict=True))
    )


def run(horizon: float) -> Verdict:
    demo_session(seed=1)  # untimed: the trace's CSVs are read once per process, by whichever build is first
    # headless (decisions only, as `hpctop jobs --demo --at T` runs), then as a console
    headless_run = _replay(horizon, read_view=False)
    view_run = _replay(horizon, read_view=True)
    elapsed, stats = view_run.elapsed, view_run.stats
    build, replay, cpu = view_run.build, view_run.replay, view_run.cpu
    build_h, replay_h, cpu_h = headless_run.build, headless_run.replay, headless_run.cpu
    real = build + replay
    speed = elapsed / real
    headless = elapsed / (build_h + replay_h)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    core = stats["schedule_seconds"] / real
    differs = bind_difference(
        (headless_run.binds, headless_run.failures), (view_run.binds, view_run.failures)
    )
    if differs is not None:
        raise RuntimeError(f"reading the view changed the decisions (headless vs with the view): {differs}")
    return Verdict(
        "P7 simulation",
        f"{speed:,.0f}x real time virtual with the console's view, {headless:,.0f}x headless",
        speed >= GOAL,
        f"openb demo to t = {elapsed:,.0f} virtual s; with the view read once per {CHUNK:.0f} virtual s"
        f" (the verdict): {real:.1f} s (build {build:.1f} s, replay alone {elapsed / replay:,.0f}x,"
        f" {speed * COMPRESSION:,.0f}x in trace time); CPU {cpu:.1f} s = {elapsed / cpu:,.0f}x per CPU"
        f" second (load average {load:.1f}: wall is CPU plus the wait for a core);"
        f" headless (decisions only; the same {len(view_run.binds):,} jobs bound, nodes, GPUs, times):"
        f" {build_h + replay_h:.1f} s, CPU {cpu_h:.1f} s"
        f" (met: {headless >= GOAL}); CPU per {STRETCH:,.0f} virtual s with the view:"
        f" {stretch_speeds(view_run.stretches)}; {stats['events']:,.0f} events,"
        f" {stats['binds']:,.0f} binds, {stats['schedule_runs']:,.0f} core runs ({core:.0%} of the time),"
        f" {stats['skipped_cycles']:,.0f} scheduling points skipped (nothing fits);"
        f" verdict on virtual time (run times are not compressed); goal >= {GOAL:,.0f}x",
    )


if __name__ == "__main__":
    import sys

    print(run(float(sys.argv[1]) if len(sys.argv) > 1 else 18_600).line())
