"""Queue order (DRF), multifactor priority arithmetic, fair-share factors, quotas and borrowing."""

from __future__ import annotations

import math

import pytest

from hpctop.model.objects import PriorityClass
from hpctop.model.policy import Policy, PriorityWeights, QueueSpec
from hpctop.model.resources import Resources
from hpctop.model.states import ReasonCode
from hpctop.scheduling.core import schedule
from tests.scheduling_helpers import GI, job, node, running, snapshot

NOW = 1_000_000.0


def placed_names(result: object) -> list[str]:
    return [p.job[2] for p in result.placements]  # type: ignore[attr-defined]


def test_drf_paper_example() -> None:
    """Ghodsi et al. 2011: 9 CPUs, 18 GB; A tasks <1 CPU, 4 GB>, B tasks <3 CPUs, 1 GB> -> 3 A, 2 B."""
    nodes = [node("n1", gpus=0, cpu=9000, memory=18 * GI)]
    jobs = [job(f"a{i:02d}", cpu=1000, memory=4 * GI, queue="root.a") for i in range(10)]
    jobs += [job(f"b{i:02d}", cpu=3000, memory=1 * GI, queue="root.b") for i in range(10)]
    policy = Policy(queues=(QueueSpec("root.a"), QueueSpec("root.b")))
    result = schedule(snapshot(nodes, jobs), policy, NOW)
    names = placed_names(result)
    assert sum(n.startswith("a") for n in names) == 3
    assert sum(n.startswith("b") for n in names) == 2
    # the order alternates as DRF says: A (0 = 0, name), B, A, B, A
    assert [n[0] for n in names] == ["a", "b", "a", "b", "a"]
    assert len(result.pending_order) == 20


def test_multifactor_priority_hand_computed() -> None:
    # 2 H100 nodes x 8 GPUs = 16 GPUs, one partition (tier 1, the highest).
    nodes = [node("h1"), node("h2")]
    run = running("r", [("h1", (0, 1, 2, 3))], gpu=4000, queue="root.a", start=0.0)  # a uses 4/16 GPUs
    pending = job(
        "p",
        gpu=2000,
        queue="root.a",
        priority=500,
        submit=NOW - 302_400,  # half of 7 days
    )
    policy = Policy(
        queues=(QueueSpec("root.a", guaranteed=Resources.of(gpu=8000)), QueueSpec("root.b")),
        default_queue="root.b",
    )
    classes = [PriorityClass("high", 1000), PriorityClass("low", 10)]
    result = schedule(snapshot(nodes, [pending], [run], classes), policy, NOW)
    b = result.plans[pending.key].priority
    # F_age = 302400/604800 = 0.5
    # F_fs: U = 4/16 = 0.25 (gpu is dominant), S = 8/16 = 0.5 -> 2^(-0.25/0.5) = 2^-0.5 = 0.7071068
    # F_size = 2 GPUs / 16 GPUs = 0.125; F_part = 1/1 = 1; F_qos = 500/1000 = 0.5
    # total = 1000*0.5 + 10000*0.7071068 + 1000*0.125 + 1000*1 + 10000*0.5
    #       = 500 + 7071.068 + 125 + 1000 + 5000 = 13696.068 -> 13696
    assert b.factors["age"] == pytest.approx(0.5)
    assert b.factors["fairshare"] == pytest.approx(2**-0.5)
    assert b.factors["jobsize"] == pytest.approx(0.125)
    assert b.factors["partition"] == pytest.approx(1.0)
    assert b.factors["qos"] == pytest.approx(0.5)
    assert b.weighted["fairshare"] == pytest.approx(7071.0678, abs=1e-3)
    assert b.total == 13696
    # running jobs get a breakdown too
    assert result.plans[run[0].key].partition == "H100"


def test_held_job_priority_is_zero() -> None:
    from hpctop.model.states import JobState

    result = schedule(snapshot([node("h1")], [job("h", state=JobState.HELD, priority=5)]), Policy(), NOW)
    assert result.plans[("ns", "Job", "h")].priority.total == 0


def test_priority_orders_jobs_within_a_queue() -> None:
    nodes = [node("h1", gpus=1)]
    jobs = [
        job("low", gpu=1000, priority=1, submit=0),
        job("high", gpu=1000, priority=100, submit=10),
        job("tie-late", gpu=1000, priority=1, submit=5),
    ]
    result = schedule(snapshot(nodes, jobs), Policy(weights=PriorityWeights(age=0)), NOW)
    assert [k[2] for k in result.pending_order] == ["high", "low", "tie-late"]
    assert placed_names(result) == ["high"]
    assert result.plans[("ns", "Job", "high")].order == 0


