"""EASY backfill on a per-node time/resource profile (SCHEDULERS.md §8.3).

Why a profile and not only "shadow time + extra nodes": with reservations for up to
``reservation_depth`` blocked jobs, later reservations and backfilled jobs must respect all earlier
ones, and GPU sharing means "extra" is per GPU index, not per node. The profile keeps, per node,
the running pods that end at a known time (their job's start + time limit) and the reservations
made so far (from their shadow time to their end, or forever without a limit). The free state of
a node at time t is

    live free now + Σ releases up to t − Σ reservations active at t

and a job may use a node over [t0, t1) only what is free at *every* moment of that window: the
componentwise minimum over the node's change points in the window. A lower job that starts now
with that rule cannot delay any reservation, which is the EASY guarantee; "ends before the shadow
time" and "only uses the extra resources" are the two special cases of it.

Nodes without reservations are the common case and cost nothing extra: their free state only
grows with time, so the minimum over any window starting now is the live state itself.

Releases of jobs already past their limit are assumed one second from now (they are still
running, so they cannot free anything *now*). Jobs without a time limit never release, so a job
that only running work without limits could make room for gets no reservation and no ETA.

What the searches derive is kept per node version (``touch``) for the rest of the cycle: a
node's change stream, its state after its first k releases with host counts per request
shape, and a reserved node's availability from each change point on. At 10k nodes every
search otherwise redid the same work for the same nodes (the P6 profile, bench/README.md).
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter

from hpctop.model.objects import JobKey
from hpctop.scheduling.placement import NodeFree, Request, choose, plan_hosted

INF = math.inf
#: distinct future change times examined when searching one job's shadow time (a bf_window of sorts)
MAX_SHADOW_STEPS = 4000
#: node events all shadow-time searches of one cycle may examine (like Slurm's bf_max_time, but counted,
#: so the result stays deterministic); when it runs out, the remaining blocked jobs get no ETA
CYCLE_SEARCH_BUDGET = 150_000
#: a member count no gang reaches: ``hosts(req, UNCAPPED)`` is how many members of ``req`` a state
#: hosts at all, and ``hosts(req, m) == min(m, hosts(req, UNCAPPED))`` for any ``m``
UNCAPPED = 1 << 40


def _when(entry: tuple[float, Request, tuple[int, ...]]) -> float:
    return entry[0]


@dataclass(frozen=True, slots=True)
class Reservation:
    job: JobKey
    start: float
    end: float
    partition: str
    nodes: tuple[str, ...]


class _FirstStep:
    """``Profile.first_step``'s kept state for one node list and request (any member count)."""

    __slots__ = (
        "charged",
        "counts",
        "current",
        "events",
        "fit",
        "hosted",
        "hosts",
        "nodes",
        "nxt",
        "seen",
        "t1",
    )

    def __init__(self, nodes: Sequence[str], t1: float, seen: int) -> None:
        self.nodes = nodes
        self.t1 = t1
        self.seen = seen  # the touch log's length when last patched
        self.fit: set[str] = set()
        #: node -> members it hosts after t1 with no member cap (only > 0): ``hosts(req, UNCAPPED)``
        self.hosts: dict[str, int] = {}
        self.counts: dict[int, int] = {}  # such a host count -> how many nodes have it
        self.hosted: set[int] = set()  # the positions of the nodes in ``hosts``
        self.current: dict[str, NodeFree] = {}  # node -> its state after t1 (fitting or changed at t1)
        self.events: dict[int, int] = {}  # node position -> its events at t1
        self.nxt: list[tuple[float, int, int] | None] = [None] * len(nodes)  # its next heap entry
        self.charged = 0  # events at t1, charged to the budget by the step

    def room(self, m: int) -> int:
        """How many members of a gang of ``m`` the nodes host after t1 (the sum of ``hosts(req, m)``)."""
        return sum(count * (h if h < m else m) for h, count in self.counts.items())

    def capped(self, m: int) -> tuple[dict[str, int], int]:
        """Each node's hosts after t1 for a gang of ``m`` (``hosts(req, m)``, only > 0) and their sum."""
        return {name: h if h < m else m for name, h in self.hosts.items()}, self.room(m)

    def items(self, m: int) -> list[tuple[int, int, NodeFree]]:
        """(``hosts(req, m)``, position, state after t1) of the hosting nodes in node order
        (``placement.plan_hosted``'s input)."""
        nodes, hosts, current = self.nodes, self.hosts, self.current
        out: list[tuple[int, int, NodeFree]] = []
        for k in sorted(self.hosted):
            name = nodes[k]
            h = hosts[name]
            out.append((h if h < m else m, k, current[name]))
        return out


