"""Watch events after decoding: what the store applies.

A ``WatchEvent`` mirrors the Kubernetes watch protocol (ADDED, MODIFIED, DELETED, BOOKMARK) plus
hpctop's own ``SYNC``/``REPLACE`` markers for a relist, so that a source can say "this is the
whole set of this kind now" and the store can drop what vanished in one step.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from hpctop.model.resources import fast_frozen_init


class EventType(StrEnum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    BOOKMARK = "BOOKMARK"


@fast_frozen_init  # one per watch event (~1 us less than the frozen __init__: P3)
@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: EventType
    kind: str
    obj: Any  # Pod | Node | Workload | PriorityClass | None for bookmarks
    resource_version: str = ""
