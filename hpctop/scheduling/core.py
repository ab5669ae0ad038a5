"""One scheduling cycle: ``schedule(snapshot, policy, now) -> ScheduleResult``.

Why this structure: the cycle is a pure function so the console, the simulator and tests can run
it on any snapshot and get the same answer (every iteration is over sorted keys; wall time is only
reported, never used). The order is YuniKorn's two-step choice - the leaf queue with the lowest
DRF share among queues with pending work, then that queue's highest multifactor-priority job -
done with heaps so each pending job is popped once. A job that cannot start is passed over, gets
a backfill reservation while ``reservation_depth`` allows, and later jobs may start only in what
no reservation needs (``backfill.Profile``).

Cost control for the trace (1,500 nodes, thousands of pending pods): node lists are indexed per
(partition, selector/model/toleration signature) once per cycle; "could this ever fit" is cached
per distinct request; and a request that failed to fit is remembered per node set, so any later
request that is at least as large in every component is rejected without a scan (free resources
only shrink during a cycle). At 10k nodes x 50k pending pods (PERFORMANCE.md P6) the scans
also go through a free-capacity index (``placement.WholeIndex``: only nodes with the member's
whole GPUs free), and the cyclic GC is paused for the cycle; docs/scheduler.md says what a
cycle and an event cost.

Why one module of this size: one cycle is one object (``_Cycle``) whose passes (queue order,
placement, reservations, backfill, the explanations of what did not start) share the per-cycle
indices and caches described above; split across modules they would be passed around as a dozen
arguments or kept by a second class over the same fields. What stands alone already lives beside
it (``backfill``, ``placement``, ``partitions``, ``memo``, ``explain``, ``inputs``).
"""

from __future__ import annotations

import gc
import heapq
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hpctop.model.objects import Job, JobKey, Node, Reason, Toleration
from hpctop.model.policy import PartitionState, Policy, PriorityWeights
from hpctop.model.resources import Resources
from hpctop.model.states import JobState, ReasonCode
from hpctop.model.store import Snapshot
from hpctop.scheduling import explain
from hpctop.scheduling.backfill import INF, Profile, Reservation, earliest_start
from hpctop.scheduling.memo import SHARED, Memo
from hpctop.scheduling.partitions import PartitionInfo, partition_status_fast, to_resources
from hpctop.scheduling.placement import NodeFree, Request, WholeIndex, choose_counted
from hpctop.scheduling.priority import PriorityInputs, breakdown, requested_gpu_cpu, static_terms, total_with
from hpctop.scheduling.queues import QueueTree
from hpctop.scheduling.releases import forget, kept_for, release_times, releases_from_scratch
from hpctop.scheduling.types import (
    JobPlan,
    Placement,
    PodAssignment,
    PriorityBreakdown,
    QueueStatus,
    ScheduleResult,
)

Signature = tuple[tuple[tuple[str, str], ...], tuple[str, ...], tuple[Toleration, ...]]
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
MAX_FAILURES_KEPT = 16


@dataclass(slots=True)
class Eligibility:
    """Which partitions could ever run a job (any state), and which have enough usable nodes."""

    partitions: list[str]  # statically able to hold all pending members (empty nodes)
    matched: int  # nodes matching selector/model/taints in the candidate partitions
    usable: list[str]  # eligible partitions whose schedulable nodes could hold it
    unknown_partition: str | None = None


@dataclass(slots=True)
class Outcome:
    order: int | None = None
    reason: Reason | None = None
    eta: float | None = None
    placement: Placement | None = None
    partition: str | None = None
    reserved_nodes: tuple[str, ...] = ()
    deferred: tuple[str, tuple[str, ...]] | None = None  # ("resources", partitions) explained at the end

    def copy(self) -> Outcome:
        """A new outcome with the same fields: ``dataclasses.replace`` cost ~2 us each, ~26 ms per
        replayed 10k x 50k pass (13k turns); every field positionally (a test checks all are)."""
        return Outcome(
            self.order,
            self.reason,
            self.eta,
            self.placement,
            self.partition,
            self.reserved_nodes,
            self.deferred,
        )


@dataclass(frozen=True, slots=True)
class _Step:
    """One job's turn in a cycle's decision pass: enough to replay it in the next cycle."""

    job: Job  # the object decided (identity: an event that changed the job makes a new one)
    effects: int  # the end of its effects in ``PassRecord.effects``
    budget: int  # the search budget left after it
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class PassRecord:
    """A cycle's decision pass, kept in the memo so the next cycle can replay its prefix.

    Why: an event that leaves the nodes' free states, the running jobs and the clock alone (a
    job submitted, a pending job deleted, held or changed) changes nothing the pass decides
    before that job's turn: the pass pops jobs in the same order from the same state, so the
    same decisions follow. The next cycle walks its own pop order and, while it pops the very
    job object with the very priority breakdown the record has at that position, applies the
    recorded effects (``_Cycle._replay``) instead of deciding again; from the first difference
    on it decides as usual. ``stamp`` (the memo's free-state and running-job versions, ``now``,
    the normalisers and weights), the view's identity and the policy say whether the record's
    starting state is this cycle's; a finished or started pod moves them, so such an event
    replays nothing (its queue's usage moves every queue's turn from the first job on).
    """

    view: object
    policy: Policy
    stamp: tuple[object, ...]
    steps: Sequence[_Step]
    effects: Sequence[tuple[Any, ...]]
    #: what the pass started from, to find what an event changed (``_Cycle._start_diff``): each
    #: node's kept free-state template and raw release list (identity: both are replaced, never
    #: mutated, when they change; ``None``: the releases were built from scratch) and each
    #: queue's usage before any placement
    templates: Mapping[str, NodeFree]
    releases: Mapping[str, object] | None
    usage: Mapping[str, Resources]


#: cpu, memory, GPU milli, members, ext, per-node limit (0: none)
_Failure = tuple[int, int, int, int, tuple[tuple[str, int], ...], int]


class _Failures:
    """Gangs known not to fit a node set: any request at least as large with at least as many members.

    Entries are kept as plain ints (cpu, memory, GPU milli, members) plus the extended resources,
    so the check (tens of thousands per cycle at 10k nodes) is integer compares, not
    ``Request.dominates`` calls.
    """

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: dict[tuple[object, ...], list[_Failure]] = {}

    def known(self, key: tuple[object, ...], req: Request, m: int) -> bool:
        items = self.entries.get(key)
        if not items:
            return False
        cpu, memory, gpu = req.cpu, req.memory, req.gpu_milli
        for fcpu, fmem, fgpu, fm, fext, fper in items:
            if m >= fm and cpu >= fcpu and memory >= fmem and gpu >= fgpu and req.spreads_as_much(fper):
                if not fext:
                    return True
                mine = dict(req.ext)
                if all(mine.get(k, 0) >= v for k, v in fext):
                    return True
        return False

    def add(self, key: tuple[object, ...], req: Request, m: int) -> None:
        items = self.entries.setdefault(key, [])
        items.append((req.cpu, req.memory, req.gpu_milli, m, req.ext, req.per_node))
        if len(items) > MAX_FAILURES_KEPT:
            del items[0]


def _add_scaled(acc: tuple[list[int], dict[str, int]], r: Resources, factor: int) -> None:
    ints, ext = acc
    ints[0] += r.cpu * factor
    ints[1] += r.memory * factor
    ints[2] += r.gpu * factor
    for key, value in r.extended:
        ext[key] = ext.get(key, 0) + value * factor


