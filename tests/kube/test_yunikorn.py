"""YuniKorn's queue tree from its REST API (SCHEDULERS.md §4.4) into ``snapshot.queues``.

Through the API server's service proxy (a kmock route on the FakeApiServer, reached with the
kubeconfig's token like any other request) and directly (``--yunikorn-url``: a tiny aiohttp
server on 127.0.0.1). A cluster without YuniKorn must see no proxy request at all, and a 403 must
be a note in the status bar while everything else stays live.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import orjson
import pytest
from aiohttp import web

from hpctop.model.objects import QueueInfo
from hpctop.model.resources import Resources
from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.transport import KubeClient
from hpctop.sources.kube.yunikorn import YuniKornPoller, YuniKornState
from tests.kube.conftest import FAST
from tests.kube.fakeserver import NODES, PODS, FakeApiServer, status
from tests.model_fixtures import node, pod
from tests.polling import until

TREE = (
    Path(__file__).resolve().parent.parent / "fixtures" / "backends" / "yunikorn_queues.json"
).read_bytes()
PROXY = "/api/v1/namespaces/yunikorn/services/yunikorn-service:9080/proxy"
QUEUES = "/ws/v1/partition/default/queues"
GPU = 1000  # milli-GPU per GPU


def proxied(fake: FakeApiServer) -> list[str]:
    return [r.url.path for _, r in fake.log if r.url.path.startswith(PROXY)]


def assert_tree(queues: Mapping[str, QueueInfo]) -> None:
    nlp = queues["root.research.nlp"]
    assert (nlp.backend, nlp.kind, nlp.parent) == ("yunikorn", "leaf", "root.research")
    assert nlp.guaranteed.gpu == 16 * GPU and nlp.max is not None and nlp.max.gpu == 32 * GPU
    research = queues["root.research"]
    assert research.guaranteed == Resources(gpu=16 * GPU) and research.max == Resources(gpu=48 * GPU)
    assert queues["root.old"].state == "Draining"


async def test_tree_through_the_service_proxy_once_yunikorn_pods_are_seen(
    fake: FakeApiServer, connection: Connection
) -> None:
    fake[PROXY + QUEUES] << TREE
    fake.upsert(NODES, node("n1"))
    session = LiveConsoleSession(connection, settings=FAST, yunikorn_interval=0.05)
    session.yunikorn_poller.detect_interval = 0.1
    session.start()
    try:
        await until(lambda: session.synced, what="sync")
        await asyncio.sleep(0.3)
        assert proxied(fake) == []  # not installed: nothing asked of a proxy that is not there
        assert session.yunikorn_poller.state is YuniKornState.ABSENT and session.connection == "synced"
        yk = pod("app-0", node="n1", phase="Running")
        yk["spec"]["schedulerName"] = "yunikorn"
        fake.upsert(PODS, yk)
        await until(lambda: "root.research.nlp" in session.snapshot.queues, what="the YuniKorn tree")
        assert_tree(session.snapshot.queues)
        assert session.connection == "synced"
    finally:
        assert await asyncio.to_thread(session.close)


async def test_forbidden_proxy_is_a_note_not_a_failure(fake: FakeApiServer, connection: Connection) -> None:
    fake["/api/v1/namespaces/yunikorn/services/yunikorn-service"] << orjson.dumps(
        {"kind": "Service", "apiVersion": "v1", "metadata": {"name": "yunikorn-service"}}
    )  # detected by its Service this time
    fake[PROXY + QUEUES] << 403 << orjson.dumps(status(403, "Forbidden", "services/proxy is forbidden"))
    fake.upsert(NODES, node("n1"))
    session = LiveConsoleSession(connection, settings=FAST, yunikorn_interval=0.05)
    session.start()
    try:
        await until(lambda: session.yunikorn_poller.state is YuniKornState.FORBIDDEN, what="the 403")
        await until(lambda: session.synced, what="sync")
        assert session.connection == "synced, YuniKorn: forbidden"
        assert "n1" in session.snapshot.nodes and not session.snapshot.queues
        assert session.error is None
    finally:
        assert await asyncio.to_thread(session.close)


async def test_not_found_and_garbage_degrade_with_a_state(
    fake: FakeApiServer, connection: Connection
) -> None:
    applied: list[bytes] = []
    async with KubeClient(connection) as client:

        def apply(raw: bytes) -> bool:
            applied.append(raw)
            return False

        poller = YuniKornPoller(apply, client=client)
        assert not await poller.detect()  # no Service, no yunikorn pods
        assert await poller.poll_once() is YuniKornState.NOT_FOUND and poller.note == "YuniKorn: not found"
        fake[PROXY + QUEUES] << b'{"children": 3}'
        assert await poller.poll_once() is YuniKornState.INVALID and applied == [b'{"children": 3}']


@pytest.fixture
async def yunikorn() -> AsyncIterator[tuple[str, list[str]]]:
    seen: list[str] = []

    async def queues(request: web.Request) -> web.Response:
        seen.append(request.path)
        return web.Response(body=TREE, content_type="application/json")

    app = web.Application()
    app.router.add_get(QUEUES, queues)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}/", seen
    await runner.cleanup()


async def test_direct_url_needs_no_detection_and_no_proxy(
    fake: FakeApiServer, connection: Connection, yunikorn: tuple[str, list[str]]
) -> None:
    url, seen = yunikorn
    session = LiveConsoleSession(connection, settings=FAST, yunikorn_url=url, yunikorn_interval=0.05)
    session.start()
    try:
        await until(lambda: "root.research.nlp" in session.snapshot.queues, what="the YuniKorn tree")
        assert_tree(session.snapshot.queues)
        assert seen and set(seen) == {QUEUES}
        assert proxied(fake) == []
    finally:
        assert await asyncio.to_thread(session.close)
