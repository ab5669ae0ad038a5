"""The one-shot list path (``hpctop jobs --kubeconfig ...``) keeps the reflector's rules, bounded.

Issue 12: a 429 with ``Retry-After: 2`` failed the command at once, a 410 on a ``continue`` page
failed it, and a list request that never got an answer held the table for 122 s. Here
:func:`list_once` runs over real HTTP against the fake API server, on loop time (looptime), so
the waits are exact and cost no wall time; assertions are on what the server saw.
"""

from __future__ import annotations

import asyncio
import itertools

import kmock
import orjson
import pytest

from hpctop.runtime.live import list_once
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.errors import Gone, ServerError, ServerUnreachable, TooManyRequests
from hpctop.sources.kube.reflector import ReflectorSettings
from hpctop.sources.kube.resources import PODS as POD_SPEC
from tests.kube.fakeserver import PODS, FakeApiServer, status
from tests.model_fixtures import pod

pytestmark = pytest.mark.looptime

LIST = kmock.action.LIST


def seed(fake: FakeApiServer, n: int) -> None:
    for i in range(n):
        fake.upsert(PODS, pod(f"p{i}"))


async def test_429_with_retry_after_waits_then_lists(fake: FakeApiServer, connection: Connection) -> None:
    seed(fake, 2)
    fake.fail(PODS, LIST, 429, retry_after="2")
    store = await list_once(None, None, None, resources=[POD_SPEC], connection=connection)
    assert len(store.pods) == 2
    times = [t for t, _ in fake.calls(PODS, LIST)]
    assert len(times) == 2
    assert times[1] - times[0] >= 2.0  # not before Retry-After
    assert times[1] - times[0] < 4.0  # and not much later either


async def test_429_asking_for_too_long_fails_at_once_saying_so(
    fake: FakeApiServer, connection: Connection
) -> None:
    fake.fail(PODS, LIST, 429, retry_after="600")
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(TooManyRequests, match="waits at most 10 s"):
        await list_once(None, None, None, resources=[POD_SPEC], connection=connection)
    assert loop.time() - started < 1.0  # no 600 s (nor 10 s) wait for nothing
    assert len(fake.calls(PODS, LIST)) == 1


async def test_410_on_a_continue_page_restarts_from_page_one(
    fake: FakeApiServer, connection: Connection
) -> None:
    seed(fake, 5)
    page_size = 2
    fake[LIST, PODS.kmock][1:2] << 410 << orjson.dumps(status(410, "Expired", "continue token too old"))
    store = await list_once(
        None,
        None,
        None,
        resources=[POD_SPEC],
        connection=connection,
        settings=ReflectorSettings(page_size=page_size),
    )
    lists = [p for _, p in fake.calls(PODS, LIST)]
    assert len(lists) == 5  # page 1, page 2 (410), then pages 1-3 again
    assert "continue" in lists[1]
    assert "continue" not in lists[2] and "resourceVersion" not in lists[2]  # consistent restart
    assert sorted(name for _, name in store.pods) == [f"p{i}" for i in range(5)]  # each pod once


async def test_410_every_time_gives_up_after_a_bounded_number_of_restarts(
    fake: FakeApiServer, connection: Connection
) -> None:
    seed(fake, 4)
    for second_page in (1, 3, 5, 7):
        (
            fake[LIST, PODS.kmock][second_page : second_page + 1]
            << 410
            << orjson.dumps(status(410, "Expired", "x"))
        )
    with pytest.raises(Gone, match="restarted 3 times"):
        await list_once(
            None,
            None,
            None,
            resources=[POD_SPEC],
            connection=connection,
            settings=ReflectorSettings(page_size=2),
        )
    assert len(fake.calls(PODS, LIST)) == 8


async def test_5xx_is_retried_with_backoff_a_bounded_number_of_times(
    fake: FakeApiServer, connection: Connection
) -> None:
    seed(fake, 1)
    fake.fail(PODS, LIST, 503, times=2)
    store = await list_once(None, None, None, resources=[POD_SPEC], connection=connection)
    assert len(store.pods) == 1
    times = [t for t, _ in fake.calls(PODS, LIST)]
    assert len(times) == 3 and all(b - a >= 0.8 for a, b in itertools.pairwise(times))

    fake.fail(PODS, LIST, 500, times=20)
    with pytest.raises(ServerError, match=r"tried 4 times|waits at most 10 s"):
        await list_once(None, None, None, resources=[POD_SPEC], connection=connection)
    # Bounded twice: at most three retries, and at most 10 s of waiting in all. The backoff is
    # jittered (up to twice the step) and still warm from the first read, so which bound ends it
    # is chance: the first try and two or three retries, never more.
    assert 3 + 3 <= len(fake.calls(PODS, LIST)) <= 3 + 4


async def test_a_list_that_never_gets_an_answer_fails_within_the_request_timeout(
    fake: FakeApiServer, connection: Connection
) -> None:
    seed(fake, 1)
    fake.list_stalls[PODS] = 1
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(ServerUnreachable, match="no answer from the API server within 20 s"):
        await asyncio.wait_for(list_once(None, None, None, resources=[POD_SPEC], connection=connection), 60)
    assert 19.0 <= loop.time() - started <= 25.0  # the default, not 122 s
    assert fake.stalled_lists == 1

    fake.list_stalls[PODS] = 1
    started = loop.time()
    with pytest.raises(ServerUnreachable, match=r"within 0\.5 s"):
        await list_once(None, None, None, resources=[POD_SPEC], connection=connection, request_timeout=0.5)
    assert loop.time() - started < 2.0  # configurable
