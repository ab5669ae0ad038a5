"""The core budget (issue 16, K1): event-driven core runs take at most ``core_share`` of a core.

At 50k pods a core run costs ~0.9 s, and a stream that changes what the core reads on every tick
kept the tick worker at a full core. A tick's read that comes within ``cost * (1 / core_share -
1)`` of the last run shows the new snapshot with the last result and owes the core a run, which
the first read after the budget allows pays, with no further event; the refresh key is never
deferred; a cheap core (every small cluster) is never deferred. The core's cost is made to count
here by a scheduler that also sleeps (the real core, plus 0.1 s); the budget is moved by
``core_share`` (read at each check), so nothing waits on wall-clock luck.
"""

from __future__ import annotations

import time
from pathlib import Path

import orjson

from hpctop.model.policy import Policy
from hpctop.model.store import Snapshot
from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.scheduling.core import schedule
from hpctop.scheduling.types import ScheduleResult
from hpctop.sources.kube.connection import load_connection
from hpctop.sources.kube.resources import NODES as NODE_SPEC
from hpctop.sources.kube.resources import PODS as POD_SPEC
from tests.kube.conftest import FAST
from tests.kube.fakeserver import NODES, PODS, FakeApiServer
from tests.model_fixtures import node, pod
from tests.polling import until


def slow_core(snapshot: Snapshot, policy: Policy, now: float) -> ScheduleResult:
    time.sleep(0.1)  # a core run that costs what a big cluster's does, at the budget's scale
    return schedule(snapshot, policy, now)


def submit(session: LiveConsoleSession, name: str) -> None:
    """A pending pod, as the reflector applies a watch line (no network: no timing involved)."""
    obj = pod(name, phase="Pending", gpus=1)
    obj["metadata"]["resourceVersion"] = str(1000 + len(session.store.pods))
    session.store.apply_raw("Pod", orjson.dumps({"type": "ADDED", "object": obj}))


async def _session(fake: FakeApiServer, kubeconfig: Path, scheduler: object) -> LiveConsoleSession:
    fake.upsert(NODES, node("n0"))
    fake.upsert(PODS, pod("p0", phase="Pending", gpus=1))
    connection = await load_connection(str(kubeconfig))
    session = LiveConsoleSession(
        connection,
        resources=[POD_SPEC, NODE_SPEC],
        settings=FAST,
        min_refresh=0.0,
        scheduler=scheduler,  # type: ignore[arg-type]
    )
    session.start()
    await until(lambda: session.synced, what="the first lists", timeout=20.0)
    session.snapshot  # noqa: B018  (the core's first run, on the whole store)
    assert session.schedule_runs == 1
    return session


def plan_keys(session: LiveConsoleSession) -> set[str]:
    return {key[2] for key in session.result.plans}


async def test_a_tick_inside_the_budget_shows_new_rows_with_the_last_plans_then_pays_what_it_owes(
    fake: FakeApiServer, kubeconfig: Path
) -> None:
    session = await _session(fake, kubeconfig, slow_core)
    try:
        session.core_share = 0.001  # the next run waits ~100 s: every read below is inside it
        session.refresh()  # the refresh key: never deferred (and it measures the cost again)
        assert session.schedule_runs == 2
        submit(session, "new")
        snapshot = session.snapshot
        assert session.schedule_runs == 2 and session.core_runs_deferred == 1
        assert {key[2] for key in snapshot.jobs} == {"p0", "new"}  # the rows are current
        assert "new" not in plan_keys(session)  # the plans are the last run's
        session.snapshot  # noqa: B018  (no new event: still inside the budget, still owed)
        assert session.schedule_runs == 2
        session.core_share = 1.0  # the budget now allows a run: the owed one comes, no event needed
        session.snapshot  # noqa: B018
        assert session.schedule_runs == 3 and "new" in plan_keys(session)
        session.snapshot  # noqa: B018  (paid: nothing owed, nothing changed)
        assert session.schedule_runs == 3
        session.core_share = 0.001
        submit(session, "newer")
        session.refresh()  # the refresh key inside the budget: runs at once
        assert session.schedule_runs == 4 and "newer" in plan_keys(session)
    finally:
        session.close()


async def test_a_cheap_core_is_never_deferred(fake: FakeApiServer, kubeconfig: Path) -> None:
    session = await _session(fake, kubeconfig, schedule)  # a few ms: under CORE_DEFER_ABOVE
    try:
        session.core_share = 0.001
        for k in range(3):
            submit(session, f"new{k}")
            session.snapshot  # noqa: B018
            assert session.schedule_runs == 2 + k and f"new{k}" in plan_keys(session)
        assert session.core_runs_deferred == 0
    finally:
        session.close()