class Profile:
    """Future releases and reservations per node, on top of the live free state."""

    def __init__(self, now: float, live: dict[str, NodeFree]) -> None:
        self.now = now
        self.live = live
        self.releases: dict[str, list[tuple[float, Request, tuple[int, ...]]]] = {}
        self.reservations: dict[str, list[tuple[float, float, Request, tuple[int, ...], JobKey]]] = {}
        self.made: list[Reservation] = []
        self.budget = CYCLE_SEARCH_BUDGET
        self._version: dict[str, int] = {}
        self._avail: dict[tuple[str, float, float], tuple[int, NodeFree]] = {}
        self._released: dict[str, tuple[int, list[NodeFree], list[dict[int, int]]]] = {}
        self._shapes: dict[tuple[Request, int], int] = {}
        self._groups: dict[str, tuple[int, list[tuple[float, int, int]]]] = {}
        self._suffix: dict[str, tuple[int, list[float], list[NodeFree]]] = {}
        self._touched: list[str] = []  # every touch, in order (what cached streams must redo)
        self._stream_of: dict[str, tuple[int, list[tuple[float, int, int]] | None]] = {}
        #: per node set asked by ``delayed`` (by id; the set is kept with it): how many of ``made``
        #: were sorted and, in the order made, those reaching the set with their nodes in it
        self._made_on: dict[int, tuple[Collection[str], int, list[tuple[Reservation, tuple[str, ...]]]]] = {}
        self._first: dict[tuple[int, int], _FirstStep] = {}
        self._single: dict[str, tuple[int, list[float], dict[int, int]]] = {}
        self._streams: dict[
            int,
            tuple[
                Sequence[str],
                list[list[tuple[float, int, int]] | None],
                list[float],
                dict[str, int],
                int,
            ],
        ] = {}

    def touch(self, node: str) -> None:
        """The node's live state changed (a placement): cached windows of it are stale."""
        self._version[node] = self._version.get(node, 0) + 1
        self._touched.append(node)

    def _stream(self, node: str) -> list[tuple[float, int, int]] | None:
        """The node's future change times for a search: (time, releases given back by then, events).

        Kept per node version (shared, read only): the node lists of a partition's request
        signatures overlap, and each new list asked for every node's stream again.
        """
        version = self._version.get(node, 0)
        found = self._stream_of.get(node)
        if found is not None and found[0] == version:
            return found[1]
        stream: list[tuple[float, int, int]] | None = None
        if node in self.reservations:
            now = self.now
            stream = [(p, 0, 1) for p in self.change_points(node) if p > now] or None
        elif node in self.releases:
            stream = self.release_groups(node) or None
        self._stream_of[node] = (version, stream)
        return stream

    def streams(self, nodes: Sequence[str]) -> tuple[list[list[tuple[float, int, int]] | None], list[float]]:
        """Every node's change stream and first time (``INF`` without one), kept per node list.

        Why: each backfill search walked all nodes of its partition to find their next change
        (2,500 nodes x ~170 searches at 10k nodes). The lists are kept per node list (the
        matching lists live as long as the cycle) and only the nodes touched since are redone.
        """
        found = self._streams.get(id(nodes))
        log = self._touched
        if found is None or found[0] is not nodes:
            streams = [self._stream(name) for name in nodes]
            firsts = [INF if st is None else st[0][0] for st in streams]
            position = {name: k for k, name in enumerate(nodes)}
            found = self._streams[id(nodes)] = (nodes, streams, firsts, position, len(log))
            return streams, firsts
        _, streams, firsts, position, seen = found
        if seen < len(log):
            for name in set(log[seen:]):
                k = position.get(name)
                if k is not None:
                    st = streams[k] = self._stream(name)
                    firsts[k] = INF if st is None else st[0][0]
            self._streams[id(nodes)] = (nodes, streams, firsts, position, len(log))
        return streams, firsts

    def released(self, node: str, count: int) -> NodeFree:
        """The live state of ``node`` plus its first ``count`` releases (``count`` >= 1); shared, read only.

        Why: the profile at 10k nodes showed every backfill search re-cloning and re-charging
        the same nodes for the same releases (overdue pods all release at now + 1 s, so each
        search starts with one group of ~2,000 events). The states are kept per node version
        (``touch``), so a placement or a new release on the node drops them.
        """
        version = self._version.get(node, 0)
        found = self._released.get(node)
        if found is None or found[0] != version:
            found = self._released[node] = (version, [], [])
        states = found[1]
        if len(states) < count:
            mine = self.releases[node]
            while len(states) < count:
                nf = (states[-1] if states else self.live[node]).clone()
                _, req, indices = mine[len(states)]
                nf.charge(req, indices, -1)
                states.append(nf)
                found[2].append({})
        return states[count - 1]

    def release_groups(self, node: str) -> list[tuple[float, int, int]]:
        """The node's release times as (time, releases up to and at it, releases at it), kept per version.

        A search takes a node's releases at one time together, so it needs one heap entry per
        distinct time rather than per release (overdue pods of a node all end at now + 1 s).
        """
        version = self._version.get(node, 0)
        found = self._groups.get(node)
        if found is not None and found[0] == version:
            return found[1]
        groups: list[tuple[float, int, int]] = []
        for i, (when, _req, _indices) in enumerate(self.releases.get(node, ())):
            if groups and groups[-1][0] == when:
                groups[-1] = (when, i + 1, groups[-1][2] + 1)
            else:
                groups.append((when, i + 1, 1))
        self._groups[node] = (version, groups)
        return groups

    def shape(self, req: Request, m: int) -> int:
        """A small number standing for (req, m) in this cycle (cheaper to hash than the request)."""
        return self._shapes.setdefault((req, m), len(self._shapes))

    def released_hosts(self, node: str, count: int, shape: int, req: Request, m: int) -> tuple[NodeFree, int]:
        """``released(node, count)`` and its ``hosts(req, m)``, remembered with the state; ``shape``
        names (req, m)."""
        found = self._released.get(node)
        if found is None or found[0] != self._version.get(node, 0) or len(found[1]) < count:
            self.released(node, count)
            found = self._released[node]
        state = found[1][count - 1]
        memo = found[2][count - 1]
        h = memo.get(shape)
        if h is None:
            h = memo[shape] = state.hosts(req, m)
        return state, h

    def first_step(
        self,
        nodes: Sequence[str],
        streams: list[list[tuple[float, int, int]] | None],
        firsts: list[float],
        req: Request,
        fitting: Iterable[str],
    ) -> _FirstStep:
        """A gang search's state after its first change time, kept per (node list, request).

        Why: at 10k nodes every search of a cycle starts with the same first time (the overdue
        pods all release at now + 1 s) and gives back ~2,000 nodes' releases there, one
        ``released_hosts`` each, although only the nodes touched since the last search of the
        same node list and request changed (the P6 profile, bench/README.md). What a node adds
        after that first time depends on the node alone (its stream, its live state, whether it
        is among the fitting nodes: the index changes only with a placement, which touches the
        node), so the sums are patched from the touch log like ``streams``; a changed first
        time rebuilds them. The search then continues from its second time as before, having
        charged the same events to the budget and counted the same step.

        The host counts are kept without the member cap (``UNCAPPED``; ``_FirstStep.capped`` caps
        them): gangs of 2, 4, 8 and 16 members of one request shape share one state, where at
        10k x 50k each size rebuilt it over ~2,500 nodes (23 rebuilds for 7 node lists and requests).
        """
        t1 = min(firsts, default=INF)
        shape = self.shape(req, UNCAPPED)
        key = (id(nodes), shape)
        log = self._touched
        found = self._first.get(key)
        fit = set(fitting)
        names: Iterable[int]
        if found is None or found.nodes is not nodes or found.t1 != t1:
            found = self._first[key] = _FirstStep(nodes, t1, len(log))
            names = range(len(nodes))
        else:
            # the nodes touched since, and any whose place among the fitting nodes changed
            changed = fit.symmetric_difference(found.fit)
            if found.seen == len(log) and not changed:
                return found
            changed.update(log[found.seen :])
            position = self._streams[id(nodes)][3]
            names = sorted({position[n] for n in changed if n in position})
            found.seen = len(log)
        found.fit = fit
        now = self.now
        hosts, counts, current, hosted = found.hosts, found.counts, found.current, found.hosted
        events, nxt = found.events, found.nxt
        for k in names:
            name = nodes[k]
            was = hosts.pop(name, 0)
            if was:
                counts[was] -= 1
                hosted.discard(k)
            current.pop(name, None)
            found.charged -= events.pop(k, 0)
            stream = streams[k]
            if stream is not None and stream[0][0] == t1:
                _, count, ev = stream[0]
                events[k] = ev
                found.charged += ev
                if count:
                    nf, h = self.released_hosts(name, count, shape, req, UNCAPPED)
                else:
                    points, mins = self.suffix(name)
                    nf = mins[bisect.bisect_right(points, now)]  # ``avail(name, t1, INF)``
                    h = nf.hosts(req, UNCAPPED)
                nxt[k] = (stream[1][0], k, 1) if len(stream) > 1 else None
            else:
                nxt[k] = (stream[0][0], k, 0) if stream is not None else None
                if name not in fit:
                    continue
                nf = self.avail(name, now, INF) if name in self.reservations else self.live[name]
                h = nf.hosts(req, UNCAPPED)
            current[name] = nf
            if h:
                hosts[name] = h
                counts[h] = counts.get(h, 0) + 1
                hosted.add(k)
        return found

    def single_fit(self, node: str, shape: int, req: Request) -> tuple[list[float], int]:
        """The change times a one-member search walks on ``node`` (in order) and the index of the
        first after which one member of ``req`` (``shape``) fits for good (-1: never).

        An unreserved node walks its release times (its state after each: ``released``); a
        reserved one its change points after now (its minima from each on: ``suffix``). Kept
        per node version, like the states themselves.
        """
        version = self._version.get(node, 0)
        found = self._single.get(node)
        if found is None or found[0] != version:
            if node in self.reservations:
                points, _ = self.suffix(node)
                times = points[bisect.bisect_right(points, self.now) :]
            else:
                times = [when for when, _, _ in self.release_groups(node)]
            found = self._single[node] = (version, times, {})
        fits = found[2]
        fit = fits.get(shape)
        if fit is None:
            fit = -1
            for i in range(len(found[1])):
                if self.single_state(node, i).fits_one(req):
                    fit = i
                    break
            fits[shape] = fit
        return found[1], fit

    def single_state(self, node: str, i: int) -> NodeFree:
        """The state a one-member search sees on ``node`` after the ``i``-th time of its walk (read only)."""
        if node in self.reservations:
            points, mins = self.suffix(node)
            return mins[bisect.bisect_right(points, self.now) + i]  # ``avail(node, points[.], INF)``
        return self.released(node, self.release_groups(node)[i][1])

    def release_time(self, end: float) -> float:
        return end if end > self.now else self.now + 1.0

    def add_release(self, node: str, end: float, req: Request, indices: tuple[int, ...]) -> None:
        # kept sorted by time: searches walk a node's releases in order and stop early; a new list,
        # never the old one changed (a cycle starts from the kept lists themselves: ``releases``)
        mine = list(self.releases.get(node, ()))
        bisect.insort(mine, (self.release_time(end), req, indices), key=_when)
        self.releases[node] = mine
        self.touch(node)

    def add_releases(self, per_node: dict[str, list[tuple[float, Request, tuple[int, ...]]]]) -> None:
        """``add_release`` for many (end, req, indices) at once: one sort per node, not an insort each.

        Used for the running pods at the start of a cycle (thousands on the demo). The sort is
        stable like ``insort``; releases of a node at the same time are applied together by
        every reader, so their relative order never matters anyway.
        """
        for node, entries in per_node.items():
            timed = [(self.release_time(end), req, indices) for end, req, indices in entries]
            timed = self.releases.get(node, []) + timed
            timed.sort(key=_when)
            self.releases[node] = timed
            self.touch(node)

    def add_reservation(
        self,
        job: JobKey,
        partition: str,
        start: float,
        end: float,
        members: Sequence[tuple[str, tuple[int, ...]]],
        req: Request,
    ) -> Reservation:
        for node, indices in members:
            self.reservations.setdefault(node, []).append((start, end, req, indices, job))
            self.touch(node)
        res = Reservation(job, start, end, partition, tuple(sorted({n for n, _ in members})))
        self.made.append(res)
        return res

    def reserved(self, node: str) -> bool:
        return node in self.reservations

    def delayed(self, nodes: Collection[str], t1: float, req: Request, m: int) -> Reservation | None:
        """The reservation a job fitting live would delay by starting now and running until ``t1``.

        That is a reservation in force during [now, t1) on a node where fewer of the job's
        members fit under the reservations than live (the node the job would take from it); the
        earliest-made such one (reservations are made in evaluation order, so it is the
        highest-priority job delayed). Not just any reservation on the same nodes: one that
        starts after ``t1``, or sits on a node the job does not need, is not delayed by it.

        The reservations reaching ``nodes`` are kept per node set (``made`` only grows), so a
        call walks those, not every reservation's every node (2,206 calls at 10k x 50k).
        """
        made = self.made
        found = self._made_on.get(id(nodes))
        if found is None or found[0] is not nodes:
            found = (nodes, 0, [])
        if found[1] < len(made):
            reaching = found[2]
            for res in made[found[1] :]:
                mine = tuple(node for node in res.nodes if node in nodes)
                if mine:
                    reaching.append((res, mine))
            found = (nodes, len(made), reaching)
            self._made_on[id(nodes)] = found
        t0 = self.now
        taken: dict[str, bool] = {}  # node -> whether the reservations there leave the job fewer hosts
        for res, mine in found[2]:  # in the order made: the first hit is the one to name
            if not (res.start < t1 and res.end > t0):
                continue
            for node in mine:
                hit = taken.get(node)
                if hit is None:
                    wanted = self.live[node].hosts(req, m)
                    hit = taken[node] = wanted > 0 and self.avail(node, t0, t1).hosts(req, m) < wanted
                if hit:
                    return res
        return None

    def free_at(self, node: str, t: float) -> NodeFree:
        nf = self.live[node].clone()
        for when, req, indices in self.releases.get(node, ()):
            if when <= t:
                nf.charge(req, indices, -1)
        for start, end, req, indices, _job in self.reservations.get(node, ()):
            if start <= t < end:
                nf.charge(req, indices)
        return nf

    def _states_at(self, node: str, points: list[float]) -> list[NodeFree]:
        """``[free_at(node, p) for p in points]`` (``points`` sorted) in one sweep over time.

        Why: each ``free_at`` replays all of the node's releases and reservations, so a reserved
        node's suffix minima cost O(points x entries), redone whenever a reservation or
        placement touched it (a sixth of a quick P6 cycle). The sweep applies each entry once,
        at its own time; integer sums give the same state in any order.
        """
        timed: list[tuple[float, int, Request, tuple[int, ...]]] = [
            (when, -1, req, indices) for when, req, indices in self.releases.get(node, ())
        ]
        for start, end, req, indices, _job in self.reservations.get(node, ()):
            if not start < end:
                return [self.free_at(node, p) for p in points]  # never active: free_at's rule
            timed.append((start, 1, req, indices))
            if end < INF:
                timed.append((end, -1, req, indices))
        timed.sort(key=itemgetter(0))
        nf = self.live[node].clone()
        out: list[NodeFree] = []
        k = 0
        for point in points:
            while k < len(timed) and timed[k][0] <= point:
                _, sign, req, indices = timed[k]
                nf.charge(req, indices, sign)
                k += 1
            out.append(nf.clone())
        return out

    def change_points(self, node: str) -> list[float]:
        points = {when for when, _, _ in self.releases.get(node, ())}
        for start, end, _req, _idx, _job in self.reservations.get(node, ()):
            points.add(start)
            if end < INF:
                points.add(end)
        return sorted(points)

    def avail(self, node: str, t0: float, t1: float) -> NodeFree:
        """What ``node`` can give throughout [t0, t1): live when nothing is reserved there, else a copy.

        Copies are cached per node version; whoever places on one must ``touch`` the node.
        """
        if node not in self.reservations:
            if t0 <= self.now or node not in self.releases:
                return self.live[node]
            return self.free_at(node, t0)
        key = (node, t0, t1)
        version = self._version.get(node, 0)
        cached = self._avail.get(key)
        if cached is not None and cached[0] == version:
            return cached[1]
        if t1 == INF:
            points, mins = self._suffix_minima(node, version)
            i = bisect.bisect_right(points, t0)
            if t0 > self.now and i > 0 and points[i - 1] == t0:
                return mins[i - 1]  # from one of its own change points on: kept, read only
            out = self.free_at(node, t0)
            if i < len(points):
                out.minimum(mins[i])
        else:
            out = self.free_at(node, t0)
            for point in self.change_points(node):
                if t0 < point < t1:
                    out.minimum(self.free_at(node, point))
        self._avail[key] = (version, out)
        return out

    def suffix(self, node: str) -> tuple[list[float], list[NodeFree]]:
        """A reserved node's change points and the minimum free state from each on (read only).

        ``avail(node, points[i], INF)`` is ``mins[i]`` for a point after now: the searches walk
        a node's own change points in order and take it by index, without ``avail``'s keys and
        lookups per point (a third of a cycle's backfill time at 300 nodes; bench/README.md).
        """
        return self._suffix_minima(node, self._version.get(node, 0))

    def _suffix_minima(self, node: str, version: int) -> tuple[list[float], list[NodeFree]]:
        """A reserved node's change points and, for each, the minimum free state from it on.

        Why: a backfill search passes a reserved node's change points in order and asks at each
        what the node can give from then on; computing each from scratch made that quadratic in
        its change points (most of a cycle on small clusters with many reservations). The
        componentwise minimum is associative, so the suffix minima are the same states.
        """
        found = self._suffix.get(node)
        if found is not None and found[0] == version:
            return found[1], found[2]
        points = self.change_points(node)
        mins = self._states_at(node, points)
        for i in range(len(mins) - 2, -1, -1):
            mins[i].minimum(mins[i + 1])
        self._suffix[node] = (version, points, mins)
        return points, mins


