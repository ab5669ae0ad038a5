"""Kueue priority/move, SUNK and coscheduling actions against the fake API server, over HTTP.

As in test_actions_backends.py, each test asserts the exact requests the server received (dry run
first) and what it holds afterwards: a request that looks right but lacks its precondition, or
lands on the wrong object (the Workload instead of its owner job), is the bug to catch.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from hpctop.actions.kube import KubeActions, StaleTarget
from hpctop.actions.requests import ActionKind, ActionRequest
from hpctop.errors import ActionRefused
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.transport import KubeClient
from tests.kube.fakeserver import COSCHED_PODGROUPS, JOBS, PODS, WORKLOADS, FakeApiServer, Res

pytestmark = pytest.mark.looptime

NS = "team-a"
QUEUE = "kueue.x-k8s.io/queue-name"
PCLASS = "kueue.x-k8s.io/priority-class"


@pytest.fixture
async def actions(connection: Connection) -> AsyncIterator[KubeActions]:
    core = KubeActions(KubeClient(connection, read_only=False))
    yield core
    await core.close()


def path(res: Res, name: str) -> str:
    base = f"/apis/{res.group}/{res.version}" if res.group else f"/api/{res.version}"
    return f"{base}/namespaces/{NS}/{res.plural}/{name}"


def sent(fake: FakeApiServer) -> list[tuple[str, str, bool]]:
    return [
        (str(getattr(r.method, "value", r.method)), r.url.path, r.params.get("dryRun") == "All")
        for r in fake.writes()
    ]


def body(request: Any) -> Any:
    return orjson.loads(request.body)


def kueue_job(fake: FakeApiServer, *, suspend: bool, admitted: bool = False) -> tuple[Any, Any]:
    """A batch Job under Kueue and its Workload (owned by the job, as Kueue creates it)."""
    job = fake.upsert(
        JOBS,
        {
            "metadata": {"name": "train", "namespace": NS, "labels": {QUEUE: "team-a-gpu", PCLASS: "low"}},
            "spec": {"suspend": suspend},
        },
    )
    ref = {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": job["metadata"]["uid"]}
    conditions = [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved"}] if admitted else []
    wl = fake.upsert(
        WORKLOADS,
        {
            "metadata": {
                "name": "job-train-7f173",
                "namespace": NS,
                "ownerReferences": [ref | {"controller": True}],
            },
            "spec": {"queueName": "team-a-gpu", "priority": 100, "active": True},
            "status": {"conditions": conditions},
        },
    )
    return job, wl


WL = (NS, "Workload", "job-train-7f173")


# -- Kueue -----------------------------------------------------------------------------------------


async def test_kueue_numeric_priority_patches_workload_spec_with_rv(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    _, wl = kueue_job(fake, suspend=True)
    request = ActionRequest(ActionKind.PRIORITY, WL, value=500)
    preview = await actions.preview(request)
    assert preview.allowed, preview.refusal
    assert any("spec.priority: 100 → 500" in c for c in preview.changes)
    result = await actions.execute(request)
    assert result.ok and "spec.priority = 500" in result.changes
    wl_path = path(WORKLOADS, "job-train-7f173")
    assert sent(fake) == [("PATCH", wl_path, True), ("PATCH", wl_path, False)]
    real = fake.writes()[1]
    assert real.params["fieldManager"] == "hpctop"
    assert body(real) == {
        "metadata": {"resourceVersion": wl["metadata"]["resourceVersion"]},
        "spec": {"priority": 500},
    }
    assert fake.get(WORKLOADS, "job-train-7f173", NS)["spec"]["priority"] == 500  # type: ignore[index]


async def test_kueue_priority_refused_once_admitted_and_for_non_numbers(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    kueue_job(fake, suspend=False, admitted=True)
    admitted = await actions.preview(ActionRequest(ActionKind.PRIORITY, WL, value=5))
    assert not admitted.allowed and "QuotaReserved=True" in admitted.refusal
    with pytest.raises(ActionRefused, match="only while"):
        await actions.execute(ActionRequest(ActionKind.PRIORITY, WL, value=5))
    assert fake.writes() == []


async def test_kueue_priority_class_name_patches_the_owner_job_label(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    job, _ = kueue_job(fake, suspend=True)
    request = ActionRequest(ActionKind.PRIORITY, WL, value="research-high")
    preview = await actions.preview(request)
    assert preview.allowed, preview.refusal
    assert "owner of Workload job-train-7f173" in preview.changes[0]
    await actions.execute(request)
    job_path = path(JOBS, "train")
    assert sent(fake) == [("PATCH", job_path, True), ("PATCH", job_path, False)]
    assert body(fake.writes()[1]) == {
        "metadata": {
            "resourceVersion": job["metadata"]["resourceVersion"],
            "labels": {PCLASS: "research-high"},
        }
    }
    assert fake.get(JOBS, "train", NS)["metadata"]["labels"][PCLASS] == "research-high"  # type: ignore[index]


async def test_kueue_move_patches_queue_label_only_while_suspended(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    kueue_job(fake, suspend=False)
    running = await actions.preview(ActionRequest(ActionKind.MOVE, WL, value="team-a-cpu"))
    assert not running.allowed and "only while the job is suspended" in running.refusal
    assert fake.writes() == []

    fake.upsert(JOBS, fake.get(JOBS, "train", NS) | {"spec": {"suspend": True}})  # type: ignore[operator]
    same = await actions.preview(ActionRequest(ActionKind.MOVE, WL, value="team-a-gpu"))
    assert not same.allowed and "already in LocalQueue team-a-gpu" in same.refusal
    result = await actions.execute(ActionRequest(ActionKind.MOVE, WL, value="team-a-cpu"))
    assert result.ok and f'metadata.labels.{QUEUE} = "team-a-cpu"' in result.changes
    assert body(fake.writes()[-1])["metadata"]["labels"] == {QUEUE: "team-a-cpu"}
    assert fake.get(JOBS, "train", NS)["metadata"]["labels"][QUEUE] == "team-a-cpu"  # type: ignore[index]


async def test_kueue_server_refusal_is_shown_verbatim_in_the_preview(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    """Priority mutability is version-dependent (§5.6): an older Kueue's webhook refuses the dry
    run, and the preview shows its words instead of hpctop's guess; nothing real is sent."""
    kueue_job(fake, suspend=True)
    message = 'admission webhook "vworkload.kb.io" denied the request: spec.priority: field is immutable'
    fake.fail_write(WORKLOADS, "patch", 403, message=message)
    preview = await actions.preview(ActionRequest(ActionKind.PRIORITY, WL, value=9))
    assert not preview.allowed and "HTTP 403" in preview.refusal and message in preview.refusal
    assert [dry for _, _, dry in sent(fake)] == [True]


