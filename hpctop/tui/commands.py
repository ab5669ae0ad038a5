"""The command palette (ctrl+p): jump to a job, node or queue; switch theme; toggle panes.

Hits are displayed as Rich ``Text`` built from sanitised strings: Textual's fuzzy ``highlight``
parses its candidate as markup, so it is never called on cluster names; matching uses the
matcher's score only. Searching 100k job ids stays quick by filtering with a plain substring test
first and scoring at most a few hundred candidates.

The provider talks to the app through :class:`PaletteHost` (implemented by
:class:`hpctop.tui.palette.PaletteTargets`), so this module never imports the app: the app
imports it, for ``COMMANDS``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Protocol, cast

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider

from hpctop.model.objects import JobKey

MAX_CANDIDATES = 300


class PaletteHost(Protocol):
    """What the palette needs of the app: its themes, its commands, its searches."""

    @property
    def hpctop_themes(self) -> Mapping[str, Any]: ...

    def set_theme(self, name: str) -> None: ...

    def toggle_pane(self, name: str) -> None: ...

    def action_zoom(self) -> None: ...

    def action_help(self) -> None: ...

    def clear_filters(self) -> None: ...

    def action_what_may_i_do(self) -> None: ...

    def palette_jobs(self, needle: str, limit: int) -> list[tuple[str, JobKey]]: ...

    def palette_nodes(self, needle: str, limit: int) -> list[tuple[str, str]]: ...

    def palette_queues(self, needle: str, limit: int) -> list[tuple[str, str]]: ...

    def jump_to(self, kind: str, target: Any) -> None: ...


class HpctopCommands(Provider):
    def _app(self) -> PaletteHost:
        return cast(PaletteHost, self.app)

    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        app = self._app()
        out: list[tuple[str, Callable[[], object], str]] = []
        for name in app.hpctop_themes:
            out.append((f"theme: {name}", partial(app.set_theme, name), "Switch the colour theme"))
        for pane in ("gpus", "queues", "charts"):
            out.append((f"toggle pane: {pane}", partial(app.toggle_pane, pane), "Show or hide this pane"))
        out.append(("zoom GPU pane", app.action_zoom, "cluster → partition → node"))
        out.append(("help: key bindings", app.action_help, "Every key and what it does"))
        out.append(("clear job filters", app.clear_filters, "Show every job again"))
        out.append(("What may I do?", app.action_what_may_i_do, "Which actions this identity may use here"))
        return out

    async def discover(self) -> Hits:
        for label, callback, help_text in self._commands():
            yield DiscoveryHit(Text(label), callback, text=label, help=help_text)

    async def search(self, query: str) -> Hits:
        app = self._app()
        matcher = self.matcher(query)
        for label, callback, help_text in self._commands():
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, Text(label), callback, text=label, help=help_text)
        needle = query.lower().strip()
        if not needle:
            return
        for kind, items in (
            ("job", app.palette_jobs(needle, MAX_CANDIDATES)),
            ("node", app.palette_nodes(needle, MAX_CANDIDATES)),
            ("queue", app.palette_queues(needle, MAX_CANDIDATES)),
        ):
            for shown, target in items:
                label = f"{kind}: {shown}"
                score = max(matcher.match(shown), 0.01)
                yield Hit(
                    score,
                    Text(label),
                    partial(app.jump_to, kind, target),
                    text=label,
                    help=f"Go to this {kind}",
                )
