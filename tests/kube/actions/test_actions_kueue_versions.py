"""Kueue Workload actions on a Kueue that serves only v1beta1 and on one that serves only v1beta2.

Why: the actions once kept their own GVR table pinned to v1beta2, so on a v1beta1-only Kueue (every
release before v0.15, SCHEDULERS.md §5.1) hold, release, requeue and priority all answered "no longer
exists". The path now comes from the cluster's discovery (the resource registry), so each test
serves one version only (the other is a 404, as on such a cluster) and checks that the requests went
to the served version and changed the object there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from hpctop.actions.kube import KubeActions
from hpctop.actions.requests import ActionKind, ActionRequest
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.transport import KubeClient
from tests.kube.fakeserver import ALL, WORKLOADS, WORKLOADS_V1BETA1, FakeApiServer, Res

pytestmark = pytest.mark.looptime

NS = "team-a"
NAME = "job-train-7f173"
WL = (NS, "Workload", NAME)
SERVED = [pytest.param(WORKLOADS_V1BETA1, id="v1beta1-only"), pytest.param(WORKLOADS, id="v1beta2-only")]


@pytest.fixture
async def actions(connection: Connection) -> AsyncIterator[KubeActions]:
    core = KubeActions(KubeClient(connection, read_only=False), poll_interval=0.5, evict_timeout=10)
    yield core
    await core.close()


def serve_only(fake: FakeApiServer, workloads: Res) -> None:
    """The fake serves Kueue at one version: the other version's resources are not served at all."""
    other = "v1beta2" if workloads.version == "v1beta1" else "v1beta1"
    fake.served = tuple(r for r in ALL if not (r.group == "kueue.x-k8s.io" and r.version == other))


def put_workload(fake: FakeApiServer, res: Res, *, active: bool = True, admitted: bool = False) -> Any:
    conditions = [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved"}] if admitted else []
    return fake.upsert(
        res,
        {
            "metadata": {"name": NAME, "namespace": NS},
            "spec": {"queueName": "team-a-gpu", "priority": 100, "active": active},
            "status": {"conditions": conditions},
        },
    )


def patches(fake: FakeApiServer) -> list[tuple[str, bool, Any]]:
    return [
        (r.url.path, r.params.get("dryRun") == "All", orjson.loads(r.body))
        for r in fake.writes()
        if str(getattr(r.method, "value", r.method)) == "PATCH"
    ]


def wl_path(res: Res) -> str:
    return f"/apis/kueue.x-k8s.io/{res.version}/namespaces/{NS}/workloads/{NAME}"


@pytest.mark.parametrize("res", SERVED)
async def test_hold_then_release_at_the_served_version(
    fake: FakeApiServer, actions: KubeActions, res: Res
) -> None:
    serve_only(fake, res)
    put_workload(fake, res)
    hold = ActionRequest(ActionKind.HOLD, WL)
    preview = await actions.preview(hold)
    assert preview.allowed, preview.refusal
    assert (await actions.execute(hold)).ok
    assert fake.get(res, NAME, NS)["spec"]["active"] is False  # type: ignore[index]
    release = ActionRequest(ActionKind.RELEASE, WL)
    assert (await actions.preview(release)).allowed
    assert (await actions.execute(release)).ok
    assert fake.get(res, NAME, NS)["spec"]["active"] is True  # type: ignore[index]
    sent = patches(fake)
    assert [(p, dry) for p, dry, _ in sent] == [(wl_path(res), True), (wl_path(res), False)] * 2
    assert [b["spec"] for _, _, b in sent] == [{"active": False}] * 2 + [{"active": True}] * 2


@pytest.mark.parametrize("res", SERVED)
async def test_requeue_waits_for_the_eviction_at_the_served_version(
    fake: FakeApiServer, actions: KubeActions, res: Res
) -> None:
    serve_only(fake, res)
    fake.kueue_evict_after = 2.0  # Kueue evicts the deactivated admitted Workload 2 s later
    put_workload(fake, res, admitted=True)
    request = ActionRequest(ActionKind.REQUEUE, WL)
    assert (await actions.preview(request)).allowed
    result = await actions.execute(request)
    assert result.ok, result.message
    assert any("Evicted=True (Deactivated)" in c for c in result.changes)
    now = fake.get(res, NAME, NS)
    assert now is not None and now["spec"]["active"] is True
    assert {c["type"]: c["status"] for c in now["status"]["conditions"]}["Requeued"] == "True"
    assert {p for p, _, _ in patches(fake)} == {wl_path(res)}


@pytest.mark.parametrize("res", SERVED)
async def test_numeric_priority_at_the_served_version(
    fake: FakeApiServer, actions: KubeActions, res: Res
) -> None:
    serve_only(fake, res)
    put_workload(fake, res)
    request = ActionRequest(ActionKind.PRIORITY, WL, value=500)
    preview = await actions.preview(request)
    assert preview.allowed, preview.refusal
    assert (await actions.execute(request)).ok
    assert fake.get(res, NAME, NS)["spec"]["priority"] == 500  # type: ignore[index]
    assert [(p, dry) for p, dry, _ in patches(fake)] == [(wl_path(res), True), (wl_path(res), False)]


async def test_no_kueue_served_refuses_without_a_workload_request(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    fake.served = tuple(r for r in ALL if r.group != "kueue.x-k8s.io")
    preview = await actions.preview(ActionRequest(ActionKind.HOLD, WL))
    assert not preview.allowed and "does not serve workloads.kueue.x-k8s.io" in preview.refusal
    assert not any("/workloads" in r.url.path for _, r in fake.log)
