"""What one scheduling cycle can reuse from the previous one: pure derivations of frozen objects.

Why: on the demo cluster (the Alibaba trace: 1,523 nodes, ~3,300 running jobs) a cycle with only
12 pending jobs cost 0.2-0.35 s, and the profile showed that almost all of it was work that does
not change between cycles: matching every node against every partition selector (~40 % of the
cycle), building every node's free state from its pods (``build_free``, ``NodeFree.empty`` and
``topology_domain``, ~30 %), and ``Resources`` arithmetic for partition and cluster totals. The
snapshot hands the core the *same* ``Node`` and ``Pod`` objects between cycles when nothing
happened to them (they are frozen; a change is a new object), so everything derived only from
them can be kept and reused while the objects are identical (``is``, never equality: a dict
field makes them unhashable, and identity is O(1)).

What is kept, and why it cannot change an answer:

- ``ClusterView``: the sorted node map, partitions, products, empty-node templates, cluster
  capacity, and the per-view caches of node matching, eligibility and union capacity. Valid
  while every node object and the policy's partition settings are identical; otherwise rebuilt,
  reusing per-node facts (product, partition membership, empty template) of unchanged nodes,
  so a single node update costs one node's matching plus an O(nodes) pass of cheap lookups.
- ``FreeEntry`` per node: the free state after its bound pods and their charges, valid while
  the node object and the exact pod objects bound there are identical. Each cycle gets its
  own copies (``LiveFree`` clones a node on first access), so the kept templates are never
  mutated.

- ``PodsByNode`` and ``JobSplit``: the cluster-wide roll-ups every cycle began with (the pods
  bound to each node, sorted by key; pending and active jobs; the highest job priority value;
  each queue's running usage), kept between cycles and patched from the entries whose object
  changed identity since the previous snapshot. The snapshot's maps are copies of the store's
  dicts, whose order is insertion order: updates keep their place, additions come last, so
  the changed entries are found in C (``_MapDiff``: the old keys must be a prefix of the new
  ones, values compared with ``is``; deleted entries are taken out first). When an entry moved
  (deleted and added again, a job that became a tombstone), the roll-up is rebuilt from
  scratch. Integer sums are exact in any order, so patched sums equal fresh ones.

Why one module of this size: every class here is one kind of derivation kept between cycles
under the same rule (reused only while the objects it came from are identical), and the cycle
takes them all from one ``Memo``; the per-job ones (``PendingDerivations``, ``PointDerivations``,
``RunningPlans``) and the per-node ones share the stamps and the ``_MapDiff`` they are patched
from. The per-job derivations are the first split to make, into a sibling module, when it grows.

Everything is bounded by the cluster (entries of nodes that left are dropped when the maps
outgrow the live node count) and the per-view caches are capped. A ``Memo`` is used by one cycle
at a time (``schedule`` takes the shared one with a non-blocking lock and falls back to a fresh,
throwaway one when another thread holds it), so results never depend on what ran before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from itertools import compress, count, filterfalse, islice
from operator import is_not
from typing import Any

from hpctop.model.objects import Job, JobKey, Node, Pod, PodKey
from hpctop.model.policy import PartitionSpec, Policy
from hpctop.model.resources import Resources
from hpctop.scheduling.partitions import (
    IntVector,
    PartitionInfo,
    PartitionStatic,
    add_into,
    display_key,
    matches,
    node_has_gpu,
    node_product,
    partition_static,
    specs_for,
    to_resources,
)
from hpctop.scheduling.placement import Charge, NodeFree, charge_order, free_of
from hpctop.scheduling.unheld import UnheldMembers

#: entries of the per-view caches (matching, eligibility, union) before they are cleared
MAX_VIEW_ENTRIES = 100_000


class NodeFacts:
    """What the core derives from one node object alone (its partition label included)."""

    __slots__ = ("empty", "has_gpu", "label", "members", "node", "product")

    def __init__(self, node: Node, label: str) -> None:
        self.node = node
        self.label = label
        self.has_gpu = node_has_gpu(node)
        self.product = node_product(node, label) if self.has_gpu else None
        self.empty = NodeFree.empty(node, self.product)  # shared, read only
        self.members: tuple[tuple[PartitionSpec, ...], tuple[bool, ...]] | None = None

    def membership(self, specs: tuple[PartitionSpec, ...]) -> tuple[bool, ...]:
        """Which of ``specs`` select this node (kept for the last spec tuple asked)."""
        if self.members is None or (self.members[0] is not specs and self.members[0] != specs):
            self.members = (specs, tuple(matches(spec, self.node, self.label) for spec in specs))
        return self.members[1]


@dataclass(slots=True)
class ClusterView:
    """The static side of a cycle: everything derived from the node objects and the policy."""

    key: tuple[object, ...]
    source: dict[str, Node]  # the node objects this view was built from (identity checked)
    nodes: dict[str, Node]  # sorted by name
    partitions: tuple[PartitionInfo, ...]
    part_by_name: dict[str, PartitionInfo]
    product: dict[str, str | None]
    empty: dict[str, NodeFree]
    cluster: Resources
    first_partition: dict[str, int]  # node -> index of the first partition (display order) holding it
    matching: dict[object, tuple[list[str], list[str]]] = field(default_factory=dict)
    eligibility: dict[object, Any] = field(default_factory=dict)  # core.Eligibility (no import cycle)
    union: dict[tuple[str, ...], tuple[int, int]] = field(default_factory=dict)
    statics: dict[str, PartitionStatic] = field(default_factory=dict)

    def partition_static(self, info: PartitionInfo) -> PartitionStatic:
        """A partition's capacity, down nodes and GPU models: fixed while the nodes are."""
        found = self.statics.get(info.name)
        if found is None:
            found = self.statics[info.name] = partition_static(info, self.nodes, self.product)
        return found

    def same_nodes(self, nodes: Mapping[str, Node]) -> bool:
        source = self.source
        if len(nodes) != len(source):
            return False
        get = source.get
        return all(get(name) is node for name, node in nodes.items())

    def trim(self) -> None:
        """Keep the per-view caches bounded (a policy with many distinct requests over a long run)."""
        for cache in (self.matching, self.eligibility, self.union):
            if len(cache) > MAX_VIEW_ENTRIES:
                cache.clear()


