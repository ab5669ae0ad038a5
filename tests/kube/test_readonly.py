"""Read-only mode is enforced in the transport (RELIABILITY.md §2.4; R1, R2).

R2 proves the guard acts before any I/O: the client points at a TCP listener that counts every
connection, and a refused request must leave it at zero (and the client must not even have made
its HTTP session). R1, at the level this module owns: every action of the live actuator, previewed
and executed through a read-only client against the fake API server, and the server's request log
holds no POST/PUT/PATCH/DELETE except the self-subject reviews.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hpctop.actions.audit import AuditLog
from hpctop.actions.kube import KubeActions
from hpctop.actions.requests import ActionKind, ActionRequest
from hpctop.errors import ActionRefused, HpctopError
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.transport import REVIEW_PATHS, KubeClient, ReadOnlyViolation, check_read_only
from tests.kube.fakeserver import DEPLOYMENTS, JOBS, PODS, WORKLOADS, FakeApiServer
from tests.model_fixtures import batch_job, pod

pytestmark = pytest.mark.looptime

MUTATING = ("POST", "PUT", "PATCH", "DELETE", "post", "Delete", "CONNECT", "OPTIONS")
PATHS = (
    "/apis/batch/v1/namespaces/team-a/jobs/train",
    "/api/v1/namespaces/team-a/pods/p0/binding",
    "/api/v1/namespaces/team-a/pods/p0/eviction",
    "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews/../../../../api/v1/namespaces/x/pods",
    "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews?x=1",
    "/apis/authorization.k8s.io/v1/namespaces/team-a/localsubjectaccessreviews",
)


@pytest.fixture
async def listener() -> AsyncIterator[tuple[str, list[int]]]:
    """A TCP server that only counts connections: any socket I/O by the client shows up here."""
    accepted: list[int] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"http://127.0.0.1:{port}", accepted


@pytest.mark.parametrize("method", MUTATING)
@pytest.mark.parametrize("dry_run", [False, True])
async def test_r2_mutating_verbs_refused_before_any_io(
    listener: tuple[str, list[int]], method: str, dry_run: bool
) -> None:
    url, accepted = listener
    client = KubeClient(Connection(server=url, context="c", namespace=None, ssl=None))
    assert client.read_only  # the default: writing must be asked for
    params = {"dryRun": "All"} if dry_run else {}
    for path in PATHS:
        with pytest.raises(ReadOnlyViolation) as info:
            await client.request(method, path, params=params, body={"spec": {}})
        assert isinstance(info.value, ActionRefused) and "read-only" in str(info.value)
    await asyncio.sleep(0.1)
    assert accepted == [] and client.requests == 0
    assert client._session is None and client._write_session is None
    await client.close()


def test_r2_the_exempt_requests_are_exactly_the_reviews_and_reads() -> None:
    for path in REVIEW_PATHS:
        check_read_only("POST", path)
        with pytest.raises(ReadOnlyViolation):
            check_read_only("DELETE", path)
    check_read_only("GET", PATHS[0])
    check_read_only("head", PATHS[0])
    with pytest.raises(ReadOnlyViolation):
        check_read_only("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews/")


def test_r3_read_only_cannot_be_switched_off(connection: Connection) -> None:
    client = KubeClient(connection)
    with pytest.raises(AttributeError):
        client.read_only = False  # type: ignore[misc]


async def test_r2_reviews_and_reads_still_reach_the_server(
    fake: FakeApiServer, connection: Connection
) -> None:
    fake.upsert(JOBS, batch_job("train"))
    async with KubeClient(connection) as client:
        actions = KubeActions(client)
        allowed, _ = await actions.access_review("delete", "batch", "jobs", "team-a", "train")
        assert allowed
        assert (await actions.whoami()) == fake.user
        assert await client.get("/apis/batch/v1/namespaces/team-a/jobs/train", {})
    assert [r.url.path for r in fake.writes()] == []
    assert len(fake.log) == 3


async def test_r1_no_action_reaches_the_server_in_read_only_mode(
    fake: FakeApiServer, connection: Connection, tmp_path: Path
) -> None:
    fake.upsert(JOBS, batch_job("train"))
    fake.upsert(PODS, pod("p0"))
    fake.upsert(DEPLOYMENTS, {"metadata": {"name": "svc", "namespace": "team-a"}, "spec": {"replicas": 2}})
    fake.upsert(WORKLOADS, {"metadata": {"name": "wl", "namespace": "team-a"}, "spec": {"active": True}})
    audit = AuditLog(tmp_path / "audit.jsonl")
    async with KubeClient(connection) as client:
        actions = KubeActions(client, audit=audit)
        keys = [("team-a", "Job", "train"), ("team-a", "Pod", "p0"), ("team-a", "Deployment", "svc"),
                ("team-a", "Workload", "wl")]  # fmt: skip
        for key in keys:
            permissions = await actions.permissions("team-a", key[1])
            assert all(p.allowed is False for p in permissions.values())
            for kind in ActionKind:
                request = ActionRequest(kind, key, value=5 if kind == ActionKind.PRIORITY else None)
                preview = await actions.preview(request)
                assert not preview.allowed
                with pytest.raises(HpctopError):
                    await actions.execute(request)
                assert (await actions.execute_many([request]))[0].ok is False
    assert fake.writes() == []
    assert not fake.audit or all(e.method in ("GET", "POST") for e in fake.audit)
    assert all(e.path in REVIEW_PATHS for e in fake.audit if e.method == "POST")
    assert not audit.path.exists()  # nothing was sent, so nothing to audit
