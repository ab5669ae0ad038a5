"""Waiting in tests: poll a condition without blocking the event loop.

The live tests run the fake API server on the test's own loop, so a test that waits for the
reflectors, a worker or a leader must yield to that loop between looks (``asyncio.sleep``), never
block it. This was copied into a dozen test modules; it lives here once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

#: how often a condition is looked at (small against every timeout the tests use)
POLL_INTERVAL = 0.02


async def until(predicate: Callable[[], bool], timeout: float = 10.0, what: str = "") -> None:
    """Return once ``predicate()`` is true; fail the test after ``timeout`` seconds, naming ``what``."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await asyncio.sleep(POLL_INTERVAL)
