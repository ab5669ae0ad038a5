"""The console while a big first list streams (issue 16): a partial table, said to be partial.

The whole live path: a kubeconfig read by the real loader, real HTTP to the fake API server, the
reflectors in the session's own thread. The fake holds the pods' second page (``continue_gates``)
so the test sees what the console shows between two pages: the first page's rows, the status
bar's "listing… N pods", and no core run on the half-listed store.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.sources.kube.connection import load_connection
from hpctop.sources.kube.reflector import ReflectorState
from hpctop.sources.kube.resources import NODES as NODE_SPEC
from hpctop.sources.kube.resources import PODS as POD_SPEC
from tests.kube.conftest import FAST
from tests.kube.fakeserver import NODES, PODS, FakeApiServer
from tests.model_fixtures import node, pod
from tests.polling import until


async def test_rows_appear_while_the_first_list_streams(fake: FakeApiServer, kubeconfig: Path) -> None:
    fake.upsert(NODES, node("n0"))
    for i in range(30):
        fake.upsert(PODS, pod(f"p{i:02d}", phase="Pending", gpus=1))
    gate = fake.continue_gates[PODS] = asyncio.Event()
    connection = await load_connection(str(kubeconfig))
    session = LiveConsoleSession(
        connection,
        resources=[POD_SPEC, NODE_SPEC],
        settings=dataclasses.replace(FAST, page_size=10),
        min_refresh=0.0,
    )
    session.start()
    try:
        await until(
            lambda: "Pod" in session.statuses and session.statuses["Pod"].listed == 10,
            what="the first page of pods",
            timeout=20.0,
        )
        assert session.statuses["Pod"].state is ReflectorState.SYNCING
        assert len(session.snapshot.jobs) == 10  # the partial table: the first page's rows
        assert "listing… 10 pods" in session.connection
        assert session.schedule_runs == 0 and session.result.plans == {}  # no core on half a list
        gate.set()
        await until(lambda: session.synced, what="the whole list", timeout=20.0)
        assert len(session.snapshot.jobs) == 30
        assert "listing" not in session.connection
        assert session.schedule_runs == 1 and session.result.plans
    finally:
        session.close()