@pytest.mark.parametrize(
    ("used_gpu", "queue", "expected"),
    [
        (0, "root.x", 1.0),  # no usage: 2^0
        (8000, "root.x", 0.5),  # U = 8/16, S = 1/2 -> 2^-1
        (16000, "root.x", 0.25),  # U = 1, S = 1/2 -> 2^-2
        (4000, "root.y.z", 2 ** (-0.25 / 0.5)),  # S of y = 1/2, its only child z inherits it
    ],
)
def test_fairshare_factor_values(used_gpu: int, queue: str, expected: float) -> None:
    nodes = [node("h1"), node("h2")]
    runs = []
    if used_gpu:
        per_node = [(n, tuple(range(8))) for n in ("h1", "h2")][: used_gpu // 8000] or [("h1", (0, 1, 2, 3))]
        runs.append(running("r", per_node, gpu=min(used_gpu, 8000), queue=queue, cpu=0, memory=0))
    policy = Policy(queues=(QueueSpec("root.x"), QueueSpec("root.y.z")), default_queue="root.x")
    result = schedule(snapshot(nodes, [], runs), policy, NOW)
    status = result.queues[queue]
    assert status.fairshare_factor == pytest.approx(expected)
    assert status.fairshare_factor == pytest.approx(2 ** (-status.cluster_share / status.normalized_share))


def test_queue_tree_order_and_rollup() -> None:
    policy = Policy(queues=(QueueSpec("root.b.y"), QueueSpec("root.a"), QueueSpec("root.b.x")))
    run = running("r", [("h1", (0,))], gpu=1000, queue="root.b.x")
    result = schedule(snapshot([node("h1")], [job("p", gpu=1000, queue="b.y")], [run]), policy, NOW)
    assert list(result.queues) == ["root", "root.a", "root.b", "root.b.x", "root.b.y", "root.default"]
    assert result.queues["root.b"].used.gpu == 1000
    assert result.queues["root"].used.gpu == 1000
    assert result.queues["root.b"].pending.gpu == 1000  # "b.y" resolved to root.b.y
    assert result.queues["root.b"].running_jobs == 1
    assert result.queues["root.b.y"].depth == 2
    assert result.queues["root.b"].children == ("root.b.x", "root.b.y")


def test_unknown_queue_goes_to_default() -> None:
    result = schedule(snapshot([node("h1")], [job("p", gpu=1000, queue="nope")]), Policy(), NOW)
    assert result.queues["root.default"].pending_jobs == 1
    assert len(result.placements) == 1


def test_borrowing_above_guarantee_but_never_above_max() -> None:
    nodes = [node("h1"), node("h2")]  # 16 GPUs
    policy = Policy(
        queues=(
            QueueSpec("root.a", guaranteed=Resources.of(gpu=4000), max=Resources.of(gpu=12000)),
            QueueSpec("root.b", guaranteed=Resources.of(gpu=12000)),
        )
    )
    jobs = [job(f"a{i:02d}", gpu=1000, queue="root.a", submit=i) for i in range(16)]
    result = schedule(snapshot(nodes, jobs), policy, NOW)
    assert len(result.placements) == 12  # borrowed 8 above the guarantee of 4, b is idle
    quota = [p for p in result.plans.values() if p.reason and p.reason.code == ReasonCode.QUOTA_EXCEEDED]
    assert len(quota) == 4
    assert quota[0].reason is not None
    assert "root.a" in quota[0].reason.message and "12" in quota[0].reason.message


def test_borrowing_flag_and_dominant_share() -> None:
    policy = Policy(queues=(QueueSpec("root.a", guaranteed=Resources.of(gpu=4000)),))
    run = running("r", [("h1", tuple(range(6)))], gpu=6000, queue="root.a", cpu=0, memory=0)
    result = schedule(snapshot([node("h1"), node("h2")], [], [run]), policy, NOW)
    status = result.queues["root.a"]
    assert status.borrowing
    assert status.dominant_share == pytest.approx(1.5)  # 6 used / 4 guaranteed
    assert status.dominant_resource == "gpu"
    assert status.cluster_share == pytest.approx(6 / 16)
    assert not result.queues["root.default"].borrowing


def test_ancestor_max_is_enforced() -> None:
    policy = Policy(queues=(QueueSpec("root.org", max=Resources.of(gpu=8000)), QueueSpec("root.org.t1")))
    jobs = [job("big", gpu=8000, members=2, queue="root.org.t1")]
    result = schedule(snapshot([node("h1"), node("h2")], jobs), policy, NOW)
    reason = result.plans[jobs[0].key].reason
    assert reason is not None and reason.code == ReasonCode.QUOTA_EXCEEDED
    assert "root.org" in reason.message and "16" in reason.message
    assert not result.placements


def test_drf_prefers_queue_below_guarantee() -> None:
    # a has used its guarantee, b has not: b's job goes first though a's has higher priority
    policy = Policy(
        queues=(
            QueueSpec("root.a", guaranteed=Resources.of(gpu=2000)),
            QueueSpec("root.b", guaranteed=Resources.of(gpu=2000)),
        )
    )
    run = running("r", [("h1", (0, 1))], gpu=2000, queue="root.a", cpu=0, memory=0)
    jobs = [
        job("a1", gpu=1000, queue="root.a", priority=100),
        job("b1", gpu=1000, queue="root.b", priority=1),
    ]
    result = schedule(snapshot([node("h1", gpus=3)], jobs, [run]), policy, NOW)
    assert [k[2] for k in result.pending_order] == ["b1", "a1"]
    assert placed_names(result) == ["b1"]
    assert math.isclose(result.queues["root.a"].dominant_share, 1.0)
