"""hpctop's scheduling core against the real Slurm (Debian 22.05) on the same small situation.

Why: the Slurm-semantics tests in ``tests/scheduling/test_scheduling_slurm_semantics.py`` were
checked by hand against Slurm's documentation; here the real slurmctld decides the same case
and the core must decide it the same way. The case: two partitions over one node, ``gpu``
(PriorityJobFactor=10) and ``debug`` (PriorityJobFactor=1, raised to PriorityTier=2 for the
test); a job in each waits for the node. Slurm starts the ``debug`` job first although ``sprio``
gives the ``gpu`` job the higher priority (priority_multifactor.html: jobs are evaluated by
"Partition PriorityTier" before "Job priority").
"""

from __future__ import annotations

import time
from collections.abc import Callable

from hpctop.model.states import JobState
from hpctop.runtime.session import Session
from hpctop.scheduling.core import schedule
from hpctop.sources.scenario import parse_scenario
from hpctop.sources.simulator import SimulatedCluster
from tests.slurm.realslurm import NODES, RealSlurm

_SCENARIO = """
[[nodes]]
name = "sn"
gpus = 2
gpu_model = "H100"
cpu = "4"
memory = "4000Mi"

[[partitions]]
name = "gpu"
priority_job_factor = 10

[[partitions]]
name = "debug"
priority_job_factor = 1
evaluation_tier = 2

[[jobs]]
name = "holder"
partition = "debug"
submit = 0
duration = 60
per_member = {gpu = 2, cpu = "4", memory = "4000Mi"}

[[jobs]]
name = "high"
partition = "gpu"
submit = 1
duration = 600
per_member = {gpu = 2, cpu = "4", memory = "4000Mi"}

[[jobs]]
name = "low"
partition = "debug"
submit = 2
duration = 600
per_member = {gpu = 2, cpu = "4", memory = "4000Mi"}
"""


def _states(cluster: RealSlurm) -> dict[str, str]:
    out = cluster.run(["squeue", "-h", "-o", "%i|%T"]).stdout
    return dict(line.split("|") for line in out.splitlines())


def _until(
    cluster: RealSlurm, ready: Callable[[dict[str, str]], bool], timeout: float = 20.0
) -> dict[str, str]:
    """squeue's states once ``ready`` holds (or at the timeout: the asserts then say what differs).

    Not ``tests.polling.until``: that one is async and fails on timeout; this polls a subprocess
    and hands back what it last saw.
    """
    deadline = time.monotonic() + timeout
    while True:
        states = _states(cluster)
        if ready(states) or time.monotonic() > deadline:
            return states
        time.sleep(0.3)


def test_priority_tier_decides_who_starts_like_slurm(slurm: RealSlurm) -> None:
    node = NODES[0]
    slurm.run(["scontrol", "update", "partitionname=debug", "prioritytier=2"])
    try:
        holder = slurm.sbatch("-p", "debug", "-w", node, "--exclusive", "-t", "10")
        _until(slurm, lambda s: s.get(holder) == "RUNNING")
        high = slurm.sbatch("-p", "gpu", "-w", node, "--exclusive", "-t", "10")
        low = slurm.sbatch("-p", "debug", "-w", node, "--exclusive", "-t", "10")
        _until(slurm, lambda s: s.get(high) == "PENDING" and s.get(low) == "PENDING", 5.0)
        sprio = slurm.run(["sprio", "-h", "-o", "%i|%Y"]).stdout
        totals = {a: int(b) for a, b in (line.split("|") for line in sprio.split())}
        assert totals[high] > totals[low]  # PriorityJobFactor 10 against 1
        slurm.run(["scancel", holder])
        states = _until(slurm, lambda s: "RUNNING" in (s.get(high), s.get(low)))
        slurm_started = {
            name for name, job_id in (("high", high), ("low", low)) if states.get(job_id) == "RUNNING"
        }
    finally:
        slurm.run(["scontrol", "update", "partitionname=debug", "prioritytier=1"], check=False)
    assert slurm_started == {"low"}

    # the core on the same case: after the holder ends, ``low`` starts, ``high`` keeps the
    # higher priority and waits
    scenario = parse_scenario(_SCENARIO, name="tiers")
    session = Session(SimulatedCluster(scenario, seed=1), scenario.policy, "scenario:tiers.toml")
    session.advance_to_elapsed(61)
    jobs = {j.name: j for j in session.snapshot.jobs.values()}
    assert jobs["low"].state == JobState.RUNNING and jobs["high"].state == JobState.PENDING
    core_started = {name for name in ("high", "low") if jobs[name].state == JobState.RUNNING}
    assert core_started == slurm_started
    result = schedule(session.snapshot, scenario.policy, session.now)
    assert result.plans[jobs["high"].key].priority.factors["partition"] == 1.0
    assert result.plans[jobs["low"].key].priority.factors["partition"] == 0.1
