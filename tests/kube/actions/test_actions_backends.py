"""Actions on the backends' owner kinds (SCHEDULERS.md §9.2) against the fake API server, over HTTP.

Each test asserts on what the server received (method, path, query, body, in order: the dry run
first) and on what it holds afterwards, because a request that "looks right" to the actuator but
does not change the object, or changes it without a precondition, is exactly the bug to catch.
Loop time is virtual (looptime): the bounded waits (Kueue eviction, Volcano phase) cost nothing.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from hpctop.actions.audit import AuditLog
from hpctop.actions.kube import KubeActions, StaleTarget
from hpctop.actions.requests import ActionKind, ActionRequest
from hpctop.errors import ActionFailed, ActionRefused
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.transport import KubeClient
from tests.kube.fakeserver import (
    ALL,
    COMMANDS,
    JOBS,
    JOBSETS,
    LWS,
    MPIJOBS,
    MPIJOBS_V1,
    PODS,
    PYTORCHJOBS,
    TFJOBS,
    VCJOBS,
    WORKLOADS,
    FakeApiServer,
    Rbac,
    Res,
    Rule,
)
from tests.model_fixtures import pod

pytestmark = pytest.mark.looptime

NS = "team-a"
VC = "Job.batch.volcano.sh"


def put(fake: FakeApiServer, res: Res, name: str, spec: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return fake.upsert(res, {"metadata": {"name": name, "namespace": NS}, "spec": spec, **extra})


def path(res: Res, name: str = "") -> str:
    base = f"/apis/{res.group}/{res.version}/namespaces/{NS}/{res.plural}"
    return f"{base}/{name}" if name else base


def writes(fake: FakeApiServer, method: str | None = None) -> list[Any]:
    return [r for r in fake.writes() if method is None or r.method == method]


def body(request: Any) -> Any:
    return orjson.loads(request.body)


def sent(fake: FakeApiServer) -> list[tuple[str, str, bool]]:
    """(method, path, dry run) of every write, in order."""
    return [
        (str(getattr(r.method, "value", r.method)), r.url.path, r.params.get("dryRun") == "All")
        for r in writes(fake)
    ]


async def preview_then_execute(actions: KubeActions, request: ActionRequest) -> Any:
    preview = await actions.preview(request)
    assert preview.allowed, preview.refusal
    return await actions.execute(request)


# -- JobSet ------------------------------------------------------------------------------------------


async def test_jobset_cancel_deletes_background_with_preconditions(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    js = put(fake, JOBSETS, "llm", {"suspend": False})
    uid, rv = js["metadata"]["uid"], js["metadata"]["resourceVersion"]
    child = {"name": "llm-workers-0", "namespace": NS, "ownerReferences": [{"uid": uid, "controller": True}]}
    fake.upsert(JOBS, {"metadata": child, "spec": {}})
    result = await preview_then_execute(actions, ActionRequest(ActionKind.CANCEL, (NS, "JobSet", "llm"), uid))
    assert result.ok and "cancelled" in result.message
    assert sent(fake) == [("DELETE", path(JOBSETS, "llm"), True), ("DELETE", path(JOBSETS, "llm"), False)]
    options = body(writes(fake)[1])
    assert options["propagationPolicy"] == "Background"
    assert options["preconditions"] == {"uid": uid, "resourceVersion": rv}
    assert fake.items_of(JOBSETS) == {} and fake.items_of(JOBS) == {}  # the child Job went too


async def test_jobset_hold_release_requeue_patch_spec_suspend(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    rv = put(fake, JOBSETS, "llm", {"suspend": False})["metadata"]["resourceVersion"]
    key = (NS, "JobSet", "llm")
    held = await preview_then_execute(actions, ActionRequest(ActionKind.HOLD, key))
    assert held.ok and "spec.suspend = true" in held.changes
    dry, real = writes(fake, "PATCH")
    assert dry.params["dryRun"] == "All" and "dryRun" not in real.params
    assert (
        real.headers["Content-Type"] == "application/merge-patch+json"
        and real.params["fieldManager"] == "hpctop"
    )
    assert body(real) == {"metadata": {"resourceVersion": rv}, "spec": {"suspend": True}}
    assert fake.get(JOBSETS, "llm", NS)["spec"]["suspend"] is True  # type: ignore[index]

    with pytest.raises(ActionRefused, match="already held"):
        await actions.execute(ActionRequest(ActionKind.HOLD, key))
    released = await actions.execute(ActionRequest(ActionKind.RELEASE, key))
    assert released.ok and fake.get(JOBSETS, "llm", NS)["spec"]["suspend"] is False  # type: ignore[index]

    before = fake.get(JOBSETS, "llm", NS)
    assert before is not None
    n = len(writes(fake))
    requeued = await actions.execute(ActionRequest(ActionKind.REQUEUE, key))
    hold, release = writes(fake)[n:]
    assert body(hold)["spec"] == {"suspend": True} and body(release)["spec"] == {"suspend": False}
    assert body(hold)["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert int(body(release)["metadata"]["resourceVersion"]) > int(before["metadata"]["resourceVersion"])
    after = fake.get(JOBSETS, "llm", NS)
    assert requeued.ok and after is not None and after["spec"]["suspend"] is False
    assert after["metadata"]["uid"] == before["metadata"]["uid"]


async def test_jobset_hold_409_rereads_and_raises_stale_target(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    put(fake, JOBSETS, "llm", {"suspend": False, "replicatedJobs": []})
    request = ActionRequest(ActionKind.HOLD, (NS, "JobSet", "llm"))
    assert (await actions.preview(request)).allowed
    changed = fake.get(JOBSETS, "llm", NS)
    assert changed is not None
    changed["status"] = {"conditions": [{"type": "StartupPolicyCompleted", "status": "True"}]}
    fake.upsert(JOBSETS, changed)  # the controller moved it on meanwhile: a new resourceVersion
    with pytest.raises(StaleTarget) as info:
        await actions.execute(request)
    assert "condition StartupPolicyCompleted: (unset) → True" in info.value.changed
    assert info.value.preview is not None and info.value.preview.allowed
    assert fake.get(JOBSETS, "llm", NS)["spec"]["suspend"] is False  # type: ignore[index]
    real = [r for r in writes(fake, "PATCH") if "dryRun" not in r.params]
    assert len(real) == 1  # the refused one: never retried by itself


async def test_jobset_managed_by_kueue_is_held_through_its_workload(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    fake.upsert(
        JOBSETS,
        {
            "metadata": {"name": "q", "namespace": NS, "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
            "spec": {},
        },
    )
    preview = await actions.preview(ActionRequest(ActionKind.HOLD, (NS, "JobSet", "q")))
    assert not preview.allowed and "Kueue" in preview.refusal and writes(fake) == []


# -- Kubeflow ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "res"),
    [("PyTorchJob", PYTORCHJOBS), ("TFJob", TFJOBS), ("MPIJob", MPIJOBS), ("MPIJob", MPIJOBS_V1)],
    ids=["pytorch", "tf", "mpi-v2beta1", "mpi-v1"],
)
async def test_kubeflow_hold_release_cancel(
    fake: FakeApiServer, actions: KubeActions, kind: str, res: Res
) -> None:
    if res == MPIJOBS_V1:  # training-operator's MPIJob: its CRD serves v1 only, so no v2beta1
        fake.served = tuple(r for r in ALL if r != MPIJOBS)
    job = put(fake, res, "bert", {"runPolicy": {"suspend": False, "cleanPodPolicy": "None"}})
    key = (NS, kind, "bert")
    held = await preview_then_execute(actions, ActionRequest(ActionKind.HOLD, key))
    assert held.ok and "spec.runPolicy.suspend = true" in held.changes
    dry, real = writes(fake, "PATCH")
    assert dry.url.path == real.url.path == path(res, "bert") and dry.params["dryRun"] == "All"
    assert body(real) == {
        "metadata": {"resourceVersion": job["metadata"]["resourceVersion"]},
        "spec": {"runPolicy": {"suspend": True}},
    }
    assert fake.get(res, "bert", NS)["spec"]["runPolicy"] == {"suspend": True, "cleanPodPolicy": "None"}  # type: ignore[index]
    assert (await actions.execute(ActionRequest(ActionKind.RELEASE, key))).ok
    assert fake.get(res, "bert", NS)["spec"]["runPolicy"]["suspend"] is False  # type: ignore[index]
    cancelled = await actions.execute(ActionRequest(ActionKind.CANCEL, key, job["metadata"]["uid"]))
    [delete] = writes(fake, "DELETE")
    assert cancelled.ok and delete.url.path == path(res, "bert")
    assert body(delete)["propagationPolicy"] == "Background" and fake.items_of(res) == {}


async def test_kubeflow_finished_job_is_not_held(fake: FakeApiServer, actions: KubeActions) -> None:
    put(
        fake,
        PYTORCHJOBS,
        "done",
        {"runPolicy": {}},
        status={"conditions": [{"type": "Succeeded", "status": "True"}]},
    )
    preview = await actions.preview(ActionRequest(ActionKind.HOLD, (NS, "PyTorchJob", "done")))
    assert not preview.allowed and "finished (Succeeded)" in preview.refusal and writes(fake) == []


# -- Volcano -----------------------------------------------------------------------------------------


def vcjob(fake: FakeApiServer, phase: str = "Running", pods: int = 2) -> dict[str, Any]:
    job = put(
        fake, VCJOBS, "llm-pt", {"queue": "default", "minAvailable": pods}, status={"state": {"phase": phase}}
    )
    for i in range(pods):
        member = pod(f"llm-pt-w-{i}", node="n1", phase="Running")
        member["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "name": "llm-pt",
                "uid": job["metadata"]["uid"],
            }
        ]
        fake.upsert(PODS, member)
    return job


def vc_phase(fake: FakeApiServer) -> str:
    return str(fake.get(VCJOBS, "llm-pt", NS)["status"]["state"]["phase"])  # type: ignore[index]


async def test_volcano_cancel_deletes_the_vcjob(fake: FakeApiServer, actions: KubeActions) -> None:
    job = vcjob(fake)
    result = await preview_then_execute(actions, ActionRequest(ActionKind.CANCEL, (NS, VC, "llm-pt")))
    assert result.ok
    assert sent(fake) == [("DELETE", path(VCJOBS, "llm-pt"), True), ("DELETE", path(VCJOBS, "llm-pt"), False)]
    assert body(writes(fake)[1])["preconditions"]["uid"] == job["metadata"]["uid"]
    assert fake.items_of(VCJOBS) == {} and fake.items_of(PODS) == {}


async def test_volcano_hold_release_requeue_are_commands_and_the_phase_moves(
    fake: FakeApiServer, actions: KubeActions, audit: AuditLog
) -> None:
    uid = vcjob(fake)["metadata"]["uid"]
    key = (NS, VC, "llm-pt")
    ref = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "name": "llm-pt",
        "uid": uid,
        "controller": True,
    }
    preview = await actions.preview(ActionRequest(ActionKind.HOLD, key))
    assert preview.allowed and any("Command AbortJob" in c for c in preview.changes)
    assert vc_phase(fake) == "Running" and fake.volcano_handled == []  # a dry run is not handled

    held = await actions.execute(ActionRequest(ActionKind.HOLD, key))
    assert held.ok and "status.state.phase: Running → Aborted" in held.changes
    assert vc_phase(fake) == "Aborted" and fake.items_of(PODS) == {}
    assert sent(fake) == [("POST", path(COMMANDS), True), ("POST", path(COMMANDS), False)]
    command = body(writes(fake)[1])
    assert command["action"] == "AbortJob" and command["target"] == ref
    assert command["metadata"]["ownerReferences"] == [ref] and command["metadata"]["namespace"] == NS
    assert command["metadata"]["generateName"] == "llm-pt-abortjob-"
    assert fake.items_of(COMMANDS) == {}  # consumed by the controller, as Volcano does

    with pytest.raises(ActionRefused, match="already held"):
        await actions.execute(ActionRequest(ActionKind.HOLD, key))
    with pytest.raises(ActionRefused, match="release it instead"):
        await actions.execute(ActionRequest(ActionKind.REQUEUE, key))
    released = await actions.execute(ActionRequest(ActionKind.RELEASE, key))
    assert released.ok and "status.state.phase: Aborted → Running" in released.changes
    requeued = await actions.execute(ActionRequest(ActionKind.REQUEUE, key))
    assert requeued.ok and "status.state.phase: Running → Restarting" in requeued.changes
    assert [c["action"] for c in fake.volcano_handled] == ["AbortJob", "ResumeJob", "RestartJob"]
    intents = [r for r in audit.read() if r.phase == "intent"]
    assert [r.action for r in intents] == ["hold", "release", "requeue"]
    assert all(r.path == path(COMMANDS) and r.uid == uid for r in intents)


async def test_volcano_command_without_a_controller_is_reported_unconfirmed(
    fake: FakeApiServer, connection: Connection
) -> None:
    fake.volcano_controller = False
    vcjob(fake)
    loop = asyncio.get_running_loop()
    async with KubeClient(connection, read_only=False) as client:
        core = KubeActions(client, phase_timeout=5, poll_interval=1)
        start = loop.time()
        result = await core.execute(ActionRequest(ActionKind.HOLD, (NS, VC, "llm-pt")))
    assert result.ok and "not yet confirmed" in result.message
    assert any("still Running after 5s" in c and "do not send it again" in c for c in result.changes)
    assert 5 <= loop.time() - start < 7 and len(writes(fake, "POST")) == 1  # bounded, never resent


async def test_volcano_priority_patches_priority_class_only_while_pending(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    rv = vcjob(fake, phase="Pending", pods=0)["metadata"]["resourceVersion"]
    key = (NS, VC, "llm-pt")
    result = await preview_then_execute(actions, ActionRequest(ActionKind.PRIORITY, key, value="urgent"))
    assert result.ok and 'spec.priorityClassName = "urgent"' in result.changes
    dry, real = writes(fake, "PATCH")
    assert dry.params["dryRun"] == "All" and real.url.path == path(VCJOBS, "llm-pt")
    assert body(real) == {"metadata": {"resourceVersion": rv}, "spec": {"priorityClassName": "urgent"}}
    assert fake.get(VCJOBS, "llm-pt", NS)["spec"]["priorityClassName"] == "urgent"  # type: ignore[index]

    running = fake.get(VCJOBS, "llm-pt", NS)
    assert running is not None
    running["status"]["state"]["phase"] = "Running"
    fake.upsert(VCJOBS, running)
    n = len(writes(fake))
    preview = await actions.preview(ActionRequest(ActionKind.PRIORITY, key, value="low"))
    assert not preview.allowed and "only while it is Pending" in preview.refusal
    with pytest.raises(ActionRefused, match="PriorityClass"):
        await actions.execute(ActionRequest(ActionKind.PRIORITY, key, value=5))
    assert len(writes(fake)) == n


async def test_volcano_move_and_priority_elsewhere_are_refused(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    vcjob(fake)
    move = await actions.preview(ActionRequest(ActionKind.MOVE, (NS, VC, "llm-pt"), value="other"))
    assert not move.allowed and "spec.queue is immutable" in move.refusal
    js = await actions.preview(ActionRequest(ActionKind.PRIORITY, (NS, "JobSet", "x"), value="urgent"))
    assert not js.allowed and "immutable" in js.refusal
    with pytest.raises(ActionRefused, match=r"spec\.queue is immutable"):
        await actions.execute(ActionRequest(ActionKind.MOVE, (NS, VC, "llm-pt"), value="other"))
    assert writes(fake) == []


# -- Kueue requeue -----------------------------------------------------------------------------------


def admitted_workload(fake: FakeApiServer) -> dict[str, Any]:
    conditions = [{"type": "QuotaReserved", "status": "True"}, {"type": "Admitted", "status": "True"}]
    return put(
        fake,
        WORKLOADS,
        "job-train-1a2b",
        {"active": True, "queueName": "lq"},
        status={"conditions": conditions},
    )


async def test_kueue_requeue_walks_through_evicted(fake: FakeApiServer, actions: KubeActions) -> None:
    fake.kueue_evict_after = 5.0
    wl = admitted_workload(fake)
    key = (NS, "Workload", "job-train-1a2b")
    loop = asyncio.get_running_loop()
    start = loop.time()
    result = await preview_then_execute(actions, ActionRequest(ActionKind.REQUEUE, key))
    assert 5 <= loop.time() - start < 8
    assert result.ok and "requeued" in result.message
    assert result.changes == (
        "spec.active = false",
        "Evicted=True (Deactivated) after 5s",
        "spec.active = true",
    )
    dry, hold, release = writes(fake, "PATCH")
    assert dry.params["dryRun"] == "All" and body(dry) == body(hold)
    assert body(hold) == {
        "metadata": {"resourceVersion": wl["metadata"]["resourceVersion"]},
        "spec": {"active": False},
    }
    # the release carries the RV of the read that saw the eviction (Kueue rewrote the status)
    assert body(release)["spec"] == {"active": True}
    evicted_rv = int(body(release)["metadata"]["resourceVersion"])
    assert evicted_rv > int(wl["metadata"]["resourceVersion"]) + 1
    after = fake.get(WORKLOADS, "job-train-1a2b", NS)
    assert after is not None and after["spec"]["active"] is True
    status = {c["type"]: (c["status"], c.get("reason")) for c in after["status"]["conditions"]}
    assert status["Requeued"] == ("True", "Reactivated") and status["QuotaReserved"][0] == "False"


async def test_kueue_requeue_without_eviction_stops_held_and_says_so(
    fake: FakeApiServer, connection: Connection
) -> None:
    admitted_workload(fake)  # kueue_evict_after is None: nothing evicts it
    async with KubeClient(connection, read_only=False) as client:
        core = KubeActions(client, evict_timeout=10, poll_interval=2)
        with pytest.raises(ActionFailed, match="did not evict it within 10s; it is left held"):
            await core.execute(ActionRequest(ActionKind.REQUEUE, (NS, "Workload", "job-train-1a2b")))
    assert [body(w)["spec"] for w in writes(fake, "PATCH")] == [{"active": False}]
    assert fake.get(WORKLOADS, "job-train-1a2b", NS)["spec"]["active"] is False  # type: ignore[index]


async def test_kueue_requeue_of_a_held_workload_is_refused(fake: FakeApiServer, actions: KubeActions) -> None:
    put(fake, WORKLOADS, "wl", {"active": False})
    preview = await actions.preview(ActionRequest(ActionKind.REQUEUE, (NS, "Workload", "wl")))
    assert not preview.allowed and "release it instead" in preview.refusal and writes(fake) == []


# -- LeaderWorkerSet ---------------------------------------------------------------------------------


async def test_lws_hold_scales_to_zero_and_release_restores(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    lws = put(fake, LWS, "vllm", {"replicas": 3, "leaderWorkerTemplate": {"size": 4}})
    key = (NS, "LeaderWorkerSet", "vllm")
    held = await preview_then_execute(actions, ActionRequest(ActionKind.HOLD, key))
    assert held.ok and "spec.replicas = 0" in held.changes
    real = writes(fake, "PATCH")[1]
    assert real.url.path == path(LWS, "vllm")
    assert body(real) == {
        "metadata": {
            "resourceVersion": lws["metadata"]["resourceVersion"],
            "annotations": {"hpctop.io/held-replicas": "3"},
        },
        "spec": {"replicas": 0},
    }
    assert (await actions.execute(ActionRequest(ActionKind.RELEASE, key))).ok
    after = fake.get(LWS, "vllm", NS)
    assert after is not None and after["spec"]["replicas"] == 3
    assert "hpctop.io/held-replicas" not in (after["metadata"].get("annotations") or {})
    requeue = await actions.preview(ActionRequest(ActionKind.REQUEUE, key))
    assert not requeue.allowed and "then release it" in requeue.refusal
    cancelled = await actions.execute(ActionRequest(ActionKind.CANCEL, key))
    assert cancelled.ok and fake.items_of(LWS) == {}
    assert body(writes(fake, "DELETE")[0])["propagationPolicy"] == "Background"


# -- unknown kinds, permissions ----------------------------------------------------------------------


async def test_unknown_kinds_are_refused_naming_the_kind(fake: FakeApiServer, actions: KubeActions) -> None:
    sts = await actions.preview(ActionRequest(ActionKind.CANCEL, (NS, "StatefulSet", "db")))
    assert not sts.allowed and "StatefulSet" in sts.refusal and "JobSet" in sts.refusal
    with pytest.raises(ActionRefused, match=r"PodGroup\.scheduling\.volcano\.sh"):
        await actions.execute(ActionRequest(ActionKind.HOLD, (NS, "PodGroup.scheduling.volcano.sh", "pg")))
    perms = await actions.permissions(NS, "TrainJob")
    assert all(p.allowed is False and "TrainJob" in p.reason for p in perms.values())
    assert writes(fake) == []


async def test_permissions_name_the_backend_verbs(fake: FakeApiServer, actions: KubeActions) -> None:
    fake.rbac = Rbac(rules=[Rule(verbs=("create",), groups=("bus.volcano.sh",), resources=("commands",))])
    vc = await actions.permissions(NS, VC)
    assert vc[ActionKind.HOLD].allowed and vc[ActionKind.RELEASE].allowed and vc[ActionKind.REQUEUE].allowed
    assert (
        vc[ActionKind.CANCEL].allowed is False
        and "delete jobs.batch.volcano.sh" in vc[ActionKind.CANCEL].reason
    )
    assert (
        vc[ActionKind.PRIORITY].allowed is False
        and "patch jobs.batch.volcano.sh" in vc[ActionKind.PRIORITY].reason
    )
    assert "immutable" in vc[ActionKind.MOVE].reason
    actions.forget()
    fake.rbac = Rbac(rules=[Rule(verbs=("patch",), groups=("kubeflow.org",), resources=("pytorchjobs",))])
    kf = await actions.permissions(NS, "PyTorchJob")
    assert kf[ActionKind.HOLD].allowed and kf[ActionKind.CANCEL].allowed is False
    js = await actions.permissions(NS, "JobSet")
    assert (
        js[ActionKind.HOLD].allowed is False and "patch jobsets.jobset.x-k8s.io" in js[ActionKind.HOLD].reason
    )


async def test_access_review_denial_sends_nothing_and_is_audited(
    fake: FakeApiServer, actions: KubeActions, audit: AuditLog
) -> None:
    vcjob(fake)
    fake.rbac = Rbac(rules=[Rule(verbs=("get", "list", "watch"))])
    with pytest.raises(ActionRefused, match="create commands"):
        await actions.execute(ActionRequest(ActionKind.HOLD, (NS, VC, "llm-pt")))
    assert writes(fake) == [] and vc_phase(fake) == "Running"
    assert [(r.phase, r.ok) for r in audit.read()] == [("refused", False)]
