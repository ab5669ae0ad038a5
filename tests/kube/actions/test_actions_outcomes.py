"""Each write outcome has its own value, and the console's summary counts it (issue 12's caveat).

Before, ``ActionResult.outcome`` was "done" or "gone" only: a conflict (409), a refusal by the
server (403 from RBAC, 422 from validation) and a lost answer that re-reading could not settle
were all "failed" in a bulk action's results and in the console's one-line summary. Each case
here goes over HTTP to the fake API server and checks the outcome the bulk action reports, the
error type a single execute raises, and the summary line.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hpctop.actions.audit import AuditLog
from hpctop.actions.kube import KubeActions, StaleTarget
from hpctop.actions.requests import (
    ActionForbidden,
    ActionKind,
    ActionRequest,
    ActionResult,
    Outcome,
    OutcomeUnknown,
    ServerRejected,
    outcome_of,
    summary,
)
from hpctop.errors import ActionFailed, ActionRefused
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.transport import KubeClient
from tests.kube.fakeserver import COMMANDS, JOBS, PODS, VCJOBS, FakeApiServer, Rbac, Rule
from tests.model_fixtures import batch_job, pod

pytestmark = pytest.mark.looptime

TRAIN = ("team-a", "Job", "train")
VC = ("team-a", "Job.batch.volcano.sh", "llm-pt")


@pytest.fixture
async def actions(connection: Connection, tmp_path: Path) -> AsyncIterator[KubeActions]:
    client = KubeClient(connection, read_only=False)
    core = KubeActions(client, audit=AuditLog(tmp_path / "audit.jsonl"), phase_timeout=3, poll_interval=1)
    yield core
    await core.close()


def seed(fake: FakeApiServer) -> None:
    obj: dict[str, Any] = batch_job("train", parallelism=1)
    obj["status"] = {"active": 1}
    fake.upsert(JOBS, obj)
    fake.upsert(PODS, pod("train-0", owner=("Job", "train"), node="n1", phase="Running"))


async def only(actions: KubeActions, request: ActionRequest) -> ActionResult:
    [result] = await actions.execute_many([request])
    return result


async def test_a_409_is_a_conflict(fake: FakeApiServer, actions: KubeActions) -> None:
    seed(fake)
    request = ActionRequest(ActionKind.CANCEL, TRAIN, job_uid="uid-train")
    assert (await actions.preview(request)).allowed
    changed = fake.get(JOBS, "train", "team-a")
    assert changed is not None
    changed["spec"]["suspend"] = True  # someone held it between the preview and the confirm
    fake.upsert(JOBS, changed)
    result = await only(actions, request)
    assert not result.ok and result.outcome == Outcome.CONFLICT
    assert "changed since you saw it" in result.message and fake.get(JOBS, "train", "team-a") is not None
    assert summary("cancel", [result]) == "cancel: 0 done, 1 changed since you saw it (nothing done)"


async def test_a_403_from_the_server_is_refused(fake: FakeApiServer, actions: KubeActions) -> None:
    seed(fake)
    fake.rbac = Rbac(refused=[Rule(verbs=("delete",))])  # the review allows it, the server does not
    with pytest.raises(ActionForbidden) as caught:
        await actions.execute(ActionRequest(ActionKind.CANCEL, TRAIN))
    assert outcome_of(caught.value) == Outcome.REFUSED
    result = await only(actions, ActionRequest(ActionKind.CANCEL, TRAIN))
    assert not result.ok and result.outcome == Outcome.REFUSED and "(403)" in result.message
    assert summary("cancel", [result]) == "cancel: 0 done, 1 refused"


async def test_a_422_from_validation_is_refused(fake: FakeApiServer, actions: KubeActions) -> None:
    seed(fake)
    fake.immutable[JOBS].append(("spec", "suspend"))  # e.g. an admission policy pins it
    with pytest.raises(ServerRejected, match=r"rejected hold.*spec\.suspend"):
        await actions.execute(ActionRequest(ActionKind.HOLD, TRAIN))
    result = await only(actions, ActionRequest(ActionKind.HOLD, TRAIN))
    assert not result.ok and result.outcome == Outcome.REFUSED


async def test_an_admission_webhooks_denial_is_refused(fake: FakeApiServer, actions: KubeActions) -> None:
    seed(fake)
    denial = 'admission webhook "vjob.kb.io" denied the request: spec.suspend: field is managed by Kueue'
    fake.fail_write(JOBS, "patch", 400, reason="BadRequest", message=denial)
    result = await only(actions, ActionRequest(ActionKind.HOLD, TRAIN))
    assert not result.ok and result.outcome == Outcome.REFUSED
    assert result.message.startswith("the server rejected hold of Job team-a/train: admission webhook")
    assert len([w for w in fake.writes() if "dryRun" not in w.params]) == 1  # not retried


async def test_a_refusal_before_sending_is_refused(fake: FakeApiServer, actions: KubeActions) -> None:
    seed(fake)
    result = await only(actions, ActionRequest(ActionKind.PRIORITY, TRAIN, value=10))
    assert not result.ok and result.outcome == Outcome.REFUSED and "immutable" in result.message
    assert fake.writes() == []


async def test_a_lost_answer_that_rereading_cannot_settle_is_unknown(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    fake.volcano_controller = False  # the Command is stored, and nothing moves the phase
    fake.upsert(
        VCJOBS,
        {
            "metadata": {"name": "llm-pt", "namespace": "team-a"},
            "spec": {"queue": "default", "minAvailable": 1},
            "status": {"state": {"phase": "Running"}},
        },
    )
    fake.fail_write(COMMANDS, "create", applied=True, mode="reset")
    with pytest.raises(OutcomeUnknown, match="outcome unknown"):
        await actions.execute(ActionRequest(ActionKind.HOLD, VC))
    fake.fail_write(COMMANDS, "create", applied=True, mode="reset")
    result = await only(actions, ActionRequest(ActionKind.HOLD, VC))
    assert not result.ok and result.outcome == Outcome.UNKNOWN
    assert "safe to try again" not in result.message  # a stored Command may still act (M5)
    assert "Check `kubectl get commands.bus.volcano.sh -n team-a`" in result.message
    assert [r.method for r in fake.writes() if "dryRun" not in r.params] == ["POST", "POST"]  # never resent
    unknown = "1 outcome unknown (check the cluster before trying again)"
    assert summary("hold", [result]) == f"hold: 0 done, {unknown}"


async def test_a_lost_answer_shown_unchanged_is_failed_not_unknown(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    seed(fake)
    fake.fail_write(JOBS, "patch", 500)  # answered before any change: re-reading shows it unchanged
    result = await only(actions, ActionRequest(ActionKind.HOLD, TRAIN))
    assert not result.ok and result.outcome == Outcome.FAILED and "safe to try again" in result.message


def test_the_summary_counts_every_outcome_in_order() -> None:
    request = ActionRequest(ActionKind.HOLD, TRAIN)
    results: list[ActionResult | ActionFailed | ActionRefused] = [
        ActionResult(request, True, "held"),
        ActionResult(request, True, "gone", outcome=Outcome.GONE),
        StaleTarget("changed", changed=("x",), preview=None),
        ActionForbidden("403", namespace="team-a", kind="Job", action=ActionKind.HOLD),
        ServerRejected("422"),
        ActionRefused("not allowed"),
        OutcomeUnknown("lost"),
        ActionFailed("throttled"),
    ]
    assert summary("hold", results) == (
        "hold: 1 done, 1 already gone (deleted before the hold arrived), 1 changed since you saw it "
        "(nothing done), 3 refused, 1 outcome unknown (check the cluster before trying again), 1 failed"
    )
    assert summary("cancel", [ActionResult(request, True, "x")] * 2) == "cancel: 2 done"
    assert summary("cancel", [ActionResult(request, True, "x", outcome=Outcome.GONE)]) == (
        "cancel: 1 already gone (deleted before the cancel arrived)"
    )
