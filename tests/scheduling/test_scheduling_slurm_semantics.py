"""Slurm's own rules in hpctop's core (issue 14, point 4), each checked by hand against Slurm's docs.

Each test quotes the documentation section it was checked against (slurm.schedmd.com, 22.05 and
current pages agree on these points): priority_multifactor.html, slurm.conf.html, sprio.html,
sbatch.html and job_reason_codes.html. The reasons rule (only the first blocked job of a
partition reads ``Resources``) is in ``test_scheduling_reasons.py``.
"""

from __future__ import annotations

from dataclasses import replace

import orjson
import pytest

from hpctop.errors import ScenarioError
from hpctop.model.decode import decode_object
from hpctop.model.objects import Job
from hpctop.model.policy import PartitionSpec, Policy, PriorityWeights
from hpctop.model.states import JobState, ReasonCode
from hpctop.runtime.session import Session
from hpctop.scheduling.core import schedule
from hpctop.sources.scenario import parse_scenario
from hpctop.sources.simulator import SimulatedCluster
from hpctop.tables.jobs import job_rows
from hpctop.tables.prio import prio_rows
from tests.scheduling_helpers import job, node, running, snapshot

NOW = 500.0
WEEK = 7 * 24 * 3600


def _all_nodes(name: str, **tiers: int) -> PartitionSpec:
    """A partition over every node (Slurm partitions may overlap), with the given tier fields."""
    return PartitionSpec(name, (), **tiers)  # type: ignore[arg-type]


# -- PriorityTier and PriorityJobFactor -------------------------------------------------------------


def test_a_higher_priority_tier_is_evaluated_first_whatever_the_job_priority() -> None:
    # priority_multifactor.html, "Introduction": "Jobs are selected to be evaluated by the
    # scheduler in the following order: ... Partition PriorityTier, Job priority, Job submit
    # time, Job ID ... the job with the highest priority may not be the first to be evaluated".
    # slurm.conf.html, PriorityTier: "Jobs submitted to a partition with a higher PriorityTier
    # value will be evaluated by the scheduler before pending jobs in a partition with a lower
    # PriorityTier value."
    policy = Policy(partitions=(_all_nodes("low"), _all_nodes("high", evaluation_tier=2)))
    urgent = job("urgent", gpu=8000, priority=1000, partition="low", time_limit=600)
    tiered = job("tiered", gpu=8000, priority=0, partition="high", time_limit=600)
    result = schedule(snapshot([node("n1")], [urgent, tiered]), policy, NOW)
    assert result.plans[urgent.key].priority.total > result.plans[tiered.key].priority.total
    assert result.pending_order == (tiered.key, urgent.key)
    assert [p.job for p in result.placements] == [tiered.key]
    reason = result.plans[urgent.key].reason
    assert reason is not None and reason.code == ReasonCode.RESOURCES


def test_the_older_priority_tier_field_does_not_order_evaluation() -> None:
    # docs/scheduler.md: ``priority_tier`` keeps its old meaning, the PriorityJobFactor; with
    # equal PriorityTier (evaluation_tier) the job priority decides (priority_multifactor.html)
    policy = Policy(partitions=(_all_nodes("low"), _all_nodes("high", priority_tier=2)))
    urgent = job("urgent", gpu=8000, priority=1000, partition="low", time_limit=600)
    tiered = job("tiered", gpu=8000, priority=0, partition="high", time_limit=600)
    result = schedule(snapshot([node("n1")], [urgent, tiered]), policy, NOW)
    assert result.pending_order == (urgent.key, tiered.key)
    assert [p.job for p in result.placements] == [urgent.key]


