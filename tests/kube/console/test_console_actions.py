"""Actions from the console on a live cluster, end to end: the key press to the server's log.

A LiveConsoleSession connected to the FakeApiServer through a real kubeconfig (the official
loader, real HTTP), a Pilot pressing the keys a user would, and assertions on what the server
received (``fake.writes()``: method, path, query, body) and on what the console shows (the
confirmation, notifications, the job's history and its audit records). Previews and executes
run in the console's thread workers, so each step waits for those workers while the test's loop
keeps serving the fake.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from textual.pilot import Pilot

from hpctop.actions.requests import ActionKind
from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.tui.app import HpctopApp, make_app
from hpctop.tui.commands import HpctopCommands
from hpctop.tui.screens.confirm import ConfirmScreen
from hpctop.tui.screens.help import HelpScreen
from hpctop.tui.screens.permissions import PermissionsScreen
from hpctop.tui.widgets.jobs import JobsTable
from tests.kube.conftest import live_console
from tests.kube.console.conftest import KEY, SIZE, confirm_text, settle
from tests.kube.fakeserver import JOBS, FakeApiServer, Rbac, Rule
from tests.model_fixtures import batch_job

JOB_PATH = "/apis/batch/v1/namespaces/team-a/jobs/train"


@pytest.fixture
async def live(fake: FakeApiServer, kubeconfig: Path, tmp_path: Path) -> AsyncIterator[LiveConsoleSession]:
    fake.upsert(JOBS, batch_job("train"))
    async with live_console(
        kubeconfig,
        read_only=False,
        audit_path=tmp_path / "state" / "audit.jsonl",
        ready=lambda session: session.synced and KEY in session.snapshot.jobs,
        what="the job to be listed",
    ) as session:
        yield session


def body(request: Any) -> Any:
    return orjson.loads(request.body)


async def select_train(app: HpctopApp, pilot: Pilot[None]) -> None:
    app.step_now(0)
    await pilot.pause()
    assert app.query_one(JobsTable).select_key(KEY)
    await settle(app, pilot)  # the permissions asked at start


async def test_cancel_from_the_console_sends_one_guarded_delete(
    fake: FakeApiServer, live: LiveConsoleSession
) -> None:
    app = make_app(live, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        assert not app.read_only
        await select_train(app, pilot)
        assert app.permission_cache[("team-a", "Job")][ActionKind.CANCEL].allowed is True
        await pilot.press("c")
        await settle(app, pilot)
        shown = confirm_text(app)
        # the server's dry run, and the exact request with its preconditions
        assert "server dry run: Job team-a/train would be deleted (Background propagation)" in shown
        assert f"DELETE {JOB_PATH}" in shown and '"preconditions":{"uid":"uid-train"' in shown
        [dry] = fake.writes()
        assert dry.params["dryRun"] == "All" and fake.get(JOBS, "train", "team-a") is not None

        await pilot.press("y")
        await settle(app, pilot)
        writes = fake.writes()
        assert [(w.method, w.url.path, w.params.get("dryRun")) for w in writes] == [
            ("DELETE", JOB_PATH, "All"),
            ("DELETE", JOB_PATH, None),
        ]
        sent = body(writes[1])
        rv = body(dry)["preconditions"]["resourceVersion"]
        assert sent["propagationPolicy"] == "Background"
        assert sent["preconditions"] == {"uid": "uid-train", "resourceVersion": rv} and rv
        assert fake.get(JOBS, "train", "team-a") is None
        entry = app.journal.of(KEY)[-1]
        assert entry.ok and entry.action == "cancel" and "deleted" in entry.message
        detail = app._detail(KEY).plain
        assert "intent" in detail and "outcome" in detail and "HTTP 200" in detail
        audit_id = fake.audit[-1].audit_id if fake.audit[-1].method == "DELETE" else ""
        assert audit_id and f"Audit-Id {audit_id}" in detail
    records = live.audit_entries(KEY)
    assert [r.phase for r in records] == ["intent", "outcome"] and records[1].status == 200


async def test_hold_and_release_from_the_detail_screen(fake: FakeApiServer, live: LiveConsoleSession) -> None:
    app = make_app(live, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await select_train(app, pilot)
        await pilot.press("enter")  # the detail screen: actions target its job
        await pilot.pause()
        await pilot.press("h")
        await settle(app, pilot)
        assert "server dry run: spec.suspend: false → true" in confirm_text(app)
        await pilot.press("y")
        await settle(app, pilot)
        job = fake.get(JOBS, "train", "team-a")
        assert job is not None and job["spec"]["suspend"] is True

        await pilot.press("u")
        await settle(app, pilot)
        assert "spec.suspend: true → false" in confirm_text(app)
        await pilot.press("y")
        await settle(app, pilot)
        job = fake.get(JOBS, "train", "team-a")
        assert job is not None and job["spec"]["suspend"] is False
        real = [w for w in fake.writes() if "dryRun" not in w.params]
        assert [w.method for w in real] == ["PATCH", "PATCH"]
        assert all(w.headers["Content-Type"].startswith("application/merge-patch+json") for w in real)
        hold, release = (body(w) for w in real)
        assert hold["spec"] == {"suspend": True} and hold["metadata"]["resourceVersion"]
        assert release["spec"] == {"suspend": False}
        assert int(release["metadata"]["resourceVersion"]) > int(hold["metadata"]["resourceVersion"])
        assert [(e.action, e.ok) for e in app.journal.of(KEY)] == [("hold", True), ("release", True)]
        text = str(app.screen.query_one("#detail-text").render())
        assert "hold" in text and "release" in text and "PATCH" in text


async def test_a_conflict_shows_what_changed_and_asks_again(
    fake: FakeApiServer, live: LiveConsoleSession
) -> None:
    app = make_app(live, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await select_train(app, pilot)
        await pilot.press("h")
        await settle(app, pilot)
        assert "spec.suspend" in confirm_text(app)
        changed = fake.get(JOBS, "train", "team-a")
        assert changed is not None
        changed["status"] = {"active": 3}  # the cluster moves on while the user reads the preview
        changed["metadata"].pop("resourceVersion")
        fake.upsert(JOBS, changed)

        await pilot.press("y")
        await settle(app, pilot)
        again = confirm_text(app)  # asked again: what changed, then the fresh preview
        assert "changed since you saw them; nothing was done" in again
        assert "status.active: (unset) → 3" in again and "spec.suspend: false → true" in again
        job = fake.get(JOBS, "train", "team-a")
        assert job is not None and job["spec"]["suspend"] is False  # the 409 changed nothing
        entry = app.journal.of(KEY)[-1]
        assert not entry.ok and "changed since you saw it" in entry.message
        summaries = [n.message for n in app._notifications if n.message.startswith("hold: ")]
        assert summaries == ["hold: 0 done, 1 changed since you saw it (nothing done)"]  # not "1 failed"

        await pilot.press("y")
        await settle(app, pilot)
        job = fake.get(JOBS, "train", "team-a")
        assert job is not None and job["spec"]["suspend"] is True
        real = [w for w in fake.writes() if "dryRun" not in w.params]
        first, second = (body(w)["metadata"]["resourceVersion"] for w in real)
        assert first != second  # the second carries the state shown the second time
        assert app.journal.of(KEY)[-1].ok


async def test_a_403_is_explained_and_not_retried(fake: FakeApiServer, live: LiveConsoleSession) -> None:
    app = make_app(live, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await select_train(app, pilot)
        await pilot.press("c")
        await settle(app, pilot)
        assert "would be deleted" in confirm_text(app)
        # a policy change between preview and execute: the reviews still say yes, the server says no
        fake.rbac.refused.append(Rule(verbs=("delete",), resources=("jobs",)))
        await pilot.press("y")
        await settle(app, pilot)
        real = [w for w in fake.writes() if "dryRun" not in w.params]
        assert [w.method for w in real] == ["DELETE"]  # once: a 403 is never retried
        assert fake.get(JOBS, "train", "team-a") is not None
        entry = app.journal.of(KEY)[-1]
        assert not entry.ok and "(403)" in entry.message and "cannot delete" in entry.message
        notes = [n.message for n in app._notifications]
        assert any("refused delete jobs.batch in team-a (403)" in m and "does not retry" in m for m in notes)
        assert all(not n.markup for n in app._notifications)
        assert "cancel: 0 done, 1 refused" in notes  # its own outcome, not "1 failed"
        assert "HTTP 403" in app._detail(KEY).plain


async def test_denied_actions_are_greyed_out_with_the_reason(
    fake: FakeApiServer, kubeconfig: Path, tmp_path: Path
) -> None:
    fake.rbac = Rbac(rules=[Rule(verbs=("get", "list", "watch", "patch"))])
    fake.upsert(JOBS, batch_job("train"))
    async with live_console(
        kubeconfig,
        read_only=False,
        audit_path=tmp_path / "audit.jsonl",
        ready=lambda session: session.synced and KEY in session.snapshot.jobs,
        what="the job",
    ) as session:
        app = make_app(session, tick_interval=0)
        async with app.run_test(size=SIZE) as pilot:
            await select_train(app, pilot)
            assert app.check_action("job_action", ("cancel",)) is None  # greyed out in the footer
            assert app.check_action("job_action", ("hold",)) is True
            await pilot.press("c")
            await settle(app, pilot)
            assert not isinstance(app.screen, ConfirmScreen)
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            why = str(app.screen.query_one("#help-permissions").render())
            assert (
                "team-a/Job" in why and "probably denied: no rule grants delete jobs.batch in team-a" in why
            )
            app.pop_screen()
            await pilot.pause()

            hits = [h async for h in HpctopCommands(app.screen).search("what may")]
            [hit] = [h for h in hits if h.text == "What may I do?"]
            hit.command()
            await settle(app, pilot)
            assert isinstance(app.screen, PermissionsScreen)
            listed = app.screen.body.plain
            assert "alice@example.com" in listed and "team-a / Job" in listed
            assert "✗ cancel" in listed and "✓ hold" in listed
        assert fake.writes() == []
