"""hpctop's slurmrestd reader against the real Slurm's own ``squeue``/``sprio`` (Debian 22.05, v0.0.38)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from hpctop.sources.slurm.rest import SlurmError, SlurmRest
from tests.slurm.realslurm import RealSlurm


def _squeue(cluster: RealSlurm) -> dict[int, tuple[str, str, str, str]]:
    # %i job id, %T full state, %r reason, %N nodes, %P partition
    out = cluster.run(["squeue", "-h", "-o", "%i|%T|%r|%N|%P"]).stdout
    rows = {}
    for line in out.splitlines():
        job_id, state, reason, nodes, partition = line.split("|")
        rows[int(job_id)] = (state, reason, nodes, partition)
    return rows


def _until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Wait for slurmctld to reach ``condition`` (it schedules on its own timers, slower under
    load), failing with ``what`` it did not reach rather than reading a state once too early."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"Slurm did not reach this within {timeout:.0f} s: {what}")
        time.sleep(0.25)


def test_jobs_match_squeue_and_sprio(slurm: RealSlurm) -> None:
    real_slurm = slurm
    # 3 nodes x 2 GPUs: two 2-node jobs cannot both run; the second waits (Resources), the
    # third, queued behind it in the same partition, reads Priority (job_reason_codes.shtml:
    # "Priority: One or more higher priority jobs exist for this partition or advanced reservation")
    first = real_slurm.sbatch("-N", "2", "--gres=gpu:2", "-t", "10")
    second = real_slurm.sbatch("-N", "2", "--gres=gpu:2", "-t", "10")
    third = real_slurm.sbatch("-N", "2", "--gres=gpu:2", "-t", "10")
    held = real_slurm.sbatch("-H", "-N", "1", "-t", "5")
    client = SlurmRest(real_slurm.url, user="root", token=real_slurm.token())
    assert client.negotiate() == "v0.0.38"

    def settled() -> bool:
        # slurmctld's main scheduler starts the first job and gives the reasons; its backfill pass
        # (bf_interval=1, later under load) then gives the waiting job its expected start
        rows = _squeue(real_slurm)
        if rows.get(int(first), ("",))[0] != "RUNNING":
            return False
        if (
            rows.get(int(second), ("", ""))[1] != "Resources"
            or rows.get(int(third), ("", ""))[1] != "Priority"
        ):
            return False
        waiting = next((j for j in client.jobs() if j.job_id == int(second)), None)
        return waiting is not None and waiting.start_time > 0

    _until(settled, "the first job running, the others Resources/Priority, the second's expected start")
    # squeue, by default, leaves out finished jobs that slurmctld still holds (until MinJobAge)
    shown = {"PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING"}
    jobs = {j.job_id: j for j in client.jobs() if j.state in shown}
    rows = _squeue(real_slurm)
    assert set(jobs) == set(rows)
    for job_id, (state, reason, nodes, partition) in rows.items():
        job = jobs[job_id]
        assert (job.state, job.reason, job.nodes, job.partition) == (state, reason, nodes, partition)
    assert jobs[int(first)].state == "RUNNING"
    assert jobs[int(second)].reason == "Resources"
    assert jobs[int(third)].reason == "Priority"
    assert jobs[int(held)].reason == "JobHeldUser"
    # sprio lists the pending, not held, jobs with Slurm's total
    sprio = real_slurm.run(["sprio", "-h", "-o", "%i|%Y"]).stdout
    totals = {int(a): int(b) for a, b in (line.split("|") for line in sprio.split())}
    assert int(held) not in totals
    assert {k: jobs[k].priority for k in totals} == totals
    # Slurm's own expected start for the waiting job (squeue --start)
    assert jobs[int(second)].start_time > 0
    assert jobs[int(second)].start_time >= jobs[int(first)].start_time


def test_refused_token_is_an_error_not_rows(slurm: RealSlurm) -> None:
    real_slurm = slurm
    client = SlurmRest(real_slurm.url, user="root", token="not-a-jwt")
    with pytest.raises(SlurmError, match="slurmrestd"):
        client.jobs()


def test_reservations_match_scontrol(slurm: RealSlurm) -> None:
    created = slurm.run(
        [
            "scontrol",
            "create",
            "reservation",
            "reservationname=hpctop-maint",
            "starttime=now+1hour",
            "duration=60",
            "nodes=sn3",
            "users=root",
            "flags=maint",
        ]
    )
    assert created.returncode == 0, created.stderr
    try:
        shown = slurm.run(["scontrol", "-o", "show", "reservation", "hpctop-maint"]).stdout.split()
        fields = dict(item.split("=", 1) for item in shown if "=" in item)
        client = SlurmRest(slurm.url, user="root", token=slurm.token())
        (reservation,) = [r for r in client.reservations() if r.name == "hpctop-maint"]
        assert reservation.nodes == fields["Nodes"] == "sn3"
        assert reservation.node_count == int(fields["NodeCnt"])
        assert reservation.users == tuple(fields["Users"].split(","))
        assert "MAINT" in reservation.flags and "MAINT" in fields["Flags"].split(",")
        assert reservation.start_time is not None and reservation.end_time is not None
        assert reservation.end_time - reservation.start_time == 3600  # duration=60 minutes
    finally:
        slurm.run(["scontrol", "delete", "reservationname=hpctop-maint"], check=False)
