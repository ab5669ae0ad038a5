"""What the engine/plan split fixed in the plans' words, against the fake API server over HTTP.

Before the split, one function said what every backend's controllers do next, keyed by the kind
first: a Kueue move of a Workload whose owner is a JobSet (or a Kubeflow job) previewed the JobSet
controller's words for a *release* ("resumes its child Jobs"), not Kueue's; and a SUNK pod's cancel,
a DELETE, previewed as an eviction. Each plan now says what its own request does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from hpctop.actions.kube import KubeActions
from hpctop.actions.requests import ActionKind, ActionRequest
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.transport import KubeClient
from tests.kube.fakeserver import JOBSETS, PODS, PYTORCHJOBS, WORKLOADS, FakeApiServer, Res

pytestmark = pytest.mark.looptime

NS = "team-a"
QUEUE = "kueue.x-k8s.io/queue-name"


@pytest.fixture
async def actions(connection: Connection) -> AsyncIterator[KubeActions]:
    core = KubeActions(KubeClient(connection, read_only=False))
    yield core
    await core.close()


def owned_workload(fake: FakeApiServer, res: Res, spec: dict[str, Any]) -> None:
    """A suspended job of ``res`` under Kueue, and the Workload Kueue made for it."""
    job = fake.upsert(
        res, {"metadata": {"name": "train", "namespace": NS, "labels": {QUEUE: "team-a-gpu"}}, "spec": spec}
    )
    ref = {"apiVersion": res.api_version, "kind": res.kind, "name": "train", "uid": job["metadata"]["uid"]}
    fake.upsert(
        WORKLOADS,
        {
            "metadata": {
                "name": "wl-train",
                "namespace": NS,
                "ownerReferences": [ref | {"controller": True}],
            },
            "spec": {"queueName": "team-a-gpu", "active": True},
        },
    )


@pytest.mark.parametrize(
    ("res", "spec", "not_said"),
    [
        (JOBSETS, {"suspend": True}, "JobSet controller"),
        (PYTORCHJOBS, {"runPolicy": {"suspend": True}}, "training operator"),
    ],
    ids=["jobset", "pytorchjob"],
)
async def test_a_kueue_move_of_a_non_batch_job_says_what_kueue_does(
    fake: FakeApiServer, actions: KubeActions, res: Res, spec: dict[str, Any], not_said: str
) -> None:
    owned_workload(fake, res, spec)
    move = await actions.preview(
        ActionRequest(ActionKind.MOVE, (NS, "Workload", "wl-train"), value="team-a-cpu")
    )
    assert move.allowed, move.refusal
    assert f"acts on {res.kind} train, the owner of Workload wl-train" in move.changes[0]
    assert "Kueue recreates the Workload in the new LocalQueue" in move.changes
    assert not any(not_said in c for c in move.changes), move.changes
    named = await actions.preview(
        ActionRequest(ActionKind.PRIORITY, (NS, "Workload", "wl-train"), value="high")
    )
    assert (
        named.allowed
        and "Kueue propagates the class to the Workload (version-dependent, §5.6)" in named.changes
    )


async def test_a_sunk_pod_cancel_previews_as_the_delete_it_is(
    fake: FakeApiServer, actions: KubeActions
) -> None:
    fake.upsert(
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
    preview = await actions.preview(ActionRequest(ActionKind.CANCEL, (NS, "Pod", "sim-0")))
    assert preview.allowed and preview.requests[0].startswith("DELETE /api/v1/namespaces/team-a/pods/sim-0")
    assert preview.changes[0].startswith("server dry run: Pod team-a/sim-0 would be")
    assert "evicted" not in preview.changes[0]
