"""``hpctop schedule`` against the fake API server over real HTTP: gangs, coexistence, leader election.

The scheduler watches the fake server with its own reflectors, runs the core, and binds through
the Binding subresource; the server enforces the uid/RV preconditions, refuses a second bind and
keeps the Lease with resourceVersion compare-and-swap. Nothing in the client is patched: faults
come from the server (``fail_write``), and "losing the lease" is another instance taking it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest
import yaml  # type: ignore[import-untyped]

from hpctop.cli import main
from hpctop.runtime.leader import LeaderElector
from hpctop.runtime.scheduler import CycleReport, HeadlessScheduler, SchedulerOptions
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.transport import KubeClient
from tests.kube.conftest import FAST
from tests.kube.fakeserver import EVENTS, JOBS, LEASES, NODES, PODS, FakeApiServer, Rbac, Rule
from tests.model_fixtures import batch_job, node, pod
from tests.polling import until

GANG = [f"g-{i}" for i in range(8)]


def seed_gang(fake: FakeApiServer, *, nodes: int = 8, members: int = 8) -> None:
    for i in range(nodes):
        fake.upsert(NODES, node(f"n{i}"))
    fake.upsert(JOBS, batch_job("g", parallelism=members, gpus=8))
    for name in GANG[:members]:
        fake.upsert(PODS, pod(name, owner=("Job", "g"), gpus=8))


def bound(fake: FakeApiServer) -> dict[str, str | None]:
    return {key[1]: (obj.get("spec") or {}).get("nodeName") for key, obj in fake.items_of(PODS).items()}


def binds(fake: FakeApiServer) -> list[str]:
    return [r.url.path.split("/")[-2] for r in fake.writes() if r.url.path.endswith("/binding")]


def events(fake: FakeApiServer) -> list[dict[str, object]]:
    return [obj for obj in fake.items_of(EVENTS).values()]


def options(**kw: object) -> SchedulerOptions:
    base: dict[str, object] = {
        "lease_namespace": "hpctop-system",
        "identity": "a",
        "interval": 0.05,
        "lease_duration": 1.0,
        "renew_deadline": 0.8,
        "retry_period": 0.1,
    }
    base.update(kw)
    return SchedulerOptions(**base)  # type: ignore[arg-type]


@pytest.fixture
async def scheduler(connection: Connection, fake: FakeApiServer) -> AsyncIterator[HeadlessScheduler]:
    async with HeadlessScheduler(connection, options(), settings=FAST) as s:
        yield s


async def synced_cycle(s: HeadlessScheduler, fake: FakeApiServer) -> CycleReport:
    """One cycle once the scheduler's store has caught up with everything the server holds."""
    await s.wait_synced(5)
    await until(
        lambda: s.store.snapshot().pods.keys() >= {k for k in fake.items_of(PODS)}, what="pods", timeout=5.0
    )
    return await s.cycle()


# -- gangs -------------------------------------------------------------------------------------------


async def test_gang_of_8_is_bound_whole_with_events(
    fake: FakeApiServer, scheduler: HeadlessScheduler
) -> None:
    seed_gang(fake)
    assert await scheduler.once() is not None
    await until(lambda: all(bound(fake).values()), what="the gang to be bound", timeout=5.0)
    where = bound(fake)
    assert sorted(where) == GANG and len(set(where.values())) == 8  # one 8-GPU member per node
    assert sorted(binds(fake)) == GANG
    first = next(r for r in fake.writes() if r.url.path.endswith("/binding"))
    assert orjson.loads(first.body)["metadata"]["uid"].startswith("uid-g-")  # the uid precondition
    scheduled = [e for e in events(fake) if e["reason"] == "Scheduled"]
    assert len(scheduled) == 8
    assert {e["reportingController"] for e in scheduled} == {"hpctop"}
    assert {e["regarding"]["name"] for e in scheduled} == set(GANG)  # type: ignore[index]
    lease = fake.get(LEASES, "hpctop-scheduler", "hpctop-system")
    assert lease is not None and lease["spec"]["holderIdentity"] == "a"


