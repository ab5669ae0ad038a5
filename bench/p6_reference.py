"""P6's reference: the same full scheduling cycle as ``core.schedule``, written plainly.

Why: PERFORMANCE.md asks every ratio's reference to be the best simple implementation of the
*same* work, asserted to give the same answer. The old P6 reference was a priority-order first
fit with no partitions, no fair share, no backfill and no reasons, so "core vs naive" compared
different work. This module computes what the core computes for a cycle - the order of the
pending jobs (PriorityTier, then YuniKorn's leaf queue by DRF share, then multifactor priority),
which jobs start now and on which nodes and GPU indices (all-or-nothing gangs, topology domain
preferred, EASY backfill under the reservations made so far), each blocked job's reservation
(start time and nodes) while ``reservation_depth`` and the search budget allow, and why each
job waits (reason code and source) - the way a competent engineer would without the core's
engine: no memo, no indexes (no free-capacity buckets, no first-fit cursors, no failure
bounds, no kept streams or suffix minima), no replayed passes. Every scan is a plain loop over
a partition's nodes in name order; a gang is planned on the nodes' states and only then
charged (nothing to undo: a plan that fails has changed nothing); a node's future is a plain
list of releases and reservations, and "what it can give from t on" is the componentwise
minimum of its free state at its change points, computed when asked (one sweep of its timeline).
Two things a competent plain version does are done: what is static for the cycle (which nodes
match a job's selector/models/tolerations in a partition, which partitions could ever hold
it) is worked out once per distinct constraint set in a dict, and a node where not one member
fits live is not asked what its reservations leave (never more than live). Both change no
answer; without the first, matching alone took a third of the reference at 1,000 nodes.

The searches' budget (``backfill.CYCLE_SEARCH_BUDGET``, ``MAX_SHADOW_STEPS``) is part of the
answer (a job searched after it runs out gets no ETA), so it is charged here exactly as the
core's documented rule charges it: a gang search pays one per release (one per change point of
a reserved node) at each distinct time it passes; a one-member search walks each unreserved
node's release times until the member fits or the best time so far is reached and pays one
per time walked (reserved nodes are free).

What it calls of ``hpctop`` (pure semantic helpers; both sides pay them equally):

- ``partitions.build_partitions``, ``node_product``, ``node_has_gpu``, ``cluster_capacity``:
  which nodes form which partition and the cluster's capacity (the core's view builds the same
  from its memo);
- ``placement.topology_domain``: a node's NVLink domain label;
- ``queues.QueueTree``: queue resolution, usage roll-up, quota (``over_max``), DRF share,
  normalised shares and the ``2^(-U/S)`` fair-share factor;
- ``priority.breakdown`` and ``PriorityInputs``: the multifactor priority formula;
- ``explain``'s text builders for the reasons that need no node state (held, gated, quota,
  priority...); for resource and constraint reasons only the code and source are compared.

Nothing of the engine: not ``schedule``, ``_Cycle``, ``NodeFree``/``Request``/``choose``,
``WholeIndex``, ``backfill.Profile``/``earliest_start``, ``memo`` or ``releases``.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hpctop.model.objects import Job, JobKey, Node, PodKey, Reason
from hpctop.model.policy import PartitionState, Policy
from hpctop.model.quantity import MAX_GPUS
from hpctop.model.resources import Resources
from hpctop.model.states import JobState, ReasonCode
from hpctop.model.store import Snapshot
from hpctop.scheduling import backfill, explain
from hpctop.scheduling.partitions import (
    PartitionInfo,
    build_partitions,
    cluster_capacity,
    node_has_gpu,
    node_product,
)
from hpctop.scheduling.placement import topology_domain
from hpctop.scheduling.priority import PriorityInputs, breakdown
from hpctop.scheduling.queues import QueueTree
from hpctop.scheduling.types import ScheduleResult

INF = math.inf
TERMINAL = frozenset({"Succeeded", "Failed"})
BLOCKING = ("NoSchedule", "NoExecute")
PENDING_STATES = frozenset({*(s for s in JobState if s.is_pending), JobState.PENDING, JobState.HELD})
ACTIVE_STATES = frozenset(s for s in JobState if s.is_active)

Member = tuple[str, tuple[int, ...]]  # (node, GPU indices)


# -- the answer both sides are compared on ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JobAnswer:
    order: int | None
    partition: str | None
    eta: float | None
    reserved_nodes: tuple[str, ...]
    reason: tuple[ReasonCode, str, str] | None  # code, source, message ("" where not compared)


@dataclass(frozen=True, slots=True)
class Answer:
    """What a cycle decided: the pending order, the placements (in order) and every pending job's plan."""

    order: tuple[JobKey, ...]
    placements: tuple[tuple[JobKey, str | None, bool, tuple[tuple[PodKey, str, tuple[int, ...]], ...]], ...]
    jobs: Mapping[JobKey, JobAnswer]

    def differences(self, other: Answer, limit: int = 5) -> list[str]:
        """The first few differences, for an assertion message (empty when equal)."""
        out: list[str] = []
        if self.order != other.order:
            pairs = enumerate(zip(self.order, other.order, strict=False))
            at = next((i for i, (a, b) in pairs if a != b), None)
            out.append(f"order differs at {at} (lengths {len(self.order)}, {len(other.order)})")
        for i, (a, b) in enumerate(zip(self.placements, other.placements, strict=False)):
            if a != b:
                out.append(f"placement {i}: {a} != {b}")
                break
        if len(self.placements) != len(other.placements):
            out.append(f"placements: {len(self.placements)} != {len(other.placements)}")
        for key in sorted(set(self.jobs) | set(other.jobs)):
            mine, theirs = self.jobs.get(key), other.jobs.get(key)
            if mine != theirs:
                out.append(f"{key}: {mine} != {theirs}")
                if len(out) >= limit:
                    break
        return out