class _Deferred(PriorityBreakdown):
    """A job's priority breakdown whose total is known and whose factors are made when read.

    ``priority.breakdown`` of the arguments kept here (nothing of the cycle: a placement's
    breakdown outlives it in ``priority.FrozenPriorities``). The total is the caller's, summed by
    ``priority.total_with`` from the same factors in the same order (``priority.total``), and is
    checked against the breakdown's when the factors are made.
    """

    __slots__ = ("_args",)

    _args: tuple[Job, float, PriorityWeights, PriorityInputs, float, int, int, int] | None

    def __init__(
        self,
        total: int,
        job: Job,
        now: float,
        weights: PriorityWeights,
        inputs: PriorityInputs,
        fairshare: float,
        tier: int,
        gpus: int,
        cpus: int,
    ) -> None:
        _set = object.__setattr__
        _set(self, "_factors", None)
        _set(self, "_weighted", None)
        _set(self, "total", total)
        _set(self, "_args", (job, now, weights, inputs, fairshare, tier, gpus, cpus))

    def _fill(self) -> None:
        args = self._args
        assert args is not None
        job, now, weights, inputs, fairshare, tier, gpus, cpus = args
        made = breakdown(
            job,
            now=now,
            weights=weights,
            inputs=inputs,
            fairshare=fairshare,
            tier=tier,
            gpus_in_partitions=gpus,
            cpus_in_partitions=cpus,
        )
        if made.total != self.total:
            raise AssertionError(
                f"{job.id}: a deferred priority breakdown of total {self.total} made {made.total}"
            )
        _set = object.__setattr__
        _set(self, "_factors", made.factors)
        _set(self, "_weighted", made.weighted)
        _set(self, "_args", None)


