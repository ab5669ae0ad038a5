"""R1, console-wide: in read-only mode nothing the console offers reaches the server as a write.

RELIABILITY.md §2.4/§6: a Pilot drives every key binding (enumerated from the keymap table, as
tests/tui/test_tui.py does for the simulator), every command-palette entry and a few mouse clicks on
a live console connected to the FakeApiServer over real HTTP, then the server's request log must
hold no POST/PUT/PATCH/DELETE except the three SelfSubject reviews. The action keys are also
pressed on the job detail screen and called directly, so a screen that forgot to check read-only
would be caught by the server's log, not only by the console's own flag.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hpctop.actions.requests import ActionKind, ActionRequest
from hpctop.sources.kube.resources import DEFAULT_RESOURCES
from hpctop.sources.kube.transport import ReadOnlyViolation
from hpctop.sources.scenario import parse_scenario
from hpctop.tui.app import make_app
from hpctop.tui.commands import HpctopCommands
from hpctop.tui.keymap import KEYMAP
from hpctop.tui.screens.permissions import PermissionsScreen
from hpctop.tui.widgets.gpus import GpuPane
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.queues import QueuePane
from tests.kube.conftest import live_console
from tests.kube.console.conftest import CQ, KUEUE, put_queues
from tests.kube.fakeserver import FakeApiServer
from tests.kube.simserver import serve
from tests.polling import until
from tests.sources.test_simulator import BASE
from tests.sources.test_simulator import JOBS as SCENARIO_JOBS

SMALL = parse_scenario(BASE + SCENARIO_JOBS, name="t")
REVIEWS = ("selfsubjectaccessreviews", "selfsubjectrulesreviews", "selfsubjectreviews")


def mutating(fake: FakeApiServer) -> list[str]:
    """Every POST/PUT/PATCH/DELETE the server saw, the SelfSubject reviews excepted."""
    out = []
    for _, request in fake.log:
        method = str(getattr(request.method, "value", request.method)).upper()
        path = request.url.path
        if method in ("POST", "PUT", "PATCH", "DELETE") and path.rsplit("/", 1)[-1] not in REVIEWS:
            out.append(f"{method} {path}")
    return out


async def test_read_only_console_sends_no_write(
    fake: FakeApiServer, kubeconfig: Path, tmp_path: Path
) -> None:
    serve(fake, SMALL, at=10)
    put_queues(fake)  # a Kueue ClusterQueue row, so the queue keys have something to act on
    audit = tmp_path / "audit.jsonl"
    async with live_console(
        kubeconfig,
        read_only=True,
        audit_path=audit,
        resources=(*DEFAULT_RESOURCES, *KUEUE),
        ready=lambda session: (
            session.synced and bool(session.snapshot.jobs) and f"root.{CQ}" in session.result.queues
        ),
        what="the served jobs and the ClusterQueue",
    ) as session:
        app = make_app(session, tick_interval=0, show_charts=False)
        async with app.run_test(size=(160, 50)) as pilot:
            app.step_now(0)
            await pilot.pause()
            assert app.read_only
            shown = {b.binding.action for b in app.active_bindings.values() if b.binding.show}
            assert not any(a.startswith("job_action") for a in shown)

            def busy() -> bool:
                return any(w.is_running for w in app.workers if w.group == "actions")

            async def close_screens() -> None:
                if busy():
                    await until(lambda: not busy(), what="workers")
                    await pilot.pause()
                while len(app.screen_stack) > 1:
                    app.pop_screen()
                    await pilot.pause()

            # Every binding is a (scope, key): a pane's keys are pressed with that pane focused, the
            # app-wide ones (actions included) and the screens' ones with the jobs pane focused.
            def keys_of(*scopes: str) -> list[str]:
                chosen = (s for s in KEYMAP if s.scope in scopes and s.name != "quit")
                return list(dict.fromkeys(k.strip() for spec in chosen for k in spec.keys.split(",")))

            panes = {
                "1": ("gpus", keys_of("gpus")),
                "2": ("queues", keys_of("queues")),
                "3": ("jobs", keys_of("jobs", "app", "detail", "modal")),
            }
            pressed = {k for _, keys in panes.values() for k in keys}
            assert {"c", "r", "h", "u", "p", "m", "x", "o", "y", "space", "ctrl+p"} <= pressed
            assert all(k.strip() in pressed for s in KEYMAP if s.name != "quit" for k in s.keys.split(","))
            # the queue keys with the Kueue ClusterQueue selected: hidden, inert, even called directly
            await pilot.press("2")
            assert app.query_one(QueuePane).select(f"root.{CQ}")
            assert app.check_action("queue_stop", ("close",)) is False
            for key in ("x", "o", "enter", "down", "enter", "y"):
                await pilot.press(key)
                await close_screens()
            assert app.query_one(QueuePane).select(f"root.{CQ}")
            app.action_queue_stop("close")
            app.action_queue_stop("open")
            await close_screens()
            for pane, (name, keys) in panes.items():
                await pilot.press(pane)
                for key in keys:
                    await pilot.press(key)
                    await close_screens()
                    if app.focused is None or app.focused.id != name:  # tab, 1/2/3 moved it: back
                        await pilot.press(pane)
            await pilot.press("3", "home", "enter")  # the detail screen, then every action key there
            await pilot.pause()
            for key in ("c", "r", "h", "u", "p", "m", "y", "space", "question_mark"):
                await pilot.press(key)
                await pilot.pause()
            await close_screens()

            # mouse: a header (sort), a row (select), a double click (detail), the GPU and queue panes
            await pilot.click(JobsTable, offset=(3, 0))
            await pilot.click(JobsTable, offset=(3, 2))
            await pilot.click(JobsTable, offset=(3, 2), times=2)
            await close_screens()
            await pilot.click(GpuPane, offset=(4, 2))
            await pilot.click(QueuePane, offset=(4, 2))
            await close_screens()

            provider = HpctopCommands(app.screen)
            hits = [h async for h in provider.discover()]
            for query in ("train", "root", "node", "cancel", "hold", "what may"):
                hits += [h async for h in provider.search(query)]
            labels = {str(h.text) for h in hits}
            assert "What may I do?" in labels and any(label.startswith("job: ") for label in labels)
            saw_permissions = False
            for hit in hits:
                hit.command()
                await until(lambda: not busy(), what="workers")
                await pilot.pause()
                saw_permissions = saw_permissions or isinstance(app.screen, PermissionsScreen)
                await close_screens()
            assert saw_permissions
            app.action_job_action("cancel")  # even called directly it does nothing
            await close_screens()
            assert app.read_only  # R3: nothing pressed or run above turned writes on
        # the second layer: the transport refuses too, before any socket I/O
        with pytest.raises(ReadOnlyViolation):
            await asyncio.to_thread(
                session.kube_actuator.execute, ActionRequest(ActionKind.CANCEL, ("default", "Job", "train"))
            )
    assert mutating(fake) == []
    assert fake.writes() == []
    reviews = [r.url.path for _, r in fake.log if r.url.path.endswith("selfsubjectreviews")]
    assert reviews  # "What may I do?" asked who we are: the exempt POST did go out
    assert not audit.exists()  # nothing was sent, so nothing was logged