async def test_gang_that_does_not_fit_binds_nothing_and_says_why(
    fake: FakeApiServer, scheduler: HeadlessScheduler
) -> None:
    seed_gang(fake, nodes=7)  # 8 members of 8 GPUs, 7 nodes: no member may start
    await scheduler.elector.try_acquire_or_renew()  # type: ignore[union-attr]
    report = await synced_cycle(scheduler, fake)
    assert report.ran and not report.of("bound") and binds(fake) == []
    [pending] = report.of("pending")
    assert pending.message.startswith("Constraints: ") and "only 7 fit" in pending.message
    failed = [e for e in events(fake) if e["reason"] == "FailedScheduling"]
    assert {e["regarding"]["name"] for e in failed} == set(GANG)  # type: ignore[index]
    assert all(e["note"] == pending.message and e["type"] == "Warning" for e in failed)
    # the same reason next cycle: no new Events (posted on change only)
    again = await scheduler.cycle()
    assert again.events_posted == 0 and len(events(fake)) == 8


async def test_bind_failing_midway_rolls_the_gang_back(
    fake: FakeApiServer, scheduler: HeadlessScheduler
) -> None:
    seed_gang(fake)
    await scheduler.elector.try_acquire_or_renew()  # type: ignore[union-attr]
    await scheduler.wait_synced(5)
    await until(lambda: len(scheduler.store.snapshot().pods) == 8, what="pods", timeout=5.0)
    # the 4th member's bind is refused for good (as when its node vanished in between)
    fake.fail_write(PODS, "create", 422, subresource="binding", name=_fourth(scheduler), message="node gone")
    report = await scheduler.cycle()
    [failed] = report.of("failed")
    assert "3 rolled-back" in failed.message and "4 not-tried" in failed.message
    assert len(binds(fake)) == 4  # three bound, the fourth refused, the rest never sent
    deletes = [r for r in fake.writes() if r.method == "DELETE"]
    assert len(deletes) == 3
    # no member is left bound: the three bound ones were deleted (their Job recreates them)
    assert all(n is None for n in bound(fake).values()) and len(bound(fake)) == 5
    notes = [str(e["note"]) for e in events(fake) if e["reason"] == "FailedScheduling"]
    assert sum("controller recreates it unbound" in n for n in notes) == 3
    assert sum("node gone" in n for n in notes) >= 5


def _fourth(s: HeadlessScheduler) -> str:
    """The 4th member in the order the core will bind them (it orders a gang's pods by key)."""
    from hpctop.model.backends.queues import policy_from_snapshot
    from hpctop.scheduling.core import schedule

    snapshot = s.store.snapshot()
    result = schedule(snapshot, policy_from_snapshot(snapshot, s.base_policy), time.time())
    [placement] = result.placements
    return placement.assignments[3].pod[1]


# -- coexistence ---------------------------------------------------------------------------------


async def test_pods_of_another_scheduler_are_never_touched(
    fake: FakeApiServer, scheduler: HeadlessScheduler
) -> None:
    fake.upsert(NODES, node("n0"))
    theirs = pod("theirs", gpus=8, owner=("Job", "t"))
    theirs["spec"]["schedulerName"] = "default-scheduler"
    fake.upsert(PODS, theirs)
    fake.upsert(PODS, pod("ours", gpus=8, owner=("Job", "o")))
    await scheduler.elector.try_acquire_or_renew()  # type: ignore[union-attr]
    report = await synced_cycle(scheduler, fake)
    # "theirs" is older and as big: had hpctop planned it, "ours" would not have fit on n0
    assert binds(fake) == ["ours"] and [d.job[2] for d in report.of("bound")] == ["o"]
    assert all(e["regarding"]["name"] != "theirs" for e in events(fake))  # type: ignore[index]
    touched = [r.url.path for r in fake.writes() if "/pods/theirs" in r.url.path]
    assert touched == []


async def test_dry_run_prints_and_writes_nothing(fake: FakeApiServer, connection: Connection) -> None:
    seed_gang(fake, members=2)
    lines: list[str] = []
    async with HeadlessScheduler(connection, options(dry_run=True), settings=FAST, log=lines.append) as s:
        report = await s.once()
    assert [d.action for d in report.decisions] == ["would-bind"]
    assert lines and lines[0].startswith("would bind Job team-a/g (2 pods): ")
    assert fake.writes() == []


# -- leader election -------------------------------------------------------------------------------


