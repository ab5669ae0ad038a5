"""A gang's placement read from host counts kept per topology domain and patched per change.

Why: ``placement.choose_counted`` scans every candidate node of a partition for each gang it
plans, and at 10k nodes x 50k pending pods that was ~2,600 scans of ~370 nodes per cycle (the
placement attempts under reservations and the "fits live" checks of blocked gangs; bench/README.md,
issue 16 sessions 13 and 14), although between two scans of the same node list and request only
the few nodes a placement, a release or a reservation touched have changed. ``DomainCounts`` keeps,
for one node list, one request and one view of the nodes (the live state, or what a job running
until a given time may use under the reservations), each node's host count without the member
cap, and those counts as histograms per topology domain and over all nodes. The profile's touch
log (``backfill.Profile._touched``: every change of a node's live state, releases or
reservations goes through ``touch``) says which nodes to read again, so a gang reads per-domain
sums instead of walking the nodes.

The answer is ``choose_counted``'s on the same states, by construction: the capacity is the sum
of the capped counts (``min(count, m or the per-node limit)``); the domain is the one whose
greedy plan needs the fewest nodes, first by name on ties (``_pick``), found from per-domain plan
lengths kept per (``m``, cap) in buckets by length; the plan is ``greedy`` over that domain's
hosting nodes (or over all when no domain holds the gang), in the list's order on ties. A
one-member gang is the first hosting node in list order (``choose``'s first fit).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence

from hpctop.scheduling.placement import NodeFree, Request, greedy, uncapped_hosts


def plan_length(hist: dict[int, int], m: int, most: int) -> int:
    """How many nodes the greedy plan of ``m`` members takes from a histogram of uncapped host
    counts (count -> nodes), each capped at ``most``; 0 when they hold fewer than ``m``."""
    if sum(c * (h if h < most else most) for h, c in hist.items()) < m:
        return 0
    left = m
    length = 0
    for h in sorted(hist, reverse=True):
        c = hist[h]
        v = h if h < most else most
        need = -(-left // v)
        if need <= c:
            return length + need
        length += c
        left -= c * v
    return 0  # not reached: the sum holds m


class DomainCounts:
    """One node list's host counts for one request and view, grouped by topology domain."""

    __slots__ = (
        "by_domain",
        "dirty",
        "domain_positions",
        "hist",
        "hosting",
        "hosts",
        "lengths",
        "nodes",
        "position",
        "req",
        "seen",
        "state_of",
        "states",
    )

    def __init__(
        self,
        nodes: Sequence[str],
        position: dict[str, int],
        fitting: Iterable[str],
        req: Request,
        state_of: Callable[[str], NodeFree],
        seen: int,
    ) -> None:
        """``fitting``: every node of ``nodes`` that may host a member now (the others host none
        until a change of their own, which the touch log brings); ``seen``: the log's length."""
        self.nodes = nodes
        self.position = position
        self.req = req
        self.state_of = state_of
        self.seen = seen
        self.hosts = [0] * len(nodes)  # per position: ``uncapped_hosts`` of its state (0: none)
        #: per hosting position: its state (what a plan names; a reserved node's is a copy)
        self.states: list[NodeFree | None] = [None] * len(nodes)
        self.hist: dict[int, int] = {}  # uncapped count -> hosting nodes with it (all nodes)
        self.hosting: set[int] = set()  # positions with a count
        #: domain -> every position of it that ever hosted (a domain's nodes never change)
        self.domain_positions: dict[str, list[int]] = {}
        self.by_domain: dict[str, dict[int, int]] = {}  # domain -> its histogram (clean domains)
        #: (m, cap) -> (domain -> its plan length, length -> domains with it), kept once asked
        self.lengths: dict[tuple[int, int], tuple[dict[str, int], dict[int, set[str]]]] = {}
        self.dirty: set[str] = set()  # domains whose counts moved since ``by_domain`` was made
        self._read([position[name] for name in fitting if name in position])

    def _read(self, touched: Iterable[int]) -> None:
        """Read the states at these positions again and move their counts where they belong.

        Only the per-position counts, the overall histogram and the set of moved domains are
        kept here: a domain's histogram and plan lengths are redone when a plan is asked
        (``_clean``), once per moved domain however many of its nodes moved."""
        nodes, hosts, states, state_of, req = self.nodes, self.hosts, self.states, self.state_of, self.req
        hist, hosting, dirty = self.hist, self.hosting, self.dirty
        k, rc, rm = req.whole, req.cpu, req.memory
        inline = k and not req.ext  # whole GPUs, nothing extended: ``uncapped_hosts`` inlined
        for p in touched:
            nf = state_of(nodes[p])
            old = hosts[p]
            if inline:
                h = nf.whole
                if h < k:
                    if not old:
                        continue  # hosted none and still hosts none (the common touch)
                    h = 0
                else:
                    cpu, memory = nf.cpu, nf.memory
                    if cpu < rc or memory < rm:
                        h = 0
                    else:
                        h //= k
                        if rc and cpu // rc < h:
                            h = cpu // rc
                        if rm and memory // rm < h:
                            h = memory // rm
            else:
                h = uncapped_hosts(nf, req)
            states[p] = nf if h else None
            if h == old:
                continue
            hosts[p] = h
            if old:
                left = hist[old] - 1
                if left:
                    hist[old] = left
                else:
                    del hist[old]
                if not h:
                    hosting.discard(p)
            if h:
                hist[h] = hist.get(h, 0) + 1
                if not old:
                    hosting.add(p)
            domain = nf.domain
            if domain is not None:
                if domain not in dirty:
                    dirty.add(domain)
                if h and not old:
                    found = self.domain_positions.get(domain)
                    if found is None:
                        self.domain_positions[domain] = [p]
                    elif p not in found:
                        found.append(p)

    def _clean(self) -> None:
        """Redo the moved domains' histograms and their plan lengths for every (m, cap) kept."""
        hosts, by_domain = self.hosts, self.by_domain
        for domain in self.dirty:
            dhist: dict[int, int] = {}
            for p in self.domain_positions.get(domain, ()):
                h = hosts[p]
                if h:
                    dhist[h] = dhist.get(h, 0) + 1
            by_domain[domain] = dhist
            for (m, most), (length_of, buckets) in self.lengths.items():
                _move(length_of, buckets, domain, plan_length(dhist, m, most))
        self.dirty.clear()

    def patch(self, log: Sequence[str]) -> None:
        """Read again the nodes touched since the last call (``log``: the profile's touch log)."""
        seen = self.seen
        if seen < len(log):
            position = self.position
            self._read([position[name] for name in set(log[seen:]) if name in position])
            self.seen = len(log)

    def room(self, m: int) -> int:
        """The capacity ``choose_counted`` gives for ``m`` members: the sum of the capped counts
        (``>= m`` exactly when a plan exists; a one-member gang: whether any node hosts it)."""
        if m <= 0:
            return 0
        req = self.req
        most = m if not req.per_node or req.per_node > m else req.per_node
        return sum(c * (h if h < most else most) for h, c in self.hist.items())

    def choose(self, m: int) -> tuple[list[tuple[NodeFree, int]] | None, int]:
        """``choose_counted`` of the kept states: the plan (or ``None``) and the nodes' capacity."""
        if m <= 0:
            return [], 0
        req = self.req
        most = m if not req.per_node or req.per_node > m else req.per_node
        total = sum(c * (h if h < most else most) for h, c in self.hist.items())
        states = self.states
        if m == 1:
            if not total:
                return None, 0
            nf = states[min(self.hosting)]
            assert nf is not None
            return [(nf, 1)], 1
        if total < m:
            return None, total
        if self.dirty:
            self._clean()
        kept = self.lengths.get((m, most))
        if kept is None:
            length_of: dict[str, int] = {}
            buckets: dict[int, set[str]] = {}
            for domain, dhist in self.by_domain.items():
                _move(length_of, buckets, domain, plan_length(dhist, m, most))
            kept = self.lengths[(m, most)] = (length_of, buckets)
        buckets = kept[1]
        hosts = self.hosts
        if not buckets:
            top = max(self.hist)
            if top <= most and len(self.hist) == 1:
                # every hosting node gives the same count (P6's 8-GPU members: one a node), so
                # the greedy plan is the first nodes in list order: no sort of them all
                items = [(top, p, states[p]) for p in heapq.nsmallest(-(-m // top), self.hosting)]  # type: ignore[misc]
                return greedy(items, m), total  # type: ignore[arg-type]
        positions: Iterable[int] = (
            self.domain_positions[min(buckets[min(buckets)])] if buckets else self.hosting
        )
        items: list[tuple[int, int, NodeFree]] = []
        for p in positions:
            h = hosts[p]
            if h:
                nf = states[p]
                assert nf is not None
                items.append((h if h < most else most, p, nf))
        return greedy(items, m), total


def _move(length_of: dict[str, int], buckets: dict[int, set[str]], domain: str, length: int) -> None:
    """File ``domain`` under its new plan length (0: it cannot hold the gang)."""
    old = length_of.get(domain, 0)
    if old == length:
        return
    if old:
        bucket = buckets[old]
        bucket.discard(domain)
        if not bucket:
            del buckets[old]
    if length:
        length_of[domain] = length
        buckets.setdefault(length, set()).add(domain)
    else:
        del length_of[domain]
