"""Requeue through the local ``scontrol``, against the real Slurm (22.05: its slurmrestd serves none).

Slurm decides here, not hpctop. What a requeue leaves, checked on this harness and in Slurm's
scontrol(1): "requeue: Requeue a running, suspended or finished Slurm batch job into pending
state"; the job's ``Restarts`` goes up by one and it waits as ``PENDING`` with reason
``BeginTime``: slurmctld sets a begin time past the launch credential's lifetime (job_mgr.c
``batch_requeue_fini``, slurm-22-05-8-1: ``begin_time = now + cred_lifetime + 1``).
``requeuehold`` leaves it held: ``_job_requeue_op`` sets ``priority = 0``, reason
``WAIT_HELD_USER`` and the description "job requeued in held state", which squeue and scontrol
print as ``job_requeued_in_held_state``. A job without a batch script (``salloc
--no-shell``) is refused with Slurm's words, "Only batch jobs are accepted or processed"
(slurm_errno.c ESLURM_BATCH_ONLY).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hpctop.actions.audit import AuditLog
from hpctop.actions.requests import ActionKind
from hpctop.backends.slurm.act import SlurmActionFailed, SlurmActions, slurm_job_request
from hpctop.errors import ActionRefused
from hpctop.sources.slurm.command import SlurmCommand
from hpctop.sources.slurm.rest import SlurmRest
from tests.slurm.proxy import RecordingProxy
from tests.slurm.realslurm import RealSlurm, make_jwt, which
from tests.slurm.recorded import TOKEN, RecordedSlurm
from tests.slurm.scontrol_shim import ScontrolShim, scontrol_shim


def _job(cluster: RealSlurm, job_id: str) -> dict[str, str]:
    """``scontrol show job``'s Key=Value pairs (JobState, Reason, Restarts, ...)."""
    out = cluster.run(["scontrol", "show", "job", job_id], check=False).stdout
    return dict(re.findall(r"(\w+)=(\S*)", out))


def _until(cluster: RealSlurm, job_id: str, ok: Callable[[dict[str, str]], bool]) -> dict[str, str]:
    deadline = time.monotonic() + 20
    seen = _job(cluster, job_id)
    while time.monotonic() < deadline and not ok(seen):
        time.sleep(0.3)
        seen = _job(cluster, job_id)
    return seen


def _running(cluster: RealSlurm) -> str:
    job_id = cluster.sbatch("-N", "1", "--gres=gpu:1", "-t", "10")
    assert _until(cluster, job_id, lambda j: j.get("JobState") == "RUNNING")["JobState"] == "RUNNING"
    return job_id


def _actions(
    cluster: RealSlurm,
    shim: ScontrolShim,
    audit: AuditLog,
    *,
    url: str | None = None,
    read_only: bool = False,
) -> SlurmActions:
    client = SlurmRest(
        url or cluster.url, user="root", token=make_jwt(cluster.jwt_key, "root"), read_only=read_only
    )
    return SlurmActions(client, audit=audit, command=SlurmCommand(client, env=shim.env(cluster.env)))


def _shim(tmp_path: Path) -> ScontrolShim:
    real = which("scontrol")
    assert real is not None
    return scontrol_shim(tmp_path / "bin", real)


def test_requeue_a_running_job_shows_in_squeue_as_pending_again(slurm: RealSlurm, tmp_path: Path) -> None:
    shim = _shim(tmp_path)
    audit = AuditLog(tmp_path / "audit.jsonl")
    actions = _actions(slurm, shim, audit)
    job_id = _running(slurm)
    assert _job(slurm, job_id)["Restarts"] == "0"

    request = slurm_job_request(ActionKind.REQUEUE, job_id)
    preview = actions.preview(request)
    assert preview.allowed, preview.refusal
    assert preview.requests == (
        f"scontrol requeue {job_id} (the local Slurm client, as root, cluster checked)",
    )
    assert preview.changes[0] == "state: RUNNING -> PENDING"
    result = actions.execute(request)
    assert result.ok, result.message

    after = _until(slurm, job_id, lambda j: j.get("JobState") == "PENDING")
    assert (after["JobState"], after["Reason"], after["Restarts"]) == ("PENDING", "BeginTime", "1")
    squeue = slurm.run(["squeue", "-h", "-j", job_id, "-o", "%i|%T|%r"]).stdout.strip()
    assert squeue == f"{job_id}|PENDING|BeginTime"
    assert f"requeue {job_id}" in shim.seen()

    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [(r["phase"], r["action"], r["method"], r["path"]) for r in records] == [
        ("intent", "requeue", "RUN", f"scontrol requeue {job_id}"),
        ("outcome", "requeue", "RUN", f"scontrol requeue {job_id}"),
    ]
    assert records[1]["ok"] is True and records[1]["status"] is None


