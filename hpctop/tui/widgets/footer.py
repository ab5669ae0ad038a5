"""The key-hint footer, fitted to the terminal: whole hints only, the essential ones kept.

Why: Textual's ``Footer`` lays every shown binding out in one row and lets the terminal's edge
cut the rest; at 80 columns the jobs pane's hints ended in "z ▏" (half a hint) and the action keys
were not there at all, with nothing to say so. This footer measures the hints (the same text and
padding ``FooterKey`` renders), goes compact (less padding) when they do not fit, and then leaves
out whole hints from the end of the row, never ``Quit`` or ``Help`` (the help screen lists every
key). When a hint is left out, ``Help`` reads "All keys". At 200 columns every hint fits and is
shown as before.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

#: the actions a footer always keeps: the way out, and the way to every other key
ESSENTIAL_ACTIONS = frozenset({"quit", "app.quit", "help", "app.help"})
#: what ``Help`` reads when the footer had to leave hints out
MORE_KEYS = "All keys"


def hint_width(key: FooterKey, *, compact: bool) -> int:
    """Columns ``key`` takes in the row: its text, the padding ``FooterKey`` gives it and its margin."""
    text = cell_len(key.key_display) + (cell_len(key.description) + 1 if key.description else 0)
    return text + (1 if compact else 2)


def _fitted(keys: list[FooterKey], width: int, *, compact: bool) -> list[FooterKey]:
    """The hints of ``keys`` that fit in ``width`` columns, dropped from the end, essentials kept."""
    kept = list(keys)
    total = sum(hint_width(k, compact=compact) for k in kept)
    for key in reversed(keys):
        if total <= width:
            break
        if key.action in ESSENTIAL_ACTIONS:
            continue
        kept.remove(key)
        total -= hint_width(key, compact=compact)
    return kept


def _room(width: int, palette: list[FooterKey], *, compact: bool) -> int:
    """Columns left for the hints beside the command-palette hint docked at the right edge (its
    left border, and outside compact mode its wider padding)."""
    return width - sum(hint_width(p, compact=compact) + (0 if compact else 2) for p in palette)


class FittedFooter(Footer):
    """A ``Footer`` whose row of hints fits the screen's width (see the module's docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._laid_out_for = 0
        #: how many hints the last layout left out (tests and the screenshots read it)
        self.left_out = 0

    def compose(self) -> ComposeResult:
        widgets = list(super().compose())
        width = self.app.size.width
        self._laid_out_for = width
        hints = [w for w in widgets if isinstance(w, FooterKey) and not w.has_class("-command-palette")]
        palette = [w for w in widgets if isinstance(w, FooterKey) and w.has_class("-command-palette")]
        compact = sum(hint_width(k, compact=False) for k in hints) > _room(width, palette, compact=False)
        self.set_reactive(Footer.compact, compact)
        self.set_class(compact, "-compact")
        room = _room(width, palette, compact=compact)
        kept = _fitted(hints, room, compact=compact)
        if len(kept) < len(hints):
            for key in kept:
                if key.action in ESSENTIAL_ACTIONS and key.description == "Help":
                    key.description = MORE_KEYS
            kept = _fitted(kept, room, compact=compact)  # the longer label must fit too
        self.left_out = len(hints) - len(kept)
        dropped = {id(k) for k in hints} - {id(k) for k in kept}
        yield from _without(widgets, dropped)

    def on_resize(self, event: events.Resize) -> None:
        if self.app.size.width != self._laid_out_for and self._bindings_ready:
            self.call_after_refresh(self.recompose)


def _without(widgets: Iterable[Widget], dropped: set[int]) -> Iterable[Widget]:
    return (w for w in widgets if id(w) not in dropped)
