"""The live actuator against the fake API server: RELIABILITY.md §6 M-cases, over real HTTP.

Every test goes kubeconfig → the real loader → :class:`KubeClient` → HTTP → :class:`FakeApiServer`,
and asserts on what the server received (``fake.writes()``: method, path, query, body) and on what
it holds afterwards, not only on what the actuator says. Loop time is virtual (looptime), so a
Retry-After of seconds costs nothing and its honouring can be measured exactly.
"""

from __future__ import annotations

import asyncio
import os
import stat
from typing import Any

import orjson
import pytest

from hpctop.actions.audit import AuditLog
from hpctop.actions.kube import HELD_ANNOTATION, KubeActions, StaleTarget
from hpctop.actions.requests import ActionKind, ActionRequest
from hpctop.errors import ActionFailed, ActionRefused
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.transport import KubeClient
from tests.kube.conftest import TOKEN
from tests.kube.fakeserver import DEPLOYMENTS, JOBS, PODS, WORKLOADS, FakeApiServer, Rbac, Rule
from tests.model_fixtures import batch_job, pod

pytestmark = pytest.mark.looptime

TRAIN = ("team-a", "Job", "train")
JOB_PATH = "/apis/batch/v1/namespaces/team-a/jobs/train"


def seed(fake: FakeApiServer, name: str = "train", pods: int = 2, **job: Any) -> None:
    obj = batch_job(name, parallelism=pods)
    obj["status"] = {"active": pods}
    obj.update(job)
    fake.upsert(JOBS, obj)
    for i in range(pods):
        fake.upsert(PODS, pod(f"{name}-{i}", owner=("Job", name), node="n1", phase="Running"))


def writes(fake: FakeApiServer, method: str | None = None) -> list[Any]:
    return [r for r in fake.writes() if method is None or r.method == method]


def body(request: Any) -> Any:
    return orjson.loads(request.body)


# -- M1: cancel ------------------------------------------------------------------------------------