def test_requeuehold_leaves_it_held_and_release_lets_it_run(slurm: RealSlurm, tmp_path: Path) -> None:
    actions = _actions(slurm, _shim(tmp_path), AuditLog(tmp_path / "audit.jsonl"))
    job_id = _running(slurm)
    request = slurm_job_request(ActionKind.REQUEUE, job_id, "hold")
    preview = actions.preview(request)
    assert preview.allowed and preview.requests[0].startswith(f"scontrol requeuehold {job_id} ")
    assert actions.execute(request).ok
    held = _until(slurm, job_id, lambda j: j.get("JobState") == "PENDING" and j.get("Priority") == "0")
    assert (held["JobState"], held["Reason"], held["Restarts"], held["Priority"]) == (
        "PENDING",
        "job_requeued_in_held_state",
        "1",
        "0",
    )
    assert actions.execute(slurm_job_request(ActionKind.RELEASE, job_id)).ok
    released = _until(slurm, job_id, lambda j: j.get("Priority") != "0")
    assert int(released["Priority"]) > 0


def test_read_only_runs_no_requeue(slurm: RealSlurm, tmp_path: Path) -> None:
    shim = _shim(tmp_path)
    job_id = _running(slurm)
    with RecordingProxy(slurm.url) as proxy:
        actions = _actions(slurm, shim, AuditLog(tmp_path / "audit.jsonl"), url=proxy.url, read_only=True)
        for value in (None, "hold"):
            request = slurm_job_request(ActionKind.REQUEUE, job_id, value)
            preview = actions.preview(request)
            assert not preview.allowed and "read-only" in preview.refusal
            assert preview.requests[0].startswith("scontrol requeue")  # it still says what would run
            with pytest.raises(ActionRefused, match="read-only"):
                actions.execute(request)
        # a caller that skips the actions layer cannot run it either: the gate is where it starts
        with pytest.raises(ActionRefused, match="read-only"):
            actions.command.requeue(job_id)
    assert shim.seen() and all(line == "show config" for line in shim.seen())
    assert proxy.mutating() == []
    job = _job(slurm, job_id)
    assert (job["JobState"], job["Restarts"]) == ("RUNNING", "0")
    phases = [json.loads(line)["phase"] for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert phases == ["intent", "refused", "intent", "refused"]


def test_slurms_own_refusal_is_shown_as_slurms(slurm: RealSlurm, tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit.jsonl")
    actions = _actions(slurm, _shim(tmp_path), audit)
    slurm.run(["salloc", "-N", "1", "--no-shell", "-t", "10"])
    job_id = slurm.run(["squeue", "-h", "-o", "%i"]).stdout.split()[0]
    assert _until(slurm, job_id, lambda j: j.get("JobState") == "RUNNING")["JobState"] == "RUNNING"
    with pytest.raises(SlurmActionFailed, match="scontrol: Only batch jobs are accepted or processed"):
        actions.execute(slurm_job_request(ActionKind.REQUEUE, job_id))
    outcome = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()][-1]
    assert (outcome["phase"], outcome["ok"]) == ("outcome", False)
    assert "Only batch jobs" in outcome["message"]


def test_a_scontrol_of_another_cluster_is_not_run(slurm: RealSlurm, tmp_path: Path) -> None:
    # the recorded slurmrestd serves cluster "slurm" (meta.slurm.cluster); this machine's scontrol
    # reaches the real slurmctld, cluster "hpctop": the requeue must not run against the wrong one
    shim = _shim(tmp_path)
    with RecordedSlurm("v0.0.44") as server:
        client = SlurmRest(server.url, user="root", token=TOKEN, read_only=False)
        actions = SlurmActions(client, command=SlurmCommand(client, env=shim.env(slurm.env)))
        preview = actions.preview(slurm_job_request(ActionKind.REQUEUE, "101"))
    assert not preview.allowed
    assert preview.refusal == (
        "scontrol here reaches cluster 'hpctop', slurmrestd serves cluster 'slurm': not run "
        "(point SLURM_CONF at the slurmrestd's cluster)"
    )
    assert shim.seen() == ["show config"]
