"""Rows as plain dicts, rendered three ways: aligned text, JSON and CSV.

Every table (jobs, queues, nodes, gpus, prio) first builds a list of ``dict`` rows holding only
JSON values (strings, numbers, booleans, ``None``, lists and one level of nested dicts). Keeping
the data step separate from the rendering step means the JSON a script reads and the text a
person reads can never disagree, and the console can reuse the rows without a terminal.

JSON is written by orjson (indent 2, sorted keys) so that two runs over the same seeded cluster
give the same bytes (scripts diff them, tests compare them); non-ASCII is escaped as ``\\uXXXX``,
as ``json.dumps`` did, so the bytes are unchanged and no bidi or C1 character reaches a terminal
raw from a ``-o json`` either. CSV and text flatten nested dicts into ``parent.child`` columns and
lists into comma-joined strings.

Cluster text is hostile until proven otherwise: every text cell and every CSV cell goes through
:func:`hpctop.sanitize.sanitize_display` (escape sequences, controls, bidi and zero-width
characters become visible stand-ins), and a text cell is cut to its column's width in terminal
cells with ``…`` (a million-character pod name gives a bounded line; JSON keeps the full value).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from hpctop.errors import UsageError
from hpctop.sanitize import CELL_CAP, cell_width, fit, sanitize_display

Row = dict[str, Any]
Align = Literal["left", "right"]
FORMATS = ("table", "json", "csv", "tsv")
#: widest a text-table cell may be (terminal cells) unless its column says otherwise
CELL_WIDTH = 48


@dataclass(frozen=True, slots=True)
class Column:
    """One column of the text table: which row key, its header, alignment and how to show a value."""

    key: str
    header: str
    align: Align = "left"
    show: Callable[[Any, Row], str] | None = None
    #: widest the cell may be in terminal cells (longer text is cut with ``…``)
    width: int = CELL_WIDTH

    def text(self, row: Row) -> str:
        """The cell as printed: shown, sanitised and cut to the column."""
        value = row[self.key] if self.key in row else lookup(row, self.key)
        shown = self.show(value, row) if self.show is not None else plain(value)
        if len(shown) <= self.width and shown.isascii() and shown.isprintable():
            # the common cell (issue 16, P8): printable ASCII that fits is its own sanitised,
            # fitted self (``sanitize_display`` and ``fit`` both return it unchanged)
            return shown
        # Cut before sanitising too: a million-character name must not cost a million-character copy.
        return fit(sanitize_display(shown[: self.width * 4 + 8], cap=self.width * 4 + 8), self.width)


def lookup(row: Mapping[str, Any], key: str) -> Any:
    """A row's value by key, where ``a.b`` reaches into a nested dict."""
    if key in row:
        return row[key]
    head, _, rest = key.partition(".")
    inner = row.get(head)
    if rest and isinstance(inner, Mapping):
        return lookup(inner, rest)
    return None


