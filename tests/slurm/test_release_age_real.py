"""A released job's age on the real Slurm (22.05) and in hpctop's core: both count from submission.

What Slurm does, read in SchedMD/slurm slurm-22-05-8-1 and seen here: holding a job calls
``acct_policy_remove_accrue_time`` (job_mgr.c), which returns at once unless
``AccountingStorageEnforce=limits`` (acct_policy.c: "check to see if we are enforcing limits");
``acct_policy_handle_accrue_time`` "Always set[s] accrue_time to begin time when not enforcing
limits". The age factor is ``(now - accrue_time) / PriorityMaxAge`` (priority_multifactor.c
``_get_priority_internal``). So on this harness (no accounting) a hold and a release leave
``AccrueTime`` at the submit time (``EligibleTime`` moves to the release), and the released job
is again first in line: ``Resources`` for it, ``Priority`` for the job submitted after it.

Why not sprio's age: slurmctld recomputes the factors sprio prints every ``PriorityCalcPeriod``
(5 minutes by default), so within a test sprio still shows the age at submission (0).
"""

from __future__ import annotations

import subprocess
import time
from datetime import UTC, datetime

import pytest

from hpctop.model.policy import Policy, PriorityWeights
from hpctop.scheduling.core import schedule
from hpctop.scheduling.priority import age_factor
from tests.scheduling_helpers import job, node, running, snapshot
from tests.slurm.realslurm import NODES, RealSlurm

FIELDS = ("JobID", "SubmitTime", "AccrueTime", "EligibleTime", "State", "Reason")


def _squeue(cluster: RealSlurm) -> dict[str, dict[str, str]]:
    """squeue's times in UTC (``TZ``), one dict per job."""
    fmt = ",".join(f"{name}:30" for name in FIELDS)
    argv = ["squeue", "-h", "-O", fmt]
    env = {**cluster.env, "TZ": "UTC"}
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True, timeout=30).stdout
    rows = [line.split() for line in out.splitlines() if line.strip()]
    return {row[0]: dict(zip(FIELDS, row, strict=False)) for row in rows}


def _epoch(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp()


def test_a_released_job_ages_from_submission_and_is_first_in_line_again(slurm: RealSlurm) -> None:
    holder = slurm.sbatch("-N", str(len(NODES)), "--gres=gpu:2", "-t", "10")
    first = slurm.sbatch("-N", str(len(NODES)), "--gres=gpu:2", "-t", "10")
    behind = slurm.sbatch("-N", str(len(NODES)), "--gres=gpu:2", "-t", "10")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and _squeue(slurm).get(holder, {}).get("State") != "RUNNING":
        time.sleep(0.3)
    slurm.run(["scontrol", "hold", first])
    time.sleep(2.5)
    slurm.run(["scontrol", "release", first])
    rows: dict[str, dict[str, str]] = {}
    while time.monotonic() < deadline + 15:
        rows = _squeue(slurm)
        if rows[first]["Reason"] == "Resources" and rows[behind]["Reason"] == "Priority":
            break
        time.sleep(0.3)
    released = rows[first]
    assert released["AccrueTime"] == released["SubmitTime"]  # the hold did not reset it
    assert _epoch(released["EligibleTime"]) >= _epoch(released["SubmitTime"]) + 2  # the release
    assert (rows[first]["Reason"], rows[behind]["Reason"]) == ("Resources", "Priority")

    # the core on the same facts: the age from the submission, the released job first in line
    weights = PriorityWeights(max_age=86_400)  # PriorityMaxAge=1-0 in the harness
    now = time.time()
    again = job("first", gpu=2000, submit=_epoch(released["SubmitTime"]))
    assert age_factor(again, now, weights) == pytest.approx(
        (now - _epoch(released["AccrueTime"])) / 86_400, abs=1e-9
    )
    later = job("behind", gpu=2000, submit=_epoch(rows[behind]["SubmitTime"]) + 0.5)
    busy = running("holder", [("n1", (0, 1))], gpu=2000, start=_epoch(rows[holder]["SubmitTime"]))
    result = schedule(snapshot([node("n1", gpus=2)], [again, later], [busy]), Policy(weights=weights), now)
    assert result.pending_order == (again.key, later.key)
