"""What the job detail screen shows, gathered from the console's state on each tick.

:func:`hpctop.tui.screens.detail.detail_text` draws it; this module collects its inputs: the job
and its plan, the console's journal, the nodes of the GPU map, and on a live session the audit
log's records, the job's Events and Kueue's own queue position.
"""

from __future__ import annotations

from rich.text import Text

from hpctop.model.objects import JobKey
from hpctop.tui.base import ConsoleBase
from hpctop.tui.screens.detail import JobDetailScreen, detail_text
from hpctop.tui.widgets.jobs import JobsTable


class DetailFeed(ConsoleBase):
    """The job detail's text for a key (see the module doc)."""

    def open_detail(self, key: JobKey) -> None:
        self.push_screen(JobDetailScreen(key, self._detail))

    def _detail(self, key: JobKey) -> Text:
        nodes = {n.name: n for n in self._gpu_map.nodes}
        return detail_text(
            self.snapshot.jobs.get(key),
            self.result.plans.get(key),
            self.snapshot,
            self.result.now,
            self.journal.of(key),
            nodes,
            audit=self.live.audit_entries(key) if self.live is not None else None,
            events=job_events(key) if (job_events := getattr(self.session, "job_events", None)) else None,
            scheduler_position=self._scheduler_position(key),
            order=self._main(JobsTable, "#jobs").ranks.get(key),
        )

    def _scheduler_position(self, key: JobKey) -> str | None:
        """Kueue's own queue position of a pending job (live sessions polling its visibility API)."""
        lookup = getattr(self.session, "kueue_position", None)
        position = lookup(key) if lookup is not None else None
        if position is None:
            return None
        return (
            f"Kueue position {position.in_cluster_queue + 1} in ClusterQueue {position.cluster_queue}, "
            f"{position.in_local_queue + 1} in LocalQueue {position.local_queue}"
        )
