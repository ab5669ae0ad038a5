"""The queue tree (``hpctop queues``, like ``sshare``): quotas, usage and fair share per queue.

Rows come from the core's :class:`~hpctop.scheduling.types.QueueStatus` map, which is already
in tree order (depth first, children sorted), so the text table can show the tree by indenting
names, as ``sshare`` indents accounts, while JSON carries the full dotted ``path`` and ``depth``.
GPU amounts are numbers of GPUs (fractions allowed); ``max_gpus`` is ``null`` for a queue without
a limit. ``fairshare`` is the classic factor 2^(-U/S) (1 = unused, 0.5 = using exactly its
share, towards 0 = far over it).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from hpctop.model.resources import gpu_equivalent_milli
from hpctop.scheduling.types import QueueStatus, ScheduleResult
from hpctop.tables.fmt import from_milli
from hpctop.tables.keys import QUEUE_CSV_KEYS as CSV_KEYS
from hpctop.tables.keys import QUEUE_SORT_KEYS as SORT_KEYS
from hpctop.tables.render import Column, Row, number
from hpctop.tables.select import queue_matches

__all__ = ["COLUMNS", "CSV_KEYS", "SORT_KEYS", "queue_row", "queue_rows"]


def queue_row(status: QueueStatus) -> Row:
    """One queue as a dict of JSON values."""
    return {
        "path": status.path,
        "name": status.path.rsplit(".", 1)[-1],
        "parent": status.parent,
        "depth": status.depth,
        "leaf": status.is_leaf,
        "state": status.state.value,
        # MIG slices asked for by profile count as the share of a GPU each is
        "guaranteed_gpus": from_milli(gpu_equivalent_milli(status.guaranteed)),
        "used_gpus": from_milli(gpu_equivalent_milli(status.used)),
        "max_gpus": from_milli(gpu_equivalent_milli(status.max)) if status.max is not None else None,
        "pending_gpus": from_milli(gpu_equivalent_milli(status.pending)),
        "used_cpus": from_milli(status.used.cpu),
        "used_memory": status.used.memory,
        "running_jobs": status.running_jobs,
        "pending_jobs": status.pending_jobs,
        "fairshare": round(status.fairshare_factor, 6),
        "dominant_share": round(status.dominant_share, 6),
        "dominant_resource": status.dominant_resource or None,
        "cluster_share": round(status.cluster_share, 6),
        "normalized_share": round(status.normalized_share, 6),
        "borrowing": status.borrowing,
    }


def queue_rows(
    result: ScheduleResult, *, queues: Iterable[str] = (), states: Collection[str] | None = None
) -> list[Row]:
    """Rows in tree order; ``queues`` keeps those queues and their subtrees, ``states`` open/closed."""
    wanted = list(queues)
    rows = []
    for status in result.queues.values():
        if wanted and not queue_matches(status.path, wanted):
            continue
        if states is not None and status.state.value not in states:
            continue
        rows.append(queue_row(status))
    return rows


def _tree_name(_: Any, row: Row) -> str:
    return "  " * int(row["depth"]) + str(row["name"])


def _amount(value: Any, _: Row) -> str:
    return "-" if value is None else number(float(value))


def _share(value: Any, _: Row) -> str:
    return f"{float(value):.6f}"


COLUMNS = (
    Column("path", "QUEUE", "left", _tree_name),
    Column("state", "STATE"),
    Column("guaranteed_gpus", "GUAR_GPU", "right", _amount),
    Column("used_gpus", "USED_GPU", "right", _amount),
    Column("max_gpus", "MAX_GPU", "right", _amount),
    Column("pending_gpus", "PEND_GPU", "right", _amount),
    Column("running_jobs", "RUNNING", "right"),
    Column("pending_jobs", "PENDING", "right"),
    Column("normalized_share", "NORMSHARES", "right", _share),
    Column("cluster_share", "EFFECTVUSAGE", "right", _share),
    Column("fairshare", "FAIRSHARE", "right", _share),
    Column("borrowing", "BORROW"),
)