def earliest_start(
    profile: Profile,
    nodes: Sequence[str],
    req: Request,
    m: int,
    until: float = INF,
    fitting: Iterable[str] | None = None,
) -> tuple[float, list[tuple[str, tuple[int, ...]]]] | None:
    """The first future change time (before ``until``) at which ``m`` members fit on ``nodes`` for good.

    "For good" means in the minimum of each node's free state from that time on, which is
    conservative for jobs with a time limit (they may get a later reservation than strictly
    needed) but keeps the search incremental: an unreserved node only gains resources over time,
    so its state is advanced by giving back each release as the search passes it; a reserved node
    is re-evaluated only when the search passes one of its own change points.

    ``fitting``, when given, holds every node of ``nodes`` that may host a member now (the
    free-capacity index's candidates: a node without the member's whole GPUs live hosts none,
    live or under reservations); the others' states are not derived until a change of their
    own is passed. The nodes' change times are merged lazily through a
    heap (each node's list is already in time order), so a search that ends early never builds
    or sorts the events it does not reach; events are still taken a time at a time, in the same
    order, and counted against the same budget as a full sort would.
    """
    if (not profile.releases and not profile.reservations) or profile.budget <= 0:
        return None
    if m == 1:
        return _earliest_single(profile, nodes, req, until)
    now = profile.now
    reservations = profile.reservations
    # per node position: its own future change times as (time, releases given back after it,
    # events at that time); a reserved node's change points give back nothing (0) and count one
    streams, firsts = profile.streams(nodes)
    # host counts of released states are kept uncapped (shared by every gang size) and capped here
    shape = profile.shape(req, UNCAPPED)
    # a reserved node's minima from each of its change points on, and the index of its first
    # point after now (its stream is those points: stream position p is point offset + p)
    suffixes: dict[str, tuple[int, list[NodeFree]]] = {}
    current: dict[str, NodeFree]
    hosts: dict[str, int]
    # (time, node position, index in the node's stream)
    heap: list[tuple[float, int, int]]
    steps = 0
    if fitting is not None and min(firsts, default=INF) < until:
        # the first time's step from the kept sums (``Profile.first_step``): same state, same charge
        first = profile.first_step(nodes, streams, firsts, req, fitting)
        profile.budget -= first.charged
        steps = 1
        # the plan from the kept counts (``choose`` of the hosting nodes would count them again);
        # the heap and the copies a later step needs are made only when this step does not do
        if first.room(m) >= m:
            plan = plan_hosted(first.items(m), req, m)
            if plan is not None:
                return first.t1, _members(plan, req)
        heap = [e for e in first.nxt if e is not None and e[0] < until]
        heapq.heapify(heap)
        current = dict(first.current)
        hosts, total = first.capped(m)
    else:
        heap = [(t, k, 0) for k, t in enumerate(firsts) if t < until]
        if not heap:
            return None
        heapq.heapify(heap)
        current, hosts, total = {}, {}, 0
        for name in nodes if fitting is None else fitting:
            nf = profile.avail(name, now, INF) if name in reservations else profile.live[name]
            current[name] = nf
            h = nf.hosts(req, m)
            if h:
                hosts[name] = h
                total += h
    while heap and steps < MAX_SHADOW_STEPS and profile.budget > 0:
        t = heap[0][0]
        touched: dict[str, int] = {}  # node -> releases given back so far, or -1 - stream position
        while heap and heap[0][0] == t:
            _, k, pos = heapq.heappop(heap)
            stream = streams[k]
            assert stream is not None
            if pos + 1 < len(stream) and stream[pos + 1][0] < until:
                heapq.heappush(heap, (stream[pos + 1][0], k, pos + 1))
            _, count, events = stream[pos]
            profile.budget -= events
            # an unreserved node gives back its releases in order: after this time, the first count
            touched[nodes[k]] = count if count else -1 - pos
        steps += 1
        for name, count in touched.items():
            if count > 0:
                nf, h = profile.released_hosts(name, count, shape, req, UNCAPPED)
                if h > m:
                    h = m
                current[name] = nf
            else:
                found = suffixes.get(name)
                if found is None:
                    points, mins = profile.suffix(name)
                    found = suffixes[name] = (bisect.bisect_right(points, now), mins)
                nf = current[name] = found[1][found[0] - 1 - count]  # ``avail(name, t, INF)``
                h = nf.hosts(req, m)
            total += h - hosts.get(name, 0)
            hosts[name] = h
        if total < m:
            continue
        plan = choose([current[n] for n in nodes if hosts.get(n)], req, m)
        if plan is None:
            continue
        return t, _members(plan, req)
    return None