async def test_fake_kueue_webhook_denies_queue_label_change_on_a_running_job(
    fake: FakeApiServer, connection: Connection
) -> None:
    """The fake's webhook itself (what a stale "suspended" would run into): 403, label unchanged."""
    kueue_job(fake, suspend=False)
    client = KubeClient(connection, read_only=False)
    try:
        answer = await client.request(
            "PATCH", path(JOBS, "train"), body={"metadata": {"labels": {QUEUE: "other"}}},
            content_type="application/merge-patch+json",
        )  # fmt: skip
    finally:
        await client.close()
    assert answer.status == 403 and b"vjob.kb.io" in answer.body
    assert fake.get(JOBS, "train", NS)["metadata"]["labels"][QUEUE] == "team-a-gpu"  # type: ignore[index]


async def test_kueue_priority_409_rereads_and_asks_again(fake: FakeApiServer, actions: KubeActions) -> None:
    kueue_job(fake, suspend=True)
    request = ActionRequest(ActionKind.PRIORITY, WL, value=7)
    assert (await actions.preview(request)).allowed
    wl = fake.get(WORKLOADS, "job-train-7f173", NS)
    fake.upsert(WORKLOADS, wl | {"spec": wl["spec"] | {"priority": 300}})  # type: ignore[operator,index]
    with pytest.raises(StaleTarget) as caught:
        await actions.execute(request)
    assert any("spec.priority: 100 → 300" in c for c in caught.value.changed)
    assert caught.value.preview is not None and caught.value.preview.allowed
    assert fake.get(WORKLOADS, "job-train-7f173", NS)["spec"]["priority"] == 300  # type: ignore[index]


# -- SUNK ------------------------------------------------------------------------------------------


