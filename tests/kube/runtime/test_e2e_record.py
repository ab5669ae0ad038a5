"""``hpctop record`` on a live cluster, then ``--replay``: the replay ends where the reflectors did.

The recording is made through the real path (kubeconfig, HTTP, reflectors); during it the served
simulation moves on, and the server compacts its history and drops every watch while a pod is
deleted, so the reflector must relist and drop that pod. The replay must apply the relist the
same way (the ``relist`` markers) and end with the same pods, nodes and jobs as the store the
reflectors built, which itself must equal what the server holds.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from hpctop.model.store import Store
from hpctop.runtime.live import list_once
from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.runtime.recording import ReplaySession, record_live
from hpctop.sources.record import Recorder
from tests.kube.fakeserver import PODS, FakeApiServer
from tests.kube.runtime.test_e2e_live import SMALL
from tests.kube.simserver import serve
from tests.polling import until


def same_cluster(a: Store, b: Store) -> bool:
    return a.pods == b.pods and a.nodes == b.nodes and a.workloads == b.workloads


@pytest.mark.serial  # wall time: the recording stops within 2 s
async def test_a_live_recording_replays_to_the_same_store(
    fake: FakeApiServer, kubeconfig: Path, tmp_path: Path
) -> None:
    # Watches cut by ``fake.disconnect()`` linger on the server until their next write; frequent
    # bookmarks make that write come soon, so the server can shut down at the end of the test.
    fake.bookmark_interval = 0.5
    served = serve(fake, SMALL, at=10)
    path = tmp_path / "rec.jsonl.gz"
    stop = threading.Event()
    live: list[LiveConsoleSession] = []

    def tick(recorder: Recorder, session: LiveConsoleSession) -> None:
        if not live:
            live.append(session)

    task = asyncio.create_task(
        asyncio.to_thread(record_live, path, str(kubeconfig), None, stop=stop, on_tick=tick, tick=0.02)
    )
    try:
        await until(lambda: bool(live) and live[0].synced, what="the recorder's reflectors to sync")
        session = live[0]
        served.step(60)  # watch events: pods end and start
        truth = await list_once(str(kubeconfig), None, None)
        await until(lambda: same_cluster(session.store, truth), what="the watch to carry the changes")
        # history gone and every watch cut while a pod is deleted: only a relist can notice
        fake.compact()
        victim_ns, victim = next(iter(fake.items_of(PODS)))
        fake.remove(PODS, victim, victim_ns)
        fake.disconnect()
        await until(lambda: (victim_ns, victim) not in session.store.pods, what="the relist")
        truth = await list_once(str(kubeconfig), None, None)
        await until(lambda: same_cluster(session.store, truth), what="the reflectors to catch up")
    finally:
        stop.set()
        started = time.perf_counter()
        stats = await task
    assert time.perf_counter() - started < 2.0  # the reflectors stop within a second, then the file
    assert stats.stopped
    assert stats.events > 0 and path.stat().st_size > 0

    replay = ReplaySession(path)
    replay.run_to_end()
    assert replay.skipped_lines == 0 and not replay.recording.truncated
    assert same_cluster(replay.store, session.store)
    assert (victim_ns, victim) not in replay.store.pods
    assert replay.store.snapshot().jobs.keys() == session.store.snapshot().jobs.keys()
    await until(lambda: fake.open_watches == 0, 3.0, "the server to see every watch closed")