class FreeEntry:
    """One node's free state after its bound pods, for as long as the node and the pods are the same."""

    __slots__ = ("charges", "free", "node", "over", "pods", "product", "used", "whole")

    def __init__(
        self, node: Node, product: str | None, pods: tuple[Pod, ...], empty: NodeFree | None = None
    ) -> None:
        self.node = node
        self.product = product
        self.pods = pods
        ordered = charge_order(pods)
        self.free, self.charges = free_of(node, product, pods, empty, ordered)
        self.whole = self.free.whole_free()  # fully free GPU indices: the cycle's free-capacity index
        # what the node holds is at most its allocatable: pods bound beyond it (stale pods not yet
        # seen gone, an allocatable that shrank) are ``over``, charged in ``free_of``'s order, and
        # the node's used is clamped, so no pane shows more in use than the nodes have (issue 16)
        a = node.allocatable
        acc = [0, 0, 0]
        ext: dict[str, int] = {}
        over: list[PodKey] = []
        for pod in ordered:
            add_into(acc, ext, pod.requests)
            if acc[0] > a.cpu or acc[1] > a.memory or acc[2] > a.gpu:
                over.append(pod.key)
        self.over: tuple[PodKey, ...] = tuple(over)
        if over:
            limit = dict(a.extended)
            ext = {key: min(value, limit.get(key, 0)) for key, value in ext.items()}
        self.used: IntVector = (min(acc[0], a.cpu), min(acc[1], a.memory), min(acc[2], a.gpu), ext)

    def valid(self, node: Node, product: str | None, pods: tuple[Pod, ...]) -> bool:
        # tuple == compares items by identity first, so the usual case (same objects) is cheap;
        # equal-but-distinct pods give the same free state, so accepting them is also right
        return self.node is node and self.product == product and self.pods == pods


class LiveFree(dict[str, NodeFree]):
    """The cycle's mutable free state: a node is cloned from its kept template on first access.

    Most cycles read or change only the nodes a few pending jobs are scanned against, so cloning
    all of them up front (what the profile showed) is wasted; every access goes through ``[]``.
    """

    __slots__ = ("templates",)

    def __init__(self, templates: Mapping[str, NodeFree]) -> None:
        super().__init__()
        self.templates = templates

    def __missing__(self, name: str) -> NodeFree:
        nf = self.templates[name].clone()
        self[name] = nf
        return nf


