"""Closing and opening Kueue queues from the console, and what a 403 does to the cached permissions.

A LiveConsoleSession on the FakeApiServer over real HTTP (the official kubeconfig loader), a Pilot
pressing ``x``/``o`` on the queue pane, and assertions on the server's request log: the dry run
first, then one RV-guarded merge patch of ``spec.stopPolicy``; the key greyed out when the rules
review forbids ``patch clusterqueues``; and after a 403 from the server itself (a policy the reviews
cannot see) the rules review of that namespace is asked again, the action greyed out with the
reason, and nothing is resent.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from hpctop.actions.requests import ActionKind
from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.tui.app import make_app
from hpctop.tui.screens.confirm import ConfirmScreen, PickScreen
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.queues import QueuePane
from tests.kube.console.conftest import (
    CQ,
    KEY,
    SIZE,
    confirm_text,
    kueue_console,
    patches,
    put_queues,
    select_queue,
    settle,
)
from tests.kube.fakeserver import CLUSTER_QUEUES, JOBS, LOCAL_QUEUES, FakeApiServer, Rbac, Rule
from tests.polling import until

CQ_PATH = f"/apis/kueue.x-k8s.io/v1beta2/clusterqueues/{CQ}"
REVIEWS = "selfsubjectrulesreviews"


def rules_reviews(fake: FakeApiServer) -> int:
    return sum(1 for _, r in fake.log if r.url.path.endswith(REVIEWS))


async def test_close_with_hold_and_drain_then_open(fake: FakeApiServer, kueue: LiveConsoleSession) -> None:
    app = make_app(kueue, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await select_queue(app, pilot)
        assert app.queue_target() == ("ClusterQueue", CQ, "")
        assert app.check_action("queue_stop", ("close",)) is True
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, PickScreen)
        await pilot.press("down", "enter")  # HoldAndDrain
        await settle(app, pilot)
        shown = confirm_text(app)
        assert f"Close ClusterQueue {CQ} (spec.stopPolicy HoldAndDrain)" in shown
        assert 'server dry run: spec.stopPolicy: "None" → "HoldAndDrain"' in shown
        assert "EVICTS the 2 admitted workload(s)" in shown
        assert f"PATCH {CQ_PATH}" in shown and "1 of 1 queue(s) will be changed" in shown
        [dry] = patches(fake)
        assert dry.params["dryRun"] == "All" and dry.url.path == CQ_PATH
        assert fake.get(CLUSTER_QUEUES, CQ)["spec"]["stopPolicy"] == "None"  # type: ignore[index]

        await pilot.press("y")
        await settle(app, pilot)
        dry, real = patches(fake)
        assert "dryRun" not in real.params and real.params["fieldManager"] == "hpctop"
        sent = orjson.loads(real.body)
        seen_rv = orjson.loads(dry.body)["metadata"]["resourceVersion"]
        assert sent == {"metadata": {"resourceVersion": seen_rv}, "spec": {"stopPolicy": "HoldAndDrain"}}
        assert fake.get(CLUSTER_QUEUES, CQ)["spec"]["stopPolicy"] == "HoldAndDrain"  # type: ignore[index]
        assert any(n.message == "close queue: 1 done" for n in app._notifications)

        await pilot.press("o")  # open: no choice to make, straight to the dry run
        await settle(app, pilot)
        assert 'spec.stopPolicy: "HoldAndDrain" → "None"' in confirm_text(app)
        await pilot.press("y")
        await settle(app, pilot)
        assert fake.get(CLUSTER_QUEUES, CQ)["spec"]["stopPolicy"] == "None"  # type: ignore[index]
        assert len(patches(fake)) == 4  # dry run + patch, twice; nothing else
    records = [r for r in kueue.audit.records() if r.job == f"/ClusterQueue/{CQ}"]
    assert [(r.phase, r.action) for r in records] == [
        ("intent", "stop-policy:HoldAndDrain"),
        ("outcome", "stop-policy:HoldAndDrain"),
        ("intent", "stop-policy:None"),
        ("outcome", "stop-policy:None"),
    ]


async def test_hold_is_the_first_choice_and_escape_sends_nothing(
    fake: FakeApiServer, kueue: LiveConsoleSession
) -> None:
    app = make_app(kueue, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await select_queue(app, pilot)
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("escape")  # no choice: nothing asked, nothing sent
        await settle(app, pilot)
        assert not isinstance(app.screen, (PickScreen, ConfirmScreen)) and fake.writes() == []
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("enter")  # Hold
        await settle(app, pilot)
        assert "admitted workload(s) keep running" in confirm_text(app)
        await pilot.press("n")
        await settle(app, pilot)
        assert [w.params.get("dryRun") for w in fake.writes()] == ["All"]  # only the preview
        assert fake.get(CLUSTER_QUEUES, CQ)["spec"]["stopPolicy"] == "None"  # type: ignore[index]


async def test_queue_keys_greyed_out_when_the_review_forbids_patch(
    fake: FakeApiServer, kubeconfig: Path, tmp_path: Path
) -> None:
    fake.rbac = Rbac(
        rules=[Rule(verbs=("get", "list", "watch")), Rule(verbs=("patch",), resources=("jobs",))]
    )
    put_queues(fake)
    async with kueue_console(fake, kubeconfig, tmp_path) as session:
        app = make_app(session, tick_interval=0)
        async with app.run_test(size=SIZE) as pilot:
            await select_queue(app, pilot)
            assert app.check_action("queue_stop", ("close",)) is None  # greyed out in the footer
            assert app.check_action("queue_stop", ("open",)) is None
            permission = app.queue_permission("close")
            assert permission is not None and "no rule grants patch clusterqueues.kueue.x-k8s.io" in (
                permission.reason
            )
            app.action_queue_stop("close")  # even called directly: refused with the reason
            await settle(app, pilot)
            assert not isinstance(app.screen, (PickScreen, ConfirmScreen))
            assert any("close queue: probably denied" in n.message for n in app._notifications)
        assert fake.writes() == []


async def test_a_403_on_a_queue_asks_the_review_again_and_greys_it_out(
    fake: FakeApiServer, kueue: LiveConsoleSession
) -> None:
    app = make_app(kueue, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await select_queue(app, pilot)
        await pilot.press("o")  # already open: the preview says so and Confirm is disabled
        await settle(app, pilot)
        assert "already has spec.stopPolicy None" in confirm_text(app)
        await pilot.press("n")
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("enter")
        await settle(app, pilot)
        assert "server dry run" in confirm_text(app)
        # a policy change between preview and execute: the reviews still say yes, the server says no
        fake.rbac.refused.append(Rule(verbs=("patch",), resources=("clusterqueues",)))
        asked = rules_reviews(fake)
        await pilot.press("y")
        await settle(app, pilot)
        await until(lambda: rules_reviews(fake) > asked, what="the rules review asked again")
        await settle(app, pilot)
        assert [w.params.get("dryRun") for w in patches(fake)] == ["All", None]  # once: never retried
        assert fake.get(CLUSTER_QUEUES, CQ)["spec"]["stopPolicy"] == "None"  # type: ignore[index]
        notes = [n.message for n in app._notifications]
        assert any("refused patch clusterqueues.kueue.x-k8s.io (cluster-scoped) (403)" in m for m in notes)
        assert any("Rules review asked again: allowed by the rules review" in m for m in notes)
        # the review still says yes, but the server's 403 wins: greyed out, with the reason
        assert app.check_action("queue_stop", ("close",)) is None
        permission = app.queue_permission("close")
        assert permission is not None and "refused by the API server (403)" in permission.reason
        assert app.check_action("queue_stop", ("open",)) is True  # only the refused action
        await pilot.press("x")
        await settle(app, pilot)
        assert not isinstance(app.screen, (PickScreen, ConfirmScreen))
        assert len(patches(fake)) == 2


async def test_a_403_on_a_job_asks_the_review_again_and_greys_it_out(
    fake: FakeApiServer, kueue: LiveConsoleSession
) -> None:
    app = make_app(kueue, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        app.step_now(0)
        await pilot.pause()
        assert app.query_one(JobsTable).select_key(KEY)
        await settle(app, pilot)
        assert app.check_action("job_action", ("hold",)) is True
        await pilot.press("h")
        await settle(app, pilot)
        fake.rbac.refused.append(Rule(verbs=("patch",), resources=("jobs",), namespaces=("team-a",)))
        asked = rules_reviews(fake)
        await pilot.press("y")
        await settle(app, pilot)
        await until(lambda: rules_reviews(fake) > asked, what="the rules review asked again")
        await settle(app, pilot)
        assert ("team-a", "Job") in app.permission_cache  # filled again by the fresh review
        assert app.check_action("job_action", ("hold",)) is None
        assert app.check_action("job_action", ("cancel",)) is True
        permission = app.permission_for("hold", KEY)
        assert permission is not None and not permission.allowed and "403" in permission.reason
        await pilot.press("h")  # greyed out: pressing it sends nothing
        await settle(app, pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert [w.params.get("dryRun") for w in patches(fake)] == ["All", None]
        job = fake.get(JOBS, "train", "team-a")
        assert job is not None and not job["spec"].get("suspend")
        assert ActionKind.HOLD in app.permission_cache[("team-a", "Job")]


async def test_a_403_greying_expires(fake: FakeApiServer, kueue: LiveConsoleSession) -> None:
    now = [1000.0]
    app = make_app(kueue, tick_interval=0, clock=lambda: now[0])
    async with app.run_test(size=SIZE) as pilot:
        await select_queue(app, pilot)
        app.denied[(kueue.default_namespace, "ClusterQueue", ActionKind.HOLD)] = (now[0], "refused (403)")
        assert app.check_action("queue_stop", ("close",)) is None
        now[0] += 301.0  # DENIED_TTL later the rules review decides again
        assert app.check_action("queue_stop", ("close",)) is True


async def test_a_local_queue_row_closes_and_opens_its_local_queue(
    fake: FakeApiServer, kueue: LiveConsoleSession
) -> None:
    path = f"root.{CQ}.team-a/team-q"
    app = make_app(kueue, tick_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        app.step_now(0)
        await pilot.pause()
        pane = app.query_one(QueuePane)
        assert path in pane.local and pane.queues[f"root.{CQ}"].children == (path,)
        assert path not in kueue.result.queues  # a display row: the core's tree is unchanged
        await pilot.press("2")
        assert pane.select(path)
        await settle(app, pilot)
        assert app.queue_target() == ("LocalQueue", "team-q", "team-a")
        assert app.check_action("queue_stop", ("close",)) is True
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("enter")  # Hold
        await settle(app, pilot)
        shown = confirm_text(app)
        assert "Close LocalQueue team-a/team-q (spec.stopPolicy Hold)" in shown
        assert "PATCH /apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/localqueues/team-q" in shown
        await pilot.press("y")
        await settle(app, pilot)
        lq = fake.get(LOCAL_QUEUES, "team-q", "team-a")
        assert lq is not None and lq["spec"]["stopPolicy"] == "Hold"
        await until(lambda: kueue.snapshot.queues[path].state == "Held", what="the LocalQueue held")
        app.step_now(0)
        await pilot.pause()
        assert pane.queues[path].state.value == "closed"  # the row says so: "[closed]"
        await pilot.press("o")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        lq = fake.get(LOCAL_QUEUES, "team-q", "team-a")
        assert lq is not None and lq["spec"]["stopPolicy"] == "None"
    assert fake.get(CLUSTER_QUEUES, CQ)["spec"]["stopPolicy"] == "None"  # type: ignore[index]
