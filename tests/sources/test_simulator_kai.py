"""``--scheduler kai``: the simulated cluster writes KAI-Scheduler's objects, and hpctop reads them.

Why: the demo must show what hpctop does on a KAI cluster (issue 13, "make demo ARGS='--scheduler
kai'"), through the same decode → store → core path as a live one. A small cluster here: one
4-GPU node, a leaf queue ``team`` (quota 1, limit 2 GPUs) holding a 2-GPU job, a 1-GPU job that
would take it past its limit (KAI's OverLimit, no ETA), and a half-GPU job in ``share`` (a
``gpu-fraction`` pod, and a reservation pod holding its GPU while it runs). The console (Pilot)
shows the KAI queue tree and KAI's words in the detail.
"""

from __future__ import annotations

import orjson

from hpctop.backends.kai import read as kai
from hpctop.model.policy import Policy, QueueSpec
from hpctop.model.resources import Resources
from hpctop.runtime.session import session_for
from hpctop.scheduling.observed import merge
from hpctop.sources.scenario import JobSpec, NodeSpec, Scenario
from hpctop.sources.simulator.cluster import SimulatedCluster
from hpctop.tables.nodes import node_rows
from hpctop.tui.app import make_app
from hpctop.tui.widgets.queues import QueuePane

GIB = 2**30


def _scenario() -> Scenario:
    return Scenario(
        name="kai-small",
        nodes=(NodeSpec("n0", cpu=32_000, memory=128 * GIB, gpus=4, gpu_model="A100", gpu_memory_mib=81920),),
        jobs=(
            JobSpec("big", "team", "root.team", submit=0, duration=3600, cpu=1000, memory=GIB, gpu_count=2),
            JobSpec("over", "team", "root.team", submit=10, duration=600, cpu=1000, memory=GIB, gpu_count=1),
            JobSpec(
                "half",
                "share",
                "root.share",
                submit=0,
                duration=300,
                cpu=500,
                memory=GIB,
                gpu_count=1,
                gpu_milli=500,
            ),
        ),
        policy=Policy(
            queues=(
                QueueSpec("root"),
                QueueSpec("root.team", guaranteed=Resources(gpu=1000), max=Resources(gpu=2000)),
                QueueSpec("root.share"),
            )
        ),
    )


def test_the_default_style_writes_no_kai_object() -> None:
    cluster = SimulatedCluster(_scenario(), seed=1)
    kinds = {kind for kind, _ in cluster.initial_events() + cluster.advance(cluster.now + 120)}
    assert not {k for k in kinds if k.endswith(".scheduling.run.ai")}
    assert cluster.kai is None


def test_kai_style_writes_queues_podgroups_fractions_and_reservations() -> None:
    cluster = SimulatedCluster(_scenario(), seed=1, scheduler_style="kai")
    events = cluster.initial_events()
    queues = [orjson.loads(raw)["object"] for kind, raw in events if kind == kai.KAI_QUEUE]
    team = next(q for q in queues if q["metadata"]["name"] == "team")
    assert team["spec"]["resources"]["gpu"] == {"quota": 1.0, "limit": 2.0, "overQuotaWeight": 1}
    share = next(q for q in queues if q["metadata"]["name"] == "share")
    assert share["spec"]["resources"]["gpu"]["limit"] == -1  # no max: KAI's unlimited
    groups = [orjson.loads(raw)["object"] for kind, raw in events if kind == kai.KAI_PODGROUP]
    assert {g["spec"]["queue"] for g in groups} == {"team", "share"}
    pods = [orjson.loads(raw)["object"] for kind, raw in events if kind == "Pod"]
    half = next(p for p in pods if p["metadata"]["namespace"] == "share")
    assert half["metadata"]["annotations"]["gpu-fraction"] == "0.5"
    assert "alibabacloud.com/gpu-milli" not in half["metadata"]["annotations"]
    assert half["metadata"]["labels"][kai.QUEUE_LABEL] == "share"


def test_the_session_shows_over_limit_a_half_gpu_and_its_reservation() -> None:
    session = session_for(_scenario(), "test", seed=1, scheduler_style="kai")
    session.advance_to_elapsed(120)
    snap = session.snapshot
    assert snap.queues["root.team"].backend == "kai" and snap.queues["root.team"].max == Resources(gpu=2000)
    over = snap.jobs[("team", "Job", "over")]
    assert over.state.is_pending and over.reasons[0].source == "kai:PodGroup.schedulingConditions.OverLimit"
    assert (
        "Limit is 2 GPUs, currently 2 GPUs allocated and workload requested 1 GPUs" in over.reasons[0].message
    )
    view = merge(over, session.result.plans.get(over.key))
    assert view.reason is not None and view.reason.code == "QuotaExceeded" and view.eta is None
    half = snap.jobs[("share", "Job", "half")]
    assert half.state.name == "RUNNING" and half.allocated.gpu == 500
    reservations = kai.reservations_of(snap.job_pods(half), snap.pods)
    assert len(reservations) == 1 and reservations[0].requests.gpu == 0
    assert not [k for k in snap.jobs if k[0] == "kai-resource-reservation"]
    (node,) = node_rows(snap, session.result)
    assert node["gpus_alloc"] == 2.5
    # the share ends at 300 s: its reservation pod goes with it
    session.advance_to_elapsed(400)
    assert not [p for p in session.snapshot.pods if p[0] == "kai-resource-reservation"]


async def test_the_console_shows_kais_queue_tree_and_words() -> None:
    session = session_for(_scenario(), "test", seed=1, scheduler_style="kai")
    session.advance_to_elapsed(120)
    app = make_app(session, tick_interval=0, clock=lambda: 0.0, user="alice", show_charts=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        queues = app.query_one("#queues", QueuePane)
        assert "root.team" in queues.visible_paths() and queues.select("root.team")
        detail = app._detail(("team", "Job", "over")).plain
        assert "kai:PodGroup.schedulingConditions.OverLimit" in detail
        assert "quota has reached the allowable limit of GPUs" in detail
        assert "KAI-Scheduler orders jobs" in detail  # the owner's order is not hpctop's
        half = app._detail(("share", "Job", "half")).plain
        assert (
            "GPU held for these shares by KAI reservation pod kai-resource-reservation/gpu-reservation-n0-"
            in half
        )


def test_a_kai_job_cannot_move_queue() -> None:
    """KAI's pod grouper keeps the PodGroup's queue: a KAI-style cluster refuses a move (KAI ignores it)."""
    import pytest

    from hpctop.sources.simulator.cluster import SimulatorError

    cluster = SimulatedCluster(_scenario(), seed=1, scheduler_style="kai")
    cluster.initial_events()
    cluster.advance(cluster.now + 20)
    with pytest.raises(SimulatorError, match="never read back"):
        cluster.plan("move", ("team", "Job", "over"), "root.share")
    plain = SimulatedCluster(_scenario(), seed=1)
    plain.initial_events()
    plain.advance(plain.now + 20)
    assert plain.plan("move", ("team", "Job", "over"), "root.share")  # the default style still moves