async def test_lease_updates_are_compare_and_swap(fake: FakeApiServer, connection: Connection) -> None:
    async with KubeClient(connection, read_only=False) as a, KubeClient(connection, read_only=False) as b:
        ea = LeaderElector(a, "ns", "l", "a", lease_duration=1, renew_deadline=0.8, retry_period=0.1)
        eb = LeaderElector(b, "ns", "l", "b", lease_duration=1, renew_deadline=0.8, retry_period=0.1)
        results = await asyncio.gather(ea.try_acquire_or_renew(), eb.try_acquire_or_renew())
        assert sorted(results) == [False, True]  # both saw 404 and POSTed; the server let one win
        winner, loser = (ea, eb) if results[0] else (eb, ea)
        assert await winner.try_acquire_or_renew() and winner.is_leader
        assert not await loser.try_acquire_or_renew()  # held, and not expired on the loser's clock
        lease = fake.get(LEASES, "l", "ns")
        assert lease is not None and lease["spec"]["holderIdentity"] == winner.identity
        assert lease["spec"]["leaseDurationSeconds"] == 1 and lease["spec"]["renewTime"].endswith("Z")
        puts = [r for r in fake.writes() if r.method == "PUT"]
        assert puts and all(orjson.loads(r.body)["metadata"]["resourceVersion"] for r in puts)
        # a stale resourceVersion is refused: the server's precondition, not a client check
        stale = {"metadata": {"name": "l", "namespace": "ns", "resourceVersion": "1"}, "spec": {}}
        refused = await a.request("PUT", winner.path, body=stale)
        assert refused.status == 409


async def test_two_schedulers_only_the_leader_binds_and_the_other_takes_over(
    fake: FakeApiServer, connection: Connection
) -> None:
    fake.upsert(NODES, node("n0"))
    fake.upsert(NODES, node("n1"))
    logs: dict[str, list[str]] = {"a": [], "b": []}
    stop_a, stop_b = asyncio.Event(), asyncio.Event()
    async with (
        HeadlessScheduler(connection, options(identity="a"), settings=FAST, log=logs["a"].append) as a,
        HeadlessScheduler(connection, options(identity="b"), settings=FAST, log=logs["b"].append) as b,
    ):
        task_a = asyncio.create_task(a.serve(stop_a))
        await until(lambda: a.is_leader(), what="a to lead", timeout=5.0)
        task_b = asyncio.create_task(b.serve(stop_b))
        fake.upsert(PODS, pod("p1", gpus=8, owner=("Job", "j1")))
        await until(lambda: bound(fake).get("p1") is not None, what="p1 bound", timeout=5.0)
        await asyncio.sleep(0.3)  # b runs cycles meanwhile, as a standby
        assert not b.is_leader() and b.cycles == 0
        # a stops renewing (a crash: no release); b takes over after one lease duration
        assert a.elector is not None
        task_a.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task_a
        a.elector = None  # a is gone: its exit must not release the lease for it
        fake.upsert(PODS, pod("p2", gpus=8, owner=("Job", "j2")))
        await asyncio.sleep(0.5)
        assert bound(fake).get("p2") is None  # the lease has not expired yet: nobody binds
        await until(lambda: b.is_leader(), timeout=3, what="b to take over")
        await until(lambda: bound(fake).get("p2") is not None, what="p2 bound by b", timeout=5.0)
        stop_b.set()
        await task_b
    lease = fake.get(LEASES, "hpctop-scheduler", "hpctop-system")
    assert lease is not None and lease["spec"]["leaseTransitions"] >= 1
    assert lease["spec"]["holderIdentity"] == ""  # b released it on its way out
    assert any(line.startswith("bound Job team-a/j1") for line in logs["a"])
    assert any(line.startswith("bound Job team-a/j2") for line in logs["b"])
    assert not any(line.startswith("bound") for line in logs["b"] if "j1" in line)


async def test_losing_the_lease_stops_binding_at_once(fake: FakeApiServer, connection: Connection) -> None:
    """Another instance takes the lease (here: writes it, as a forced takeover would): the next
    cycle of the old leader binds nothing, even though its local deadline has not passed."""
    fake.upsert(NODES, node("n0"))
    async with HeadlessScheduler(connection, options(), settings=FAST) as s:
        assert s.elector is not None and await s.elector.try_acquire_or_renew()
        lease = fake.get(LEASES, "hpctop-scheduler", "hpctop-system")
        assert lease is not None
        lease["spec"]["holderIdentity"] = "intruder"
        fake.upsert(LEASES, lease)
        assert not await s.elector.try_acquire_or_renew()  # the renewal sees it and stops leading
        fake.upsert(PODS, pod("p", gpus=8, owner=("Job", "j")))
        report = await synced_cycle(s, fake)
        assert not report.ran and "standby" in report.note and binds(fake) == []