class Memo:
    """Caches kept between cycles; see the module docstring for what and why."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.view: ClusterView | None = None
        self.facts: dict[str, NodeFacts] = {}
        self.free: dict[str, FreeEntry] = {}
        self.pods_by_node = PodsByNode()
        self.jobs = JobSplit()
        self.kept_free: KeptFree | None = None
        self.pending = PendingDerivations()
        self.points = PointDerivations()
        #: bumped whenever the kept free state changes (``core.PassRecord``'s stamp)
        self.free_version = 0
        self.pass_record: Any = None  # core.PassRecord (no import cycle)
        #: job key -> (job, eligibility, the static terms of its priority total:
        #: ``priority.static_terms``), kept while both are the same objects and the weights and
        #: normalisers are ``priority_terms_stamp``
        self.priority_terms: dict[JobKey, tuple[Job, Any, tuple[float, float, float]]] = {}
        self.priority_terms_stamp: object = None
        self.running_plans = RunningPlans()
        self.unheld = UnheldMembers()
        #: pods whose charge or over status may have changed since ``take_charged`` (the pods of
        #: the nodes whose free state was redone); None: the free state was rebuilt
        self.charged: set[PodKey] | None = None
        #: nodes whose free state was redone since ``take_release_nodes`` (the running releases'
        #: log: ``releases.KeptReleases``); None: the free state was rebuilt
        self.release_nodes: set[str] | None = None

    def take_charged(self) -> set[PodKey] | None:
        charged, self.charged = self.charged, set()
        return charged

    def take_release_nodes(self) -> dict[str, dict[PodKey, Charge]] | None:
        """Each node redone since the last call -> its charges now (None: the free state was rebuilt)."""
        names, self.release_nodes = self.release_nodes, set()
        kept = self.kept_free
        if names is None or kept is None:
            return None
        entries = kept.entries
        return {name: entries[name].charges for name in names}

    def clear(self) -> None:
        self.view = None
        self.facts = {}
        self.free = {}
        self.pods_by_node = PodsByNode()
        self.jobs = JobSplit()
        self.kept_free = None
        self.pending = PendingDerivations()
        self.points = PointDerivations()
        self.free_version += 1
        self.pass_record = None
        self.priority_terms = {}
        self.priority_terms_stamp = None
        self.running_plans = RunningPlans()
        self.unheld = UnheldMembers()
        self.charged = None
        self.release_nodes = None

    # -- the static side ----------------------------------------------------------------------

    def cluster_view(self, nodes: Mapping[str, Node], policy: Policy) -> ClusterView:
        label = policy.partition_label
        key: tuple[object, ...] = (policy.partitions, label)
        view = self.view
        if view is not None and view.key == key and view.same_nodes(nodes):
            view.trim()
            return view
        view = self.view = self._build_view(nodes, policy, key)
        return view

    def _node_facts(self, node: Node, label: str) -> NodeFacts:
        facts = self.facts.get(node.name)
        if facts is None or facts.node is not node or facts.label != label:
            facts = self.facts[node.name] = NodeFacts(node, label)
        return facts

    def _build_view(self, nodes: Mapping[str, Node], policy: Policy, key: tuple[object, ...]) -> ClusterView:
        label = policy.partition_label
        names = sorted(nodes)
        ordered = {name: nodes[name] for name in names}
        facts = [self._node_facts(node, label) for node in ordered.values()]
        if len(self.facts) > 2 * len(ordered) + 64:
            self.facts = {f.node.name: f for f in facts}
        specs = policy.partitions
        if not specs:
            products = {f.product for f in facts if f.has_gpu and f.product}
            specs = specs_for(
                (p for p in products if p is not None), any(not f.has_gpu for f in facts), label
            )
        members: list[list[str]] = [[] for _ in specs]
        for f in facts:
            for i, yes in enumerate(f.membership(specs)):
                if yes:
                    members[i].append(f.node.name)
        infos = [PartitionInfo(spec, tuple(m)) for spec, m in zip(specs, members, strict=True)]
        infos.sort(key=display_key)
        partitions = tuple(infos)
        first: dict[str, int] = {}
        for i, info in enumerate(partitions):
            for name in info.nodes:
                first.setdefault(name, i)
        acc = [0, 0, 0]
        ext: dict[str, int] = {}
        for node in ordered.values():
            if node.schedulable:
                add_into(acc, ext, node.allocatable)
        return ClusterView(
            key=key,
            source=dict(nodes),
            nodes=ordered,
            partitions=partitions,
            part_by_name={p.name: p for p in partitions},
            product={f.node.name: f.product for f in facts},
            empty={f.node.name: f.empty for f in facts},
            cluster=to_resources(acc, ext),
            first_partition=first,
        )

    # -- the free state -----------------------------------------------------------------------

    def free_state(
        self, view: ClusterView, pods_by_node: Mapping[str, tuple[Pod, ...]]
    ) -> tuple[LiveFree, dict[PodKey, Charge], dict[str, IntVector], dict[str, int]]:
        """(live free state, charge of every bound pod, per-node sum of pod requests, whole free GPUs).

        When the view and the pod grouping are those of the previous call and the grouping is
        ``self.pods_by_node``'s, only the nodes it changed since then are looked at; the maps are
        patched and handed out as copies (the cycle may keep or change its own).
        """
        grouping = self.pods_by_node
        touched = grouping.take_touched()
        kept = self.kept_free
        if (
            kept is None
            or kept.view is not view
            or kept.source is not pods_by_node
            or pods_by_node is not grouping.grouped
        ):
            kept = self.kept_free = self._free_from_scratch(view, pods_by_node)
            self.free_version += 1
            self.charged = None
            self.release_nodes = None
        else:
            names = [name for name in touched if name in view.nodes]
            if names:
                charged = self.charged
                if charged is not None:  # the pods of the redone nodes, before and after
                    entries = kept.entries
                    for name in names:
                        charged.update(entries[name].charges)
                        charged.update(entries[name].over)
                self._patch_free(kept, names)
                if charged is not None:
                    for name in names:
                        charged.update(entries[name].charges)
                        charged.update(entries[name].over)
                    if len(charged) > len(kept.charges) + 64:  # never taken (placements only): bounded
                        self.charged = None
                release_nodes = self.release_nodes
                if release_nodes is not None:
                    release_nodes.update(names)
                    if len(release_nodes) > len(view.nodes):  # (never more than every node)
                        self.release_nodes = None
                self.free_version += 1
        return LiveFree(dict(kept.templates)), dict(kept.charges), dict(kept.used), dict(kept.whole)

    def _entry(self, view: ClusterView, name: str, pods: tuple[Pod, ...]) -> FreeEntry:
        entries = self.free
        node = view.nodes[name]
        p = view.product[name]
        entry = entries.get(name)
        if entry is None or not entry.valid(node, p, pods):
            entry = entries[name] = FreeEntry(node, p, pods, view.empty[name])
        return entry

    def _free_from_scratch(self, view: ClusterView, pods_by_node: Mapping[str, tuple[Pod, ...]]) -> KeptFree:
        kept = KeptFree(view, pods_by_node)
        for name in view.nodes:
            pods = pods_by_node.get(name, ())
            entry = kept.entries[name] = self._entry(view, name, pods)
            kept.templates[name] = entry.free
            kept.whole[name] = entry.whole
            if pods:
                kept.charges.update(entry.charges)
                kept.used[name] = entry.used
                kept.over.update(entry.over)
        entries = self.free
        if len(entries) > 2 * len(view.nodes) + 64:
            self.free = {name: entries[name] for name in view.nodes}
        return kept

    def _patch_free(self, kept: KeptFree, names: list[str]) -> None:
        # every charge of the changed nodes out first, then theirs in: a pod that moved between two
        # changed nodes ends up with its new charge (a pod is bound to one node at a time)
        charges = kept.charges
        for name in names:
            for key in kept.entries[name].charges:
                charges.pop(key, None)
            kept.over.difference_update(kept.entries[name].over)
        source = kept.source
        for name in names:
            pods = source.get(name, ())
            entry = kept.entries[name] = self._entry(kept.view, name, pods)
            kept.templates[name] = entry.free
            kept.whole[name] = entry.whole
            if pods:
                charges.update(entry.charges)
                kept.used[name] = entry.used
                kept.over.update(entry.over)
            else:
                kept.used.pop(name, None)


class KeptFree:
    """The free-state maps of the last cycle, patched for the nodes whose pods changed."""

    __slots__ = ("charges", "entries", "over", "source", "templates", "used", "view", "whole")

    def __init__(self, view: ClusterView, source: Mapping[str, tuple[Pod, ...]]) -> None:
        self.view = view
        self.source = source
        self.entries: dict[str, FreeEntry] = {}
        self.templates: dict[str, NodeFree] = {}
        self.charges: dict[PodKey, Charge] = {}
        self.used: dict[str, IntVector] = {}
        self.whole: dict[str, int] = {}
        #: bound pods beyond their node's allocatable (``FreeEntry.over``): charged, not held
        self.over: set[PodKey] = set()


#: pod phases that release a pod's resources (``Pod.is_terminal``)
TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})

#: a queue's summed usage: cpu, memory, gpu and extended resources, in plain ints
IntSum = tuple[list[int], dict[str, int]]


def add_scaled(acc: IntSum, r: Resources, factor: int) -> None:
    """``acc += r * factor`` in plain ints (a negative factor takes a contribution back out)."""
    ints, ext = acc
    ints[0] += r.cpu * factor
    ints[1] += r.memory * factor
    ints[2] += r.gpu * factor
    for key, value in r.extended:
        ext[key] = ext.get(key, 0) + value * factor


def pod_key(pod: Pod) -> PodKey:
    return (pod.namespace, pod.name)


class _MapDiff:
    """The entries of a snapshot map whose object changed since the map this one saw last."""

    __slots__ = ("keys", "values")

    #: deleted entries found one by one (a C-level scan each) before the whole-map path is cheaper
    FEW_DELETIONS = 16

    def __init__(self) -> None:
        self.keys: list[Any] = []
        self.values: list[Any] = []

    def changes(self, current: Mapping[Any, Any]) -> list[tuple[Any, Any, Any]] | None:
        """``(key, old object or None, new object or None)`` per changed entry; None when entries moved.

        Deleted entries keep the others' order (a dict deletion does not reorder), so they are
        taken out of the old key list and the rest compared as usual; an entry that moved
        (deleted and added again, a job that became a tombstone) makes the answer None.
        """
        keys = list(current)
        values = list(current.values())
        old_keys, old_values = self.keys, self.values
        self.keys, self.values = keys, values
        n = len(old_keys)
        # list == compares items by identity first: the store's key objects are shared, so this is C-speed
        if len(keys) >= n and keys[:n] == old_keys:
            gone: list[tuple[Any, Any, Any]] = []
        else:
            found = _few_deleted(keys, old_keys, old_values, current.__contains__, self.FEW_DELETIONS)
            if found is None:
                return None
            gone, n = found
        moved = compress(range(n), map(is_not, values, old_values))
        changed = gone
        changed.extend((keys[i], old_values[i], values[i]) for i in moved)
        changed.extend((keys[i], None, values[i]) for i in range(n, len(keys)))
        return changed


def _first_difference(keys: list[Any], old_keys: list[Any], start: int) -> int:
    """The first index from ``start`` where the two key lists differ (the shorter one's length if none)."""
    end = min(len(keys), len(old_keys))
    while start < end:
        # identity in C; an equal key that is another object is checked and passed in Python
        at = next(
            compress(count(start), map(is_not, islice(keys, start, end), islice(old_keys, start, end))), end
        )
        if at == end or keys[at] != old_keys[at]:
            return at
        start = at + 1
    return end


def _few_deleted(
    keys: list[Any],
    old_keys: list[Any],
    old_values: list[Any],
    present: Callable[[Any], bool],
    limit: int,
) -> tuple[list[tuple[Any, Any, Any]], int] | None:
    """The deleted entries ``(key, old object, None)`` in their old order, and the survivors' count.

    ``old_keys`` and ``old_values`` (the caller's to change) are left holding the survivors. The
    survivors must be a prefix of ``keys`` (None otherwise: an entry moved). A deleted entry is
    the old key at the first place the two lists differ, so a few are found by one C-level scan
    each, without the dict of every old entry and the membership test of every old key that
    the whole-map path (past ``limit`` deletions) pays.
    """
    gone: list[tuple[Any, Any, Any]] = []
    at = 0
    while True:
        at = _first_difference(keys, old_keys, at)
        if at == len(old_keys):
            return gone, at  # every survivor compared equal: the new keys past them are additions
        if len(gone) == limit:
            break
        key = old_keys[at]
        if present(key):
            return None  # a survivor out of place (or a new key before it): moved
        gone.append((key, old_values[at], None))
        del old_keys[at], old_values[at]
    # many deletions: every remaining old key's membership at once
    old = dict(zip(old_keys, old_values, strict=True))
    gone.extend((key, old[key], None) for key in filterfalse(present, old_keys))
    del old_keys[:], old_values[:]  # (only the survivors go on)
    survivors = list(filter(present, old))
    if keys[: len(survivors)] != survivors:
        return None
    old_values.extend(map(old.__getitem__, survivors))
    return gone, len(survivors)


class PodsByNode:
    """Each node's resource-holding pods, sorted by key, patched from the pods that changed."""

    __slots__ = ("diff", "grouped", "members", "rebuilds", "touched")

    def __init__(self) -> None:
        self.diff = _MapDiff()
        self.members: dict[str, dict[PodKey, Pod]] = {}
        self.grouped: dict[str, tuple[Pod, ...]] = {}
        self.rebuilds = 0
        self.touched: set[str] = set()  # nodes whose pod tuple changed since ``take_touched``

    def take_touched(self) -> set[str]:
        touched, self.touched = self.touched, set()
        return touched

    def update(self, pods: Mapping[PodKey, Pod]) -> Mapping[str, tuple[Pod, ...]]:
        """The pods holding resources on each node (any node name, known to the view or not)."""
        changes = self.diff.changes(pods)
        if changes is None:
            self.rebuilds += 1
            self.members, self.grouped = {}, {}
            changes = [(key, None, pod) for key, pod in pods.items()]
        members = self.members
        dirty: set[str] = set()
        for key, old, _ in changes:
            if old is not None:
                where = old.node_name
                if where is not None and old.phase not in TERMINAL_PHASES:
                    del members[where][key]
                    dirty.add(where)
        for key, _, pod in changes:
            if pod is None:
                continue
            where = pod.node_name
            if where is not None and pod.phase not in TERMINAL_PHASES:
                found = members.get(where)
                if found is None:
                    members[where] = {key: pod}
                else:
                    found[key] = pod
                dirty.add(where)
        grouped = self.grouped
        self.touched |= dirty
        for where in dirty:
            found = members.get(where)
            if found:
                held = found.values()
                grouped[where] = tuple(sorted(held, key=pod_key)) if len(found) > 1 else tuple(held)
            else:
                members.pop(where, None)
                grouped.pop(where, None)
        return grouped


class JobSplit:
    """Pending and active jobs, the highest job priority value and each queue's sums.

    The sums are kept per queue name as the jobs give it (resolving a name to a queue path
    depends on the policy, so the cycle resolves the few names): running usage and running job
    count over the active jobs, pending demand and pending job count over the pending ones. A
    job's contribution is taken out with a negative factor when it changes or leaves its state;
    a name whose count falls to zero is dropped (its sums are then zero: integer sums are exact
    in any order, so the patched sums are the from-scratch ones, which ``core._roll_up`` summed
    over every job each cycle: 38 % of a live core run at 50k pods, issue 16 session 14).
    """

    __slots__ = (
        "active",
        "active_changes",
        "active_version",
        "demand",
        "diff",
        "pending",
        "priority_values",
        "rebuilds",
        "release_changes",
        "running",
        "used",
        "waiting",
    )

    def __init__(self) -> None:
        self.diff = _MapDiff()
        self.pending: dict[JobKey, Job] = {}
        self.active: dict[JobKey, Job] = {}
        self.priority_values: dict[int, int] = {}  # value -> jobs with it
        self.used: dict[str | None, IntSum] = {}  # queue name -> running usage of its active jobs
        self.running: dict[str | None, int] = {}  # queue name -> its active jobs
        self.demand: dict[str | None, IntSum] = {}  # queue name -> pending members' requests
        self.waiting: dict[str | None, int] = {}  # queue name -> its pending jobs
        self.rebuilds = 0
        #: bumped whenever an active job comes, goes or changes (``core.PassRecord``'s stamp)
        self.active_version = 0
        #: (key, old active job or None, new active job or None) since ``take_active_changes``;
        #: None: rebuilt (every active job changed)
        self.active_changes: list[tuple[JobKey, Job | None, Job | None]] | None = None
        #: the same changes since ``take_release_changes`` (the running releases take them every
        #: cycle, placements only too; the unheld counts only in full cycles)
        self.release_changes: list[tuple[JobKey, Job | None, Job | None]] | None = None

    def take_release_changes(self) -> list[tuple[JobKey, Job | None, Job | None]] | None:
        changes, self.release_changes = self.release_changes, []
        return changes

    def take_active_changes(self) -> list[tuple[JobKey, Job | None, Job | None]] | None:
        changes, self.active_changes = self.active_changes, []
        return changes

    def update(
        self,
        jobs: Mapping[JobKey, Job],
        pending_states: Collection[object],
        active_states: Collection[object],
    ) -> None:
        changes = self.diff.changes(jobs)
        if changes is None:
            self.rebuilds += 1
            self.active_version += 1
            self.pending, self.active, self.priority_values = {}, {}, {}
            self.used, self.running, self.demand, self.waiting = {}, {}, {}, {}
            self.active_changes = self.release_changes = None
            changes = [(key, None, job) for key, job in jobs.items()]
        pending, active, values = self.pending, self.active, self.priority_values
        used, running, demand, waiting = self.used, self.running, self.demand, self.waiting
        log, release_log = self.active_changes, self.release_changes
        for key, old, job in changes:
            was_active: Job | None = None
            if old is not None:
                state = old.state
                if state in pending_states:
                    del pending[key]
                    _take(demand, waiting, old.queue, old.per_member, len(old.pending_pods))
                elif state in active_states:
                    del active[key]
                    self.active_version += 1
                    _take(used, running, old.queue, old.per_member, old.members - len(old.pending_pods))
                    was_active = old
                if old.priority_value is not None:
                    left = values[old.priority_value] - 1
                    if left:
                        values[old.priority_value] = left
                    else:
                        del values[old.priority_value]
            now_active: Job | None = None
            if job is not None:
                state = job.state
                if state in pending_states:
                    pending[key] = job
                    _give(demand, waiting, job.queue, job.per_member, len(job.pending_pods))
                elif state in active_states:
                    active[key] = job
                    self.active_version += 1
                    _give(used, running, job.queue, job.per_member, job.members - len(job.pending_pods))
                    now_active = job
                if job.priority_value is not None:
                    values[job.priority_value] = values.get(job.priority_value, 0) + 1
            if was_active is not None or now_active is not None:
                if log is not None:
                    log.append((key, was_active, now_active))
                if release_log is not None:
                    release_log.append((key, was_active, now_active))
        if log is not None and len(log) > len(active) + 64:  # never taken (placements only): bounded
            self.active_changes = None
        if release_log is not None and len(release_log) > len(active) + 64:
            self.release_changes = None

    def max_priority_value(self) -> int | None:
        return max(self.priority_values) if self.priority_values else None


def _give(
    sums: dict[str | None, IntSum], counts: dict[str | None, int], queue: str | None, r: Resources, n: int
) -> None:
    acc = sums.get(queue)
    if acc is None:
        acc = sums[queue] = ([0, 0, 0], {})
        counts[queue] = 1
    else:
        counts[queue] += 1
    add_scaled(acc, r, n)


def _take(
    sums: dict[str | None, IntSum], counts: dict[str | None, int], queue: str | None, r: Resources, n: int
) -> None:
    left = counts[queue] - 1
    if left:
        counts[queue] = left
        add_scaled(sums[queue], r, -n)
    else:  # the name's last job: its sums are zero now
        del counts[queue], sums[queue]


class PendingDerivations:
    """Per pending job: its member ``Request``, eligibility, priority total and breakdown, kept.

    Why: every cycle derived a ``Request``, an ``Eligibility`` and a priority breakdown (five
    factors, two dicts) for every pending job (13k at 10k nodes x 50k pods), although an event
    changes the inputs of few of them. The request is a function of the job object alone and
    the eligibility of the job object and the cluster view (its cache is per view), so both are
    kept while the job object (identity) and the view (``begin``) are the same, across a moved
    ``now`` (the console's view read every 60 virtual s in P7: before session 15 the entries
    were dropped at every new ``now``). A breakdown is a pure function of the job object, the
    cycle's ``now``, weights and normalisers (``cycle``), the job's eligibility (tier and union
    capacity) and its queue's fair-share factor; its total and breakdown are reused only when
    ``now`` and the factor are the same as the entry's (the weights and normalisers are checked
    once per cycle). A finished pod changes one queue's usage and so the factor of that queue's
    jobs only: the others keep their breakdowns.
    """

    __slots__ = ("cycle", "entries", "hits")

    def __init__(self) -> None:
        self.cycle: tuple[object, ...] | None = None
        #: job key -> (job, request, eligibility, fair-share factor, priority total, [breakdown or
        #: None until a plan or placement reads it], the ``now`` of the total)
        self.entries: dict[JobKey, tuple[Job, Any, Any, float, int, list[Any], float]] = {}
        self.hits = 0

    def begin(self, cycle: tuple[object, ...], pending: Collection[JobKey]) -> None:
        """Start a cycle with these cycle-wide inputs (the view first, by identity; the weights
        and normalisers by equality); drop everything when they changed."""
        kept = self.cycle
        if kept is None or kept[0] is not cycle[0] or kept[1:] != cycle[1:]:
            self.cycle = cycle
            self.entries = {}
        elif len(self.entries) > 2 * len(pending) + 64:
            self.entries = {key: value for key, value in self.entries.items() if key in pending}
        self.hits = 0


class PointDerivations:
    """Per pending job, what a placements-only cycle derives before it orders the jobs, kept
    across cycles: the member ``Request``, the ``Eligibility`` and whether ``settled`` stops the
    job on something other than its quota.

    Why: the simulator's scheduling points (P7) run one placements-only cycle every 10 virtual
    seconds over ~800 pending jobs, of which only a few changed since the last point; each
    cycle derived all three again for every job (``settled``, ``eligibility`` and hashing the
    request: ~30 % of a point's core, issue 16 session 15). All three are pure functions of the
    job object, the cluster view (partitions, node matching: ``eligibility``'s cache is per
    view), the policy (closed queues) and the job's queue path, and none reads ``now`` or
    usage: the quota check, the one part of ``settled`` that reads usage, is not kept. An entry
    is used only for the same job object (identity) and path; the view and the policy are
    checked once per cycle (``begin``: identity, the policy also by equality) and everything is
    dropped when either changed. ``PendingDerivations`` is the full cycle's counterpart.
    """

    __slots__ = ("entries", "hits", "stamp")

    def __init__(self) -> None:
        self.stamp: tuple[ClusterView, Policy] | None = None
        #: job key -> (job, queue path, request, eligibility, stopped before its quota is read)
        self.entries: dict[JobKey, tuple[Job, str, Any, Any, bool]] = {}
        self.hits = 0

    def begin(
        self, view: ClusterView, policy: Policy, pending: Collection[JobKey]
    ) -> dict[JobKey, tuple[Job, str, Any, Any, bool]]:
        """The entries for a cycle on ``view`` and ``policy``; all dropped when either changed."""
        stamp = self.stamp
        if stamp is None or stamp[0] is not view or (stamp[1] is not policy and stamp[1] != policy):
            self.stamp = (view, policy)
            self.entries = {}
        elif len(self.entries) > 2 * len(pending) + 64:
            self.entries = {key: value for key, value in self.entries.items() if key in pending}
        self.hits = 0
        return self.entries


class RunningPlans:
    """Running jobs' plans (``types.JobPlan``), kept between cycles.

    Why: the console's job list reads every job's plan after each cycle to show its priority
    total (17k running jobs in P6's cluster), and a running job's plan is a pure function of the
    job object, the cluster view (its partition, that partition's factor and capacity), the
    policy (weights, queues), the cycle's priority normalisers (``context``) and its queue's
    fair-share factor; the clock does not enter it when the job has a start time (its age is
    taken at its start; a job without one is not kept). An entry is used only when the job is
    the same object, the context is this cycle's (identity: ``context_for`` hands out the kept
    tuple while the inputs are the same) and the factor is equal. Plans are read after the
    cycle, possibly while another one runs on this memo: an entry written by a reader of an
    older cycle carries that cycle's context and factor, so it is used only where it is right.
    """

    __slots__ = ("context", "entries")

    def __init__(self) -> None:
        self.context: tuple[object, ...] | None = None
        #: job key -> (job, context, fair-share factor, plan)
        self.entries: dict[JobKey, tuple[Job, object, float, Any]] = {}

    def context_for(self, view: ClusterView, policy: Policy, inputs: object, active: int) -> object:
        """This cycle's context: the kept one when view, policy and normalisers are the same."""
        kept = self.context
        if (
            kept is None
            or kept[0] is not view
            or (kept[1] is not policy and kept[1] != policy)
            or kept[2] != inputs
        ):
            kept = self.context = (view, policy, inputs)
            self.entries = {}
        elif len(self.entries) > 2 * active + 64:
            self.entries = {}
        return kept


#: the memo ``schedule`` uses by default (one cycle at a time; see ``Memo``)
SHARED = Memo()
