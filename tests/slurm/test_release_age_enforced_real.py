"""With ``AccountingStorageEnforce=limits`` the real Slurm restarts a released job's age at the release.

The other half of test_release_age_real.py, on the accounting harness (slurmdbd, enforce
``associations,limits,qos``): ``acct_policy_remove_accrue_time`` (acct_policy.c, slurm-22-05-8-1)
now runs at the hold and sets ``accrue_time = 0``; once the job is eligible again
``acct_policy_handle_accrue_time`` gives it ``now``. So the age counts from the release here.
hpctop's core does not model this setting (its snapshot carries no release time): it ages a
released job from its submission, Slurm's behaviour without enforced limits (docs/scheduler.md).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from tests.slurm.realslurm import NODES, RealSlurm


@pytest.fixture
def acct(accounting_slurm: RealSlurm) -> Iterator[RealSlurm]:
    yield accounting_slurm
    accounting_slurm.reset()


def _times(cluster: RealSlurm, job_id: str) -> dict[str, str]:
    fields = ("SubmitTime", "AccrueTime", "State", "Reason")
    argv = ["squeue", "-h", "-j", job_id, "-O", ",".join(f"{f}:30" for f in fields)]
    out = subprocess.run(
        argv, env={**cluster.env, "TZ": "UTC"}, capture_output=True, text=True, check=True, timeout=30
    ).stdout
    return dict(zip(fields, out.split(), strict=False))


def _epoch(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp()


def test_a_held_job_accrues_nothing_and_ages_from_its_release(acct: RealSlurm) -> None:
    size = ("-A", "physics", "-N", str(len(NODES)), "--gres=gpu:2", "-t", "10")
    acct.sbatch(*size)
    waiting = acct.sbatch(*size)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and _times(acct, waiting).get("AccrueTime", "N/A") in (
        "N/A",
        "Unknown",
    ):
        time.sleep(0.3)
    before = _times(acct, waiting)
    assert before["AccrueTime"] == before["SubmitTime"]  # accruing from the start while eligible
    acct.run(["scontrol", "hold", waiting])
    time.sleep(1)
    assert _times(acct, waiting)["AccrueTime"] in ("N/A", "Unknown")  # reset at the hold
    time.sleep(2)
    released_at = time.time()
    acct.run(["scontrol", "release", waiting])
    after = _times(acct, waiting)
    while time.monotonic() < deadline + 20 and after.get("AccrueTime", "N/A") in ("N/A", "Unknown"):
        time.sleep(0.3)
        after = _times(acct, waiting)
    assert _epoch(after["AccrueTime"]) >= int(released_at)  # the age counts from the release
    assert _epoch(after["AccrueTime"]) >= _epoch(after["SubmitTime"]) + 3
