"""Closing and opening Kueue queues (``spec.stopPolicy``, SCHEDULERS.md §9.2) against the fake API
server, over HTTP: the dry run first, then the real merge patch with the resourceVersion the preview
saw and ``fieldManager=hpctop``; a 409 re-reads and asks again; a 403 is explained, never retried.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hpctop.actions.audit import AuditLog
from hpctop.actions.kube import KubeActions, StaleTarget
from hpctop.errors import ActionFailed, ActionRefused
from tests.kube.fakeserver import (
    ALL,
    CLUSTER_QUEUES,
    CLUSTER_QUEUES_V1BETA1,
    LOCAL_QUEUES,
    FakeApiServer,
    Rbac,
    Res,
    Rule,
)

pytestmark = pytest.mark.looptime

NS = "team-a"


def put_queue(fake: FakeApiServer, res: Res, name: str, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if res.namespaced:
        meta["namespace"] = NS
    return fake.upsert(res, {"metadata": meta, "spec": spec, "status": {"admittedWorkloads": 3}})


def queue_path(res: Res, name: str) -> str:
    ns = f"/namespaces/{NS}" if res.namespaced else ""
    return f"/apis/{res.group}/{res.version}{ns}/{res.plural}/{name}"


def writes(fake: FakeApiServer) -> list[Any]:
    return [r for r in fake.writes() if str(getattr(r.method, "value", r.method)) == "PATCH"]


@pytest.mark.parametrize("res", [CLUSTER_QUEUES, LOCAL_QUEUES], ids=["ClusterQueue", "LocalQueue"])
@pytest.mark.parametrize(("start", "policy"), [("None", "Hold"), ("None", "HoldAndDrain"), ("Hold", "None")])
async def test_stop_policy_dry_run_then_real_patch(
    fake: FakeApiServer, actions: KubeActions, audit: AuditLog, res: Res, start: str, policy: str
) -> None:
    rv = put_queue(fake, res, "q", stopPolicy=start)["metadata"]["resourceVersion"]
    preview = await actions.preview_queue_stop_policy(res.kind, "q", NS, policy)
    assert preview.allowed, preview.refusal
    assert f'server dry run: spec.stopPolicy: "{start}" → "{policy}"' in preview.changes
    if policy == "HoldAndDrain":
        assert any("EVICTS the 3 admitted workload(s)" in c for c in preview.changes)
    assert fake.get(res, "q", NS)["spec"]["stopPolicy"] == start  # type: ignore[index]  # dry run only

    result = await actions.set_queue_stop_policy(res.kind, "q", NS, policy)
    assert result.ok and f"stopPolicy {start} → {policy}" in result.message
    dry, real = writes(fake)
    for request in (dry, real):
        assert request.url.path == queue_path(res, "q")
        assert request.headers["Content-Type"] == "application/merge-patch+json"
        assert request.params["fieldManager"] == "hpctop"
        assert orjson.loads(request.body) == {
            "metadata": {"resourceVersion": rv},
            "spec": {"stopPolicy": policy},
        }
    assert dry.params["dryRun"] == "All" and "dryRun" not in real.params
    assert fake.get(res, "q", NS)["spec"]["stopPolicy"] == policy  # type: ignore[index]
    lines = [orjson.loads(line) for line in audit.path.read_bytes().splitlines()]
    assert [line["phase"] for line in lines] == ["intent", "outcome"]
    assert lines[1]["action"] == f"stop-policy:{policy}" and lines[1]["status"] == 200


async def test_invalid_policy_and_kind_refused_before_sending(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    put_queue(fake, CLUSTER_QUEUES, "cq")
    n = len(fake.log)
    preview = await actions.preview_queue_stop_policy("ClusterQueue", "cq", "", "Drain")
    assert not preview.allowed and "not a Kueue stopPolicy" in preview.refusal
    with pytest.raises(ActionRefused, match="not a Kueue stopPolicy"):
        await actions.set_queue_stop_policy("ClusterQueue", "cq", "", "hold")
    with pytest.raises(ActionRefused, match="not a Kueue queue kind"):
        await actions.set_queue_stop_policy("Cohort", "cq", "", "Hold")
    with pytest.raises(ActionRefused, match="namespaced"):
        await actions.set_queue_stop_policy("LocalQueue", "lq", "", "Hold")
    assert len(fake.log) == n  # no request at all


async def test_already_at_policy_is_refused(fake: FakeApiServer, actions: KubeActions) -> None:
    put_queue(fake, LOCAL_QUEUES, "lq", stopPolicy="Hold")
    preview = await actions.preview_queue_stop_policy("LocalQueue", "lq", NS, "Hold")
    assert not preview.allowed and "already" in preview.refusal
    put_queue(fake, CLUSTER_QUEUES, "cq")  # no stopPolicy: open
    with pytest.raises(ActionRefused, match="already"):
        await actions.set_queue_stop_policy("ClusterQueue", "cq", "", "None")
    assert writes(fake) == []


async def test_a_v1beta1_only_kueue_queue_is_patched_at_v1beta1(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    fake.served = tuple(r for r in ALL if not (r.group == "kueue.x-k8s.io" and r.version == "v1beta2"))
    rv = put_queue(fake, CLUSTER_QUEUES_V1BETA1, "old")["metadata"]["resourceVersion"]
    assert (await actions.preview_queue_stop_policy("ClusterQueue", "old", "", "Hold")).allowed
    result = await actions.set_queue_stop_policy("ClusterQueue", "old", "", "Hold")
    assert result.ok
    dry, real = writes(fake)
    assert real.url.path == queue_path(CLUSTER_QUEUES_V1BETA1, "old") == dry.url.path
    assert orjson.loads(real.body)["metadata"] == {"resourceVersion": rv}
    assert fake.get(CLUSTER_QUEUES_V1BETA1, "old")["spec"]["stopPolicy"] == "Hold"  # type: ignore[index]


async def test_409_rereads_and_raises_stale_target_with_fresh_preview(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    put_queue(fake, CLUSTER_QUEUES, "cq")
    assert (await actions.preview_queue_stop_policy("ClusterQueue", "cq", "", "HoldAndDrain")).allowed
    changed = fake.get(CLUSTER_QUEUES, "cq")
    assert changed is not None
    changed["status"] = {"admittedWorkloads": 5, "conditions": [{"type": "Active", "status": "True"}]}
    fake.upsert(CLUSTER_QUEUES, changed)  # Kueue moved it on meanwhile: a new resourceVersion
    with pytest.raises(StaleTarget) as info:
        await actions.set_queue_stop_policy("ClusterQueue", "cq", "", "HoldAndDrain")
    assert "condition Active: (unset) → True" in info.value.changed
    fresh = info.value.preview
    assert fresh is not None and fresh.allowed
    assert any("EVICTS the 5 admitted" in c for c in fresh.changes)
    assert "stopPolicy" not in fake.get(CLUSTER_QUEUES, "cq")["spec"]  # type: ignore[index]
    real = [r for r in writes(fake) if "dryRun" not in r.params]
    assert len(real) == 1  # the refused one: never retried by itself


async def test_403_is_explained_and_not_retried(fake: FakeApiServer, actions: KubeActions) -> None:
    put_queue(fake, LOCAL_QUEUES, "lq")
    rule = Rule(verbs=("patch",), groups=("kueue.x-k8s.io",), resources=("localqueues",))
    fake.rbac = Rbac(refused=[rule])  # the reviews allow it; the request itself is refused
    with pytest.raises(ActionFailed) as info:
        await actions.set_queue_stop_policy("LocalQueue", "lq", NS, "Hold")
    assert "403" in info.value.detail and "patch localqueues.kueue.x-k8s.io" in info.value.detail
    assert len(writes(fake)) == 1

    fake.rbac = Rbac(rules=[Rule(verbs=("get", "list", "watch"))])  # denied by the access review
    with pytest.raises(ActionRefused, match=r"may not patch localqueues\.kueue\.x-k8s\.io in team-a"):
        await actions.set_queue_stop_policy("LocalQueue", "lq", NS, "Hold")
    assert len(writes(fake)) == 1  # nothing sent


async def test_missing_queue_is_refused(fake: FakeApiServer, actions: KubeActions) -> None:
    preview = await actions.preview_queue_stop_policy("LocalQueue", "nope", NS, "Hold")
    assert not preview.allowed and "does not exist" in preview.refusal
    assert writes(fake) == []