_COMPARED_MESSAGES = frozenset({"core:state", "core:gates", "core:gang", "core:queue", "core:partition"})


def _reason(reason: Reason | None) -> tuple[ReasonCode, str, str] | None:
    if reason is None:
        return None
    text = reason.message
    keep = reason.source in _COMPARED_MESSAGES or reason.code == ReasonCode.PRIORITY
    keep = keep or reason.code == ReasonCode.QUOTA_EXCEEDED
    return (reason.code, reason.source, text if keep else "")


def core_answer(result: ScheduleResult, snapshot: Snapshot) -> Answer:
    """The core's result in the reference's terms (the pending jobs' plans of ``snapshot``)."""
    jobs: dict[JobKey, JobAnswer] = {}
    for job in snapshot.jobs.values():
        if job.state not in PENDING_STATES:
            continue
        key = job.key
        plan = result.plans[key]
        jobs[key] = JobAnswer(plan.order, plan.partition, plan.eta, plan.reserved_nodes, _reason(plan.reason))
    placements = tuple(
        (p.job, p.partition, p.backfilled, tuple((a.pod, a.node, a.gpu_indices) for a in p.assignments))
        for p in result.placements
    )
    return Answer(result.pending_order, placements, jobs)


# -- one member's request, one node's free resources -------------------------------------------------


