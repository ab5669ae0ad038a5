"""A first list goes into the store page by page (issue 16: rows while a big list streams), and
still ends exactly as a swapped list would, a 410 restart included.

Real HTTP against :class:`FakeApiServer`; the fake holds every ``continue`` page of the pods until
the test releases it (``continue_gates``), so what the store holds between two pages is seen.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import kmock
import pytest

from hpctop.model.store import Store
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.reflector import Reflector, ReflectorState
from tests.kube.fakeserver import PODS, FakeApiServer
from tests.kube.reflectors import pods_in, reflecting, server_pods
from tests.model_fixtures import pod
from tests.polling import until

pytestmark = pytest.mark.looptime
LIST = kmock.action.LIST


@contextlib.asynccontextmanager
async def first_page_held(
    fake: FakeApiServer, connection: Connection, store: Store
) -> AsyncIterator[tuple[Reflector, asyncio.Event]]:
    """A reflector whose first list of 25 pods (pages of 10) has its first page in, the rest held
    until the gate is set."""
    for i in range(25):
        fake.upsert(PODS, pod(f"p{i:02d}"))
    gate = fake.continue_gates[PODS] = asyncio.Event()
    async with reflecting(connection, store, page_size=10) as reflector:
        await until(lambda: reflector.status.listed == 10, what="the first page")
        yield reflector, gate


async def test_a_first_list_shows_its_pages_as_they_come_and_counts_them(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    async with first_page_held(fake, connection, store) as (reflector, gate):
        assert len(store.pods) == 10  # the first page is in the store before the list ends
        assert reflector.status.state is ReflectorState.SYNCING and not reflector.status.synced_once
        assert len(store.snapshot().jobs) == 10  # and derives rows
        gate.set()
        await until(lambda: reflector.status.state is ReflectorState.SYNCED, what="the whole list")
        assert pods_in(store) == server_pods(fake)
        assert reflector.status.listed == 25


async def test_a_first_list_restarted_by_410_ends_without_what_the_server_deleted(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    async with first_page_held(fake, connection, store) as (reflector, gate):
        assert ("team-a", "p00") in store.pods
        fake.remove(PODS, "p00", "team-a")  # deleted between two pages of the first list...
        fake.compact()  # ... and the continue token too old now: 410, the list starts over
        gate.set()
        await until(lambda: reflector.status.state is ReflectorState.SYNCED, what="the restarted list")
        assert reflector.status.lists >= 2
        assert ("team-a", "p00") not in store.pods  # a page of the abandoned list left nothing behind
        assert pods_in(store) == server_pods(fake)
        assert len(store.pods) == 24


async def test_a_relist_after_sync_still_swaps_in_one_step(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    for i in range(25):
        fake.upsert(PODS, pod(f"p{i:02d}"))
    async with reflecting(connection, store, page_size=10) as reflector:
        await until(lambda: reflector.status.state is ReflectorState.SYNCED, what="the first list")
        gate = fake.continue_gates[PODS] = asyncio.Event()
        version = store.version  # the server changes nothing now: the watch applies nothing
        lists = len(fake.calls(PODS, LIST))
        task = asyncio.create_task(reflector.relist())
        await until(lambda: len(fake.calls(PODS, LIST)) == lists + 2, what="the relist's page 2 asked")
        await asyncio.sleep(0.5)  # page 1 decoded and handled
        assert store.version == version  # nothing of a relist reaches the store before its end (W2)
        assert reflector.status.listed == 0
        gate.set()
        await task
        assert store.version > version and pods_in(store) == server_pods(fake)
