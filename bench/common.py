"""Shared benchmark helpers: interleaved timing, medians, and the one-line verdict format."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Verdict:
    goal: str
    figure: str
    passed: bool
    detail: str = ""

    def line(self) -> str:
        status = "PASS" if self.passed else "MISS"
        extra = f"  ({self.detail})" if self.detail else ""
        return f"{self.goal:<14} {self.figure:<60} {status}{extra}"


def interleaved(sides: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median seconds of each side, run A, B, C, A, B, C, ... so that noise hits every side."""
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(repeats):
        for name, fn in sides.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}
