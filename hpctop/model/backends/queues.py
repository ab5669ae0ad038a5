"""Every scheduler's queues in one tree, and that tree as the core's policy (SCHEDULERS.md §1.3).

Why: the scheduling core orders and limits jobs through one queue tree of dotted paths under
``root`` (:class:`hpctop.model.policy.QueueSpec`). On a live cluster that tree already exists,
in the scheduler's own objects: Kueue Cohorts → ClusterQueues (→ LocalQueues), Volcano Queues,
YuniKorn's REST queue tree. :func:`hpctop.backends.registry.build_queues` folds them (each
backend's ``fold_queues``) into :class:`QueueInfo` records and
:func:`policy_from_snapshot` turns those into ``QueueSpec``s, so the core's fair-share, limits and
"QueueHeld" reasons follow what the cluster says instead of a config file.

Paths (the choice the issue asked to document) are each backend's, in its ``read`` module
(Kueue: ``root.<cohort>...<clusterqueue>``, LocalQueues as kind ``local`` for display only;
Volcano: the ``spec.parent`` chain; YuniKorn: its own dotted paths, unchanged). This module holds
what they share: the index, the escaping and the policy.

Names containing dots (legal for Kueue objects) are written with ``_dot_``, YuniKorn's rule, so a
path always splits back into its parts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from hpctop.model.objects import QueueInfo
from hpctop.model.policy import Policy, QueueSpec, QueueState
from hpctop.model.resources import Resources

#: neutral queue states under which pending work waits (QueueHeld)
CLOSED_STATES = frozenset({"Closed", "Draining", "Held"})


def escape(name: str) -> str:
    """A backend object name as one path component."""
    return name.replace(".", "_dot_")


_NO_LOOKUP: Mapping[Any, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class QueueIndex:
    """The neutral queues plus the lookups that join a job's evidence to them.

    ``lookups``: by name (each backend's own, e.g. ``kueue.clusterqueue``: ClusterQueue name →
    path), what the backend's ``fold_queues`` hook returned, read back by its ``place_in_queue``.
    """

    queues: Mapping[str, QueueInfo] = field(default_factory=dict)
    lookups: Mapping[str, Mapping[Any, str]] = field(default_factory=dict)

    def lookup(self, name: str) -> Mapping[Any, str]:
        """One backend lookup table (empty when that backend has no queues here)."""
        return self.lookups.get(name, _NO_LOOKUP)


def positive(r: Resources) -> Resources:
    """``r`` with every negative cell clipped to zero (what is borrowed, never a debt)."""
    return Resources(
        max(r.cpu, 0), max(r.memory, 0), max(r.gpu, 0), tuple((k, v) for k, v in r.extended if v > 0)
    )


def policy_from_snapshot(snapshot: object, base: Policy) -> Policy:
    """``base`` with the queues the cluster's schedulers define (``snapshot.queues``).

    Observed queues replace the base's queues of the same path and keep the others; LocalQueues
    are left out (no quota). A queue that is Closed, Draining or Held becomes ``CLOSED`` so the
    core reports its pending jobs as ``QueueHeld``. With no observed queues, ``base`` comes back
    unchanged (the same object).
    """
    queues: Mapping[str, QueueInfo] = getattr(snapshot, "queues", {}) or {}
    observed = [q for q in queues.values() if q.kind != "local"]
    if not observed:
        return base
    specs = {q.path: q for q in base.queues}
    for info in observed:
        specs[info.path] = QueueSpec(
            info.path,
            guaranteed=info.guaranteed,
            max=info.max,
            state=QueueState.CLOSED if info.state in CLOSED_STATES else QueueState.OPEN,
        )
    return replace(base, queues=tuple(specs[p] for p in sorted(specs)))
