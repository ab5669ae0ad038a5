"""The jobs pane: a virtual table drawn with Textual's Line API.

Textual's ``DataTable`` builds a renderable per cell and takes seconds to fill with 100k rows and
hundreds of milliseconds to update one cell (PERFORMANCE.md P5). Here the widget holds a plain list
of :class:`~hpctop.tui.rows.JobRow` and ``render_line`` formats only the rows that are on screen,
so painting costs the same at 100 or 100k jobs; a line whose content did not change since it was
last drawn (same row object, same texts, cursor, mark, theme and scroll) reuses its strip. Sorting
and filtering go through a :class:`~hpctop.tui.jobindex.JobIndex`: recently used sort orders are
kept and carried from one publish to the next by inserting only the changed rows, and filters run
as C-level passes. The tick worker prepares the next publish's index and view off the UI thread
(:meth:`JobsTable.prepare`), so a publish on the UI thread only swaps lists. The header is line 0
of every frame (it does not scroll), rows follow at ``scroll_y``.

All row text was sanitised when the rows were built and is drawn as ``Segment`` data, never markup.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, replace
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from hpctop.model.objects import JobKey
from hpctop.tui.colors import Palette, state_var
from hpctop.tui.jobindex import DESCENDING, JobIndex, index_of_key, locate
from hpctop.tui.keymap import bindings
from hpctop.tui.rows import (
    COLUMNS,
    STATE_FILTERS,
    TIME_OR_WAIT,
    Column,
    Filters,
    JobRow,
    cells,
    fit_columns,
    waiting_ranks,
)
from hpctop.tui.sanitize import fit_cells

#: drawn lines kept (a few screens' worth; the cache is dropped whole when full)
LINE_CACHE = 512


@dataclass(frozen=True, slots=True)
class Prepared:
    """A publish's index and view, built by the tick worker for the sort and filters it saw."""

    rows: list[JobRow]
    index: JobIndex
    spec: tuple[Filters, str, bool, float]
    view: list[JobRow]
    #: the row under the cursor when this was prepared, and where its job is in ``view``
    cursor_row: JobRow | None = None
    cursor_at: int | None = None
    ranks: dict[JobKey, int] | None = None


def _fit(text: str, width: int, right: bool) -> str:
    return fit_cells(text, width, right)  # by cells, not code points: wide names keep the columns (T5)


