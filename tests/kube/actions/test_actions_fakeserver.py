"""Self-tests of the fake API server's write path (RELIABILITY.md §5.2 items 6-11).

The mutation tests trust the fake to answer as an API server would: a precondition mismatch is a
409, a dry run persists nothing, a Job deleted without a policy orphans its pods with a warning.
Each of those is checked here on its own, over raw HTTP, so a wrong fake fails here first.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import orjson
import pytest
from multidict import CIMultiDictProxy

from tests.kube.fakeserver import JOB_ORPHAN_WARNING, JOBS, PODS, FakeApiServer, Rbac, Rule
from tests.model_fixtures import batch_job, pod

pytestmark = pytest.mark.looptime

JOB = "/apis/batch/v1/namespaces/team-a/jobs/train"
POD = "/api/v1/namespaces/team-a/pods/p0"


def seed(fake: FakeApiServer, pods: int = 2) -> None:
    fake.upsert(JOBS, batch_job("train"))
    for i in range(pods):
        fake.upsert(PODS, pod(f"p{i}", owner=("Job", "train")))


async def send(
    url: str, method: str, body: Any = None, *, ctype: str = "application/json", **params: str
) -> tuple[int, Any, CIMultiDictProxy[str]]:
    data = orjson.dumps(body) if body is not None else None
    session = aiohttp.ClientSession()
    session._retry_connection = False  # aiohttp would resend a DELETE after a reset
    async with (
        session,
        session.request(method, url, data=data, params=params, headers={"Content-Type": ctype}) as response,
    ):
        raw = await response.read()
        return response.status, orjson.loads(raw) if raw else None, response.headers


async def test_delete_job_without_policy_orphans_pods_and_warns(fake: FakeApiServer, server_url: str) -> None:
    seed(fake)
    code, _, headers = await send(server_url + JOB, "DELETE")
    assert code == 200 and headers["Warning"] == JOB_ORPHAN_WARNING
    assert fake.get(JOBS, "train", "team-a") is None
    orphan = fake.get(PODS, "p0", "team-a")
    assert orphan is not None and orphan["metadata"]["ownerReferences"] == []


@pytest.mark.parametrize("policy", ["Background", "Foreground"])
async def test_delete_with_policy_cascades_without_warning(
    fake: FakeApiServer, server_url: str, policy: str
) -> None:
    seed(fake)
    code, _, headers = await send(server_url + JOB, "DELETE", {"propagationPolicy": policy})
    assert code == 200 and "Warning" not in headers
    assert fake.items_of(JOBS) == {} and fake.items_of(PODS) == {}


async def test_foreground_with_another_finalizer_stays_terminating(
    fake: FakeApiServer, server_url: str
) -> None:
    job = batch_job("train")
    job["metadata"]["finalizers"] = ["example.com/hold"]
    fake.upsert(JOBS, job)
    fake.upsert(PODS, pod("p0", owner=("Job", "train")))
    code, body, _ = await send(server_url + JOB, "DELETE", {"propagationPolicy": "Foreground"})
    assert code == 200 and "foregroundDeletion" in body["metadata"]["finalizers"]
    held = fake.get(JOBS, "train", "team-a")
    assert held is not None and held["metadata"]["deletionTimestamp"]
    assert held["metadata"]["finalizers"] == ["example.com/hold"] and fake.items_of(PODS) == {}


async def test_delete_preconditions(fake: FakeApiServer, server_url: str) -> None:
    seed(fake, pods=0)
    code, body, _ = await send(server_url + JOB, "DELETE", {"preconditions": {"uid": "other"}})
    assert code == 409 and "UID in precondition" in body["message"]
    code, _, _ = await send(server_url + JOB, "DELETE", {"preconditions": {"resourceVersion": "1"}})
    assert code == 409 and fake.get(JOBS, "train", "team-a") is not None


async def test_dry_run_persists_nothing_and_bad_values_are_rejected(
    fake: FakeApiServer, server_url: str
) -> None:
    seed(fake)
    rv = fake.rv
    code, _, _ = await send(server_url + JOB, "DELETE", {"propagationPolicy": "Background"}, dryRun="All")
    assert code == 200
    patch = {"spec": {"suspend": True}}
    code, body, _ = await send(
        server_url + JOB, "PATCH", patch, ctype="application/merge-patch+json", dryRun="All"
    )
    assert code == 200 and body["spec"]["suspend"] is True
    assert fake.rv == rv and len(fake.items_of(PODS)) == 2
    assert fake.get(JOBS, "train", "team-a")["spec"]["suspend"] is False  # type: ignore[index]
    code, _, _ = await send(server_url + JOB, "DELETE", {}, dryRun="Yes")
    assert code == 400 and fake.get(JOBS, "train", "team-a") is not None


async def test_merge_patch_rv_precondition_and_job_controller(fake: FakeApiServer, server_url: str) -> None:
    seed(fake)
    rv = fake.get(JOBS, "train", "team-a")["metadata"]["resourceVersion"]  # type: ignore[index]
    stale = {"metadata": {"resourceVersion": "1"}, "spec": {"suspend": True}}
    code, _, _ = await send(server_url + JOB, "PATCH", stale, ctype="application/merge-patch+json")
    assert code == 409
    fresh = {"metadata": {"resourceVersion": rv}, "spec": {"suspend": True}}
    code, body, _ = await send(server_url + JOB, "PATCH", fresh, ctype="application/merge-patch+json")
    assert code == 200 and body["spec"]["suspend"] is True
    assert fake.items_of(PODS) == {}  # the job controller deleted them
    job = fake.get(JOBS, "train", "team-a")
    assert (
        job is not None
        and {"type": "Suspended", "status": "True", "reason": "JobSuspended"} in job["status"]["conditions"]
    )


async def test_json_patch_test_op_and_immutable_fields(fake: FakeApiServer, server_url: str) -> None:
    seed(fake, pods=1)
    ops = [{"op": "test", "path": "/metadata/resourceVersion", "value": "1"}]
    code, _, _ = await send(server_url + JOB, "PATCH", ops, ctype="application/json-patch+json")
    assert code == 409
    patch = {"spec": {"priority": 5}}
    code, body, _ = await send(server_url + POD, "PATCH", patch, ctype="application/merge-patch+json")
    assert code == 422 and body["reason"] == "Invalid" and "spec.priority" in body["message"]
    code, body, _ = await send(
        server_url + JOB, "PATCH", {"spec": {"suspend": "yes"}}, ctype="application/merge-patch+json"
    )
    assert code == 422 and "spec.suspend" in body["message"]


async def test_binding_sets_node_once_with_preconditions(fake: FakeApiServer, server_url: str) -> None:
    fake.upsert(PODS, pod("p0"))
    binding = {"metadata": {"name": "p0", "uid": "wrong"}, "target": {"kind": "Node", "name": "n1"}}
    code, _, _ = await send(server_url + POD + "/binding", "POST", binding)
    assert code == 409
    binding["metadata"]["uid"] = "uid-p0"
    code, _, _ = await send(server_url + POD + "/binding", "POST", binding)
    assert code == 201 and fake.get(PODS, "p0", "team-a")["spec"]["nodeName"] == "n1"  # type: ignore[index]
    binding["target"]["name"] = "n2"
    code, body, _ = await send(server_url + POD + "/binding", "POST", binding)
    assert code == 409 and 'already assigned to node "n1"' in body["message"]


async def test_eviction_and_its_pdb_429(fake: FakeApiServer, server_url: str) -> None:
    fake.upsert(PODS, pod("p0"))
    fake.block_eviction("team-a", "p0", "train-pdb")
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p0"}}
    code, body, _ = await send(server_url + POD + "/eviction", "POST", eviction)
    assert code == 429 and body["details"]["causes"][0]["reason"] == "DisruptionBudget"
    del fake.eviction_blocked[("team-a", "p0")]
    code, _, _ = await send(server_url + POD + "/eviction", "POST", eviction)
    assert code == 201 and fake.items_of(PODS) == {}


async def test_reviews_and_enforcement(fake: FakeApiServer, server_url: str) -> None:
    seed(fake, pods=0)
    fake.rbac = Rbac(rules=[Rule(verbs=("get", "list", "watch"))], refused=[])
    ssar = {
        "spec": {
            "resourceAttributes": {
                "verb": "delete",
                "group": "batch",
                "resource": "jobs",
                "namespace": "team-a",
            }
        }
    }
    code, body, _ = await send(
        server_url + "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "POST", ssar
    )
    assert code == 201 and body["status"]["allowed"] is False
    code, body, _ = await send(
        server_url + "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
        "POST",
        {"spec": {"namespace": "team-a"}},
    )
    assert body["status"]["resourceRules"] == [
        {"verbs": ["get", "list", "watch"], "apiGroups": ["*"], "resources": ["*"]}
    ]
    code, body, _ = await send(server_url + JOB, "DELETE", {})
    assert code == 403 and "cannot delete" in body["message"] and fake.get(JOBS, "train", "team-a")
    fake.rbac = Rbac(refused=[Rule(verbs=("delete",))])  # reviews say yes, the request gets 403
    code, body, _ = await send(
        server_url + "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "POST", ssar
    )
    assert body["status"]["allowed"] is True
    code, _, _ = await send(server_url + JOB, "DELETE", {})
    assert code == 403


async def test_every_answer_has_an_audit_id(fake: FakeApiServer, server_url: str) -> None:
    seed(fake, pods=0)
    _, _, h1 = await send(server_url + JOB, "GET")
    _, _, h2 = await send(server_url + JOB, "DELETE", {"propagationPolicy": "Background"})
    _, _, h3 = await send(server_url + JOB, "DELETE", {"propagationPolicy": "Background"})
    ids = [h["Audit-Id"] for h in (h1, h2, h3)]
    assert len(set(ids)) == 3
    assert [(e.method, e.status, e.audit_id) for e in fake.audit] == [
        ("GET", 200, ids[0]),
        ("DELETE", 200, ids[1]),
        ("DELETE", 404, ids[2]),
    ]


async def test_write_faults_before_and_after_the_change(fake: FakeApiServer, server_url: str) -> None:
    seed(fake, pods=0)
    fake.fail_write(JOBS, "delete", 503)
    code, _, _ = await send(server_url + JOB, "DELETE", {})
    assert code == 503 and fake.get(JOBS, "train", "team-a") is not None
    fake.fail_write(JOBS, "delete", mode="reset", applied=True)
    with pytest.raises(aiohttp.ClientError):
        await send(server_url + JOB, "DELETE", {"propagationPolicy": "Background"})
    assert fake.get(JOBS, "train", "team-a") is None
