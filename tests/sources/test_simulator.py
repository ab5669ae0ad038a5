"""The simulated cluster: what it emits decodes into the right jobs, and it behaves like a cluster."""

from __future__ import annotations

import orjson
import pytest

from hpctop.model.decode import decode_event
from hpctop.model.objects import Job
from hpctop.model.policy import Policy
from hpctop.model.states import JobState
from hpctop.model.store import Snapshot, Store
from hpctop.runtime.session import Session
from hpctop.scheduling.types import ScheduleResult
from hpctop.sources.scenario import parse_scenario
from hpctop.sources.simulator import EPOCH, SimulatedCluster, SimulatorError
from tests.sources.test_simulator_firstfit import first_fit

BASE = """
[[nodes]]
name = "dgx"
count = 2
gpus = 8
gpu_model = "H100"
cpu = "64"
memory = "512Gi"
labels = { "topology/clique" = "a" }

[[nodes]]
name = "t4"
count = 1
gpus = 2
gpu_model = "T4"
cpu = "32"
memory = "128Gi"

[[nodes]]
name = "cpu"
count = 1
cpu = "32"
memory = "64Gi"

[[partitions]]
name = "h100"
selector = { "nvidia.com/gpu.product" = "H100" }

[[queues]]
path = "root.research"
guaranteed = { gpu = 16 }
max = { gpu = 32 }

[[queues]]
path = "root.prod"
"""

JOBS = """
[[jobs]]
name = "train"
queue = "root.research"
partition = "h100"
submit = 0
duration = 100
members = 2
per_member = { gpu = 8, cpu = "32", memory = "256Gi" }
priority = 100

[[jobs]]
name = "share"
queue = "root.prod"
submit = 5
duration = 50
per_member = { gpu = 0.25, cpu = "2", memory = "8Gi" }
gpu_models = ["T4"]
user = "ana"

[[jobs]]
name = "cpu-only"
submit = 5
duration = 30
per_member = { cpu = "4", memory = "4Gi" }

[[jobs]]
name = "broken"
queue = "root.prod"
submit = 5
duration = 20
fail = true
per_member = { cpu = "1", memory = "1Gi" }

[[jobs]]
name = "slow"
queue = "root.prod"
submit = 5
duration = 500
time_limit = 60
per_member = { cpu = "1", memory = "1Gi" }

[[jobs]]
name = "waiting"
queue = "root.prod"
submit = 0
duration = 10
held = true
per_member = { gpu = 1, cpu = "1", memory = "1Gi" }

[[jobs]]
name = "serve"
kind = "service"
queue = "root.prod"
members = 2
per_member = { gpu = 1, cpu = "4", memory = "16Gi" }
gpu_models = ["T4"]
"""


def small_session(text: str, seed: int = 1) -> Session:
    scenario = parse_scenario(text, name="t")
    return Session(
        SimulatedCluster(scenario, seed=seed), scenario.policy, "scenario:t.toml", scheduler=first_fit
    )


def jobs_by_name(session: Session) -> dict[str, Job]:
    return {j.name: j for j in session.snapshot.jobs.values()}


def test_every_event_decodes_and_nothing_is_skipped() -> None:
    scenario = parse_scenario(BASE + JOBS)
    cluster = SimulatedCluster(scenario, seed=3)
    store = Store(clock=lambda: cluster.now)
    kinds = set()
    events = cluster.initial_events()
    for t in range(0, 700, 5):
        for kind, raw in events:
            decode_event(kind, raw)  # raises on anything malformed
            assert store.apply_raw(kind, raw)
            kinds.add((kind, orjson.loads(raw)["type"]))
        snap = store.snapshot()
        placements = first_fit(snap, scenario.policy, cluster.now).placements
        events = []
        for placement in placements:
            for a in placement.assignments:
                events += cluster.bind(a.pod, a.node, a.gpu_indices)
        events += cluster.advance(EPOCH + t)
    events += cluster.cancel(("default", "Job", "waiting")) + cluster.cancel(
        ("default", "Deployment", "serve")
    )
    for kind, raw in events:
        assert store.apply_raw(kind, raw)
        kinds.add((kind, orjson.loads(raw)["type"]))
    assert not store.skipped
    assert {("Node", "ADDED"), ("PriorityClass", "ADDED"), ("Job", "ADDED"), ("Job", "MODIFIED")} <= kinds
    assert {("Pod", "ADDED"), ("Pod", "MODIFIED"), ("Pod", "DELETED"), ("Deployment", "ADDED")} <= kinds


