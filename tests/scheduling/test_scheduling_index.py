"""The P6 fast paths give exactly the answers of the plain scans they replace.

Why these tests: the cycle at 10k nodes x 50k pending pods was made fast by skipping work
(``WholeIndex`` leaves out nodes without enough whole free GPUs, the gang scan is inlined, the
backfill search merges node events lazily and reuses released states). Each is only right if it
changes nothing, so each is checked against a straightforward reference on random inputs, and
whole cycles on random clusters are compared with the index switched off.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import pytest

import hpctop.scheduling.core as core
from bench.p6_core import NOW, cluster, policy
from hpctop.scheduling.backfill import MAX_SHADOW_STEPS, Profile, earliest_start
from hpctop.scheduling.memo import Memo
from hpctop.scheduling.placement import NodeFree, Request, WholeIndex, choose_counted, plan_hosted
from hpctop.scheduling.types import ScheduleResult

INF = math.inf

# -- references: the scans as they were written before the fast paths ----------------------------


def _greedy_ref(items: list[tuple[int, int, NodeFree]], m: int) -> list[tuple[NodeFree, int]] | None:
    out: list[tuple[NodeFree, int]] = []
    left = m
    for h, _idx, nf in sorted(items, key=lambda t: (-t[0], t[1])):
        take = min(h, left)
        out.append((nf, take))
        left -= take
        if left == 0:
            return out
    return None


def choose_counted_ref(
    nodes: Sequence[NodeFree], req: Request, m: int
) -> tuple[list[tuple[NodeFree, int]] | None, int]:
    if m <= 0:
        return [], 0
    if m == 1:
        for nf in nodes:
            if nf.fits_one(req):
                return [(nf, 1)], 1
        return None, 0
    items = []
    total = 0
    for idx, nf in enumerate(nodes):
        if not nf.fits_one(req):
            continue
        h = nf.hosts(req, m)
        if h:
            items.append((h, idx, nf))
            total += h
    if total < m:
        return None, total
    domains: dict[str, list[tuple[int, int, NodeFree]]] = {}
    for item in items:
        if item[2].domain is not None:
            domains.setdefault(item[2].domain, []).append(item)
    best: tuple[int, str, list[tuple[NodeFree, int]]] | None = None
    for domain in sorted(domains):
        plan = _greedy_ref(domains[domain], m)
        if plan is not None and (best is None or len(plan) < best[0]):
            best = (len(plan), domain, plan)
    if best is not None:
        return best[2], total
    return _greedy_ref(items, m), total


def earliest_start_ref(
    profile: Profile, nodes: Sequence[str], req: Request, m: int, until: float = INF
) -> tuple[float, list[tuple[str, tuple[int, ...]]]] | None:
    """The gang search as it was: every event of the node set built and sorted, states cloned."""
    if (not profile.releases and not profile.reservations) or profile.budget <= 0:
        return None
    assert m > 1
    events: list[tuple[float, int, str, Request | None, tuple[int, ...]]] = []
    for k, name in enumerate(nodes):
        if profile.reserved(name):
            for point in profile.change_points(name):
                if profile.now < point < until:
                    events.append((point, k, name, None, ()))
        else:
            for when, r, indices in profile.releases.get(name, ()):
                if when < until:
                    events.append((when, k, name, r, indices))
    if not events:
        return None
    events.sort(key=lambda e: (e[0], e[1]))
    current: dict[str, NodeFree] = {}
    owned: set[str] = set()
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
    while i < len(events) and steps < MAX_SHADOW_STEPS and profile.budget > 0:
        t = events[i][0]
        touched: set[str] = set()
        while i < len(events) and events[i][0] == t:
            _, _, name, rel, indices = events[i]
            i += 1
            profile.budget -= 1
            touched.add(name)
            if rel is None:
                current[name] = profile.avail(name, t, INF)
                owned.add(name)
                continue
            if name not in owned:
                current[name] = current[name].clone()
                owned.add(name)
            current[name].charge(rel, indices, -1)
        steps += 1
        for name in touched:
            h = current[name].hosts(req, m)
            total += h - hosts[name]
            hosts[name] = h
        if total < m:
            continue
        plan, _ = choose_counted_ref([current[n] for n in nodes], req, m)
        if plan is None:
            continue
        members: list[tuple[str, tuple[int, ...]]] = []
        for nf, count in plan:
            scratch = nf.clone()
            for _ in range(count):
                members.append((nf.name, scratch.place(req)))
        return t, members
    return None


# -- random inputs -------------------------------------------------------------------------------


def _random_node(rng: random.Random, i: int) -> NodeFree:
    gpus = [rng.choice((1000, 1000, 1000, 700, 250, 0, -100)) for _ in range(rng.choice((0, 4, 8, 8)))]
    ext = {"nvidia.com/mig-1g.10gb": rng.randint(0, 3)} if rng.random() < 0.2 else {}
    return NodeFree(
        f"n{i:03d}",
        rng.choice((-500, 0, 2000, 8000, 32_000, 64_000)),
        rng.choice((0, 8, 64, 256)) * 2**30,
        ext,
        gpus,
        rng.choice((None, "c0", "c1", "c2")),
        None,
    )


def _random_request(rng: random.Random) -> Request:
    ext = (("nvidia.com/mig-1g.10gb", 1),) if rng.random() < 0.1 else ()
    gpu = rng.choice((0, 0, 300, 1000, 2000, 4000, 8000))
    whole, frac = (gpu // 1000, 0) if gpu >= 1000 else (0, gpu)
    return Request(rng.choice((0, 1000, 8000, 16_000)), rng.choice((0, 2**30, 32 * 2**30)), ext, whole, frac)


def _plan_names(plan: list[tuple[NodeFree, int]] | None) -> list[tuple[str, int]] | None:
    return None if plan is None else [(nf.name, count) for nf, count in plan]


@pytest.mark.parametrize("seed", range(40))
def test_gang_scan_matches_the_plain_scan(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [_random_node(rng, i) for i in range(rng.randint(0, 40))]
    for _ in range(25):
        req, m = _random_request(rng), rng.choice((1, 2, 3, 4, 8, 16))
        got_plan, got_cap = choose_counted(nodes, req, m)
        want_plan, want_cap = choose_counted_ref(nodes, req, m)
        assert _plan_names(got_plan) == _plan_names(want_plan)
        assert got_cap == want_cap
        if m > 1:  # the plan from counts a search already holds is the scan's plan
            items = [(nf.hosts(req, m), i, nf) for i, nf in enumerate(nodes) if nf.hosts(req, m)]
            assert _plan_names(plan_hosted(items, req, m)) == _plan_names(want_plan)


def _count_whole(nf: NodeFree) -> int:
    return sum(1 for g in nf.gpus if g >= 1000)


@pytest.mark.parametrize("seed", range(20))
def test_kept_whole_gpu_count_follows_every_change(seed: int) -> None:
    rng = random.Random(seed)
    nf = _random_node(rng, 0)
    other = _random_node(rng, 1)
    for _ in range(60):
        req = _random_request(rng)
        indices = [rng.randrange(-1, len(nf.gpus) + 1) for _ in range(max(req.whole, 1))]
        nf.charge(req, indices, rng.choice((1, -1)))
        assert nf.whole_free() == _count_whole(nf)
        copy = nf.clone()
        assert copy.whole_free() == _count_whole(copy)
        if rng.random() < 0.2:
            nf.minimum(other)
            assert nf.whole_free() == _count_whole(nf)


@pytest.mark.parametrize("seed", range(20))
def test_whole_index_candidates_are_the_nodes_a_scan_keeps(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [_random_node(rng, i) for i in range(60)]
    index = WholeIndex({nf.name: _count_whole(nf) for nf in nodes})
    for _ in range(30):
        i = rng.randrange(len(nodes))  # a node's live state changes, as by a placement; tell the index
        old = nodes[i]
        gpus = [rng.choice((1000, 500, 0)) for _ in old.gpus]
        nodes[i] = NodeFree(old.name, old.cpu, old.memory, old.ext, gpus, old.domain, None)
        index.update(nodes[i])
        subset = sorted(nf.name for nf in rng.sample(nodes, rng.randint(0, len(nodes))))
        k = rng.randint(0, 9)
        by_name = {nf.name: nf for nf in nodes}
        want = [n for n in subset if _count_whole(by_name[n]) >= k] if k else subset
        assert list(index.candidates(subset, frozenset(subset), k)) == want


@pytest.mark.parametrize("seed", range(20))
def test_kept_candidates_follow_every_update(seed: int) -> None:
    """The same node sets asked again and again between updates (as a cycle does): each answer
    is the plain filter of the nodes' current counts, although the index patches kept lists."""
    rng = random.Random(seed)
    nodes = [_random_node(rng, i) for i in range(60)]
    index = WholeIndex({nf.name: _count_whole(nf) for nf in nodes})
    sets = []
    for _ in range(4):
        subset = sorted(nf.name for nf in rng.sample(nodes, rng.randint(0, len(nodes))))
        sets.append((subset, frozenset(subset)))
    for _ in range(80):
        i = rng.randrange(len(nodes))
        old = nodes[i]
        gpus = [rng.choice((1000, 1000, 500, 0)) for _ in old.gpus]
        nodes[i] = NodeFree(old.name, old.cpu, old.memory, old.ext, gpus, old.domain, None)
        index.update(nodes[i])
        by_name = {nf.name: nf for nf in nodes}
        for subset, members in rng.sample(sets, 2):
            k = rng.randint(1, 9)
            got = index.candidates(subset, members, k)
            assert list(got) == [n for n in subset if _count_whole(by_name[n]) >= k]
            if isinstance(got, list):
                got.clear()  # what a caller does with its answer never reaches the kept one


