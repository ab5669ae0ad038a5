"""Sorted orders of the jobs pane's rows, kept between publishes, and filters run at C speed.

Why: at 100k jobs (PERFORMANCE.md P5) a sort through a Python key function costs 40-90 ms and a
filter through a Python predicate 20-30 ms, on the UI thread, for every key press and for every
publish with changed rows. Here:

- An order is the full list of rows sorted by one column (``sorted`` with a C-level key where the
  column is a plain attribute); the few most recently used orders are cached on the index, so
  going back to a column the user sorted by before is a lookup, not a sort.
- :meth:`JobIndex.advance` carries the cached orders over to the next publish's rows
  incrementally: the rows that left are dropped in one C-level pass and the rows that came are
  inserted by binary search, instead of re-sorting all rows (a full sort when most rows changed).
  The console's tick worker calls it off the UI thread, with the rows it built.
- A filter is a chain of ``itertools.compress`` passes over an order, each driven by ``map`` of an
  ``operator`` function over one attribute: no Python frame per row.

The result is exactly :func:`hpctop.tui.rows.apply_view`'s: filtering a stable sort of all rows
gives the stable sort of the filtered rows, and rows with equal keys keep the input order
(an inserted row goes after the equal-keyed rows before it in the input and before those after it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import compress, count, repeat
from operator import attrgetter, contains, eq, is_, not_, or_
from typing import Any

from hpctop.tui.rows import COLUMN_NAMES, STATE_FILTERS, Filters, JobRow, sort_key

#: orders kept per index (a sort key list of 100k rows is ~0.8 MB; each costs upkeep per publish)
MAX_ORDERS = 4
#: above this share of changed rows, a publish re-sorts rather than inserting row by row
REBUILD_SHARE = 0.05

_ATTR_KEYS: dict[str, Callable[[JobRow], Any]] = {
    "ID": attrgetter("id"),
    "NAME": attrgetter("name"),
    "USER": attrgetter("user"),
    "QUEUE": attrgetter("queue"),
    "PARTITION": attrgetter("partition"),
    "PRIO": attrgetter("prio"),
    "GANG": attrgetter("running", "min_members"),
    "GPUS": attrgetter("gpus"),
    "REASON": attrgetter("reason"),
}
_category = attrgetter("category")
_queue = attrgetter("queue")
_partition = attrgetter("partition")
_user = attrgetter("user")
_haystack = attrgetter("haystack")
_key = attrgetter("key")

OrderKey = tuple[str, bool]


def key_function(column: str, now: float) -> Callable[[JobRow], Any]:
    """The sort key of ``column``: the same values as :func:`hpctop.tui.rows.sort_key`."""
    return _ATTR_KEYS.get(column) or sort_key(column, now)


def _now_dependent(column: str) -> bool:
    return column == "TIME"  # elapsed time moves with the clock; every other key is a row field


def filter_rows(rows: list[JobRow], filters: Filters) -> list[JobRow]:
    """The rows that pass ``filters``, in their order (the filters of ``apply_view``)."""
    out = rows
    if filters.state:
        category = STATE_FILTERS[filters.state]
        out = list(compress(out, map(eq, map(_category, out), repeat(category))))
    if filters.queue is not None:
        queues = list(map(_queue, out))
        # a parent queue (a double click in the queue pane) covers its children
        same = map(eq, queues, repeat(filters.queue))
        below = map(str.startswith, queues, repeat(filters.queue + "."))
        out = list(compress(out, map(or_, same, below)))
    if filters.partition is not None:
        out = list(compress(out, map(eq, map(_partition, out), repeat(filters.partition))))
    if filters.user is not None:
        out = list(compress(out, map(eq, map(_user, out), repeat(filters.user))))
    if filters.text:
        needle = filters.text.lower()
        out = list(compress(out, map(contains, map(_haystack, out), repeat(needle))))
    return out


def index_of_key(rows: Sequence[JobRow], key: object) -> int | None:
    """Where the row of job ``key`` is in ``rows`` (one C-level scan), or None."""
    try:
        return list(map(_key, rows)).index(key)
    except ValueError:
        return None


def index_of_row(rows: Sequence[JobRow], row: JobRow) -> int | None:
    """Where ``row`` (or, when it was replaced by a newer row, its job) is in ``rows``, or None."""
    try:
        return list(map(id, rows)).index(id(row))  # ints compare in C; a row's ``==`` is Python
    except ValueError:
        return index_of_key(rows, row.key)


class JobIndex:
    """One publish's rows with the sorted orders computed for them so far.

    The rows list is never mutated; orders are added as they are asked for. An index may be read
    by the UI thread while the tick worker builds the next one from it with :meth:`advance`.
    """

    def __init__(self, rows: list[JobRow] | None = None) -> None:
        self.rows: list[JobRow] = rows if rows is not None else []
        #: (column, reverse) → (the clock the order was sorted at, for TIME; the order)
        self._orders: dict[OrderKey, tuple[float, list[JobRow]]] = {}
        #: how the last :meth:`advance` carried orders over: "same", "incremental" or "rebuilt"
        self.how = "new"

    def cached(self) -> list[OrderKey]:
        return list(self._orders)

    def order(self, column: str, reverse: bool, now: float) -> list[JobRow]:
        """Every row sorted by ``column`` (stable; cached). The list is shared: do not mutate it."""
        if column not in COLUMN_NAMES:
            raise KeyError(column)
        spec = (column, reverse)
        hit = self._orders.pop(spec, None)
        if hit is not None and (not _now_dependent(column) or hit[0] == now):
            self._orders[spec] = hit  # most recently used last
            return hit[1]
        order = sorted(self.rows, key=key_function(column, now), reverse=reverse)
        self._remember(spec, now, order)
        return order

    def _remember(self, spec: OrderKey, now: float, order: list[JobRow]) -> None:
        self._orders[spec] = (now, order)
        while len(self._orders) > MAX_ORDERS:
            del self._orders[next(iter(self._orders))]

    def view(self, filters: Filters, column: str, reverse: bool, now: float) -> list[JobRow]:
        """What ``apply_view(rows, filters, column, reverse, now)`` returns, from the cached order."""
        order = self.order(column, reverse, now)
        return filter_rows(order, filters) if filters.active else order

    def advance(self, rows: list[JobRow], now: float) -> JobIndex:
        """The index of ``rows`` (the next publish), carrying this index's orders over.

        Rows are matched by identity (the row cache reuses the object of an unchanged job). When
        few rows changed and the rows that stayed kept their relative order, each cached order
        drops the rows that left and gets the new ones inserted by binary search; otherwise the
        orders are dropped and re-sorted when next asked for.
        """
        new = JobIndex(rows)
        old_rows = self.rows
        if rows is old_rows:
            new._orders = dict(self._orders)
            new.how = "same"
            return new
        orders = list(self._orders.items())
        if not orders:
            new.how = "rebuilt"
            return new
        old_ids = set(map(id, old_rows))
        new_ids = set(map(id, rows))
        kept_in_old = list(compress(old_rows, map(new_ids.__contains__, map(id, old_rows))))
        is_new = list(map(not_, map(old_ids.__contains__, map(id, rows))))
        added = list(compress(rows, is_new))
        kept_in_new = list(compress(rows, map(not_, is_new)))
        moved = len(kept_in_old) != len(kept_in_new) or not all(map(is_, kept_in_old, kept_in_new))
        changed = len(added) + len(old_rows) - len(kept_in_old)
        if moved or changed > REBUILD_SHARE * max(len(rows), 1):
            new.how = "rebuilt"
            return new
        position = dict(zip(map(id, rows), count()))
        for (column, reverse), (at, order) in orders:
            if _now_dependent(column) and at != now:
                continue  # re-sorted when asked: every row's key moved with the clock
            kept = list(compress(order, map(new_ids.__contains__, map(id, order))))
            key = key_function(column, at)
            for row in added:
                _insert(kept, row, key, reverse, position)
            new._orders[(column, reverse)] = (at, kept)
        new.how = "incremental"
        return new


def _insert(
    order: list[JobRow],
    row: JobRow,
    key: Callable[[JobRow], Any],
    reverse: bool,
    position: dict[int, int],
) -> None:
    """Insert ``row`` where a stable sort of the input would have put it."""
    value = key(row)
    mine = position[id(row)]
    lo, hi = 0, len(order)
    while lo < hi:
        mid = (lo + hi) // 2
        other = order[mid]
        theirs = key(other)
        if theirs == value:
            before = position[id(other)] < mine
        else:
            before = theirs > value if reverse else theirs < value
        if before:
            lo = mid + 1
        else:
            hi = mid
    order.insert(lo, row)