def test_nodes_carry_allocatable_and_gfd_labels() -> None:
    session = small_session(BASE)
    nodes = session.snapshot.nodes
    assert sorted(nodes) == ["cpu-0", "dgx-0", "dgx-1", "t4-0"]
    dgx = nodes["dgx-0"]
    assert dgx.ready and dgx.allocatable.gpu == 8000 and dgx.allocatable.cpu == 64000
    assert dgx.allocatable.memory == 512 * 1024**3
    assert dgx.gpu.product == "H100" and dgx.gpu.count == 8 and dgx.gpu.sharing == "milli"
    assert dgx.gpu.memory_mib == 81559
    assert dgx.labels["topology/clique"] == "a"
    assert dgx.labels["nvidia.com/gpu.present"] == "true"
    assert nodes["cpu-0"].gpu.count == 0 and "nvidia.com/gpu.product" not in nodes["cpu-0"].labels


def test_jobs_decode_with_members_queue_requests_and_state() -> None:
    session = small_session(BASE + JOBS)
    jobs = jobs_by_name(session)
    train = jobs["train"]
    assert train.key == ("default", "Job", "train")
    assert train.members == 2 and train.min_members == 2
    assert train.gang is not None and train.gang.min_member == 2
    assert train.queue == "root.research" and train.partition == "h100"
    assert train.per_member.gpu == 8000 and train.per_member.cpu == 32000
    assert train.priority_value == 100 and train.time_limit == 100
    assert train.state == JobState.RUNNING
    assert train.scheduler_name == "hpctop"
    waiting = jobs["waiting"]
    assert waiting.state == JobState.HELD and waiting.pods == ()
    assert waiting.per_member.gpu == 1000
    serve = jobs["serve"]
    assert serve.key == ("default", "Deployment", "serve")
    assert serve.kind == "service" and serve.members == 2 and serve.min_members == 1
    assert serve.gpu_models == ("T4",)
    session.step(10)
    share = jobs_by_name(session)["share"]
    assert share.per_member.gpu == 250 and share.gpu_models == ("T4",)
    assert share.user == "ana" and share.queue == "root.prod"


def test_jobs_run_for_their_duration_and_complete() -> None:
    session = small_session(BASE + JOBS)
    session.advance_to_elapsed(99)
    assert jobs_by_name(session)["train"].state == JobState.RUNNING
    session.advance_to_elapsed(101)
    train = jobs_by_name(session)["train"]
    assert train.state == JobState.COMPLETED
    assert train.end_time is not None and train.start_time is not None
    assert train.end_time - train.start_time == 100
    assert session.snapshot.workloads[("default", "Job", "train")].condition("Complete") is not None
    pods = [session.snapshot.pods[k] for k in train.pods]
    assert {p.phase for p in pods} == {"Succeeded"}
    assert all(not p.holds_resources for p in pods)


def test_failing_job_fails_and_time_limit_times_out() -> None:
    session = small_session(BASE + JOBS)
    session.advance_to_elapsed(200)
    jobs = jobs_by_name(session)
    assert jobs["broken"].state == JobState.FAILED
    pod = session.snapshot.pods[jobs["broken"].pods[0]]
    assert pod.phase == "Failed" and pod.terminated_reason == "Error"
    slow = jobs["slow"]
    assert slow.state == JobState.TIMEOUT
    assert slow.end_time is not None and slow.start_time is not None
    assert slow.end_time - slow.start_time == 60
    # services never finish
    assert jobs["serve"].state == JobState.RUNNING


def test_fractional_gpus_share_one_device_with_indices() -> None:
    text = (
        BASE
        + "".join(
            f"""
[[jobs]]
name = "frac-{i}"
duration = 100
per_member = {{ gpu = 0.5, cpu = "1", memory = "1Gi" }}
gpu_models = ["T4"]
"""
            for i in range(4)
        )
        + """
[[jobs]]
name = "whole-t4"
duration = 100
per_member = { gpu = 1, cpu = "1", memory = "1Gi" }
gpu_models = ["T4"]
"""
    )
    session = small_session(text)
    jobs = jobs_by_name(session)
    pods = [session.snapshot.pods[k] for i in range(4) for k in jobs[f"frac-{i}"].pods]
    assert all(p.node_name == "t4-0" for p in pods)
    assert sorted(p.gpu_indices for p in pods) == [(0,), (0,), (1,), (1,)]
    assert pods[0].annotations["alibabacloud.com/gpu-milli"] == "500"
    assert jobs["whole-t4"].state == JobState.PENDING
    assert session.cluster.gpu_free("t4-0") == [0, 0]


def test_bind_refuses_what_a_kubelet_would() -> None:
    scenario = parse_scenario(BASE + JOBS)
    cluster = SimulatedCluster(scenario)
    store = Store(clock=lambda: cluster.now)
    for kind, raw in cluster.initial_events():
        store.apply_raw(kind, raw)
    train = store.snapshot().jobs[("default", "Job", "train")]
    first, second = train.pending_pods
    with pytest.raises(SimulatorError, match="does not exist"):
        cluster.bind(("default", "nope"), "dgx-0", ())
    with pytest.raises(SimulatorError, match="node nowhere does not exist"):
        cluster.bind(first, "nowhere", ())
    with pytest.raises(SimulatorError, match="insufficient memory"):
        cluster.bind(first, "t4-0", ())
    with pytest.raises(SimulatorError, match="no GPU 9"):
        cluster.bind(first, "dgx-0", (0, 1, 2, 3, 4, 5, 6, 9))
    cluster.bind(first, "dgx-0", (0, 1, 2, 3, 4, 5, 6, 7))
    with pytest.raises(SimulatorError, match="already bound"):
        cluster.bind(first, "dgx-1", ())
    with pytest.raises(SimulatorError, match="0 free GPUs"):
        cluster.bind(second, "dgx-0", ())
    cluster.bind(second, "dgx-1", ())
    assert cluster.gpu_free("dgx-0") == [0] * 8


