"""Set-up shared by the live console tests: a Pilot's waits and looks, and a seeded Volcano/Slinky cluster.

Each console test drives a real ``HpctopApp`` on a LiveConsoleSession over the fake API server
(``tests/kube/conftest.py``: the server, the kubeconfig, ``live_console``). The console runs its
previews and executes in thread workers, so every step waits for them (``settle``) while the
test's loop keeps serving the fake. These were copied between the console test modules; they live
here once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from hpctop.actions.kube import SLINKY_PARTITION, SLINKY_PRIORITY
from hpctop.actions.requests import SLINKY_SCHEDULER
from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.sources.kube.resources import DEFAULT_RESOURCES, VOLCANO_JOBS, kueue_resources
from hpctop.tui.app import HpctopApp
from hpctop.tui.screens.confirm import ConfirmScreen
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.queues import QueuePane
from tests.kube.conftest import live_console
from tests.kube.fakeserver import (
    CLUSTER_QUEUES,
    JOBS,
    LOCAL_QUEUES,
    PODS,
    PRIORITY_CLASSES,
    VCJOBS,
    FakeApiServer,
)
from tests.model_fixtures import batch_job, pod
from tests.polling import until

#: the terminal the console tests run in
SIZE = (160, 50)
NS = "team-a"
#: the batch Job most console tests act on
KEY = (NS, "Job", "train")
#: what the fake serves of Kueue (no Cohort, no ResourceFlavor), and its ClusterQueue
KUEUE = [r for r in kueue_resources() if r.plural in ("workloads", "clusterqueues", "localqueues")]
CQ = "gpu-a"
#: the Volcano job and the Slinky (slurm-bridge) batch Job of ``seed_volcano_and_slinky``
VC_KEY = (NS, "Job.batch.volcano.sh", "llm")
SLINKY_KEY = (NS, "Job", "sim")


async def settle(app: HpctopApp, pilot: Pilot[None]) -> None:
    """Wait for the console's action workers (HTTP in threads), then for their answers to show."""
    await until(lambda: not any(w.group == "actions" and w.is_running for w in app.workers), what="workers")
    await pilot.pause()
    await pilot.pause()


async def select(app: HpctopApp, pilot: Pilot[None], key: tuple[str, str, str]) -> None:
    """Show the session's latest snapshot and put the jobs table's cursor on ``key``."""
    app.step_now(0)
    await pilot.pause()
    assert app.query_one(JobsTable).select_key(key)
    await pilot.pause()
    await settle(app, pilot)


def confirm_text(app: HpctopApp) -> str:
    assert isinstance(app.screen, ConfirmScreen), type(app.screen).__name__
    return app.screen.body_text  # the preview as the dialog holds it (drawn wrapped: HangingText)


def real_patches(fake: FakeApiServer) -> list[Any]:
    """The PATCH requests the server applied (its dry runs left out)."""
    return [
        w
        for w in fake.writes()
        if str(getattr(w.method, "value", w.method)).upper() == "PATCH" and "dryRun" not in w.params
    ]


def patches(fake: FakeApiServer) -> list[Any]:
    """Every PATCH request the server saw, dry runs included."""
    return [w for w in fake.writes() if str(getattr(w.method, "value", w.method)).upper() == "PATCH"]


def put_queues(fake: FakeApiServer, stop: str = "None") -> None:
    quota = {"name": "nvidia.com/gpu", "nominalQuota": "8"}
    spec = {
        "namespaceSelector": {},
        "resourceGroups": [
            {"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "h100", "resources": [quota]}]}
        ],
        "stopPolicy": stop,
    }
    fake.upsert(CLUSTER_QUEUES, {"metadata": {"name": CQ}, "spec": spec, "status": {"admittedWorkloads": 2}})
    fake.upsert(
        LOCAL_QUEUES,
        {"metadata": {"name": "team-q", "namespace": "team-a"}, "spec": {"clusterQueue": CQ}, "status": {}},
    )


async def select_queue(app: HpctopApp, pilot: Pilot[None]) -> None:
    app.step_now(0)
    await pilot.pause()
    await pilot.press("2")
    assert app.query_one(QueuePane).select(f"root.{CQ}")
    await pilot.pause()
    await settle(app, pilot)  # the permissions asked at start and for the queue


def seed_volcano_and_slinky(fake: FakeApiServer) -> None:
    """Two PriorityClasses, a pending Volcano job (priority ``low``) with its pod, and a Slinky Job
    (partition ``gpu``, Slurm priority 100) with its pod."""
    for name, value in (("low", 10), ("high", 1000)):
        fake.upsert(PRIORITY_CLASSES, {"metadata": {"name": name}, "value": value})
    vc = fake.upsert(
        VCJOBS,
        {
            "metadata": {"name": "llm", "namespace": NS},
            "spec": {"queue": "default", "minAvailable": 1, "priorityClassName": "low"},
            "status": {"state": {"phase": "Pending"}},
        },
    )
    member = pod("llm-w-0")
    member["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "name": "llm",
            "uid": vc["metadata"]["uid"],
        }
    ]
    member["spec"]["schedulerName"] = "volcano"
    fake.upsert(PODS, member)
    job = batch_job("sim")
    job["metadata"]["annotations"] = {SLINKY_PARTITION: "gpu", SLINKY_PRIORITY: "100"}
    job["spec"]["template"]["spec"]["schedulerName"] = SLINKY_SCHEDULER
    fake.upsert(JOBS, job)
    worker = pod("sim-0", owner=("Job", "sim"))
    worker["spec"]["schedulerName"] = SLINKY_SCHEDULER
    fake.upsert(PODS, worker)


@pytest.fixture
async def volcano(fake: FakeApiServer, kubeconfig: Path, tmp_path: Path) -> AsyncIterator[LiveConsoleSession]:
    """A writable live session on ``seed_volcano_and_slinky``'s cluster, both jobs listed."""
    seed_volcano_and_slinky(fake)
    async with live_console(
        kubeconfig,
        resources=(*DEFAULT_RESOURCES, VOLCANO_JOBS),
        read_only=False,
        audit_path=tmp_path / "audit.jsonl",
        ready=lambda session: session.synced and {VC_KEY, SLINKY_KEY} <= set(session.snapshot.jobs),
        what="the Volcano and the Slinky job",
    ) as session:
        yield session


@asynccontextmanager
async def kueue_console(
    fake: FakeApiServer, kubeconfig: Path, tmp_path: Path
) -> AsyncIterator[LiveConsoleSession]:
    """A writable live session with Kueue's kinds and the ``train`` Job, once both the job and the
    ClusterQueue (``put_queues``, before) are shown."""
    fake.upsert(JOBS, batch_job("train"))
    async with live_console(
        kubeconfig,
        resources=(*DEFAULT_RESOURCES, *KUEUE),
        read_only=False,
        audit_path=tmp_path / "audit.jsonl",
        ready=lambda session: (
            session.synced and KEY in session.snapshot.jobs and f"root.{CQ}" in session.result.queues
        ),
        what="the job and the ClusterQueue",
    ) as session:
        yield session


@pytest.fixture
async def kueue(fake: FakeApiServer, kubeconfig: Path, tmp_path: Path) -> AsyncIterator[LiveConsoleSession]:
    """``kueue_console`` on ``put_queues``' open ClusterQueue and its LocalQueue."""
    put_queues(fake)
    async with kueue_console(fake, kubeconfig, tmp_path) as session:
        yield session