@pytest.mark.parametrize("field", ["priority_job_factor", "priority_tier"])
def test_priority_job_factor_is_the_partition_factor(field: str) -> None:
    # priority_multifactor.html, "Partition Factor": "Each node partition can be assigned an
    # integer priority. The larger the number, the greater the job priority will be for jobs
    # that request to run in this partition. This priority value is then normalized to the
    # highest priority of all the partitions to become the partition factor." The integer is
    # PriorityJobFactor (slurm.conf.html: "Partition factor used by priority/multifactor plugin
    # in calculating job priority").
    policy = Policy(partitions=(_all_nodes("big", **{field: 4}), _all_nodes("small", **{field: 1})))
    jobs = [job("a", gpu=1000, partition="big"), job("b", gpu=1000, partition="small")]
    busy = running("busy", [("n1", tuple(range(8)))], gpu=8000)
    result = schedule(snapshot([node("n1")], jobs, [busy]), policy, NOW)
    assert result.plans[jobs[0].key].priority.factors["partition"] == 1.0
    assert result.plans[jobs[1].key].priority.factors["partition"] == 0.25
    weights = PriorityWeights()
    assert result.plans[jobs[1].key].priority.weighted["partition"] == 0.25 * weights.partition


def test_scenario_fields_for_both_tiers() -> None:
    text = """
[[nodes]]
name = "n"
cpu = "8"
memory = "32Gi"

[[partitions]]
name = "debug"
evaluation_tier = 3
priority_job_factor = 7

[[partitions]]
name = "old"
priority_tier = 5
"""
    parts = {p.name: p for p in parse_scenario(text).policy.partitions}
    assert (parts["debug"].evaluation_tier, parts["debug"].job_factor) == (3, 7)
    assert (parts["old"].evaluation_tier, parts["old"].job_factor) == (1, 5)
    both = text.replace("priority_tier = 5", "priority_tier = 5\npriority_job_factor = 2")
    with pytest.raises(ScenarioError, match="older name of priority_job_factor"):
        parse_scenario(both)


# -- held jobs -------------------------------------------------------------------------------------


def test_a_held_job_accrues_no_age_and_sprio_does_not_list_it() -> None:
    # priority_multifactor.html, "Age Factor": "The age factor represents the length of time a
    # job has been sitting in the queue and eligible to run"; a held job is not eligible, and
    # only PriorityFlags=ACCRUE_ALWAYS (slurm.conf.html) increases the age factor "despite job
    # ineligibility due to either dependencies, holds or begin time in the future".
    # sprio.html: "By default, sprio returns information for all pending jobs" (held jobs are
    # not among them: a held job has priority 0 and is not listed).
    held = job("held", gpu=1000, state=JobState.HELD, submit=0.0)
    waiting = job("waiting", gpu=1000, submit=0.0)
    busy = running("busy", [("n1", tuple(range(8)))], gpu=8000)
    snap = snapshot([node("n1")], [held, waiting], [busy])
    result = schedule(snap, Policy(), WEEK / 2)
    assert result.plans[held.key].priority.factors["age"] == 0.0
    assert result.plans[held.key].priority.total == 0
    assert result.plans[waiting.key].priority.factors["age"] == pytest.approx(0.5)
    assert [r["name"] for r in prio_rows(snap, result)] == ["waiting"]
    assert [r["name"] for r in prio_rows(snap, result, states={JobState.HELD})] == ["held"]


# -- frozen priority of running jobs ---------------------------------------------------------------


def test_a_running_jobs_age_is_frozen_at_its_start() -> None:
    # Slurm recalculates priorities of pending jobs only (priority_multifactor.html,
    # PriorityCalcPeriod; sprio.html lists pending jobs): a running job keeps the priority it
    # started with, so its age factor no longer grows after the start.
    started = replace(running("r", [("n1", (0,))], gpu=1000, start=3600.0)[0], submit_time=0.0)
    pods = running("r", [("n1", (0,))], gpu=1000, start=3600.0)[1]
    day_later = schedule(snapshot([node("n1")], [], [(started, pods)]), Policy(), 3600.0 + 86400)
    week_later = schedule(snapshot([node("n1")], [], [(started, pods)]), Policy(), 3600.0 + WEEK)
    age = day_later.plans[started.key].priority.factors["age"]
    assert age == pytest.approx(3600.0 / WEEK)
    assert week_later.plans[started.key].priority.factors["age"] == age


