"""``hpctop jobs --slurm-url`` (the real command line) against the real Slurm's own ``squeue``.

The jobs are arranged so that each reason squeue can show here appears: one running 2-node job,
one waiting on ``Resources``, one queued behind it reading ``Priority`` and one held
(``JobHeldUser``), in two partitions. The expected values are squeue's own output, read at the
same moment; nothing is hard-coded but the job shapes.
"""

from __future__ import annotations

import json
import subprocess
import time

from tests.slurm.realslurm import RealSlurm, hpctop_cli

SQUEUE_FORMAT = "%i|%T|%t|%r|%N|%P|%Q"


def _squeue(cluster: RealSlurm) -> dict[str, tuple[str, ...]]:
    # %i id, %T state, %t code, %r reason, %N nodes, %P partition, %Q priority
    out = cluster.run(["squeue", "-h", "-o", SQUEUE_FORMAT]).stdout
    return {line.split("|")[0]: tuple(line.split("|")[1:]) for line in out.splitlines()}


def _hpctop(cluster: RealSlurm, *args: str, token: str) -> subprocess.CompletedProcess[str]:
    return hpctop_cli(cluster, "jobs", *args, token=token)


def _settled(cluster: RealSlurm, waiting: str, behind: str) -> dict[str, tuple[str, ...]]:
    deadline = time.monotonic() + 20
    rows = _squeue(cluster)
    while time.monotonic() < deadline:
        if rows.get(waiting, ("",) * 6)[3] == "Resources" and rows.get(behind, ("",) * 6)[3] == "Priority":
            break
        time.sleep(0.5)
        rows = _squeue(cluster)
    return rows


def test_jobs_json_lists_what_squeue_lists(slurm: RealSlurm) -> None:
    real_slurm = slurm
    real_slurm.sbatch("-N", "2", "--gres=gpu:2", "-t", "10")
    waiting = real_slurm.sbatch("-N", "2", "--gres=gpu:2", "-t", "10")
    behind = real_slurm.sbatch("-N", "2", "--gres=gpu:2", "-t", "10")
    held = real_slurm.sbatch("-H", "-p", "debug", "-N", "1", "-t", "5")
    before = _settled(real_slurm, waiting, behind)
    done = _hpctop(real_slurm, "-o", "json", token=real_slurm.token())
    after = _squeue(real_slurm)
    assert done.returncode == 0, done.stderr
    assert before == after, "squeue changed while hpctop read; the comparison would be unfair"
    rows = {row["id"]: row for row in json.loads(done.stdout)}
    assert set(rows) == set(after)
    for job_id, (state, code, reason, nodes, partition, priority) in after.items():
        row = rows[job_id]
        assert row["backend"] == "slurm"
        assert (row["state"], row["code"], row["partition"], row["priority"]) == (
            state,
            code,
            partition,
            int(priority),
        )
        assert (row["reason"] or "None") == reason
        assert real_slurm.run(["scontrol", "show", "hostnames", nodes]).stdout.split() == row["nodes"]
    assert rows[waiting]["reason"] == "Resources"
    assert rows[behind]["reason"] == "Priority"
    assert rows[held]["reason"] == "JobHeldUser"
    # the text table and CSV carry the same rows (squeue's codes, the reason in NODELIST(REASON))
    table = _hpctop(real_slurm, token=real_slurm.token()).stdout
    assert f"{behind}" in table and "(Priority)" in table and "(Resources)" in table
    csv = _hpctop(real_slurm, "-o", "csv", token=real_slurm.token()).stdout.splitlines()
    assert len(csv) == 1 + len(after)


def _squeue_start(cluster: RealSlurm) -> dict[str, str]:
    # squeue --start: pending jobs and Slurm's expected start (%S, local time; TZ=UTC here)
    out = cluster.run(["env", "TZ=UTC", "squeue", "--start", "-h", "-o", "%i|%S"]).stdout
    return dict(line.split("|") for line in out.splitlines())


def test_start_lists_pending_jobs_with_slurms_estimate(slurm: RealSlurm) -> None:
    slurm.sbatch("-N", "2", "--gres=gpu:2", "-t", "10")
    slurm.sbatch("-N", "2", "--gres=gpu:2", "-t", "10")
    slurm.sbatch("-N", "2", "--gres=gpu:2", "-t", "10")
    deadline = time.monotonic() + 20
    expected = _squeue_start(slurm)
    while time.monotonic() < deadline and not any(v not in ("N/A", "") for v in expected.values()):
        time.sleep(0.5)  # the backfill pass sets the estimate (bf_interval=1)
        expected = _squeue_start(slurm)
    done = _hpctop(slurm, "--start", "-o", "json", token=slurm.token())
    assert done.returncode == 0, done.stderr
    assert _squeue_start(slurm) == expected, "Slurm re-planned while hpctop read"
    rows = json.loads(done.stdout)
    assert {r["id"] for r in rows} == set(expected)
    for row in rows:
        want = expected[row["id"]]
        assert (row["eta"] or "N/A").removesuffix("Z") == want
        assert row["eta_source"] == ("scheduler" if row["eta"] else None)
    estimated = [r["eta"] for r in rows if r["eta"] is not None]
    assert estimated, "Slurm's backfill gives the blocked jobs an expected start"
    assert [r["eta"] for r in rows][: len(estimated)] == sorted(estimated)


def test_refused_token_is_one_line_and_a_failure(slurm: RealSlurm) -> None:
    real_slurm = slurm
    done = _hpctop(real_slurm, "-o", "json", token="not-a-jwt")
    assert done.returncode != 0
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "slurmrestd" in lines[0], done.stderr
