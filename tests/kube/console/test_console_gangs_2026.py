"""The console over the 2026 gangs corpus: what ``jobs`` reads (test_gangs_2026.py), the console shows.

Why: issue 13 asks that a native PodGroup gang, a TAS-admitted and a TAS-failed Kueue workload and
a Volcano HyperNode job show the right GPUs, queue, gang, state and reason in the console too, not
only in the tables. A LiveConsoleSession on a FakeApiServer seeded with
``tests/fixtures/gangs_2026/`` (upstream sources recorded there), as ``test_gangs_2026.py`` serves
it; the expectations are the corpus's own ``expect`` rows and that module's detail assertions.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import kmock
import pytest

from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.tui.app import make_app
from hpctop.tui.widgets.gpus import GpuPane
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.queues import QueuePane
from tests.backends.gangs.test_gangs_2026 import CASES
from tests.backends.test_live_truth import RESOURCES, _served
from tests.kube.conftest import FAST
from tests.kube.console.conftest import SIZE
from tests.kube.fakeserver import ALL, DRA, FakeApiServer
from tests.polling import until

EXPECT = {(c.id, e["job"]): e for c in CASES for e in c.expect}
#: (case, owner/name) -> the job key the console selects
SHOWN = {
    ("g26-tas-admitted", "Job/tas-sample-required"): ("g26-tas-admitted", "Job", "tas-sample-required"),
    ("g26-tas-failed", "Job/tas-too-wide"): ("g26-tas-failed", "Job", "tas-too-wide"),
    ("g26-native-gang", "PodGroup.scheduling.k8s.io/trainer-pg"): (
        "g26-native-gang",
        "PodGroup.scheduling.k8s.io",
        "trainer-pg",
    ),
    ("g26-volcano-hypernode", "Job.batch.volcano.sh/nt-job"): (
        "g26-volcano-hypernode",
        "Job.batch.volcano.sh",
        "nt-job",
    ),
}


@pytest.fixture
async def fake() -> AsyncIterator[FakeApiServer]:
    async with FakeApiServer(served=(*ALL, *DRA)) as server, kmock.Server(server):
        for res in {r for case in CASES for r, _ in case.objects} | {
            RESOURCES["pods/v1"],
            RESOURCES["nodes/v1"],
        }:
            key = f"{res.group}/{res.version}/{res.plural}" if res.group else f"{res.version}/{res.plural}"
            server.resources[key] = kmock.ResourceInfo(
                kind=res.kind, namespaced=res.namespaced, verbs={"get", "list", "watch"}
            )
        for case in CASES:
            for res, obj in case.objects:
                server.upsert(res, _served(res, obj))
        yield server


@pytest.fixture
async def live(fake: FakeApiServer, kubeconfig: Path) -> AsyncIterator[LiveConsoleSession]:
    session = await asyncio.to_thread(LiveConsoleSession.connect, str(kubeconfig), None, settings=FAST)
    try:
        await until(
            lambda: session.synced and all(k in session.snapshot.jobs for k in SHOWN.values()),
            what="the gangs corpus's jobs",
        )
        yield session
    finally:
        await asyncio.to_thread(session.close)


async def test_the_console_shows_each_gang_case_as_jobs_reads_it(live: LiveConsoleSession) -> None:
    app = make_app(live, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        app.step_now(0)
        await pilot.pause()
        table = app.query_one(JobsTable)
        details: dict[str, str] = {}
        for (case, job), key in SHOWN.items():
            expect = EXPECT[(case, job)]
            assert table.select_key(key), key
            await pilot.pause()
            row = table.current
            assert row is not None and row.key == key
            assert row.state.name == expect["state"], (key, row.state)
            assert row.gpus == expect["gpus"], (key, row.gpus)
            assert row.min_members == expect["min_members"], (key, row.min_members)
            if "queue" in expect:
                assert row.queue == expect["queue"], (key, row.queue)
            if expect.get("reason") is not None:
                assert row.reason == expect["reason"], (key, row.reason)
            await pilot.press("enter")
            await pilot.pause()
            details[case] = str(app.screen.query_one("#detail-text").render())
            await pilot.press("escape")
            await pilot.pause()
        tas = details["g26-tas-admitted"].split("\nTopology\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert tas[0] == "  Kueue TAS: pod set main required topology-rack"
        assert tas[1] == "  placed over topology default: 2 domain(s)"
        assert tas[5] == "    spans 1 topology-block, 1 topology-rack, 2 hostname"
        assert (
            "no domain fits (kueue:Workload.QuotaReserved): TopologyPlacementFailed"
            in details["g26-tas-failed"]
        )
        assert "4 Insufficient nvidia.com/gpu" in details["g26-native-gang"]
        volcano = (
            details["g26-volcano-hypernode"].split("\nTopology\n", 1)[1].split("\n\n", 1)[0].splitlines()
        )
        assert volcano == [
            "  Volcano networkTopology hard, highest tier allowed 1",
            "  HyperNode tier1: s0",
            "  HyperNode tier2: s4",
        ]
        # the GPU pane: the TAS gang fills both GB200 nodes (4 GPUs each), the vcjob 4 on node-0
        await pilot.press("1")
        gpus = app.query_one("#gpus", GpuPane)
        for node, used in (
            ("block-1-rack-1-node-1", 4000),
            ("block-1-rack-1-node-2", 4000),
            ("node-0", 4000),
        ):
            app.jump_to("node", node)
            await pilot.pause()
            assert gpus.current is not None and gpus.current.name == node
            assert gpus.current.used == used, (node, gpus.current.used)
        # the queue pane: the TAS ClusterQueue guarantees 16 GPUs, the admitted gang uses 8
        await pilot.press("2")
        await pilot.pause()
        queues = app.query_one(QueuePane)
        assert queues.select("root.tas-cluster-queue")
        await pilot.pause()
        lines = ["".join(seg.text for seg in queues.render_line(y)) for y in range(queues.size.height)]
        (tas_queue,) = [line for line in lines if "tas-cluste" in line]
        assert "8/16/" in tas_queue and "R1 " in tas_queue, tas_queue
