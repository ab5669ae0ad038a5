"""Kueue's pending positions from its visibility API, polled by the live console (SCHEDULERS.md §5.5).

The FakeApiServer serves ``visibility.kueue.x-k8s.io`` computed from the Workloads it stores, as
Kueue orders them (priority, then creation time); a live console session over real HTTP reads the
ClusterQueue (with pending workloads) through its reflectors, discovers the group, polls it and
shows where each pending job stands, by the job's key. A cluster without the API is asked once
and then left alone; a 403 is a note in the status bar.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson

from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.sources.kube.kueue_visibility import parse_pending, served_version
from hpctop.sources.kube.resources import DEFAULT_RESOURCES, kueue_resources
from hpctop.tui.app import make_app
from tests.kube.conftest import live_console
from tests.kube.fakeserver import CLUSTER_QUEUES, JOBS, LOCAL_QUEUES, WORKLOADS, FakeApiServer, Rule
from tests.model_fixtures import batch_job
from tests.polling import until

KUEUE = [r for r in kueue_resources() if r.plural in ("workloads", "clusterqueues", "localqueues")]
CQ = "gpu-a"
NS = "team-a"


def put_queues(fake: FakeApiServer, pending: int) -> None:
    quota = {"name": "nvidia.com/gpu", "nominalQuota": "8"}
    spec = {
        "namespaceSelector": {},
        "queueingStrategy": "BestEffortFIFO",
        "resourceGroups": [
            {"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "h100", "resources": [quota]}]}
        ],
    }
    fake.upsert(
        CLUSTER_QUEUES, {"metadata": {"name": CQ}, "spec": spec, "status": {"pendingWorkloads": pending}}
    )
    for queue in ("lq-a", "lq-b"):
        fake.upsert(
            LOCAL_QUEUES,
            {"metadata": {"name": queue, "namespace": NS}, "spec": {"clusterQueue": CQ}, "status": {}},
        )


def put_job(
    fake: FakeApiServer, name: str, queue: str, priority: int, created: str, admitted: bool = False
) -> None:
    job = batch_job(name, suspend=not admitted)
    job["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": queue}
    fake.upsert(JOBS, job)
    conditions = [{"type": "QuotaReserved", "status": "True"}] if admitted else []
    fake.upsert(
        WORKLOADS,
        {
            "metadata": {
                "name": f"job-{name}-1a2b",
                "namespace": NS,
                "creationTimestamp": created,
                "ownerReferences": [
                    {
                        "apiVersion": "batch/v1",
                        "kind": "Job",
                        "name": name,
                        "uid": f"uid-{name}",
                        "controller": True,
                    }
                ],
            },
            "spec": {"queueName": queue, "priority": priority, "active": True},
            "status": {"conditions": conditions},
        },
    )


def positions(session: LiveConsoleSession) -> dict[str, tuple[int, int, str]]:
    return {
        key[2]: (p.in_cluster_queue, p.in_local_queue, p.local_queue)
        for key, p in session.kueue_positions.by_job.items()
    }


async def test_pending_positions_follow_kueue(fake: FakeApiServer, kubeconfig: Path) -> None:
    fake.kueue_visibility = "v1beta2"
    put_queues(fake, pending=3)
    put_job(fake, "old", "lq-a", 10, "2026-01-01T00:00:00Z")
    put_job(fake, "urgent", "lq-b", 100, "2026-01-01T00:05:00Z")
    put_job(fake, "new", "lq-a", 10, "2026-01-01T00:10:00Z")
    put_job(fake, "running", "lq-a", 1000, "2026-01-01T00:00:00Z", admitted=True)
    async with live_console(
        kubeconfig,
        resources=(*DEFAULT_RESOURCES, *KUEUE),
        kueue_interval=0.1,
        ready=lambda session: len(session.kueue_positions.by_job) == 3,
        what="Kueue's positions",
    ) as session:
        # by priority, then age; positions in the LocalQueue count that queue only; admitted: absent
        assert positions(session) == {"urgent": (0, 0, "lq-b"), "old": (1, 0, "lq-a"), "new": (2, 1, "lq-a")}
        position = session.kueue_position((NS, "Job", "new"))
        assert position is not None and position.workload == "job-new-1a2b" and position.cluster_queue == CQ
        assert session.kueue_position((NS, "Job", "running")) is None
        assert "Kueue" not in session.connection
        # the job's detail shows Kueue's own position beside hpctop's
        app = make_app(session, tick_interval=0)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            detail = app._detail((NS, "Job", "new")).plain
        assert "Kueue position 3 in ClusterQueue gpu-a, 2 in LocalQueue lq-a" in detail

        # the queue moves: "old" is admitted, "new" is bumped above everything
        wl = fake.get(WORKLOADS, "job-old-1a2b", NS)
        assert wl is not None
        wl["status"] = {"conditions": [{"type": "QuotaReserved", "status": "True"}]}
        fake.upsert(WORKLOADS, wl)
        wl = fake.get(WORKLOADS, "job-new-1a2b", NS)
        assert wl is not None
        wl["spec"]["priority"] = 500
        fake.upsert(WORKLOADS, wl)
        await until(
            lambda: positions(session) == {"new": (0, 0, "lq-a"), "urgent": (1, 0, "lq-b")}, what="moves"
        )
    asked = set(fake.visibility_requests)
    assert asked == {
        "/apis/visibility.kueue.x-k8s.io",
        f"/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/{CQ}/pendingworkloads",
    }


async def test_without_the_api_nothing_more_is_asked_and_nothing_is_said(
    fake: FakeApiServer, kubeconfig: Path
) -> None:
    put_queues(fake, pending=1)  # kueue_visibility None: the group is not served
    put_job(fake, "old", "lq-a", 10, "2026-01-01T00:00:00Z")
    async with live_console(
        kubeconfig,
        resources=(*DEFAULT_RESOURCES, *KUEUE),
        kueue_interval=0.05,
        ready=lambda session: session.synced,
        what="sync",
    ) as session:
        await asyncio.sleep(0.5)  # ten poll intervals
        asked = [r.url.path for _, r in fake.log if "visibility" in r.url.path]
        assert asked == ["/apis/visibility.kueue.x-k8s.io"]  # discovered once, then left alone
        assert session.kueue_positions.by_job == {}
        assert session.connection == "synced"


async def test_no_pending_workloads_no_request(fake: FakeApiServer, kubeconfig: Path) -> None:
    fake.kueue_visibility = "v1beta2"
    put_queues(fake, pending=0)
    put_job(fake, "running", "lq-a", 10, "2026-01-01T00:00:00Z", admitted=True)
    async with live_console(
        kubeconfig,
        resources=(*DEFAULT_RESOURCES, *KUEUE),
        kueue_interval=0.05,
        ready=lambda session: session.synced,
        what="sync",
    ):
        await asyncio.sleep(0.3)
        assert fake.visibility_requests == []


async def test_forbidden_is_a_note(fake: FakeApiServer, kubeconfig: Path) -> None:
    fake.kueue_visibility = "v1beta2"
    fake.rbac.refused.append(Rule(verbs=("get",), resources=("clusterqueues/pendingworkloads",)))
    put_queues(fake, pending=1)
    put_job(fake, "old", "lq-a", 10, "2026-01-01T00:00:00Z")
    async with live_console(
        kubeconfig,
        resources=(*DEFAULT_RESOURCES, *KUEUE),
        kueue_interval=0.05,
        ready=lambda session: "Kueue positions: forbidden" in session.connection,
        what="the note",
    ) as session:
        assert session.synced and session.error is None
        assert session.kueue_positions.by_job == {}


def test_parse_pending_keys_by_owner_and_skips_bad_items() -> None:
    raw = orjson.dumps(
        {
            "kind": "PendingWorkloadsSummary",
            "items": [
                {
                    "metadata": {
                        "name": "job-eval-3c9aa",
                        "namespace": "team-b",
                        "ownerReferences": [
                            {"apiVersion": "batch/v1", "kind": "Job", "name": "eval", "uid": "41f"}
                        ],
                    },
                    "priority": 100,
                    "localQueueName": "team-b-gpu",
                    "positionInClusterQueue": 7,
                    "positionInLocalQueue": 2,
                },
                {"metadata": {"name": "bare", "namespace": "team-b"}, "positionInClusterQueue": 8},
                {"metadata": {"namespace": "team-b"}},  # no name: skipped
                "garbage",
            ],
        }
    )
    parsed = parse_pending(raw, "cq")
    assert set(parsed) == {("team-b", "Job", "eval"), ("team-b", "Workload", "bare")}
    eval_ = parsed[("team-b", "Job", "eval")]
    assert (eval_.in_cluster_queue, eval_.in_local_queue, eval_.priority) == (7, 2, 100)
    assert parse_pending(b"not json", "cq") == {}
    group: dict[str, Any] = {"versions": [{"version": "v1alpha1"}, {"version": "v1beta1"}]}
    assert served_version(orjson.dumps(group)) == "v1beta1"
    assert served_version(orjson.dumps({"versions": [{"version": "v9"}]})) is None
