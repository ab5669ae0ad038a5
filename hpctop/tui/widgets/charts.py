"""Charts of the recent past, drawn by plotext through textual-plotext.

Each plot is a ``PlotextPlot`` with ``theme="auto"`` so its frame follows the app theme; the series
take the theme's own queue colours (``queue-color-*``; the colour-blind theme's are Okabe-Ito), so
no theme is left with plotext's red/green defaults. Data comes from
``hpctop.model.history.History`` (ring buffers filled once per tick); plots redraw only when the
history got a new sample and the pane is shown.

What the charts must not do (issue 15): drop series silently (every partition and queue counts: the
largest few by name, the rest summed as "other"), draw a legend over the lines (each chart's legend
is a line of its own under it), leave out units (each title says what is counted and in what), or
start an axis below zero (counts and waits are never negative: the y axes start at 0 and the wait
histogram's bins start at 0 minutes).

Series labels are partition and queue names, which come from cluster configuration: they are
sanitised, and drawn as plain text (plotext's characters, Rich ``Text`` for the legend).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from itertools import pairwise

from rich.text import Text
from textual.app import ComposeResult
from textual.color import Color, ColorParseError
from textual.containers import Horizontal, Vertical
from textual.widgets import Static
from textual_plotext import PlotextPlot

from hpctop.model.history import History
from hpctop.tui.sanitize import sanitize_display
from hpctop.tui.themes import DEFAULT_VARIABLES

#: series drawn per chart: the largest ones by name, and one "other" for the rest
MAX_SERIES = 5
OTHER = "other"
WAIT_BINS = 12


def top_series(series: Mapping[str, list[float]], n: int = MAX_SERIES) -> dict[str, list[float]]:
    """The ``n`` series with the largest latest value (ties by name), plus ``other``: the sum of
    the rest, point by point, so every series is counted somewhere."""
    ranked = sorted(series.items(), key=lambda kv: (-(kv[1][-1] if kv[1] else 0.0), kv[0]))
    if len(ranked) <= n + 1:
        return dict(ranked)
    out = dict(ranked[:n])
    rest = [values for _, values in ranked[n:]]
    out[OTHER] = [sum(points) for points in zip(*rest, strict=True)]
    return out


def wait_histogram(
    waits: list[float], bins: int = WAIT_BINS, top: float | None = None
) -> tuple[list[float], list[int], float]:
    """(left edges, counts, bin width) of ``waits``, ``bins`` bins from 0 (waits are never
    negative) to ``top`` (the axis's last tick; by default the longest wait)."""
    if top is None:
        top = max(waits, default=0.0)
    width = top / bins if top > 0 else 1.0
    counts = [0] * bins
    for w in waits:
        counts[min(int(max(w, 0.0) / width), bins - 1)] += 1
    return [i * width for i in range(bins)], counts, width


#: the wait axis's unit by the longest wait: (below this many seconds, the unit, its seconds)
WAIT_UNITS = ((120.0, "seconds", 1.0), (3 * 3600.0, "minutes", 60.0), (3 * 86400.0, "hours", 3600.0))
#: ticks on the wait axis at most (a chart is ~20 columns wide at 80: four short labels fit)
WAIT_TICKS = 4


def wait_unit(longest: float) -> tuple[str, float]:
    """(name, seconds per unit) for a time axis (the waits, or the line charts' time since the
    first sample) whose longest value is ``longest`` seconds: a span of 9 seconds in minutes read
    "0.00 0.07 0.15", one of 20 hours "0 600 1200"; the first seconds of a session or a slow demo
    read "0.000 0.000 0.000" minutes on the line charts."""
    for below, name, seconds in WAIT_UNITS:
        if longest < below:
            return name, seconds
    return "days", 86400.0


def tick_labels(ticks: list[float]) -> list[str]:
    """Axis labels with whole numbers from 3 up, else one decimal, and more decimals (up to 3)
    where that keeps distinct ticks distinct: a wait axis of 0.15 minutes reads
    "0.00 0.07 0.15", not "0.0 0.1 0.1"."""
    whole = all(t == int(t) for t in ticks)  # round ticks (nice_ticks): "0 1 2", not "0.0 1.0 2.0"
    fewest = 0 if whole or max(ticks, default=0.0) >= 3 else 1
    for decimals in range(fewest, 7):
        labels = [f"{t:.{decimals}f}" for t in ticks]
        if len(set(labels)) == len(set(ticks)):
            return labels
    return labels


def nice_ticks(low: float, high: float, most: int = 5) -> list[float]:
    """Round axis ticks in [``low``, ``high``]: multiples of 1, 2 or 5 times a power of ten, at most
    ``most`` of them. plotext's own split the span evenly, so a 3.9-minute axis read
    "0.0 1.0 1.9 2.9 3.9"; this one reads "0 1 2 3"."""
    span = high - low
    if span <= 0:
        return [low]
    step = 10 ** math.floor(math.log10(span)) / 10  # from small steps up: the most ticks that fit
    while True:
        for factor in (1, 2, 5):
            size = step * factor
            first = math.ceil(low / size - 1e-9)
            last = math.floor(high / size + 1e-9)
            if last - first + 1 <= most:
                return [round(k * size, 10) for k in range(first, last + 1)]
        step *= 10


#: rows of a plot that are not its canvas: the title, the frame's top and bottom, the x axis's
#: labels and its name
PLOT_CHROME_ROWS = 5


def y_ticks(top: float, plot_height: int) -> list[float]:
    """Round ticks from 0 to at least ``top`` (the axis's limit is set to the last one, so the top
    tick is on the top row and none falls between rows) for a plot ``plot_height`` rows high: at
    most one per two canvas rows, at least 0 and one more. plotext put its own at fifths of the
    span, labelled to one decimal, and dropped those that fell on a taken row: five rows of
    "pending jobs" read "11.6 9.6 5.8 3.9 0.0", uneven steps of a count that has no decimals."""
    canvas = max(plot_height - PLOT_CHROME_ROWS, 1)
    return round_ticks(top, max(2, (canvas + 1) // 2))


def round_ticks(top: float, most: int) -> list[float]:
    """Round ticks from 0 to at least ``top``, at most ``most`` of them: the lowest last tick (the
    least room wasted above the data), then the most ticks; steps of 1, 1.5, 2, 2.5, 3, 4, 5, 6
    or 8 times a power of ten (15 and 30 minutes, 6 and 12 hours read well too)."""
    if top <= 0:
        return [0.0, 1.0]
    power = 10 ** math.floor(math.log10(top))
    best: list[float] = []
    for size in (
        power * f for f in (0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.8, 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10)
    ):
        count = math.ceil(top / size - 1e-9)
        if count + 1 > most:
            continue
        ticks = [round(k * size, 10) for k in range(count + 1)]
        # the lowest last tick (the plot's room wasted above the data), then the most ticks
        if not best or (ticks[-1], -len(ticks)) < (best[-1], -len(best)):
            best = ticks
    return best


#: each chart's title where the plot is too narrow for the whole one (plotext leaves a title out
#: that does not fit: at 80x24 the four charts had none)
SHORT_TITLES: dict[str, str] = {
    "GPUs in use, by partition": "GPUs in use",
    "pending jobs, by queue": "pending jobs",
    "jobs started / finished per minute": "jobs per min",
    "jobs by wait (submit to start)": "jobs by wait",
}


def fit_title(title: str, width: int) -> str:
    """``title``, or its short form where the plot is narrower than the title and the y axis."""
    # plotext centres the title on the canvas and drops it when it runs past the plot: about the
    # y axis (a tick label up to six cells and its ┤) less than the plot's width
    return title if len(title) + 6 <= width else SHORT_TITLES.get(title, title)


#: each chart's title
TITLES = {
    "alloc": "GPUs in use, by partition",
    "pending": "pending jobs, by queue",
    "throughput": "jobs started / finished per minute",
    "waits": "jobs by wait (submit to start)",
}


class Chart(PlotextPlot):
    """A plot whose title follows its width (:func:`fit_title`), set again on every resize: the
    first draw can come before the layout gave the plot its width."""

    def __init__(self, title: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.full_title = title
        #: the y axis's data top (:meth:`set_y`), kept to place the ticks again on a resize (it
        #: was set in :meth:`fit_title`, which every resize calls first: the ticks of a first draw
        #: before the layout, for a plot of height 0, stayed until the next sample)
        self.y_top: float | None = None

    def fit_title(self) -> None:
        self.plt.title(fit_title(self.full_title, self.size.width))

    def set_y(self, top: float) -> None:
        """The y axis from 0 to the last of :func:`y_ticks` for ``top``, for the plot's height now
        (set again on every resize: the first draw can come before the layout, at height 0)."""
        self.y_top = top
        ticks = y_ticks(top, self.size.height)
        self.plt.ylim(0, ticks[-1])
        self.plt.yticks(ticks, [f"{t:g}" for t in ticks])  # exact: 2.5 is "2.5", 250 is "250"

    def on_resize(self) -> None:
        self.fit_title()
        if self.y_top is not None:
            self.set_y(self.y_top)
        self.refresh()


class ChartsPane(Horizontal):
    def compose(self) -> ComposeResult:
        for name in ("alloc", "pending", "throughput", "waits"):
            with Vertical(classes="chart"):
                yield Chart(TITLES[name], id=f"chart-{name}")
                yield Static(id=f"legend-{name}", classes="chart-legend")

    def _colours(self) -> list[tuple[int, int, int]]:
        variables = self.app.theme_variables
        out = []
        for i in range(8):
            raw = variables.get(f"queue-color-{i}") or DEFAULT_VARIABLES.get(f"queue-color-{i}", "#888888")
            try:
                out.append(Color.parse(raw).rgb)
            except ColorParseError:
                out.append((136, 136, 136))
        return out

    def _legend(self, name: str, labels: list[str], colours: list[tuple[int, int, int]]) -> None:
        t = Text(no_wrap=True, overflow="ellipsis")
        for i, label in enumerate(labels):
            r, g, b = colours[i % len(colours)]
            t.append("■", style=f"rgb({r},{g},{b})")
            t.append(label + " ")
        self.query_one(f"#legend-{name}", Static).update(t)

    def update_from(self, history: History) -> None:
        if not self.display:
            return
        colours = self._colours()
        t0 = history.samples[0].t if history.samples else 0.0

        def lines(name: str, series: dict[str, list[float]], times: list[float]) -> None:
            plot = self.query_one(f"#chart-{name}", Chart)
            plt = plot.plt
            plt.clear_data()
            plot.fit_title()
            labels = list(series)
            # time since the first sample, in the unit its span reads best in (seconds at first)
            unit, seconds = wait_unit(times[-1] - t0 if times else 0.0)
            if len(times) > 1:
                xs = [(t - t0) / seconds for t in times]
                for i, label in enumerate(labels):
                    plt.plot(xs, series[label], color=colours[i % len(colours)])
                top = max((max(v) for v in series.values() if v), default=0.0)
                plot.set_y(max(top * 1.05, 1.0))
                ticks = nice_ticks(xs[0], xs[-1])
                plt.xticks(ticks, tick_labels(ticks))
            plt.xlabel(unit)
            self._legend(name, labels, colours)
            plot.refresh()

        times, alloc = history.series("gpu_allocated")
        shown = {sanitize_display(k, cap=16): v for k, v in top_series(alloc).items()}
        lines("alloc", shown, times)

        times, pending = history.series("pending")
        queues = {sanitize_display(k.rsplit(".", 1)[-1], cap=16): v for k, v in top_series(pending).items()}
        lines("pending", queues, times)

        times, started, finished = history.throughput()
        # per minute, not per recorded interval (intervals follow the tick and the speed)
        gaps = [max(b - a, 1e-9) / 60 for a, b in pairwise(times)]
        rates = {
            "started": [v / g for v, g in zip(started[1:], gaps, strict=True)],
            "finished": [v / g for v, g in zip(finished[1:], gaps, strict=True)],
        }
        lines("throughput", rates, times[1:])

        plot = self.query_one("#chart-waits", Chart)
        plt = plot.plt
        plt.clear_data()
        plot.fit_title()
        unit = "minutes"
        if history.waits:
            # round ticks in a unit that suits the span (plotext's halves of it read "0.00 0.07
            # 0.15" minutes), the bins from 0 to the last tick
            unit, seconds = wait_unit(max(history.waits))
            waits = [w / seconds for w in history.waits]
            ticks = round_ticks(max(waits), WAIT_TICKS)
            edges, counts, width = wait_histogram(waits, top=ticks[-1])
            plt.bar([e + width / 2 for e in edges], counts, width=0.9, color=colours[0])
            plt.xlim(0, ticks[-1])
            plt.xticks(ticks, [f"{t:g}" for t in ticks])
            plot.set_y(max(max(counts) * 1.05, 1.0))
        plt.xlabel(f"{unit} waited")
        self.query_one("#legend-waits", Static).update(
            Text(f"{len(history.waits)} started jobs", no_wrap=True)
        )
        plot.refresh()
