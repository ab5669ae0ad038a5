"""Slurm actions against the recorded v0.0.44 slurmrestd (these run where no Slurm is installed).

The request bodies follow v0.0.44's ``job_desc_msg`` (the recorded OpenAPI schema): ``hold`` a
boolean, ``priority`` a ``uint32_no_val_struct``. Read-only mode must leave the server with reads only.
"""

from __future__ import annotations

import json

import pytest

from hpctop.actions.requests import ActionKind
from hpctop.backends.slurm.act import SlurmActions, slurm_job_request
from hpctop.errors import ActionRefused
from hpctop.sources.slurm.rest import SlurmRest
from tests.slurm.recorded import TOKEN, RecordedSlurm, load, validate


def test_previews_send_v0044_bodies_that_the_schema_accepts() -> None:
    openapi, _ = load("v0.0.44")
    schemas = openapi["schemas"]
    with RecordedSlurm("v0.0.44") as server:
        actions = SlurmActions(SlurmRest(server.url, user="alice", token=TOKEN, read_only=False))
        priority = actions.preview(slurm_job_request(ActionKind.PRIORITY, "102", 5000))
        hold = actions.preview(slurm_job_request(ActionKind.HOLD, "103"))
        release = actions.preview(slurm_job_request(ActionKind.RELEASE, "104"))
        move = actions.preview(slurm_job_request(ActionKind.MOVE, "103", "gpu"))
        cancel = actions.preview(slurm_job_request(ActionKind.CANCEL, "101"))
        hold_running = actions.preview(slurm_job_request(ActionKind.HOLD, "101"))
        release_free = actions.preview(slurm_job_request(ActionKind.RELEASE, "102"))
    assert priority.requests == ('POST /slurm/v0.0.44/job/102 {"priority": {"number": 5000, "set": true}}',)
    assert priority.changes == ("priority: 4100 -> 5000",)
    assert hold.allowed and release.allowed and move.allowed and cancel.allowed
    assert cancel.requests == ("DELETE /slurm/v0.0.44/job/101",)
    for preview in (priority, hold, release, move):
        body = json.loads(preview.requests[0].split(" ", 2)[2])
        assert validate(body, {"$ref": "#/components/schemas/v0.0.44_job_desc_msg"}, schemas) == []
    assert not hold_running.allowed and "pending" in hold_running.refusal
    assert not release_free.allowed and "not held" in release_free.refusal
    assert all(method == "GET" for method, _ in server.seen)  # previews only read


def test_read_only_sends_only_reads(tmp_path: object) -> None:
    with RecordedSlurm("v0.0.44") as server:
        actions = SlurmActions(SlurmRest(server.url, user="alice", token=TOKEN))  # read-only by default
        for kind, job, value in (
            (ActionKind.CANCEL, "101", None),
            (ActionKind.HOLD, "103", None),
            (ActionKind.RELEASE, "104", None),
            (ActionKind.PRIORITY, "102", 1),
            (ActionKind.MOVE, "103", "gpu"),
            (ActionKind.REQUEUE, "101", None),
        ):
            request = slurm_job_request(kind, job, value)
            preview = actions.preview(request)
            assert not preview.allowed
            with pytest.raises(ActionRefused):
                actions.execute(request)
    assert server.seen and all(method == "GET" for method, _ in server.seen)


def test_not_a_slurm_job_is_refused_before_any_request() -> None:
    with RecordedSlurm("v0.0.44") as server:
        actions = SlurmActions(SlurmRest(server.url, user="alice", token=TOKEN, read_only=False))
        preview = actions.preview(slurm_job_request(ActionKind.CANCEL, "101; rm -rf /"))
    assert not preview.allowed and "not a Slurm job id" in preview.refusal
    assert server.seen == []
