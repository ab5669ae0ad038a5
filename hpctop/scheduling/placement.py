"""Free state of nodes and GPUs, and all-or-nothing gang placement.

Why this shape: a cycle over the Alibaba trace checks thousands of pending pods against ~1,500
nodes, so each node's free state is a small mutable record (``NodeFree``: plain ints, a dict of
extended resources and a list of free milli-GPU per GPU index) built once per cycle from the
snapshot, and a request is pre-digested into a ``Request`` whose GPU part is either *k whole GPUs*
or *a fraction of one*. ``hosts`` answers "how many members fit here" in O(GPUs on the node), which
is enough both for a first-fit scan (single pods, early exit) and for a gang (sum over nodes). A
gang is planned without mutating anything (``choose``) and committed only when every member has
a place, so a gang is never partly placed.

GPU rules: a whole-GPU member takes that many fully free indices (lowest first); a fraction takes
the fullest index that still fits (best fit, against fragmentation); a request above one GPU that
is not a multiple of 1000 is rounded up to whole GPUs. MIG profiles are extended resources
(``nvidia.com/mig-<profile>``) counted against node allocatable like any other.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hpctop.model.objects import Node, Pod, PodKey
from hpctop.model.quantity import MAX_GPUS
from hpctop.model.resources import Resources

TOPOLOGY_LABELS = ("nvidia.com/gpu.clique", "topology/clique", "node-group")


@dataclass(frozen=True, slots=True)
class Request:
    """One member's request, with the GPU part split into whole GPUs or a fraction of one."""

    cpu: int
    memory: int
    ext: tuple[tuple[str, int], ...]
    whole: int  # number of fully free GPU indices needed
    frac: int  # milli-GPU on one shared index (0 when whole or no GPU)
    #: most members of the job on one node (0: no limit); 1 is Slurm's ``--ntasks-per-node=1``
    per_node: int = 0

    @staticmethod
    def of(r: Resources, per_node: int = 0) -> Request:
        gpu = max(r.gpu, 0)
        if gpu == 0:
            whole, frac = 0, 0
        elif gpu < 1000:
            whole, frac = 0, gpu
        else:
            whole, frac = -(-gpu // 1000), 0
        return Request(
            max(r.cpu, 0),
            max(r.memory, 0),
            tuple((k, v) for k, v in r.extended if v > 0),
            whole,
            frac,
            max(per_node, 0),
        )

    def spreads_as_much(self, per_node: int) -> bool:
        """Whether this request's per-node limit is at least as strict as ``per_node`` (0: none)."""
        return per_node == 0 or (self.per_node != 0 and self.per_node <= per_node)

    @property
    def gpu_milli(self) -> int:
        """GPU demand in milli-GPU after rounding (used for dominance: more milli never fits better)."""
        return self.whole * 1000 if self.whole else self.frac

    def dominates(self, other: Request) -> bool:
        """Whether this request is at least ``other`` in every component (so fails wherever it fails).

        A per-node limit counts as larger when it is at least as strict (``spreads_as_much``).
        """
        if not self.spreads_as_much(other.per_node):
            return False
        if self.cpu < other.cpu or self.memory < other.memory or self.gpu_milli < other.gpu_milli:
            return False
        mine = dict(self.ext)
        return all(mine.get(k, 0) >= v for k, v in other.ext)


class NodeFree:
    """Mutable free resources of one node during a cycle (or a scratch copy of them).

    ``whole`` (fully free GPU indices) is kept up to date by ``charge`` and ``minimum``, the only
    writers of ``gpus``: whole-GPU checks are the hot path of every scan, and counting the list
    each time was a large share of a cycle at 10k nodes.
    """

    __slots__ = ("cpu", "domain", "ext", "gpus", "memory", "name", "product", "whole")

    def __init__(
        self,
        name: str,
        cpu: int,
        memory: int,
        ext: dict[str, int],
        gpus: list[int],
        domain: str | None,
        product: str | None,
        whole: int | None = None,
    ) -> None:
        self.name = name
        self.cpu = cpu
        self.memory = memory
        self.ext = ext
        self.gpus = gpus
        self.domain = domain
        self.product = product
        self.whole = len([g for g in gpus if g >= 1000]) if whole is None else whole

    @staticmethod
    def empty(node: Node, product: str | None) -> NodeFree:
        """The node with nothing running on it: its allocatable, every GPU index fully free."""
        a = node.allocatable
        return NodeFree(
            node.name,
            a.cpu,
            a.memory,
            dict(a.extended),
            # never a list sized by the cluster's number alone: decode bounds it, and so does this
            [1000] * min(max(a.gpu // 1000, 0), MAX_GPUS),
            topology_domain(node),
            product,
        )

    def clone(self) -> NodeFree:
        return NodeFree(
            self.name,
            self.cpu,
            self.memory,
            dict(self.ext),
            list(self.gpus),
            self.domain,
            self.product,
            self.whole,
        )

    def whole_free(self) -> int:
        return self.whole

    def max_gpu_free(self) -> int:
        return max(self.gpus, default=0)

    def hosts(self, req: Request, limit: int) -> int:
        """How many members of ``req`` fit on this node now, at most ``limit`` (and ``req.per_node``)."""
        n = limit if not req.per_node or req.per_node > limit else req.per_node
        if req.cpu:
            n = min(n, self.cpu // req.cpu)
        if req.memory:
            n = min(n, self.memory // req.memory)
        for key, need in req.ext:
            n = min(n, self.ext.get(key, 0) // need)
        if n <= 0:
            return 0
        if req.whole:
            n = min(n, self.whole_free() // req.whole)
        elif req.frac:
            n = min(n, sum(g // req.frac for g in self.gpus if g > 0))
        return max(n, 0)

    def fits_one(self, req: Request) -> bool:
        """``hosts(req, 1) == 1``, with the cheap checks first (the hot path of a first-fit scan)."""
        if self.cpu < req.cpu or self.memory < req.memory:
            return False
        if req.whole:
            if self.whole < req.whole:
                return False
        elif req.frac and max(self.gpus, default=0) < req.frac:
            return False
        ext = self.ext
        return all(ext.get(key, 0) >= need for key, need in req.ext)

    def pick_gpus(self, req: Request) -> tuple[int, ...]:
        """The GPU indices one member would take (assumes it fits)."""
        if req.whole:
            return tuple([i for i, g in enumerate(self.gpus) if g >= 1000][: req.whole])
        if req.frac:
            best = -1
            for i, g in enumerate(self.gpus):
                if g >= req.frac and (best < 0 or g < self.gpus[best]):
                    best = i
            return (best,) if best >= 0 else ()
        return ()

    def charge(self, req: Request, indices: Sequence[int], sign: int = 1) -> None:
        """Take (sign 1) or give back (sign -1) one member's resources at the given GPU indices."""
        self.cpu -= sign * req.cpu
        self.memory -= sign * req.memory
        for key, need in req.ext:
            self.ext[key] = self.ext.get(key, 0) - sign * need
        per_index = 1000 if req.whole else req.frac
        gpus = self.gpus
        for i in indices:
            if 0 <= i < len(gpus):
                was = gpus[i] >= 1000
                gpus[i] -= sign * per_index
                if was != (gpus[i] >= 1000):
                    self.whole += -1 if was else 1

    def place(self, req: Request) -> tuple[int, ...]:
        """Place one member here (assumes it fits) and return its GPU indices."""
        indices = self.pick_gpus(req)
        self.charge(req, indices)
        return indices

    def minimum(self, other: NodeFree) -> None:
        """Componentwise minimum with ``other`` (the free state at another moment), in place."""
        self.cpu = min(self.cpu, other.cpu)
        self.memory = min(self.memory, other.memory)
        for key in set(self.ext) | set(other.ext):
            self.ext[key] = min(self.ext.get(key, 0), other.ext.get(key, 0))
        for i, g in enumerate(other.gpus):
            if i < len(self.gpus) and g < self.gpus[i]:
                self.gpus[i] = g
        self.whole = len([g for g in self.gpus if g >= 1000])


class WholeIndex:
    """The cycle's free-capacity index: fully free GPU indices per node, bucketed by that count.

    Why: at 10k nodes x 50k pending pods the profile showed a cycle spending most of its time in
    ``fits_one`` over every node of a partition, for each gang tried (and again for "why is it
    blocked"), although once the cluster fills only a few nodes have the 4 or 8 whole GPUs a
    member asks. A member asking ``k`` whole GPUs fits a node only if the node's live state has
    ``k`` fully free indices, and what a job may use under reservations is never more than the
    live state, so the nodes outside the buckets ``>= k`` are exactly the ones a scan would
    skip: filtering by the index changes no answer, only what is looked at. The counts are of
    the live state and must be updated (``update``) after every placement on a node.

    Each answer of ``candidates`` is kept per (node set, ``k``) and patched by ``update`` (a node
    whose count crosses ``k`` is inserted or removed, by bisection on the name), because every
    placement moves the version and the P6 profile (10k x 50k) spent ~85 us per ``candidates``
    call on 2,832 calls rebuilding the same sorted lists from the buckets.
    """

    __slots__ = ("buckets", "count", "kept", "version")

    def __init__(self, count: dict[str, int]) -> None:
        self.count = count
        self.version = 0  # bumped whenever a count changes: answers of ``candidates`` stand until then
        buckets: dict[int, set[str]] = {}
        for name, c in count.items():
            if c > 0:
                found = buckets.get(c)
                if found is None:
                    buckets[c] = {name}
                else:
                    found.add(name)
        self.buckets = buckets
        #: k -> the node sets asked with that k (by id; the set is kept with it) and their answers
        self.kept: dict[int, dict[int, tuple[frozenset[str], list[str]]]] = {}

    def update(self, nf: NodeFree) -> None:
        """Re-read one node's live state after it changed."""
        name = nf.name
        c = nf.whole_free()
        old = self.count.get(name, 0)
        if old == c:
            return
        self.version += 1
        self.count[name] = c
        if old > 0:
            self.buckets[old].discard(name)
        if c > 0:
            self.buckets.setdefault(c, set()).add(name)
        # the kept answers for the k the node crossed: old < k <= c (it joins) or c < k <= old (it leaves)
        kept = self.kept
        for k in range(min(old, c) + 1, max(old, c) + 1):
            answers = kept.get(k)
            if not answers:
                continue
            for members, names in answers.values():
                if name not in members:
                    continue
                at = bisect.bisect_left(names, name)
                if c > old:
                    names.insert(at, name)
                else:
                    del names[at]

    def candidates(self, names: Sequence[str], members: frozenset[str], k: int) -> Sequence[str]:
        """``names`` (sorted by name, the same set as ``members``) less the nodes with fewer than
        ``k`` whole free GPUs, in order (a new list: the kept one is patched by ``update``)."""
        if k <= 0:
            return names
        answers = self.kept.setdefault(k, {})
        found = answers.get(id(members))
        if found is None or found[0] is not members:
            out: list[str] = []
            for c, bucket in self.buckets.items():
                if c >= k and bucket:
                    out.extend(bucket & members)
            out.sort()
            found = answers[id(members)] = (members, out)
        return list(found[1])


@dataclass(frozen=True, slots=True)
class Charge:
    """What one bound pod holds on its node (so it can be given back at its end time)."""

    node: str
    req: Request
    indices: tuple[int, ...]


def topology_domain(node: Node) -> str | None:
    """The NVLink/rack domain a gang prefers to stay in (clique label, then generic labels)."""
    for label in TOPOLOGY_LABELS:
        value = node.labels.get(label)
        if value:
            return value
    return node.gpu.clique


def _pod_indices(free: NodeFree, pod: Pod, req: Request) -> tuple[int, ...]:
    """Which GPU indices a bound pod holds: its annotation if valid, else where it would be placed."""
    if pod.gpu_indices and all(0 <= i < len(free.gpus) for i in pod.gpu_indices):
        if req.whole:
            return pod.gpu_indices[: req.whole] if len(pod.gpu_indices) >= req.whole else pod.gpu_indices
        if req.frac:
            return pod.gpu_indices[:1]
        return ()
    if not (req.whole or req.frac) or not free.gpus:
        return ()
    picked = free.pick_gpus(req)
    if picked:
        return picked
    # overcommitted or unknown: charge the freest indices so the totals stay right
    order = sorted(range(len(free.gpus)), key=lambda i: (-free.gpus[i], i))
    return tuple(order[: max(req.whole, 1)])


def charge_order(pods: Iterable[Pod]) -> list[Pod]:
    """The order ``free_of`` charges a node's pods in: those naming their GPU indices first."""
    return sorted(pods, key=lambda p: (not p.gpu_indices, p.namespace, p.name))


#: ``Request.of`` per distinct ``Resources`` (no per-node limit), for the bound pods of a cold cycle
_REQUESTS: dict[Resources, Request] = {}


def request_of(r: Resources) -> Request:
    """``Request.of(r)``, remembered: a cold cycle at 10k nodes charged 30k bound pods, most of
    them asking one of a few shapes (bench/README.md, issue 16 fourth session)."""
    req = _REQUESTS.get(r)
    if req is None:
        if len(_REQUESTS) >= 4096:
            _REQUESTS.clear()
        req = _REQUESTS[r] = Request.of(r)
    return req


def free_of(
    node: Node,
    product: str | None,
    pods: Iterable[Pod],
    empty: NodeFree | None = None,
    ordered: Sequence[Pod] | None = None,
) -> tuple[NodeFree, dict[PodKey, Charge]]:
    """One node's free state after ``pods`` (those holding resources there), and each pod's charge.

    Pods that name their GPU indices are charged first, so pods without indices fill around them.
    The result depends only on the node and its pods (objects are frozen), which is what lets
    ``memo.Memo`` keep it between cycles while neither changes. ``empty`` (the node's
    ``NodeFree.empty``, read only) and ``ordered`` (``charge_order(pods)``) save a caller that
    has them the rebuild.
    """
    nf = NodeFree.empty(node, product) if empty is None else empty.clone()
    charges: dict[PodKey, Charge] = {}
    name = node.name
    for pod in charge_order(pods) if ordered is None else ordered:
        req = request_of(pod.requests)
        indices = _pod_indices(nf, pod, req)
        nf.charge(req, indices)
        charges[pod.key] = Charge(name, req, indices)
    return nf, charges


def build_free(
    nodes: Iterable[tuple[Node, str | None]], pods_by_node: dict[str, list[Pod]]
) -> tuple[dict[str, NodeFree], dict[tuple[str, str], Charge]]:
    """Free state of every node after the pods that hold resources there, and each pod's charge."""
    free: dict[str, NodeFree] = {}
    charges: dict[tuple[str, str], Charge] = {}
    for node, product in nodes:
        nf, mine = free_of(node, product, pods_by_node.get(node.name, ()))
        charges.update(mine)
        free[node.name] = nf
    return free, charges


def _greedy(items: list[tuple[int, int, NodeFree]], m: int) -> list[tuple[NodeFree, int]] | None:
    """Fewest nodes: take the nodes hosting the most members first (ties: scan order)."""
    out: list[tuple[NodeFree, int]] = []
    left = m
    for h, _idx, nf in sorted(items, key=lambda t: (-t[0], t[1])):
        take = min(h, left)
        out.append((nf, take))
        left -= take
        if left == 0:
            return out
    return None


def choose(nodes: Sequence[NodeFree], req: Request, m: int) -> list[tuple[NodeFree, int]] | None:
    """Plan where ``m`` members go (node, count) without mutating anything; ``None`` if they don't fit.

    One member: first fit in scan order (early exit). A gang: prefer one topology domain needing the
    fewest nodes; otherwise the fewest nodes overall.
    """
    return choose_counted(nodes, req, m)[0]


def choose_counted(
    nodes: Sequence[NodeFree], req: Request, m: int
) -> tuple[list[tuple[NodeFree, int]] | None, int]:
    """``choose``, and on failure how many members the nodes could hold in all (always < ``m``).

    Why: the P6 profile (10k nodes, 50k pending pods) spent most of a cycle re-scanning all nodes
    of a partition for gangs of every size once the cluster was full. When a gang fails, no node
    hosts ``m`` members, so the capped sum is the exact capacity C; free resources only shrink
    during a cycle, so the caller can remember that any gang of more than C members fails too.
    """
    if m <= 0:
        return [], 0
    if m == 1:
        for nf in nodes:
            if nf.fits_one(req):
                return [(nf, 1)], 1
        return None, 0
    # ``fits_one`` then ``hosts`` per node, inlined, and the nodes grouped by topology domain in the
    # same pass: the hot loop of a gang's placement scan (~600 scans of ~370 nodes at 10k nodes)
    rc, rm, rext, k, frac = req.cpu, req.memory, req.ext, req.whole, req.frac
    most = m if not req.per_node or req.per_node > m else req.per_node
    items: list[tuple[int, int, NodeFree]] = []
    domains: dict[str, list[tuple[int, int, NodeFree]]] = {}
    total = 0
    if k and not rext:
        # whole GPUs and nothing extended (P6's gangs): the whole-GPU count bounds first, so a
        # node without them costs one division; a node passing both floor checks hosts >= 1
        for idx, nf in enumerate(nodes):
            h = nf.whole // k
            if h <= 0:
                continue
            cpu, memory = nf.cpu, nf.memory
            if cpu < rc or memory < rm:
                continue
            if h > most:
                h = most
            if rc and cpu // rc < h:
                h = cpu // rc
            if rm and memory // rm < h:
                h = memory // rm
            item = (h, idx, nf)
            items.append(item)
            total += h
            domain = nf.domain
            if domain is not None:
                found = domains.get(domain)
                if found is None:
                    domains[domain] = [item]
                else:
                    found.append(item)
    else:
        for idx, nf in enumerate(nodes):
            cpu, memory = nf.cpu, nf.memory
            if cpu < rc or memory < rm:
                continue
            h = most
            if rc and cpu // rc < h:
                h = cpu // rc
            if rm and memory // rm < h:
                h = memory // rm
            if rext:
                ext = nf.ext
                if not all(ext.get(key, 0) >= need for key, need in rext):
                    continue
                for key, need in rext:
                    h = min(h, ext.get(key, 0) // need)
            if h <= 0:
                continue
            if k:
                free = nf.whole
                if free < k:
                    continue
                h = min(h, free // k)
            elif frac:
                gpus = nf.gpus
                if max(gpus, default=0) < frac:
                    continue
                h = min(h, sum(g // frac for g in gpus if g > 0))
            if h > 0:
                item = (h, idx, nf)
                items.append(item)
                total += h
                domain = nf.domain
                if domain is not None:
                    found = domains.get(domain)
                    if found is None:
                        domains[domain] = [item]
                    else:
                        found.append(item)
    if total < m:
        return None, total
    return _pick(items, domains, m), total


def plan_hosted(
    items: list[tuple[int, int, NodeFree]], req: Request, m: int
) -> list[tuple[NodeFree, int]] | None:
    """``choose``'s plan from host counts already known: ``items`` holds (members hosted, > 0,
    scan position, state) in scan order, each count what ``hosts(req, m)`` gives for that state.
    A state below the request's CPU or memory is left out as ``choose`` leaves it out (``hosts``
    counts an overcommitted node for a request asking none of what it lacks).

    Why: a backfill search knows every node's count when it tries a time (it keeps them to
    total the gang's room), so re-scanning the states (``choose``) redid that work; at 10k x 50k
    every gang search that found a time did so at its first step, over ~350 hosting nodes.
    """
    rc, rm = req.cpu, req.memory
    items = [item for item in items if item[2].cpu >= rc and item[2].memory >= rm]
    if sum(item[0] for item in items) < m:
        return None
    domains: dict[str, list[tuple[int, int, NodeFree]]] = {}
    for item in items:
        domain = item[2].domain
        if domain is not None:
            found = domains.get(domain)
            if found is None:
                domains[domain] = [item]
            else:
                found.append(item)
    return _pick(items, domains, m)


def _pick(
    items: list[tuple[int, int, NodeFree]], domains: dict[str, list[tuple[int, int, NodeFree]]], m: int
) -> list[tuple[NodeFree, int]] | None:
    """The greedy plan in the domain needing the fewest nodes, else over all (items hold >= m)."""
    # the domain whose greedy plan needs the fewest nodes (first in name order on ties); only
    # the plan's length is needed to compare, and no domain can beat ceil(m / largest host count)
    best: tuple[int, str] | None = None
    floor = -(-m // max(item[0] for item in items))
    for domain in sorted(domains):
        counts = [item[0] for item in domains[domain]]
        if sum(counts) < m:
            continue  # ``_greedy`` would run out of nodes
        counts.sort(reverse=True)
        length = 0
        left = m
        for h in counts:
            length += 1
            left -= h
            if left <= 0:
                break
        if best is None or length < best[0]:
            best = (length, domain)
            if length == floor:
                break
    if best is not None:
        return _greedy(domains[best[1]], m)
    return _greedy(items, m)


def commit(plan: list[tuple[NodeFree, int]], req: Request) -> list[tuple[str, tuple[int, ...]]]:
    """Apply a plan to the nodes in it; returns (node, gpu indices) per member in order."""
    out: list[tuple[str, tuple[int, ...]]] = []
    for nf, count in plan:
        for _ in range(count):
            out.append((nf.name, nf.place(req)))
    return out
