"""The live console's decision clock (issue 16, K1): event-driven refreshes run the core at the
last clock move's ``now``, so the core's incremental path (kept priorities, the last pass
replayed up to the changed job's turn) serves them, and the decisions are still exactly a full
run's at that ``now``.

No reflector runs: the store is written directly, as the reflector thread would, and the
session's clock is the test's.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from hpctop.runtime.live_console import CLOCK_STEP, LiveConsoleSession
from hpctop.scheduling.core import schedule
from hpctop.scheduling.memo import Memo
from hpctop.scheduling.types import ScheduleResult
from hpctop.sources.kube.connection import Connection
from tests.model_fixtures import event, node, pod

#: never connected: the tests write the store themselves
UNUSED = Connection(server="http://127.0.0.1:9", context=None, namespace=None, ssl=None)
START = 1_767_232_800.0  # 2026-01-01 02:00 UTC, two hours after the first pods were created


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def created(i: int) -> str:
    return f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z"


def pending_pod(i: int, gpus: int = 1) -> bytes:
    return event("ADDED", pod(f"p{i:03d}", phase="Pending", gpus=gpus, created=created(i)))


@pytest.fixture
def session() -> Iterator[tuple[LiveConsoleSession, Clock]]:
    clock = Clock(START)
    live = LiveConsoleSession(UNUSED, clock=clock, min_refresh=0.0)
    store = live.store
    for n in range(3):
        store.apply_raw("Node", event("ADDED", node(f"n{n}", gpus=8)))
    for i in range(10):  # running: 10 of the 24 GPUs taken
        raw = pod(f"r{i:03d}", node=f"n{i % 3}", phase="Running", gpus=1, created=created(i))
        store.apply_raw("Pod", event("ADDED", raw))
    for i in range(40):  # pending, mixed sizes: some fit, some wait (reasons, ETAs)
        store.apply_raw("Pod", pending_pod(i, gpus=1 + i % 4))
    live.refresh()
    try:
        yield live, clock
    finally:
        live.close()


def decisions(result: ScheduleResult) -> tuple[object, ...]:
    """Everything a result decides (its ``now`` and timing ``stats`` aside)."""
    return (
        dict(result.plans),
        result.pending_order,
        result.placements,
        result.queues,
        result.partitions,
        result.cluster,
    )


def full_run(live: LiveConsoleSession, now: float) -> ScheduleResult:
    return schedule(live.snapshot, live.policy, now, memo=Memo())


def test_event_driven_refreshes_equal_a_full_run_at_the_kept_now(
    session: tuple[LiveConsoleSession, Clock],
) -> None:
    live, clock = session
    rng = random.Random(16)
    first_now = live.core_now
    assert first_now == START
    next_pod = 100
    for step in range(30):
        clock.t += 0.5 + rng.random()  # under CLOCK_STEP in all: 30 steps of at most 1.5 s
        roll = rng.random()
        pending = [key for key, p in live.snapshot.pods.items() if p.node_name is None]
        if roll < 0.4:  # a job submitted
            live.store.apply_raw("Pod", pending_pod(next_pod, gpus=rng.choice((1, 2, 8))))
            next_pod += 1
        elif roll < 0.7 and pending:  # a pending job deleted
            _, name = rng.choice(pending)
            live.store.apply_raw("Pod", event("DELETED", pod(name, phase="Pending")))
        elif pending:  # a pending job changed (its size)
            _, name = rng.choice(pending)
            raw = pod(name, phase="Pending", gpus=rng.choice((1, 3, 16)), rv=str(step + 2))
            live.store.apply_raw("Pod", event("MODIFIED", raw))
        live.refresh()
        shown = live.result
        if clock.t - first_now < CLOCK_STEP:
            assert live.core_now == first_now  # the decision clock did not move
        assert shown.now == clock.t  # shown at the wall clock
        assert decisions(shown) == decisions(full_run(live, live.core_now))
    assert live.core_runs_at_kept_now > 0
    # past the step the clock moves, and the result is a full run's at the new now
    clock.t = first_now + CLOCK_STEP + 1.0
    live.store.apply_raw("Pod", pending_pod(next_pod))
    live.refresh()
    assert live.core_now == clock.t == live.result.now
    assert decisions(live.result) == decisions(full_run(live, clock.t))


def test_an_event_driven_refresh_replays_the_pass_instead_of_re_running_it(
    session: tuple[LiveConsoleSession, Clock],
) -> None:
    live, clock = session
    considered = live.result.stats["considered"]
    assert considered >= 30
    clock.t += 2.0
    # the newest submission has the least age: its turn is last, everything before it replays
    live.store.apply_raw("Pod", pending_pod(200))
    live.refresh()
    stats = live.result.stats
    assert stats["considered"] == considered + 1
    assert stats["pass_replayed"] >= considered - 1, stats
    assert stats["priorities_kept"] >= considered - 1, stats
    # the same refresh with the wall clock as the core's now replays nothing: the control
    clock.t += CLOCK_STEP
    live.store.apply_raw("Pod", pending_pod(201))
    live.refresh()
    assert live.core_now == clock.t
    assert live.result.stats["pass_replayed"] == 0
    assert live.result.stats["priorities_kept"] == 0