def _random_profile(seed: int) -> tuple[Profile, list[str]]:
    """Live nodes of 8 GPUs with timed releases and a few reservations, built the same for a seed."""
    rng = random.Random(seed)
    now = 1000.0
    live: dict[str, NodeFree] = {}
    for i in range(rng.randint(2, 24)):
        live[f"n{i:02d}"] = NodeFree(f"n{i:02d}", 64_000, 512 * 2**30, {}, [1000] * 8, f"c{i // 4}", None)
    profile = Profile(now, live)
    for name, nf in live.items():
        free = list(range(8))
        rng.shuffle(free)
        while free and rng.random() < 0.8:
            take = [free.pop() for _ in range(min(rng.choice((1, 2, 4)), len(free)))]
            req = Request(4000 * len(take), 16 * 2**30 * len(take), (), len(take), 0)
            nf.charge(req, take)
            if rng.random() < 0.85:  # some run without a limit and never release
                end = now + rng.choice((-50.0, 60.0, 60.0, 300.0, 900.0, 3600.0))
                profile.add_release(name, end, req, tuple(take))
    for j in range(rng.randint(0, 3)):
        names = rng.sample(sorted(live), min(2, len(live)))
        req = Request(8000, 32 * 2**30, (), 2, 0)
        start = now + rng.choice((60.0, 300.0, 900.0))
        end = start + rng.choice((600.0, INF))
        profile.add_reservation(("ns", "Job", f"r{j}"), "p", start, end, [(n, (0, 1)) for n in names], req)
    profile.budget = rng.choice((10_000, 40, 5))
    return profile, sorted(live)


