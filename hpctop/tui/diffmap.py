"""What changed between two snapshots' maps, found by position at C speed instead of by key.

Why (issue 16, K1): the console's tick worker compares each snapshot with the one before, and a
loop that looks every key up in the old map (50k pods, 50k jobs) costs ~40 ms per map per tick on
the bench VM: the lookups of 50k tuple keys are cache misses. The store's maps are dict copies,
so from one snapshot to the next a map keeps its keys' order and their key objects: a changed
value stays in place, a new key is appended, a deleted one just goes. :func:`align` checks that
this holds and says which old positions were deleted, with ``map``/``compress`` passes over the
two key lists (no Python frame per key); :func:`replaced` then finds the changed values by
identity the same way. Anything else (a key moved: a job tombstoned to the front of the jobs map)
answers None and the caller does its full pass, so the result never depends on the shortcut.

The jobs pane's rows and the GPU map both compare the same two jobs maps on every tick:
:func:`diff` keeps its last few answers (by the maps' identity; the maps are immutable
snapshot views), so the second asker gets the first one's lists instead of walking 50k jobs again.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, count
from operator import is_not
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

#: above this many deleted keys :func:`align` gives up (each costs one more scan from there)
MAX_DELETED = 512


def align(old: list[K], new: list[K], new_keys: Collection[K], limit: int = MAX_DELETED) -> list[int] | None:
    """The old positions deleted, if ``new`` is ``old`` without them plus keys appended; else None.

    ``new_keys`` answers ``in`` for the new keys (the new map itself). The scans compare key
    objects by identity and look at an unequal pair only, so an unchanged map costs one pass.
    """
    if len(new) == len(old) and new == old:  # list equality: identity first, at C speed
        return []
    deleted: list[int] = []
    i = j = 0
    n_old, n_new = len(old), len(new)
    while i < n_old:
        # iterators put at i and j in O(1): ``islice`` would step over (and touch) every key
        # before them, once per deleted key
        rest_old, rest_new = iter(old), iter(new)
        rest_old.__setstate__(i)  # type: ignore[attr-defined]
        rest_new.__setstate__(j)  # type: ignore[attr-defined]
        step = next(compress(count(), map(is_not, rest_old, rest_new)), None)
        if step is None:  # one list ran out: the rest of ``new`` is appended, or of ``old`` deleted
            step = min(n_old - i, n_new - j)
            i, j = i + step, j + step
            if i >= n_old:
                break
        else:
            i, j = i + step, j + step
            if j < n_new and old[i] == new[j]:  # the same key, another object
                i, j = i + 1, j + 1
                continue
        if old[i] in new_keys:
            return None  # a key still there at another place: the order moved
        deleted.append(i)
        if len(deleted) > limit:
            return None
        i += 1
    return deleted


def without(items: list[Any], deleted: Sequence[int]) -> list[Any]:
    """A copy of ``items`` without the positions ``deleted`` (ascending)."""
    out = list(items)
    for i in reversed(deleted):
        del out[i]
    return out


def replaced(old_values: Sequence[Any], new_values: Sequence[Any]) -> list[int]:
    """Positions (within the shorter list) whose value is another object in ``new_values``."""
    return list(compress(count(), map(is_not, old_values, new_values)))


@dataclass(frozen=True, slots=True)
class MapDiff(Generic[K, V]):
    """How ``new`` differs from ``old`` (:func:`diff`): ``new`` is ``old`` without the keys at
    ``deleted``, with the values at ``replaced`` other objects, plus keys appended."""

    keys: list[K]  # the new map's keys, in order
    values: list[V]  # its values, in order
    deleted: list[int]  # positions in the old map's lists
    kept: list[V]  # the old values without the deleted ones: ``kept[i]`` was ``values[i]``'s
    replaced: list[int]  # positions below ``len(kept)`` whose value is another object

    @property
    def appended(self) -> range:
        """Positions of the new keys (after every kept one)."""
        return range(len(self.kept), len(self.keys))


_lock = threading.Lock()
_listed: deque[tuple[Mapping[Any, Any], list[Any], list[Any]]] = deque(maxlen=4)
_diffs: deque[tuple[Mapping[Any, Any], Mapping[Any, Any], MapDiff[Any, Any] | None]] = deque(maxlen=4)


def listed(mapping: Mapping[K, V]) -> tuple[list[K], list[V]]:
    """The keys and values of ``mapping`` as lists, shared with the last few callers of the same
    map object (do not mutate them)."""
    with _lock:
        for m, keys, values in _listed:
            if m is mapping:
                return keys, values
    keys, values = list(mapping), list(mapping.values())
    with _lock:
        _listed.append((mapping, keys, values))
    return keys, values


def diff(old: Mapping[K, V], new: Mapping[K, V]) -> MapDiff[K, V] | None:
    """How ``new`` differs from ``old`` by position, or None when a key moved (do a full pass).

    Both maps must be immutable (snapshot views): the answer is kept for the next caller.
    """
    with _lock:
        for a, b, hit in _diffs:
            if a is old and b is new:
                return hit
    old_keys, old_values = listed(old)
    keys, values = listed(new)
    deleted = align(old_keys, keys, new)
    out: MapDiff[K, V] | None = None
    if deleted is not None:
        kept = without(old_values, deleted) if deleted else old_values
        out = MapDiff(keys, values, deleted, kept, replaced(kept, values))
    with _lock:
        _diffs.append((old, new, out))
    return out
