"""``l`` (follow a pod's log) and ``y`` (YAML) on a live console, read-only, at 80x24 (issue 15).

A LiveConsoleSession on the FakeApiServer over real HTTP: the pod log API
(``GET /api/v1/namespaces/NS/pods/NAME/log?follow=true&container=C``) with a container chosen
from the pod's two, a line appended while the screen is open streamed in, a planted escape
sequence drawn as a stand-in; the YAML is the owner and the pod as the server holds them. Both are
reads: read-only mode offers them and the server sees no write.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.tui.app import make_app
from hpctop.tui.screens.confirm import PickScreen
from hpctop.tui.screens.textview import TextScreen
from hpctop.tui.widgets.jobs import JobsTable
from tests.kube.conftest import live_console
from tests.kube.console.conftest import KEY, settle
from tests.kube.fakeserver import JOBS, PODS, FakeApiServer
from tests.model_fixtures import batch_job, pod
from tests.polling import until

SMALL = (80, 24)
PLANTED = "step 7 \x1b]52;c;ZXZpbA==\x07 loss 1.2"


@pytest.fixture
async def live(fake: FakeApiServer, kubeconfig: Path, tmp_path: Path) -> AsyncIterator[LiveConsoleSession]:
    fake.upsert(JOBS, batch_job("train"))
    worker = pod("train-0", owner=("Job", "train"), node="n1", phase="Running")
    worker["spec"]["containers"].append({"name": "sidecar", "image": "busybox"})
    fake.upsert(PODS, worker)
    fake.pod_logs[("team-a", "train-0", "sidecar")] = ["sidecar up", PLANTED]
    async with live_console(
        kubeconfig,
        read_only=True,
        audit_path=tmp_path / "audit.jsonl",
        ready=lambda session: session.synced and KEY in session.snapshot.jobs,
        what="the job",
    ) as session:
        yield session


def body(app: object) -> str:
    screen = app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, TextScreen)
    return str(screen.query_one("#text-body").render())


async def test_follow_a_container_log_read_only_at_80x24(
    fake: FakeApiServer, live: LiveConsoleSession
) -> None:
    app = make_app(live, tick_interval=0, read_only=True)
    async with app.run_test(size=SMALL) as pilot:
        app.step_now(0)
        await pilot.pause()
        assert app.query_one(JobsTable).select_key(KEY)
        await pilot.press("l")
        await settle(app, pilot)
        assert isinstance(app.screen, PickScreen)  # two containers: which one
        await pilot.press("down", "enter")
        await settle(app, pilot)
        await until(lambda: "sidecar up" in body(app), what="the log's first lines")
        shown = body(app)
        assert "\x1b" not in shown and "\x07" not in shown and "␛]52;c;ZXZpbA==" in shown
        fake.pod_logs[("team-a", "train-0", "sidecar")].append("a line written later")
        for _ in range(40):
            await pilot.pause(0.05)
            if "a line written later" in body(app):
                break
        assert "a line written later" in body(app)
        [request] = [r for _, r in fake.log if r.url.path.endswith("/pods/train-0/log")]
        assert request.params.get("follow") == "true" and request.params.get("container") == "sidecar"
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, TextScreen)
    assert fake.writes() == []


async def test_yaml_of_the_job_read_only_at_80x24(fake: FakeApiServer, live: LiveConsoleSession) -> None:
    app = make_app(live, tick_interval=0, read_only=True)
    async with app.run_test(size=SMALL) as pilot:
        app.step_now(0)
        await pilot.pause()
        assert app.query_one(JobsTable).select_key(KEY)
        await pilot.press("y")
        await settle(app, pilot)
        shown = body(app)
        assert "kind: Job" in shown and "name: train-0" in shown and "name: sidecar" in shown
        assert "2 object(s)" in shown
    assert fake.writes() == []