@pytest.mark.parametrize("seed", range(60))
def test_backfill_search_matches_the_sorted_event_sweep(seed: int) -> None:
    rng = random.Random(seed * 7919)
    for _ in range(4):
        req = Request(rng.choice((0, 4000)), 2**30, (), rng.choice((1, 2, 4, 8)), 0)
        m = rng.choice((2, 3, 4, 8))
        until = rng.choice((INF, 1300.0, 2500.0))
        fast, names = _random_profile(seed)
        plain, _ = _random_profile(seed)
        fitting = [n for n in names if fast.live[n].whole_free() >= req.whole]
        got = earliest_start(fast, names, req, m, until, fitting)
        want = earliest_start_ref(plain, names, req, m, until)
        assert got == want
        # between searches the cycle places and reserves; the next search reuses the kept
        # streams and released states of the nodes left alone and must see the changed ones
        for profile in (fast, plain):
            change = random.Random(seed)
            name = change.choice(names)
            one = Request(1000, 2**30, (), 1, 0)
            if change.random() < 0.5:
                profile.live[name].charge(one, (7,))
                profile.add_release(name, profile.now + change.choice((30.0, 700.0)), one, (7,))
            else:
                start = profile.now + change.choice((45.0, 500.0))
                profile.add_reservation(("ns", "Job", "later"), "p", start, INF, [(name, (6,))], one)
        fitting = [n for n in names if fast.live[n].whole_free() >= req.whole]
        again = earliest_start(fast, names, req, m, until, fitting)
        want_again = earliest_start_ref(plain, names, req, m, until)
        assert again == want_again
        assert fast.budget == plain.budget


def single_ref(
    profile: Profile, nodes: Sequence[str], req: Request, until: float
) -> tuple[float, list[tuple[str, tuple[int, ...]]]] | None:
    """The one-member search as it was before its walks were kept: each node walked afresh."""
    if (not profile.releases and not profile.reservations) or profile.budget <= 0:
        return None  # ``earliest_start``'s guard
    best: tuple[float, NodeFree] | None = None
    bound = until
    for name in nodes:
        if profile.reserved(name):
            points = profile.change_points(name)
            for point in points:
                if point <= profile.now:
                    continue
                if point >= bound:
                    break
                nf = profile.avail(name, point, INF)
                if nf.fits_one(req):
                    best, bound = (point, nf), point
                    break
            continue
        releases = profile.releases.get(name)
        if not releases or releases[0][0] >= bound:
            continue
        scratch: NodeFree | None = None
        k = 0
        while k < len(releases) and releases[k][0] < bound and profile.budget > 0:
            t = releases[k][0]
            profile.budget -= 1
            if scratch is None:
                scratch = profile.live[name].clone()
            while k < len(releases) and releases[k][0] == t:
                scratch.charge(releases[k][1], releases[k][2], -1)
                k += 1
            if scratch.fits_one(req):
                best, bound = (t, scratch), t
                break
    if best is None:
        return None
    start, nf = best
    return start, [(nf.name, nf.clone().place(req))]


