"""The one gate through which cluster text enters the console (RELIABILITY.md §3).

Names, messages, annotations and queue paths are written by other people. Textual and Rich parse a
``str`` as markup in many places (``Static``, ``notify``, titles, the command palette's help) and
pass control characters to the terminal untouched, so a pod named ``[@click=app.quit]x`` could act,
``job-[/oops]`` could crash the app, and an event message holding ``ESC ] 52`` could write the
user's clipboard. Escaping markup is not enough (Textual's tokenizer opens tags Rich's escaper does
not close) and would have to be remembered at every call site.

So: every cluster string goes through :func:`sanitize_display` once, where row view-models are
built, and is then only ever drawn as *data* (Rich ``Text``, Textual ``Content``, ``Segment`` in a
``Strip``), never as a markup string. Controls become visible stand-ins (``␛``, ``\\x9b``) rather
than vanishing, so a user sees that something was planted; bidi and zero-width characters are
flagged as ``<U+202E>`` so a confirmation dialog cannot be made to read differently from what it
acts on. The function is idempotent and its output holds no C0 (except ``\\n``/``\\t`` when asked),
DEL or C1 code point; hypothesis tests in ``tests/test_sanitize*.py`` hold it to that.
"""

from __future__ import annotations

from rich.cells import cell_len, set_cell_size
from rich.text import Text

# The rules live in hpctop.sanitize, shared with the tables, CSV and stderr (one sanitiser for
# every sink); this module adds the console's Rich helpers.
from hpctop.sanitize import CELL_CAP, DETAIL_CAP, ELLIPSIS, has_flagged, sanitize_display

__all__ = ["CELL_CAP", "DETAIL_CAP", "ELLIPSIS", "fit_cells", "has_flagged", "safe_text", "sanitize_display"]


def safe_text(s: object, style: str = "", *, cap: int = CELL_CAP, keep_newlines: bool = False) -> Text:
    """A Rich ``Text`` holding ``s`` literally (sanitised; never parsed as markup)."""
    return Text(sanitize_display(str(s), cap=cap, keep_newlines=keep_newlines), style=style)


def fit_cells(text: str, width: int, right: bool = False) -> str:
    """``text`` cut (with ``…``) or padded to exactly ``width`` terminal cells.

    ``len`` counts code points, not cells: a CJK or emoji name is twice as wide as its length and a
    combining mark takes no cell, so padding by ``len`` shifts every column after such a name (T5).
    ASCII keeps the cheap path; the rest goes through Rich's cell widths, the ones the strip uses.
    """
    if width <= 0:
        return ""
    if text.isascii():
        if len(text) > width:
            text = text[: width - 1] + ELLIPSIS
        return text.rjust(width) if right else text.ljust(width)
    cells = cell_len(text)
    if cells > width:
        return set_cell_size(text, width - 1) + ELLIPSIS
    pad = " " * (width - cells)
    return pad + text if right else text + pad
