"""The reflector against the fake API server: RELIABILITY.md §6 W-cases, over real HTTP, on loop time.

Each test runs one reflector (the real client, the real kubeconfig loader) against
:class:`FakeApiServer` on 127.0.0.1, with looptime fast-forwarding backoffs, watch timeouts and
the inactivity watchdog, so "70 seconds of silence" takes no wall time and the timestamps the
fake records are exact. Assertions are on what the server saw (request parameters and times) and
on what the store holds, never on the reflector's internals alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from typing import Any

import kmock
import orjson
import pytest

from hpctop.model.store import Store
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.reflector import Reflector, ReflectorState
from hpctop.sources.kube.resources import PODS as POD_SPEC
from hpctop.sources.kube.transport import KubeClient
from tests.kube.fakeserver import NODES, PODS, FakeApiServer, WatchFault, status
from tests.kube.reflectors import pods_in, reflecting, server_pods
from tests.model_fixtures import pod

pytestmark = pytest.mark.looptime

LIST = kmock.action.LIST
WATCH = kmock.action.WATCH


async def synced(reflector: Reflector) -> None:
    await asyncio.wait_for(reflector.wait_synced(), 120)


def seed(fake: FakeApiServer, n: int) -> None:
    for i in range(n):
        fake.upsert(PODS, pod(f"p{i}"))


async def test_initial_list_and_watch_converge(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    seed(fake, 3)
    async with reflecting(connection, store) as reflector:
        await synced(reflector)
        assert pods_in(store) == server_pods(fake)
        fake.upsert(PODS, pod("p3", phase="Running", node="n1"))
        fake.upsert(PODS, pod("p0", phase="Running", node="n1"))
        fake.remove(PODS, "p1", "team-a")
        await asyncio.sleep(1)
        assert pods_in(store) == server_pods(fake)
        assert store.pods[("team-a", "p0")].node_name == "n1"
        assert reflector.status.state is ReflectorState.SYNCED
        assert reflector.status.events == 3
    [(_, watch)] = fake.calls(PODS, WATCH)
    [(_, listing)] = fake.calls(PODS, LIST)
    assert watch["resourceVersion"] == "4"  # the list's RV: three creates after RV 1
    assert watch["allowWatchBookmarks"] == "true"
    assert "resourceVersion" not in listing  # a consistent read


async def test_pagination_reads_every_page_into_one_swap(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    seed(fake, 7)
    async with reflecting(connection, store, page_size=3) as reflector:
        await synced(reflector)
        assert len(store.pods) == 7
    lists = fake.calls(PODS, LIST)
    assert [p.get("continue") is not None for _, p in lists] == [False, True, True]
    assert all(p["limit"] == "3" for _, p in lists)


async def test_w1_clean_end_rewatches_from_last_rv_without_relist(
    fake: FakeApiServer, connection: Connection, store: Store, looptime: float
) -> None:
    seed(fake, 2)
    async with reflecting(connection, store, timeout_seconds=(5, 5)) as reflector:
        await synced(reflector)
        fake.upsert(PODS, pod("a"))
        fake.upsert(PODS, pod("b"))
        last_rv = fake.versions(PODS)[("team-a", "b")]
        await asyncio.sleep(7)  # the server ends the watch at 5 s
        assert len(store.pods) == 4
    watches = fake.calls(PODS, WATCH)
    assert len(watches) == 2
    assert watches[1][1]["resourceVersion"] == last_rv
    assert watches[1][0] == pytest.approx(watches[0][0] + 5, abs=0.01)  # no backoff after a clean end
    assert len(fake.calls(PODS, LIST)) == 1


@pytest.mark.parametrize("in_stream", [True, False], ids=["w2-in-stream-410", "w3-http-410"])
async def test_w2_w3_gone_relists_and_drops_what_vanished(
    fake: FakeApiServer, connection: Connection, store: Store, in_stream: bool
) -> None:
    fake.gone_in_stream = in_stream
    seed(fake, 4)
    fake.script_watch(PODS, WatchFault("drop"))  # disconnected at once ...
    async with reflecting(connection, store) as reflector:
        await synced(reflector)
        fake.remove(PODS, "p1", "team-a")  # ... and while away, a delete and a compaction
        fake.upsert(PODS, pod("new"))
        fake.compact()
        await asyncio.sleep(5)
        await synced(reflector)
        assert pods_in(store) == server_pods(fake)
        assert ("team-a", "p1") not in store.pods
    lists = fake.calls(PODS, LIST)
    assert len(lists) == 2
    assert "resourceVersion" not in lists[1][1]  # the relist is consistent
    assert fake.calls(PODS, WATCH)[-1][1]["resourceVersion"] == str(fake.rv)


async def test_w4_gone_on_a_continue_page_restarts_from_the_first_page(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    seed(fake, 5)
    fake[LIST, PODS.kmock][1:2] << 410 << orjson.dumps(status(410, "Expired", "continue token too old"))
    async with reflecting(connection, store, page_size=2) as reflector:
        await synced(reflector)
        assert len(store.pods) == 5
    lists = [p for _, p in fake.calls(PODS, LIST)]
    assert "continue" in lists[1]
    assert "continue" not in lists[2] and "resourceVersion" not in lists[2]
    assert len(lists) == 5  # page 1, page 2 (410), then pages 1-3 again


async def test_w5_watches_that_close_at_once_back_off_then_relist(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    seed(fake, 1)
    fake.script_watch(PODS, *[WatchFault("close") for _ in range(7)])
    async with reflecting(connection, store, max_failures=5) as reflector:
        await synced(reflector)
        await asyncio.sleep(200)
    times = [t for t, _ in fake.calls(PODS, WATCH)]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert all(gap >= 0.8 for gap in gaps[:4])  # never a hot loop
    assert gaps[3] > gaps[0]  # growing
    assert len(fake.calls(PODS, LIST)) == 2  # relisted after 5 failures in a row


@pytest.mark.parametrize(
    ("headers", "details"),
    [({"Retry-After": "7"}, None), ({}, {"retryAfterSeconds": 7})],
    ids=["header", "status-details"],
)
async def test_w7_retry_after_is_honoured(
    fake: FakeApiServer,
    connection: Connection,
    store: Store,
    headers: dict[str, str],
    details: dict[str, Any] | None,
) -> None:
    seed(fake, 1)
    fake.fail(PODS, WATCH, 429, retry_after=headers.get("Retry-After"), details=details)
    async with reflecting(connection, store) as reflector:
        await synced(reflector)
        await asyncio.sleep(20)
        assert "429" in reflector.status.last_error
    watches = fake.calls(PODS, WATCH)
    assert len(watches) == 2
    assert watches[1][0] - watches[0][0] >= 7
    assert watches[1][1]["resourceVersion"] == watches[0][1]["resourceVersion"]  # same RV, no relist
    assert len(fake.calls(PODS, LIST)) == 1


async def test_w8_list_500_backs_off_then_syncs(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    seed(fake, 2)
    fake.fail(PODS, LIST, 500, times=3)
    async with reflecting(connection, store) as reflector:
        await synced(reflector)
        assert len(store.pods) == 2
        assert reflector.status.failures == 3
    times = [t for t, _ in fake.calls(PODS, LIST)]
    assert len(times) == 4
    assert all(b - a >= 0.8 for a, b in itertools.pairwise(times))


async def test_w8_in_stream_internal_errors_relist_after_k(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    seed(fake, 1)
    internal = status(500, "InternalError", "etcd hiccup")
    fake.script_watch(PODS, *[WatchFault("error", status=internal) for _ in range(3)])
    async with reflecting(connection, store, max_failures=3) as reflector:
        await synced(reflector)
        await asyncio.sleep(60)
        assert reflector.status.state is ReflectorState.SYNCED
    assert len(fake.calls(PODS, WATCH)) == 4
    assert len(fake.calls(PODS, LIST)) == 2


async def test_w9_a_failing_watch_is_not_hammered(
    fake: FakeApiServer, connection: Connection, store: Store, looptime: float
) -> None:
    seed(fake, 1)
    fake.fail(PODS, WATCH, 500, times=1000)
    async with reflecting(connection, store, max_failures=1000) as reflector:
        await synced(reflector)
        start = float(looptime)
        await asyncio.sleep(60)
        watches = [t for t, _ in fake.calls(PODS, WATCH) if t <= start + 60]
        assert reflector.status.state is ReflectorState.RETRYING
    assert 3 <= len(watches) <= 10


async def test_w10_stalled_stream_reconnects_after_the_inactivity_deadline(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    seed(fake, 1)
    fake.script_watch(PODS, WatchFault("stall"))
    async with reflecting(connection, store, inactivity=70) as reflector:
        await synced(reflector)
        await asyncio.sleep(80)
        fake.upsert(PODS, pod("after-stall"))
        await asyncio.sleep(1)
        assert ("team-a", "after-stall") in store.pods
    watches = fake.calls(PODS, WATCH)
    assert len(watches) == 2
    gap = watches[1][0] - watches[0][0]
    assert 70.8 <= gap <= 71.6 + 0.01  # the deadline, then one first backoff step (0.8-1.6 s)
    assert watches[1][1]["resourceVersion"] == watches[0][1]["resourceVersion"]


async def test_w11_reset_mid_stream_resumes_from_the_last_event(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    seed(fake, 1)
    fake.script_watch(PODS, WatchFault("drop", after=2))
    async with reflecting(connection, store) as reflector:
        await synced(reflector)
        fake.upsert(PODS, pod("a"))
        fake.upsert(PODS, pod("b"))  # the stream breaks after this one
        rv_b = fake.versions(PODS)[("team-a", "b")]
        fake.upsert(PODS, pod("c"))  # missed by the first stream, delivered by the second
        await asyncio.sleep(5)
        assert pods_in(store) == server_pods(fake)
    watches = fake.calls(PODS, WATCH)
    assert len(watches) == 2
    assert watches[1][1]["resourceVersion"] == rv_b
    assert len(fake.calls(PODS, LIST)) == 1


async def test_w12_garbage_lines_are_skipped_and_counted(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    seed(fake, 1)
    garbage = (
        b'{"type": "ADDED", "object": {\n',  # partial line
        b"\x00\xff not json\n",  # invalid UTF-8
        b'{"type":"WHATEVER","object":{"metadata":{"name":"x","namespace":"team-a"}}}\n',  # unknown type
        b'{"type":"ADDED"}\n',  # missing object
    )
    fake.script_watch(PODS, WatchFault("garbage", after=1, lines=garbage))
    async with reflecting(connection, store) as reflector:
        await synced(reflector)
        fake.upsert(PODS, pod("good-1"))
        fake.upsert(PODS, pod("good-2"))
        await asyncio.sleep(1)
        assert pods_in(store) == server_pods(fake)
        assert reflector.status.bad_lines == 4
    assert sum(store.skipped.values()) == 4
    assert len(fake.calls(PODS, WATCH)) == 1  # a few bad lines do not reopen the stream


async def test_w13_bookmarks_advance_the_resume_point(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    fake.bookmark_interval = 10
    seed(fake, 1)
    async with reflecting(connection, store, timeout_seconds=(15, 15)) as reflector:
        await synced(reflector)
        fake.upsert(NODES, {"metadata": {"name": "n1"}})  # other resources move the global RV
        fake.upsert(NODES, {"metadata": {"name": "n2"}})
        await asyncio.sleep(16)
        assert reflector.status.resource_version == "4"
    watches = fake.calls(PODS, WATCH)
    assert watches[0][1]["resourceVersion"] == "2"
    assert watches[1][1]["resourceVersion"] == "4"  # from the bookmark, not from a pod event
    assert not store.skipped


async def test_w14_a_one_mebibyte_line_is_applied(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    seed(fake, 1)
    async with reflecting(connection, store) as reflector:
        await synced(reflector)
        fake.upsert(PODS, pod("big", annotations={"hpctop.io/blob": "x" * (1 << 20)}))
        await asyncio.sleep(1)
        assert store.pods[("team-a", "big")].annotations["hpctop.io/blob"] == "x" * (1 << 20)


async def test_w16_duplicates_and_unknown_deletes_are_idempotent(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    seed(fake, 1)
    p0 = fake.items_of(PODS)[("team-a", "p0")]
    dup = orjson.dumps({"type": "ADDED", "object": p0}) + b"\n"
    ghost = orjson.dumps({"type": "DELETED", "object": pod("ghost", rv="1")}) + b"\n"
    fake.script_watch(PODS, WatchFault("garbage", lines=(dup, dup, ghost)))
    async with reflecting(connection, store) as reflector:
        await synced(reflector)
        await asyncio.sleep(1)
        assert pods_in(store) == server_pods(fake)
        assert reflector.status.bad_lines == 0


async def test_forbidden_resource_is_reported_and_retried_rarely(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    fake.fail(PODS, LIST, 403, times=100)
    async with reflecting(connection, store, forbidden_retry=300) as reflector:
        await asyncio.wait_for(reflector.settled.wait(), 10)
        assert reflector.status.state is ReflectorState.FORBIDDEN
        assert "403" in reflector.status.note
        await asyncio.sleep(1000)
    assert len(fake.calls(PODS, LIST)) == 4  # at 0, 300, 600, 900


async def test_401_reauthenticates_then_resumes(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    seed(fake, 1)
    fake.fail(PODS, LIST, 401, times=2)
    async with reflecting(connection, store) as reflector:
        await synced(reflector)
    assert len(fake.calls(PODS, LIST)) == 3


async def test_401_forever_stops_with_reauthentication_required(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    fake.fail(PODS, LIST, 401, times=100)
    async with reflecting(connection, store) as reflector:
        await asyncio.wait_for(reflector.settled.wait(), 100)
        assert reflector.status.state is ReflectorState.UNAUTHORIZED
    assert len(fake.calls(PODS, LIST)) == 4  # the first try and three re-authentications


@pytest.mark.serial  # wall time: the stream closes within 1 s
async def test_w18_cancel_closes_the_stream_within_a_second(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    seed(fake, 1)
    async with KubeClient(connection) as client:
        reflector = Reflector(client, store, POD_SPEC)
        task = asyncio.create_task(reflector.run())
        await synced(reflector)
        await asyncio.sleep(0.1)
        assert fake.open_watches == 1
        started = time.perf_counter()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await client.close()
        assert time.perf_counter() - started < 1.0
    assert reflector.status.state is ReflectorState.STOPPED
    for _ in range(50):
        if fake.open_watches == 0:
            break
        await asyncio.sleep(0.01)
    assert fake.open_watches == 0