# -- the reservation a Priority reason names --------------------------------------------------------


def test_priority_reason_names_the_reservation_the_job_would_delay() -> None:
    # job_reason_codes.html, "Priority": "One or more higher priority jobs exist for this
    # partition or advanced reservation"; the backfill scheduler starts a lower-priority job
    # only "if doing so does not delay the expected start time of any higher priority job"
    # (sched_config.html, "Backfill"). The job named must be one whose start would be delayed.
    nodes = [node("n1"), node("n2", labels={"rack": "b"})]
    busy1 = running("busy1", [("n1", tuple(range(8)))], gpu=8000, start=NOW, time_limit=200)  # ends 700
    busy2 = running("busy2", [("n2", (0, 1, 2, 3))], gpu=4000, start=NOW, time_limit=1000)  # ends 1500
    first = job("first", gpu=8000, priority=100, time_limit=600)  # reserved on n1 from 700
    rack_b = job("rackb", gpu=8000, priority=50, time_limit=600, selector={"rack": "b"})  # n2 from 1500
    long = job("long", gpu=4000, priority=1, time_limit=2000)  # fits n2 now, runs past 1500
    result = schedule(snapshot(nodes, [first, rack_b, long], [busy1, busy2]), Policy(), NOW)
    assert result.plans[first.key].reserved_nodes == ("n1",)
    assert result.plans[rack_b.key].reserved_nodes == ("n2",)
    reason = result.plans[long.key].reason
    assert reason is not None and reason.code == ReasonCode.PRIORITY
    assert "ns/rackb's reservation" in reason.message, reason.message
    assert "ns/first" not in reason.message
    # ending before rackb's reservation starts, the same job backfills on n2
    short = job("long", gpu=4000, priority=1, time_limit=900)
    result = schedule(snapshot(nodes, [first, rack_b, short], [busy1, busy2]), Policy(), NOW)
    placed = {p.job: p for p in result.placements}
    assert placed[short.key].backfilled
    assert [a.node for a in placed[short.key].assignments] == ["n2"]


# -- backfilled ------------------------------------------------------------------------------------

_BACKFILL = """
[[nodes]]
name = "gpu"
gpus = 8
gpu_model = "H100"
cpu = "64"
memory = "512Gi"

[[jobs]]
name = "busy"
submit = 0
duration = 1000
per_member = {gpu = 4, cpu = "4", memory = "16Gi"}

[[jobs]]
name = "big"
submit = 10
duration = 100
per_member = {gpu = 8, cpu = "4", memory = "16Gi"}

[[jobs]]
name = "small"
submit = 20
duration = 200
per_member = {gpu = 4, cpu = "4", memory = "16Gi"}
"""


def test_a_job_started_by_backfill_stays_backfilled_once_running() -> None:
    # sched_config.html, "Backfill": "Without backfill scheduling, each partition is scheduled
    # strictly in priority order ... Backfill scheduling will start lower priority jobs if doing
    # so does not delay the expected start time of any higher priority jobs". ``small`` starts
    # while ``big``, ahead of it, waits for the GPUs ``busy`` holds: the backfill pass starts it.
    scenario = parse_scenario(_BACKFILL, name="t")
    session = Session(SimulatedCluster(scenario, seed=1), scenario.policy, "scenario:t.toml")
    session.advance_to_elapsed(50)
    rows = {r["name"]: r for r in job_rows(session.snapshot, session.result)}
    assert rows["small"]["state"] == "RUNNING" and rows["small"]["backfilled"] is True
    assert rows["busy"]["state"] == "RUNNING" and rows["busy"]["backfilled"] is False
    assert rows["big"]["state"] == "PENDING" and rows["big"]["backfilled"] is False


# -- one member per node ---------------------------------------------------------------------------


def _spread(j: Job) -> Job:
    return replace(j, one_per_node=True)


