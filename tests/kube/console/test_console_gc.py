"""The live console's heap freeze (``settle_heap``) must not keep a closed session alive.

Once every resource is listed the session moves the heap out of the cyclic GC's reach
(``gc.freeze()``, W15: full collections over a big store stopped every thread for up to a
second). A frozen object is never collected, and a session sits in reference cycles (its
reflectors' and pollers' callbacks are its bound methods), so before this test a synced session
that was closed and dropped stayed in memory with its whole store, once per session a process
built (the simulator's session had the same leak: bench/README.md, session 12, sim, step 3).
Closing the last frozen session now unfreezes the heap and puts the GC's threshold back.
"""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.sources.kube.connection import load_connection
from hpctop.sources.kube.resources import NODES as NODE_SPEC
from hpctop.sources.kube.resources import PODS as POD_SPEC
from tests.kube.conftest import FAST
from tests.kube.fakeserver import NODES, PODS, FakeApiServer
from tests.model_fixtures import node, pod
from tests.polling import until


async def _synced_session(kubeconfig: Path) -> LiveConsoleSession:
    connection = await load_connection(str(kubeconfig))
    session = LiveConsoleSession(connection, resources=[POD_SPEC, NODE_SPEC], settings=FAST, min_refresh=0.0)
    session.start()
    await until(
        lambda: session.synced and session._frozen, what="the first lists and the freeze", timeout=20.0
    )
    session.snapshot  # noqa: B018  (the view, as the console's tick reads it)
    return session


async def test_a_closed_synced_session_is_freed_and_the_heap_unfrozen(
    fake: FakeApiServer, kubeconfig: Path
) -> None:
    fake.upsert(NODES, node("n0"))
    for i in range(5):
        fake.upsert(PODS, pod(f"p{i}", phase="Pending", gpus=1))
    threshold = gc.get_threshold()
    refs = []
    for _ in range(2):  # a reconnect (the CLI's read-only first connection, `hpctop record`, tests)
        session = await _synced_session(kubeconfig)
        assert gc.get_freeze_count() > 0, "the synced session froze nothing"
        assert gc.get_threshold() != threshold
        refs.append(weakref.ref(session))
        session.close()
        del session
        assert gc.get_freeze_count() == 0, "closing the last frozen session left the heap frozen"
        assert gc.get_threshold() == threshold
        gc.collect()
        assert refs[-1]() is None, "a closed session stayed in memory (frozen in its cycles)"


async def test_the_heap_stays_frozen_while_another_session_is_open(
    fake: FakeApiServer, kubeconfig: Path
) -> None:
    fake.upsert(NODES, node("n0"))
    fake.upsert(PODS, pod("p0", phase="Pending", gpus=1))
    first = await _synced_session(kubeconfig)
    second = await _synced_session(kubeconfig)
    try:
        first.close()
        assert gc.get_freeze_count() > 0, "the open session's heap was unfrozen under it"
        first.close()  # closing twice releases nothing twice
        assert gc.get_freeze_count() > 0
    finally:
        second.close()
    assert gc.get_freeze_count() == 0
