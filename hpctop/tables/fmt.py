"""Value formats shared by the tables: times, durations, GPU amounts and Slurm host lists.

One time format everywhere in machine output: ISO-8601 in UTC with a ``Z`` and whole seconds
(``2026-01-01T01:00:00Z``), or ``null``. Durations in JSON are whole seconds; in text they are
Slurm's ``[D-]HH:MM:SS`` (``TIME`` column of squeue) so users coming from Slurm read them at a
glance. Node lists are compressed the way Slurm prints them (``gpu-a[001-004,007]``) because a
64-node job otherwise takes a screen of its own.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from functools import lru_cache

#: t=0 of the simulator's virtual clock, 2026-01-01T00:00:00Z
EPOCH = 1767225600.0

_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def iso(ts: float | None) -> str | None:
    """Unix seconds as ``YYYY-MM-DDTHH:MM:SSZ`` (UTC, whole seconds); ``None`` stays ``None``."""
    if ts is None:
        return None
    return _iso_second(int(ts // 1))


#: the seconds of 1000-01-01 and 10000-01-01 UTC: within them ``%04d`` writes the year as ``%Y`` does
_FOUR_DIGIT_YEARS = range(-30_610_224_000, 253_402_300_800)


@lru_cache(maxsize=8192)
def _iso_second(second: int) -> str:
    """One whole second's text, kept: the pods of a job share their creation and start seconds,
    and ``datetime.strftime`` was a tenth of a ``jobs -o json`` row (P8); ``time.gmtime`` and
    an f-string write the same text in half its time."""
    if second in _FOUR_DIGIT_YEARS:
        t = time.gmtime(second)
        return f"{t[0]:04d}-{t[1]:02d}-{t[2]:02d}T{t[3]:02d}:{t[4]:02d}:{t[5]:02d}Z"
    return datetime.fromtimestamp(second, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def duration(seconds: float | None) -> str:
    """Seconds as squeue prints elapsed time: ``0:05``, ``1:02:03``, ``2-03:04:05``; ``-`` for none."""
    if seconds is None:
        return "-"
    total = max(int(seconds), 0)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def from_milli(milli: int) -> int | float:
    """Milli-units (milli-GPU, millicores) as a number: an ``int`` when whole (``8``), else ``0.22``."""
    if milli % 1000 == 0:
        return milli // 1000
    return round(milli / 1000, 3)


def hostlist(names: Iterable[str]) -> str:
    """Compress node names like Slurm: ``n[1-3,5]``; names without a number are listed as they are.

    Runs only join names with the same prefix and the same digit width, so ``n09,n10`` becomes
    ``n[09-10]`` and ``n9,n10`` stays two groups (what Slurm prints round-trips).
    """
    groups: dict[tuple[str, int], list[int]] = {}
    order: list[tuple[str, int] | str] = []
    for name in sorted(set(names)):
        match = _NUMBERED.match(name)
        if match is None:
            order.append(name)
            continue
        key = (match[1], len(match[2]))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(match[2]))
    parts: list[str] = []
    for item in order:
        if isinstance(item, str):
            parts.append(item)
            continue
        prefix, width = item
        numbers = sorted(groups[item])
        if len(numbers) == 1:
            parts.append(f"{prefix}{numbers[0]:0{width}d}")
            continue
        ranges: list[str] = []
        start = prev = numbers[0]
        for n in [*numbers[1:], None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            ranges.append(f"{start:0{width}d}" if start == prev else f"{start:0{width}d}-{prev:0{width}d}")
            if n is not None:
                start = prev = n
        parts.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(parts)