@pytest.mark.parametrize("seed", range(60))
def test_single_member_search_matches_the_plain_walk(seed: int) -> None:
    """Kept walks (``Profile.single_fit``) give the same answer and the same budget charge, search
    after search, while placements and reservations change some nodes in between."""
    fast, names = _random_profile(seed)
    plain, _ = _random_profile(seed)
    rng = random.Random(seed * 31)
    found = 0
    for _ in range(6):
        req = Request(rng.choice((0, 4000)), 2**30, (), rng.choice((1, 2, 4, 8)), 0)
        until = rng.choice((INF, 1300.0, 2500.0))
        fast.budget = plain.budget = rng.choice((10_000, fast.budget, 3, 2, 1))  # where it runs out
        got = earliest_start(fast, names, req, 1, until)
        assert got == single_ref(plain, names, req, until)
        assert fast.budget == plain.budget
        found += got is not None
        name = rng.choice(names)
        one = Request(1000, 2**30, (), 1, 0)
        place, later = rng.random() < 0.5, rng.choice((30.0, 45.0, 500.0, 700.0))
        for profile in (fast, plain):  # the same change on both
            if place:
                profile.live[name].charge(one, (7,))
                profile.add_release(name, profile.now + later, one, (7,))
            else:
                profile.add_reservation(
                    ("ns", "Job", "later"), "p", profile.now + later, INF, [(name, (6,))], one
                )
    if seed == 0:
        assert found  # not vacuous: some searches find a start


# -- whole cycles: the index on and off ----------------------------------------------------------


def _digest(result: ScheduleResult) -> list[object]:
    plans = [
        (p.job, p.priority.total, p.partition, p.order, p.reason, p.eta, p.placement, p.reserved_nodes)
        for p in (result.plans[k] for k in result.plans)
    ]
    return [result.pending_order, result.placements, plans, dict(result.queues), result.partitions]


@pytest.mark.parametrize(
    ("nodes", "pending", "seed"), [(64, 400, 1), (96, 700, 2), (160, 900, 3), (48, 600, 4)]
)
def test_cycle_is_the_same_without_the_index(
    nodes: int, pending: int, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    snap = cluster(nodes, pending, seed=seed)
    fast = core.schedule(snap, policy(), NOW, memo=Memo())
    assert fast.placements and fast.stats["reservations"] > 0  # the paths under test ran

    def no_index(self: WholeIndex, names: Sequence[str], members: frozenset[str], k: int) -> Sequence[str]:
        return names

    plain_search = earliest_start  # what core calls; replaced there below

    def search_without_index(
        profile: Profile,
        names: Sequence[str],
        req: Request,
        m: int,
        until: float = INF,
        fitting: object = None,
    ) -> tuple[float, list[tuple[str, tuple[int, ...]]]] | None:
        return plain_search(profile, names, req, m, until, None)

    monkeypatch.setattr(WholeIndex, "candidates", no_index)
    monkeypatch.setattr(core, "earliest_start", search_without_index)
    plain = core.schedule(snap, policy(), NOW, memo=Memo())
    assert _digest(fast) == _digest(plain)


def _state(nf: NodeFree) -> tuple[object, ...]:
    return (nf.cpu, nf.memory, sorted(nf.ext.items()), list(nf.gpus), nf.whole_free())


@pytest.mark.parametrize("seed", range(30))
def test_reserved_node_availability_is_the_minimum_over_its_change_points(seed: int) -> None:
    profile, names = _random_profile(seed)
    rng = random.Random(seed)
    for name in names:
        points = profile.change_points(name)
        for t0 in [profile.now, *points, *(p + 0.5 for p in points)]:
            t1 = rng.choice((INF, t0 + 400.0))
            want = profile.free_at(name, t0)
            for p in points:
                if t0 < p < t1:
                    want.minimum(profile.free_at(name, p))
            got = profile.avail(name, t0, t1)
            if name in profile.reservations:
                assert _state(got) == _state(want)
                assert _state(profile.avail(name, t0, t1)) == _state(want)  # the kept answer too
