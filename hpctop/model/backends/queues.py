"""Every scheduler's queues in one tree, and that tree as the core's policy (SCHEDULERS.md §1.3).

Why: the scheduling core orders and limits jobs through one queue tree of dotted paths under
``root`` (:class:`hpctop.model.policy.QueueSpec`). On a live cluster that tree already exists,
in the scheduler's own objects: Kueue Cohorts → ClusterQueues (→ LocalQueues), Volcano Queues,
YuniKorn's REST queue tree. :func:`build_queues` folds them into :class:`QueueInfo` records and
:func:`policy_from_snapshot` turns those into ``QueueSpec``s, so the core's fair-share, limits and
"QueueHeld" reasons follow what the cluster says instead of a config file.

Paths (the choice the issue asked to document):

- Kueue: ``root.<cohort>[.<child cohort>...].<clusterqueue>``; a ClusterQueue without a cohort is
  ``root.<clusterqueue>``. A job admitted (or waiting) through LocalQueue ``team-a/gpu`` has
  ``Job.queue`` = its ClusterQueue's path: quota lives on ClusterQueues, so that is where the core
  must count it. LocalQueues are listed as kind ``local`` at ``<cq path>.<namespace>/<name>`` for
  display, and left out of the policy (they carry no quota).
- Volcano: ``spec.parent`` chain (or the ``volcano.sh/hierarchy`` annotation) under ``root``; the
  default queue is ``root.default``.
- YuniKorn: its own dotted paths, unchanged.

Names containing dots (legal for Kueue objects) are written with ``_dot_``, YuniKorn's rule, so a
path always splits back into its parts. Kueue quotas are summed over flavors into ``guaranteed``
(per-flavor detail stays in ``flavors``); ``max`` is nominal + borrowingLimit per resource, or no
limit (0) where a ClusterQueue in a cohort may borrow without one; a top-level cohort's ``max`` is
its pool (what its members and it hold). A cohort's ``borrowed`` is what its members borrow from
one another.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from hpctop.model.objects import QueueInfo, VolcanoQueue
from hpctop.model.policy import ROOT, Policy, QueueSpec, QueueState
from hpctop.model.resources import ZERO, Resources

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


_VOLCANO_STATES = {"Open": "Open", "Closed": "Closed", "Closing": "Draining"}


#: the lookup :func:`fold_volcano` adds: Volcano Queue name → path
VOLCANO_PATHS = "volcano.queue"


def fold_volcano(objects: Iterable[object], out: dict[str, QueueInfo]) -> Mapping[str, Mapping[Any, str]]:
    """Volcano's Queues into the neutral tree (``spec.parent`` chain or the hierarchy annotation)."""
    queues = [obj for obj in objects if isinstance(obj, VolcanoQueue)]
    if not queues:
        return {}
    return {VOLCANO_PATHS: _volcano(queues, out)}


def _volcano(queues: list[VolcanoQueue], out: dict[str, QueueInfo]) -> dict[str, str]:
    by_name = {q.name: q for q in queues}
    paths: dict[str, str] = {}

    def path_of(name: str) -> str:
        if name in paths:
            return paths[name]
        q = by_name.get(name)
        if q is not None and q.hierarchy and q.hierarchy[-1] == name:
            parts = [escape(p) for p in q.hierarchy]
        else:
            chain: list[str] = []
            seen: set[str] = set()
            cur: str | None = name
            while cur is not None and cur not in seen:
                seen.add(cur)
                chain.append(cur)
                node = by_name.get(cur)
                cur = node.parent if node is not None else None
            parts = [escape(c) for c in reversed(chain)]
        if parts[0] != ROOT:
            parts.insert(0, ROOT)
        paths[name] = ".".join(parts)
        return paths[name]

    for q in queues:
        path = path_of(q.name)
        guaranteed = q.deserved or q.guarantee or ZERO
        state = _VOLCANO_STATES.get(q.state, "Unknown")
        out[path] = QueueInfo(
            path=path,
            name=q.name,
            parent=path.rsplit(".", 1)[0] if "." in path else None,
            kind="leaf",
            backend="volcano",
            state=state,
            guaranteed=guaranteed,
            max=q.capability,
            weight=None if q.weight is None else float(q.weight),
            priority=q.priority,
            allocated=q.allocated,
            borrowed=positive(q.allocated - guaranteed) if guaranteed != ZERO else ZERO,
            pending_jobs=q.pending + q.inqueue,
            running_jobs=q.running,
            state_reason=f"vc:Queue.state={q.state}" if state != "Open" else "",
        )
    for info in list(out.values()):
        if info.backend == "volcano" and info.parent is not None and info.parent in out:
            parent = out[info.parent]
            if parent.kind == "leaf" and parent.backend == "volcano":
                out[info.parent] = replace(parent, kind="parent")
    return paths


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
