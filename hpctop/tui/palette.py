"""The command palette's back end: what it finds (jobs, nodes, queues) and what its commands do.

:mod:`hpctop.tui.commands` is the palette's Textual ``Provider``; it asks the app through the
:class:`~hpctop.tui.commands.PaletteHost` protocol, which :class:`PaletteTargets` implements, so
the provider never imports the app. Candidates are filtered with a plain substring test and cut
to ``limit`` before any fuzzy scoring: 100k job ids stay quick.
"""

from __future__ import annotations

from typing import Any

from hpctop.model.objects import JobKey
from hpctop.tui.sanitize import sanitize_display
from hpctop.tui.ticking import Ticking
from hpctop.tui.widgets.gpus import GpuPane
from hpctop.tui.widgets.jobs import JobsTable
from hpctop.tui.widgets.queues import QueuePane


class PaletteTargets(Ticking):
    """Palette searches and commands (see the module doc)."""

    def palette_jobs(self, needle: str, limit: int) -> list[tuple[str, JobKey]]:
        out: list[tuple[str, JobKey]] = []
        for row in self._main(JobsTable, "#jobs").rows:
            if needle in row.id.lower():
                out.append((row.id, row.key))
                if len(out) >= limit:
                    break
        return out

    def palette_nodes(self, needle: str, limit: int) -> list[tuple[str, str]]:
        return [(n.name, n.name) for n in self._gpu_map.nodes if needle in n.name.lower()][:limit]

    def palette_queues(self, needle: str, limit: int) -> list[tuple[str, str]]:
        return [(sanitize_display(q), q) for q in self.result.queues if needle in q.lower()][:limit]

    def jump_to(self, kind: str, target: Any) -> None:
        if kind == "job":
            jobs = self._main(JobsTable, "#jobs")
            jobs.select_key(target)
            jobs.focus()
            self._update_jobs_info()
        elif kind == "node":
            gpus = self._main(GpuPane, "#gpus")
            gpus.display = True
            gpus.select_node(target)
            if gpus.zoom == "cluster":
                gpus.cycle_zoom()
            gpus.focus()
        elif kind == "queue":
            queues = self._main(QueuePane, "#queues")
            queues.display = True
            queues.select(target)
            queues.focus()

    def set_theme(self, name: str) -> None:
        self.theme = name

    def clear_filters(self) -> None:
        self._main(JobsTable, "#jobs").action_clear_filters()
        self._update_jobs_info()
