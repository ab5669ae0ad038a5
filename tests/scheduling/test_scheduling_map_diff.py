"""``memo._MapDiff`` against a plain diff of two maps, over random sequences of snapshot changes.

The diff finds a few deleted entries by scanning for the first place the old and new key lists
differ (no dict of every old entry); past ``FEW_DELETIONS`` it takes the whole-map path. Both
must give what a plain comparison of the two maps gives: the deleted entries in their old order,
then the survivors whose object changed, then the additions, or None when an entry moved.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from hpctop.scheduling.memo import _MapDiff


def plain_diff(old: dict[Any, Any], new: dict[Any, Any]) -> list[tuple[Any, Any, Any]] | None:
    survivors = [key for key in old if key in new]
    if list(new)[: len(survivors)] != survivors:
        return None
    out: list[tuple[Any, Any, Any]] = [(key, old[key], None) for key in old if key not in new]
    out.extend((key, old[key], new[key]) for key in survivors if old[key] is not new[key])
    out.extend((key, None, new[key]) for key in list(new)[len(survivors) :])
    return out


def _step(rng: random.Random, current: dict[Any, Any], serial: list[int]) -> dict[Any, Any]:
    nxt = dict(current)
    keys = list(nxt)
    for _ in range(rng.choice((0, 1, 1, 2, 3, 20, 40, 60))):  # deletions (past FEW_DELETIONS too)
        if keys:
            del nxt[keys.pop(rng.randrange(len(keys)))]
    for _ in range(rng.randrange(4)):  # updates: a new object, same key
        if keys:
            key = rng.choice(keys)
            if key in nxt:
                nxt[key] = object()
    for _ in range(rng.randrange(20)):  # additions
        serial[0] += 1
        # an equal key that is another object: found equal in Python, not by identity
        nxt[("ns", f"k{serial[0]}")] = object()
    if rng.random() < 0.1 and keys:  # a move: deleted and added again (comes last)
        key = rng.choice(keys)
        if key in nxt:
            value = nxt.pop(key)
            nxt[key] = value
    if rng.random() < 0.1:  # the same map with every key rebuilt as an equal, distinct tuple
        nxt = {(k[0] + "", "".join(k[1])): v for k, v in nxt.items()}
    return nxt


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_map_diff_matches_a_plain_diff(seed: int) -> None:
    rng = random.Random(seed)
    serial = [0]
    current: dict[Any, Any] = {}
    for _ in range(2000):
        serial[0] += 1
        current[("ns", f"k{serial[0]}")] = object()
    diff = _MapDiff()
    assert diff.changes(current) == plain_diff({}, current)
    kinds = {"none": 0, "few": 0, "many": 0}
    for _ in range(200):
        nxt = _step(rng, current, serial)
        want = plain_diff(current, nxt)
        got = diff.changes(nxt)
        assert got == want
        if want is None:
            kinds["none"] += 1
        else:
            deleted = sum(1 for _, _, new in want if new is None)
            kinds["few" if deleted <= _MapDiff.FEW_DELETIONS else "many"] += 1
        current = nxt
    assert min(kinds.values()) > 5, kinds  # every path was taken


def test_map_diff_of_an_entry_moved_before_the_end() -> None:
    diff = _MapDiff()
    a, b, c = object(), object(), object()
    diff.changes({1: a, 2: b, 3: c})
    assert diff.changes({1: a, 3: c, 2: b}) is None  # 2 moved (deleted and added again)
    assert diff.changes({3: c}) == [(1, a, None), (2, b, None)]
    assert diff.changes({}) == [(3, c, None)]
