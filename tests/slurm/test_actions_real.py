"""Slurm job actions through the real slurmrestd: each one shows in ``squeue``; read-only sends nothing.

Slurm decides here, not hpctop: the expected states are what ``squeue`` prints after each action
(``scontrol hold`` by root reads ``JobHeldAdmin``, slurm job_reason_codes; a cancelled job reads
``CANCELLED`` or is gone once ``MinJobAge`` passed), and a denied action must carry Slurm's own
words (``Access/permission denied``, slurm_errno.c ESLURM_ACCESS_DENIED).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hpctop.actions.audit import AuditLog
from hpctop.actions.requests import ActionKind
from hpctop.backends.slurm.act import SlurmActionFailed, SlurmActionForbidden, SlurmActions, slurm_job_request
from hpctop.errors import ActionRefused
from hpctop.sources.slurm.rest import SlurmRest
from tests.slurm.proxy import RecordingProxy
from tests.slurm.realslurm import RealSlurm, make_jwt

SQUEUE = "%i|%T|%r|%Q|%P"


def _squeue(cluster: RealSlurm) -> dict[str, tuple[str, ...]]:
    # %i id, %T state, %r reason, %Q priority, %P partition
    out = cluster.run(["squeue", "-h", "-o", SQUEUE]).stdout
    return {line.split("|")[0]: tuple(line.split("|")[1:]) for line in out.splitlines()}


def _until(
    cluster: RealSlurm, ok: Callable[[dict[str, tuple[str, ...]]], bool]
) -> dict[str, tuple[str, ...]]:
    deadline = time.monotonic() + 15
    rows = _squeue(cluster)
    while time.monotonic() < deadline and not ok(rows):
        time.sleep(0.3)
        rows = _squeue(cluster)
    return rows


def _queue(cluster: RealSlurm) -> tuple[str, str, str]:
    """One running 2-node job and two pending behind it (3 nodes x 2 GPUs)."""
    running = cluster.sbatch("-N", "2", "--gres=gpu:2", "-t", "10")
    waiting = cluster.sbatch("-N", "2", "--gres=gpu:2", "-t", "10")
    behind = cluster.sbatch("-N", "2", "--gres=gpu:2", "-t", "10")
    _until(cluster, lambda r: r.get(running, ("",))[0] == "RUNNING" and behind in r)
    return running, waiting, behind


def _actions(
    cluster: RealSlurm,
    audit: AuditLog,
    *,
    url: str | None = None,
    read_only: bool = False,
    user: str = "root",
) -> SlurmActions:
    token = make_jwt(cluster.jwt_key, user)
    client = SlurmRest(url or cluster.url, user=user, token=token, read_only=read_only)
    return SlurmActions(client, audit=audit)


def test_each_action_shows_in_squeue(slurm: RealSlurm, tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit.jsonl")
    actions = _actions(slurm, audit)
    running, waiting, behind = _queue(slurm)

    hold = slurm_job_request(ActionKind.HOLD, behind)
    preview = actions.preview(hold)
    assert preview.allowed, preview.refusal
    assert preview.requests == (f'POST /slurm/v0.0.38/job/{behind} {{"hold": true}}',)
    assert actions.execute(hold).ok
    rows = _until(slurm, lambda r: r[behind][1] == "JobHeldAdmin")
    assert rows[behind][1:3] == ("JobHeldAdmin", "0")
    assert not actions.preview(hold).allowed  # held already: refused before anything is sent

    assert actions.execute(slurm_job_request(ActionKind.RELEASE, behind)).ok
    rows = _until(slurm, lambda r: r[behind][1] != "JobHeldAdmin")
    assert rows[behind][0] == "PENDING" and int(rows[behind][2]) > 0

    assert actions.execute(slurm_job_request(ActionKind.PRIORITY, waiting, 5000)).ok
    assert _until(slurm, lambda r: r[waiting][2] == "5000")[waiting][2] == "5000"

    assert actions.execute(slurm_job_request(ActionKind.MOVE, behind, "debug")).ok
    assert _until(slurm, lambda r: r[behind][3] == "debug")[behind][3] == "debug"

    # requeue: slurmrestd 22.05 serves none; scontrol's requeue is tested in test_requeue_real.py

    done = actions.execute(slurm_job_request(ActionKind.CANCEL, running))
    assert done.ok
    rows = _until(slurm, lambda r: running not in r or r[running][0] != "RUNNING")
    assert running not in rows or rows[running][0] in ("CANCELLED", "COMPLETING")

    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    sent = [(r["phase"], r["action"], r.get("method")) for r in records if r["phase"] != "refused"]
    assert sent == [
        ("intent", "hold", "POST"),
        ("outcome", "hold", "POST"),
        ("intent", "release", "POST"),
        ("outcome", "release", "POST"),
        ("intent", "priority", "POST"),
        ("outcome", "priority", "POST"),
        ("intent", "move", "POST"),
        ("outcome", "move", "POST"),
        ("intent", "cancel", "DELETE"),
        ("outcome", "cancel", "DELETE"),
    ]
    assert all(r["ok"] for r in records if r["phase"] == "outcome")
    assert all(slurm.token() not in line for line in (tmp_path / "audit.jsonl").read_text().splitlines())


def test_read_only_sends_no_mutating_request(slurm: RealSlurm, tmp_path: Path) -> None:
    running, waiting, behind = _queue(slurm)
    # the state to compare with once slurmctld has given the waiting jobs their reasons (a pending
    # job reads "None" until the scheduler's first pass over it)
    before = _until(slurm, lambda r: all(r[j][1] != "None" for j in (waiting, behind)))
    with RecordingProxy(slurm.url) as proxy:
        actions = _actions(slurm, AuditLog(tmp_path / "audit.jsonl"), url=proxy.url, read_only=True)
        tries = [
            slurm_job_request(ActionKind.CANCEL, running),
            slurm_job_request(ActionKind.HOLD, behind),
            slurm_job_request(ActionKind.PRIORITY, waiting, 9),
            slurm_job_request(ActionKind.MOVE, behind, "debug"),
            slurm_job_request(ActionKind.REQUEUE, running),
        ]
        for request in tries:
            preview = actions.preview(request)
            assert not preview.allowed
            with pytest.raises(ActionRefused):
                actions.execute(request)
        # even a caller that skips the actions layer cannot write through a read-only client
        with pytest.raises(ActionRefused):
            actions.client.cancel(running)
        with pytest.raises(ActionRefused):
            actions.client.update(behind, {"hold": True})
    assert proxy.seen, "the reads went through the proxy"
    assert proxy.mutating() == []
    assert _squeue(slurm) == before
    phases = {json.loads(line)["phase"] for line in (tmp_path / "audit.jsonl").read_text().splitlines()}
    assert phases == {"intent", "refused"}  # intended, refused at the send chokepoint, never an outcome


def test_slurms_own_errors_are_shown_as_slurms(slurm: RealSlurm, tmp_path: Path) -> None:
    running, _, behind = _queue(slurm)
    audit = AuditLog(tmp_path / "audit.jsonl")
    stranger = _actions(slurm, audit, user="nobody")
    with pytest.raises(SlurmActionForbidden, match="Access/permission denied"):
        stranger.execute(slurm_job_request(ActionKind.CANCEL, running))
    assert _squeue(slurm)[running][0] == "RUNNING"
    with pytest.raises(SlurmActionFailed, match="Invalid partition name specified"):
        _actions(slurm, audit).execute(slurm_job_request(ActionKind.MOVE, behind, "no-such-partition"))
    outcomes = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    failed = [r for r in outcomes if r["phase"] == "outcome"]
    assert [(r["action"], r["ok"], r["status"]) for r in failed] == [
        ("cancel", False, 500),
        ("move", False, 500),
    ]
