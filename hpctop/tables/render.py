"""Rows as plain dicts, rendered three ways: aligned text, JSON and CSV.

Every table (jobs, queues, nodes, gpus, prio) first builds a list of ``dict`` rows holding only
JSON values (strings, numbers, booleans, ``None``, lists and one level of nested dicts). Keeping
the data step separate from the rendering step means the JSON a script reads and the text a
person reads can never disagree, and the console can reuse the rows without a terminal.

JSON is ``json.dumps(rows, indent=2, sort_keys=True)`` so that two runs over the same seeded
cluster give the same bytes (scripts diff them, tests compare them). CSV and text flatten nested
dicts into ``parent.child`` columns and lists into comma-joined strings.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hpctop.errors import UsageError

Row = dict[str, Any]
Align = Literal["left", "right"]
FORMATS = ("table", "json", "csv")


@dataclass(frozen=True, slots=True)
class Column:
    """One column of the text table: which row key, its header, alignment and how to show a value."""

    key: str
    header: str
    align: Align = "left"
    show: Callable[[Any, Row], str] | None = None

    def text(self, row: Row) -> str:
        value = lookup(row, self.key)
        if self.show is not None:
            return self.show(value, row)
        return plain(value)


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
    cells = [[col.text(row) for col in columns] for row in rows]
    heads = [col.header for col in columns]
    widths = [max([len(h) if header else 0] + [len(r[i]) for r in cells]) for i, h in enumerate(heads)]
    lines = []
    for values in ([heads] if header else []) + cells:
        parts = []
        for i, (col, value) in enumerate(zip(columns, values, strict=True)):
            last = i == len(columns) - 1
            if col.align == "right":
                parts.append(value.rjust(widths[i]))
            else:
                parts.append(value if last else value.ljust(widths[i]))
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines) + ("\n" if lines else "")


def render_json(rows: Sequence[Row] | Mapping[str, Any]) -> str:
    """Deterministic JSON: two-space indent, sorted keys, a final newline."""
    return json.dumps(rows, indent=2, sort_keys=True, allow_nan=False) + "\n"


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


def render_csv(rows: Sequence[Row], keys: Sequence[str], *, header: bool = True) -> str:
    """CSV with the given (flattened) keys as columns; empty cell for ``None``, lists comma-joined."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if header:
        writer.writerow(keys)
    for row in rows:
        flat = flatten(row)
        writer.writerow([_csv_cell(flat.get(k)) for k in keys])
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
    """Render rows as ``table``, ``json`` or ``csv``."""
    if fmt == "table":
        return render_table(rows, columns, header=header)
    if fmt == "json":
        return render_json(list(rows))
    if fmt == "csv":
        return render_csv(rows, csv_keys(rows, csv_first), header=header)
    raise UsageError(f"unknown output format {fmt!r} (choose from {', '.join(FORMATS)})")
