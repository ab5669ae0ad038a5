"""When the live console runs the scheduling core (issue 16): once per change, never per tick.

Two costs measured on big clusters are gone and these tests count core runs to keep them gone:

- a quiet cluster re-ran the whole core every 5 s with nothing changed (17 % of a core idle at 50k
  pods): now a tick with nothing changed only moves the result's ``now`` on, and the core re-runs
  on a quiet cluster once per ``IDLE_REFRESH`` (60 s, for what the core derives from the clock);
- during the initial sync the tick worker re-ran the core on each partial store (30 % of a cold
  start): now the rows show while the lists stream in and the core's first run is after the last
  first list.

The whole live path runs: a kubeconfig read by the real loader, real HTTP to the fake API server,
the reflectors in the session's own thread. The console's tick is what reads ``snapshot``; the
tests read it the same way, with the session's clock under their control where time matters.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from hpctop.runtime.live_console import IDLE_REFRESH, LiveConsoleSession
from hpctop.sources.kube.connection import load_connection
from hpctop.sources.kube.reflector import ReflectorSettings, ReflectorState
from hpctop.sources.kube.resources import NODES as NODE_SPEC
from hpctop.sources.kube.resources import PODS as POD_SPEC
from tests.kube.conftest import FAST
from tests.kube.fakeserver import NODES, PODS, FakeApiServer
from tests.model_fixtures import node, pod
from tests.polling import until

TICK = 0.5  # the console's tick (real seconds)


class Clock:
    """The session's wall clock, moved by the test."""

    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def seed(fake: FakeApiServer, pods: int) -> None:
    for n in range(2):
        fake.upsert(NODES, node(f"n{n}"))
    for i in range(pods):
        fake.upsert(PODS, pod(f"p{i:03d}", phase="Pending", gpus=1))


async def test_quiet_cluster_runs_the_core_once_per_change_not_per_tick(
    fake: FakeApiServer, kubeconfig: Path
) -> None:
    seed(fake, 20)
    clock = Clock(1_000_000.0)
    connection = await load_connection(str(kubeconfig))
    session = LiveConsoleSession(
        connection, resources=[POD_SPEC, NODE_SPEC], settings=FAST, clock=clock, min_refresh=0.0
    )
    session.start()
    try:
        await until(lambda: session.synced, what="the first lists", timeout=20.0)
        assert len(session.snapshot.pods) == 20
        assert session.schedule_runs == 1
        # a quiet minute of ticks: no core run, but the result's clock follows the wall clock
        ticks = int(IDLE_REFRESH / TICK) - 2
        for _ in range(ticks):
            clock.t += TICK
            session.snapshot  # noqa: B018 -- the tick's read
            assert session.result.now == clock.t
        assert session.schedule_runs == 1, f"{session.schedule_runs - 1} core runs in {ticks} quiet ticks"
        # what the core derives from the clock is refreshed, slowly
        clock.t += 2 * TICK
        session.snapshot  # noqa: B018
        assert session.schedule_runs == 2
        # a change is one core run, however often the view is read after it
        version = session.store.version
        fake.upsert(PODS, pod("p-new", phase="Pending", gpus=1))
        await until(lambda: session.store.version != version, what="the new pod's event", timeout=20.0)
        for _ in range(5):
            clock.t += TICK
            session.snapshot  # noqa: B018
        assert session.schedule_runs == 3
        assert ("team-a", "p-new") in session.snapshot.pods
        assert session.result.plans.get(next(iter(session.snapshot.jobs))) is not None
    finally:
        session.close()


async def test_no_core_run_on_a_half_synced_store_rows_show_while_listing(
    fake: FakeApiServer, kubeconfig: Path
) -> None:
    # The node list is held between its two pages (one node each) until the test releases it,
    # so the half-synced store lasts exactly as long as the test needs: no timing to race. (It
    # used to be a stalled list ended by a 1.5 s read timeout, and under load the pod list, or
    # the reads during the stall, could take longer than that: flaky.)
    seed(fake, 20)
    gate = fake.continue_gates[NODES] = asyncio.Event()
    connection = await load_connection(str(kubeconfig))
    session = LiveConsoleSession(
        connection,
        resources=[POD_SPEC, NODE_SPEC],
        settings=ReflectorSettings(backoff_initial=0.05, backoff_cap=0.2, page_size=1),
        min_refresh=0.0,
    )
    session.start()
    try:
        await until(
            lambda: (
                "Pod" in session.statuses
                and session.statuses["Pod"].state is ReflectorState.SYNCED
                and "Node" in session.statuses
                and session.statuses["Node"].listed >= 1
            ),
            what="the pod list, and the node list's first page",
            timeout=20.0,
        )
        for _ in range(5):  # the ticks of the half-synced store
            assert len(session.snapshot.pods) == 20  # the rows are shown while listing
            await asyncio.sleep(0.05)
        assert not session.statuses["Node"].synced_once, "the node list ended through its gate"
        assert session.listing_views >= 1  # (a view is built per change of the store, not per read)
        assert session.schedule_runs == 0, f"{session.schedule_runs} core runs on a half-synced store"
        assert session.result.plans == {}
        # the last first list ends: the next read is the core's first run, on the whole store
        gate.set()
        await until(lambda: session.synced, what="the node list's last page", timeout=20.0)
        assert len(session.snapshot.nodes) == 2
        assert session.schedule_runs == 1
        key = next(iter(session.snapshot.jobs))
        assert session.result.plans.get(key) is not None
        session.snapshot  # noqa: B018
        assert session.schedule_runs == 1
    finally:
        session.close()