class _Plans(Mapping[JobKey, JobPlan]):
    """``ScheduleResult.plans``: every job's plan made on first read (pending and running alike).

    Why lazy: the demo has ~3,300 running jobs and a handful pending; the profile showed their
    priority breakdowns (``breakdown`` and its dicts) as a large fixed cost of every cycle, yet
    the session reads a cycle's plans only when the console shows that cycle. Everything a
    running plan needs is fixed before the cycle places anything (fair-share factors are taken
    first), so computing it later gives the same value. The same holds for the pending jobs
    (13k at P6's full size, where a breakdown each was ~6 % of a cycle): their order needs only
    the priority total (``priority.total``, the same sum), the plan reads the cycle's outcome,
    which nothing changes after the cycle, and the breakdown is made on first read. Iteration is
    in job-key order, like a dict built from the sorted jobs.
    """

    __slots__ = ("_lazy", "_make", "_order", "_plans", "_size")

    def __init__(
        self, plans: dict[JobKey, JobPlan], lazy: dict[JobKey, Job], make: Callable[[Job], JobPlan]
    ) -> None:
        self._plans = plans
        self._lazy = lazy
        self._make = make
        self._size = len(plans) + len(lazy)
        self._order: list[JobKey] | None = None

    def __getitem__(self, key: JobKey) -> JobPlan:
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._make(self._lazy[key])
        return plan

    def __contains__(self, key: object) -> bool:
        return key in self._plans or key in self._lazy

    def __iter__(self) -> Iterator[JobKey]:
        if self._order is None:
            self._order = sorted({*self._plans, *self._lazy})
        return iter(self._order)

    def __len__(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return f"_Plans({dict(self.items())!r})"


_PENDING_STATES = frozenset({*(s for s in JobState if s.is_pending), JobState.PENDING, JobState.HELD})
_ACTIVE_STATES = frozenset(s for s in JobState if s.is_active)


def _is_pending(job: Job) -> bool:
    return job.state in _PENDING_STATES


class _Cycle:
    def __init__(
        self, snapshot: Snapshot, policy: Policy, now: float, memo: Memo, placements_only: bool = False
    ) -> None:
        self.snapshot = snapshot
        self.placements_only = placements_only
        self.memo = memo
        self.policy = policy
        self.now = now
        view = self.view = memo.cluster_view(snapshot.nodes, policy)
        self.nodes: dict[str, Node] = view.nodes
        self.partitions: tuple[PartitionInfo, ...] = view.partitions
        self.part_by_name = view.part_by_name
        self.product: dict[str, str | None] = view.product
        # each node's pods, sorted by key: kept in the memo, patched from the pods that changed
        pods_by_node = memo.pods_by_node.update(snapshot.pods)
        self.live, self.charges, self.used_by_node, whole = memo.free_state(view, pods_by_node)
        kept = memo.kept_free
        self.over: frozenset[tuple[str, str]] = frozenset(kept.over) if kept is not None else frozenset()
        #: per queue path: running members counted in its usage that no known node holds (the view)
        self.unheld: dict[str, tuple[list[int], dict[str, int]]] = {}
        self.index = WholeIndex(whole)
        self._member_sets: dict[tuple[Signature, str], frozenset[str]] = {}
        self._candidates: dict[tuple[Signature, str, int], tuple[int, Sequence[str], Sequence[str]]] = {}
        self._delayed: dict[tuple[object, ...], tuple[tuple[int, int], Reservation | None]] = {}
        self.empty = view.empty
        self.cluster = view.cluster
        self.profile = Profile(now, self.live)
        self.tree = QueueTree(policy)
        self._matching = view.matching
        self._eligibility = view.eligibility
        self._union = view.union
        self.live_failures = _Failures()
        self.avail_failures = _Failures()
        self.strict_blocked: dict[str, str] = {}  # partition -> first blocked job id (strict mode)
        self.has_blocked: set[str] = set()  # partitions where a higher job is waiting
        self.first_blocked: dict[str, str] = {}  # partition -> first job blocked there (Slurm reasons)
        self.reservations_tried = 0
        #: what ``consider`` changed, in order (``PassRecord``: replayed by the next cycle)
        self.effects: list[tuple[Any, ...]] = []
        self._cursor: dict[tuple[object, ...], int] = {}
        self.placed = 0  # placements so far: the version of the live state
        self._fits_live: dict[tuple[object, ...], int] = {}
        self._closed: dict[str, str | None] = {}  # leaf queue -> first closed queue above it (fixed)
        self._up: dict[int, tuple[Eligibility, list[str]]] = {}  # by id: the object is kept with it
        self._quota: dict[tuple[str, Resources, int], tuple[int, tuple[str, str, int, int] | None]] = {}
        #: the raw release lists the profile started from (``PassRecord.releases``)
        self.raw_releases: dict[str, object] | None = None
        #: per node an event changed: its live state as the recorded pass had it, kept in step
        #: with the replayed placements (``_unaffected``)
        self.shadow: dict[str, NodeFree] = {}
        self._capped: dict[str, list[str]] = {}  # leaf queue -> its queues with a max (quota reads)

    # -- static matching ------------------------------------------------------------------------

    def _node_ok(self, node: Node, sig: Signature) -> bool:
        selector, models, tolerations = sig
        labels = node.labels
        if any(labels.get(k) != v for k, v in selector):
            return False
        if models and self.product[node.name] not in models:
            return False
        for taint in node.taints:
            if taint.effect in BLOCKING_EFFECTS and not any(t.tolerates(taint) for t in tolerations):
                return False
        return True

    def matching(self, sig: Signature, partition: str) -> tuple[list[str], list[str]]:
        """(all matching nodes, schedulable matching nodes) of a partition, sorted by name."""
        key = (sig, partition)
        found = self._matching.get(key)
        if found is None:
            every = [n for n in self.part_by_name[partition].nodes if self._node_ok(self.nodes[n], sig)]
            found = (every, [n for n in every if self.nodes[n].schedulable])
            self._matching[key] = found
        return found

    @staticmethod
    def signature(job: Job) -> Signature:
        return (job.node_selector, job.gpu_models, job.tolerations)

    def eligibility(self, job: Job, req: Request, m: int) -> Eligibility:
        sig = self.signature(job)
        key = (sig, job.partition, req, m)
        cached: Eligibility | None = self._eligibility.get(key)
        if cached is not None:
            return cached
        if job.partition is not None and job.partition not in self.part_by_name:
            result = Eligibility([], 0, [], unknown_partition=job.partition)
        else:
            names = [job.partition] if job.partition is not None else [p.name for p in self.partitions]
            eligible: list[str] = []
            usable: list[str] = []
            matched = 0
            for pname in names:
                every, sched = self.matching(sig, pname)
                matched += len(every)
                schedulable = set(sched)
                total = usable_total = 0
                for n in every:
                    h = self.empty[n].hosts(req, m)
                    if not h:
                        continue
                    total += h
                    if n in schedulable:
                        usable_total += h
                    if usable_total >= m:
                        break
                if total >= m:
                    eligible.append(pname)
                    if usable_total >= m:
                        usable.append(pname)
            result = Eligibility(eligible, matched, usable)
        self._eligibility[key] = result
        return result

    def union_capacity(self, partitions: Sequence[str]) -> tuple[int, int]:
        """(GPU milli, CPU milli) of the schedulable nodes in the union of partitions."""
        key = tuple(partitions)
        found = self._union.get(key)
        if found is None:
            names = sorted({n for p in partitions for n in self.part_by_name[p].nodes})
            gpu = sum(self.nodes[n].allocatable.gpu for n in names if self.nodes[n].schedulable)
            cpu = sum(self.nodes[n].allocatable.cpu for n in names if self.nodes[n].schedulable)
            found = (gpu, cpu)
            self._union[key] = found
        return found

    def running_partition(self, job: Job) -> str | None:
        """The first partition (display order) holding any of the job's nodes."""
        first = self.view.first_partition
        best = min((first[n] for n in job.nodes if n in first), default=None)
        return None if best is None else self.partitions[best].name

    # -- placement -----------------------------------------------------------------------------

    def candidates(self, sig: Signature, pname: str, names: Sequence[str], req: Request) -> Sequence[str]:
        """The schedulable matching nodes a member of ``req`` could fit now (``WholeIndex``), in order."""
        if not req.whole:
            return names
        # kept until the index changes: jobs that fail in a row ask the same (P6 profile)
        key = (sig, pname, req.whole)
        index = self.index
        found = self._candidates.get(key)
        if found is None or found[0] != index.version or found[1] is not names:
            found = (index.version, names, index.candidates(names, self.member_set(sig, pname), req.whole))
            self._candidates[key] = found
        return found[2]

    def _view(self, names: Sequence[str], window_end: float) -> list[NodeFree]:
        """Nodes as a job running until ``window_end`` may use them (reserved ones trimmed)."""
        return [
            self.profile.avail(n, self.now, window_end) if self.profile.reserved(n) else self.live[n]
            for n in names
        ]

    def _first_fit(
        self, key: tuple[object, ...], names: Sequence[str], req: Request, window_end: float
    ) -> NodeFree | None:
        """First node (from this request's cursor on) where one member fits for its whole run.

        The cursor remembers where the same request last fitted: nodes before it did not fit it
        then, and free resources only shrink during a cycle, so they never will in this cycle.
        """
        start = self._cursor.get(key, 0)
        count = self.index.count
        k = req.whole
        for i in range(start, len(names)):
            n = names[i]
            if k and count[n] < k:
                continue  # fewer whole free GPUs than asked, live (and so under any reservation)
            nf = self.live[n]
            if not nf.fits_one(req):
                continue
            if self.profile.reserved(n):
                nf = self.profile.avail(n, self.now, window_end)
                if not nf.fits_one(req):
                    continue
            self._cursor[key] = i
            return nf
        self._cursor[key] = len(names)
        return None

    def try_place(
        self, job: Job, sig: Signature, pname: str, req: Request, m: int, window_end: float
    ) -> list[tuple[str, tuple[int, ...]]] | None:
        fkey: tuple[object, ...] = (sig, pname, window_end)
        if self.live_failures.known((sig, pname), req, m) or self.avail_failures.known(fkey, req, m):
            return None
        _, every = self.matching(sig, pname)
        capacity = 0
        if m == 1:
            found = self._first_fit((*fkey, req), every, req, window_end)
            plan = [(found, 1)] if found is not None else None
            names = self.candidates(sig, pname, every, req) if plan is None else every
        else:
            names = self.candidates(sig, pname, every, req)
            plan, capacity = choose_counted(self._view(names, window_end), req, m)
        if plan is None:
            # no gang larger than what these nodes can hold will fit later in this cycle either
            self.avail_failures.add(fkey, req, capacity + 1)
            # the nodes left out by the index hold no member live nor under reservations, so
            # when none of the rest is reserved the view was the live state where it matters
            if not any(self.profile.reserved(n) for n in names):
                self.live_failures.add((sig, pname), req, capacity + 1)  # the view was the live state
            return None
        self.placed += 1
        members: list[tuple[str, tuple[int, ...]]] = []
        for nf, count in plan:
            live = self.live[nf.name]
            for _ in range(count):
                indices = nf.place(req)
                if nf is not live:
                    live.charge(req, indices)
                members.append((nf.name, indices))
            self.profile.touch(nf.name)
            self.index.update(live)
        return members

    def fits_live(self, sig: Signature, pname: str, req: Request, m: int) -> bool:
        """Whether the gang fits the live state (reservations ignored): the "why blocked" check.

        Both answers are remembered: a failure as a capacity bound (see ``choose_counted``), a
        success until the next placement (free resources change only through placements).
        """
        if self.live_failures.known((sig, pname), req, m):
            return False
        key = (sig, pname, req, m)
        if self._fits_live.get(key) == self.placed:
            return True
        names = self.candidates(sig, pname, self.matching(sig, pname)[1], req)
        plan, capacity = choose_counted([self.live[n] for n in names], req, m)
        if plan is None:
            self.live_failures.add((sig, pname), req, capacity + 1)
            return False
        self._fits_live[key] = self.placed
        return True

    def delayed(
        self, sig: Signature, pname: str, req: Request, m: int, window_end: float
    ) -> Reservation | None:
        """``Profile.delayed`` on a partition's nodes, remembered until the next placement or reservation."""
        key = (sig, pname, req, m, window_end)
        version = (self.placed, len(self.profile.made))
        found = self._delayed.get(key)
        if found is None or found[0] != version:
            res = self.profile.delayed(self.member_set(sig, pname), window_end, req, m)
            found = self._delayed[key] = (version, res)
        return found[1]

    def member_set(self, sig: Signature, pname: str) -> frozenset[str]:
        """The schedulable matching nodes of a partition, as a set (kept for the cycle)."""
        key = (sig, pname)
        members = self._member_sets.get(key)
        if members is None:
            members = self._member_sets[key] = frozenset(self.matching(sig, pname)[1])
        return members

    # -- one job -------------------------------------------------------------------------------

    def ordered_partitions(self, names: Sequence[str], req: Request) -> list[str]:
        infos = [self.part_by_name[n] for n in names]
        if not (req.whole or req.frac):
            infos.sort(
                key=lambda p: (-p.spec.evaluation_tier, -p.spec.priority_tier, not p.spec.cpu_only, p.name)
            )
        return [p.name for p in infos]

    def settled(
        self, job: Job, path: str, elig: Eligibility, req: Request, out: Outcome | None, *, quota: bool = True
    ) -> bool:
        """Whether ``consider`` stops before any placement attempt; ``out.reason`` says why (if given).

        Nothing here changes the cycle's state, and every check but the quota one is fixed for
        the whole cycle; usage only grows during a cycle, so a job over quota now is still over
        it at its turn. That is what lets placements-only mode drop such jobs up front (with
        ``out`` None: no reason text is built). With ``quota`` false the quota check is left out:
        the rest is a function of the job object, its eligibility, its queue path and the policy
        alone, which ``memo.PointDerivations`` keeps across cycles.
        """
        m = len(job.pending_pods)
        if out is not None:
            out.partition = ",".join(elig.partitions) or job.partition
        if job.state == JobState.HELD:
            if out is not None:
                out.reason = explain.held(job)
            return True
        closed = self._closed.get(path, "")
        if closed == "":
            closed = self._closed[path] = self.tree.closed(path)
        if closed is not None:
            if out is not None:
                out.reason = explain.queue_closed(closed)
            return True
        up = self.up_partitions(elig)
        if elig.partitions and not up:
            if out is not None:
                out.reason = explain.partitions_down(
                    [(p, str(self.part_by_name[p].spec.state)) for p in elig.partitions]
                )
            return True
        over = self.quota_block(path, job, m) if quota else None
        if over is not None:
            if out is not None:
                queue, resource, used, cap = over
                out.reason = explain.quota(queue, resource, used, cap, job.per_member.scale(m).get(resource))
            return True
        if job.scheduling_gates:
            if out is not None:
                out.reason = explain.gated(job)
            return True
        if m == 0 or m + job.running_members < job.min_members:
            if out is not None:
                out.reason = explain.gang_incomplete(job)
            return True
        if elig.unknown_partition is not None:
            if out is not None:
                out.reason = explain.unknown_partition(elig.unknown_partition)
            return True
        if not elig.partitions:
            if out is not None:
                sig = self.signature(job)
                names = [job.partition] if job.partition else [p.name for p in self.partitions]
                parts = [(p, [self.empty[n] for n in self.matching(sig, p)[0]]) for p in names]
                out.reason = explain.never_fits(parts, req, m, elig.matched)
            return True
        if not any(p in elig.usable for p in up):
            if out is not None:
                out.reason = explain.unavailable(up)
            return True
        return False

    def evaluation_tier(self, elig: Eligibility) -> int:
        """The highest PriorityTier among a job's eligible partitions (1, Slurm's default, when none).

        A Slurm job submitted to several partitions is evaluated once per partition, each at its
        partition's tier; hpctop evaluates it once, at the first (highest) of them.
        """
        part_by_name = self.part_by_name
        return max((part_by_name[p].spec.evaluation_tier for p in elig.partitions), default=1)

    def up_partitions(self, elig: Eligibility) -> list[str]:
        """The job's candidate partitions that are UP (fixed for the cycle), once per ``Eligibility``."""
        found = self._up.get(id(elig))
        if found is None or found[0] is not elig:
            part_by_name = self.part_by_name
            up = [p for p in elig.partitions if part_by_name[p].spec.state == PartitionState.UP]
            found = self._up[id(elig)] = (elig, up)
        return found[1]

    def quota_block(self, path: str, job: Job, m: int) -> tuple[str, str, int, int] | None:
        """``QueueTree.over_max`` for ``m`` members of the job, remembered per queue and request.

        An answer stands until the next placement (usage changes only through placements); in
        placements-only mode an "over" answer stands for the whole cycle, since usage only grows
        (in the full mode the reason quotes the usage, so it is asked again).
        """
        key = (path, job.per_member, m)
        found = self._quota.get(key)
        if found is not None and (found[0] == self.placed or (self.placements_only and found[1] is not None)):
            return found[1]
        over = self.tree.over_max(path, job.per_member.scale(m))
        self._quota[key] = (self.placed, over)
        return over

    def consider(self, job: Job, path: str, elig: Eligibility, req: Request, out: Outcome) -> bool:
        """Decide one pending job (``req``: its member's ``Request``); returns True when it was placed now."""
        m = len(job.pending_pods)
        if self.placements_only:
            # only jobs that passed ``settled`` at the start come here, and of its checks only
            # the quota can change during the cycle
            if self.quota_block(path, job, m) is not None:
                return False
        elif self.settled(job, path, elig, req, out):
            return False
        need = job.per_member.scale(m)
        sig = self.signature(job)
        up = self.up_partitions(elig)
        usable = self.ordered_partitions([p for p in up if p in elig.usable], req)
        limit = job.time_limit
        window_end = self.now + limit if limit else INF
        allowed = usable if self.policy.backfill else [p for p in usable if p not in self.strict_blocked]
        for pname in allowed:
            members = self.try_place(job, sig, pname, req, m, window_end)
            if members is None:
                continue
            pods = sorted(job.pending_pods)
            assignments = tuple(
                PodAssignment(pod, node, indices) for pod, (node, indices) in zip(pods, members, strict=False)
            )
            out.placement = Placement(job.key, assignments, pname, backfilled=pname in self.has_blocked)
            out.partition = pname
            out.eta = self.now
            self.tree.add_used(path, need)
            if limit:
                for node, indices in members:
                    self.profile.add_release(node, self.now + limit, req, indices)
            self.effects.append(("place", path, need, req, members, limit))
            return True
        # blocked: why, then a reservation
        live_fit = next((p for p in usable if self.fits_live(sig, p, req, m)), None)
        if live_fit is not None:
            if live_fit not in allowed:
                out.reason = explain.priority_strict(live_fit, self.strict_blocked[live_fit])
            else:
                blocker = self.delayed(sig, live_fit, req, m, window_end)
                if blocker is not None:
                    out.reason = explain.priority_reservation(
                        "/".join(blocker.job[::2]), blocker.start, blocker.nodes, self.now
                    )
                else:
                    out.reason = explain.priority_strict(live_fit, "reserved work")
        else:
            ahead = next((p for p in usable if p in self.first_blocked), None)
            if ahead is not None:
                # Slurm: only the first blocked job of a partition reads Resources
                out.reason = explain.priority_behind(ahead, self.first_blocked[ahead])
            else:
                out.deferred = ("resources", tuple(usable))
        self._blocked(usable, job.id)
        self.effects.append(("blocked", usable, job.id))
        if self.reservations_tried < self.policy.reservation_depth:
            self.reservations_tried += 1
            self.effects.append(("tried",))
            best: tuple[float, str, list[tuple[str, tuple[int, ...]]]] | None = None
            for pname in usable:
                _, names = self.matching(sig, pname)
                fitting = self.candidates(sig, pname, names, req)
                found = earliest_start(self.profile, names, req, m, best[0] if best else INF, fitting)
                if found is not None and (best is None or found[0] < best[0]):
                    best = (found[0], pname, found[1])
            if best is not None:
                start, pname, members = best
                end = start + limit if limit else INF
                res = self.profile.add_reservation(job.key, pname, start, end, members, req)
                self.effects.append(("reserve", job.key, pname, start, end, members, req))
                out.eta = start
                out.reserved_nodes = res.nodes
        return False

    def _blocked(self, usable: Sequence[str], job_id: str) -> None:
        """A job could not start: later jobs of its partitions are behind it (reasons, strict mode)."""
        for pname in usable:
            self.has_blocked.add(pname)
            self.first_blocked.setdefault(pname, job_id)
            if not self.policy.backfill:
                self.strict_blocked.setdefault(pname, job_id)

    def _replay(self, effects: Sequence[tuple[Any, ...]]) -> None:
        """Apply what one job's ``consider`` changed in a previous cycle, without deciding it again.

        The state after is the state that cycle had after the job (``PassRecord``): the live
        free states, the free-capacity index, the profile's releases and reservations, the queue
        usage and the blocked partitions; the per-cycle caches are not rebuilt (each one only
        saves work that would give the same answer).
        """
        for effect in effects:
            kind = effect[0]
            if kind == "place":
                _, path, need, req, members, limit = effect
                live, profile, index, shadow = self.live, self.profile, self.index, self.shadow
                for node, indices in members:
                    live[node].charge(req, indices)
                    if node in shadow:
                        shadow[node].charge(req, indices)
                for node in dict.fromkeys(node for node, _ in members):
                    profile.touch(node)
                    index.update(live[node])
                self.placed += 1
                self.tree.add_used(path, need)
                if limit:
                    for node, indices in members:
                        profile.add_release(node, self.now + limit, req, indices)
            elif kind == "blocked":
                self._blocked(effect[1], effect[2])
            elif kind == "tried":
                self.reservations_tried += 1
            else:
                _, key, pname, start, end, members, req = effect
                self.profile.add_reservation(key, pname, start, end, members, req)

    def _start_diff(
        self, record: PassRecord, usage: Mapping[str, Resources]
    ) -> tuple[set[str], set[str]] | None:
        """(nodes, queues) whose starting state differs from the recorded pass's; ``None``: unknown.

        A node differs when its kept free-state template or its raw release list is another
        object than the record's (both are replaced when, and only when, the node's pods, their
        charges or their jobs' ends change); a queue when its usage before any placement differs.
        """
        if self.raw_releases is None or record.releases is None:
            return None
        old, new = record.templates, self.live.templates
        nodes = {name for name, template in new.items() if old.get(name) is not template}
        old_rel, new_rel = record.releases, self.raw_releases
        nodes.update(name for name, entries in new_rel.items() if old_rel.get(name) is not entries)
        nodes.update(old_rel.keys() - new_rel.keys())
        queues = {path for path, used in usage.items() if record.usage.get(path) != used}
        queues.update(record.usage.keys() - usage.keys())
        for name in nodes:
            template = old.get(name)
            if template is None:
                return None
            self.shadow[name] = template.clone()
        return nodes, queues

    def _unaffected(
        self,
        job: Job,
        path: str,
        elig: Eligibility,
        req: Request,
        searched: bool,
        budget_shift: int,
        diff: tuple[set[str], set[str]],
    ) -> bool:
        """Whether a job's turn reads nothing an event changed, so it decides as it did before.

        A turn reads the usage of its queue's capped ancestors (the quota check, and the usage a
        quota reason quotes) and the schedulable matching nodes of its partitions (placement
        scans, the live fit, the reservation it would delay, the reservation search with its
        budget). A changed node it reads leaves every one of those answers alone when one member
        fits it neither in the state the recorded pass had (``shadow``) nor in this one: the scans
        take only nodes hosting a member (what a reservation leaves is never more than the live
        state), so such a node counts for nothing in either. A reservation search also reads
        each node's future releases and charges the budget for them, so a turn that searched
        (``searched``) must not read a changed node at all.
        """
        nodes, queues = diff
        if searched and budget_shift:
            return False  # its search would start from another budget
        if queues:
            capped = self._capped.get(path)
            if capped is None:
                tree = self.tree
                capped = self._capped[path] = [
                    p for p in tree.ancestors(path) if tree.nodes[p].spec.max is not None
                ]
            if any(p in queues for p in capped):
                return False
        if nodes:
            sig = self.signature(job)
            for pname in elig.partitions:
                hit = nodes.intersection(self.member_set(sig, pname))
                if not hit:
                    continue
                if searched:
                    return False
                for name in hit:
                    if self.shadow[name].fits_one(req) or self.live[name].fits_one(req):
                        return False
        return True

    def _resync(
        self,
        recorded: Sequence[tuple[Any, ...]],
        mine: Sequence[tuple[Any, ...]],
        diff: tuple[set[str], set[str]],
    ) -> bool:
        """After a turn decided again: whether the replay can go on, and what differs now.

        The same effects leave what differs as it was. A placement of the same members of the
        same queue on other nodes, or a reservation of the same job elsewhere or at another
        time, leaves the queues' usage, the blocked partitions and the tries alike: the nodes of
        both are added to what differs (their recorded state in ``shadow``: a node that differed
        in nothing before this turn had this cycle's state less this turn's placement). Any
        other difference (placed against blocked, other partitions blocked, a search more or
        less) ends the replay.
        """
        if len(recorded) != len(mine):
            return False
        nodes = diff[0]
        shadow, live = self.shadow, self.live
        for old, new in zip(recorded, mine, strict=True):
            kind = old[0]
            if kind != new[0]:
                return False
            if kind == "place":
                _, path, need, req, members, limit = old
                if old != new:
                    if (path, need, req, limit) != (new[1], new[2], new[3], new[5]):
                        return False
                    for name, _ in new[4]:
                        if name not in shadow:
                            before = live[name].clone()
                            for other, taken in new[4]:
                                if other == name:
                                    before.charge(req, taken, -1)
                            shadow[name] = before
                        nodes.add(name)
                    for name, _ in members:
                        if name not in shadow:
                            shadow[name] = live[name].clone()
                        nodes.add(name)
                for name, indices in members:  # the recorded placement, on the recorded states
                    if name in shadow:
                        shadow[name].charge(req, indices)
            elif old != new:
                if kind != "reserve" or old[1] != new[1]:
                    return False
                for name, _ in (*old[5], *new[5]):
                    if name not in shadow:
                        shadow[name] = live[name].clone()  # reservations are not in the live state
                    nodes.add(name)
        return True

    # -- the cycle -----------------------------------------------------------------------------

    def _roll_up(self, active: list[Job], *, with_demand: bool = True) -> dict[str | None, str]:
        """Queue usage, pending demand and job counts, and the releases of running pods.

        The per-queue sums are kept in the memo by queue name and patched from the jobs that
        changed (``memo.JobSplit``: integer sums, exact in any order), as are the members no
        node holds (``memo.UnheldMembers``); here the few names are resolved to paths and each
        path's sums added to the tree once. Returns each queue name's path (every pending and
        running job's queue is among them).
        """
        tree = self.tree
        split = self.memo.jobs
        resolve = tree.resolve
        resolved: dict[str | None, str] = {name: resolve(name) for name in split.used}
        used: dict[str, tuple[list[int], dict[str, int]]] = {}
        for queue, (q_ints, q_ext) in split.used.items():
            path = resolved[queue]
            acc = used.get(path)
            if acc is None:
                acc = used[path] = ([0, 0, 0], {})
            ints, ext = acc
            ints[0] += q_ints[0]
            ints[1] += q_ints[1]
            ints[2] += q_ints[2]
            for key, value in q_ext.items():
                ext[key] = ext.get(key, 0) + value
        for name in split.demand:
            if name not in resolved:
                resolved[name] = resolve(name)
        if with_demand:  # (placements only leaves the change logs for the next full cycle)
            changes = split.take_active_changes()
            kept = self.memo.kept_free
            unheld = self.memo.unheld.update(
                split.active, changes, kept, self.memo.take_charged(), self.charges, self.over
            )
            for job_key, count in unheld.items():
                short = split.active[job_key]
                path = resolved[short.queue]
                acc = self.unheld.get(path)
                if acc is None:
                    acc = self.unheld[path] = ([0, 0, 0], {})
                _add_scaled(acc, short.per_member, count)
        self._add_running_releases(active)
        for path, (ints, ext) in used.items():
            tree.add_used(path, to_resources(ints, ext))
        if not with_demand:  # placements only: job counts and pending totals are for the view
            return resolved
        for queue, count in split.running.items():
            for p in tree.ancestors(resolved[queue]):
                tree.nodes[p].running_jobs += count
        demand: dict[str, tuple[list[int], dict[str, int]]] = {}
        counts: dict[str, int] = {}
        for queue, (q_ints, q_ext) in split.demand.items():
            path = resolved[queue]
            acc = demand.get(path)
            if acc is None:
                acc = demand[path] = ([0, 0, 0], {})
            ints, ext = acc
            ints[0] += q_ints[0]
            ints[1] += q_ints[1]
            ints[2] += q_ints[2]
            for key, value in q_ext.items():
                ext[key] = ext.get(key, 0) + value
            counts[path] = counts.get(path, 0) + split.waiting[queue]
        for path, (ints, ext) in demand.items():
            amount = to_resources(ints, ext)
            for p in tree.ancestors(path):
                node = tree.nodes[p]
                node.pending = node.pending + amount
                node.pending_jobs += counts[path]
        return resolved

    def _add_running_releases(self, active: list[Job]) -> None:
        """The releases of the running pods into the profile, patched from the last cycle's
        (``releases.KeptReleases``, one per memo: only the nodes whose charges or timed jobs changed
        are redone; the profile showed the from-scratch pass as a third of ``_roll_up``)."""
        profile = self.profile
        memo = self.memo
        # what changed since the last cycle (the memo's logs): the lists are patched from them
        nodes, jobs = memo.take_release_nodes(), memo.jobs.take_release_changes()
        changed = None if nodes is None or jobs is None else (nodes, jobs)
        try:
            raw = kept_for(memo).update(active, self.charges, self.now, changed, logged=True)
        except ValueError:  # two jobs claim one pod: no kept lists, the old pass (once per job)
            forget(self.memo)
            self.raw_releases = None
            profile.add_releases(releases_from_scratch(active, self.charges, self.now))
            return
        if not self.placements_only:  # (only a full cycle records its pass)
            self.raw_releases = dict(raw)  # the kept lists are replaced, never mutated, per node
        if profile.releases:  # (empty at this point of a cycle) merged and sorted as add_releases does
            profile.add_releases(raw)
            return
        for node, timed in release_times(raw, profile.now).items():
            profile.releases[node] = timed  # what add_releases would set: sorted by release time
            profile.touch(node)

    def _held_status(self, status: dict[str, QueueStatus]) -> dict[str, QueueStatus]:
        """The queue status with ``used`` as held on the view's nodes (never above the cluster).

        The scheduling usage (fair share, quotas) keeps every running member, wherever it is
        bound, as the schedulers count it; only the ``used`` a pane draws against the cluster's
        capacity leaves out what ``memo.UnheldMembers`` counted (issue 16: 20,032 of 20,000 GPUs used).
        """
        if not self.unheld:
            return status
        gone: dict[str, Resources] = {}
        for path, (ints, ext) in self.unheld.items():
            amount = to_resources(ints, ext)
            for p in self.tree.ancestors(path):
                gone[p] = gone[p] + amount if p in gone else amount
        out = dict(status)
        for p, amount in gone.items():
            q = out.get(p)
            if q is not None:
                out[p] = replace(q, used=(q.used - amount).clamp_min_zero())
        return out

    def run(self, started: float) -> ScheduleResult:
        # no global sort of the jobs: nothing below depends on their order (heaps order fully by
        # key, sums are of ints) except the plans' iteration order, which ``_Plans`` sorts lazily
        # the job split is kept in the memo and patched from the jobs that changed (``JobSplit``)
        split = self.memo.jobs
        split.update(self.snapshot.jobs, _PENDING_STATES, _ACTIVE_STATES)
        pending = list(split.pending.values())
        active = list(split.active.values())
        max_qos = max((pc.value for pc in self.snapshot.priority_classes.values()), default=0)
        highest = split.max_priority_value()
        if highest is not None and highest > max_qos:
            max_qos = highest
        placements_only = self.placements_only
        # queue name -> path: every pending and running job's queue (``_roll_up``)
        path_of = self._roll_up(active, with_demand=not placements_only)
        usage = {} if placements_only else {path: node.used for path, node in self.tree.nodes.items()}
        self.tree.compute_normalized_shares(self.cluster)
        queue_status = {} if placements_only else self._held_status(self.tree.status(self.cluster))
        partitions = (
            ()
            if placements_only
            else tuple(
                partition_status_fast(p, self.view.partition_static(p), self.used_by_node)
                for p in self.partitions
            )
        )
        # the partition factor is the PriorityJobFactor (``job_factor``); PriorityTier orders below
        inputs = PriorityInputs(max((p.spec.job_factor for p in self.partitions), default=0), max_qos)
        # fair-share factors as they are before any placement of this cycle (placements change usage)
        fairshare = {path: self.tree.fairshare(path, self.cluster)[2] for path in self.tree.nodes}
        part_by_name = self.part_by_name
        union_capacity = self.union_capacity
        now = self.now
        weights = self.policy.weights

        def prio(
            job: Job, parts: Sequence[str], total: int | None = None, at: float | None = None
        ) -> PriorityBreakdown:
            """The job's breakdown at ``at`` (``now`` when not given), deferred (``_Deferred``):
            the total is ``total`` (known to the caller) or summed here without the breakdown's
            dicts (``priority.total_with``), the factors are made when read."""
            tier = max((part_by_name[p].spec.job_factor for p in parts), default=0)
            gpu, cpu = union_capacity(parts)
            fs = fairshare[path_of[job.queue]]
            when = now if at is None else at
            if total is None:
                terms = static_terms(
                    job,
                    weights=weights,
                    inputs=inputs,
                    tier=tier,
                    gpus_in_partitions=gpu,
                    cpus_in_partitions=cpu,
                )
                total = total_with(job, terms, now=when, weights=weights, fairshare=fs)
            return _Deferred(total, job, when, weights, inputs, fs, tier, gpu, cpu)

        # per job, what of its total moves with neither the clock nor its queue's usage (kept in
        # the memo while the job, its eligibility, the weights and the normalisers are the same)
        terms_kept = self.memo.priority_terms
        terms_stamp = (weights, inputs)
        if self.memo.priority_terms_stamp != terms_stamp or len(terms_kept) > 2 * len(pending) + 64:
            terms_kept.clear()
            self.memo.priority_terms_stamp = terms_stamp

        def prio_total(job: Job, e: Eligibility) -> int:
            found = terms_kept.get(job.key)
            if found is not None and found[0] is job and found[1] is e:
                terms = found[2]
            else:
                parts = e.partitions
                gpu, cpu = union_capacity(parts)
                terms = static_terms(
                    job,
                    weights=weights,
                    inputs=inputs,
                    tier=max((part_by_name[p].spec.job_factor for p in parts), default=0),
                    gpus_in_partitions=gpu,
                    cpus_in_partitions=cpu,
                )
                terms_kept[job.key] = (job, e, terms)
            return total_with(job, terms, now=now, weights=weights, fairshare=fairshare[path_of[job.queue]])

        elig: dict[JobKey, Eligibility] = {}
        #: per pending job, its breakdown once made (``breakdown_of``): shared with the memo's entry
        cells: dict[JobKey, list[PriorityBreakdown | None]] = {}
        totals: dict[JobKey, int] = {}
        requests: dict[JobKey, Request] = {}
        settled = 0
        if placements_only:
            # drop the jobs ``consider`` would stop at before trying to place them (held, over
            # quota, ...): they change nothing, and the order of the others is the same without
            # them (see ``settled``; a queue's DRF share moves only when that queue places)
            # per job object, its request, eligibility and the quota-free part of ``settled`` are
            # kept across cycles while the view and the policy are the same (a moved ``now`` and
            # other jobs' changes leave them as they are: ``memo.PointDerivations``)
            kept: list[Job] = []
            request_of: dict[tuple[Resources, bool], Request] = {}  # equal requests, equal ``Request``s
            points = self.memo.points
            derived_points = points.begin(self.view, self.policy, split.pending)
            point_hits = 0
            quota_block = self.quota_block
            for job in pending:
                key = job.key
                path = path_of[job.queue]
                point = derived_points.get(key)
                if point is not None and point[0] is job and point[1] == path:
                    _, _, req, e, blocked = point
                    point_hits += 1
                else:
                    shape = (job.per_member, job.one_per_node)
                    req = request_of.get(shape)
                    if req is None:
                        req = request_of[shape] = Request.of(job.per_member, 1 if job.one_per_node else 0)
                    e = self.eligibility(job, req, max(len(job.pending_pods), 1))
                    blocked = self.settled(job, path, e, req, None, quota=False)
                    derived_points[key] = (job, path, req, e, blocked)
                if blocked or quota_block(path, job, len(job.pending_pods)) is not None:
                    continue
                requests[key], elig[key] = req, e
                totals[job.key] = prio_total(job, e)
                kept.append(job)
            # held jobs are in neither mode's order (never tried): settled counts the others
            settled = len(pending) - len(kept) - sum(1 for job in pending if job.state == JobState.HELD)
            points.hits = point_hits
            pending = kept
        else:
            # kept between cycles (``memo.PendingDerivations``): a job whose object, eligibility
            # and queue factor are those of the last cycle (same ``now`` and normalisers) keeps
            # its request, its total and its breakdown once made; the order needs only the
            # total, the breakdown is made when a plan or a placement is read (``breakdown_of``)
            # (the request and eligibility are kept across a moved ``now`` while the view is the
            # same; the total and breakdown only for the same ``now``)
            derived = self.memo.pending
            derived.begin((self.view, weights, inputs), split.pending)
            kept_entries = derived.entries
            hits = 0
            for job in pending:
                key = job.key
                prev = kept_entries.get(key)
                if prev is not None and prev[0] is job:
                    req, e = prev[1], prev[2]
                else:
                    req = Request.of(job.per_member, 1 if job.one_per_node else 0)
                    e = self.eligibility(job, req, max(len(job.pending_pods), 1))
                    prev = None
                fs = fairshare[path_of[job.queue]]
                if prev is not None and prev[6] == now and prev[3] == fs:
                    t, cell = prev[4], prev[5]
                    hits += 1
                else:
                    t, cell = prio_total(job, e), [None]
                    kept_entries[key] = (job, req, e, fs, t, cell, now)
                requests[key], elig[key], totals[key], cells[key] = req, e, t, cell
            derived.hits = hits
        running_partition = self.running_partition
        jobs_now = self.snapshot.jobs

        def breakdown_of(key: JobKey) -> PriorityBreakdown:
            """A pending job's breakdown, made on first read (its total is ``total_with``'s:
            the same factors summed in the same order) and kept with the memo's entry."""
            cell = cells[key]
            found = cell[0]
            if found is None:
                found = cell[0] = prio(jobs_now[key], elig[key].partitions, totals[key])
            return found

        # running jobs' plans kept between cycles (``memo.RunningPlans``): valid for the same
        # job object, view, policy and normalisers (``context``) and its queue's fair-share factor
        kept_running = self.memo.running_plans
        context = kept_running.context_for(self.view, self.policy, inputs, len(split.active))
        running_kept = kept_running.entries
        #: per running partition (None: on no partition's node), its factor and capacity, and per
        #: (partition, requested GPUs and CPUs, QoS value) the static terms: what ``prio`` derives
        #: per job, shared by the running jobs alike (issue 16, P4: every running job's plan is read
        #: by the console's first view, 200,000 at P4's size)
        part_shapes: dict[str | None, tuple[int, int, int]] = {}
        first_partition = self.view.first_partition
        partition_names = [p.name for p in self.partitions]
        shape_terms: dict[tuple[str | None, int, int, int | None], tuple[float, float, float]] = {}

        def running_plan(job: Job) -> JobPlan:
            """A running job's plan, computed when read: only pending jobs' priorities order anything.

            Slurm stops recalculating a job's priority once it starts (sprio lists pending jobs
            only). The whole priority a job was placed with rides on its ``Placement`` and the
            session keeps it while the job runs (``priority.FrozenPriorities``); this is the
            fallback for a job nobody saw start: the age taken at its start, the rest today's.
            Its total is summed without the breakdown's dicts (the tables read only the total),
            from the static terms of its partition and request shape (``shape_terms``): the very
            ``prio(job, [part], at=start)`` of a job alone, the same calls on the same values.
            """
            key = job.key
            fs = fairshare[path_of[job.queue]]
            found = running_kept.get(key)
            if found is not None and found[0] is job and found[1] is context and found[2] == fs:
                plan: JobPlan = found[3]
                return plan
            on = job.nodes
            if len(on) == 1:  # ``running_partition`` of a job on one node, without its generator
                first = first_partition.get(on[0])
                part = None if first is None else partition_names[first]
            else:
                part = running_partition(job)
            start = job.start_time
            at = now if start is None else start
            shape = part_shapes.get(part)
            if shape is None:
                parts = [part] if part else []
                gpus, cpus = union_capacity(parts)
                shape = part_shapes[part] = (
                    max((part_by_name[p].spec.job_factor for p in parts), default=0),
                    gpus,
                    cpus,
                )
            tier, gpus, cpus = shape
            gpu, cpu = requested_gpu_cpu(job)
            shape_key = (part, gpu, cpu, job.priority_value)
            terms = shape_terms.get(shape_key)
            if terms is None:
                terms = shape_terms[shape_key] = static_terms(
                    job,
                    weights=weights,
                    inputs=inputs,
                    tier=tier,
                    gpus_in_partitions=gpus,
                    cpus_in_partitions=cpus,
                )
            total = total_with(job, terms, now=at, weights=weights, fairshare=fs)
            plan = JobPlan(
                job=key,
                priority=_Deferred(total, job, at, weights, inputs, fs, tier, gpus, cpus),
                partition=part,
                eta=start,
            )
            if start is not None:  # (without a start time the age is taken now: not kept)
                running_kept[key] = (job, context, fs, plan)
            return plan

        # Slurm's PriorityTier first (priority_multifactor.shtml: jobs are evaluated by
        # "Partition PriorityTier", then "Job priority"): each tier, highest first, is its own
        # two-step order - leaf queue by DRF share, then job by priority
        by_tier: dict[int, dict[str, list[tuple[int, float, str, JobKey]]]] = {}
        tier_of = self.evaluation_tier
        for job in pending:
            entry = (-totals[job.key], job.submit_time, job.name, job.key)
            tier_queues = by_tier.setdefault(tier_of(elig[job.key]), {})
            tier_queues.setdefault(path_of[job.queue], []).append(entry)

        outcomes: dict[JobKey, Outcome] = {}
        order: list[JobKey] = []
        placements: list[Placement] = []
        # the previous cycle's pass (``PassRecord``), replayed while this one pops the same jobs
        memo = self.memo
        # the stamp: what the whole pass reads alike; what an event changed on nodes and queues
        # is found per job (``_start_diff``, ``_unaffected``)
        stamp = (now, inputs, weights)
        record = memo.pass_record
        replay: Sequence[_Step] = ()
        diff: tuple[set[str], set[str]] | None = None
        if (
            not placements_only
            and record is not None
            and record.view is self.view
            and record.stamp == stamp
            and (record.policy is self.policy or record.policy == self.policy)
        ):
            diff = self._start_diff(record, usage)
            if diff is not None:
                replay = record.steps
        changed = diff is not None and bool(diff[0] or diff[1])
        budget_shift = 0  # this pass's search budget less the recorded pass's, after the same turn
        steps: list[_Step] = []
        effects = self.effects
        replayed = 0
        for tier in sorted(by_tier, reverse=True):
            by_queue = by_tier[tier]
            queue_heap: list[tuple[float, str]] = []
            for path, entries in sorted(by_queue.items()):
                heapq.heapify(entries)
                queue_heap.append((self.tree.drf_share(path, self.cluster), path))
            heapq.heapify(queue_heap)
            tree_nodes = self.tree.nodes
            while queue_heap:
                share, path = heapq.heappop(queue_heap)
                if tree_nodes[path].children:
                    # a queue with children (jobs may name one): a child's placement raised its
                    # usage since its entry was pushed; shares only grow in a cycle, so an entry
                    # pushed back with its current share pops when it is the lowest (oracle's
                    # reference, tests/scheduling/test_scheduling_reference.py)
                    current = self.tree.drf_share(path, self.cluster)
                    if current != share:
                        heapq.heappush(queue_heap, (current, path))
                        continue
                entries = by_queue[path]
                *_, key = heapq.heappop(entries)
                job = self.snapshot.jobs[key]
                # a held job is not tried (Slurm: priority 0, "not eligible"): a reason, no place in line
                held = job.state == JobState.HELD
                turn = len(steps)  # this pop's place in the pass (held jobs included)
                # the recorded turn at this place: replayed when this job's turn reads nothing
                # that differs from the recorded pass (``_unaffected``), else decided again and,
                # when its effects differ from the record's only in where (``_resync``), the
                # replay goes on with those nodes added to what differs
                done: _Step | None = None
                done_effects: Sequence[tuple[Any, ...]] = ()
                if replay:
                    done = replay[turn] if turn < len(replay) else None
                    if done is None or done.job is not job:
                        done, replay = None, ()  # another order from here on: no replay
                if done is not None:
                    assert record is not None and diff is not None
                    done_effects = record.effects[replay[turn - 1].effects if turn else 0 : done.effects]
                    searched = any(effect[0] == "tried" for effect in done_effects)
                    if not changed or self._unaffected(
                        job, path, elig[key], requests[key], searched, budget_shift, diff
                    ):
                        self._replay(done_effects)
                        effects.extend(done_effects)
                        self.profile.budget = done.budget + budget_shift
                        out = outcomes[key] = done.outcome.copy()
                        if not held:
                            order.append(key)
                        if out.placement is not None:
                            placements.append(replace(out.placement, priority=breakdown_of(key)))
                        steps.append(_Step(job, len(effects), self.profile.budget, out))
                        replayed += 1
                        if entries:
                            heapq.heappush(queue_heap, (self.tree.drf_share(path, self.cluster), path))
                        continue
                start = len(effects)
                out = outcomes[key] = Outcome(order=None if held else len(order))
                if not held:
                    order.append(key)
                if self.consider(job, path, elig[key], requests[key], out) and out.placement is not None:
                    # the priority it starts with, which Slurm then stops recalculating (frozen)
                    at_start = (
                        breakdown_of(key) if key in cells else prio(job, elig[key].partitions, totals[key])
                    )
                    placements.append(replace(out.placement, priority=at_start))
                if not placements_only:
                    steps.append(_Step(job, len(effects), self.profile.budget, out))
                if done is not None:
                    assert diff is not None
                    if self._resync(done_effects, effects[start:], diff):
                        budget_shift = self.profile.budget - done.budget
                        changed = True
                    else:
                        replay = ()
                if entries:
                    heapq.heappush(queue_heap, (self.tree.drf_share(path, self.cluster), path))
        if not placements_only:
            memo.pass_record = PassRecord(
                self.view, self.policy, stamp, steps, effects, self.live.templates, self.raw_releases, usage
            )

        # explain resource waits on the final state (one scan per distinct request and node set)
        cache: dict[tuple[object, ...], Reason] = {}
        for key in () if placements_only else order:
            out = outcomes[key]
            if out.deferred is None:
                continue
            job = self.snapshot.jobs[key]
            req = requests[key]
            m = len(job.pending_pods)
            sig = self.signature(job)
            ckey: tuple[object, ...] = (sig, out.deferred[1], req, m)
            found = cache.get(ckey)
            if found is None:
                parts = [(p, [self.live[n] for n in self.matching(sig, p)[1]]) for p in out.deferred[1]]
                found = cache[ckey] = explain.scarce(ReasonCode.RESOURCES, "resources", parts, req, m)
            out.reason = found

        def plan_of(job: Job) -> JobPlan:
            """A job's plan, made when read (the console reads the plans of the jobs it shows)."""
            o = outcomes.get(job.key)
            if o is None:
                return running_plan(job)
            return JobPlan(
                job=job.key,
                priority=breakdown_of(job.key),
                partition=o.partition,
                order=o.order,
                reason=o.reason,
                eta=o.eta,
                placement=o.placement,
                reserved_nodes=o.reserved_nodes,
            )

        lazy: dict[JobKey, Job] = {}
        if not placements_only:
            lazy = {job.key: job for job in active}
            lazy.update((key, jobs_now[key]) for key in outcomes)
        stats = {
            "seconds": time.perf_counter() - started,
            "considered": float(len(order)),
            "placed": float(len(placements)),
            "reservations": float(len(self.profile.made)),
            "reservation_budget_left": float(self.profile.budget),
            "nodes": float(len(self.nodes)),
            "settled": float(settled),
            "priorities_kept": float(self.memo.pending.hits if not placements_only else 0),
            "pass_replayed": float(replayed),
        }
        return ScheduleResult(
            now=self.now,
            cluster=self.cluster,
            partitions=partitions,
            queues=queue_status,
            plans=_Plans({}, lazy, plan_of),
            placements=tuple(placements),
            pending_order=tuple(order),
            stats=stats,
        )


def schedule(
    snapshot: Snapshot,
    policy: Policy,
    now: float,
    *,
    memo: Memo | None = None,
    placements_only: bool = False,
) -> ScheduleResult:
    """Run one scheduling cycle over ``snapshot`` at time ``now`` (Unix seconds); pure and deterministic.

    ``memo`` keeps derivations of unchanged nodes and pods between cycles (``memo.SHARED`` by
    default; pass ``Memo()`` for a cold run); it never changes the result, only its cost. When
    another thread is using the shared one, this cycle runs on a fresh one instead of waiting.

    ``placements_only`` is for a binder that needs only the decisions (the simulator session's
    scheduling points): the placements are those of the full cycle, in the same order, but the
    jobs that could not be tried (held, over quota, gated, ...) are dropped before their priority
    is computed, and no plans, reasons, queue or partition roll-ups are built: ``plans``,
    ``queues`` and ``partitions`` are empty and ``pending_order`` lists only the jobs tried.
    Reservations are still made (they decide what may backfill).
    """
    started = time.perf_counter()
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        if memo is not None:
            return _Cycle(snapshot, policy, now, memo, placements_only).run(started)
        if not SHARED.lock.acquire(blocking=False):
            return _Cycle(snapshot, policy, now, Memo(), placements_only).run(started)
        try:
            return _Cycle(snapshot, policy, now, SHARED, placements_only).run(started)
        finally:
            SHARED.lock.release()
    finally:
        if paused:
            gc.enable()
