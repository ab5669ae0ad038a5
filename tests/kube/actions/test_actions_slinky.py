"""Slinky (SchedMD slurm-bridge, SCHEDULERS.md §8.6/§9.2) priority and partition against the fake
API server, over HTTP: a merge patch of the owner's ``slurmjob.slinky.slurm.net/priority`` or
``/partition`` annotation with its resourceVersion, the dry run first; refused before anything is
sent when the job is not Slinky's, has started (Slurm only takes the change while pending) or the
value is not one Slurm takes. A request the console did not mark as Slinky's keeps the M6 rule:
refused without even a read.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from hpctop.actions.audit import AuditLog
from hpctop.actions.kube import SLINKY_PARTITION, SLINKY_PRIORITY, KubeActions
from hpctop.actions.requests import SLINKY_SCHEDULER, ActionKind, ActionRequest
from hpctop.errors import ActionRefused
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.transport import KubeClient
from tests.kube.fakeserver import JOBS, JOBSETS, FakeApiServer, Rbac, Rule
from tests.model_fixtures import batch_job

pytestmark = pytest.mark.looptime

NS = "team-a"
JOB_PATH = f"/apis/batch/v1/namespaces/{NS}/jobs/sim"


@pytest.fixture
async def actions(connection: Connection, tmp_path: Path) -> AsyncIterator[KubeActions]:
    core = KubeActions(KubeClient(connection, read_only=False), audit=AuditLog(tmp_path / "audit.jsonl"))
    yield core
    await core.close()


def slinky_job(fake: FakeApiServer, *, annotated: bool = True, **status: Any) -> dict[str, Any]:
    job = batch_job("sim")
    job["spec"]["suspend"] = False
    job["spec"]["template"]["spec"]["schedulerName"] = SLINKY_SCHEDULER
    if annotated:
        job["metadata"]["annotations"] = {SLINKY_PARTITION: "gpu", SLINKY_PRIORITY: "100"}
    job["status"] = status
    return fake.upsert(JOBS, job)


def request(kind: ActionKind, value: str | int, scheduler: str = SLINKY_SCHEDULER) -> ActionRequest:
    return ActionRequest(kind, (NS, "Job", "sim"), "uid-sim", value, scheduler=scheduler)


def patches(fake: FakeApiServer) -> list[Any]:
    return [r for r in fake.writes() if str(getattr(r.method, "value", r.method)).upper() == "PATCH"]


@pytest.mark.parametrize(
    ("kind", "value", "key", "before", "after"),
    [
        (ActionKind.PRIORITY, 5000, SLINKY_PRIORITY, "100", "5000"),
        (ActionKind.MOVE, "gpu-long", SLINKY_PARTITION, "gpu", "gpu-long"),
    ],
    ids=["priority", "partition"],
)
async def test_priority_and_partition_are_annotations_of_the_owner(
    fake: FakeApiServer,
    actions: KubeActions,
    kind: ActionKind,
    value: str | int,
    key: str,
    before: str,
    after: str,
) -> None:
    slinky_job(fake, active=2)  # pods exist, none ready: the Slurm job is still pending
    preview = await actions.preview(request(kind, value))
    assert preview.allowed, preview.refusal
    assert f'server dry run: metadata.annotations.{key}: "{before}" → "{after}"' in preview.changes
    assert any("only while the job is pending" in c for c in preview.changes)
    assert any(f"PATCH {JOB_PATH}" in r for r in preview.requests)

    result = await actions.execute(request(kind, value))
    assert result.ok, result.message
    assert f'metadata.annotations.{key} = "{after}"' in result.changes
    dry, real = patches(fake)
    assert dry.params["dryRun"] == "All" and "dryRun" not in real.params
    assert real.headers["Content-Type"].startswith("application/merge-patch+json")
    sent = orjson.loads(real.body)
    assert sent["metadata"]["annotations"] == {key: after}
    assert sent["metadata"]["resourceVersion"] == orjson.loads(dry.body)["metadata"]["resourceVersion"]
    assert set(sent) == {"metadata"}  # nothing else of the job is touched
    job = fake.get(JOBS, "sim", NS)
    assert job is not None and job["metadata"]["annotations"][key] == after


async def test_a_job_named_only_by_its_pods_scheduler_is_slinky_too(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    slinky_job(fake, annotated=False)
    result = await actions.execute(request(ActionKind.PRIORITY, "7"))
    assert result.ok
    job = fake.get(JOBS, "sim", NS)
    assert job is not None and job["metadata"]["annotations"] == {SLINKY_PRIORITY: "7"}


@pytest.mark.parametrize(
    ("status", "kind", "value", "why"),
    [
        ({"ready": 1, "active": 1}, ActionKind.PRIORITY, 1, "is running (status.ready is 1)"),
        ({"succeeded": 1}, ActionKind.MOVE, "cpu", "only while it is pending"),
        ({}, ActionKind.PRIORITY, "high", "whole number of 0 or more; 'high'"),
        ({}, ActionKind.PRIORITY, -3, "whole number of 0 or more; -3"),
        ({}, ActionKind.MOVE, "", "a Slurm partition is a name"),
        ({}, ActionKind.MOVE, "gpu", "already asks for partition gpu"),
    ],
    ids=["running", "finished", "priority-name", "negative", "empty-partition", "same-partition"],
)
async def test_refused_before_anything_is_sent(
    fake: FakeApiServer,
    actions: KubeActions,
    status: dict[str, Any],
    kind: ActionKind,
    value: str | int,
    why: str,
) -> None:
    slinky_job(fake, **status)
    preview = await actions.preview(request(kind, value))
    assert not preview.allowed and why in preview.refusal
    with pytest.raises(ActionRefused, match=why.split(";")[0].replace("(", r"\(").replace(")", r"\)")):
        await actions.execute(request(kind, value))
    assert fake.writes() == []


async def test_not_a_slinky_job_is_refused_after_the_read(fake: FakeApiServer, actions: KubeActions) -> None:
    fake.upsert(JOBS, batch_job("sim"))  # default scheduler, no annotation: the console was wrong
    preview = await actions.preview(request(ActionKind.PRIORITY, 5))
    assert not preview.allowed and "is not scheduled by Slinky" in preview.refusal
    assert "immutable" in preview.refusal
    assert fake.writes() == []


async def test_without_the_slinky_mark_priority_is_refused_without_a_read(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    slinky_job(fake)
    preview = await actions.preview(request(ActionKind.PRIORITY, 5, scheduler="default-scheduler"))
    assert not preview.allowed and "immutable" in preview.refusal
    assert fake.log == []  # M6: no read, no write


async def test_a_jobset_is_annotated_on_the_jobset(fake: FakeApiServer, actions: KubeActions) -> None:
    template = {"spec": {"template": {"spec": {"schedulerName": SLINKY_SCHEDULER, "containers": []}}}}
    fake.upsert(
        JOBSETS,
        {
            "metadata": {"name": "js", "namespace": NS, "uid": "uid-js"},
            "spec": {"replicatedJobs": [{"name": "w", "replicas": 2, "template": template}]},
            "status": {"replicatedJobsStatus": [{"name": "w", "ready": 0, "active": 2}]},
        },
    )
    req = ActionRequest(ActionKind.MOVE, (NS, "JobSet", "js"), "uid-js", "h100", scheduler=SLINKY_SCHEDULER)
    result = await actions.execute(req)
    assert result.ok
    js = fake.get(JOBSETS, "js", NS)
    assert js is not None and js["metadata"]["annotations"] == {SLINKY_PARTITION: "h100"}
    [patch] = [p for p in patches(fake) if "dryRun" not in p.params]
    assert patch.url.path == f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{NS}/jobsets/js"


async def test_the_access_review_asks_for_patch_on_the_owner(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    slinky_job(fake)
    fake.rbac = Rbac(rules=[Rule(verbs=("get", "list", "watch", "create"))])  # no patch
    with pytest.raises(ActionRefused, match=r"patch"):
        await actions.execute(request(ActionKind.PRIORITY, 9))
    assert [w for w in fake.writes() if "dryRun" not in w.params] == []
