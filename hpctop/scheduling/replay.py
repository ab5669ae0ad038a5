"""The previous cycle's decision pass replayed per job, across a changed queue order (``core.PassRecord``).

Why: a finished pod lowers its queue's DRF share, so that queue's jobs pop earlier than in the
recorded pass. A replay keyed by turn (the job popped at the same place) stopped at the first
such pop and decided the rest of the pass again, ~1.5 s at P6's 10k x 50k though most of those
turns decide what they decided before. Here each popped job finds its own recorded turn (by key)
and that turn is reused when what it reads is what it read then. ``RecordIndex`` is what a record
says per turn (built once per record, on first need); ``Reorder`` follows which recorded turns
were popped and keeps the set of nodes whose state may differ from the recorded pass's at a turn:

- the nodes an event changed, and those of turns decided again with other effects;
- (early) a job popped before a turn recorded ahead of it: the placements and reservations of the
  recorded turns before it not yet popped (its state lacks what the record had);
- (late) a job popped after jobs recorded behind it: the nodes of those jobs (its state has what
  the record lacked). Only a job popped early can be one of those, so only theirs are kept.

The set only grows during a pass (a node once added stays), which is never less than what
differs. The rest of what a turn reads (its queues' quota, the blocked partitions, the search
count and budget) is compared directly by ``core._Cycle._unaffected``.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from hpctop.model.resources import Resources
from hpctop.scheduling.placement import NodeFree, Request


def effect_nodes(effects: Iterable[tuple[Any, ...]]) -> list[str]:
    """The nodes a turn's placements and reservations touched (``core._Cycle.consider``'s effects)."""
    out: list[str] = []
    for effect in effects:
        kind = effect[0]
        if kind == "place":
            out.extend(node for node, _ in effect[4])
        elif kind == "reserve":
            out.extend(node for node, _ in effect[5])
    return out


class RecordIndex:
    """Per recorded turn: its job's key, its node effects, each node's placements, first blocks."""

    __slots__ = (
        "_until",
        "_usage",
        "by_key",
        "first_blocked",
        "node_turns",
        "placed_on",
        "places",
        "templates",
        "usage",
    )

    def __init__(
        self,
        keys: Sequence[object],
        ends: Sequence[int],
        effects: Sequence[tuple[Any, ...]],
        templates: Mapping[str, NodeFree],
        usage: Mapping[str, Resources],
    ) -> None:
        self.templates = templates
        self.usage = usage  # each queue's usage before the recorded pass's first placement
        #: (turn, leaf queue path, what it placed) of each recorded placement, in pass order
        self.places: list[tuple[int, str, Resources]] = []
        self._usage: dict[str, tuple[list[int], list[Resources]]] = {}
        self.by_key: dict[object, int] = {key: turn for turn, key in enumerate(keys)}
        #: (turn, nodes) of each turn that placed or reserved, in pass order
        self.node_turns: list[tuple[int, list[str]]] = []
        #: node -> the recorded placements on it: (turn, request, GPU indices), in pass order
        self.placed_on: dict[str, list[tuple[int, Request, tuple[int, ...]]]] = {}
        #: partition -> (turn, job id) of the first job blocked there
        self.first_blocked: dict[str, tuple[int, str]] = {}
        self._until: dict[tuple[str, Request], float] = {}
        start = 0
        for turn, end in enumerate(ends):
            nodes: list[str] = []
            for i in range(start, end):
                effect = effects[i]
                kind = effect[0]
                if kind == "place":
                    self.places.append((turn, effect[1], effect[2]))
                    req = effect[3]
                    for node, indices in effect[4]:
                        self.placed_on.setdefault(node, []).append((turn, req, indices))
                        nodes.append(node)
                elif kind == "reserve":
                    nodes.extend(node for node, _ in effect[5])
                elif kind == "blocked":
                    for pname in effect[1]:
                        if pname not in self.first_blocked:
                            self.first_blocked[pname] = (turn, effect[2])
            if nodes:
                self.node_turns.append((turn, nodes))
            start = end

    def first_blocked_at(self, partition: str, turn: int) -> str | None:
        """The first job blocked in ``partition`` before the recorded ``turn`` (``None``: none)."""
        found = self.first_blocked.get(partition)
        return found[1] if found is not None and found[0] < turn else None

    def usage_at(self, path: str, turn: int, ancestors: Callable[[str], list[str]]) -> Resources | None:
        """The queue's usage in the recorded pass just before ``turn`` (``None``: not recorded)."""
        found = self._usage.get(path)
        if found is None:
            start = self.usage.get(path)
            if start is None:
                return None
            turns: list[int] = []
            sums: list[Resources] = []
            total = start
            for at, leaf, need in self.places:
                if path in ancestors(leaf):
                    total = total + need
                    turns.append(at)
                    sums.append(total)
            found = self._usage[path] = (turns, sums)
        turns, sums = found
        k = bisect.bisect_left(turns, turn)
        return sums[k - 1] if k else self.usage[path]

    def fits_until(self, node: str, req: Request) -> float:
        """The last recorded turn before which one member of ``req`` fits the node in the recorded
        pass (free resources only shrink in a pass): it fits just before turn ``t`` exactly when
        ``t <= fits_until``; -1 when it never fits, ``inf`` when it fits throughout."""
        key = (node, req)
        found = self._until.get(key)
        if found is None:
            template = self.templates[node]
            found = -1.0
            if template.fits_one(req):
                found = float("inf")
                state = template.clone()
                for turn, placed, indices in self.placed_on.get(node, ()):
                    state.charge(placed, indices)
                    if not state.fits_one(req):
                        found = float(turn)
                        break
            self._until[key] = found
        return found


