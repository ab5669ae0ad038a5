"""The running pods' releases (when each gives back what it holds on its node), kept between cycles.

Every cycle starts its backfill profile with the releases of every running pod whose job has a
time limit: per node, ``(end, request, GPU indices)`` sorted by time, the end being the job's
start plus its limit (``backfill.Profile.release_time`` moves one already past it to now + 1 s).
The core built them from scratch each cycle: a pass over every running job and its pods, then a
mapped copy and a sort per node. On the demo (~1,500-3,000 running jobs on ~400-1,500 nodes)
that was a third of ``_roll_up``, itself 20 % of the simulation with the view read every 60 s
(P7, bench/README.md "Issue 16, fourth session"), while a cycle changes a few dozen of them.

:class:`KeptReleases` keeps the per-node lists and redoes only the nodes something changed on,
found by identity (snapshot objects are frozen and replaced when they change): the charges of
the cycle (pod key -> :class:`~hpctop.scheduling.placement.Charge`, what ``free_of`` says a bound
pod holds) compared with the last cycle's, and the running jobs with a time limit compared with
the last cycle's. A job without a start time ends at ``now + limit``, so its nodes are redone every
cycle. What a node's list holds depends only on its charges and on the start, limit and pods of
the jobs owning them, so an untouched node's list is still right.

The lists differ from the from-scratch ones only in the order of releases at the same time on the
same node (these are grouped by time: every reader gives back a node's releases at one time
together, and giving them back is a sum, so their order within a time never matters).
``tests/scheduling/test_scheduling_releases.py`` compares them with the from-scratch ones as
multisets over random sequences of snapshot changes, and whole cycles on a kept and a fresh cache.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from itertools import compress
from operator import attrgetter

from hpctop.model.objects import Job, JobKey, PodKey
from hpctop.scheduling.placement import Charge, Request

#: (time, request, GPU indices) of one pod giving back what it holds, as ``backfill.Profile`` keeps it
Release = tuple[float, Request, tuple[int, ...]]

#: what changed since the last cycle, from the memo's logs: each node whose charges were redone
#: -> its charges now (empty: none), and ``(job key, old running job or None, new or None)``
Changes = tuple[Mapping[str, Mapping[PodKey, Charge]], Sequence[tuple[JobKey, Job | None, Job | None]]]

_LIMIT = attrgetter("time_limit")


def _when(entry: Release) -> float:
    return entry[0]


def releases_from_scratch(
    active: Sequence[Job], charges: Mapping[PodKey, Charge], now: float
) -> dict[str, list[Release]]:
    """The raw ends per node, in job and pod order, as the core built them every cycle (tests compare)."""
    out: dict[str, list[Release]] = {}
    for job in active:
        if job.time_limit:
            end = (job.start_time if job.start_time is not None else now) + job.time_limit
            for pod_key in job.pods:
                charge = charges.get(pod_key)
                if charge is not None:
                    out.setdefault(charge.node, []).append((end, charge.req, charge.indices))
    return out


class KeptReleases:
    """Per node, the raw releases of the running pods (end not yet mapped to ``now + 1``), sorted by end.

    Changes are found by object identity through ``id`` (an int hashes in no time; the keys are
    tuples, whose hash is computed on every lookup: a diff keyed by them cost as much as the pass
    it replaced). The objects of the last cycle are kept alive here, so their ids stay theirs.
    """

    __slots__ = (
        "by_node",
        "charge_keys",
        "charges",
        "compared",
        "ends",
        "jobs",
        "lists",
        "owner",
        "patchable",
        "rebuilt_nodes",
        "volatile",
    )

    def __init__(self) -> None:
        self.charges: dict[PodKey, Charge] = {}  # the charges the lists were built from
        self.charge_keys: dict[int, PodKey] = {}  # id of each of them -> its pod
        self.by_node: dict[str, dict[PodKey, Charge]] = {}
        self.jobs: dict[int, Job] = {}  # id -> the running jobs with a time limit they were built from
        self.owner: dict[PodKey, JobKey] = {}  # pod -> its job among ``jobs``
        self.ends: dict[JobKey, float] = {}  # job -> start + limit (jobs with a start time)
        self.volatile: dict[JobKey, Job] = {}  # jobs without a start time: they end at now + limit
        self.lists: dict[str, list[Release]] = {}
        self.rebuilt_nodes = 0  # nodes redone, over the cache's life (tests and profiles read it)
        #: the lists were built or patched with every change since logged (``update``'s ``changed``)
        self.patchable = False
        #: the identity maps (``charges``, ``charge_keys``, ``jobs``) are those of the last call
        self.compared = True

    def update(
        self,
        active: Sequence[Job],
        charges: Mapping[PodKey, Charge],
        now: float,
        changed: Changes | None = None,
        *,
        logged: bool = False,
    ) -> dict[str, list[Release]]:
        """Per node, the raw releases of ``active``'s charged pods (the kept lists: read only).

        ``changed``, when given, says what changed since the last call (the nodes whose charges
        were redone with each one's charges now, and the running jobs that came, went or
        changed: the memo's logs) and the lists are patched from it alone; without it (or on the
        first call, or when the last call said its logs did not start with it: ``logged``) every
        charge and timed job is compared by identity with the last call's.

        Raises ``ValueError`` when two running jobs claim the same pod or share a key, or one
        charge object stands for two pods (no store or ``free_of`` builds that; the caller then
        builds the releases from scratch, which counts such a pod once per job): the cache is
        left inconsistent and must be dropped.
        """
        dirty: set[str] = set()
        if changed is not None and self.patchable:
            self._patch(changed, charges, dirty)
            self.compared = False
        else:
            if not self.compared:  # the identity maps are stale after patches: start afresh
                self._reset(dirty)
            self._charges_changed(charges, dirty)
            self._jobs_changed(active, charges, dirty)
            self.compared = True
        # the next call may patch from the logs when they start at this call (the caller's word)
        self.patchable = logged
        for job in self.volatile.values():  # their end moves with the clock
            for pod_key in job.pods:
                charge = charges.get(pod_key)
                if charge is not None:
                    dirty.add(charge.node)
        by_node, owner, ends, volatile, lists = self.by_node, self.owner, self.ends, self.volatile, self.lists
        for node in dirty:
            entries: list[Release] = []
            for pod_key, charge in by_node.get(node, {}).items():
                job_key = owner.get(pod_key)
                if job_key is None:
                    continue
                end = ends.get(job_key)
                if end is None:
                    job = volatile[job_key]
                    end = now + job.time_limit  # type: ignore[operator]  # volatile jobs have one
                entries.append((end, charge.req, charge.indices))
            if entries:
                entries.sort(key=_when)
                lists[node] = entries
            else:
                lists.pop(node, None)
        self.rebuilt_nodes += len(dirty)
        return lists

    def _reset(self, dirty: set[str]) -> None:
        """Forget everything (every node with a list is redone): the next comparison adds it all."""
        dirty.update(self.lists)
        self.charges, self.charge_keys, self.by_node, self.jobs = {}, {}, {}, {}
        self.owner, self.ends, self.volatile = {}, {}, {}

    def _patch(self, changed: Changes, charges: Mapping[PodKey, Charge], dirty: set[str]) -> None:
        """The kept maps patched from the logs: no pass over every charge and timed job.

        The identity maps of the full comparison (``charges``, ``charge_keys``, ``jobs``) are
        not kept up to date here; a call without logs starts them afresh (``patchable``).
        """
        nodes, job_changes = changed
        by_node, owner, ends, volatile = self.by_node, self.owner, self.ends, self.volatile
        for node, now_held in nodes.items():
            if now_held:
                by_node[node] = dict(now_held)
            else:
                by_node.pop(node, None)
            dirty.add(node)
        # per job its first old and its last new object (a log may hold a key more than once);
        # every old one out first, then the new ones in, as the full comparison does
        first_old: dict[JobKey, Job | None] = {}
        last_new: dict[JobKey, Job | None] = {}
        for key, old, new in job_changes:
            first_old.setdefault(key, old)
            last_new[key] = new
        for key, old in first_old.items():
            if old is None or not old.time_limit:
                continue
            for pod_key in old.pods:
                if owner.get(pod_key) == key:
                    del owner[pod_key]
                charge = charges.get(pod_key)
                if charge is not None:
                    dirty.add(charge.node)
            ends.pop(key, None)
            volatile.pop(key, None)
        for key, job in last_new.items():
            if job is None or not job.time_limit:
                continue
            if key in ends or key in volatile:
                raise ValueError(f"two running jobs {key}")
            for pod_key in job.pods:
                if owner.setdefault(pod_key, key) != key:
                    raise ValueError(f"pod {pod_key} is claimed by two running jobs")
                charge = charges.get(pod_key)
                if charge is not None:
                    dirty.add(charge.node)
            if job.start_time is not None:
                ends[key] = job.start_time + job.time_limit
            else:
                volatile[key] = job

    def _charges_changed(self, charges: Mapping[PodKey, Charge], dirty: set[str]) -> None:
        old, old_keys, by_node = self.charges, self.charge_keys, self.by_node
        keys = dict(zip(map(id, charges.values()), charges, strict=True))
        if len(keys) != len(charges):
            raise ValueError("one charge object for two pods")
        # the set operations run in C: charges gone (or replaced), then the new ones
        for i in old_keys.keys() - keys.keys():
            key = old_keys[i]
            charge = old[key]
            held = by_node[charge.node]
            del held[key]
            if not held:
                del by_node[charge.node]
            dirty.add(charge.node)
        for i in keys.keys() - old_keys.keys():
            key = keys[i]
            charge = charges[key]
            by_node.setdefault(charge.node, {})[key] = charge
            dirty.add(charge.node)
        self.charges, self.charge_keys = dict(charges), keys

    def _jobs_changed(self, active: Sequence[Job], charges: Mapping[PodKey, Charge], dirty: set[str]) -> None:
        timed = list(compress(active, map(_LIMIT, active)))
        jobs = dict(zip(map(id, timed), timed, strict=True))
        old, owner, ends, volatile = self.jobs, self.owner, self.ends, self.volatile
        for i in old.keys() - jobs.keys():  # gone, or replaced by another object
            job = old[i]
            key = job.key
            for pod_key in job.pods:
                if owner.get(pod_key) == key:
                    del owner[pod_key]
                # (a charge that changed or went was marked on its old node by the charge diff)
                charge = charges.get(pod_key)
                if charge is not None:
                    dirty.add(charge.node)
            ends.pop(key, None)
            volatile.pop(key, None)
        for i in jobs.keys() - old.keys():
            job = jobs[i]
            key = job.key
            if key in ends or key in volatile:
                raise ValueError(f"two running jobs {key}")
            for pod_key in job.pods:
                if owner.setdefault(pod_key, key) != key:
                    raise ValueError(f"pod {pod_key} is claimed by two running jobs")
                charge = charges.get(pod_key)
                if charge is not None:
                    dirty.add(charge.node)
            if job.start_time is not None:
                ends[key] = job.start_time + job.time_limit  # type: ignore[operator]  # timed: it has one
            else:
                volatile[key] = job
        if len(jobs) != len(timed):
            raise ValueError("a running job listed twice")
        self.jobs = jobs


def release_times(raw: Mapping[str, list[Release]], now: float) -> dict[str, list[Release]]:
    """The lists ``backfill.Profile.add_releases`` makes of ``raw`` (an end at or before ``now``
    becomes now + 1 s): a node's raw list itself when nothing on it is overdue (read only: the
    profile replaces a node's list when it adds to it, ``Profile.add_release``), else a new one."""
    out: dict[str, list[Release]] = {}
    later = now + 1.0
    for node, entries in raw.items():
        if entries[0][0] > now:
            out[node] = entries  # sorted already, nothing overdue: shared, never changed in place
        else:
            timed = [(end if end > now else later, req, indices) for end, req, indices in entries]
            timed.sort(key=_when)
            out[node] = timed
    return out


_KEPT: weakref.WeakKeyDictionary[object, KeptReleases] = weakref.WeakKeyDictionary()


def kept_for(memo: object) -> KeptReleases:
    """The kept releases of one memo's cycles (one cache per memo, as long as the memo lives)."""
    kept = _KEPT.get(memo)
    if kept is None:
        kept = _KEPT[memo] = KeptReleases()
    return kept


def forget(memo: object) -> None:
    """Drop the memo's kept releases (after an inconsistency: the next cycle starts afresh)."""
    _KEPT.pop(memo, None)
