"""EASY backfill: reservations are never delayed; ETAs; strict priority without backfill."""

from __future__ import annotations

import random

import pytest

from hpctop.model.objects import Job, Pod
from hpctop.model.policy import Policy
from hpctop.model.states import ReasonCode
from hpctop.scheduling.core import schedule
from hpctop.scheduling.types import ScheduleResult
from tests.scheduling_helpers import job, node, running, snapshot

NOW = 100.0


def host(name: str) -> dict[str, str]:
    return {"kubernetes.io/hostname": name}


def _construct(backfill: bool = True) -> tuple[ScheduleResult, dict[str, Job]]:
    # n1: 6 of 8 GPUs busy until t=1000; n2: 4 of 8 busy forever (no time limit)
    nodes = [node("n1", labels=host("n1")), node("n2", labels=host("n2"))]
    runs = [
        running("r1", [("n1", tuple(range(6)))], gpu=6000, start=0.0, time_limit=1000),
        running("r2", [("n2", (0, 1, 2, 3))], gpu=4000, start=0.0),
    ]
    jobs = {
        "head": job("head", gpu=8000, priority=1000),  # needs a full node: n1 at t=1000
        # considered before "short": it fits n1 now but would still run at t=1000
        "long-reserved": job("long-reserved", gpu=2000, priority=300, selector=host("n1")),
        "short": job("short", gpu=2000, priority=200, time_limit=500, selector=host("n1")),  # ends at 600
        "long-elsewhere": job("long-elsewhere", gpu=4000, priority=100),  # n2 is not reserved
    }
    result = schedule(snapshot(nodes, list(jobs.values()), runs), Policy(backfill=backfill), NOW)
    return result, jobs


def test_backfill_never_delays_the_reserved_job() -> None:
    result, jobs = _construct()
    head = result.plans[jobs["head"].key]
    assert head.eta == 1000.0
    assert head.reserved_nodes == ("n1",)
    assert head.reason is not None and head.reason.code == ReasonCode.RESOURCES
    placed = {p.job[2]: p for p in result.placements}
    assert set(placed) == {"short", "long-elsewhere"}
    assert placed["short"].backfilled and placed["short"].assignments[0].node == "n1"
    assert placed["long-elsewhere"].assignments[0].node == "n2"
    blocked = result.plans[jobs["long-reserved"].key]
    assert blocked.reason is not None and blocked.reason.code == ReasonCode.PRIORITY
    assert "head" in blocked.reason.message
    assert result.plans[jobs["short"].key].eta == NOW


def test_without_backfill_nothing_behind_a_blocked_job_starts() -> None:
    result, jobs = _construct(backfill=False)
    assert result.placements == ()
    for name in ("short", "long-reserved", "long-elsewhere"):
        reason = result.plans[jobs[name].key].reason
        assert reason is not None and reason.code == ReasonCode.PRIORITY
    assert result.plans[jobs["head"].key].eta == 1000.0


def test_long_job_may_use_extra_resources_on_a_reserved_node() -> None:
    # n1: 4 busy until 1000, 4 free; head needs 6 at 1000 -> 2 GPUs extra stay free for good
    nodes = [node("n1")]
    runs = [running("r1", [("n1", (0, 1, 2, 3))], gpu=4000, start=0.0, time_limit=1000)]
    jobs = [job("head", gpu=6000, priority=1000), job("two", gpu=2000, priority=10), job("one", gpu=1000)]
    result = schedule(snapshot(nodes, jobs, runs), Policy(), NOW)
    assert result.plans[jobs[0].key].eta == 1000.0
    assert [p.job[2] for p in result.placements] == ["two"]
    reason = result.plans[jobs[2].key].reason
    assert reason is not None and reason.code == ReasonCode.PRIORITY


def test_reservations_in_depth_respect_each_other() -> None:
    nodes = [node("n1", gpus=4)]
    runs = [
        running("r1", [("n1", (0, 1))], gpu=2000, start=0.0, time_limit=1000),
        running("r2", [("n1", (2, 3))], gpu=2000, start=0.0, time_limit=2000),
    ]
    jobs = [
        job("first", gpu=4000, priority=1000, time_limit=500),  # whole node at 2000, until 2500
        job("second", gpu=4000, priority=500),  # after first ends: 2500
    ]
    result = schedule(snapshot(nodes, jobs, runs), Policy(), NOW)
    assert result.plans[jobs[0].key].eta == 2000.0
    assert result.plans[jobs[1].key].eta == 2500.0
    limited = schedule(snapshot(nodes, jobs, runs), Policy(reservation_depth=1), NOW)
    assert limited.plans[jobs[1].key].eta is None


def _as_running(j: Job, result: ScheduleResult, start: float) -> tuple[Job, list[Pod]]:
    placement = result.plans[j.key].placement
    assert placement is not None
    on = [(a.node, a.gpu_indices) for a in placement.assignments]
    return running(
        j.name,
        on,
        gpu=j.per_member.gpu,
        cpu=j.per_member.cpu,
        memory=j.per_member.memory,
        start=start,
        time_limit=j.time_limit,
    )


@pytest.mark.parametrize("seed", range(40))
def test_head_eta_never_moves_later_with_backfill(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [node(f"n{i}", gpus=rng.choice([2, 4, 8])) for i in range(rng.randint(1, 4))]
    runs = []
    for i, n in enumerate(nodes):
        count = n.allocatable.gpu // 1000
        used = rng.randint(1, count)
        runs.append(
            running(
                f"r{i}",
                [(n.name, tuple(range(used)))],
                gpu=used * 1000,
                start=0.0,
                time_limit=rng.choice([200, 500, 1000, 3000]),
            )
        )
    head = job("head", gpu=max(n.allocatable.gpu for n in nodes), priority=10_000)
    alone = schedule(snapshot(nodes, [head], runs), Policy(), NOW)
    eta = alone.plans[head.key].eta
    if alone.plans[head.key].placement is not None:
        return  # nothing blocked in this draw
    assert eta is not None
    others = [
        job(
            f"o{i}",
            gpu=rng.choice([250, 500, 1000, 2000]),
            priority=rng.randint(0, 100),
            time_limit=rng.choice([None, 50, 300, 2000]),
            members=rng.randint(1, 2),
        )
        for i in range(rng.randint(1, 8))
    ]
    crowded = schedule(snapshot(nodes, [head, *others], runs), Policy(), NOW)
    assert crowded.plans[head.key].eta == eta
    # and at that time the head really fits, whatever was backfilled
    still = [r for r in runs if (r[0].start_time or 0) + (r[0].time_limit or 0) > eta]
    for o in others:
        if crowded.plans[o.key].placement is not None and (o.time_limit is None or NOW + o.time_limit > eta):
            still.append(_as_running(o, crowded, NOW))
    later = schedule(snapshot(nodes, [head], still), Policy(), eta)
    assert later.plans[head.key].placement is not None
