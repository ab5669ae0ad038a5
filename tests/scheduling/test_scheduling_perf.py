"""Performance smoke: a cycle over 1,500 nodes and 3,000 pending single-pod jobs (not a benchmark)."""

from __future__ import annotations

import time

import pytest

from hpctop.model.policy import Policy, QueueSpec
from hpctop.scheduling.core import schedule
from tests.scheduling_helpers import GI, job, node, snapshot


@pytest.mark.serial  # wall time: one cycle within 10 s of wall time
def test_cycle_1500_nodes_3000_pending() -> None:
    products = ["V100", "A100", "T4", "P100"]
    nodes = [
        node(f"n{i:04d}", gpus=[8, 4, 2, 1][i % 4], product=products[i % 4], cpu=96_000, memory=384 * GI)
        for i in range(1500)
    ]
    shapes = [1000, 500, 220, 2000, 8000, 0]
    jobs = [
        job(
            f"j{i:05d}",
            gpu=shapes[i % len(shapes)],
            cpu=4000 + 1000 * (i % 7),
            memory=(8 + i % 5) * GI,
            queue=f"root.q{i % 4}",
            submit=float(i),
            time_limit=3600 if i % 3 else None,
            gpu_models=(products[i % 4],) if i % 5 == 0 else (),
        )
        for i in range(3000)
    ]
    policy = Policy(queues=tuple(QueueSpec(f"root.q{i}") for i in range(4)))
    snap = snapshot(nodes, jobs)
    started = time.perf_counter()
    result = schedule(snap, policy, 10_000.0)
    elapsed = time.perf_counter() - started
    print(f"\nschedule(): 1500 nodes x 3000 pending jobs in {elapsed:.3f} s, placed {len(result.placements)}")
    assert len(result.pending_order) == 3000
    assert len(result.placements) > 1000
    assert elapsed < 10.0
