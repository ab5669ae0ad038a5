"""The memo kept between cycles never changes a result: warm runs equal cold runs, change by change.

Why: ``memo.Memo`` reuses node/pod derivations while the objects are identical, and running jobs'
plans are computed lazily; a stale entry would silently give a wrong placement. Each test runs a
sequence of snapshots (one object changed at a time) through one shared memo and compares every
result with a run on a fresh memo, field by field (plans read in full, so lazy ones are built).
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any

from bench.p6_core import NOW, cluster, one_event, policy
from hpctop.model.objects import Job, Node, Pod
from hpctop.model.policy import Policy, QueueSpec
from hpctop.model.store import Snapshot
from hpctop.scheduling.core import schedule
from hpctop.scheduling.memo import Memo
from hpctop.scheduling.types import ScheduleResult
from tests.scheduling_helpers import GI, job, node, running, snapshot

NOT_DECISIONS = ("seconds", "priorities_kept", "pass_replayed")


def _plain(result: ScheduleResult) -> tuple[object, ...]:
    # the time and the counts of what was kept say what a cycle cost, not what it decided
    stats = {k: v for k, v in result.stats.items() if k not in NOT_DECISIONS}
    return (
        result.now,
        result.cluster,
        result.partitions,
        list(result.queues.items()),
        list(result.plans.items()),  # in iteration order: lazy plans must keep the key order
        result.placements,
        result.pending_order,
        stats,
    )


def _same(snap: Snapshot, pol: Policy, now: float, memo: Memo) -> ScheduleResult:
    warm = schedule(snap, pol, now, memo=memo)
    cold = schedule(snap, pol, now, memo=Memo())
    assert _plain(warm) == _plain(cold)
    return warm


def _with(snap: Snapshot, **maps: dict[Any, Any]) -> Snapshot:
    proxies: dict[str, Any] = {k: MappingProxyType(v) for k, v in maps.items()}
    return dataclasses.replace(snap, **proxies)


def _base() -> tuple[Snapshot, Policy]:
    nodes = [node(f"n{i:02d}", gpus=8, product="H100" if i % 2 else "A100") for i in range(12)]
    runs = [
        running(f"r{i}", [(f"n{i:02d}", range(4))], gpu=4000, time_limit=3600, start=0.0, queue="root.a")
        for i in range(8)
    ]
    gang = running("g", [("n10", range(8)), ("n11", range(8))], gpu=8000, time_limit=7200, queue="root.b")
    pend = [
        job(
            f"p{i}",
            gpu=[1000, 8000, 4000, 500][i % 4],
            members=[1, 2, 1, 1][i % 4],
            submit=float(i),
            queue=["root.a", "root.b"][i % 2],
            time_limit=1800,
        )
        for i in range(10)
    ]
    pol = Policy(queues=(QueueSpec("root.a"), QueueSpec("root.b")))
    return snapshot(nodes, pend, [*runs, gang]), pol


def test_warm_equals_cold_through_single_changes() -> None:
    snap, pol = _base()
    memo = Memo()
    _same(snap, pol, 100.0, memo)
    _same(snap, pol, 100.0, memo)  # everything reused
    # a node is cordoned (new Node object): partitions, capacity and eligibility must follow
    nodes: dict[Any, Any] = dict(snap.nodes)
    nodes["n03"] = dataclasses.replace(snap.nodes["n03"], unschedulable=True)
    cordoned = _with(snap, nodes=nodes)
    _same(cordoned, pol, 100.0, memo)
    # a running pod finishes (its node's pod set changes; the node object does not)
    pods: dict[Any, Any] = {k: v for k, v in snap.pods.items() if k != ("ns", "r0-0")}
    jobs: dict[Any, Any] = {k: v for k, v in snap.jobs.items() if k != ("ns", "Job", "r0")}
    by_node: dict[Any, Any] = dict(snap.pods_by_node)
    by_node["n00"] = frozenset()
    finished = _with(cordoned, pods=pods, jobs=jobs, pods_by_node=by_node)
    assert _same(finished, pol, 110.0, memo).placements
    # a pod is replaced by a new object with other GPU indices on the same node
    moved: dict[Any, Any] = dict(pods)
    old = snap.pods[("ns", "r1-0")]
    moved[old.key] = dataclasses.replace(old, gpu_indices=(4, 5, 6, 7))
    _same(_with(finished, pods=moved), pol, 120.0, memo)
    # back to the first snapshot: entries are replaced again, never mixed
    _same(snap, pol, 100.0, memo)


def test_policy_label_change_rebuilds_the_view() -> None:
    snap, pol = _base()
    memo = Memo()
    _same(snap, pol, 100.0, memo)
    relabelled = dataclasses.replace(pol, partition_label="other/label")
    _same(snap, relabelled, 100.0, memo)
    _same(snap, pol, 100.0, memo)


def test_node_replaced_by_equal_copy_and_new_node() -> None:
    snap, pol = _base()
    memo = Memo()
    _same(snap, pol, 100.0, memo)
    nodes: dict[str, Node] = {k: dataclasses.replace(v) for k, v in snap.nodes.items()}  # new objects
    nodes["n99"] = node("n99", gpus=8, product="L40S", labels={"nvidia.com/gpu.clique": "c9"})
    _same(_with(snap, nodes=dict(nodes)), pol, 100.0, memo)


def test_running_plans_are_lazy_but_complete() -> None:
    snap, pol = _base()
    result = schedule(snap, pol, 100.0, memo=Memo())
    keys = list(result.plans)
    assert keys == sorted(keys)
    assert len(result.plans) == len(keys) == len(snap.jobs)
    running_key = ("ns", "Job", "r2")
    assert running_key in result.plans
    plan = result.plans[running_key]
    assert plan.partition == "A100" and plan.order is None and plan.eta == 0.0
    assert plan.priority.total > 0
    assert ("ns", "Job", "nope") not in result.plans


def test_synthetic_cluster_warm_equals_cold() -> None:
    """The P6 bench's cluster at a small size: gangs, reservations, quotas, fractional GPUs."""
    snap, pol = cluster(64, 300), policy()
    memo = Memo()
    first = _same(snap, pol, NOW, memo)
    assert first.placements and first.stats["reservations"] > 0
    _same(one_event(snap), pol, NOW + 10, memo)
    _same(snap, pol, NOW + 20, memo)


def test_shared_memo_default_matches_fresh() -> None:
    snap, pol = _base()
    assert _plain(schedule(snap, pol, 100.0)) == _plain(schedule(snap, pol, 100.0, memo=Memo()))
    assert _plain(schedule(snap, pol, 100.0)) == _plain(schedule(snap, pol, 100.0, memo=Memo()))


def test_memo_stays_bounded_as_nodes_come_and_go() -> None:
    """Nodes that leave the cluster drop out of the memo (it never grows with history)."""
    memo = Memo()
    pol = Policy()
    for round_ in range(8):
        nodes = [node(f"r{round_}-{i}", gpus=8, cpu=64_000, memory=256 * GI) for i in range(20)]
        pend: list[Job] = [job(f"j{round_}", gpu=1000)]
        pods: list[tuple[Job, list[Pod]]] = []
        schedule(snapshot(nodes, pend, pods), pol, 1.0, memo=memo)
    assert len(memo.facts) <= 2 * 20 + 64 and len(memo.free) <= 2 * 20 + 64