async def test_sunk_pod_cancel_deletes_with_uid_only_and_other_actions_are_slurm_side(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    pod = fake.upsert(
        PODS,
        {
            "metadata": {
                "name": "sim-0",
                "namespace": NS,
                "annotations": {"sunk.coreweave.com/partition": "h100"},
            },
            "spec": {"schedulerName": "slurm-slurm-scheduler"},
        },
    )
    key = (NS, "Pod", "sim-0")
    for kind in (ActionKind.HOLD, ActionKind.REQUEUE, ActionKind.PRIORITY):
        preview = await actions.preview(ActionRequest(kind, key, value=5))
        assert not preview.allowed and "Slurm side only" in preview.refusal
    assert fake.writes() == []
    result = await actions.execute(ActionRequest(ActionKind.CANCEL, key, pod["metadata"]["uid"]))
    assert result.ok
    assert sent(fake) == [("DELETE", path(PODS, "sim-0"), False)]  # no Eviction
    options = body(fake.writes()[0])
    assert options["preconditions"] == {"uid": pod["metadata"]["uid"]}
    assert options["propagationPolicy"] == "Background"
    assert fake.get(PODS, "sim-0", NS) is None


# -- coscheduling ------------------------------------------------------------------------------------


def gang(fake: FakeApiServer, *, owned: bool = True) -> tuple[Any, Any]:
    job = fake.upsert(JOBS, {"metadata": {"name": "mpi", "namespace": NS}, "spec": {"suspend": False}})
    refs = [{"apiVersion": "batch/v1", "kind": "Job", "name": "mpi", "uid": job["metadata"]["uid"]}]
    pg = fake.upsert(
        COSCHED_PODGROUPS,
        {
            "metadata": {
                "name": "mpi-bench",
                "namespace": NS,
                **({"ownerReferences": refs} if owned else {}),
            },
            "spec": {"minMember": 8},
        },
    )
    return job, pg


PG = (NS, "PodGroup.scheduling.x-k8s.io", "mpi-bench")


async def test_podgroup_cancel_deletes_owner_then_podgroup(fake: FakeApiServer, actions: KubeActions) -> None:
    job, pg = gang(fake)
    preview = await actions.preview(ActionRequest(ActionKind.CANCEL, PG))
    assert preview.allowed, preview.refusal
    await actions.execute(ActionRequest(ActionKind.CANCEL, PG))
    job_path, pg_path = path(JOBS, "mpi"), path(COSCHED_PODGROUPS, "mpi-bench")
    assert sent(fake) == [("DELETE", job_path, True), ("DELETE", job_path, False), ("DELETE", pg_path, False)]
    owner_opts, pg_opts = body(fake.writes()[1]), body(fake.writes()[2])
    assert owner_opts["preconditions"] == {"uid": job["metadata"]["uid"]}
    assert owner_opts["propagationPolicy"] == pg_opts["propagationPolicy"] == "Background"
    assert pg_opts["preconditions"] == {
        "uid": pg["metadata"]["uid"],
        "resourceVersion": pg["metadata"]["resourceVersion"],
    }
    assert fake.get(JOBS, "mpi", NS) is None and fake.get(COSCHED_PODGROUPS, "mpi-bench", NS) is None


async def test_podgroup_hold_suspends_its_owner_and_without_owner_is_refused(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    job, _ = gang(fake)
    result = await actions.execute(ActionRequest(ActionKind.HOLD, PG))
    assert result.ok and "spec.suspend = true" in result.changes
    assert sent(fake) == [("PATCH", path(JOBS, "mpi"), False)]
    assert body(fake.writes()[0]) == {
        "metadata": {"resourceVersion": job["metadata"]["resourceVersion"]},
        "spec": {"suspend": True},
    }
    fake.remove(COSCHED_PODGROUPS, "mpi-bench", NS)
    fake.remove(JOBS, "mpi", NS)
    gang(fake, owned=False)
    orphan = await actions.preview(ActionRequest(ActionKind.RELEASE, PG))
    assert not orphan.allowed and "no owner job" in orphan.refusal
    priority = await actions.preview(ActionRequest(ActionKind.PRIORITY, PG, value=3))
    assert not priority.allowed and "no priority or queue" in priority.refusal
