"""The one output sanitiser for every sink: tables, CSV, stderr, log lines and the console.

Names, messages, labels and queue paths are written by whoever can create a pod, label a node or
answer as an API server. Printed raw, ``ESC ] 52`` writes the user's clipboard, ``ESC ] 0`` retitles
the terminal, a C1 ``0x9b`` opens a CSI on terminals that take 8-bit controls, and a bidi override
makes a line read differently from what it says (the class of kubectl CVE-2021-25743). So every
string that leaves hpctop for a terminal or a file a person reads goes through
:func:`sanitize_display` once, at the sink.

Controls become visible stand-ins (``␛``, ``␇``, ``\\x9b``) rather than vanishing, so a user sees that
something was planted; bidi, zero-width and other invisible format characters become ``<U+202E>``.
The function is idempotent, and its output holds no C0 (except ``\\n``/``\\t`` when asked), DEL or
C1 code point and no lone surrogate. :func:`cell_width` and :func:`fit` cut text to a column in
terminal cells (wide CJK counts two, combining marks none) without Rich, so the one-shot tables
need no console library.

This module imports nothing from hpctop, so every layer can use it; ``hpctop.tui.sanitize``
re-exports it with the console's Rich helpers.
"""

from __future__ import annotations

import unicodedata

#: Longest cell text kept by default (console tables, CSV); the console's detail shows up to DETAIL_CAP.
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


def sanitize_display(s: object, *, cap: int = CELL_CAP, keep_newlines: bool = False) -> str:
    """Return ``s`` (made a ``str``) safe to print: no control, bidi or zero-width character survives raw.

    C0 controls become Control Pictures (``␛`` for ESC, ``␍`` for CR), DEL becomes ``␡``, C1 becomes
    the text ``\\x9b``, bidi/invisible characters become ``<U+202E>``. ``\\n`` and ``\\t`` are kept
    only with ``keep_newlines`` (multi-line detail panes). Text longer than ``cap`` is cut and ends
    in ``…``. Markup characters are left alone: the console draws the result as data.
    Idempotent: the stand-ins are printable characters that map to themselves.
    """
    text = s if isinstance(s, str) else str(s)
    if not (text.isascii() and text.isprintable()):
        text = "".join(_stand_in(ord(ch), keep_newlines) if _needs_work(ord(ch)) else ch for ch in text)
    if len(text) > cap:
        text = text[: max(cap - 1, 0)] + ELLIPSIS
    return text


def has_flagged(s: str) -> bool:
    """Whether sanitising changes something a confirmation dialog should point out."""
    return any(_needs_work(ord(ch)) for ch in s)


def sanitize_line(s: object, *, cap: int = CELL_CAP) -> str:
    """One line for stderr or a log: sanitised, whitespace runs (newlines included) made one space."""
    text = s if isinstance(s, str) else str(s)
    return sanitize_display(" ".join(text[: cap * 2].split()), cap=cap)


def _char_width(ch: str) -> int:
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def cell_width(text: str) -> int:
    """Terminal cells ``text`` takes: wide (CJK, most emoji) characters two, combining marks none."""
    if text.isascii():
        return len(text)
    return sum(_char_width(ch) for ch in text)


def fit(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` terminal cells, ending in ``…`` when it was cut (no padding)."""
    if width <= 0:
        return ""
    if text.isascii():
        return text if len(text) <= width else text[: width - 1] + ELLIPSIS
    if len(text) <= width and cell_width(text) <= width:
        return text
    # A cell takes at most two code points' room: look at a prefix, not a million-character name.
    head = text[: width * 4 + 8]
    if cell_width(head) <= width and len(head) == len(text):
        return text
    out: list[str] = []
    used = 0
    for ch in head:
        w = _char_width(ch)
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + ELLIPSIS


__all__ = [
    "CELL_CAP",
    "DETAIL_CAP",
    "ELLIPSIS",
    "cell_width",
    "fit",
    "has_flagged",
    "sanitize_display",
    "sanitize_line",
]
