"""Backoff between retries: client-go's reflector values, so a sick API server is not hammered.

0.8 s initial, doubling, capped at 30 s, jittered up to twice the step (client-go's jitter factor
1.0) but never beyond the cap, and forgotten after two minutes without a failure. Every failure
path of the reflector sleeps through :meth:`Backoff.next`, so no failure mode can make it faster
than this (RELIABILITY.md §1.3, W6, W9). A ``Retry-After`` from the server is a floor on top.

The clock is the event loop's, so tests that fast-forward the loop (looptime) see exact delays.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable


class Backoff:
    def __init__(
        self,
        *,
        initial: float = 0.8,
        factor: float = 2.0,
        cap: float = 30.0,
        reset_after: float = 120.0,
        jitter: float = 1.0,
        clock: Callable[[], float] | None = None,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.initial = initial
        self.factor = factor
        self.cap = cap
        self.reset_after = reset_after
        self.jitter = jitter
        self._clock = clock
        self._rng = rng
        self.attempt = 0
        self._last_failure: float | None = None

    def _now(self) -> float:
        return self._clock() if self._clock is not None else asyncio.get_running_loop().time()

    def next(self) -> float:
        """Record a failure and return how long to wait before the next attempt."""
        now = self._now()
        if self._last_failure is not None and now - self._last_failure > self.reset_after:
            self.attempt = 0
        step = min(self.cap, self.initial * self.factor**self.attempt)
        self.attempt += 1
        self._last_failure = now
        return min(self.cap, step * (1.0 + self.jitter * self._rng()))

    def reset(self) -> None:
        self.attempt = 0
        self._last_failure = None
