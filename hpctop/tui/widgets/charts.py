"""Charts of the recent past, drawn by plotext through textual-plotext.

Each plot is a ``PlotextPlot`` with ``theme="auto"`` so it follows the app theme; data comes from
``hpctop.model.history.History`` (ring buffers filled once per tick), and plots redraw only when the
history got a new sample and the pane is shown. Series labels are partition and queue names, which
come from cluster configuration: they are sanitised, and plotext draws them as plain characters.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual_plotext import PlotextPlot

from hpctop.model.history import History
from hpctop.tui.sanitize import sanitize_display

MAX_SERIES = 6


class ChartsPane(Horizontal):
    def compose(self) -> ComposeResult:
        yield PlotextPlot(id="chart-alloc")
        yield PlotextPlot(id="chart-pending")
        yield PlotextPlot(id="chart-throughput")
        yield PlotextPlot(id="chart-waits")

    def update_from(self, history: History) -> None:
        if not self.display:
            return
        t0 = history.samples[0].t if history.samples else 0.0

        def rel(ts: list[float]) -> list[float]:
            return [(t - t0) / 60 for t in ts]  # minutes since the first sample

        alloc = self.query_one("#chart-alloc", PlotextPlot)
        plt = alloc.plt
        plt.clear_data()
        plt.title("GPUs allocated / partition")
        times, series = history.series("gpu_allocated")
        for name, values in list(series.items())[:MAX_SERIES]:
            if len(times) > 1:
                plt.plot(rel(times), values, label=sanitize_display(name, cap=16))
        plt.xlabel("min")
        alloc.refresh()

        pending = self.query_one("#chart-pending", PlotextPlot)
        plt = pending.plt
        plt.clear_data()
        plt.title("pending jobs / queue")
        times, series = history.series("pending")
        for name, values in sorted(series.items(), key=lambda kv: -kv[1][-1] if kv[1] else 0)[:MAX_SERIES]:
            if len(times) > 1:
                plt.plot(rel(times), values, label=sanitize_display(name.rsplit(".", 1)[-1], cap=16))
        pending.refresh()

        thr = self.query_one("#chart-throughput", PlotextPlot)
        plt = thr.plt
        plt.clear_data()
        plt.title("jobs started / finished")
        times, started, finished = history.throughput()
        if len(times) > 1:
            plt.plot(rel(times), [float(v) for v in started], label="started")
            plt.plot(rel(times), [float(v) for v in finished], label="finished")
        thr.refresh()

        waits = self.query_one("#chart-waits", PlotextPlot)
        plt = waits.plt
        plt.clear_data()
        plt.title("wait time (min)")
        if history.waits:
            plt.hist([w / 60 for w in history.waits], bins=20)
        waits.refresh()
