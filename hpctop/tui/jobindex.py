"""Sorted orders of the jobs pane's rows, kept between publishes, and filters run at C speed.

Why: at 100k jobs (PERFORMANCE.md P5) a sort through a Python key function costs 40-90 ms and a
filter through a Python predicate 20-30 ms, on the UI thread, for every key press and for every
publish with changed rows. Here:

- An order is the full list of rows sorted by one column (``sorted`` with a C-level key where the
  column is a plain attribute); the few most recently used orders are cached on the index, so
  going back to a column the user sorted by before is a lookup, not a sort.
- :meth:`JobIndex.advance` carries the cached orders over to the next publish's rows
  incrementally: the old versions of the changed rows are removed and the new ones inserted by
  binary search on (key, input position), instead of re-sorting all rows (a full sort when many
  rows changed or jobs left).
  The console's tick worker calls it off the UI thread, with the rows it built.
- :meth:`JobIndex.warm` sorts, off the UI thread (the tick worker's ``prepare``), every column a
  user can sort by first, so the first sort on a column after a load is a lookup too; a publish
  carries them over with the rest. A changed row whose key did not change takes its old row's
  place in an order (same key, same input position: the same place), with no list move.
- A filter is a chain of ``itertools.compress`` passes over an order, each driven by ``map`` of an
  ``operator`` function over one attribute: no Python frame per row.

The result is exactly :func:`hpctop.tui.rows.apply_view`'s: filtering a stable sort of all rows
gives the stable sort of the filtered rows, and rows with equal keys keep the input order
(an inserted row goes after the equal-keyed rows before it in the input and before those after it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import compress, count, islice, repeat
from operator import attrgetter, contains, eq, is_, is_not, or_
from typing import Any

from hpctop.tui.diffmap import align, without
from hpctop.tui.rows import COLUMN_NAMES, SORT_KEYS, STATE_FILTERS, Filters, JobRow, sort_key

#: sortable columns in the direction a first sort on them takes (``JobsTable.sort_by``: the
#: numbers descending, the rest ascending); TIME and WAIT move with the clock and are left out
DESCENDING = frozenset({"PRIO", "GPUS", "TIME", "WAIT"})
WARM_ORDERS: tuple[tuple[str, bool], ...] = tuple(
    (column, column in DESCENDING) for column in COLUMN_NAMES if column not in ("TIME", "WAIT")
)
#: orders kept per index: every warm one plus four more a user sorted by (a 100k-row order is
#: ~0.8 MB; its upkeep per publish is a binary search per changed row, and a list move only for
#: a row whose key changed)
MAX_ORDERS = len(WARM_ORDERS) + 4
#: above this share of changed rows, a publish re-sorts rather than inserting row by row
REBUILD_SHARE = 0.05

_ATTR_KEYS: dict[str, Callable[[JobRow], Any]] = {
    "JOB": attrgetter("id"),
    "ID": attrgetter("id"),
    "NAME": attrgetter("name"),
    "USER": attrgetter("user"),
    "QUEUE": attrgetter("queue"),
    "PARTITION": attrgetter("partition"),
    "ORDER": attrgetter("order_sort"),
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
    return column in ("TIME", "WAIT")  # these move with the clock; every other key is a row field


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


def locate(
    view: Sequence[JobRow], row: JobRow, column: str, reverse: bool, now: float, *, by_key: bool = True
) -> int | None:
    """Where ``row`` is in ``view``, a (filtered) order by ``column``: O(log n) plus its equal keys.

    A binary search finds the run of rows whose key equals ``row``'s, then the row is looked for
    by identity within it; when it is not there and ``by_key`` (the rows changed: the job's row may
    have been replaced by a newer one, with maybe another key), a scan by job key.
    """
    key = key_function(column, now)
    value = key(row)
    lo, hi = 0, len(view)
    while lo < hi:  # first row not strictly before ``value``
        mid = (lo + hi) // 2
        other = key(view[mid])
        if (other > value) if reverse else (other < value):
            lo = mid + 1
        else:
            hi = mid
    end = len(view)
    first, hi = lo, end
    while first < hi:  # first row strictly after ``value``
        mid = (first + hi) // 2
        other = key(view[mid])
        if (other < value) if reverse else (other > value):
            hi = mid
        else:
            first = mid + 1
    found = next(compress(count(lo), map(is_, islice(view, lo, first), repeat(row))), None)
    if found is None and by_key:
        return index_of_key(view, row.key)
    return found


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
        self._position: dict[int, int] | None = None

    def cached(self) -> list[OrderKey]:
        return list(self._orders)

    def order(self, column: str, reverse: bool, now: float) -> list[JobRow]:
        """Every row sorted by ``column`` (stable; cached). The list is shared: do not mutate it."""
        if column not in SORT_KEYS:
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

    def warm(
        self, specs: Sequence[OrderKey] = WARM_ORDERS, now: float = 0.0, limit: int | None = None
    ) -> int:
        """Sort by each of ``specs`` not cached yet, at most ``limit`` of them (any thread; the
        orders of a user's sorts stay); returns how many orders it built.

        The tick worker calls this on the index it prepares, before the UI thread sees it, so the
        first sort on a column is a lookup. It asks for one order a tick: a sort of 100k rows is
        ~25 ms in C that holds the GIL (the UI thread waits), so eleven in a row would cost a
        frame; one a tick warms every column within eleven ticks of a load (or of a publish that
        made the orders be rebuilt: a job left).
        """
        built = 0
        for column, reverse in specs:
            if limit is not None and built >= limit:
                break
            if (column, reverse) in self._orders or _now_dependent(column):
                continue
            order = sorted(self.rows, key=key_function(column, now), reverse=reverse)
            self._orders.setdefault((column, reverse), (now, order))
            built += 1
        while len(self._orders) > MAX_ORDERS:
            del self._orders[next(iter(self._orders))]
        return built

    def view(self, filters: Filters, column: str, reverse: bool, now: float) -> list[JobRow]:
        """What ``apply_view(rows, filters, column, reverse, now)`` returns, from the cached order."""
        order = self.order(column, reverse, now)
        return filter_rows(order, filters) if filters.active else order

    def _positions(self) -> dict[int, int]:
        """Row identity → input position (built once, then carried by :meth:`advance`)."""
        if self._position is None:
            self._position = dict(zip(map(id, self.rows), count()))
        return self._position

    def advance(self, rows: list[JobRow], now: float) -> JobIndex:
        """The index of ``rows`` (the next publish), carrying this index's orders over.

        Rows are matched by identity (the row cache reuses the object of an unchanged job). The
        common publish replaces a few rows in place (jobs that changed) and maybe appends some
        (jobs that arrived): then each cached order loses the old rows and gets the new ones by
        binary search on (key, input position), O(changes x log n). Anything else (a job left,
        rows moved, or more than ``REBUILD_SHARE`` changed) drops the orders; they are re-sorted
        when next asked for.
        """
        new = JobIndex(rows)
        old_rows = self.rows
        if rows is old_rows:
            new._orders = dict(self._orders)
            new._position = self._position
            new.how = "same"
            return new
        orders = list(self._orders.items())
        new.how = "rebuilt"
        n_old = len(old_rows)
        if not orders or not old_rows or not rows:
            return new
        head = rows if len(rows) == n_old else rows[:n_old]
        deleted: list[int] = []
        kept = old_rows
        replaced = list(compress(count(), map(is_not, old_rows, head))) if len(rows) >= n_old else None
        if replaced is None or any(old_rows[i].key != rows[i].key for i in replaced):
            # jobs left (or rows moved): the rows are the old ones without some, replaced in
            # place, plus rows appended; a moved row counts as deleted and appended (both its
            # key and its input position are new), which is exact for a stable sort
            found = align(list(map(_key, old_rows)), list(map(_key, rows)), ())
            if found is None:
                return new
            deleted = found
            kept = without(old_rows, deleted)
            replaced = list(compress(count(), map(is_not, kept, rows)))
        n_kept = len(kept)
        appended = rows[n_kept:]
        if len(replaced) + len(appended) + len(deleted) > REBUILD_SHARE * len(rows):
            return new
        old_position = self._positions()
        # the old rows' positions stay in the map until every order is carried: a binary search
        # compares with rows of both publishes (a replaced row sits where its old one was).
        # Positions are only ever compared: a row replaced takes its old row's, rows appended
        # come after the last old row, and rows deleted leave a gap (no renumbering)
        position = dict(old_position)
        for i in replaced:
            position[id(rows[i])] = old_position[id(kept[i])]
        last = old_position[id(old_rows[-1])]
        for i, row in enumerate(appended, last + 1):
            position[id(row)] = i
        gone = [old_rows[i] for i in deleted]
        pairs = [(kept[i], rows[i]) for i in replaced]
        for (column, reverse), (at, order) in orders:
            if _now_dependent(column) and at != now:
                continue  # re-sorted when asked: every row's key moved with the clock
            key = key_function(column, at)
            order = list(order)  # the old index's order may still be on screen: never mutated
            for row in gone:
                at_row = _bisect(order, key(row), position[id(row)], key, reverse, position)
                if at_row >= len(order) or order[at_row] is not row:
                    new._orders.clear()  # not where it should be: re-sort rather than guess
                    return new
                del order[at_row]
            moved: list[JobRow] = []
            for row, successor in pairs:
                value = key(row)
                at_row = _bisect(order, value, position[id(row)], key, reverse, position)
                if at_row >= len(order) or order[at_row] is not row:
                    new._orders.clear()  # not where it should be: re-sort rather than guess
                    return new
                if key(successor) == value:
                    order[at_row] = successor  # same key, same input position: the same place
                else:
                    del order[at_row]
                    moved.append(successor)
            for row in (*moved, *appended):
                order.insert(_bisect(order, key(row), position[id(row)], key, reverse, position), row)
            new._orders[(column, reverse)] = (at, order)
        for i in replaced:
            del position[id(kept[i])]
        for row in gone:
            del position[id(row)]
        new._position = position
        new.how = "incremental"
        return new


def _bisect(
    order: list[JobRow],
    value: Any,
    mine: int,
    key: Callable[[JobRow], Any],
    reverse: bool,
    position: dict[int, int],
) -> int:
    """Where a row with sort key ``value`` at input position ``mine`` goes in ``order`` (stable)."""
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
    return lo
