"""Scheduling points the session skips, the view computed on read, and the pre-serialised events.

The session skips the core at a scheduling point when the cluster says no pending pod fits on any
node (``SimulatedCluster.placement_possible``); these tests hold that answer to a brute-force
``fits`` over every pending pod and node, and check that skipping changes no decision.
"""

from __future__ import annotations

import orjson

from hpctop.runtime.session import Session
from hpctop.sources.scenario import parse_scenario
from hpctop.sources.simulator import EPOCH, SimulatedCluster
from tests.runtime.test_session import state_of
from tests.sources.test_simulator import BASE, JOBS
from tests.sources.test_simulator_firstfit import first_fit

NEVER_FITS = """
[[jobs]]
name = "too-big"
queue = "root.research"
submit = 0
duration = 100
per_member = { gpu = 16, cpu = "32", memory = "256Gi" }

[[jobs]]
name = "no-such-model"
queue = "root.prod"
submit = 0
duration = 100
per_member = { gpu = 1, cpu = "1", memory = "1Gi" }
gpu_models = ["A100"]

"""


def brute_force_possible(cluster: SimulatedCluster) -> bool:
    pending = [key for key, pod in cluster.pods.items() if pod.phase == "Pending" and pod.node is None]
    return any(cluster.fits(key, node) is None for key in pending for node in cluster.nodes)


def test_placement_possible_agrees_with_fits_on_every_pending_pod_and_node() -> None:
    scenario = parse_scenario(BASE + JOBS + NEVER_FITS)
    cluster = SimulatedCluster(scenario, seed=2)
    cluster.initial_events()
    answers = []
    for t in range(0, 400, 5):
        cluster.advance(EPOCH + t)
        expected = brute_force_possible(cluster)
        assert cluster.placement_possible() == expected, t
        assert cluster.placement_possible() == expected, t  # asking twice changes nothing
        answers.append(expected)
        # bind one pod at a time (first fit), so the answer is asked between binds too
        for key, pod in list(cluster.pods.items()):
            if pod.phase != "Pending" or pod.node is not None:
                continue
            node = next((n for n in cluster.nodes if cluster.fits(key, n) is None), None)
            if node is not None:
                cluster.bind(key, node)
                assert cluster.placement_possible() == brute_force_possible(cluster), t
    # both answers happen: pods that fit, and stretches where only the never-fitting ones wait
    assert True in answers and False in answers
    cluster.hold(("default", "Job", "too-big"))
    cluster.cancel(("default", "Job", "no-such-model"))
    assert cluster.placement_possible() == brute_force_possible(cluster) is False


T4_JOBS = """
[[jobs]]
name = "hog"
queue = "root.prod"
submit = 0
duration = 50
per_member = { gpu = 2, cpu = "1", memory = "1Gi" }
gpu_models = ["T4"]

[[jobs]]
name = "waiter"
queue = "root.prod"
submit = 0
duration = 50
per_member = { gpu = 1, cpu = "1", memory = "1Gi" }
gpu_models = ["T4"]
"""


def test_placement_possible_sees_room_freed_on_one_node() -> None:
    cluster = SimulatedCluster(parse_scenario(BASE + T4_JOBS), seed=1)
    cluster.initial_events()
    pods = {p.job.spec.name: k for k, p in cluster.pods.items()}
    assert cluster.placement_possible()
    cluster.bind(pods["hog"], "t4-0")  # both T4s of the only T4 node
    assert not cluster.placement_possible() and not brute_force_possible(cluster)
    cluster.advance(EPOCH + 49)
    assert not cluster.placement_possible()
    cluster.advance(EPOCH + 50)  # the hog ends: its node has room again
    assert cluster.placement_possible() and brute_force_possible(cluster)
    cluster.bind(pods["waiter"], "t4-0")
    assert not cluster.placement_possible()  # nothing pending


QUEUED = """
[[jobs]]
name = "first"
queue = "root.research"
partition = "h100"
submit = 0
duration = 100
members = 2
per_member = { gpu = 8, cpu = "32", memory = "256Gi" }

[[jobs]]
name = "second"
queue = "root.research"
partition = "h100"
submit = 10
duration = 300
members = 2
per_member = { gpu = 8, cpu = "32", memory = "256Gi" }

[[jobs]]
name = "small"
queue = "root.research"
partition = "h100"
submit = 20
duration = 30
per_member = { gpu = 1, cpu = "1", memory = "1Gi" }
"""


