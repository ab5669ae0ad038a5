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

import unicodedata

from rich.cells import cell_len, set_cell_size
from rich.text import Text

#: Longest cell text kept in tables; the detail pane shows more (still sanitised) up to DETAIL_CAP.
CELL_CAP = 4096
DETAIL_CAP = 65536
ELLIPSIS = "…"

#: Bidi embeddings/overrides/isolates and marks, zero-width and invisible formatting characters.
_INVISIBLE = frozenset(
    {0x061C, 0x180E, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2028, 0x2029, 0x2060, 0x2061}
    | {0x2062, 0x2063, 0x2064, 0xFEFF, 0xFFF9, 0xFFFA, 0xFFFB}
    | set(range(0x202A, 0x202F))  # LRE RLE PDF LRO RLO
    | set(range(0x2066, 0x2070))  # LRI RLI FSI PDI and deprecated format controls
)


def _stand_in(code: int, keep_newlines: bool) -> str:
    if code == 0x1B:
        return "␛"
    if keep_newlines and code in (0x0A, 0x09):
        return chr(code)
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␀ ␁ ... ␟ (␊ for \n, ␍ for \r)
    if code == 0x7F:
        return "␡"
    if 0x80 <= code <= 0x9F:
        return f"\\x{code:02x}"
    return f"<U+{code:04X}>"


def _needs_work(code: int) -> bool:
    if code < 0x20 or 0x7F <= code <= 0x9F or code in _INVISIBLE:
        return True
    # Other format characters (tags, interlinear annotation), line/paragraph separators and lone
    # surrogates (which cannot even be encoded for the terminal).
    return code > 0xFF and unicodedata.category(chr(code)) in ("Cf", "Zl", "Zp", "Cs")


def sanitize_display(s: str, *, cap: int = CELL_CAP, keep_newlines: bool = False) -> str:
    """Return ``s`` made safe to draw: no control, bidi or zero-width character survives raw.

    C0 controls become Control Pictures (``␛`` for ESC, ``␍`` for CR), DEL becomes ``␡``, C1 becomes
    the text ``\\x9b``, bidi/invisible characters become ``<U+202E>``. ``\\n`` and ``\\t`` are kept
    only with ``keep_newlines`` (multi-line detail panes). Text longer than ``cap`` is cut and ends
    in ``…``. Markup characters are left alone: the result is drawn as data, never parsed.
    Idempotent: the stand-ins are printable characters that map to themselves.
    """
    if not isinstance(s, str):
        s = str(s)
    if not (s.isascii() and s.isprintable()):
        out: list[str] = []
        for ch in s:
            code = ord(ch)
            out.append(_stand_in(code, keep_newlines) if _needs_work(code) else ch)
        s = "".join(out)
    if len(s) > cap:
        s = s[: max(cap - 1, 0)] + ELLIPSIS
    return s


def safe_text(s: object, style: str = "", *, cap: int = CELL_CAP, keep_newlines: bool = False) -> Text:
    """A Rich ``Text`` holding ``s`` literally (sanitised; never parsed as markup)."""
    return Text(sanitize_display(str(s), cap=cap, keep_newlines=keep_newlines), style=style)


def has_flagged(s: str) -> bool:
    """Whether sanitising changed something a confirmation dialog should point out."""
    return any(_needs_work(ord(ch)) for ch in s)


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
