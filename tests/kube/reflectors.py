"""Running one reflector in a test, and comparing what it stored with what the server holds.

Shared by the reflector, watch-contract, convergence, credentials and W15 tests (they had two
copies of the runner and of the comparisons).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from hpctop.model.store import Store
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.reflector import Reflector, ReflectorSettings, ReflectorStatus
from hpctop.sources.kube.resources import PODS as POD_SPEC
from hpctop.sources.kube.resources import ResourceSpec
from hpctop.sources.kube.transport import KubeClient
from tests.kube.fakeserver import PODS, FakeApiServer


@contextlib.asynccontextmanager
async def reflecting_on(
    client: KubeClient,
    store: Store,
    spec: ResourceSpec = POD_SPEC,
    log: list[tuple[float, ReflectorStatus]] | None = None,
    **settings: Any,
) -> AsyncIterator[Reflector]:
    """Run one reflector on ``client`` for the block, then cancel it; every status it publishes
    goes to ``log`` with loop time. ``settings`` are ReflectorSettings fields (a 3000 s watch
    timeout and 500-item pages unless given)."""
    defaults: dict[str, Any] = {"timeout_seconds": (3000, 3000), "page_size": 500}
    loop = asyncio.get_running_loop()

    def record(status: ReflectorStatus) -> None:
        if log is not None:
            log.append((loop.time(), status))

    reflector = Reflector(
        client, store, spec, settings=ReflectorSettings(**(defaults | settings)), on_status=record
    )
    task = asyncio.create_task(reflector.run())
    try:
        yield reflector
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@contextlib.asynccontextmanager
async def reflecting(
    connection: Connection,
    store: Store,
    spec: ResourceSpec = POD_SPEC,
    **settings: Any,
) -> AsyncIterator[Reflector]:
    """Run a reflector on a client of its own for the block (a 300 s watch timeout unless given);
    cancel it and close the client after."""
    async with (
        KubeClient(connection) as client,
        reflecting_on(client, store, spec, **({"timeout_seconds": (300, 300)} | settings)) as reflector,
    ):
        yield reflector


def pods_in(store: Store) -> dict[tuple[str, str], str]:
    return {key: p.resource_version for key, p in store.pods.items()}


def server_pods(fake: FakeApiServer) -> dict[tuple[str, str], str]:
    return {(ns or "", name): rv for (ns, name), rv in fake.versions(PODS).items()}
