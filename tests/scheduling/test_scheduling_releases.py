"""The running pods' releases kept between cycles (``scheduling.releases``) equal the from-scratch ones.

Why these tests: the core no longer rebuilds every running pod's release each cycle; it patches
the nodes whose charges or timed jobs changed identity since the last cycle. A missed change would
silently move a backfill ETA or a reservation, so random sequences of changes (charges added,
moved, replaced by an equal object, dropped; jobs started, re-timed, given and losing pods,
replaced unchanged, gone; the clock passing ends) are applied and after each the profile's lists
are compared with those the old pass builds (as multisets per node: the order of releases at the
same time on a node is free, see the module), and cycles of the demo's view with the old pass.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import pytest

import hpctop.scheduling.core as core
from bench.p6_core import NOW, cluster
from hpctop.model.objects import Job, JobKey, PodKey
from hpctop.runtime.session import demo_session
from hpctop.scheduling.backfill import Profile
from hpctop.scheduling.memo import Memo
from hpctop.scheduling.placement import Charge, Request
from hpctop.scheduling.releases import KeptReleases, Release, kept_for, release_times, releases_from_scratch

NODES = [f"n{i}" for i in range(12)]
REQUESTS = [Request(1000, 1 << 30, (), 1, 0), Request(500, 1 << 29, (), 0, 250), Request(2000, 0, (), 0, 0)]


def _old_profile(active: list[Job], charges: dict[PodKey, Charge], now: float) -> dict[str, list[Release]]:
    profile = Profile(now, {})
    profile.add_releases(releases_from_scratch(active, charges, now))
    return profile.releases


def _same(kept: dict[str, list[Release]], want: dict[str, list[Release]]) -> bool:
    if kept.keys() != want.keys():
        return False
    for node, entries in kept.items():
        times = [e[0] for e in entries]
        if times != sorted(times) or Counter(entries) != Counter(want[node]):
            return False
    return True


def _jobs(seed: int) -> list[Job]:
    jobs = [j for j in cluster(24, 60, seed=seed).jobs.values() if j.pods][:30]
    assert len(jobs) >= 20
    return jobs


def _charge(rng: random.Random) -> Charge:
    return Charge(rng.choice(NODES), rng.choice(REQUESTS), tuple(rng.sample(range(8), rng.randint(0, 2))))


def _change(
    rng: random.Random, active: dict[JobKey, Job], spare: list[Job], charges: dict[PodKey, Charge], now: float
) -> None:
    pods = [p for job in [*active.values(), *spare] for p in job.pods]
    for _ in range(rng.randint(0, 5)):
        op = rng.random()
        key = rng.choice(pods)
        if op < 0.3:  # bound, moved, or an equal charge built again
            charges[key] = _charge(rng) if rng.random() < 0.7 else replace(charges.get(key) or _charge(rng))
        elif op < 0.4:
            charges.pop(key, None)  # finished or unbound
        elif active and op < 0.75:
            job_key = rng.choice(list(active))
            job = active[job_key]
            what = rng.random()
            if what < 0.25:  # (re)started, never started (ends at now + limit), or overdue
                start = rng.choice((None, now - 5000.0, now - 100.0, now, now + 0.5))
                active[job_key] = replace(job, start_time=start)
            elif what < 0.45:
                active[job_key] = replace(job, time_limit=rng.choice((None, 0, 60, 3600, 86_400)))
            elif what < 0.6:  # a pod less, or one more (a fresh key)
                more = (*job.pods, (job.key[0], f"{job.key[2]}-x{rng.randint(0, 99)}"))
                active[job_key] = replace(job, pods=job.pods[1:] if rng.random() < 0.5 else more)
            elif what < 0.8:
                active[job_key] = replace(job)  # an equal job, another object
            else:  # no longer running
                spare.append(active.pop(job_key))
        elif spare:  # started running (the jobs' pods are disjoint)
            job = spare.pop(rng.randrange(len(spare)))
            active[job.key] = replace(job, time_limit=job.time_limit or 1800, start_time=now - 60.0)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_kept_releases_equal_the_old_pass_over_random_changes(seed: int) -> None:
    rng = random.Random(seed)
    jobs = _jobs(seed)
    now = NOW
    active = {
        j.key: replace(j, time_limit=rng.choice((None, 600, 3600)), start_time=now - 30.0) for j in jobs[:20]
    }
    spare = jobs[20:]
    charges = {p: _charge(rng) for job in active.values() for p in job.pods if rng.random() < 0.8}
    kept = KeptReleases()
    overdue = volatile = checked = 0
    for _ in range(300):
        _change(rng, active, spare, charges, now)
        now += rng.choice((0.0, 1.0, 10.0, 900.0))
        listed = list(active.values())
        got = release_times(kept.update(listed, dict(charges), now), now)
        want = _old_profile(listed, charges, now)
        assert _same(got, want), (got, want)
        checked += 1
        overdue += any(e[0] == now + 1.0 for entries in want.values() for e in entries)
        volatile += any(j.start_time is None and j.time_limit for j in listed)
    # the cases the cache treats apart really occurred, and most steps patched a few nodes only
    assert checked > 200 and overdue > 10 and volatile > 10
    assert kept.rebuilt_nodes < checked * len(NODES)


def test_a_pod_claimed_by_two_jobs_is_refused() -> None:
    """No store builds that; the core then forgets the kept lists and runs the old pass."""
    a, b = _jobs(6)[:2]
    a, b = replace(a, time_limit=600, start_time=NOW), replace(b, time_limit=600, start_time=NOW)
    b = replace(b, pods=(*b.pods, a.pods[0]))
    charges = {p: Charge("n1", REQUESTS[2], ()) for j in (a, b) for p in j.pods}
    with pytest.raises(ValueError, match="claimed by two"):
        KeptReleases().update([a, b], charges, NOW)


def test_the_kept_lists_are_not_the_profiles() -> None:
    """The cycle extends its profile's lists (``add_release``): the kept lists, which the profile
    starts from (``release_times`` hands them out when nothing is overdue), must not move with them."""
    jobs = _jobs(5)[:3]
    active = [replace(j, time_limit=600, start_time=NOW) for j in jobs]
    charges = {p: Charge("n0", REQUESTS[0], (0,)) for j in active for p in j.pods}
    kept = KeptReleases()
    profile = Profile(NOW, {})
    profile.releases.update(release_times(kept.update(active, charges, NOW), NOW))
    assert profile.releases["n0"] is kept.lists["n0"]  # shared while nothing is overdue
    profile.add_release("n0", NOW + 5.0, REQUESTS[1], ())
    again = release_times(kept.update(active, charges, NOW), NOW)
    assert len(again["n0"]) == len(profile.releases["n0"]) - 1 == sum(len(j.pods) for j in active)


def test_the_demos_view_is_the_old_passs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's view (plans, ETAs, reservations) with kept releases equals the old pass's, as it moves.

    The session's scheduling points between the reads patch the kept lists (shared memo); the
    reference is a cycle on a fresh memo with the releases built by the old pass.
    """
    session = demo_session(seed=1)
    etas = 0
    for at in (600, 1500, 2400):
        session.advance_to_elapsed(at)
        got = session.result
        with monkeypatch.context() as m:

            def old_pass(cycle: core._Cycle, active: list[Job]) -> None:
                cycle.profile.add_releases(releases_from_scratch(active, cycle.charges, cycle.now))

            m.setattr(core._Cycle, "_add_running_releases", old_pass)
            want = session.frozen.apply(
                core.schedule(session.snapshot, session.policy, session.now, memo=Memo()),
                session.snapshot.jobs,
            )
        assert got.placements == want.placements and got.pending_order == want.pending_order
        assert dict(got.plans) == dict(want.plans) and got.queues == want.queues
        assert got.stats["reservations"] == want.stats["reservations"]
        etas += sum(1 for plan in dict(got.plans).values() if plan.eta is not None)
    assert etas > 0  # releases decided something: backfill ETAs were computed from them