@dataclass(frozen=True, slots=True)
class Need:
    """One member's request: whole GPUs, or a fraction of one GPU (milli), and a per-node limit."""

    cpu: int
    memory: int
    ext: tuple[tuple[str, int], ...]
    whole: int
    frac: int
    per_node: int

    @staticmethod
    def of(r: Resources, per_node: int = 0) -> Need:
        gpu = max(r.gpu, 0)
        whole, frac = (0, 0) if gpu == 0 else (0, gpu) if gpu < 1000 else (-(-gpu // 1000), 0)
        ext = tuple((k, v) for k, v in r.extended if v > 0)
        return Need(max(r.cpu, 0), max(r.memory, 0), ext, whole, frac, max(per_node, 0))


class Free:
    """A node's free resources at one moment: CPU, memory, extended resources, milli-GPU per index."""

    __slots__ = ("cpu", "domain", "ext", "gpus", "memory", "name")

    def __init__(
        self, name: str, cpu: int, memory: int, ext: dict[str, int], gpus: list[int], domain: str | None
    ) -> None:
        self.name, self.cpu, self.memory, self.ext, self.gpus, self.domain = (
            name,
            cpu,
            memory,
            ext,
            gpus,
            domain,
        )

    def copy(self) -> Free:
        return Free(self.name, self.cpu, self.memory, dict(self.ext), list(self.gpus), self.domain)

    def hosts(self, need: Need, limit: int) -> int:
        """How many members of ``need`` fit here, at most ``limit`` (and the per-node limit)."""
        n = limit if not need.per_node or need.per_node > limit else need.per_node
        if need.cpu:
            n = min(n, self.cpu // need.cpu)
        if need.memory:
            n = min(n, self.memory // need.memory)
        for key, amount in need.ext:
            n = min(n, self.ext.get(key, 0) // amount)
        if n <= 0:
            return 0
        if need.whole:
            n = min(n, sum(1 for g in self.gpus if g >= 1000) // need.whole)
        elif need.frac:
            n = min(n, sum(g // need.frac for g in self.gpus if g > 0))
        return max(n, 0)

    def pick(self, need: Need) -> tuple[int, ...]:
        """The GPU indices one member takes: the lowest fully free ones, or the fullest that fits."""
        if need.whole:
            return tuple([i for i, g in enumerate(self.gpus) if g >= 1000][: need.whole])
        if need.frac:
            fitting = [(g, i) for i, g in enumerate(self.gpus) if g >= need.frac]
            return (min(fitting)[1],) if fitting else ()
        return ()

    def charge(self, need: Need, indices: Sequence[int], sign: int = 1) -> None:
        self.cpu -= sign * need.cpu
        self.memory -= sign * need.memory
        for key, amount in need.ext:
            self.ext[key] = self.ext.get(key, 0) - sign * amount
        per_index = 1000 if need.whole else need.frac
        for i in indices:
            if 0 <= i < len(self.gpus):
                self.gpus[i] -= sign * per_index

    def lower_to(self, other: Free) -> None:
        """Componentwise minimum with ``other``, in place."""
        self.cpu = min(self.cpu, other.cpu)
        self.memory = min(self.memory, other.memory)
        for key in set(self.ext) | set(other.ext):
            self.ext[key] = min(self.ext.get(key, 0), other.ext.get(key, 0))
        for i, g in enumerate(other.gpus[: len(self.gpus)]):
            self.gpus[i] = min(self.gpus[i], g)


def _held_indices(free: Free, gpu_indices: tuple[int, ...], need: Need) -> tuple[int, ...]:
    """Which GPU indices a bound pod holds: its annotation if valid, else where it would go."""
    if gpu_indices and all(0 <= i < len(free.gpus) for i in gpu_indices):
        return gpu_indices[: need.whole] if need.whole else gpu_indices[:1] if need.frac else ()
    if not (need.whole or need.frac) or not free.gpus:
        return ()
    picked = free.pick(need)
    if picked:
        return picked
    by_freest = sorted(range(len(free.gpus)), key=lambda i: (-free.gpus[i], i))
    return tuple(by_freest[: max(need.whole, 1)])


def _gang_plan(states: Sequence[Free], need: Need, m: int) -> list[tuple[Free, int]] | None:
    """Where ``m`` members go: one member first fit; a gang in the topology domain needing the
    fewest nodes (first by name on ties), else over all nodes, most members per node first."""
    if m == 1:
        return next(([(f, 1)] for f in states if f.hosts(need, 1)), None)
    hosting = [(f.hosts(need, m), i, f) for i, f in enumerate(states)]
    hosting = [item for item in hosting if item[0] > 0]
    if sum(h for h, _, _ in hosting) < m:
        return None

    def greedy(items: list[tuple[int, int, Free]]) -> list[tuple[Free, int]]:
        plan: list[tuple[Free, int]] = []
        left = m
        for h, _, f in sorted(items, key=lambda t: (-t[0], t[1])):
            plan.append((f, min(h, left)))
            left -= min(h, left)
            if left == 0:
                break
        return plan

    domains: dict[str, list[tuple[int, int, Free]]] = {}
    for item in hosting:
        if item[2].domain is not None:
            domains.setdefault(item[2].domain, []).append(item)
    best: tuple[int, str] | None = None
    for domain in sorted(domains):
        if sum(h for h, _, _ in domains[domain]) >= m:
            length = len(greedy(domains[domain]))
            if best is None or length < best[0]:
                best = (length, domain)
    return greedy(domains[best[1]] if best is not None else hosting)


# -- the cycle ------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Blocked:
    partitions: list[str]  # eligible (statically able to hold all members)
    usable: list[str]
    matched: int
    unknown: str | None


class Reference:
    """One cycle over ``snapshot`` at ``now``; ``answer()`` runs it."""

    def __init__(self, snapshot: Snapshot, policy: Policy, now: float) -> None:
        self.snap, self.policy, self.now = snapshot, policy, now
        label = policy.partition_label
        self.nodes: dict[str, Node] = {name: snapshot.nodes[name] for name in sorted(snapshot.nodes)}
        self.partitions: tuple[PartitionInfo, ...] = build_partitions(self.nodes, policy)
        self.part = {p.name: p for p in self.partitions}
        self.product = {
            n: node_product(node, label) if node_has_gpu(node) else None for n, node in self.nodes.items()
        }
        self.cluster = cluster_capacity(self.nodes)
        self.empty = {name: self._empty(node) for name, node in self.nodes.items()}
        self.live: dict[str, Free] = {name: f.copy() for name, f in self.empty.items()}
        self.charges: dict[PodKey, tuple[str, Need, tuple[int, ...]]] = {}
        bound: dict[str, list[tuple[bool, str, str, PodKey]]] = {}
        for key, pod in snapshot.pods.items():
            if pod.node_name in self.nodes and pod.phase not in TERMINAL:
                bound.setdefault(pod.node_name, []).append(
                    (not pod.gpu_indices, pod.namespace, pod.name, key)
                )
        for name, pods in bound.items():
            for *_, key in sorted(pods):
                pod = snapshot.pods[key]
                need = Need.of(pod.requests)
                indices = _held_indices(self.live[name], pod.gpu_indices, need)
                self.live[name].charge(need, indices)
                self.charges[key] = (name, need, indices)
        #: per node: (time, need, indices) given back at time; (start, end, need, indices, job) reserved
        self.releases: dict[str, list[tuple[float, Need, tuple[int, ...]]]] = {}
        self.reservations: dict[str, list[tuple[float, float, Need, tuple[int, ...], JobKey]]] = {}
        self.made: list[tuple[JobKey, float, float, tuple[str, ...]]] = []
        self.budget = backfill.CYCLE_SEARCH_BUDGET
        self.tree = QueueTree(policy)
        self._matching: dict[tuple[object, ...], list[str]] = {}
        self._eligible: dict[tuple[object, ...], _Blocked] = {}

    @staticmethod
    def _empty(node: Node) -> Free:
        a = node.allocatable
        gpus = [1000] * min(max(a.gpu // 1000, 0), MAX_GPUS)
        return Free(node.name, a.cpu, a.memory, dict(a.extended), gpus, topology_domain(node))

    # -- static matching

    def matching(self, job: Job, partition: str) -> list[str]:
        """The partition's nodes (sorted by name) that the job's selector, GPU models and tolerations
        allow: static for the cycle, so worked out once per distinct (constraints, partition)."""
        key = (job.node_selector, job.gpu_models, job.tolerations, partition)
        found = self._matching.get(key)
        if found is None:
            found = self._matching[key] = self._match(job, partition)
        return found

    def _match(self, job: Job, partition: str) -> list[str]:
        out = []
        for name in self.part[partition].nodes:
            node = self.nodes[name]
            if any(node.labels.get(k) != v for k, v in job.node_selector):
                continue
            if job.gpu_models and self.product[name] not in job.gpu_models:
                continue
            if any(
                t.effect in BLOCKING and not any(tol.tolerates(t) for tol in job.tolerations)
                for t in node.taints
            ):
                continue
            out.append(name)
        return out

    def eligible(self, job: Job, need: Need, m: int) -> _Blocked:
        """Which partitions could hold all members on empty nodes (and on schedulable ones):
        static for the cycle, so worked out once per distinct (constraints, partition, request)."""
        key = (job.node_selector, job.gpu_models, job.tolerations, job.partition, need, m)
        found = self._eligible.get(key)
        if found is None:
            found = self._eligible[key] = self._eligible_now(job, need, m)
        return found

    def _eligible_now(self, job: Job, need: Need, m: int) -> _Blocked:
        if job.partition is not None and job.partition not in self.part:
            return _Blocked([], [], 0, job.partition)
        names = [job.partition] if job.partition is not None else [p.name for p in self.partitions]
        eligible, usable, matched = [], [], 0
        for pname in names:
            every = self.matching(job, pname)
            matched += len(every)
            hosts = [(self.empty[n].hosts(need, m), self.nodes[n].schedulable) for n in every]
            if sum(h for h, _ in hosts) >= m:
                eligible.append(pname)
                if sum(h for h, up in hosts if up) >= m:
                    usable.append(pname)
        return _Blocked(eligible, usable, matched, None)

    # -- a node's future

    def timeline(self, node: str) -> list[tuple[float, int, Need, tuple[int, ...]]]:
        """The node's future as (time, sign, need, indices), sorted by time: a release gives back
        (sign -1), a reservation takes (1) from its start and gives back at its end."""
        out = [(when, -1, need, indices) for when, need, indices in self.releases.get(node, ())]
        for start, end, need, indices, _ in self.reservations.get(node, ()):
            if start < end:  # (one that ends before it starts is never in force)
                out.append((start, 1, need, indices))
                if end < INF:
                    out.append((end, -1, need, indices))
        out.sort(key=lambda e: e[0])
        return out

    def avail(self, node: str, t0: float, t1: float) -> Free:
        """What the node can give throughout [t0, t1): its state at t0, lowered to its state at each
        of its change times before t1 (one sweep over its timeline). Unreserved and from now on,
        that is the live state itself (a node without reservations only gains with time)."""
        if node not in self.reservations and t0 <= self.now:
            return self.live[node]
        state = self.live[node].copy()
        events = self.timeline(node)
        k = 0
        while k < len(events) and events[k][0] <= t0:
            _, sign, need, indices = events[k]
            state.charge(need, indices, sign)
            k += 1
        if node not in self.reservations:
            return state  # only releases: it never drops later
        out = state.copy()
        while k < len(events) and events[k][0] < t1:
            when = events[k][0]
            while k < len(events) and events[k][0] == when:
                _, sign, need, indices = events[k]
                state.charge(need, indices, sign)
                k += 1
            out.lower_to(state)
        return out

    def change_points(self, node: str) -> list[float]:
        return sorted({e[0] for e in self.timeline(node)})

    # -- placing

    def try_place(self, nodes: list[str], need: Need, m: int, window_end: float) -> list[Member] | None:
        # a node where not even one member fits live fits none under reservations (what they leave
        # is never more than live): only the others' reserved windows are worked out
        states: list[Free] = []
        for n in nodes:
            live = self.live[n]
            if not live.hosts(need, 1):
                continue
            f = self.avail(n, self.now, window_end) if n in self.reservations else live
            if m == 1 and f.hosts(need, 1):
                states = [f]
                break
            states.append(f)
        plan = _gang_plan(states, need, m)
        if plan is None:
            return None
        members: list[Member] = []
        for f, count in plan:
            live = self.live[f.name]
            for _ in range(count):
                indices = f.pick(need)
                f.charge(need, indices)
                if f is not live:
                    live.charge(need, indices)
                members.append((f.name, indices))
        return members

    def delayed(
        self, nodes: set[str], t1: float, need: Need, m: int
    ) -> tuple[JobKey, float, float, tuple[str, ...]] | None:
        """The first reservation (made first) in force before ``t1`` that starting now would eat into."""
        for res in self.made:
            _, start, end, res_nodes = res
            if not (start < t1 and end > self.now):
                continue
            for node in res_nodes:
                if node in nodes:
                    wanted = self.live[node].hosts(need, m)
                    if wanted > 0 and self.avail(node, self.now, t1).hosts(need, m) < wanted:
                        return res
        return None

    def earliest(
        self, nodes: list[str], need: Need, m: int, until: float
    ) -> tuple[float, list[Member]] | None:
        """The first future change time before ``until`` at which the members fit on ``nodes`` for good."""
        if (not self.releases and not self.reservations) or self.budget <= 0:
            return None
        if m == 1:
            return self._earliest_single(nodes, need, until)
        events: dict[float, list[tuple[str, int]]] = {}
        for n in nodes:
            if n in self.reservations:
                for p in self.change_points(n):
                    if p > self.now:
                        events.setdefault(p, []).append((n, 1))
            else:
                for when, _, _ in self.releases.get(n, ()):
                    events.setdefault(when, []).append((n, 1))
        state: dict[str, Free] = {}
        hosts: dict[str, int] = {}
        for n in nodes:  # (a node hosting none live hosts none now; its state is read at its own events)
            hosts[n] = 0
            if self.live[n].hosts(need, 1):
                state[n] = self.avail(n, self.now, INF)
                hosts[n] = state[n].hosts(need, m)
        for steps, t in enumerate(sorted(t for t in events if t < until)):
            if steps >= backfill.MAX_SHADOW_STEPS or self.budget <= 0:
                break
            for n, count in events[t]:
                self.budget -= count
                state[n] = self.avail(n, t, INF)
                hosts[n] = state[n].hosts(need, m)
            if sum(hosts.values()) >= m:
                plan = _gang_plan([state[n] for n in nodes if hosts[n]], need, m)
                assert plan is not None
                members: list[Member] = []
                for f, count in plan:
                    scratch = f.copy()
                    for _ in range(count):
                        indices = scratch.pick(need)
                        scratch.charge(need, indices)
                        members.append((f.name, indices))
                return t, members
        return None

    def _earliest_single(
        self, nodes: list[str], need: Need, until: float
    ) -> tuple[float, list[Member]] | None:
        best: tuple[float, Free] | None = None
        bound = until
        for n in nodes:
            reserved = n in self.reservations
            if reserved:
                times = [p for p in self.change_points(n) if p > self.now]
            else:
                times = sorted({when for when, _, _ in self.releases.get(n, ())})
                if not times or times[0] >= bound:
                    continue
                if self.budget <= 0:
                    continue
            walked = 0
            for t in times:
                if t >= bound or (not reserved and walked >= self.budget):
                    break
                walked += 1
                f = self.avail(n, t, INF)
                if f.hosts(need, 1):
                    best, bound = (t, f), t
                    break
            if not reserved:
                self.budget -= walked
        if best is None:
            return None
        start, f = best
        return start, [(f.name, f.copy().pick(need))]

    # -- the pass

    def answer(self) -> Answer:
        snap, tree, now, policy = self.snap, self.tree, self.now, self.policy
        jobs = sorted(snap.jobs.values(), key=lambda j: j.key)
        pending = [j for j in jobs if j.state in PENDING_STATES]
        path = {j.key: tree.resolve(j.queue) for j in jobs}
        for job in jobs:
            if job.state in ACTIVE_STATES:
                tree.add_used(path[job.key], job.per_member.scale(job.members - len(job.pending_pods)))
                if not job.time_limit:
                    continue  # no limit: it never releases (no reservation may count on it)
                end = (job.start_time if job.start_time is not None else now) + job.time_limit
                for pod in job.pods:
                    if pod in self.charges:
                        node, need, indices = self.charges[pod]
                        self.releases.setdefault(node, []).append(
                            (end if end > now else now + 1.0, need, indices)
                        )
        tree.compute_normalized_shares(self.cluster)
        fairshare = {p: tree.fairshare(p, self.cluster)[2] for p in tree.nodes}
        values = [pc.value for pc in snap.priority_classes.values()]
        values += [j.priority_value for j in jobs if j.priority_value is not None]
        inputs = PriorityInputs(
            max((p.spec.job_factor for p in self.partitions), default=0), max(values, default=0)
        )

        need_of: dict[JobKey, Need] = {}
        elig: dict[JobKey, _Blocked] = {}
        queues: dict[int, dict[str, list[tuple[int, float, str, JobKey]]]] = {}
        for job in pending:
            need = need_of[job.key] = Need.of(job.per_member, 1 if job.one_per_node else 0)
            e = elig[job.key] = self.eligible(job, need, max(len(job.pending_pods), 1))
            names = sorted({n for p in e.partitions for n in self.part[p].nodes})
            up_nodes = [self.nodes[n] for n in names if self.nodes[n].schedulable]
            prio = breakdown(
                job,
                now=now,
                weights=policy.weights,
                inputs=inputs,
                fairshare=fairshare[path[job.key]],
                tier=max((self.part[p].spec.job_factor for p in e.partitions), default=0),
                gpus_in_partitions=sum(n.allocatable.gpu for n in up_nodes),
                cpus_in_partitions=sum(n.allocatable.cpu for n in up_nodes),
            )
            tier = max((self.part[p].spec.evaluation_tier for p in e.partitions), default=1)
            entry = (-prio.total, job.submit_time, job.name, job.key)
            queues.setdefault(tier, {}).setdefault(path[job.key], []).append(entry)

        self.order: list[JobKey] = []
        self.placements: list[
            tuple[JobKey, str | None, bool, tuple[tuple[PodKey, str, tuple[int, ...]], ...]]
        ] = []
        self.plans: dict[JobKey, JobAnswer] = {}
        self.has_blocked: set[str] = set()
        self.first_blocked: dict[str, str] = {}
        self.strict_blocked: dict[str, str] = {}
        self.tried = 0
        self.deferred: list[tuple[JobKey, list[str]]] = []
        for tier in sorted(queues, reverse=True):
            by_queue = {q: sorted(entries) for q, entries in queues[tier].items()}
            while by_queue:
                # the queue with the lowest DRF share now (a parent's share moves with its
                # children's starts: core.py keeps each queue's share from its last turn, which
                # differs only when jobs name a queue with children; see the xfail test)
                q = min(by_queue, key=lambda p: (tree.drf_share(p, self.cluster), p))
                key = by_queue[q].pop(0)[-1]
                if not by_queue[q]:
                    del by_queue[q]
                self.consider(snap.jobs[key], path[key], elig[key], need_of[key])
        for key, usable in self.deferred:  # resource waits, worded on the final state
            job = snap.jobs[key]
            up = any(self.nodes[n].schedulable for p in usable for n in self.matching(job, p))
            kind = "core:resources" if up else "core:nodes"
            self.plans[key] = self._plan(key, reason=(ReasonCode.RESOURCES, kind, ""))
        return Answer(tuple(self.order), tuple(self.placements), dict(self.plans))

    def _plan(self, key: JobKey, **changes: Any) -> JobAnswer:
        return replace(self.plans[key], **changes)

    def settled(self, job: Job, path: str, e: _Blocked, need: Need) -> Reason | None:
        """Why the job is not even tried (held, closed, down, over quota, gated, ...), or None."""
        m = len(job.pending_pods)
        if job.state == JobState.HELD:
            return explain.held(job)
        closed = self.tree.closed(path)
        if closed is not None:
            return explain.queue_closed(closed)
        up = [p for p in e.partitions if self.part[p].spec.state == PartitionState.UP]
        if e.partitions and not up:
            return explain.partitions_down([(p, str(self.part[p].spec.state)) for p in e.partitions])
        over = self.tree.over_max(path, job.per_member.scale(m))
        if over is not None:
            queue, resource, used, cap = over
            return explain.quota(queue, resource, used, cap, job.per_member.scale(m).get(resource))
        if job.scheduling_gates:
            return explain.gated(job)
        if m == 0 or m + job.running_members < job.min_members:
            return explain.gang_incomplete(job)
        if e.unknown is not None:
            return explain.unknown_partition(e.unknown)
        if not e.partitions:
            return Reason(ReasonCode.CONSTRAINTS, "core:constraints", "")
        if not any(p in e.usable for p in up):
            return explain.unavailable(up)
        return None

    def consider(self, job: Job, path: str, e: _Blocked, need: Need) -> None:
        key, now, m = job.key, self.now, len(job.pending_pods)
        held = job.state == JobState.HELD
        order = None if held else len(self.order)
        if not held:
            self.order.append(key)
        partition = ",".join(e.partitions) or job.partition
        self.plans[key] = JobAnswer(order, partition, None, (), None)
        why = self.settled(job, path, e, need)
        if why is not None:
            self.plans[key] = self._plan(key, reason=_reason(why))
            return
        up = [p for p in e.partitions if self.part[p].spec.state == PartitionState.UP]
        usable = [self.part[p] for p in up if p in e.usable]
        if not (need.whole or need.frac):
            usable.sort(
                key=lambda p: (-p.spec.evaluation_tier, -p.spec.priority_tier, not p.spec.cpu_only, p.name)
            )
        names = [p.name for p in usable]
        nodes = {p: [n for n in self.matching(job, p) if self.nodes[n].schedulable] for p in names}
        limit = job.time_limit
        window_end = now + limit if limit else INF
        allowed = names if self.policy.backfill else [p for p in names if p not in self.strict_blocked]
        for pname in allowed:
            members = self.try_place(nodes[pname], need, m, window_end)
            if members is None:
                continue
            assignments = tuple(
                (pod, n, idx) for pod, (n, idx) in zip(sorted(job.pending_pods), members, strict=False)
            )
            self.placements.append((key, pname, pname in self.has_blocked, assignments))
            self.plans[key] = self._plan(key, partition=pname, eta=now)
            self.tree.add_used(path, job.per_member.scale(m))
            if limit:
                for n, indices in members:
                    self.releases.setdefault(n, []).append((now + limit, need, indices))
            return
        # blocked: why, then (while the depth allows) a reservation
        live_fit = next((p for p in names if _gang_plan([self.live[n] for n in nodes[p]], need, m)), None)
        if live_fit is not None:
            if live_fit not in allowed:
                why = explain.priority_strict(live_fit, self.strict_blocked[live_fit])
            else:
                res = self.delayed(set(nodes[live_fit]), window_end, need, m)
                if res is not None:
                    why = explain.priority_reservation("/".join(res[0][::2]), res[1], res[3], now)
                else:
                    why = explain.priority_strict(live_fit, "reserved work")
            self.plans[key] = self._plan(key, reason=_reason(why))
        else:
            ahead = next((p for p in names if p in self.first_blocked), None)
            if ahead is not None:
                self.plans[key] = self._plan(
                    key, reason=_reason(explain.priority_behind(ahead, self.first_blocked[ahead]))
                )
            else:
                self.deferred.append((key, names))
        for pname in names:
            self.has_blocked.add(pname)
            self.first_blocked.setdefault(pname, job.id)
            if not self.policy.backfill:
                self.strict_blocked.setdefault(pname, job.id)
        if self.tried >= self.policy.reservation_depth:
            return
        self.tried += 1
        best: tuple[float, str, list[Member]] | None = None
        for pname in names:
            found = self.earliest(nodes[pname], need, m, best[0] if best else INF)
            if found is not None and (best is None or found[0] < best[0]):
                best = (found[0], pname, found[1])
        if best is not None:
            start, pname, members = best
            end = start + limit if limit else INF
            for n, indices in members:
                self.reservations.setdefault(n, []).append((start, end, need, indices, key))
            reserved = tuple(sorted({n for n, _ in members}))
            self.made.append((key, start, end, reserved))
            self.plans[key] = self._plan(key, eta=start, reserved_nodes=reserved)


def reference(snapshot: Snapshot, policy: Policy, now: float, *, pause_gc: bool = True) -> Answer:
    """The reference cycle's answer; the cyclic GC paused while it runs (as ``core.schedule`` does)
    unless ``pause_gc`` is False."""
    paused = pause_gc and gc.isenabled()
    if paused:
        gc.disable()
    try:
        return Reference(snapshot, policy, now).answer()
    finally:
        if paused:
            gc.enable()
