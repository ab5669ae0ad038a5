"""Plausible, deterministic log lines for the simulator's pods (the console's ``l`` on the demo).

A simulated pod runs nothing, so its log is made up, but the same way every time: the lines of a
pod depend only on its name, its container and how long it has run, so a screenshot, a test and
a bug report that says "seed 1, --at 3600" see the same log. A training-like job prints a step
line every ``period`` virtual seconds (the period and the starting loss drawn from the pod's own
seeded generator), a service prints request lines; :func:`log_lines` returns only the newest
``limit`` lines, computed by index, so a pod that ran for days costs no more than one that just
started.
"""

from __future__ import annotations

import random
import time
import zlib

#: most lines one call returns (the newest)
LIMIT = 500


def _stamp(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _line(seed: int, index: int, at: float, service: bool, base_loss: float) -> str:
    rng = random.Random(seed * 1_000_003 + index)
    if service:
        code = 200 if rng.random() < 0.97 else 503
        return (
            f'{_stamp(at)} INFO "POST /v1/completions" {code} '
            f"{rng.randint(40, 900)} tokens {rng.uniform(0.05, 2.5):.2f}s"
        )
    loss = base_loss / (1.0 + 0.01 * index) + rng.uniform(-0.02, 0.02)
    return (
        f"{_stamp(at)} INFO step {index * 10} loss {loss:.4f} lr 3.0e-04 "
        f"tokens/s {rng.randint(30_000, 52_000)} gpu_mem {rng.uniform(60, 78):.1f}GiB"
    )


def log_lines(
    pod: str, container: str, started: float, until: float, *, service: bool = False, limit: int = LIMIT
) -> list[str]:
    """The log of ``pod``'s ``container`` from ``started`` to ``until`` (virtual seconds), newest last."""
    seed = zlib.crc32(f"{pod}/{container}".encode())
    rng = random.Random(seed)
    period = rng.choice((10.0, 15.0, 20.0, 30.0))
    base_loss = rng.uniform(2.0, 4.0)
    if until < started:
        return []
    count = int((until - started) // period) + 1
    first = max(count - limit, 0)
    header = [f"{_stamp(started)} INFO container {container} started"] if first == 0 else []
    steps = range(first + 1, count)
    return header + [_line(seed, i, started + i * period, service, base_loss) for i in steps]
