"""Shared benchmark helpers: interleaved timing, medians, GC control and the one-line verdict format."""

from __future__ import annotations

import contextlib
import gc
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass
class Verdict:
    goal: str
    figure: str
    passed: bool
    detail: str = ""
    #: False when the benchmark could not run at all (the figure says why); counts as a miss
    ran: bool = True

    def line(self) -> str:
        status = "PASS" if self.passed else "MISS" if self.ran else "SKIP"
        extra = f"  ({self.detail})" if self.detail else ""
        return f"{self.goal:<14} {self.figure:<60} {status}{extra}"

    @classmethod
    def cannot_run(cls, goal: str, why: str) -> Verdict:
        """A benchmark that cannot run says why on its line (and is not a pass)."""
        return cls(goal, f"not measured: {why}", False, ran=False)


def interleaved(sides: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median seconds of each side, run A, B, C, A, B, C, ... so that noise hits every side."""
    times = interleaved_times(sides, repeats)
    return {name: statistics.median(values) for name, values in times.items()}


def interleaved_times(sides: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """Every timing of each side (interleaved as :func:`interleaved`)."""
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(repeats):
        for name, fn in sides.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def ratio(value: float, digits: int = 0) -> str:
    """A ratio for humans: ``1,234x``; below 10 with one decimal, below 1 with two, never ``0x``."""
    if value >= 10 and digits == 0:
        return f"{value:,.0f}x"
    if value >= 1:
        return f"{value:,.{max(digits, 1)}f}x"
    return f"{value:.2f}x" if value >= 0.01 else f"{value:.1e}x"


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by nearest rank; a single value is its own percentile."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


@contextlib.contextmanager
def gc_mode(mode: str) -> Iterator[None]:
    """Run a block with the cyclic GC as is (``"on"``), disabled (``"off"``), or after ``gc.freeze()``.

    ``"frozen"`` moves everything alive now to the permanent generation (what
    PERFORMANCE.md suggests after the initial sync), so the collections the block triggers
    do not traverse the existing heap again; it is undone afterwards.
    """
    was = gc.isenabled()
    if mode == "off":
        gc.disable()
    elif mode == "frozen":
        gc.collect()
        gc.freeze()
    try:
        yield
    finally:
        if mode == "frozen":
            gc.unfreeze()
        if was:
            gc.enable()