def _members(plan: list[tuple[NodeFree, int]], req: Request) -> list[tuple[str, tuple[int, ...]]]:
    """Where each member of a planned gang goes, placed on copies (the states are shared)."""
    members: list[tuple[str, tuple[int, ...]]] = []
    for nf, count in plan:
        scratch = nf.clone()
        for _ in range(count):
            members.append((nf.name, scratch.place(req)))
    return members


def _earliest_single(
    profile: Profile, nodes: Sequence[str], req: Request, until: float
) -> tuple[float, list[tuple[str, tuple[int, ...]]]] | None:
    """One member: per node, walk its own change points in time order until it fits.

    Same answer as the global event sweep (the earliest time any node can host the member, ties
    to the first node), but each node's walk stops at the best time found so far, so most nodes
    cost a check or two. Where a node's walk would end is kept per node version and request
    (``Profile.single_fit``), so a node is walked once per cycle and shape, not once per search;
    an unreserved node's walk is charged to the budget as it was (one per change time passed,
    stopping where the budget runs out).
    """
    best: tuple[float, str, int] | None = None  # (time, node, index of that time in its walk)
    bound = until
    shape = profile.shape(req, 1)
    reservations, releases = profile.reservations, profile.releases
    # ``single_fit``'s kept answers read in place (the loop visits every node of the partition)
    versions, kept = profile._version, profile._single
    for name in nodes:
        reserved = name in reservations
        if not reserved:
            mine = releases.get(name)
            if not mine or mine[0][0] >= bound or profile.budget <= 0:
                continue  # (an exhausted budget charges nothing and finds nothing: the walk is skipped)
        found = kept.get(name)
        if found is not None and found[0] == versions.get(name, 0) and shape in found[2]:
            times, fit = found[1], found[2][shape]
        else:
            times, fit = profile.single_fit(name, shape, req)
        if reserved:
            if fit >= 0 and times[fit] < bound:
                best, bound = (times[fit], name, fit), times[fit]
            continue
        budget = profile.budget
        if fit >= 0 and times[fit] < bound and fit + 1 <= budget:
            profile.budget = budget - (fit + 1)
            best, bound = (times[fit], name, fit), times[fit]
        else:
            # the walk passes every change time before the bound, or stops where the budget ends
            profile.budget = budget - min(bisect.bisect_left(times, bound), budget)
    if best is None:
        return None
    start, name, fit = best
    nf = profile.single_state(name, fit)
    return start, [(nf.name, nf.clone().place(req))]
