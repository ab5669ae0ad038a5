"""The queue pane: the queue tree with used / guaranteed / max GPU bars and fair share.

Each line is one queue: an expand marker, the name indented by depth, a bar where ``█`` is GPUs in
use, ``│`` marks the guarantee and the bar's end is the max (or the cluster when no max is set), then
used/guaranteed, running/pending counts, the fair-share factor and ``⇡`` when the queue borrows
beyond its guarantee. Over-share queues are drawn in ``queue-over-share`` colour *and* flagged with
``⇡``, so the meaning does not depend on colour. Queue paths come from scheduler configuration that
other people write, so they are sanitised before drawing.

Kueue LocalQueues carry no quota, so the scheduling core leaves them out of its tree; the pane
still lists them (:func:`with_local_queues`) under their ClusterQueue, without a bar, because a
LocalQueue row is where ``x``/``o`` close and open one (its ``spec.stopPolicy``).

Mouse: a click selects a queue, a click on its ``▾``/``▸`` expands or collapses it, and a double
click asks the app (:class:`QueuePane.FilterJobs`) to show only that queue's jobs in the jobs pane;
the pane does not know the jobs pane, the app wires the two.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from hpctop.model.objects import QueueInfo
from hpctop.model.policy import QueueState
from hpctop.model.resources import ZERO
from hpctop.scheduling.types import QueueStatus
from hpctop.tui.colors import Palette, queue_var
from hpctop.tui.keymap import bindings
from hpctop.tui.sanitize import fit_cells, sanitize_display

BAR = 12
#: the name column's narrowest and widest (indent, marker and name): it is as wide as the longest
#: name on screen needs, within these and what the pane's width leaves beside the numbers
NAME = 14
NAME_MAX = 40
#: the narrowest name where the fair share already gave way (a narrow pane): indent, marker and
#: the start of the name, then "…"
NAME_NARROW = 8
#: the narrowest bar worth drawing: a narrow pane shortens the bar before it cuts the numbers, and
#: below this leaves it out (the used/guaranteed/max numbers say the same)
BAR_MIN = 4
#: the cells right of the name besides the bar and the used/guaranteed/max and R/PD columns: the
#: fair share (`` fs0.97``) and the borrowing mark (`` ⇡``)
BESIDE = 7 + 2


def _g(milli: int) -> str:
    return f"{milli / 1000:g}"


def with_local_queues(
    queues: Mapping[str, QueueStatus], infos: Mapping[str, QueueInfo]
) -> tuple[dict[str, QueueStatus], frozenset[str]]:
    """The core's queue tree plus each Kueue LocalQueue as a child row of its ClusterQueue, and the
    paths of those rows (display only: the core never sees them)."""
    by_parent: dict[str, list[QueueInfo]] = {}
    for info in infos.values():
        if info.kind == "local" and info.parent is not None and info.parent in queues:
            by_parent.setdefault(info.parent, []).append(info)
    if not by_parent:
        return dict(queues), frozenset()
    out: dict[str, QueueStatus] = {}
    local: set[str] = set()
    for path, status in queues.items():
        children = by_parent.get(path, [])
        if not children:
            out[path] = status
            continue
        kids = tuple(i.path for i in children)
        out[path] = dataclasses.replace(status, children=(*status.children, *kids))
        for info in children:
            local.add(info.path)
            out[info.path] = QueueStatus(
                path=info.path,
                parent=path,
                children=(),
                depth=status.depth + 1,
                state=QueueState.CLOSED if info.state == "Held" else QueueState.OPEN,
                guaranteed=ZERO,
                max=None,
                used=info.allocated,
                pending=info.pending,
                running_jobs=info.admitted_jobs,
                pending_jobs=info.pending_jobs,
                dominant_share=0.0,
                dominant_resource="",
                cluster_share=0.0,
                normalized_share=0.0,
                fairshare_factor=1.0,
                borrowing=False,
            )
    return out, frozenset(local)


class QueuePane(ScrollView, can_focus=True):
    BINDINGS: ClassVar[list[Binding | tuple[str, str] | tuple[str, str, str]]] = list(bindings("queues"))

    class FilterJobs(Message):
        """Double click on a queue: show only the jobs of ``path`` (and its children)."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    class Selected(Message):
        """The cursor moved to another queue (the app re-checks what the queue keys may do)."""

        def __init__(self, path: str | None) -> None:
            super().__init__()
            self.path = path

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.queues: dict[str, QueueStatus] = {}
        self.order: list[str] = []
        self.collapsed: set[str] = set()
        self.cursor = 0
        self.cluster_gpu = 0
        #: rows that are Kueue LocalQueues (no quota of their own: drawn without a bar)
        self.local: frozenset[str] = frozenset()
        self.kinds: dict[str, str] = {}
        self._palette = Palette()
        self._version = 0  # set_queues counts up: the layout is worked out again for new numbers
        self._layout_key: tuple[object, ...] | None = None
        self._layout_value = (NAME, BAR, 13, 10, True)

    def set_queues(
        self,
        queues: Mapping[str, QueueStatus],
        cluster_gpu: int,
        local: frozenset[str] = frozenset(),
        kinds: Mapping[str, str] | None = None,
    ) -> None:
        """``local``: rows without quota (drawn with no bar); ``kinds``: what such a row is, where it
        is not a Kueue LocalQueue (``Slurm`` for a Slurm partition)."""
        self.local = local
        self.kinds = dict(kinds or {})
        self.queues = dict(queues)
        self._version += 1
        self.order = list(queues)
        self.cluster_gpu = cluster_gpu
        self._resize()

    def visible_paths(self) -> list[str]:
        out: list[str] = []
        hidden_under: list[str] = []
        for path in self.order:
            if any(path.startswith(h + ".") for h in hidden_under):
                continue
            out.append(path)
            if path in self.collapsed:
                hidden_under.append(path)
        return out

    @property
    def current(self) -> str | None:
        vis = self.visible_paths()
        return vis[self.cursor] if 0 <= self.cursor < len(vis) else None

    def _moved(self, before: str | None) -> None:
        if self.current != before:
            self.post_message(self.Selected(self.current))

    def _resize(self) -> None:
        vis = self.visible_paths()
        self.cursor = min(self.cursor, max(len(vis) - 1, 0))
        self.virtual_size = Size(self.size.width, len(vis))
        self.refresh()

    def select(self, path: str) -> bool:
        for h in list(self.collapsed):
            if path.startswith(h + "."):
                self.collapsed.discard(h)
        vis = self.visible_paths()
        if path in vis:
            before = self.current
            self.cursor = vis.index(path)
            self._moved(before)
            self._resize()
            self.scroll_to(y=max(self.cursor - 2, 0), animate=False, immediate=True)
            return True
        return False

    def action_move(self, delta: int) -> None:
        vis = self.visible_paths()
        if vis:
            before = self.current
            self.cursor = max(0, min(self.cursor + delta, len(vis) - 1))
            self._moved(before)
            top = int(self.scroll_y)
            if self.cursor < top or self.cursor >= top + self.size.height:
                self.scroll_to(y=max(self.cursor - self.size.height + 1, 0), animate=False, immediate=True)
            self.refresh()

    def action_toggle_queue(self) -> None:
        path = self.current
        if path is not None and self.queues.get(path) and self.queues[path].children:
            self.collapsed.symmetric_difference_update({path})
            self._resize()

    def action_expand(self, expand: bool) -> None:
        path = self.current
        if path is None:
            return
        if expand:
            self.collapsed.discard(path)
        elif self.queues.get(path) and self.queues[path].children:
            self.collapsed.add(path)
        self._resize()

    def on_click(self, event: events.Click) -> None:
        """Select the queue under the pointer; its marker toggles it; a double click filters the jobs."""
        self.focus()
        offset = event.get_content_offset(self)
        if offset is None:
            return
        vis = self.visible_paths()
        index = int(self.scroll_y) + offset.y
        if not 0 <= index < len(vis):
            return
        path = vis[index]
        before = self.current
        self.cursor = index
        self._moved(before)
        q = self.queues[path]
        if q.children and 2 * q.depth <= offset.x < 2 * q.depth + 2:
            self.action_toggle_queue()
        elif event.chain >= 2:
            # a LocalQueue's jobs are counted on its ClusterQueue (Job.queue is the CQ's path)
            self.post_message(self.FilterJobs(q.parent if path in self.local and q.parent else path))
        self.refresh()

    def _layout(self, width: int, vis: list[str]) -> tuple[int, int, int, int, bool]:
        """(name, bar, used/guaranteed/max, R/PD) column widths for the rows on screen, and whether
        the fair share and borrowing marks fit: the numbers as wide as the widest (176.01/2547/-
        pushed the counts out of line), the name as long as the longest on screen needs (names were
        cut at ten characters) and the bar shorter (down to :data:`BAR_MIN`, then none) where the
        pane is narrow; a name is cut (with "…") before the bar goes. Where even that is too wide
        (the pane beside the GPU map on an 80-column terminal: the counts were cut to "R1819 P"),
        the fair share goes first (the bar's colour still marks a borrowing queue), then the name
        is cut down to :data:`NAME_NARROW`."""
        key = (self._version, tuple(vis), width)
        if key == self._layout_key:
            return self._layout_value
        names = [cell_len(self._label(p)) for p in vis]
        numbers = [len(self._amounts(self.queues[p])) + 1 for p in vis if p not in self.local]
        counts = [len(self._counts(self.queues[p])) + 1 for p in vis]
        num_w = max([13, *numbers])
        count_w = max([10, *counts])
        beside = True
        fixed = BESIDE + num_w + count_w + 1  # + the gap after the name
        # the whole name first (the bar shortens for it), then what the width allows
        name_w = min(max([NAME, *names]), NAME_MAX)
        bar_w = min(BAR, width - fixed - name_w)
        if bar_w < BAR_MIN:  # too narrow for the whole name and a bar: the name gives way first
            name_w = max(NAME, width - fixed - BAR_MIN)
            bar_w = min(BAR, width - fixed - name_w)
            if bar_w < BAR_MIN:
                bar_w = 0
        if fixed + min(name_w, NAME) + bar_w > width:  # the counts would be cut: drop the fair share
            beside, fixed = False, fixed - BESIDE
        floor = NAME if beside else NAME_NARROW
        name_w = max(floor, min(name_w, width - fixed - bar_w))
        self._layout_key, self._layout_value = key, (name_w, bar_w, num_w, count_w, beside)
        return self._layout_value

    def _label(self, path: str) -> str:
        q = self.queues[path]
        marker = ("▸ " if path in self.collapsed else "▾ ") if q.children else "  "
        return "  " * q.depth + marker + sanitize_display(q.path.rsplit(".", 1)[-1], cap=64)

    @staticmethod
    def _amounts(q: QueueStatus) -> str:
        max_txt = _g(q.max.gpu) if q.max is not None and q.max.gpu else "-"
        return f"{_g(q.used.gpu):>5}/{_g(q.guaranteed.gpu)}/{max_txt}"

    @staticmethod
    def _counts(q: QueueStatus) -> str:
        return f"R{q.running_jobs} PD{q.pending_jobs}"

    def _line(
        self,
        path: str,
        is_cursor: bool,
        width: int,
        layout: tuple[int, int, int, int, bool] = (NAME, BAR, 13, 10, True),
    ) -> list[Segment]:
        name_w, bar_w, num_w, count_w, beside = layout
        q = self.queues[path]
        pal = self._palette
        app = self.app
        base = (
            pal.style(app, bg="block-cursor-background", bold=True)
            if is_cursor and self.has_focus
            else Style()
        )
        if is_cursor and not self.has_focus:
            base = Style(underline=True)
        label = fit_cells(self._label(path), name_w)  # cells, not code points (T5); "…" when cut
        segs = [Segment(label + " ", base)]
        if path in self.local:
            kind = self.kinds.get(path, "LocalQueue")
            segs.append(Segment(kind.ljust(bar_w + num_w), base + pal.style(app, fg="gpu-free")))
            segs.append(Segment(f" {self._counts(q)}".ljust(count_w), base))
            if q.state.value != "open":
                segs.append(Segment(f" [{q.state.value}]", base + pal.style(app, fg="warning")))
            return segs
        top = q.max.gpu if q.max is not None and q.max.gpu else max(self.cluster_gpu, q.used.gpu, 1)
        filled = min(round(q.used.gpu / top * bar_w), bar_w) if top else 0
        guar = min(round(q.guaranteed.gpu / top * bar_w), bar_w) if top and q.guaranteed.gpu else -1
        colour = "queue-over-share" if q.borrowing else queue_var(path, self.order)
        bar_style = base + pal.style(app, fg=colour)
        for i in range(bar_w):
            ch = "█" if i < filled else "░"
            style = bar_style if i < filled else base + pal.style(app, fg="gpu-free")
            if i == guar:
                ch = "┃" if i >= filled else "▌"
                style = base + pal.style(app, fg="queue-guaranteed", bold=True)
            segs.append(Segment(ch, style))
        segs.append(Segment(f" {self._amounts(q)}".ljust(num_w), base))
        segs.append(Segment(f" {self._counts(q)}".ljust(count_w), base))
        if beside:
            segs.append(Segment(f" fs{q.fairshare_factor:.2f}", base))
            if q.dominant_resource and q.dominant_resource != "gpu":
                segs.append(Segment(f" ({sanitize_display(q.dominant_resource, cap=8)})", base))
            if q.borrowing:
                segs.append(Segment(" ⇡", base + pal.style(app, fg="queue-over-share", bold=True)))
        if q.state.value != "open":
            segs.append(Segment(f" [{q.state.value}]", base + pal.style(app, fg="warning")))
        return segs

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        vis = self.visible_paths()
        index = int(self.scroll_y) + y
        if 0 <= index < len(vis):
            # the scrollbar takes a column of the pane's width: lay out in what is left
            layout = self._layout(min(width, self.scrollable_content_region.width or width), vis)
            return (
                Strip(self._line(vis[index], index == self.cursor, width, layout))
                .extend_cell_length(width)
                .crop(0, width)
            )
        return Strip.blank(width, self.rich_style)
