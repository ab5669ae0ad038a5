"""The status bar: where the data comes from, how fresh it is, the cluster in one line.

A console that silently shows stale data is worse than none, so the snapshot's age is always shown
and turns into a ``STALE`` badge past a threshold; READ-ONLY is a badge too, so a user never wonders
whether a key will act. Built as a Rich ``Text`` from parts: the only cluster-controlled piece (the
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


class StatusBar(Static):
    _shown: tuple[str, tuple[object, ...]] | None = None

    def show(self, info: StatusInfo, colours: dict[str, str]) -> None:
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(" hpctop ", style=f"bold reverse {colours.get('primary', '')}")
        t.append(" ")
        t.append(sanitize_display(info.source, cap=60), style="bold")
        fresh = not info.connection.startswith("stale")
        t.append(f"  {info.connection}", style=colours.get("success", "") if fresh else "")
        age = "age " + (fmt_duration(info.age) if info.age >= 1 else "<1s")
        if info.stale:
            t.append("  STALE ", style=f"bold reverse {colours.get('stale', '')}")
            t.append(age)
        else:
            t.append(f"  {age}")
        t.append(f"  │ nodes {info.nodes}")
        if info.nodes_down:
            t.append(f" (✕{info.nodes_down})", style=colours.get("gpu-down", ""))
        t.append(f"  GPUs {info.gpus_free:g}/{info.gpus_total:g} free")
        t.append("  │ ")
        t.append(f"R {info.running}", style=colours.get("job-running", ""))
        t.append("  ")
        t.append(f"PD {info.pending}", style=colours.get("job-pending", ""))
        if info.simulated:
            if info.achieved is not None:
                t.append(f"  │ {fmt_clock(info.clock)}  ")
                t.append(f"×{info.achieved:.3g} of ×{info.speed:g}", style=colours.get("warning", "bold"))
            else:
                t.append(f"  │ {fmt_clock(info.clock)}  ×{info.speed:g}")
            if info.paused:
                t.append("  PAUSED", style="bold")
        if info.read_only:
            t.append("  ")
            t.append(" READ-ONLY ", style=f"bold reverse {colours.get('read-only', '')}")
        if info.notice:
            t.append("  ")
            t.append(sanitize_display(info.notice, cap=200), style=colours.get("error", "bold"))
        shown = (t.plain, tuple(t.spans))
        if shown != self._shown:
            self._shown = shown
            self.update(t)
