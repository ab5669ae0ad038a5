"""Every pending reason code in the case that causes it, with evidence, and their precedence."""

from __future__ import annotations

import pytest

from hpctop.model.objects import Job
from hpctop.model.policy import PartitionSpec, PartitionState, Policy, QueueSpec, QueueState
from hpctop.model.resources import Resources
from hpctop.model.states import JobState, ReasonCode
from hpctop.scheduling.core import schedule
from tests.scheduling_helpers import job, node, running, snapshot

NOW = 500.0
CLOSED = Policy(queues=(QueueSpec("root.closed", state=QueueState.CLOSED),))
CAPPED = Policy(queues=(QueueSpec("root.a", max=Resources.of(gpu=32000)),))
DRAINED = Policy(partitions=(PartitionSpec("p", (), state=PartitionState.DRAIN),))


def _busy() -> list:  # type: ignore[type-arg]
    # n1 has 4 of 8 GPUs free; root.a already uses 24 GPUs on other nodes
    return [
        running("busy", [("n1", (0, 1, 2, 3))], gpu=4000),
        running("quota", [(f"q{i}", tuple(range(8))) for i in range(3)], gpu=8000, queue="root.a"),
    ]


@pytest.mark.parametrize(
    ("pending", "policy", "code", "evidence"),
    [
        (job("x", gpu=1000, state=JobState.HELD), Policy(), ReasonCode.HELD, "held"),
        (job("x", gpu=1000, gates=("example.com/wait",)), Policy(), ReasonCode.GATED, "example.com/wait"),
        (job("x", gpu=1000, queue="root.closed"), CLOSED, ReasonCode.QUEUE_HELD, "root.closed"),
        (job("x", gpu=1000), DRAINED, ReasonCode.QUEUE_HELD, "p is drain"),
        (job("x", gpu=16000), Policy(), ReasonCode.CONSTRAINTS, "gpu"),
        (job("x", gpu=1000, selector={"zone": "mars"}), Policy(), ReasonCode.CONSTRAINTS, "selector"),
        (job("x", gpu=1000, gpu_models=("B200",)), Policy(), ReasonCode.CONSTRAINTS, "GPU model"),
        (job("x", gpu=8000, members=2, queue="root.a"), CAPPED, ReasonCode.QUOTA_EXCEEDED, "root.a uses 24"),
        (job("x", gpu=1000, members=4, created=2), Policy(), ReasonCode.GANG_INCOMPLETE, "2 of 4"),
        (job("x", gpu=8000), Policy(), ReasonCode.RESOURCES, "gpu: needs 8 GPUs/node; largest free 4"),
        (job("x", gpu=1000, partition="nope"), Policy(), ReasonCode.CONSTRAINTS, "nope"),
    ],
    ids=lambda v: v.name if isinstance(v, Job) else None,
)
def test_reason_codes(pending: Job, policy: Policy, code: ReasonCode, evidence: str) -> None:
    nodes = [node("n1"), *[node(f"q{i}") for i in range(3)]]
    result = schedule(snapshot(nodes, [pending], _busy()), policy, NOW)
    plan = result.plans[pending.key]
    assert plan.placement is None
    assert plan.reason is not None
    assert plan.reason.code == code, plan.reason
    assert evidence in plan.reason.message
    assert plan.reason.source.startswith("core:")
    assert plan.eta is None


def test_priority_reason_in_strict_mode() -> None:
    jobs = [job("big", gpu=8000, priority=100), job("small", gpu=1000)]
    result = schedule(snapshot([node("n1")], jobs, [_busy()[0]]), Policy(backfill=False), NOW)
    reason = result.plans[jobs[1].key].reason
    assert reason is not None and reason.code == ReasonCode.PRIORITY
    assert "ns/big" in reason.message
    # with backfill (and no reservation possible: nothing ends) the small job starts
    result = schedule(snapshot([node("n1")], jobs, [_busy()[0]]), Policy(), NOW)
    assert [p.job[2] for p in result.placements] == ["small"]


def test_node_unavailable_when_only_down_nodes_could_hold_it() -> None:
    nodes = [node("n1", gpus=4), node("n2", ready=False)]
    result = schedule(snapshot(nodes, [job("x", gpu=8000)]), Policy(), NOW)
    reason = result.plans[("ns", "Job", "x")].reason
    assert reason is not None and reason.code == ReasonCode.NODE_UNAVAILABLE


@pytest.mark.parametrize(
    ("pending", "policy", "code"),
    [
        (job("x", gpu=1000, state=JobState.HELD, gates=("g",)), Policy(), ReasonCode.HELD),
        (job("x", gpu=1000, gates=("g",), queue="root.closed"), CLOSED, ReasonCode.QUEUE_HELD),
        (job("x", gpu=8000, members=2, queue="root.a", gates=("g",)), CAPPED, ReasonCode.QUOTA_EXCEEDED),
        (job("x", gpu=1000, members=4, created=2, gates=("g",)), Policy(), ReasonCode.GATED),
        (job("x", gpu=16000, members=4, created=2), Policy(), ReasonCode.GANG_INCOMPLETE),
    ],
)
def test_reason_precedence(pending: Job, policy: Policy, code: ReasonCode) -> None:
    nodes = [node("n1"), *[node(f"q{i}") for i in range(3)]]
    result = schedule(snapshot(nodes, [pending], _busy()), policy, NOW)
    reason = result.plans[pending.key].reason
    assert reason is not None and reason.code == code


def test_placed_jobs_have_no_reason_and_running_jobs_a_plan() -> None:
    nodes = [node("n1"), *[node(f"q{i}") for i in range(3)]]
    result = schedule(snapshot(nodes, [job("ok", gpu=1000)], _busy()), Policy(), NOW)
    plan = result.plans[("ns", "Job", "ok")]
    assert plan.reason is None and plan.placement is not None and plan.eta == NOW
    busy = result.plans[("ns", "Job", "busy")]
    assert busy.order is None and busy.partition == "H100" and busy.reason is None


def test_only_the_first_blocked_job_of_a_partition_reads_resources() -> None:
    # Slurm job_reason_codes.shtml: "Resources: The job is waiting for resources to become
    # available" for the first blocked job; "Priority: One or more higher priority jobs exist
    # for this partition or advanced reservation" for the jobs queued behind it (seen the same
    # way in the real Slurm test, tests/slurm/test_rest_vs_squeue.py)
    busy = running("busy", [("n1", tuple(range(8)))], gpu=8000, time_limit=600)
    first = job("first", gpu=8000, priority=100, time_limit=600)
    behind = job("behind", gpu=8000, priority=10, time_limit=600)
    result = schedule(snapshot([node("n1")], [first, behind], [busy]), Policy(), NOW)
    first_reason = result.plans[first.key].reason
    assert first_reason is not None and first_reason.code == ReasonCode.RESOURCES
    reason = result.plans[behind.key].reason
    assert reason is not None and reason.code == ReasonCode.PRIORITY
    assert "first" in reason.message
