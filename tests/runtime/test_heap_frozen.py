"""The frozen-heap record (``hpctop.runtime.heap``): the simulator's promotion of young objects
must not ask ``gc.get_freeze_count()`` while a recorded freeze holds (it walks every frozen
object: P7 at 62x in session 13's full bench), and must still leave a frozen heap frozen."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from hpctop.runtime import heap, session


@pytest.fixture
def recorded_freeze() -> Iterator[None]:
    gc.collect()
    heap.freeze()
    try:
        yield
    finally:
        heap.unfreeze()


def test_promotion_under_a_recorded_freeze_does_not_walk_the_frozen_heap(
    recorded_freeze: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def walk() -> int:
        raise AssertionError("gc.get_freeze_count() walked the frozen heap")

    monkeypatch.setattr(gc, "get_freeze_count", walk)  # the module session.py calls it on
    assert heap.frozen()
    session.promote_young()  # skipped in O(1): the record says frozen


def test_a_recorded_freeze_survives_promotion_and_unfreeze_clears_the_record(recorded_freeze: None) -> None:
    frozen = gc.get_freeze_count()
    assert frozen > 0 and heap.frozen()
    session.promote_young()
    assert gc.get_freeze_count() >= frozen  # nothing thawed
    heap.unfreeze()
    assert not heap.frozen() and gc.get_freeze_count() == 0
    heap.freeze()  # for the fixture's unfreeze


def test_a_freeze_made_elsewhere_is_still_seen() -> None:
    gc.freeze()
    try:
        assert heap.frozen()
    finally:
        gc.unfreeze()
    assert not heap.frozen()