def test_one_per_node_puts_each_member_on_its_own_node() -> None:
    # sbatch.html, --ntasks-per-node: "Request that ntasks be invoked on each node"; with
    # --nodes=N and --ntasks-per-node=1 each of the N tasks gets its own node, however small.
    nodes = [node(f"n{i}") for i in range(4)]
    packed = job("packed", gpu=1000, members=4)
    spread = _spread(job("spread", gpu=1000, members=4))
    result = schedule(snapshot(nodes, [packed, spread]), Policy(), NOW)
    placed = {p.job: p for p in result.placements}
    assert len({a.node for a in placed[packed.key].assignments}) == 1
    assert sorted(a.node for a in placed[spread.key].assignments) == ["n0", "n1", "n2", "n3"]


def test_one_per_node_with_fewer_nodes_than_members_never_fits() -> None:
    # sbatch.html, --nodes: a job asking more nodes than the partition has stays pending
    # (squeue shows it blocked on the partition's node limits; hpctop says Constraints)
    spread = _spread(job("spread", gpu=1000, members=3))
    result = schedule(snapshot([node("n0"), node("n1")], [spread]), Policy(), NOW)
    reason = result.plans[spread.key].reason
    assert not result.placements
    assert reason is not None and reason.code == ReasonCode.CONSTRAINTS
    # the same request without the spread fits one node, and a failure remembered for the
    # spread gang must not reject it (the failure cache compares per-node limits)
    both = [spread, job("packed", gpu=1000, members=3)]
    result = schedule(snapshot([node("n0"), node("n1")], both), Policy(), NOW)
    assert [p.job[2] for p in result.placements] == ["packed"]


def test_the_scenario_field_becomes_a_hostname_anti_affinity_and_back() -> None:
    text = """
[[nodes]]
name = "gpu"
count = 4
gpus = 8
gpu_model = "H100"
cpu = "64"
memory = "512Gi"

[[jobs]]
name = "spread"
duration = 600
members = 4
one_per_node = true
per_member = {gpu = 1, cpu = "4", memory = "16Gi"}
"""
    scenario = parse_scenario(text, name="t")
    session = Session(SimulatedCluster(scenario, seed=1), scenario.policy, "scenario:t.toml")
    session.advance_to_elapsed(5)
    spread = next(j for j in session.snapshot.jobs.values() if j.name == "spread")
    assert spread.one_per_node and spread.state == JobState.RUNNING
    assert sorted(spread.nodes) == ["gpu-0", "gpu-1", "gpu-2", "gpu-3"]


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ({"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"job": "a"}}}, True),
        (
            {"topologyKey": "topology.kubernetes.io/zone", "labelSelector": {"matchLabels": {"job": "a"}}},
            False,
        ),
        ({"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"job": "b"}}}, False),
        ({"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchExpressions": []}}, False),
    ],
)
def test_a_pods_own_hostname_anti_affinity_is_one_per_node(term: dict[str, object], expected: bool) -> None:
    # Kubernetes API (PodAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution, a
    # PodAffinityTerm with topologyKey and labelSelector): pods matching the selector may not
    # share a topology domain; on the hostname key and the pod's own labels, one member per node
    raw = {
        "metadata": {"name": "a-0", "namespace": "ns", "labels": {"job": "a"}},
        "spec": {
            "containers": [{"name": "c"}],
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
        },
    }
    assert decode_object("Pod", orjson.dumps(raw)).one_per_node is expected


@pytest.mark.parametrize(
    "affinity",
    [
        "bad",
        {"podAntiAffinity": "x"},
        {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": 5}]}},
    ],
)
def test_a_malformed_affinity_is_tolerated_not_one_per_node(affinity: object) -> None:
    # affinity is not a field the pod needs (model/structs.py ``needed``): a malformed one is
    # read as absent, the pod itself is kept
    raw = {
        "metadata": {"name": "a-0", "namespace": "ns", "labels": {"job": "a"}},
        "spec": {"containers": [{"name": "c"}], "affinity": affinity},
    }
    pod = decode_object("Pod", orjson.dumps(raw))
    assert pod.name == "a-0" and pod.one_per_node is False
