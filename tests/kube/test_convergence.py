"""H1: whatever the server does and however the connection fails, the store ends equal to the server.

Hypothesis draws a sequence of server-side changes (create, modify, delete), faults (dropped
and stalled streams, cuts of the open stream, compaction so the resume point is gone, 429, 500 on
list or watch, garbage lines) and pauses of loop time. The reflector runs against the fake API
server through it all; after the faults are used up and the loop has moved on past any backoff
and watchdog, the store's pods, with their resourceVersions, must equal the server's, and the
reflector must say synced, having stayed within a request budget (no hot loop).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import kmock
import looptime
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpctop.model.store import Store
from hpctop.sources.kube.connection import load_connection
from hpctop.sources.kube.reflector import ReflectorState
from tests.kube.conftest import write_kubeconfig
from tests.kube.fakeserver import PODS, FakeApiServer, WatchFault
from tests.kube.reflectors import pods_in, reflecting, server_pods
from tests.model_fixtures import pod

NAMES = [f"p{i}" for i in range(6)]

Op = tuple[Any, ...]

operations: st.SearchStrategy[Op] = st.one_of(
    st.tuples(st.just("upsert"), st.sampled_from(NAMES), st.sampled_from(["Pending", "Running"])),
    st.tuples(st.just("delete"), st.sampled_from(NAMES)),
    st.tuples(st.just("drop"), st.integers(0, 3)),
    st.tuples(st.just("stall")),
    st.tuples(st.just("disconnect")),
    st.tuples(st.just("outage"), st.sampled_from(NAMES)),  # cut, delete while away, compact
    st.tuples(st.just("compact")),
    st.tuples(st.just("watch429")),
    st.tuples(st.just("watch500")),
    st.tuples(st.just("list500")),
    st.tuples(st.just("garbage")),
    st.tuples(st.just("sleep"), st.floats(0, 90)),
)


def apply(fake: FakeApiServer, op: Op) -> None:
    match op:
        case ("upsert", name, phase):
            fake.upsert(PODS, pod(name, phase=phase, node="n1" if phase == "Running" else None))
        case ("delete", name):
            fake.remove(PODS, name, "team-a")
        case ("drop", after):
            fake.script_watch(PODS, WatchFault("drop", after=after))
        case ("stall",):
            fake.script_watch(PODS, WatchFault("stall"))
        case ("disconnect",):
            fake.disconnect()
        case ("outage", name):
            fake.disconnect()
            fake.remove(PODS, name, "team-a")
            fake.upsert(PODS, pod(f"{name}-new"))
            fake.compact()
        case ("compact",):
            fake.compact()
        case ("watch429",):
            fake.fail(PODS, kmock.action.WATCH, 429, retry_after="5")
        case ("watch500",):
            fake.fail(PODS, kmock.action.WATCH, 500)
        case ("list500",):
            fake.fail(PODS, kmock.action.LIST, 500)
        case ("garbage",):
            fake.script_watch(PODS, WatchFault("garbage", lines=(b"{not json\n",)))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(initial=st.sets(st.sampled_from(NAMES)), ops=st.lists(operations, max_size=20))
def test_h1_store_converges_to_the_server(initial: set[str], ops: list[Op]) -> None:
    # Each example gets its own fast-forwarded loop: pytest-asyncio runs hypothesis examples in
    # loops that the looptime marker does not reach, where the sleeps below would be real.
    loop = looptime.new_event_loop(start=0)

    try:
        loop.run_until_complete(scenario(initial, ops))
    finally:
        loop.close()


async def scenario(initial: set[str], ops: list[Op]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        budget = 20 + 10 * len(ops)  # requests; beyond it the fake answers 500 (a hot-loop tripwire)
        async with FakeApiServer(limit=budget) as fake, kmock.Server(fake):
            for name in sorted(initial):
                fake.upsert(PODS, pod(name))
            config = write_kubeconfig(Path(tmp) / "config", str(fake.url).rstrip("/"))
            connection = await load_connection(str(config))
            store = Store(clock=lambda: 0.0)
            async with reflecting(connection, store, timeout_seconds=(300, 600)) as reflector:
                await asyncio.wait_for(reflector.wait_synced(), 100)
                for op in ops:
                    if op[0] == "sleep":
                        await asyncio.sleep(op[1])
                    else:
                        apply(fake, op)
                        await asyncio.sleep(0.01)
                # Let every scripted fault be used, then outlast any backoff and the watchdog.
                for _ in range(100):
                    if not fake.watch_faults.get(PODS):
                        break
                    await asyncio.sleep(30)
                await asyncio.sleep(120)
                assert len(fake.log) < budget, "too many requests: the reflector hammered the server"
                assert reflector.status.state is ReflectorState.SYNCED, reflector.status
                assert pods_in(store) == server_pods(fake)