class Reorder:
    """Which recorded turns this pass has popped, and the nodes that may differ at a turn."""

    __slots__ = (
        "_early",
        "_high",
        "_index",
        "_low",
        "_make",
        "_popped",
        "_scan",
        "_seen",
        "added",
        "nodes",
        "shifted",
    )

    def __init__(self, turns: int, nodes: set[str], make: Callable[[], RecordIndex]) -> None:
        self._popped = bytearray(turns)
        self._low = 0  # the first recorded turn not popped yet
        self._high = -1  # the last recorded turn popped so far
        #: (-turn, nodes) of the jobs popped early, a heap: the latest recorded turn first
        self._early: list[tuple[int, list[str]]] = []
        self._scan = 0  # ``node_turns`` before this were looked at (early rule)
        self._make = make
        self._index: RecordIndex | None = None
        self.nodes = nodes  # shared with the caller's diff: only grows (``add``)
        self.added: list[str] = list(nodes)  # the same nodes, in the order they came
        #: per (member set, request): what ``clear`` keeps
        self._seen: dict[tuple[int, Request], list[Any]] = {}
        #: whether any job popped out of its recorded order (then every turn is checked)
        self.shifted = False

    def index(self) -> RecordIndex:
        """The record's index, built on first need (a pass replayed in order never needs it)."""
        if self._index is None:
            self._index = self._make()
        return self._index

    def add(self, names: Iterable[str]) -> None:
        nodes, added = self.nodes, self.added
        for name in names:
            if name not in nodes:
                nodes.add(name)
                added.append(name)

    def clear(self, members: frozenset[str], req: Request, live: Mapping[str, NodeFree], at: int) -> int:
        """Whether the nodes that may differ in ``members`` count for nothing to one member of
        ``req`` at the recorded turn ``at``: 0 when none is in ``members``, 1 when one member fits
        none of them, neither live nor in the recorded pass before ``at``, else -1.

        Kept per member set and request, brought up to date with the nodes added since: the
        nodes one member may fit live (checked from the end, dropping what no longer fits: live
        free resources only shrink during a pass, so a node dropped never fits again), and the
        last recorded turn one member fits any of them (``RecordIndex.fits_until``, looked up
        only once the live check passed: most turns that fail, fail there).
        """
        # by the set's identity (kept in the entry): sets of two signatures may be equal, and
        # comparing two equal sets of 12k nodes cost ~30 us a lookup (the profile, 10k x 50k)
        key = (id(members), req)
        entry = self._seen.get(key)
        if entry is None or entry[0] is not members:
            entry = self._seen[key] = [members, 0, 0, -1.0, [], []]
        _, seen, count, until, fitting, unbounded = entry
        added = self.added
        if seen < len(added):
            for i in range(seen, len(added)):
                name = added[i]
                if name in members:
                    count += 1
                    unbounded.append(name)
                    if live[name].fits_one(req):
                        fitting.append(name)
            entry[1], entry[2] = len(added), count
        if not count:
            return 0
        while fitting and not live[fitting[-1]].fits_one(req):
            fitting.pop()
        if fitting:
            return -1
        if unbounded:
            index = self.index()
            for name in unbounded:
                last = index.fits_until(name, req)
                if last > until:
                    until = last
            entry[3] = until
            unbounded.clear()
        return -1 if at <= until else 1

    def arrive(self, turn: int) -> bool:
        """The job recorded at ``turn`` pops: add what may differ for it; whether it is early."""
        early = turn > self._low
        if early or turn < self._high:
            self.shifted = True
        early_heap = self._early
        while early_heap and -early_heap[0][0] > turn:  # late: jobs recorded after it popped before it
            self.add(heapq.heappop(early_heap)[1])
        if early:
            node_turns, popped, scan = self.index().node_turns, self._popped, self._scan
            while scan < len(node_turns) and node_turns[scan][0] < turn:
                at, names = node_turns[scan]
                if not popped[at]:
                    self.add(names)
                scan += 1
            self._scan = scan
        return early

    def leave(self, turn: int, early: bool, names: Iterable[str], differs: bool) -> None:
        """The turn is done: ``names`` the nodes of its recorded and actual effects."""
        if differs:
            self.add(names)
        elif early:
            listed = list(names)
            if listed:
                heapq.heappush(self._early, (-turn, listed))
        popped = self._popped
        popped[turn] = 1
        low = self._low
        while low < len(popped) and popped[low]:
            low += 1
        self._low = low
        if turn > self._high:
            self._high = turn