def session(text: str, skip: bool, seed: int = 1) -> Session:
    scenario = parse_scenario(text, name="t")
    cluster = SimulatedCluster(scenario, seed=seed)
    if not skip:
        cluster.placement_possible = lambda: True  # type: ignore[method-assign]
    return Session(cluster, scenario.policy, "scenario:t.toml")  # the real core


def test_skipped_points_change_no_decision_and_save_core_runs() -> None:
    text = BASE + QUEUED + NEVER_FITS
    skipping, always = session(text, True), session(text, False)
    for t in (7, 33, 101, 250, 405, 700, 1300):
        skipping.advance_to_elapsed(t)
        always.advance_to_elapsed(t)
        assert state_of(skipping) == state_of(always), t
        assert skipping.result.pending_order == always.result.pending_order
        assert {k: p.reason for k, p in skipping.result.plans.items()} == {
            k: p.reason for k, p in always.result.plans.items()
        }
        jobs = {k[2]: j.state.value for k, j in skipping.snapshot.jobs.items()}
        if t == 33:  # second waits for first's nodes, small too (behind second's reservation)
            assert jobs["first"] == "RUNNING" and jobs["second"] == jobs["small"] == "PENDING"
    assert {k[2]: j.state.value for k, j in skipping.snapshot.jobs.items()} == {
        "first": "COMPLETED",
        "second": "COMPLETED",
        "small": "COMPLETED",
        "too-big": "PENDING",
        "no-such-model": "PENDING",
    }
    assert skipping.skipped_cycles > 10 and always.skipped_cycles == 0
    assert skipping.schedule_runs < always.schedule_runs
    # the never-fitting jobs are still explained
    waiting = {k[2]: p.reason for k, p in skipping.result.plans.items() if p.reason is not None}
    assert waiting.keys() == {"too-big", "no-such-model"}


def test_the_view_is_computed_when_read() -> None:
    s = Session(
        SimulatedCluster(parse_scenario(BASE + JOBS), seed=1),
        parse_scenario(BASE + JOBS).policy,
        "t",
        scheduler=first_fit,
    )
    s.advance_to_elapsed(30)
    runs = s.schedule_runs
    for _ in range(20):
        s.step(7)  # 140 virtual s: 14 scheduling points
    stepped = s.schedule_runs - runs
    assert s.result.now == s.now == EPOCH + 170
    assert s.schedule_runs - runs <= stepped + 1  # one run for the view, not one per step
    view = s.snapshot
    assert s.snapshot is view and s.schedule_runs - runs <= stepped + 1  # read twice, computed once
    assert view.jobs == s.store.snapshot().jobs


def test_events_are_the_bytes_of_the_objects_they_describe() -> None:
    """The pre-serialised parts spliced into events hold what the job's pods are now."""
    scenario = parse_scenario(BASE + JOBS)
    cluster = SimulatedCluster(scenario, seed=1)
    events = cluster.initial_events() + cluster.advance(EPOCH + 10)
    share = next(k for k, p in cluster.pods.items() if p.job.spec.name == "share")
    events += cluster.bind(share, "t4-0")
    key = ("default", "Job", "share")
    train = ("default", "Job", "train")
    events += cluster.hold(train) + cluster.set_priority(train, 4242) + cluster.move(train, "root.prod")
    events += cluster.release(train)
    pods = [orjson.loads(raw)["object"] for kind, raw in events if kind == "Pod"]
    bound = [p for p in pods if p["metadata"]["name"] == share[1]][-1]
    assert bound["spec"]["nodeName"] == "t4-0"
    assert bound["metadata"]["annotations"]["alibabacloud.com/gpu-index"] == "0"
    assert bound["metadata"]["annotations"]["alibabacloud.com/gpu-milli"] == "250"
    assert bound["metadata"]["ownerReferences"][0]["uid"] == cluster.jobs[key].uid
    last_train = [p for p in pods if p["metadata"]["ownerReferences"][0]["name"] == "train"][-1]
    assert last_train["spec"]["priority"] == 4242 and "nodeName" not in last_train["spec"]
    assert last_train["metadata"]["labels"]["yunikorn.apache.org/queue"] == "root.prod"
    jobs = [orjson.loads(raw)["object"] for kind, raw in events if kind == "Job"]
    template = [j for j in jobs if j["metadata"]["name"] == "train"][-1]["spec"]["template"]
    assert template["metadata"]["labels"]["yunikorn.apache.org/queue"] == "root.prod"
    assert template["spec"]["priorityClassName"] == "priority-4242"
    # the same bytes as serialising the object built field by field
    for _kind, raw in events:
        assert orjson.dumps(orjson.loads(raw)) == raw