def manifest_rbac() -> Rbac:
    """deploy/rbac.yaml's rules as the fake server's RBAC (resourceNames are not modelled)."""
    docs = list(yaml.safe_load_all((Path(__file__).parents[3] / "deploy" / "rbac.yaml").read_text()))
    rules: list[Rule] = []
    for doc in docs:
        if doc["kind"] not in ("ClusterRole", "Role"):
            continue
        where = (doc["metadata"]["namespace"],) if doc["kind"] == "Role" else ("*",)
        for rule in doc["rules"]:
            rules.append(
                Rule(tuple(rule["verbs"]), tuple(rule["apiGroups"]), tuple(rule["resources"]), where)
            )
    return Rbac(rules=rules)


async def test_the_rbac_manifest_grants_what_the_scheduler_does(
    fake: FakeApiServer, connection: Connection
) -> None:
    fake.rbac = manifest_rbac()
    seed_gang(fake)
    fake.fail_write(PODS, "create", 422, subresource="binding", name="g-7")  # a rollback: deletes too
    async with HeadlessScheduler(connection, options(), settings=FAST) as s:
        report = await s.once()
    assert [d.action for d in report.decisions] == ["failed"]
    statuses = {(a.method, a.status) for a in fake.audit}
    assert not [a for a in fake.audit if a.status == 403], statuses
    assert {"GET", "POST", "PUT", "DELETE"} <= {a.method for a in fake.audit}  # lease, binds, rollback
    # and outside its namespace the Lease is refused: the Role is namespaced
    async with HeadlessScheduler(connection, options(lease_namespace="elsewhere"), settings=FAST) as s:
        assert s.elector is not None and not await s.elector.try_acquire_or_renew()
        assert "403" in s.elector.last_error


async def test_a_lease_lost_mid_cycle_stops_the_next_gang(
    fake: FakeApiServer, connection: Connection
) -> None:
    """No renewal happens while the first bind waits out a 1 s Retry-After, so the leader's own
    deadline (0.8 s) passes: the second job of the same cycle is not bound, and nothing more is
    written but the Event recording the bind it did make."""
    fake.upsert(NODES, node("n0"))
    fake.upsert(NODES, node("n1"))
    fake.upsert(PODS, pod("p1", gpus=8, owner=("Job", "j1")))
    fake.upsert(PODS, pod("p2", gpus=8, owner=("Job", "j2")))
    fake.fail_write(PODS, "create", 429, subresource="binding", retry_after="1")
    async with HeadlessScheduler(connection, options(), settings=FAST) as s:
        assert s.elector is not None and await s.elector.try_acquire_or_renew()
        report = await synced_cycle(s, fake)
    assert len(report.of("bound")) == 1 and "lost the lease" in report.note
    [first] = set(binds(fake))
    assert binds(fake) == [first, first]  # the 429, then the retry; the other pod never sent
    assert [p for p, n in bound(fake).items() if n] == [first]
    # only the record of the bind it did make; no FailedScheduling after the lease was gone
    assert [(e["reason"], e["regarding"]["name"]) for e in events(fake)] == [("Scheduled", first)]  # type: ignore[index]


# -- the command ---------------------------------------------------------------------------------


async def test_schedule_once_from_the_command_line(
    fake: FakeApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed_gang(fake, members=2)
    # the command's loop ends in its own thread; frequent bookmarks let the server notice its
    # closed watches at once instead of at the next 60 s bookmark (a slow teardown)
    fake.bookmark_interval = 0.1
    argv = [
        "schedule",
        "--kubeconfig",
        str(kubeconfig),
        "--once",
        "--lease-namespace",
        "x",
        "--identity",
        "me",
    ]
    code = await asyncio.to_thread(main, argv)
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "bound Job team-a/g (2 pods)" in out.out
    assert bound(fake) == {"g-0": bound(fake)["g-0"], "g-1": bound(fake)["g-1"]} and all(bound(fake).values())
    lease = fake.get(LEASES, "hpctop-scheduler", "x")
    assert lease is not None and lease["spec"]["holderIdentity"] == ""  # released on exit


async def test_read_only_refuses_to_start(
    fake: FakeApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed_gang(fake, members=1)
    code = await asyncio.to_thread(main, ["--read-only", "schedule", "--kubeconfig", str(kubeconfig)])
    assert code == 2
    assert "cannot run in read-only mode" in capsys.readouterr().err
    assert fake.log == []  # refused before connecting
