"""Self-tests of the fake API server: it is a tested component, not an assumption (RELIABILITY.md §5.2)."""

from __future__ import annotations

import aiohttp
import orjson
import pytest

from tests.kube.fakeserver import PODS, FakeApiServer, matches, parse_selector
from tests.model_fixtures import pod

pytestmark = pytest.mark.looptime


async def get(url: str, **params: str) -> tuple[int, list[bytes]]:
    async with aiohttp.ClientSession() as session, session.get(url, params=params) as response:
        return response.status, [line async for line in response.content]


async def test_rv_stamped_and_list_rv_is_the_current_one(fake: FakeApiServer, server_url: str) -> None:
    a = fake.upsert(PODS, pod("a"))
    b = fake.upsert(PODS, pod("a", phase="Running"))
    assert int(b["metadata"]["resourceVersion"]) == int(a["metadata"]["resourceVersion"]) + 1
    status, [body] = await get(server_url + "/api/v1/pods")
    page = orjson.loads(body)
    assert status == 200 and page["metadata"]["resourceVersion"] == b["metadata"]["resourceVersion"]
    assert "kind" not in page["items"][0]


async def test_continue_pages_are_a_snapshot_and_expire_on_compaction(
    fake: FakeApiServer, server_url: str
) -> None:
    for name in "abc":
        fake.upsert(PODS, pod(name))
    _, [first] = await get(server_url + "/api/v1/pods", limit="2")
    token = orjson.loads(first)["metadata"]["continue"]
    fake.upsert(PODS, pod("d"))  # not in the snapshot
    _, [second] = await get(server_url + "/api/v1/pods", limit="2", **{"continue": token})
    assert [i["metadata"]["name"] for i in orjson.loads(second)["items"]] == ["c"]
    fake.compact()
    status, _ = await get(server_url + "/api/v1/pods", limit="2", **{"continue": token})
    assert status == 410


async def test_watch_from_rv_replays_after_it_and_old_rv_gets_410(
    fake: FakeApiServer, server_url: str
) -> None:
    fake.upsert(PODS, pod("a"))
    rv = fake.upsert(PODS, pod("b"))["metadata"]["resourceVersion"]
    fake.upsert(PODS, pod("c"))
    _, lines = await get(server_url + "/api/v1/pods", watch="true", resourceVersion=rv, timeoutSeconds="1")
    assert [orjson.loads(x)["object"]["metadata"]["name"] for x in lines] == ["c"]
    fake.compact()
    _, lines = await get(server_url + "/api/v1/pods", watch="true", resourceVersion=rv, timeoutSeconds="1")
    [error] = [orjson.loads(x) for x in lines]
    assert error["type"] == "ERROR" and error["object"]["code"] == 410


def test_label_selectors() -> None:
    obj = {"metadata": {"labels": {"app": "x", "tier": "gpu"}}}
    assert matches(obj, parse_selector("app=x,tier!=cpu,tier"))
    assert not matches(obj, parse_selector("app=y"))
    assert not matches(obj, parse_selector("!tier"))
