"""Gang binding through the Binding subresource: all-or-none as far as the API allows (M7).

A gang of 8 pods is bound with :func:`bind_gang` over real HTTP against the fake API server, which
checks each Binding's uid/RV preconditions and refuses a second bind (409). Cases: all bound; a
member recreated under the same name (new uid) midway, so the members bound before it are deleted
for their controller to recreate unbound and the rest are not tried; a transient 5xx (retried only
after re-reading the pod); a lost answer after the bind happened (confirmed, not re-sent); and two
binders racing for one pod, where exactly one wins.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import orjson
import pytest

from hpctop.actions.kube import Assignment, bind_gang
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.transport import KubeClient
from tests.kube.fakeserver import PODS, FakeApiServer
from tests.model_fixtures import pod

pytestmark = pytest.mark.looptime

NAMES = [f"g-{i}" for i in range(8)]


@pytest.fixture
async def client(connection: Connection) -> AsyncIterator[KubeClient]:
    async with KubeClient(connection, read_only=False) as c:
        yield c


def gang(fake: FakeApiServer) -> list[Assignment]:
    out = []
    for i, name in enumerate(NAMES):
        stored = fake.upsert(PODS, pod(name, owner=("Job", "g"), gpus=8))
        out.append(
            Assignment(
                "team-a", name, stored["metadata"]["uid"], f"n{i}", stored["metadata"]["resourceVersion"]
            )
        )
    return out


def nodes(fake: FakeApiServer) -> dict[str, str | None]:
    return {key[1]: obj["spec"].get("nodeName") for key, obj in fake.items_of(PODS).items()}


def binds(fake: FakeApiServer) -> list[str]:
    return [r.url.path.split("/")[-2] for r in fake.writes() if r.url.path.endswith("/binding")]


async def test_gang_of_8_all_bound_with_uid_preconditions(fake: FakeApiServer, client: KubeClient) -> None:
    assignments = gang(fake)
    result = await bind_gang(client, assignments)
    assert result.ok and result.summary() == "8 bound"
    assert nodes(fake) == {name: f"n{i}" for i, name in enumerate(NAMES)}
    first = orjson.loads(fake.writes()[0].body)
    assert first["metadata"]["uid"] == assignments[0].uid and first["target"] == {
        "apiVersion": "v1", "kind": "Node", "name": "n0"}  # fmt: skip
    assert all(o.audit_id for o in result.outcomes)


async def test_member_recreated_midway_rolls_the_gang_back(fake: FakeApiServer, client: KubeClient) -> None:
    assignments = gang(fake)
    fake.remove(PODS, "g-5", "team-a")
    fake.upsert(PODS, pod("g-5", owner=("Job", "g"), uid="uid-new"))  # same name, new object
    result = await bind_gang(client, assignments)
    assert not result.ok
    states = [o.state for o in result.outcomes]
    assert states == ["rolled-back"] * 5 + ["failed", "not-tried", "not-tried"]
    assert result.outcomes[5].status == 409 and "UID" in result.outcomes[5].message
    assert binds(fake) == NAMES[:6]  # the rest were never sent
    deletes = [r for r in fake.writes() if r.method == "DELETE"]
    assert [orjson.loads(r.body)["preconditions"]["uid"] for r in deletes] == [a.uid for a in assignments[:5]]
    # no member stays bound: the deleted ones come back unbound from their controller
    assert nodes(fake) == {"g-5": None, "g-6": None, "g-7": None}


async def test_persistent_5xx_midway_rolls_back(fake: FakeApiServer, client: KubeClient) -> None:
    assignments = gang(fake)
    fake.fail_write(PODS, "create", 503, name="g-3", subresource="binding", times=10)
    result = await bind_gang(client, assignments, max_retries=2)
    assert [o.state for o in result.outcomes][:4] == ["rolled-back"] * 3 + ["failed"]
    assert binds(fake).count("g-3") == 3  # the first try and two retries, each after a re-read
    assert all(node is None for node in nodes(fake).values())


async def test_transient_5xx_is_retried_and_a_lost_answer_is_not_resent(
    fake: FakeApiServer, client: KubeClient
) -> None:
    assignments = gang(fake)
    fake.fail_write(PODS, "create", 500, name="g-2", subresource="binding")  # before the change
    fake.fail_write(PODS, "create", 500, name="g-4", subresource="binding", applied=True)  # after it
    result = await bind_gang(client, assignments)
    assert result.ok
    assert binds(fake).count("g-2") == 2 and binds(fake).count("g-4") == 1
    assert "confirmed" in result.outcomes[4].message


async def test_two_binders_racing_for_one_pod(fake: FakeApiServer, connection: Connection) -> None:
    stored = fake.upsert(PODS, pod("contested"))
    uid = stored["metadata"]["uid"]
    async with KubeClient(connection, read_only=False) as a, KubeClient(connection, read_only=False) as b:
        first, second = await asyncio.gather(
            bind_gang(a, [Assignment("team-a", "contested", uid, "n1")]),
            bind_gang(b, [Assignment("team-a", "contested", uid, "n2")]),
        )
    winners = [r for r in (first, second) if r.ok]
    [loser] = [r for r in (first, second) if not r.ok]
    assert len(winners) == 1
    assert loser.outcomes[0].status == 409 and "already bound" in loser.outcomes[0].message
    won_node = winners[0].outcomes[0].assignment.node
    assert nodes(fake) == {"contested": won_node}
    assert binds(fake) == ["contested", "contested"]  # one each, no retry
