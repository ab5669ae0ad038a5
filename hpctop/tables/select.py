"""Filters and sorting for the tables, with the vocabulary Slurm users type.

``--state`` takes state names (``PENDING``, ``RUNNING``) or squeue codes (``PD``, ``R``), in any
case, comma-separated, as ``squeue -t`` does; ``PD`` means both PENDING and HELD because squeue
shows both as PD. ``--sort`` takes row keys, comma-separated, ``-`` in front for descending, like
``squeue -S``. Anything unknown is a :class:`~hpctop.errors.UsageError` that lists what is valid,
never a silently empty table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from hpctop.errors import UsageError
from hpctop.model.states import JobState
from hpctop.tables.keys import NODE_STATE_ALIASES, NODE_STATES, QUEUE_STATES
from hpctop.tables.render import Row, lookup

__all__ = [
    "GROUPS",
    "NODE_STATES",
    "NODE_STATE_ALIASES",
    "QUEUE_STATES",
    "parse_choices",
    "parse_job_states",
    "partition_matches",
    "queue_matches",
    "sort_rows",
    "split_list",
]

#: Slurm's long names for states hpctop names differently
_STATE_ALIASES: dict[str, tuple[JobState, ...]] = {
    "CONFIGURING": (JobState.STARTING,),
    "OUT_OF_MEMORY": (JobState.OOM,),
    "CANCELED": (JobState.CANCELLED,),
}
#: state groups: squeue's default shows the active ones
GROUPS: dict[str, tuple[JobState, ...]] = {
    "ALL": tuple(JobState),
    "ACTIVE": tuple(s for s in JobState if s.is_active),
    "FINISHED": tuple(s for s in JobState if s.is_finished),
}


def split_list(text: str | None) -> list[str]:
    """``"a, b,,c"`` → ``["a", "b", "c"]``; ``None`` → ``[]``."""
    if not text:
        return []
    return [part.strip() for part in text.split(",") if part.strip()]


def parse_job_states(text: str | None) -> frozenset[JobState] | None:
    """The job states a ``--state`` value selects; ``None`` when no filter was given."""
    words = split_list(text)
    if not words:
        return None
    chosen: set[JobState] = set()
    for word in words:
        upper = word.upper()
        if upper in JobState.__members__:
            chosen.add(JobState[upper])
        elif upper in _STATE_ALIASES:
            chosen.update(_STATE_ALIASES[upper])
        elif upper in GROUPS:
            chosen.update(GROUPS[upper])
        else:
            by_code = {s for s in JobState if s.code == upper}
            if not by_code:
                names = ", ".join(s.value for s in JobState)
                codes = ", ".join(sorted({s.code for s in JobState}))
                raise UsageError(f"unknown job state {word!r} (states: {names}; codes: {codes}; or ALL)")
            chosen.update(by_code)
    return frozenset(chosen)


def parse_choices(
    text: str | None, valid: Sequence[str], what: str, aliases: dict[str, str] | None = None
) -> frozenset[str] | None:
    """Lower-case words from a fixed vocabulary (node or queue states)."""
    words = split_list(text)
    if not words:
        return None
    chosen: set[str] = set()
    for word in words:
        lower = word.lower()
        lower = (aliases or {}).get(lower, lower)
        if lower == "all":
            chosen.update(valid)
        elif lower in valid:
            chosen.add(lower)
        else:
            raise UsageError(f"unknown {what} {word!r} (choose from {', '.join(valid)}, or all)")
    return frozenset(chosen)


def queue_matches(queue: str | None, wanted: Iterable[str]) -> bool:
    """Whether ``queue`` is a wanted queue, below one (``root.a`` holds ``root.a.b``) or has its leaf name."""
    if queue is None:
        return False
    for want in wanted:
        if queue == want or queue.startswith(want + ".") or queue.rsplit(".", 1)[-1] == want:
            return True
    return False


def partition_matches(partition: str | None, wanted: Iterable[str]) -> bool:
    """Partitions may be comma-joined when a job is eligible for several; any one matches."""
    if not partition:
        return False
    have = set(partition.split(","))
    return any(w in have for w in wanted)


def sort_rows(
    rows: Sequence[Row], spec: str | None, valid: Sequence[str], aliases: Mapping[str, str] | None = None
) -> list[Row]:
    """Sort by ``FIELD[,FIELD]`` (``-FIELD`` descending); empty values go last either way.

    ``aliases`` maps short names to row keys (``age`` → ``weighted.age`` in the prio table).
    """
    fields = split_list(spec)
    out = list(rows)
    keys: list[tuple[str, bool]] = []
    for word in fields:
        desc = word.startswith("-")
        name = word.lstrip("+-")
        name = (aliases or {}).get(name, name)
        if name not in valid:
            raise UsageError(f"unknown sort field {name!r} (choose from {', '.join(valid)})")
        keys.append((name, desc))
    # Stable sorts from the last key to the first give a lexicographic multi-key order.
    for name, desc in reversed(keys):
        present = [r for r in out if lookup(r, name) is not None]
        missing = [r for r in out if lookup(r, name) is None]
        present.sort(key=_sort_key(name), reverse=desc)
        out = present + missing
    return out


def _sort_key(name: str) -> Callable[[Row], Any]:
    def key(row: Row) -> Any:
        value = lookup(row, name)
        if isinstance(value, bool):
            return (0, int(value), "")
        if isinstance(value, int | float):
            return (0, value, "")
        if isinstance(value, list | tuple):
            return (1, len(value), ",".join(map(str, value)))
        return (1, 0, str(value))

    return key
