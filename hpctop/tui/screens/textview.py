"""A read-only text screen: an object's YAML (``y``) or a container's log as it grows (``l``).

Every line comes from the cluster (or the simulator standing in for it), so each goes through
the sanitiser like every other cluster string: no escape sequence, bidi or control character
reaches the terminal, and the body is one Rich ``Text`` (never parsed as markup). A log screen
re-reads its feed every half second and keeps to the end unless the user scrolled up.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from hpctop.tui.sanitize import sanitize_display
from hpctop.tui.widgets.footer import FittedFooter

#: real seconds between two reads of a followed log
FOLLOW_INTERVAL = 0.5
#: longest line drawn (a log line of a megabyte is cut, not drawn)
LINE_CAP = 2000


def text_of(title: str, note: str, lines: list[str]) -> Text:
    """The screen's body: a title line, a dim status line, then the sanitised lines."""
    t = Text()
    t.append(sanitize_display(title, cap=300), style="bold")
    t.append("\n")
    if note:
        t.append(sanitize_display(note, cap=300), style="dim")
        t.append("\n")
    for line in lines:
        t.append(sanitize_display(line, cap=LINE_CAP))
        t.append("\n")
    return t


class TextScreen(Screen[None]):
    """``read()`` gives (note, lines); with ``follow`` it is read again every half second."""

    BINDINGS = [  # noqa: RUF012
        Binding("escape,q", "close", "Close", id="text_close"),
        Binding("end,G", "end", "End", id="text_end", show=False),
    ]

    def __init__(
        self,
        title: str,
        read: Callable[[], tuple[str, list[str]]],
        follow: bool = False,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        self.title_text = title
        self._read = read
        self._follow = follow
        self._on_close = on_close
        self._shown: tuple[str, int, str] | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="text-scroll"):
            yield Static(id="text-body")
        yield FittedFooter()

    def on_mount(self) -> None:
        self.refresh_body()
        if self._follow:
            self.set_interval(FOLLOW_INTERVAL, self.refresh_body, name="follow")

    def refresh_body(self) -> None:
        note, lines = self._read()
        shown = (note, len(lines), lines[-1] if lines else "")
        if shown == self._shown:
            return
        self._shown = shown
        scroll = self.query_one("#text-scroll", VerticalScroll)
        at_end = scroll.scroll_y >= scroll.max_scroll_y - 1
        self.query_one("#text-body", Static).update(text_of(self.title_text, note, lines))
        if self._follow and at_end:
            scroll.scroll_end(animate=False)

    def action_end(self) -> None:
        self.query_one("#text-scroll", VerticalScroll).scroll_end(animate=False)

    def action_close(self) -> None:
        if self._on_close is not None:
            self._on_close()
        self.dismiss(None)
