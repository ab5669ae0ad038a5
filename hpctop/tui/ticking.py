"""The tick: advance the session, then publish the new snapshot to every pane.

A timer every ``tick_interval`` real seconds runs ``session.step(speed * dt)`` in a thread worker,
so a slow step (a big scenario at high speed) never blocks a keypress; rows for the jobs pane are
built in that worker too. The session is not thread-safe, so every call into it holds
``self._lock``, and a tick that finds a step still running is skipped rather than queued. With
``tick_interval=0`` (tests) nothing runs on its own: tests call :meth:`Ticking.step_now`. The app
never mutates the session's data: it reads the session's ``snapshot`` and ``result`` references,
which are replaced (not mutated) on each step. A step or publish that fails is a status-bar line
(:meth:`ConsoleBase.report_fault`), never a silent freeze.
"""

from __future__ import annotations

import contextlib

from rich.text import Text
from textual.css.query import NoMatches
from textual.widgets import Static

from hpctop.model.store import Snapshot
from hpctop.scheduling.types import ScheduleResult
from hpctop.tui.access import Access
from hpctop.tui.rows import JobRow
from hpctop.tui.screens.detail import JobDetailScreen
from hpctop.tui.widgets.charts import ChartsPane
from hpctop.tui.widgets.gpus import GpuPane
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.queues import QueuePane, with_local_queues

#: virtual seconds of one locked piece of a step (the Session's scheduling points make any split
#: of a step give the same cluster)
STEP_CHUNK = 60.0


class Ticking(Access):
    """The tick and publishing (see the module doc)."""

    def tick(self) -> None:
        """Timer callback: start one step in a thread unless one is still running."""
        if self._stepping:
            self.skipped_ticks += 1
            return
        now = self.clock()
        # When a step takes longer than the tick (a high speed on a big cluster), the simulation
        # falls behind the requested speed instead of catching up in ever larger steps: a step
        # never covers more than two ticks of real time, so the screen keeps moving smoothly.
        dt = min(now - self._last_tick, self.max_tick_lag)
        self._last_tick = now
        virtual = 0.0 if self.paused or not self.simulated else self.session.speed * dt
        self._stepping = True
        self.run_worker(
            lambda: self._step_in_thread(virtual), thread=True, group="tick", exit_on_error=False, name="step"
        )

    def _step_in_thread(self, virtual: float) -> None:
        try:
            # in chunks, the lock let go between them: an action or a refresh on the UI thread
            # waits for one chunk of the simulator at most, not for a whole step at high speed
            while virtual > 0:
                chunk = min(virtual, STEP_CHUNK)
                with self._lock:
                    self.session.step(chunk)
                virtual -= chunk
            with self._lock:
                if self._refresh_wanted:
                    self._refresh_wanted = False
                    self.session.refresh()
                snapshot, result = self.session.snapshot, self.session.result
                rows = self._rows.rows(snapshot.jobs, result.plans)
                self.history.record(snapshot, result)  # O(jobs), here: publish's call then returns at once
            with contextlib.suppress(NoMatches):  # the panes' heavy publish work, off the UI thread
                self._main(JobsTable, "#jobs").prepare(rows, result.now)
                self._main(GpuPane, "#gpus").prepare(snapshot, result.partitions)
            previous = (self.snapshot, self.result)  # freed below, in this thread, not on the UI's
            self.call_from_thread(self.publish, snapshot, result, rows)
            del previous
        except Exception as exc:  # a step or a publish that fails is shown, never a silent freeze
            with contextlib.suppress(RuntimeError):  # the app closed meanwhile
                self.call_from_thread(self.report_fault, "tick", exc)
        finally:
            self._stepping = False

    def step_now(self, virtual_seconds: float) -> None:
        """Advance and publish synchronously (tests, and ``tick_interval=0``)."""
        with self._lock:
            if virtual_seconds > 0:
                self.session.step(virtual_seconds)
            snapshot, result = self.session.snapshot, self.session.result
            rows = self._rows.rows(snapshot.jobs, result.plans)
        self.publish(snapshot, result, rows)

    def refresh_session(self) -> None:
        """A fresh view now; while a step holds the session, the step's own publish brings it
        (the UI thread never waits for the simulator)."""
        if self._stepping:
            self._refresh_wanted = True  # taken by this step, or else by the next tick's
            return
        with self._lock:
            self.session.refresh()
            snapshot, result = self.session.snapshot, self.session.result
            rows = self._rows.rows(snapshot.jobs, result.plans)
        self.publish(snapshot, result, rows)

    def publish(self, snapshot: Snapshot, result: ScheduleResult, rows: list[JobRow]) -> None:
        """Show a new snapshot in every pane (main thread)."""
        self.publishes += 1
        self.snapshot, self.result = snapshot, result
        self.published_at = self.clock()
        self._pace.append((self.published_at, result.now))
        now = result.now
        queue_order = list(result.queues)
        jobs = self._main(JobsTable, "#jobs")
        jobs.set_queue_order(queue_order)
        # same rows as last time: keep the order (re-sorting 100k rows every tick costs ~50 ms)
        jobs.set_rows(rows, now, resort=self._rows.changed)
        self._update_jobs_info()
        if snapshot.version != self._gpu_version:
            self._gpu_version = snapshot.version
            self._gpu_map = self._main(GpuPane, "#gpus").map_for(snapshot, result.partitions)
            self._main(GpuPane, "#gpus").set_map(self._gpu_map, queue_order)
        self._main(GpuPane, "#gpus").set_metrics(getattr(self.session, "gpu_metrics", None))
        shown, local = with_local_queues(result.queues, snapshot.queues)
        slurm = getattr(self.session, "slurm_partitions", None) or {}
        if slurm:  # Slurm's partitions (a --slurm-url console): rows of their own, no bar
            shown = {**shown, **slurm}
            local = local | frozenset(slurm)
        kinds = dict.fromkeys(slurm, "Slurm")
        self._main(QueuePane, "#queues").set_queues(shown, result.cluster.gpu, local, kinds)
        self.history.record(snapshot, result)
        charts = self._main(ChartsPane, "#charts")
        if charts.display:
            charts.update_from(self.history)
        counts = self._rows.counts
        self._status_counts = (counts.get("running", 0), counts.get("pending", 0))
        self._update_status()
        screen = self.screen
        if isinstance(screen, JobDetailScreen):
            screen.refresh_body()
        self._sync_bindings()

    def _update_jobs_info(self) -> None:
        jobs = self._main(JobsTable, "#jobs")
        self._main(Static, "#jobs-info").update(Text(jobs.status_line(), no_wrap=True, overflow="ellipsis"))

    def _repaint_all(self) -> None:
        self._main(GpuPane, "#gpus").rebuild()
        self._main(QueuePane, "#queues").refresh()
        self._main(JobsTable, "#jobs").refresh()
        self._main(ChartsPane, "#charts").update_from(self.history)  # series take the theme's colours
        self._update_status()
