"""The live session: every resource reflected into one store, failures kept per resource (W18 too)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import kmock
import pytest

from hpctop.model.store import Store
from hpctop.runtime.live import LiveSession, list_once, run_live
from hpctop.sources.kube.reflector import ReflectorState
from tests.kube.fakeserver import JOBS, NODES, PODS, PRIORITY_CLASSES, FakeApiServer
from tests.model_fixtures import batch_job, node, pod

pytestmark = pytest.mark.looptime


def seed(fake: FakeApiServer) -> None:
    fake.upsert(NODES, node("n1"))
    fake.upsert(JOBS, batch_job("train"))
    fake.upsert(PODS, pod("train-0", owner=("Job", "train"), node="n1", phase="Running"))
    fake.upsert(PRIORITY_CLASSES, {"metadata": {"name": "high"}, "value": 1000})


@pytest.mark.serial  # wall time: stops within 1 s
async def test_run_live_fills_the_store_and_degrades_only_the_forbidden(
    fake: FakeApiServer, kubeconfig: Path, store: Store
) -> None:
    seed(fake)
    fake.fail(JOBS, kmock.action.LIST, 403, times=10)
    sessions: list[LiveSession] = []
    task = asyncio.create_task(run_live(str(kubeconfig), None, None, store, on_session=sessions.append))
    while not sessions:
        await asyncio.sleep(0.01)
    await asyncio.wait_for(sessions[0].wait_synced(), 60)
    statuses = sessions[0].statuses()
    assert statuses["Job"].state is ReflectorState.FORBIDDEN
    assert "403" in statuses["Job"].note
    for kind in ("Pod", "Node", "PriorityClass", "Deployment"):
        assert statuses[kind].state is ReflectorState.SYNCED, statuses[kind]
    assert set(store.nodes) == {"n1"} and set(store.priority_classes) == {"high"}
    fake.upsert(PODS, pod("late"))
    await asyncio.sleep(1)
    assert ("team-a", "late") in store.pods
    started = time.perf_counter()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert time.perf_counter() - started < 1.0  # W18
    await asyncio.sleep(0.1)
    assert fake.open_watches == 0


async def test_list_once_reads_every_resource_without_watching(fake: FakeApiServer, kubeconfig: Path) -> None:
    seed(fake)
    store = await list_once(str(kubeconfig), None, None)
    assert ("team-a", "Job", "train") in store.workloads
    assert store.workloads[("team-a", "Job", "train")].kind == "Job"  # kind stamped on list items
    assert set(store.pods) == {("team-a", "train-0")}
    assert not any(r.action == kmock.action.WATCH for _, r in fake.log)


async def test_namespace_scopes_namespaced_resources(fake: FakeApiServer, kubeconfig: Path) -> None:
    fake.upsert(PODS, pod("a", namespace="team-a"))
    fake.upsert(PODS, pod("b", namespace="team-b"))
    fake.upsert(NODES, node("n1"))
    store = await list_once(str(kubeconfig), None, "team-b")
    assert set(store.pods) == {("team-b", "b")}
    assert set(store.nodes) == {"n1"}  # cluster-scoped: not filtered
