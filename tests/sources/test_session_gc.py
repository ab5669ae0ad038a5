"""The session's view read keeps the automatic GC paused, as its loop does, and gives it back.

Why: with the automatic GC on, every young collection during a view read traversed the
snapshot's fresh copies of the pod and job maps, and the full cycle's answer was promoted
through every generation (bench/README.md, session 12, sim). The read must still hand the GC
back in the state it found it, or a console would run with its GC off. And a session sits in
reference cycles, so it must stay within the cyclic GC's reach (it was frozen out of it once,
and every session ever built stayed in memory).
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from hpctop.model.store import Snapshot
from hpctop.runtime import session as session_module
from hpctop.runtime.session import Session
from hpctop.sources.scenario import parse_scenario
from hpctop.sources.simulator import SimulatedCluster
from tests.sources.test_simulator import BASE, JOBS


@pytest.fixture
def gc_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        if not was:
            gc.disable()


def _session_recording_gc(seen: list[bool]) -> Session:
    session = Session(SimulatedCluster(parse_scenario(BASE + JOBS), seed=3))
    take = session.store.snapshot

    def snapshot() -> Snapshot:
        seen.append(gc.isenabled())
        return take()

    session.store.snapshot = snapshot  # type: ignore[method-assign]
    return session


def test_the_view_read_runs_with_the_automatic_gc_paused_and_restores_it(gc_on: None) -> None:
    seen: list[bool] = []
    session = _session_recording_gc(seen)
    session.step(120)
    seen.clear()
    result = session.result
    assert seen == [False]  # the view's snapshot was taken with the automatic GC paused
    assert gc.isenabled()  # and the GC is back on for the caller
    assert result.now == session.now
    assert session.snapshot is session.snapshot  # read again without a change: the same view


def test_a_caller_that_runs_with_the_gc_off_keeps_it_off(gc_on: None) -> None:
    seen: list[bool] = []
    session = _session_recording_gc(seen)
    session.step(60)
    gc.disable()
    _ = session.result
    assert not gc.isenabled()
    gc.enable()
    session.refresh()  # a forced refresh (after an action) pauses and restores it too
    assert gc.isenabled()
    assert seen and not any(seen)


def test_a_dropped_session_is_freed_with_all_it_held(gc_on: None) -> None:
    # the session sits in reference cycles (the store's clock, the actuator's callback): only
    # the cyclic GC frees it, which it cannot when the session was frozen out of its reach
    session = Session(SimulatedCluster(parse_scenario(BASE + JOBS), seed=3))
    session.step(120)
    _ = session.result
    dropped, store = weakref.ref(session), weakref.ref(session.store)
    del session
    gc.collect()
    assert dropped() is None
    assert store() is None


class _Cycle:
    """A container in a reference cycle with itself (only the cyclic GC frees it)."""

    def __init__(self) -> None:
        self.me = self


def test_the_view_read_leaves_no_young_containers_and_nothing_frozen(gc_on: None) -> None:
    # what a read leaves is promoted untraversed: no young collection is due after it, and the
    # promotion (gc.freeze then gc.unfreeze) leaves nothing in the permanent generation
    session = Session(SimulatedCluster(parse_scenario(BASE + JOBS), seed=3))
    session.step(120)
    gc.disable()  # so that no automatic collection runs between the read and the count
    try:
        session._view_stale = True
        gc.enable()
        session.refresh()
        young = gc.get_count()[0]
    finally:
        gc.enable()
    assert young < 50  # a young collection would otherwise traverse the answer (thousands)
    assert gc.get_freeze_count() == 0


def test_promotion_keeps_what_someone_else_froze(gc_on: None) -> None:
    # a frozen object is never collected; had a promotion thawed it (gc.unfreeze), the full
    # collections below would free this garbage cycle
    session = Session(SimulatedCluster(parse_scenario(BASE + JOBS), seed=3))
    cycle = _Cycle()
    frozen_garbage = weakref.ref(cycle)
    gc.freeze()
    try:
        del cycle
        session.step(60)
        _ = session.result
        gc.collect()
        assert frozen_garbage() is not None
    finally:
        gc.unfreeze()
    gc.collect()
    assert frozen_garbage() is None


def test_promoted_cyclic_garbage_is_freed_by_the_budgeted_full_collection(
    gc_on: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # cyclic garbage young when a promotion runs (another thread's) waits for a full collection;
    # one runs every PROMOTED_PER_FULL_COLLECTION promoted containers, so it cannot pile up
    monkeypatch.setattr(session_module, "PROMOTED_PER_FULL_COLLECTION", 10)
    monkeypatch.setattr(session_module, "_promoted", [0])
    gc.collect()
    gc.disable()
    try:
        garbage = weakref.ref(_Cycle())
        gc.collect(0)  # young: a young collection frees it
        assert garbage() is None
        garbage = weakref.ref(_Cycle())
        filler = [[index] for index in range(20)]  # the count passes the budget (10)
        session_module.promote_young()
        assert garbage() is None  # the budget ran a full collection
        monkeypatch.setattr(session_module, "PROMOTED_PER_FULL_COLLECTION", 10**9)
        garbage = weakref.ref(_Cycle())
        session_module.promote_young()
        gc.collect(1)
        assert garbage() is not None  # promoted: the young collections no longer reach it
        gc.collect()
        assert garbage() is None  # and a full one does
    finally:
        gc.enable()
    del filler