def plain(value: Any) -> str:
    """A value as text: ``-`` for nothing, lists comma-joined, floats without trailing zeros."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return number(value)
    if isinstance(value, list | tuple):
        return ",".join(plain(v) for v in value) if value else "-"
    return str(value)


def number(value: float, digits: int = 2) -> str:
    """``8`` for a whole number, ``0.22`` otherwise (at most ``digits`` decimals)."""
    if value == int(value):
        return str(int(value))
    text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


def flatten(row: Mapping[str, Any]) -> Row:
    """Nested dicts become ``parent.child`` keys (for CSV); other values are kept."""
    out: Row = {}
    for key, value in row.items():
        if isinstance(value, Mapping):
            for sub, inner in flatten(value).items():
                out[f"{key}.{sub}"] = inner
        else:
            out[key] = value
    return out


def render_table(rows: Sequence[Row], columns: Sequence[Column], *, header: bool = True) -> str:
    """Aligned text with two spaces between columns and no trailing spaces (like squeue)."""
    # column by column (issue 16, P8: a 10k-pod table is 130k cells): each column's cells, their
    # widths in terminal cells (``len`` where the whole column is ASCII) and its widest
    heads = [col.header for col in columns]
    texts = [[col.text(row) for row in rows] for col in columns]
    sizes: list[list[int]] = []
    widths: list[int] = []
    for head, column_cells in zip(heads, texts, strict=True):
        if all(v.isascii() for v in column_cells):
            column_sizes = [len(v) for v in column_cells]
        else:
            column_sizes = [cell_width(v) for v in column_cells]
        sizes.append(column_sizes)
        widths.append(max([len(head) if header else 0, *column_sizes]))
    lines = []
    if header:
        lines.append(_line(heads, [len(h) for h in heads], columns, widths))
    for index in range(len(rows)):
        lines.append(_line([c[index] for c in texts], [s[index] for s in sizes], columns, widths))
    return "\n".join(lines) + ("\n" if lines else "")


def _line(
    values: Sequence[str], cell_sizes: Sequence[int], columns: Sequence[Column], widths: Sequence[int]
) -> str:
    """One aligned line: two spaces between columns, right-aligned cells padded before, no trailing spaces."""
    parts = []
    last = len(columns) - 1
    for i, col in enumerate(columns):
        value = values[i]
        pad = " " * (widths[i] - cell_sizes[i])
        if col.align == "right":
            parts.append(pad + value)
        else:
            parts.append(value if i == last else value + pad)
    return "  ".join(parts).rstrip()


_JSON_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
_NON_ASCII = re.compile("[^\x00-\x7e]")  # DEL (0x7f) too: a control character


def _escape_non_ascii(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as json.dumps(ensure_ascii=True) writes it
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _tiny_floats_as_python(value: Any) -> Any:
    """``value`` with each float below 1e-4 (not 0) as a Fragment of Python's ``repr``.

    orjson and ``json.dumps`` agree on every float but those: ``5.5e-05`` is ``0.000055`` in orjson.
    Rounded factors and shares (prio, queues) are such floats, and the bytes must not change.
    Containers without one are returned as they are (no copy).
    """
    kind = type(value)
    if kind is float:
        if not math.isfinite(value):  # json.dumps(allow_nan=False) refused these; orjson writes null
            raise ValueError(f"{value!r} is not a JSON number")
        return orjson.Fragment(repr(value)) if value and -1e-4 < value < 1e-4 else value
    if kind is dict:
        changed = None
        for key, inner in value.items():
            new = _tiny_floats_as_python(inner)
            if new is not inner:
                if changed is None:
                    changed = dict(value)
                changed[key] = new
        return value if changed is None else changed
    if kind is list or kind is tuple:
        items = [_tiny_floats_as_python(inner) for inner in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def render_json(rows: Sequence[Row] | Mapping[str, Any]) -> str:
    """Deterministic JSON: two-space indent, sorted keys, ASCII only, a final newline.

    orjson writes it (issue 16: ``json.dumps`` was a sixth of a 100k-pod ``jobs -o json``); the
    bytes are those ``json.dumps(indent=2, sort_keys=True)`` wrote, because non-ASCII (only ever
    inside strings) is escaped the same way and tiny floats keep Python's notation. A string
    orjson refuses (a lone surrogate) falls back to ``json.dumps``, which escapes it.
    """
    try:
        data = orjson.dumps(_tiny_floats_as_python(rows), option=_JSON_OPTIONS)
    except orjson.JSONEncodeError:
        return json.dumps(rows, indent=2, sort_keys=True, allow_nan=False) + "\n"
    text = data.decode()
    if not data.isascii() or b"\x7f" in data:
        text = _NON_ASCII.sub(_escape_non_ascii, text)
    return text + "\n"


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(_csv_cell(v) for v in value)
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    return str(value)


def render_csv(rows: Sequence[Row], keys: Sequence[str], *, header: bool = True, delimiter: str = ",") -> str:
    """CSV (or TSV) with the given (flattened) keys as columns; empty cell for ``None``, lists comma-joined.

    Each cell is sanitised and capped at :data:`~hpctop.sanitize.CELL_CAP` characters (JSON holds
    the full value): a spreadsheet or ``column -t`` on a terminal must not replay escape sequences.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n", delimiter=delimiter)
    if header:
        writer.writerow([sanitize_display(k) for k in keys])
    for row in rows:
        flat = flatten(row)
        writer.writerow([sanitize_display(_csv_cell(flat.get(k)), cap=CELL_CAP) for k in keys])
    return buffer.getvalue()


def csv_keys(rows: Sequence[Row], preferred: Sequence[str]) -> list[str]:
    """The CSV columns: ``preferred`` first, then every other flattened key, sorted."""
    seen = set(preferred)
    rest = sorted({k for row in rows for k in flatten(row)} - seen)
    return [*preferred, *rest]


def render(
    rows: Sequence[Row],
    columns: Sequence[Column],
    fmt: str,
    *,
    header: bool = True,
    csv_first: Sequence[str] = (),
) -> str:
    """Render rows as ``table``, ``json``, ``csv`` or ``tsv``."""
    if fmt == "table":
        return render_table(rows, columns, header=header)
    if fmt == "json":
        return render_json(list(rows))
    if fmt == "csv":
        return render_csv(rows, csv_keys(rows, csv_first), header=header)
    if fmt == "tsv":
        return render_csv(rows, csv_keys(rows, csv_first), header=header, delimiter="\t")
    raise UsageError(f"unknown output format {fmt!r} (choose from {', '.join(FORMATS)})")
