"""Priority and move from the console for the backends whose API allows them, end to end.

A LiveConsoleSession on the FakeApiServer over real HTTP, a Pilot pressing ``p``/``m``: a Volcano
job's priority is picked from the cluster's PriorityClasses (``spec.priorityClassName``), a Slinky
job's Slurm priority and partition are typed (annotations of the owner); what the API does not
allow (a Volcano move: ``spec.queue`` is immutable) is greyed out with the reason and sends nothing.
"""

from __future__ import annotations

import orjson
from textual.widgets import Input

from hpctop.actions.kube import SLINKY_PARTITION, SLINKY_PRIORITY
from hpctop.actions.requests import ActionKind
from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.tui.app import make_app
from hpctop.tui.screens.confirm import ConfirmScreen, PickScreen, PromptScreen
from tests.kube.console.conftest import (
    NS,
    SIZE,
    SLINKY_KEY,
    VC_KEY,
    confirm_text,
    real_patches,
    select,
    settle,
)
from tests.kube.fakeserver import JOBS, VCJOBS, FakeApiServer
from tests.model_fixtures import batch_job
from tests.polling import until


async def test_volcano_priority_is_picked_from_the_priority_classes(
    fake: FakeApiServer, volcano: LiveConsoleSession
) -> None:
    app = make_app(volcano, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await select(app, pilot, VC_KEY)
        assert app.check_action("job_action", ("priority",)) is True
        # what the API does not allow is greyed out, with the reason
        assert app.check_action("job_action", ("move",)) is None
        move = app.permission_for("move", VC_KEY)
        assert move is not None and "spec.queue is immutable" in move.reason
        await pilot.press("m")
        await settle(app, pilot)
        assert not isinstance(app.screen, (PickScreen, ConfirmScreen))

        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, PickScreen)  # high (1000) first, then low (10)
        await pilot.press("enter")
        await settle(app, pilot)
        shown = confirm_text(app)
        assert 'server dry run: spec.priorityClassName: "low" → "high"' in shown
        await pilot.press("y")
        await settle(app, pilot)
        [patch] = real_patches(fake)
        assert orjson.loads(patch.body)["spec"] == {"priorityClassName": "high"}
        vc = fake.get(VCJOBS, "llm", NS)
        assert vc is not None and vc["spec"]["priorityClassName"] == "high"
        assert app.journal.of(VC_KEY)[-1].ok


async def test_slinky_priority_and_partition_from_the_console(
    fake: FakeApiServer, volcano: LiveConsoleSession
) -> None:
    app = make_app(volcano, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await select(app, pilot, SLINKY_KEY)
        # a batch Job's priority is refused; a Slinky one's is a patch of the Job (its hold's RBAC)
        assert app.check_action("job_action", ("priority",)) is True
        assert app.check_action("job_action", ("move",)) is True
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        prompt = app.screen.query_one(Input)
        assert prompt.value == "" and prompt.type == "integer"  # not its pods' priority
        await pilot.press(*"2500", "enter")
        await settle(app, pilot)
        assert f'metadata.annotations.{SLINKY_PRIORITY}: "100" → "2500"' in confirm_text(app)
        await pilot.press("y")
        await settle(app, pilot)

        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        prompt = app.screen.query_one(Input)
        assert prompt.value == "gpu"  # prefilled with the partition the job asks for
        prompt.value = "gpu-long"
        await pilot.press("enter")
        await settle(app, pilot)
        assert f'metadata.annotations.{SLINKY_PARTITION}: "gpu" → "gpu-long"' in confirm_text(app)
        await pilot.press("y")
        await settle(app, pilot)
        job = fake.get(JOBS, "sim", NS)
        assert job is not None
        assert job["metadata"]["annotations"] == {SLINKY_PARTITION: "gpu-long", SLINKY_PRIORITY: "2500"}
        bodies = [orjson.loads(w.body)["metadata"]["annotations"] for w in real_patches(fake)]
        assert bodies == [{SLINKY_PRIORITY: "2500"}, {SLINKY_PARTITION: "gpu-long"}]
        assert [(e.action, e.ok) for e in app.journal.of(SLINKY_KEY)] == [("priority", True), ("move", True)]


async def test_a_plain_job_keeps_priority_greyed_out(
    fake: FakeApiServer, volcano: LiveConsoleSession
) -> None:
    fake.upsert(JOBS, batch_job("plain"))
    await until(lambda: (NS, "Job", "plain") in volcano.snapshot.jobs, what="the plain job")
    app = make_app(volcano, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await select(app, pilot, (NS, "Job", "plain"))
        assert app.check_action("job_action", ("priority",)) is None
        permission = app.permission_for("priority", (NS, "Job", "plain"))
        assert permission is not None and "immutable" in permission.reason
        assert app.permission_for(ActionKind.PRIORITY.value, SLINKY_KEY) is not None
    assert fake.writes() == []