async def test_m1_cancel_sends_policy_and_preconditions_and_pods_go(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    seed(fake)
    job = fake.get(JOBS, "train", "team-a")
    assert job is not None
    request = ActionRequest(ActionKind.CANCEL, TRAIN, job_uid="uid-train")
    preview = await actions.preview(request)
    assert preview.allowed and "DELETE " + JOB_PATH in preview.requests[0]
    result = await actions.execute(request)
    assert result.ok and "cancelled" in result.message
    [dry, real] = writes(fake, "DELETE")
    assert dry.params.get("dryRun") == "All" and "dryRun" not in real.params
    sent = body(real)
    assert sent["propagationPolicy"] == "Background"
    assert sent["preconditions"] == {
        "uid": "uid-train",
        "resourceVersion": job["metadata"]["resourceVersion"],
    }
    assert fake.items_of(JOBS) == {} and fake.items_of(PODS) == {}
    assert not any("warning" in c for c in result.changes)  # a Warning header would be a bug


async def test_m1_foreground_cancel(fake: FakeApiServer, connection: Connection) -> None:
    seed(fake)
    async with KubeClient(connection, read_only=False) as client:
        result = await KubeActions(client, propagation="Foreground").execute(
            ActionRequest(ActionKind.CANCEL, TRAIN)
        )
    assert result.ok and body(writes(fake, "DELETE")[0])["propagationPolicy"] == "Foreground"
    assert fake.items_of(JOBS) == {} and fake.items_of(PODS) == {}


# -- M2: stale precondition ---------------------------------------------------------------------


async def test_m2_changed_between_preview_and_confirm_asks_again(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    seed(fake)
    request = ActionRequest(ActionKind.CANCEL, TRAIN, job_uid="uid-train")
    assert (await actions.preview(request)).allowed
    changed = fake.get(JOBS, "train", "team-a")
    assert changed is not None
    changed["spec"]["suspend"] = True  # someone held it meanwhile
    fake.upsert(JOBS, changed)
    with pytest.raises(StaleTarget) as info:
        await actions.execute(request)
    assert "spec.suspend: false → true" in info.value.changed
    assert info.value.preview is not None and info.value.preview.allowed
    real = [r for r in writes(fake, "DELETE") if "dryRun" not in r.params]
    assert len(real) == 1  # exactly one DELETE, and no retry
    assert fake.get(JOBS, "train", "team-a") is not None
    result = await actions.execute(request)  # confirmed again, on the new state
    assert result.ok and fake.items_of(JOBS) == {}


async def test_m2_replaced_object_is_refused(fake: FakeApiServer, actions: KubeActions) -> None:
    seed(fake, pods=0)
    request = ActionRequest(ActionKind.HOLD, TRAIN, job_uid="uid-old")
    preview = await actions.preview(request)
    assert not preview.allowed and "replaced" in preview.refusal
    with pytest.raises(ActionRefused, match="replaced"):
        await actions.execute(request)
    assert writes(fake) == []


# -- M3: already gone --------------------------------------------------------------------------


async def test_m3_404_on_delete_is_already_gone(fake: FakeApiServer, actions: KubeActions) -> None:
    seed(fake)
    request = ActionRequest(ActionKind.CANCEL, TRAIN)
    assert (await actions.preview(request)).allowed
    fake.remove(JOBS, "train", "team-a")
    result = await actions.execute(request)
    assert result.ok and "already gone" in result.message
    assert len([r for r in writes(fake, "DELETE") if "dryRun" not in r.params]) == 1
    fresh = await actions.preview(request)
    assert not fresh.allowed and "already gone" in fresh.refusal


async def test_404_on_cancel_is_audited_as_already_gone(
    fake: FakeApiServer, actions: KubeActions, audit: AuditLog
) -> None:
    seed(fake)
    request = ActionRequest(ActionKind.CANCEL, TRAIN)
    assert (await actions.preview(request)).allowed
    fake.remove(JOBS, "train", "team-a")  # deleted by someone else between the confirm and the send
    result = await actions.execute(request)
    assert result.ok and "already gone" in result.message and "404" in result.message
    assert result.outcome == "gone"  # the console counts it as gone, not as "1 done"
    records = audit.read()
    assert [r.phase for r in records] == ["intent", "outcome", "result"]
    assert records[1].status == 404 and records[1].ok is False  # the server's answer, as it came
    assert records[2].ok is True and "already gone" in records[2].message  # what it meant


# -- M4: terminating ----------------------------------------------------------------------------


async def test_m4_terminating_is_not_deleted_again(fake: FakeApiServer, connection: Connection) -> None:
    job = batch_job("train")
    job["metadata"]["finalizers"] = ["example.com/hold"]
    fake.upsert(JOBS, job)
    async with KubeClient(connection, read_only=False) as client:
        actions = KubeActions(client, propagation="Foreground")
        request = ActionRequest(ActionKind.CANCEL, TRAIN)
        assert (await actions.execute(request)).ok
        held = fake.get(JOBS, "train", "team-a")
        assert held is not None and held["metadata"]["deletionTimestamp"]
        preview = await actions.preview(request)
        assert not preview.allowed and "already terminating" in preview.refusal
        again = await actions.execute(request)
    assert again.ok and "already terminating" in again.message
    assert len(writes(fake, "DELETE")) == 1


# -- M5: outcome unknown -------------------------------------------------------------------------


async def test_m5_reset_after_the_delete_is_settled_by_rereading(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    seed(fake)
    fake.fail_write(JOBS, "delete", applied=True, mode="reset")
    result = await actions.execute(ActionRequest(ActionKind.CANCEL, TRAIN))
    assert result.ok and "confirmed by re-reading" in result.message
    assert len(writes(fake, "DELETE")) == 1  # never sent twice, not even by aiohttp
    methods: list[tuple[str, str]] = [(r.method, r.url.path) for _, r in fake.log]
    delete_at = methods.index(("DELETE", JOB_PATH))
    assert ("GET", JOB_PATH) in methods[delete_at + 1 :]


async def test_m5_500_before_the_change_is_reported_safe_to_retry(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    seed(fake)
    fake.fail_write(JOBS, "patch", 500)
    with pytest.raises(ActionFailed, match="safe to try again"):
        await actions.execute(ActionRequest(ActionKind.HOLD, TRAIN))
    assert len(writes(fake, "PATCH")) == 1
    assert fake.get(JOBS, "train", "team-a")["spec"]["suspend"] is False  # type: ignore[index]


async def test_m5_stall_after_the_change_is_confirmed(fake: FakeApiServer, connection: Connection) -> None:
    seed(fake)
    fake.fail_write(JOBS, "patch", applied=True, mode="stall")
    async with KubeClient(connection, read_only=False, read_timeout=5) as client:
        result = await KubeActions(client).execute(ActionRequest(ActionKind.HOLD, TRAIN))
    assert result.ok and any("confirmed by re-reading" in c for c in result.changes)
    assert len(writes(fake, "PATCH")) == 1


# -- M6: hold / release / requeue, RV-guarded ------------------------------------------------------


async def test_m6_hold_is_an_rv_guarded_merge_patch(fake: FakeApiServer, actions: KubeActions) -> None:
    seed(fake)
    rv = fake.get(JOBS, "train", "team-a")["metadata"]["resourceVersion"]  # type: ignore[index]
    result = await actions.execute(ActionRequest(ActionKind.HOLD, TRAIN))
    assert result.ok and "spec.suspend = true" in result.changes
    [patch] = writes(fake, "PATCH")
    assert patch.headers["Content-Type"] == "application/merge-patch+json"
    assert patch.params["fieldManager"] == "hpctop"
    assert body(patch) == {"metadata": {"resourceVersion": rv}, "spec": {"suspend": True}}
    assert fake.get(JOBS, "train", "team-a")["spec"]["suspend"] is True  # type: ignore[index]
    assert fake.items_of(PODS) == {}  # the job controller deleted the running pods
    release = await actions.execute(ActionRequest(ActionKind.RELEASE, TRAIN))
    assert release.ok and fake.get(JOBS, "train", "team-a")["spec"]["suspend"] is False  # type: ignore[index]


async def test_m6_requeue_chains_the_resource_version(fake: FakeApiServer, actions: KubeActions) -> None:
    seed(fake)
    result = await actions.execute(ActionRequest(ActionKind.REQUEUE, TRAIN, job_uid="uid-train"))
    assert result.ok
    hold, release = writes(fake, "PATCH")
    held_rv = body(hold)["metadata"]["resourceVersion"]
    assert body(release)["metadata"]["resourceVersion"] != held_rv
    job = fake.get(JOBS, "train", "team-a")
    assert job is not None and job["spec"]["suspend"] is False and job["metadata"]["uid"] == "uid-train"


async def test_m6_422_is_shown_and_not_retried(fake: FakeApiServer, actions: KubeActions) -> None:
    seed(fake)
    fake.immutable[JOBS].append(("spec", "suspend"))  # e.g. an admission policy pins it
    preview = await actions.preview(ActionRequest(ActionKind.HOLD, TRAIN))
    assert not preview.allowed and "HTTP 422" in preview.refusal and "spec.suspend" in preview.refusal
    with pytest.raises(ActionFailed, match=r"rejected hold.*spec\.suspend"):
        await actions.execute(ActionRequest(ActionKind.HOLD, TRAIN))
    assert len([r for r in writes(fake, "PATCH") if "dryRun" not in r.params]) == 1


async def test_m6_state_refusals(fake: FakeApiServer, actions: KubeActions) -> None:
    seed(fake, spec=batch_job("train", suspend=True)["spec"])
    with pytest.raises(ActionRefused, match="already held"):
        await actions.execute(ActionRequest(ActionKind.HOLD, TRAIN))
    done = batch_job("done")
    done["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
    fake.upsert(JOBS, done)
    preview = await actions.preview(ActionRequest(ActionKind.HOLD, ("team-a", "Job", "done")))
    assert not preview.allowed and "finished" in preview.refusal
    kueue = batch_job("kq")
    kueue["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "lq"}
    fake.upsert(JOBS, kueue)
    with pytest.raises(ActionRefused, match="Kueue"):
        await actions.execute(ActionRequest(ActionKind.HOLD, ("team-a", "Job", "kq")))
    assert writes(fake) == []


@pytest.mark.parametrize("kind", [ActionKind.PRIORITY, ActionKind.MOVE])
async def test_m6_priority_and_move_are_refused_with_the_reason(
    fake: FakeApiServer, actions: KubeActions, kind: ActionKind
) -> None:
    seed(fake)
    request = ActionRequest(kind, TRAIN, value=5 if kind == ActionKind.PRIORITY else "root.x")
    preview = await actions.preview(request)
    assert not preview.allowed and "immutable" in preview.refusal
    with pytest.raises(ActionRefused, match="immutable"):
        await actions.execute(request)
    assert fake.log == []  # refused without even a read


# -- other owners ---------------------------------------------------------------------------------


async def test_deployment_hold_saves_and_release_restores_replicas(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    fake.upsert(DEPLOYMENTS, {"metadata": {"name": "svc", "namespace": "team-a"}, "spec": {"replicas": 3}})
    key = ("team-a", "Deployment", "svc")
    preview = await actions.preview(ActionRequest(ActionKind.HOLD, key))
    assert preview.allowed and any("spec.replicas: 3 → 0" in c for c in preview.changes)
    assert (await actions.execute(ActionRequest(ActionKind.HOLD, key))).ok
    held = fake.get(DEPLOYMENTS, "svc", "team-a")
    assert held is not None and held["spec"]["replicas"] == 0
    assert held["metadata"]["annotations"][HELD_ANNOTATION] == "3"
    with pytest.raises(ActionRefused, match="already scaled to 0"):
        await actions.execute(ActionRequest(ActionKind.HOLD, key))
    assert (await actions.execute(ActionRequest(ActionKind.RELEASE, key))).ok
    released = fake.get(DEPLOYMENTS, "svc", "team-a")
    assert released is not None and released["spec"]["replicas"] == 3
    assert HELD_ANNOTATION not in released["metadata"]["annotations"]
    with pytest.raises(ActionRefused, match="not held by hpctop"):
        await actions.execute(ActionRequest(ActionKind.RELEASE, key))


async def test_workload_hold_and_release_via_spec_active(fake: FakeApiServer, actions: KubeActions) -> None:
    fake.upsert(WORKLOADS, {"metadata": {"name": "wl", "namespace": "team-a"}, "spec": {"active": True}})
    key = ("team-a", "Workload", "wl")
    assert (await actions.execute(ActionRequest(ActionKind.HOLD, key))).ok
    assert fake.get(WORKLOADS, "wl", "team-a")["spec"]["active"] is False  # type: ignore[index]
    assert (await actions.execute(ActionRequest(ActionKind.RELEASE, key))).ok
    assert fake.get(WORKLOADS, "wl", "team-a")["spec"]["active"] is True  # type: ignore[index]
    preview = await actions.preview(ActionRequest(ActionKind.CANCEL, key))
    assert not preview.allowed and "owner job" in preview.refusal


async def test_pod_cancel_is_an_eviction_and_a_pdb_429_is_not_bypassed(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    fake.upsert(PODS, pod("solo"))
    key = ("team-a", "Pod", "solo")
    fake.block_eviction("team-a", "solo", "solo-pdb")
    preview = await actions.preview(ActionRequest(ActionKind.CANCEL, key))
    assert not preview.allowed and "disruption budget" in preview.refusal
    with pytest.raises(ActionFailed, match="PodDisruptionBudget"):
        await actions.execute(ActionRequest(ActionKind.CANCEL, key))
    assert [r.url.path for r in fake.writes()] == ["/api/v1/namespaces/team-a/pods/solo/eviction"] * 2
    assert fake.get(PODS, "solo", "team-a") is not None  # no fallback delete around the PDB
    fake.eviction_blocked.clear()
    assert (await actions.execute(ActionRequest(ActionKind.CANCEL, key))).ok
    assert fake.items_of(PODS) == {}
    assert body(fake.writes()[-1])["deleteOptions"]["preconditions"]["uid"] == "uid-solo"


async def test_pod_cancel_falls_back_to_delete_when_eviction_is_not_allowed(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    fake.upsert(PODS, pod("solo"))
    fake.rbac = Rbac(rules=[Rule(verbs=("get", "list", "watch", "delete"))])
    result = await actions.execute(ActionRequest(ActionKind.CANCEL, ("team-a", "Pod", "solo")))
    assert result.ok
    [delete] = fake.writes()
    assert delete.method == "DELETE" and body(delete)["preconditions"]["uid"] == "uid-solo"
    assert fake.items_of(PODS) == {}


# -- M8: preview is the server's dry run ----------------------------------------------------------


async def test_m8_preview_is_a_dry_run_that_persists_nothing(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    seed(fake)
    rv, events = fake.rv, len(fake.history)
    preview = await actions.preview(ActionRequest(ActionKind.HOLD, TRAIN))
    assert preview.allowed
    assert "server dry run: spec.suspend: false → true" in preview.changes
    assert preview.requests[0].startswith(f"PATCH {JOB_PATH}?fieldManager=hpctop ")
    assert '"spec":{"suspend":true}' in preview.requests[0]
    [dry] = fake.writes()
    assert dry.params["dryRun"] == "All" and dry.params["fieldManager"] == "hpctop"
    assert fake.rv == rv and len(fake.history) == events and len(fake.items_of(PODS)) == 2


# -- M9: throttled -------------------------------------------------------------------------------


async def test_m9_retry_after_is_honoured_and_bounded(fake: FakeApiServer, actions: KubeActions) -> None:
    seed(fake)
    loop = asyncio.get_running_loop()
    fake.fail_write(JOBS, "patch", 429, retry_after="3")
    start = loop.time()
    assert (await actions.execute(ActionRequest(ActionKind.HOLD, TRAIN))).ok
    times = [t for t, r in fake.log if r.method == "PATCH"]
    assert len(times) == 2 and times[1] - times[0] >= 3 and loop.time() - start < 10
    fake.fail_write(JOBS, "patch", 429, retry_after="600")
    with pytest.raises(ActionFailed, match="wait 600s"):
        await actions.execute(ActionRequest(ActionKind.RELEASE, TRAIN))
    assert len(writes(fake, "PATCH")) == 3


# -- M10: RBAC ------------------------------------------------------------------------------------


async def test_m10_rules_review_greys_out_and_access_review_guards(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    seed(fake)
    fake.rbac = Rbac(rules=[Rule(verbs=("get", "list", "watch")), Rule(verbs=("patch",), groups=("batch",),
                                                                        resources=("jobs",))])  # fmt: skip
    permissions = await actions.permissions("team-a", "Job")
    assert permissions[ActionKind.HOLD].allowed is True
    assert (
        permissions[ActionKind.CANCEL].allowed is False
        and "delete jobs.batch" in permissions[ActionKind.CANCEL].reason
    )
    assert permissions[ActionKind.PRIORITY].allowed is False
    with pytest.raises(ActionRefused, match="SelfSubjectAccessReview"):
        await actions.execute(ActionRequest(ActionKind.CANCEL, TRAIN))
    assert writes(fake, "DELETE") == []
    fake.rbac.incomplete = True
    actions.forget()
    assert (await actions.permissions("team-a", "Job"))[ActionKind.CANCEL].allowed is None


async def test_m10_server_403_after_a_positive_review_is_not_retried(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    seed(fake)
    fake.rbac = Rbac(refused=[Rule(verbs=("delete",))])
    with pytest.raises(ActionFailed, match=r"refused delete jobs\.batch .*403.*does not retry"):
        await actions.execute(ActionRequest(ActionKind.CANCEL, TRAIN))
    assert len(writes(fake, "DELETE")) == 1 and fake.get(JOBS, "train", "team-a") is not None


# -- M11: audit ------------------------------------------------------------------------------------


async def test_m11_audit_log_has_intent_and_outcome_with_the_servers_audit_id(
    fake: FakeApiServer, actions: KubeActions, audit: AuditLog
) -> None:
    seed(fake)
    await actions.execute(ActionRequest(ActionKind.CANCEL, TRAIN, job_uid="uid-train"))
    fake.rbac = Rbac(refused=[Rule(verbs=("patch",))])
    fake.upsert(JOBS, batch_job("other"))
    with pytest.raises(ActionFailed):
        await actions.execute(ActionRequest(ActionKind.HOLD, ("team-a", "Job", "other")))
    assert stat.S_IMODE(os.stat(audit.path).st_mode) == 0o600
    records = audit.read()
    assert [(r.phase, r.action, r.status) for r in records] == [
        ("intent", "cancel", None),
        ("outcome", "cancel", 200),
        ("intent", "hold", None),
        ("outcome", "hold", 403),
    ]
    server_ids = {(e.method, e.path): e.audit_id for e in fake.audit}
    assert records[1].audit_id == server_ids[("DELETE", JOB_PATH)]
    assert records[1].user == fake.user and records[1].context == "fake" and records[1].uid == "uid-train"
    assert records[3].ok is False and "forbidden" in records[3].message
    text = audit.path.read_text()
    assert TOKEN not in text and "Bearer" not in text and "Authorization" not in text
    assert audit.read(job="team-a/Job/other")[-1].status == 403


# -- bulk -------------------------------------------------------------------------------------------


async def test_bulk_reports_per_job(fake: FakeApiServer, actions: KubeActions) -> None:
    seed(fake, "a", pods=1)
    seed(fake, "b", pods=1)
    requests = [ActionRequest(ActionKind.HOLD, ("team-a", "Job", name)) for name in ("a", "missing", "b")] + [
        ActionRequest(ActionKind.HOLD, ("team-a", "StatefulSet", "js"))
    ]
    results = await actions.execute_many(requests)
    assert [r.ok for r in results] == [True, False, True, False]
    assert "no longer exists" in results[1].message and "not supported" in results[3].message