def _per_node(charges: dict[PodKey, Charge]) -> dict[str, dict[PodKey, Charge]]:
    out: dict[str, dict[PodKey, Charge]] = {}
    for key, charge in charges.items():
        out.setdefault(charge.node, {})[key] = charge
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_releases_patched_from_the_logs_equal_the_old_pass(seed: int) -> None:
    """The core's path: the lists patched from the memo's logs alone (nodes redone with their
    charges, running jobs changed), with now and then a call without logs (every charge and job
    compared again, after patches left the identity maps stale)."""
    rng = random.Random(seed)
    jobs = _jobs(seed + 10)
    now = NOW
    active = {
        j.key: replace(j, time_limit=rng.choice((None, 600, 3600)), start_time=now - 30.0) for j in jobs[:20]
    }
    spare = jobs[20:]
    charges = {p: _charge(rng) for job in active.values() for p in job.pods if rng.random() < 0.8}
    kept = KeptReleases()
    kept.update(list(active.values()), dict(charges), now, logged=True)
    patched = compared = 0
    for _ in range(300):
        before_charges, before_active = dict(charges), dict(active)
        _change(rng, active, spare, charges, now)
        now += rng.choice((0.0, 1.0, 10.0, 900.0))
        old_nodes, new_nodes = _per_node(before_charges), _per_node(charges)
        redone = {
            node: new_nodes.get(node, {})
            for node in old_nodes.keys() | new_nodes.keys()
            if old_nodes.get(node, {}).keys() != new_nodes.get(node, {}).keys()
            or any(c is not old_nodes[node].get(k) for k, c in new_nodes.get(node, {}).items())
        }
        log = [
            (key, before_active.get(key), active.get(key))
            for key in before_active.keys() | active.keys()
            if before_active.get(key) is not active.get(key)
        ]
        listed = list(active.values())
        if rng.random() < 0.1:
            raw = kept.update(listed, dict(charges), now, logged=True)
            compared += 1
        else:
            raw = kept.update(listed, dict(charges), now, (redone, log), logged=True)
            patched += 1
        want = _old_profile(listed, charges, now)
        got = release_times(raw, now)
        assert _same(got, want), (got, want)
    assert patched > 200 and compared > 10


def test_a_cycle_after_placements_only_cycles_patches_from_complete_logs() -> None:
    """The memo's logs for the releases are taken every cycle (placements only too): a full
    cycle's releases after a chain of finished pods equal the old pass's."""
    from bench.p6_core import one_event, policy

    snap = cluster(60, 300)
    memo = Memo()
    core.schedule(snap, policy(), NOW, memo=memo)
    for step in range(6):
        snap = one_event(snap)
        core.schedule(snap, policy(), NOW, memo=memo, placements_only=step % 2 == 0)
    kept = kept_for(memo)
    assert kept.patchable and not kept.compared  # the last cycles patched from the logs
    cycle = core._Cycle(snap, policy(), NOW, Memo())
    active = [j for j in snap.jobs.values() if j.key in memo.jobs.active]
    want = _old_profile(active, cycle.charges, NOW)
    assert _same(release_times(kept.lists, NOW), want)
