"""A YuniKorn queue's priority offset and quota from the console, end to end over HTTP.

The queue row comes from YuniKorn's REST tree in a real session; here the session's snapshot is
given the YuniKorn queue directly (the poller has its own tests), and everything after the key is
real: the prompt, YuniKorn's validate-conf, the ConfigMap dry run in the confirmation, the patch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]

from hpctop.model.objects import QueueInfo
from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.tui.app import make_app
from hpctop.tui.screens.confirm import ConfirmScreen, PromptScreen
from tests.kube.actions.test_actions_yunikorn import QUEUES, nlp
from tests.kube.conftest import live_console
from tests.kube.console.conftest import SIZE, confirm_text, settle
from tests.kube.fakeserver import CONFIGMAPS, FakeApiServer, Rbac, Rule

NLP = "root.research.nlp"


@pytest.fixture
async def live(fake: FakeApiServer, kubeconfig: Path, tmp_path: Path) -> AsyncIterator[LiveConsoleSession]:
    fake.upsert(
        CONFIGMAPS,
        {"metadata": {"name": "yunikorn-configs", "namespace": "yunikorn"}, "data": {"queues.yaml": QUEUES}},
    )
    async with live_console(
        kubeconfig,
        read_only=False,
        audit_path=tmp_path / "audit.jsonl",
        ready=lambda session: session.synced,
        what="the first lists",
    ) as session:
        yield session


async def test_priority_offset_from_the_console(fake: FakeApiServer, live: LiveConsoleSession) -> None:
    app = make_app(live, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        queue = QueueInfo(NLP, "nlp", "root.research", "leaf", "yunikorn", "Active")
        app.snapshot = dataclasses.replace(app.snapshot, queues={NLP: queue})
        app.action_queue_edit(NLP)
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"priority.offset=50", "enter")
        await settle(app, pilot)
        shown = confirm_text(app)
        assert "YuniKorn queue root.research.nlp: priority.offset=50" in shown
        assert "properties.priority.offset: (unset) → 50" in shown and "validate-conf: allowed" in shown
        assert "comment line(s) are not kept" in shown
        await pilot.press("y")
        await settle(app, pilot)
        cm = fake.get(CONFIGMAPS, "yunikorn-configs", "yunikorn")
        assert cm is not None and nlp(cm["data"]["queues.yaml"])["properties"] == {"priority.offset": "50"}
        assert any(n.message == "change queue: 1 done" for n in app._notifications)

        app.snapshot = dataclasses.replace(app.snapshot, queues={NLP: queue})  # the refresh replaced it
        app.action_queue_edit(NLP)  # YuniKorn refuses guaranteed > max: nothing is patched
        await pilot.pause()
        await pilot.press(*"guaranteed.nvidia.com/gpu=99", "enter")
        await settle(app, pilot)
        assert "guaranteed resource nvidia.com/gpu exceeds max" in confirm_text(app)
        assert app.screen.query_one("#confirm-yes").disabled
        await pilot.press("n")
    doc = yaml.safe_load(cm["data"]["queues.yaml"])
    assert doc["partitions"][0]["name"] == "default"
    real = [w for w in fake.writes() if "dryRun" not in w.params and w.url.path.endswith("yunikorn-configs")]
    assert len(real) == 1


async def test_not_a_yunikorn_queue_says_so(live: LiveConsoleSession) -> None:
    app = make_app(live, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        app.action_queue_edit("root.default")
        await pilot.pause()
        assert not isinstance(app.screen, (PromptScreen, ConfirmScreen))
        assert any("this is not a YuniKorn queue" in n.message for n in app._notifications)


async def test_edit_is_greyed_out_when_the_review_forbids_patch_configmaps(
    fake: FakeApiServer, live: LiveConsoleSession
) -> None:
    fake.rbac = Rbac(rules=[Rule(verbs=("get", "list", "watch"))])
    app = make_app(live, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        queue = QueueInfo(NLP, "nlp", "root.research", "leaf", "yunikorn", "Active")
        app.snapshot = dataclasses.replace(app.snapshot, queues={NLP: queue})
        app.check_action("queue_edit", ())  # asks the rules review of the yunikorn namespace
        await settle(app, pilot)
        assert app.check_action("queue_edit", ()) is None  # greyed out in the footer
        permission = app.yunikorn_permission()
        assert permission is not None and "no rule grants patch configmaps in yunikorn" in permission.reason
        app.action_queue_edit(NLP)
        await pilot.pause()
        assert not isinstance(app.screen, PromptScreen)
        assert any("edit queue: probably denied" in n.message for n in app._notifications)
    assert fake.writes() == []
