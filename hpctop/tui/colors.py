"""Theme variables turned into Rich styles for the panes that draw their own lines.

The Line-API panes (jobs, GPUs, queues) build ``Segment``s, not CSS, so they need concrete colours.
They ask here, by meaning (``job-pending``), and cache the answer per theme: a theme switch changes
the name, which invalidates the cache, and the panes repaint.
"""

from __future__ import annotations

from typing import Protocol

from rich.style import Style
from textual.color import Color, ColorParseError

from hpctop.model.states import JobState
from hpctop.tui.themes import DEFAULT_VARIABLES


class _HasTheme(Protocol):
    @property
    def theme(self) -> str: ...

    @property
    def theme_variables(self) -> dict[str, str]: ...


class Palette:
    """Styles by semantic name for the current theme of ``app``."""

    def __init__(self) -> None:
        self._theme: str | None = None
        self._cache: dict[tuple[str, str, bool, bool], Style] = {}

    def style(
        self, app: _HasTheme, fg: str = "", bg: str = "", bold: bool = False, reverse: bool = False
    ) -> Style:
        if app.theme != self._theme:
            self._theme = app.theme
            self._cache.clear()
        key = (fg, bg, bold, reverse)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = Style(
                color=_colour(app, fg), bgcolor=_colour(app, bg), bold=bold or None, reverse=reverse or None
            )
        return hit


def _colour(app: _HasTheme, name: str) -> str | None:
    if not name:
        return None
    raw = app.theme_variables.get(name) or DEFAULT_VARIABLES.get(name)
    if raw is None:
        return None
    try:
        return Color.parse(raw).hex6
    except ColorParseError:
        return None


def state_var(state: JobState) -> str:
    if state == JobState.HELD:
        return "job-held"
    if state.is_pending:
        return "job-pending"
    if state.is_active:
        return "job-running"
    if state in (JobState.FAILED, JobState.OOM, JobState.NODE_FAIL, JobState.TIMEOUT):
        return "job-failed"
    return "job-done"


def queue_var(queue: str | None, queues: list[str]) -> str:
    """A stable colour slot for a queue (its position among the known queues)."""
    if not queue:
        return "queue-color-7"
    try:
        i = queues.index(queue)
    except ValueError:
        i = sum(map(ord, queue))
    return f"queue-color-{i % 8}"