def test_model_constraint_is_checked_at_bind() -> None:
    scenario = parse_scenario(BASE + JOBS)
    cluster = SimulatedCluster(scenario)
    store = Store(clock=lambda: cluster.now)
    for kind, raw in cluster.initial_events() + cluster.advance(EPOCH + 5):
        store.apply_raw(kind, raw)
    share = store.snapshot().jobs[("default", "Job", "share")]
    with pytest.raises(SimulatorError, match="has H100, the pod allows T4"):
        cluster.bind(share.pending_pods[0], "dgx-0", ())


def test_gang_bind_failure_rolls_back_and_is_recorded() -> None:
    def bad_core(snapshot: Snapshot, policy: Policy, now: float) -> ScheduleResult:
        result = first_fit(snapshot, policy, now)
        from dataclasses import replace

        from hpctop.scheduling.types import Placement, PodAssignment

        out = []
        for p in result.placements:
            if len(p.assignments) == 2:  # put both gang members on the same node: the second cannot fit
                a = p.assignments[0]
                b = PodAssignment(p.assignments[1].pod, a.node, ())
                p = Placement(p.job, (a, b))
            out.append(p)
        return replace(result, placements=tuple(out))

    scenario = parse_scenario(BASE + JOBS)
    session = Session(SimulatedCluster(scenario), scenario.policy, "t", scheduler=bad_core)
    train = jobs_by_name(session)["train"]
    assert train.state == JobState.PENDING
    assert train.running_members == 0 and len(train.pending_pods) == 2
    assert session.cluster.gpu_free("dgx-0") == [1000] * 8
    failure = session.bind_failures[0]
    assert failure.job == ("default", "Job", "train") and failure.rolled_back == 1
    assert "0 free GPUs" in failure.message
    assert not session.store.skipped


def test_same_seed_same_bytes() -> None:
    a = SimulatedCluster(parse_scenario(BASE + JOBS), seed=7)
    b = SimulatedCluster(parse_scenario(BASE + JOBS), seed=7)
    c = SimulatedCluster(parse_scenario(BASE + JOBS), seed=8)
    ea = a.initial_events() + a.advance(EPOCH + 100)
    eb = b.initial_events() + b.advance(EPOCH + 100)
    ec = c.initial_events() + c.advance(EPOCH + 100)
    assert ea == eb
    assert ea != ec


def test_ttl_after_finished_deletes_finished_jobs() -> None:
    text = BASE + "[simulation]\nttl_after_finished = 30\n" + JOBS
    session = small_session(text)
    session.advance_to_elapsed(120)
    assert jobs_by_name(session)["train"].state == JobState.COMPLETED
    session.advance_to_elapsed(140)
    assert "train" not in jobs_by_name(session)


def test_taints_tolerations_and_node_selectors_reach_the_model() -> None:
    text = """
[[nodes]]
name = "gpu"
gpus = 4
gpu_model = "A100"
cpu = "32"
memory = "128Gi"
labels = { pool = "train" }
taints = [{ key = "nvidia.com/gpu", value = "present", effect = "NoSchedule" }]

[[nodes]]
name = "other"
gpus = 4
gpu_model = "A100"
cpu = "32"
memory = "128Gi"

[[jobs]]
name = "tolerant"
duration = 10
per_member = { gpu = 1, cpu = "1", memory = "1Gi" }
node_selector = { pool = "train" }
tolerations = [{ key = "nvidia.com/gpu", operator = "Exists", effect = "NoSchedule" }]
"""
    scenario = parse_scenario(text)
    cluster = SimulatedCluster(scenario)
    store = Store(clock=lambda: cluster.now)
    for kind, raw in cluster.initial_events():
        store.apply_raw(kind, raw)
    snap = store.snapshot()
    assert [(t.key, t.value, t.effect) for t in snap.nodes["gpu-0"].taints] == [
        ("nvidia.com/gpu", "present", "NoSchedule")
    ]
    job = snap.jobs[("default", "Job", "tolerant")]
    assert job.node_selector == (("pool", "train"),)
    assert len(job.tolerations) == 1 and job.tolerations[0].tolerates(snap.nodes["gpu-0"].taints[0])
    with pytest.raises(SimulatorError, match="node selector pool=train"):
        cluster.bind(job.pending_pods[0], "other-0", ())
    cluster.bind(job.pending_pods[0], "gpu-0", ())
