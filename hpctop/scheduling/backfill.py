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
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from hpctop.model.objects import JobKey
from hpctop.scheduling.placement import NodeFree, Request, choose

INF = math.inf
#: distinct future change times examined when searching one job's shadow time (a bf_window of sorts)
MAX_SHADOW_STEPS = 4000


@dataclass(frozen=True, slots=True)
class Reservation:
    job: JobKey
    start: float
    end: float
    partition: str
    nodes: tuple[str, ...]


class Profile:
    """Future releases and reservations per node, on top of the live free state."""

    def __init__(self, now: float, live: dict[str, NodeFree]) -> None:
        self.now = now
        self.live = live
        self.releases: dict[str, list[tuple[float, Request, tuple[int, ...]]]] = {}
        self.reservations: dict[str, list[tuple[float, float, Request, tuple[int, ...], JobKey]]] = {}
        self.made: list[Reservation] = []

    def release_time(self, end: float) -> float:
        return end if end > self.now else self.now + 1.0

    def add_release(self, node: str, end: float, req: Request, indices: tuple[int, ...]) -> None:
        self.releases.setdefault(node, []).append((self.release_time(end), req, indices))

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
        res = Reservation(job, start, end, partition, tuple(sorted({n for n, _ in members})))
        self.made.append(res)
        return res

    def reserved(self, node: str) -> bool:
        return node in self.reservations

    def blocking(self, nodes: Sequence[str]) -> Reservation | None:
        """The earliest-made reservation on any of these nodes (for a Priority reason's evidence)."""
        on = set()
        for node in nodes:
            for entry in self.reservations.get(node, ()):
                on.add(entry[4])
        for res in self.made:
            if res.job in on:
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

    def change_points(self, node: str) -> list[float]:
        points = {when for when, _, _ in self.releases.get(node, ())}
        for start, end, _req, _idx, _job in self.reservations.get(node, ()):
            points.add(start)
            if end < INF:
                points.add(end)
        return sorted(points)

    def avail(self, node: str, t0: float, t1: float) -> NodeFree:
        """What ``node`` can give throughout [t0, t1) (a scratch copy; live when nothing is reserved)."""
        if node not in self.reservations:
            if t0 <= self.now or node not in self.releases:
                return self.live[node]
            return self.free_at(node, t0)
        out = self.free_at(node, t0)
        for point in self.change_points(node):
            if t0 < point < t1:
                out.minimum(self.free_at(node, point))
        return out


def earliest_start(
    profile: Profile,
    nodes: Sequence[str],
    req: Request,
    m: int,
) -> tuple[float, list[tuple[str, tuple[int, ...]]]] | None:
    """The first future change time at which ``m`` members fit on ``nodes`` for good, and where.

    "For good" means in the minimum of each node's free state from that time on, which is
    conservative for jobs with a time limit (they may get a later reservation than strictly
    needed) but keeps the search incremental: a node is re-evaluated only when the search passes
    one of its own change points.
    """
    if not profile.releases and not profile.reservations:
        return None
    events: list[tuple[float, str]] = []
    for name in nodes:
        for point in profile.change_points(name):
            if point > profile.now:
                events.append((point, name))
    if not events:
        return None
    events.sort()
    current: dict[str, NodeFree] = {}
    hosts: dict[str, int] = {}
    total = 0
    for name in nodes:
        nf = profile.avail(name, profile.now, INF) if profile.reserved(name) else profile.live[name]
        current[name] = nf
        h = nf.hosts(req, m)
        hosts[name] = h
        total += h
    i = 0
    steps = 0
    while i < len(events) and steps < MAX_SHADOW_STEPS:
        t = events[i][0]
        touched: set[str] = set()
        while i < len(events) and events[i][0] == t:
            touched.add(events[i][1])
            i += 1
        steps += 1
        for name in sorted(touched):
            nf = profile.avail(name, t, INF) if profile.reserved(name) else profile.free_at(name, t)
            current[name] = nf
            h = nf.hosts(req, m)
            total += h - hosts[name]
            hosts[name] = h
        if total < m:
            continue
        plan = choose([current[n] for n in nodes], req, m)
        if plan is None:
            continue
        members: list[tuple[str, tuple[int, ...]]] = []
        for nf, count in plan:
            scratch = nf.clone()
            for _ in range(count):
                members.append((nf.name, scratch.place(req)))
        return t, members
    return None
