"""The console over a DRA cluster: discovery finds ``resource.k8s.io/v1``, the GPU pane shows the claims.

A LiveConsoleSession on a FakeApiServer that serves the DRA kinds (``served=(*ALL, *DRA)``: their
groups appear in discovery at their versions) seeded with the DRA cases of the live-truth corpus
(``tests/fixtures/live_truth/90_dra.yaml``, upstream sources recorded there). hpctop is given no
resource list, so it watches what discovery lists: the DRA-only node must show its slice's GPUs
in the GPU pane, held by the pods whose claims hold them, and a claim allocated later (a watch
event) must move the pane without a restart.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from pathlib import Path

import kmock
import pytest

from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.tui.app import make_app
from hpctop.tui.widgets.gpus import GpuPane
from tests.backends.test_live_truth import CASES, _served
from tests.kube.conftest import FAST
from tests.kube.console.conftest import SIZE
from tests.kube.fakeserver import ALL, DRA, DRA_V1BETA2, PODS, RESOURCE_CLAIMS, FakeApiServer, Res
from tests.polling import until

NODE = "lt-dra-a100"


def seeded(server: FakeApiServer, dra: tuple[Res, ...]) -> None:
    """The DRA cases of the corpus, each DRA object stored at the version ``dra`` serves."""
    for res in (*ALL, *dra):
        key = f"{res.group}/{res.version}/{res.plural}" if res.group else f"{res.version}/{res.plural}"
        server.resources[key] = kmock.ResourceInfo(
            kind=res.kind, namespaced=res.namespaced, verbs={"get", "list", "watch"}
        )
    at = {r.plural: r for r in dra}
    for case in CASES:
        if case.cls == "dra":
            for res, obj in case.objects:
                served = at.get(res.plural, res)
                if served in ALL or served in dra:
                    server.upsert(served, _served(served, obj))


@pytest.fixture
async def fake() -> AsyncIterator[FakeApiServer]:
    async with FakeApiServer(served=(*ALL, *DRA)) as server, kmock.Server(server):
        seeded(server, DRA)
        yield server


@pytest.fixture
async def live(fake: FakeApiServer, kubeconfig: Path) -> AsyncIterator[LiveConsoleSession]:
    session = await asyncio.to_thread(LiveConsoleSession.connect, str(kubeconfig), None, settings=FAST)
    try:
        await until(
            lambda: (
                session.synced
                and session.snapshot.nodes.get(NODE) is not None
                and session.snapshot.nodes[NODE].allocatable.gpu == 7000
            ),
            what="the DRA node's GPUs",
        )
        yield session
    finally:
        await asyncio.to_thread(session.close)


def pane_text(pane: GpuPane) -> str:
    return "\n".join("".join(seg.text for seg in pane.render_line(y)) for y in range(pane.line_count()))


async def test_the_gpu_pane_shows_a_dra_node_and_follows_its_claims(
    fake: FakeApiServer, live: LiveConsoleSession
) -> None:
    app = make_app(live, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        app.step_now(0)
        await pilot.pause()
        await pilot.press("1")
        app.jump_to("node", NODE)
        await pilot.pause()
        gpus = app.query_one("#gpus", GpuPane)
        assert gpus.current is not None and gpus.current.name == NODE
        assert len(gpus.current.slots) == 7 and gpus.current.used == 7000
        assert NODE in pane_text(gpus)
        # the node zoom says which GPUs DRA marks: the DeviceTaintRule's and the kubelet's health
        while gpus.zoom != "node":
            await pilot.press("z")
        await pilot.pause()
        shown = pane_text(gpus)
        assert "GPU health: gpu-7 tainted dra.example.com/unhealthy=ecc:NoSchedule; gpu-5 Unhealthy" in shown
        # the pending 2-GPU claim: one holder frees two GPUs (pod1's claim deallocated and pod1 gone)
        pod1 = fake.get(PODS, "pod1", "dra-gpu-test1")
        assert pod1 is not None
        fake.remove(PODS, "pod1", "dra-gpu-test1")
        claim = fake.get(RESOURCE_CLAIMS, "pod1-gpu-7xk2p", "dra-gpu-test1")
        assert claim is not None
        freed = copy.deepcopy(claim)
        freed["status"] = {}
        fake.upsert(RESOURCE_CLAIMS, freed)
        await until(
            lambda: ("dra-gpu-test1", "pod1") not in live.snapshot.pods, what="pod1's deletion to arrive"
        )
        app.step_now(0)
        await pilot.pause()
        app.jump_to("node", NODE)
        await pilot.pause()
        assert gpus.current is not None and gpus.current.used == 6000
        assert [h[0] for h in gpus.current.slots[0].holders] == []


async def test_a_cluster_serving_only_v1beta2_is_read_at_v1beta2(tmp_path: Path) -> None:
    """Kubernetes 1.33 serves DRA at ``v1beta2`` only: discovery picks it, nothing is asked at ``v1``."""
    from tests.kube.conftest import write_kubeconfig

    async with FakeApiServer(served=(*ALL, *DRA_V1BETA2)) as server, kmock.Server(server):
        seeded(server, DRA_V1BETA2)
        config = write_kubeconfig(tmp_path / "beta", str(server.url).rstrip("/"))
        session = await asyncio.to_thread(LiveConsoleSession.connect, str(config), None, settings=FAST)
        try:
            await until(
                lambda: (
                    session.synced
                    and session.snapshot.nodes.get(NODE) is not None
                    and session.snapshot.nodes[NODE].allocatable.gpu == 7000
                ),
                what="the DRA node's GPUs read at v1beta2",
            )
            held = session.snapshot.pods[("dra-four-gpus", "gpu-pod")]
            assert held.requests.gpu == 4000
        finally:
            await asyncio.to_thread(session.close)
        paths = [str(r.url.path) for _, r in server.log]
        assert any(p.startswith("/apis/resource.k8s.io/v1beta2/resourceslices") for p in paths)
        assert not any(p.startswith("/apis/resource.k8s.io/v1/") for p in paths)
