"""``make bench``: one line per goal of PERFORMANCE.md; exit 1 on a miss.

``--quick`` runs reduced sizes in under a minute; ``--smoke`` tiny sizes for the test suite.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from bench import p1_decode, p2_memory, p6_core
from bench.common import Verdict

SIZES = {
    "full": {"p1": (20_000, 5), "p2": (100_000, 10_000), "p6": (10_000, 50_000)},
    "quick": {"p1": (5_000, 5), "p2": (20_000, 2_000), "p6": (2_000, 10_000)},
    "smoke": {"p1": (200, 1), "p2": (500, 50), "p6": (64, 300)},
}


def benchmarks(size: str) -> list[Callable[[], Verdict]]:
    s = SIZES[size]
    return [
        lambda: p1_decode.run(*s["p1"]),
        lambda: p2_memory.run(*s["p2"]),
        lambda: p6_core.run(*s["p6"]),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--quick", action="store_true", help="reduced sizes, under a minute")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, to keep the code paths alive")
    args = parser.parse_args(argv)
    size = "smoke" if args.smoke else "quick" if args.quick else "full"
    missed = 0
    for bench in benchmarks(size):
        verdict = bench()
        print(verdict.line(), flush=True)
        missed += not verdict.passed
    return 1 if missed and size != "smoke" else 0


if __name__ == "__main__":
    sys.exit(main())
