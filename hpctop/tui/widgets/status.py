"""The status bar: where the data comes from, how fresh it is, the cluster in one line.

A console that silently shows stale data is worse than none, so the snapshot's age is always shown
and turns into a ``STALE`` badge past a threshold; READ-ONLY is a badge too, so a user never wonders
whether a key will act. The badge names the source ("demo · READ-ONLY"): otherwise the source, left
out before the counts when the bar is short, was the part the badge pushed out at 80 columns.
A simulated session's source ("demo", a scenario, a replay) is never left out either: at 80
columns a lagging simulation's "×21.6 of ×60" pushed "demo" out, and nothing on screen said the
cluster was not a live one.
Built as a Rich ``Text`` from parts: the only cluster-controlled piece (the
source name, e.g. a scenario file name) is sanitised and appended as data.

The console calls :meth:`StatusBar.show` on every publish; ``Static.update`` converts the text and
repaints the bar, so it only runs when the text or its styles changed (a tick that moved nothing
shown, e.g. the age still under a second, costs no repaint).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from hpctop.tui.rows import fmt_clock, fmt_duration
from hpctop.tui.sanitize import sanitize_display


@dataclass(frozen=True, slots=True)
class StatusInfo:
    source: str
    connection: str
    age: float
    stale: bool
    nodes: int
    nodes_down: int
    gpus_used: float
    gpus_free: float
    gpus_total: float
    running: int
    pending: int
    read_only: bool
    clock: float
    speed: float
    paused: bool
    simulated: bool
    #: the last thing that went wrong in the console, one line ("" when nothing did)
    notice: str = ""
    #: the speed the simulation achieves when it cannot keep up with ``speed`` (None: it keeps up)
    achieved: float | None = None
    #: why the Slurm rows are stale (slurmrestd down or refusing the token); "" when current
    slurm_note: str = ""


#: the source's length in the READ-ONLY badge, which is never left out: at 80 columns the badge and
#: the GPU and job counts must still fit
READ_ONLY_SOURCE_CAP = 24


class StatusBar(Static):
    _shown: tuple[str, tuple[object, ...]] | None = None
    _last: tuple[StatusInfo, dict[str, str]] | None = None

    def show(self, info: StatusInfo, colours: dict[str, str]) -> None:
        """The bar, its parts in order of importance: what does not fit the width is left out
        from the least important up (the READ-ONLY and STALE badges always stay)."""
        self._last = (info, colours)
        parts: list[tuple[int, Text]] = []  # (priority: lower stays longer, text)

        def part(priority: int, text: str, style: str = "") -> Text:
            piece = Text(text, style=style)
            parts.append((priority, piece))
            return piece

        part(0, " hpctop ", f"bold reverse {colours.get('primary', '')}")
        if info.read_only:  # what is read-only, in the badge that always stays: "demo · READ-ONLY"
            source = sanitize_display(info.source, cap=READ_ONLY_SOURCE_CAP)
            part(0, f" {source} · READ-ONLY ", f"bold reverse {colours.get('read-only', '')}")
        age = "age " + (fmt_duration(info.age) if info.age >= 1 else "<1s")
        if info.stale:
            part(0, " STALE ", f"bold reverse {colours.get('stale', '')}")
        if not info.read_only and info.simulated:  # the mode always shows: not a live cluster
            part(0, sanitize_display(info.source, cap=READ_ONLY_SOURCE_CAP), "bold")
        elif not info.read_only:
            part(3, sanitize_display(info.source, cap=60), "bold")
        fresh = not info.connection.startswith("stale")
        part(5, info.connection, colours.get("success", "") if fresh else "")
        part(1, age)
        part(1, f"GPUs {_n(info.gpus_used)}/{_n(info.gpus_total)} used")
        part(4, f"{_n(info.gpus_free)} free")
        jobs = part(1, "")
        jobs.append(f"R {info.running}", style=colours.get("job-running", ""))
        jobs.append("  ")
        jobs.append(f"PD {info.pending}", style=colours.get("job-pending", ""))
        nodes = part(3, f"nodes {info.nodes}")
        if info.nodes_down:
            nodes.append(f" (✕{info.nodes_down} down)", style=colours.get("gpu-down", ""))
        if info.simulated:
            if info.achieved is not None:  # cannot keep up: what it does against what was asked
                part(2, f"×{info.achieved:.3g} of ×{info.speed:g}", colours.get("warning", "bold"))
            else:
                paused = "  PAUSED" if info.paused else ""
                part(2, f"×{info.speed:g}{paused}", "bold" if info.paused else "")
            part(4, fmt_clock(info.clock))
        if info.slurm_note:  # only the Slurm rows degrade: the rest of the bar stays as it is
            part(0, sanitize_display(info.slurm_note, cap=120), colours.get("warning", "bold"))
        if info.notice:
            part(0, sanitize_display(info.notice, cap=100), colours.get("error", "bold"))  # always shown
        width = self.size.width or 200
        kept = list(parts)
        while len(kept) > 1 and sum(p.cell_len + 2 for _, p in kept) > width:
            drop = max(range(len(kept)), key=lambda i: (kept[i][0], i))
            if kept[drop][0] == 0:
                break
            del kept[drop]
        t = Text(no_wrap=True, overflow="ellipsis")
        for i, (_, piece) in enumerate(kept):
            if i:
                t.append("  ")
            t.append_text(piece)
        shown = (t.plain, tuple(t.spans))
        if shown != self._shown:
            self._shown = shown
            self.update(t)

    def on_resize(self) -> None:
        if self._last is not None:  # what fits changed with the width
            self.show(*self._last)


def _n(gpus: float) -> str:
    """GPUs as the panes write them: whole numbers plain, fractions (shared GPUs) to 2 places."""
    return f"{round(gpus, 2):g}"
