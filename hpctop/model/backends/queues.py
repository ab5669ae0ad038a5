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

from hpctop.backends.kai import read as kai
from hpctop.model.backends.wire import resources_of
from hpctop.model.objects import (
    ClusterQueue,
    Cohort,
    FlavorQuota,
    LocalQueue,
    QueueInfo,
    VolcanoQueue,
)
from hpctop.model.policy import ROOT, Policy, QueueSpec, QueueState
from hpctop.model.resources import ZERO, Resources

#: neutral queue states under which pending work waits (QueueHeld)
CLOSED_STATES = frozenset({"Closed", "Draining", "Held"})


def escape(name: str) -> str:
    """A backend object name as one path component."""
    return name.replace(".", "_dot_")


@dataclass(frozen=True, slots=True)
class QueueIndex:
    """The neutral queues plus the lookups that join a job's evidence to them."""

    queues: Mapping[str, QueueInfo] = field(default_factory=dict)
    kueue_cq: Mapping[str, str] = field(default_factory=dict)  # ClusterQueue name → path
    kueue_lq: Mapping[tuple[str, str], str] = field(default_factory=dict)  # (ns, LocalQueue) → path
    local_cq: Mapping[tuple[str, str], str] = field(default_factory=dict)  # (ns, LocalQueue) → CQ name
    volcano: Mapping[str, str] = field(default_factory=dict)  # Volcano Queue name → path
    kai: Mapping[str, str] = field(default_factory=dict)  # KAI Queue name → path


def _positive(r: Resources) -> Resources:
    return Resources(
        max(r.cpu, 0), max(r.memory, 0), max(r.gpu, 0), tuple((k, v) for k, v in r.extended if v > 0)
    )


def _cells(quotas: Iterable[FlavorQuota], which: str) -> Resources | None:
    values = [(q.resource, getattr(q, which)) for q in quotas if getattr(q, which) is not None]
    return resources_of(values) if values else None


def _kueue_max(cq: ClusterQueue) -> Resources | None:
    nominal = resources_of((q.resource, q.nominal) for q in cq.quotas)
    if cq.cohort is None:
        return nominal  # nothing to borrow from
    cells = [(q.resource, q.nominal + q.borrowing_limit) for q in cq.quotas if q.borrowing_limit is not None]
    limit = resources_of(cells)
    return limit if limit != ZERO else None


