"""The watch's inactivity watchdog: one per stream, moved on rarely, never firing early (K1).

Why: the reflector armed one ``asyncio.timeout`` per watch line (a timer pushed on the loop's
heap and cancelled again), 5-9 us of its ~30-40 us per event at K1's 5,000 events/s. Now one
watchdog spans the stream and is moved on only when it would fire before the deadline (no data
for ``inactivity``), at most ``WATCHDOG_SLACK`` (or a tenth of ``inactivity``) late. Checked
here with a stream of a few hundred lines that lasts longer than ``inactivity``: it is not cut
while lines arrive, far fewer timers than lines are armed, and once the lines stop the stall is
reported no earlier than ``inactivity`` after the last one.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Mapping

import orjson
import pytest

from hpctop.model.store import Store
from hpctop.sources.kube.errors import StreamBroken
from hpctop.sources.kube.reflector import Reflector, ReflectorSettings
from hpctop.sources.kube.resources import PODS
from tests.model_fixtures import pod

INACTIVITY = 0.6
LINES = 240
GAP = 0.005  # seconds between two lines: the stream lasts ~1.2 s, twice the inactivity


class _Connection:
    refreshes = 0

    def refresh_in(self) -> float | None:
        return None


class _Client:
    """A client whose watch streams ``LINES`` pod events ``GAP`` apart, then goes silent."""

    def __init__(self) -> None:
        self.connection = _Connection()
        self.last_line_at = 0.0

    @contextlib.asynccontextmanager
    async def stream(self, path: str, params: Mapping[str, str]) -> AsyncIterator[AsyncIterator[bytes]]:
        async def lines() -> AsyncIterator[bytes]:
            for i in range(LINES):
                await asyncio.sleep(GAP)
                obj = pod(f"p{i % 20}", rv=str(100 + i))
                self.last_line_at = time.monotonic()
                yield orjson.dumps({"type": "MODIFIED", "object": obj})
            await asyncio.sleep(3600)  # a stalled stream
            yield b""

        yield lines()


async def test_a_busy_stream_arms_few_timers_and_a_stall_is_never_reported_early(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    armed: list[str] = []
    timeout, reschedule = asyncio.timeout, asyncio.Timeout.reschedule

    def counting_timeout(delay: float | None) -> asyncio.Timeout:
        armed.append("timeout")
        return timeout(delay)

    def counting_reschedule(self: asyncio.Timeout, when: float | None) -> None:
        armed.append("reschedule")
        reschedule(self, when)

    monkeypatch.setattr(asyncio, "timeout", counting_timeout)
    monkeypatch.setattr(asyncio.Timeout, "reschedule", counting_reschedule)
    client = _Client()
    store = Store()
    watcher = Reflector(client, store, PODS, settings=ReflectorSettings(inactivity=INACTIVITY))  # type: ignore[arg-type]
    with pytest.raises(StreamBroken):
        await watcher._watch("1")
    silent = time.monotonic() - client.last_line_at
    assert watcher.status.events == LINES  # every line applied: not cut while lines flowed
    assert silent >= INACTIVITY  # never early
    assert silent < INACTIVITY + 2.0  # and not much late (the slack is 0.06 s; a loaded machine)
    # one timer per line before: at most one per slack (0.06 s) of a 1.2 s stream now
    assert len(armed) <= 40 < LINES