class JobsTable(ScrollView, can_focus=True):
    """Every job, one line each; only the visible lines are ever rendered."""

    BINDINGS: ClassVar[list[Binding | tuple[str, str] | tuple[str, str, str]]] = list(bindings("jobs"))

    class OpenDetail(Message):
        def __init__(self, key: JobKey) -> None:
            super().__init__()
            self.key = key

    class AskFilter(Message):
        """The user pressed ``/``: the app opens the filter input."""

    class ViewChanged(Message):
        """Sort, filters or marks changed: the info line below the table follows."""

    def __init__(self, *, user: str | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[JobRow] = []
        self.view: list[JobRow] = []
        #: each waiting job's ORDER as shown (its place among the jobs still waiting)
        self.ranks: dict[JobKey, int] = {}
        self._ranked: list[JobRow] | None = None
        self.cursor = 0
        #: whether the user put the cursor on a job (a key, a click, a jump): from then on it follows
        #: that job as rows come and go; before, it stays on the first row, so the head of the queue
        #: (ORDER 1, 2, ...) stays on screen while jobs arrive above the one that happened to be first
        self.picked = False
        self.marked: set[JobKey] = set()
        # the scheduler's own order first: pending jobs as the core tries them, then the rest
        self.sort_column = "ORDER"
        self.reverse = False
        self.filters = Filters()
        self.now = 0.0
        self.me = user or os.environ.get("USER") or ""
        self._palette = Palette()
        self._queues: list[str] = []
        #: the columns that fit the pane's width: (index in COLUMNS, column, width)
        self._shown: list[tuple[int, Column, int]] = []
        self._wait_in_time = False
        self._set_shown(self._fit(200))
        self.read_only = False
        self.index = JobIndex()
        self._prepared: Prepared | None = None
        self._prepare_lock = threading.Lock()
        self._retired: list[tuple[list[JobRow], JobIndex, list[JobRow]]] = []
        #: drawn lines by what they show (row, its texts, cursor, mark, focus, theme, scroll, width):
        #: a publish or a sort that leaves a line's content as it was reuses its strip
        self._lines: dict[tuple[object, ...], tuple[JobRow, Strip]] = {}

    @staticmethod
    def _fit(width: int) -> list[tuple[int, Column, int]]:
        at = {c.name: i for i, c in enumerate(COLUMNS)}
        return [(at[c.name], c, w) for c, w in fit_columns(width)]

    def _set_shown(self, shown: list[tuple[int, Column, int]]) -> None:
        self._shown = shown
        names = [c.name for _, c, _ in shown]
        #: whether TIME also shows a waiting job's wait: WAIT did not fit (:func:`cells`)
        self._wait_in_time = "TIME" in names and "WAIT" not in names

    @property
    def _widths(self) -> list[int]:
        return [w for _, _, w in self._shown]

    @property
    def shown_columns(self) -> list[str]:
        return [c.name for _, c, _ in self._shown]

    def row_visible(self) -> bool:
        """Whether the cursor's row is on screen: the pane is shown, has room for rows and the
        cursor is inside the scrolled window (an action must not act on a row nobody can see)."""
        if not self.display or self.current is None or not self.region.height:
            return False
        body = self.content_region.height - 1  # the header line
        top = int(self.scroll_y)
        return body > 0 and top <= self.cursor < top + body

    # -- data ------------------------------------------------------------------------------------

    def prepare(self, rows: list[JobRow], now: float) -> None:
        """Build the index and view for ``rows`` now (any thread), so :meth:`set_rows` only swaps.

        The tick worker calls this with the rows it built; a sort or filter change on the UI
        thread in between makes :meth:`set_rows` compute the view itself (from the new index).
        """
        with self._prepare_lock:  # one preparer at a time; the UI thread never waits on it
            self._retired.clear()  # the last publish's old rows, index and view are freed here
            base = self._prepared.index if self._prepared is not None else self.index
            index = base.advance(rows, now)
            # every column's first sort, sorted here (the worker) before the UI thread sees the
            # index, one a tick: a user's first sort on a column is then a lookup
            index.warm(now=now, limit=1)
            spec = (self.filters, self.sort_column, self.reverse, now)
            view = index.view(*spec)
            # the cursor's job in the new view: a scan by job key when its row was replaced
            # (O(n), 15-45 ms at 100k) is paid here rather than on the UI thread
            row = self.current
            at = None if row is None else locate(view, row, spec[1], spec[2], now)
            self._prepared = Prepared(rows, index, spec, view, row, at, waiting_ranks(rows))

    def set_rows(self, rows: list[JobRow], now: float, *, resort: bool = True) -> None:
        """New rows from a snapshot; the cursor stays on the same job when it is still shown."""
        # Freeing the old index (orders and position map of every row) costs milliseconds at
        # 100k rows: keep it for the tick worker's next prepare() to free, off the UI thread.
        self._retired.append((self.rows, self.index, self.view))
        if len(self._retired) > 2:  # no worker (tests, step_now): do not hold more than that
            del self._retired[0]
        self.rows = rows
        self.now = now
        prepared, self._prepared = self._prepared, None
        if prepared is not None and prepared.rows is rows and prepared.ranks is not None:
            self.ranks = prepared.ranks
        elif rows is not self._ranked:
            self.ranks = waiting_ranks(rows)
        self._ranked = rows
        if prepared is not None and prepared.rows is rows:
            self.index = prepared.index
            if not resort:
                self.refresh()
                return
            if prepared.spec == (self.filters, self.sort_column, self.reverse, now):
                if prepared.cursor_row is not None and prepared.cursor_row is self.current:
                    self._show(prepared.view, at=prepared.cursor_at)
                else:
                    self._show(prepared.view, replaced=True)
                return
        else:
            self.index = self.index.advance(rows, now)
        if resort:
            self._reapply(replaced=True)
        else:
            self.refresh()

    def _reapply(self, replaced: bool = False) -> None:
        self._show(self.index.view(self.filters, self.sort_column, self.reverse, self.now), replaced)

    def _show(self, view: list[JobRow], replaced: bool = False, at: int | None = None) -> None:
        """Show ``view``; ``replaced``: rows changed since the last view (the cursor's row may be new);
        ``at``: where the cursor's job is in ``view``, already found (by :meth:`prepare`)."""
        current = self.current if self.picked else None
        self.view = view
        if not self.picked:
            self.cursor = 0
        elif current is not None:
            if at is None:
                at = locate(view, current, self.sort_column, self.reverse, self.now, by_key=replaced)
            if at is not None:
                self.cursor = at
        self.cursor = min(self.cursor, max(len(self.view) - 1, 0))
        self._size_virtual()
        self._keep_cursor_visible()
        self.refresh()
        self.post_message(self.ViewChanged())

    @property
    def current(self) -> JobRow | None:
        return self.view[self.cursor] if 0 <= self.cursor < len(self.view) else None

    @property
    def current_key(self) -> JobKey | None:
        row = self.current
        return row.key if row is not None else None

    def targets(self) -> list[JobRow]:
        """The marked jobs (in view order), or the job under the cursor."""
        if self.marked:
            by_key = {r.key: r for r in self.rows}
            return [by_key[k] for k in sorted(self.marked) if k in by_key]
        row = self.current
        return [row] if row is not None else []

    def set_filters(self, filters: Filters) -> None:
        self.filters = filters
        self.cursor = 0
        self.picked = False
        self._reapply()

    def select_key(self, key: JobKey) -> bool:
        """Move the cursor to ``key`` (clearing filters that hide it)."""
        for attempt in range(2):
            at = index_of_key(self.view, key)
            if at is not None:
                self.cursor = at
                self.picked = True
                self._keep_cursor_visible()
                self.refresh()
                return True
            if attempt == 0 and self.filters.active:
                self.filters = Filters()
                self._reapply()
        return False

    def set_queue_order(self, queues: list[str]) -> None:
        self._queues = queues

    # -- actions ---------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (self.read_only and action == "mark")

    def _size_virtual(self) -> None:
        self.virtual_size = Size(sum(self._widths) + len(self._widths) + 2, len(self.view) + 1)

    def _keep_cursor_visible(self) -> None:
        body = max(self.size.height - 1, 1)
        top = int(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + body:
            self.scroll_to(y=self.cursor - body + 1, animate=False, immediate=True)

    def _move_to(self, index: int) -> None:
        if not self.view:
            return
        self.cursor = max(0, min(index, len(self.view) - 1))
        self.picked = True
        self._keep_cursor_visible()
        self.refresh()

    def action_cursor(self, delta: int) -> None:
        self._move_to(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._move_to(self.cursor + direction * max(self.size.height - 2, 1))

    def action_jump(self, where: int) -> None:
        self._move_to(len(self.view) - 1 if where < 0 else where)
        if where == 0:
            self.picked = False  # back to the head of the list: stay there, as at start

    def action_detail(self) -> None:
        key = self.current_key
        if key is not None:
            self.post_message(self.OpenDetail(key))

    def action_mark(self) -> None:
        key = self.current_key
        if key is None or self.read_only:
            return
        if key in self.marked:
            self.marked.discard(key)
        else:
            self.marked.add(key)
        self.post_message(self.ViewChanged())
        self._move_to(self.cursor + 1)

    def action_sort_next(self) -> None:
        """Sort by the next column on screen (a column the width dropped is skipped)."""
        names = self.shown_columns
        i = names.index(self.sort_column) if self.sort_column in names else -1
        self.sort_by(names[(i + 1) % len(names)])

    def sort_by(self, column: str, reverse: bool | None = None) -> None:
        if reverse is None:
            reverse = not self.reverse if column == self.sort_column else column in DESCENDING
        self.sort_column = column
        self.reverse = reverse
        self._reapply()

    def action_sort_reverse(self) -> None:
        self.reverse = not self.reverse
        self._reapply()

    def action_filter(self) -> None:
        self.post_message(self.AskFilter())

    def action_cycle_state(self) -> None:
        self.set_filters(replace(self.filters, state=(self.filters.state + 1) % len(STATE_FILTERS)))

    def action_only_queue(self) -> None:
        row = self.current
        queue = None if self.filters.queue is not None or row is None else row.queue
        self.set_filters(replace(self.filters, queue=queue))

    def action_only_partition(self) -> None:
        row = self.current
        part = None if self.filters.partition is not None or row is None else row.partition
        self.set_filters(replace(self.filters, partition=part))

    def action_only_mine(self) -> None:
        if self.filters.user is None and not self.me:
            # an empty name filtered every job out and read "user=" (no $USER, e.g. in a container)
            self.app.notify(
                "Mine: who you are is not known (no 'user' in the config, $USER empty); / filters by text",
                severity="warning",
                markup=False,
            )
            return
        self.set_filters(replace(self.filters, user=None if self.filters.user is not None else self.me))

    def action_clear_filters(self) -> None:
        self.marked.clear()
        self.set_filters(Filters())

    # -- mouse -----------------------------------------------------------------------------------

    def column_at(self, x: int) -> str | None:
        x += int(self.scroll_x) - 2
        for _, col, width in self._shown:
            if 0 <= x < width + 1:
                return col.name
            x -= width + 1
        return None

    def on_click(self, event: events.Click) -> None:
        self.focus()
        offset = event.get_content_offset(self)
        if offset is None:
            return
        if offset.y == 0:
            column = self.column_at(offset.x)
            if column is not None:
                self.sort_by(column)
            return
        index = int(self.scroll_y) + offset.y - 1
        if 0 <= index < len(self.view):
            self._move_to(index)
            if event.chain >= 2:
                self.action_detail()

    def on_resize(self, event: events.Resize) -> None:
        shown = self._fit(max(self.content_region.width - 2, 1))
        if shown != self._shown:
            self._set_shown(shown)
            self._lines.clear()
            self._size_virtual()
            self.refresh()
        self._keep_cursor_visible()

    # -- drawing ---------------------------------------------------------------------------------

    def _header(self) -> list[Segment]:
        style = self._palette.style(self.app, fg="primary", bold=True)
        segs = [Segment("  ", style)]
        merged = self._wait_in_time
        for _, col, width in self._shown:
            label = TIME_OR_WAIT if merged and col.name == "TIME" else col.name
            if col.name == self.sort_column:
                label = label[: width - 1] + ("▼" if self.reverse else "▲")
            segs.append(Segment(_fit(label, width, col.align == "right") + " ", style))
        return segs

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        scroll_x = int(self.scroll_x)
        if y == 0:
            segs = self._header()
        else:
            index = int(self.scroll_y) + y - 1
            if index >= len(self.view):
                return Strip.blank(width, self.rich_style)
            row = self.view[index]
            is_cursor = index == self.cursor
            texts = cells(row, self.now, self.ranks.get(row.key), self._wait_in_time)
            key = (
                id(row),
                texts,
                is_cursor,
                row.key in self.marked,
                is_cursor and self.has_focus,
                self.app.theme,
                scroll_x,
                width,
                self.virtual_size.width,
            )
            hit = self._lines.get(key)
            if hit is not None and hit[0] is row:
                return hit[1]
            segs = self._row_segments(row, is_cursor, texts)
            strip = self._strip(segs, scroll_x, width)
            if len(self._lines) >= LINE_CACHE:
                self._lines.clear()
            self._lines[key] = (row, strip)
            return strip
        return self._strip(segs, scroll_x, width)

    def _strip(self, segs: list[Segment], scroll_x: int, width: int) -> Strip:
        total = self.virtual_size.width
        return Strip(segs).extend_cell_length(total).crop(scroll_x, scroll_x + width).simplify()

    def _row_segments(
        self, row: JobRow, is_cursor: bool, texts: tuple[str, ...] | None = None
    ) -> list[Segment]:
        pal = self._palette
        app = self.app
        base = Style()
        if is_cursor:
            var = "block-cursor-background" if self.has_focus else "block-cursor-blurred-background"
            base = pal.style(app, bg=var, bold=self.has_focus)
        marked = row.key in self.marked
        segs = [Segment("* " if marked else "  ", base + pal.style(app, fg="accent", bold=True))]
        if texts is None:
            texts = cells(row, self.now, self.ranks.get(row.key), self._wait_in_time)
        state_style = base + pal.style(app, fg=state_var(row.state))
        for i, col, width in self._shown:
            text = texts[i]
            style = base
            if col.name in ("ST", "REASON") or (col.name == "ETA" and text):
                style = state_style
            elif col.name == "JOB" and marked:
                style = base + pal.style(app, fg="accent")
            segs.append(Segment(_fit(text, width, col.align == "right") + " ", style))
        return segs

    def status_line(self) -> str:
        """ "12/100000 jobs · sort PRIO▼ · state=pending" (plain text; no cluster data except filters)."""
        text = (
            f"{len(self.view)}/{len(self.rows)} jobs · sort {self.sort_column}{'▼' if self.reverse else '▲'}"
        )
        if self.filters.active:
            text += " · " + self.filters.describe()
        if self.marked:
            text += f" · {len(self.marked)} marked"
        return text
