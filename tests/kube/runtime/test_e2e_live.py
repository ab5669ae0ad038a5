"""End to end on a live cluster: the simulator served over HTTP, hpctop reading it as a user would.

kubeconfig → real HTTP → list + watch → decode → store → scheduling core → tables and console,
against :mod:`tests.kube.simserver` (the demo session pushing every event it applies into the
FakeApiServer). The served session's own store is the oracle: what hpctop reads from the server
must show the same jobs in the same states on the same GPUs.

Not compared: queue quotas and pending reasons. The served session schedules with the scenario's
policy (partitions, guaranteed/max quotas); a live cluster carries no hpctop policy, so hpctop
reads it with the default one (a partition per GPU product, queues from the jobs' labels without
quotas). Job names, states, queues, nodes and GPU totals are the same either way.

No looptime here: the console's reflectors run in their own thread and event loop, and a
fast-forwarded test loop would see them as idle time.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import kmock
import pytest

from hpctop.actions.requests import ActionKind, ActionRequest
from hpctop.cli import main
from hpctop.errors import ActionRefused
from hpctop.model.store import Snapshot
from hpctop.runtime.live_console import LiveConsoleSession, connection_text
from hpctop.sources.kube.errors import KubeConfigError
from hpctop.sources.kube.reflector import ReflectorState, ReflectorStatus
from hpctop.sources.scenario import parse_scenario
from hpctop.tui.app import make_app
from hpctop.tui.widgets.status import StatusBar
from tests.kube.conftest import FAST
from tests.kube.fakeserver import JOBS, NODES, PODS, FakeApiServer
from tests.kube.simserver import ServedSession, demo, serve
from tests.polling import until
from tests.sources.test_simulator import BASE
from tests.sources.test_simulator import JOBS as SCENARIO_JOBS

SMALL = parse_scenario(BASE + SCENARIO_JOBS, name="t")


def jobs_of(snapshot: Snapshot) -> dict[str, tuple[str, str, tuple[str, ...]]]:
    """name → (state, queue, nodes): what a live reader and the simulation must agree on."""
    return {
        j.name: (str(j.state), j.queue or "", tuple(sorted(j.nodes)))
        for j in snapshot.jobs.values()
        if not j.state.is_finished  # finished jobs: the fake keeps no tombstones of deleted pods
    }


def gpu_total(snapshot: Snapshot) -> int:
    return sum(n.gpu.count for n in snapshot.nodes.values())


def gpus_in_use(snapshot: Snapshot) -> int:
    """milli-GPUs requested by pods bound to nodes (what ``hpctop gpus`` calls allocated)."""
    return sum(p.requests.gpu for p in snapshot.pods.values() if p.holds_resources)


async def connect(kubeconfig: Path, **options: object) -> LiveConsoleSession:
    session = await asyncio.to_thread(
        LiveConsoleSession.connect,
        str(kubeconfig),
        None,
        settings=FAST,
        **options,  # type: ignore[arg-type]
    )
    await until(lambda: session.synced, what="the reflectors to sync")
    return session


async def test_tables_read_the_served_simulation(
    fake: FakeApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    served = serve(fake, SMALL, at=30)
    expected = jobs_of(served.store.snapshot())
    assert {"train", "share", "serve"} <= set(expected)  # the scenario did run: a real comparison
    code = await asyncio.to_thread(main, ["jobs", "--kubeconfig", str(kubeconfig), "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    rows = {r["name"]: r for r in json.loads(out.out)}
    got = {name: (r["state"], r["queue"], tuple(sorted(r["nodes"]))) for name, r in rows.items()}
    assert got == expected

    code = await asyncio.to_thread(main, ["gpus", "--kubeconfig", str(kubeconfig), "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    gpus = json.loads(out.out)
    snapshot = served.store.snapshot()
    assert sum(r["total"] for r in gpus) == gpu_total(snapshot) == 18
    assert sum(r["allocated"] for r in gpus) == pytest.approx(gpus_in_use(snapshot) / 1000)
    assert gpus_in_use(snapshot) > 0


@pytest.mark.serial  # wall time: quitting stops the reflectors within 1 s
async def test_console_follows_the_served_simulation(fake: FakeApiServer, kubeconfig: Path) -> None:
    served = serve(fake, SMALL, at=10)
    session = await connect(kubeconfig)
    try:
        assert session.connection == "synced"
        app = make_app(session, tick_interval=0)
        async with app.run_test(size=(160, 50)) as pilot:
            app.step_now(0)
            await pilot.pause()
            assert jobs_of(app.snapshot) == jobs_of(served.store.snapshot())
            assert app.read_only  # actions on a live cluster: refused before anything is sent
            status = str(app.query_one(StatusBar).render())
            assert "synced" in status and "context:fake" in status

            served.step(60)  # the cluster moves on: jobs end, pods start; the watch carries it
            expected = jobs_of(served.store.snapshot())

            def caught_up() -> bool:
                app.step_now(0)
                return jobs_of(app.snapshot) == expected

            await until(caught_up, what="the console to follow the watch")
            await pilot.press("q")
        with pytest.raises(ActionRefused, match="read-only mode"):  # read-only unless asked otherwise
            session.actuator.execute(ActionRequest(ActionKind.CANCEL, ("default", "Job", "train")))
        assert (
            "read-only"
            in session.actuator.preview(ActionRequest(ActionKind.HOLD, ("default", "Job", "x"))).refusal
        )
        assert fake.writes() == []
    finally:
        started = time.perf_counter()
        stopped = await asyncio.to_thread(session.close)
        elapsed = time.perf_counter() - started
    assert stopped and elapsed < 1.0  # W18: quitting stops the reflectors within a second
    await until(lambda: fake.open_watches == 0, 2.0, "the watches to close")


async def test_connection_state_shows_forbidden_and_stale(fake: FakeApiServer, kubeconfig: Path) -> None:
    serve(fake, SMALL)
    fake.fail(JOBS, kmock.action.LIST, 403, times=100)
    session = await connect(kubeconfig)
    try:
        assert session.connection == "synced, Job: forbidden"
        fake.fail(PODS, kmock.action.WATCH, 500, times=1000)
        fake.fail(PODS, kmock.action.LIST, 500, times=1000)
        fake.disconnect()
        await until(lambda: session.connection.startswith("stale"), what="a stale Pod watch")
        assert "(Pod" in session.connection
        assert session.snapshot.pods  # rows stay visible while stale
    finally:
        await asyncio.to_thread(session.close)


def test_connection_text_worst_news_first() -> None:
    now = 1000.0
    synced = ReflectorStatus("Node", ReflectorState.SYNCED)
    assert connection_text({}, now) == "connecting"
    assert connection_text({"Node": synced}, now) == "synced"
    statuses = {
        "Pod": ReflectorStatus("Pod", ReflectorState.RETRYING, since=958.0),
        "Node": ReflectorStatus("Node", ReflectorState.SYNCING),
        "Job": ReflectorStatus("Job", ReflectorState.FORBIDDEN),
    }
    assert connection_text(statuses, now) == "stale 42s (Pod), syncing Node, Job: forbidden"


def test_a_bad_kubeconfig_fails_before_any_ui(tmp_path: Path) -> None:
    with pytest.raises(KubeConfigError):
        LiveConsoleSession.connect(str(tmp_path / "missing"), None)


async def test_demo_cluster_over_http(fake: FakeApiServer, kubeconfig: Path) -> None:
    """The demo at t=300 (1,523 nodes): the live console sees the same jobs and GPUs as the demo."""
    started = time.perf_counter()
    served: ServedSession = demo(fake, at=300)
    served_at = time.perf_counter() - started
    session = await connect(kubeconfig)
    synced_at = time.perf_counter() - started
    try:
        live = session.snapshot
        oracle = served.store.snapshot()
        assert len(live.nodes) == len(oracle.nodes) == len(fake.items_of(NODES)) == 1523
        assert jobs_of(live) == jobs_of(oracle)
        assert gpu_total(live) == gpu_total(oracle)
        assert gpus_in_use(live) == gpus_in_use(oracle) > 0
    finally:
        await asyncio.to_thread(session.close)
    print(f"demo t=300 served in {served_at:.1f}s, live console synced at {synced_at:.1f}s")