def _kueue(
    cohorts: list[Cohort], cqs: list[ClusterQueue], lqs: list[LocalQueue], out: dict[str, QueueInfo]
) -> tuple[dict[str, str], dict[tuple[str, str], str], dict[tuple[str, str], str]]:
    parents: dict[str, str | None] = {c.name: c.parent for c in cohorts}
    for cq in cqs:
        if cq.cohort is not None:
            parents.setdefault(cq.cohort, None)
    cohort_path: dict[str, str] = {}

    def path_of(name: str) -> str:
        if name in cohort_path:
            return cohort_path[name]
        chain: list[str] = []
        seen: set[str] = set()
        cur: str | None = name
        while cur is not None and cur not in seen:  # a parent cycle is cut where it closes
            seen.add(cur)
            chain.append(cur)
            cur = parents.get(cur)
        path = ".".join([ROOT, *(escape(c) for c in reversed(chain))])
        cohort_path[name] = path
        return path

    by_cohort = {c.name: c for c in cohorts}
    cq_path: dict[str, str] = {}
    for cq in cqs:
        base = path_of(cq.cohort) if cq.cohort is not None else ROOT
        cq_path[cq.name] = f"{base}.{escape(cq.name)}"
    # cohorts first (their usage is rolled up from the ClusterQueues below)
    pools: dict[str, list[QueueInfo]] = {}
    for cq in cqs:
        active = next((c for c in cq.conditions if c.type == "Active"), None)
        if cq.stop_policy not in ("", "None"):
            state, why = "Held", f"kueue:ClusterQueue.stopPolicy={cq.stop_policy}"
        elif active is not None and active.status == "False":
            state, why = (
                "Closed",
                f"kueue:ClusterQueue.Active=False {active.reason}: {active.message}".strip(),
            )
        else:
            state, why = "Open", ""
        parent = path_of(cq.cohort) if cq.cohort is not None else ROOT
        info = QueueInfo(
            path=cq_path[cq.name],
            name=cq.name,
            parent=parent,
            kind="cluster",
            backend="kueue",
            state=state,
            guaranteed=resources_of((q.resource, q.nominal) for q in cq.quotas),
            max=_kueue_max(cq),
            borrowing_limit=_cells(cq.quotas, "borrowing_limit"),
            lending_limit=_cells(cq.quotas, "lending_limit"),
            weight=cq.weight,
            allocated=resources_of((u.resource, u.total) for u in cq.usage),
            borrowed=resources_of((u.resource, u.borrowed) for u in cq.usage),
            pending_jobs=cq.pending_workloads,
            admitted_jobs=cq.admitted_workloads,
            flavors=cq.quotas,
            usage=cq.usage,
            state_reason=why,
        )
        out[info.path] = info
        if cq.cohort is not None:
            pools.setdefault(cq.cohort, []).append(info)
    # deepest cohorts first, so a parent cohort sums its child cohorts' totals
    for name in sorted(parents, key=lambda n: -path_of(n).count(".")):
        cohort = by_cohort.get(name)
        members = pools.get(name, [])
        own = resources_of((q.resource, q.nominal) for q in cohort.quotas) if cohort else ZERO
        pool = sum((m.guaranteed for m in members), own)
        parent_name = parents.get(name)
        info = QueueInfo(
            path=path_of(name),
            name=name,
            parent=path_of(parent_name) if parent_name is not None else ROOT,
            kind="cohort",
            backend="kueue",
            state="Open",
            guaranteed=pool,
            max=pool if parent_name is None and pool != ZERO else None,
            weight=cohort.weight if cohort else None,
            allocated=sum((m.allocated for m in members), ZERO),
            borrowed=sum((m.borrowed for m in members), ZERO),
            pending_jobs=sum(m.pending_jobs for m in members),
            admitted_jobs=sum(m.admitted_jobs for m in members),
            flavors=cohort.quotas if cohort else (),
        )
        out[info.path] = info
        if parent_name is not None:
            pools.setdefault(parent_name, []).append(info)
    lq_path: dict[tuple[str, str], str] = {}
    local_cq: dict[tuple[str, str], str] = {}
    for lq in lqs:
        parent = cq_path.get(lq.cluster_queue) or f"{ROOT}.{escape(lq.cluster_queue)}"
        path = f"{parent}.{lq.namespace}/{escape(lq.name)}"
        held = lq.stop_policy not in ("", "None")
        out[path] = QueueInfo(
            path=path,
            name=lq.name,
            parent=parent,
            kind="local",
            backend="kueue",
            state="Held" if held else ("Open" if lq.cluster_queue in cq_path else "Unknown"),
            pending_jobs=lq.pending_workloads,
            admitted_jobs=lq.admitted_workloads,
            state_reason=f"kueue:LocalQueue.stopPolicy={lq.stop_policy}" if held else "",
        )
        lq_path[(lq.namespace, lq.name)] = path
        local_cq[(lq.namespace, lq.name)] = lq.cluster_queue
    return cq_path, lq_path, local_cq


_VOLCANO_STATES = {"Open": "Open", "Closed": "Closed", "Closing": "Draining"}


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
            borrowed=_positive(q.allocated - guaranteed) if guaranteed != ZERO else ZERO,
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


def build_queues(objects: Iterable[object], yunikorn: Iterable[QueueInfo] = ()) -> QueueIndex:
    """The neutral queue tree from backend objects (any order) and YuniKorn's REST queues."""
    cohorts: list[Cohort] = []
    cqs: list[ClusterQueue] = []
    lqs: list[LocalQueue] = []
    vqs: list[VolcanoQueue] = []
    kqs: list[kai.KaiQueue] = []
    for obj in objects:
        if isinstance(obj, ClusterQueue):
            cqs.append(obj)
        elif isinstance(obj, LocalQueue):
            lqs.append(obj)
        elif isinstance(obj, Cohort):
            cohorts.append(obj)
        elif isinstance(obj, VolcanoQueue):
            vqs.append(obj)
        elif isinstance(obj, kai.KaiQueue):
            kqs.append(obj)
    out: dict[str, QueueInfo] = {}
    cq_path, lq_path, local_cq = _kueue(cohorts, cqs, lqs, out) if (cqs or lqs or cohorts) else ({}, {}, {})
    volcano = _volcano(vqs, out) if vqs else {}
    kai_paths = kai.fold_queues(kqs, out) if kqs else {}
    for info in yunikorn:
        out[info.path] = info
    return QueueIndex(dict(sorted(out.items())), cq_path, lq_path, local_cq, volcano, kai_paths)


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
