"""``make bench``: one line per goal of PERFORMANCE.md; exit 1 on a miss.

``--quick`` runs reduced sizes in under a minute; ``--smoke`` tiny sizes for the test suite.
``--only P3,P5`` runs some of them. A benchmark that fails to run prints why on its line (a miss).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import traceback
from collections.abc import Callable

from bench import (
    k1_keys,
    p1_decode,
    p2_memory,
    p3_watch,
    p4_cold,
    p5_view,
    p6_core,
    p7_sim,
    p8_peer,
    quit_latency,
    shell,
)
from bench.common import Verdict
from hpctop.runtime import heap

#: arguments of each benchmark's ``run`` per size
SIZES: dict[str, dict[str, tuple[float, ...]]] = {
    "full": {
        "P1": (20_000, 5),
        "P2": (100_000, 10_000),
        "P3": (20_000, 100_000, 5),
        "P4": (200_000, 10_000, 3),
        "P5": (100_000, 3),
        "P6": (10_000, 50_000),
        "P7": (18_600,),
        "P8": (10_000, 50_000, 100_000, 2),
        "K1": (50_000, 5_000, 60),
    },
    "quick": {
        "P1": (1_000, 5),
        "P2": (5_000, 500),
        "P3": (2_000, 5_000, 5),
        "P4": (2_000, 100, 5),
        "P5": (2_000, 5, 2.0, 8),
        "P6": (300, 1_500, 3),
        "P7": (1_200,),
        "P8": (1_000, 4_000, 2),
        "K1": (5_000, 1_000, 20),
    },
    "smoke": {
        "P1": (100, 1),
        "P2": (200, 20),
        "P3": (100, 500, 1, 5, 3),
        "P4": (100, 10, 1),
        "P5": (200, 1, 0.5, 2),
        "P6": (48, 150, 1),
        "P7": (30,),
        "P8": (100, 0),
        "K1": (300, 200, 4),
    },
}
RUNS: dict[str, Callable[..., Verdict]] = {
    "P1": p1_decode.run,
    "P2": p2_memory.run,
    "P3": p3_watch.run,
    "P4": p4_cold.run,
    "P5": p5_view.run,
    "P6": p6_core.run,
    "P7": p7_sim.run,
    "P8": p8_peer.run,
    "K1": k1_keys.run,
}
NAMES = {
    "P1": "P1 decode",
    "P2": "P2 memory",
    "P3": "P3 watch",
    "P4": "P4 cold start",
    "P5": "P5 view",
    "P6": "P6 core",
    "P7": "P7 simulation",
    "P8": "P8 peer",
    "K1": "K1 keys",
}
shell.register(SIZES, RUNS, NAMES)  # S1: shell answers, issue 15
quit_latency.register(SIZES, RUNS, NAMES)  # Q1: quit latency, issue 15


def run_one(goal: str, size: str) -> Verdict:
    """Run one benchmark; an exception becomes a line that says why it could not run."""
    args = [int(a) if float(a).is_integer() else a for a in SIZES[size][goal]]
    threshold = gc.get_threshold()
    try:
        return RUNS[goal](*args)
    except Exception as exc:  # a benchmark that cannot run says why on its line
        traceback.print_exc(file=sys.stderr)
        return Verdict.cannot_run(NAMES[goal], f"{type(exc).__name__}: {exc}"[:200])
    finally:
        # each line starts with the GC as a fresh process has it: a console built by one (P5's,
        # K1's ``live_session``) freezes the heap with its store and raises the young threshold
        # for good, and the next line would run on that heap (session 13's full bench: P7 at
        # 62x, every view read walking ~10 M frozen objects in ``gc.get_freeze_count``)
        heap.unfreeze()
        gc.set_threshold(*threshold)
        gc.enable()
        gc.collect()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--quick", action="store_true", help="reduced sizes, under a minute")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, to keep the code paths alive")
    parser.add_argument("--only", default="", help="comma-separated goals, e.g. P3,P5")
    args = parser.parse_args(argv)
    size = "smoke" if args.smoke else "quick" if args.quick else "full"
    goals = [g.strip().upper() for g in args.only.split(",") if g.strip()] or list(RUNS)
    unknown = [g for g in goals if g not in RUNS]
    if unknown:
        parser.error(f"unknown goal(s): {', '.join(unknown)}")
    missed = 0
    started = time.perf_counter()
    for goal in goals:
        verdict = run_one(goal, size)
        print(verdict.line(), flush=True)
        missed += not verdict.passed
    print(f"# {size} run: {len(goals)} benchmarks in {time.perf_counter() - started:.0f} s", flush=True)
    return 1 if missed and size != "smoke" else 0


if __name__ == "__main__":
    sys.exit(main())
