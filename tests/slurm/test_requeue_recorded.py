"""Requeue where slurmrestd serves one (v0.0.45, Slurm 26.05) and where nothing can (no Slurm needed).

Slurm 26.05 added ``GET /slurm/v0.0.45/job/{job_id}/requeue`` with the flags ``Hold``,
``Incomplete`` and ``SpecialExit`` as query parameters (SchedMD/slurm 0f73a8143e "slurmrestd - Add
requeue endpoint", first tagged slurm-26-05-0-0rc1; CHANGELOG/slurm-26.05.md). The path and the
response's schema are recorded from Slinky's vendored copy of 26.05.2's OpenAPI document
(``fixtures/openapi-v0.0.45-requeue.json``, source and commit inside). A flag is parsed as a
boolean (data_parser v0.0.45 ``_parser_linked_flag``: ``data_convert_type(src, DATA_TYPE_BOOL)``),
hence ``?Hold=true``. Because that requeue is a GET, a read-only client must refuse a GET of it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from hpctop.actions.requests import ActionKind
from hpctop.backends.slurm.act import SlurmActions, slurm_job_request
from hpctop.errors import ActionRefused
from hpctop.sources.slurm.command import SlurmCommand
from hpctop.sources.slurm.rest import SlurmError, SlurmRest
from tests.slurm.recorded import FIXTURES, TOKEN, RecordedSlurm, validate

RECORDED = json.loads((FIXTURES / "openapi-v0.0.45-requeue.json").read_text())
REQUEUE = "/slurm/v0.0.45/job/{job_id}/requeue"


class SlurmWithRequeue(RecordedSlurm):
    """The recorded v0.0.44 slurmrestd that also serves v0.0.45's requeue, as a 26.05 one does."""

    def __init__(self) -> None:
        super().__init__("v0.0.44")
        self.openapi["paths"].update(RECORDED["paths"])
        self.answered: list[dict[str, Any]] = []

    def route(self, method: str, path: str) -> tuple[int, dict[str, Any]]:
        found = re.fullmatch(r"/slurm/v0\.0\.45/job/(\d+)/requeue(\?Hold=true)?", path)
        if method == "GET" and found:
            answer = {
                "status": [{"job_id": int(found[1]), "step_id": "", "error": "", "error_code": 0, "why": ""}],
                "meta": {"slurm": {"cluster": "slurm", "release": "26.05.2"}},
                "errors": [],
                "warnings": [],
            }
            self.answered.append(answer)
            return 200, answer
        return super().route(method, path)


def test_a_served_requeue_is_used_as_the_get_slurm_documents() -> None:
    server = SlurmWithRequeue()
    with server:
        actions = SlurmActions(SlurmRest(server.url, user="alice", token=TOKEN, read_only=False))
        plain = slurm_job_request(ActionKind.REQUEUE, "101")
        held = slurm_job_request(ActionKind.REQUEUE, "101", "hold")
        assert actions.preview(plain).requests == ("GET /slurm/v0.0.45/job/101/requeue",)
        assert actions.preview(held).requests == ("GET /slurm/v0.0.45/job/101/requeue?Hold=true",)
        assert actions.execute(plain).ok
        assert actions.execute(held).ok
    requeues = [path for method, path in server.seen if "requeue" in path]
    assert requeues == ["/slurm/v0.0.45/job/101/requeue", "/slurm/v0.0.45/job/101/requeue?Hold=true"]
    schema = {"$ref": "#/components/schemas/v0.0.45_openapi_job_requeue_resp"}
    assert all(validate(answer, schema, RECORDED["schemas"]) == [] for answer in server.answered)
    parameters = {p["name"] for p in RECORDED["paths"][REQUEUE]["get"]["parameters"] if p["in"] == "query"}
    assert "Hold" in parameters


def test_read_only_refuses_the_requeue_get_at_the_chokepoint() -> None:
    with SlurmWithRequeue() as server:
        client = SlurmRest(server.url, user="alice", token=TOKEN)  # read-only by default
        actions = SlurmActions(client)
        request = slurm_job_request(ActionKind.REQUEUE, "101", "hold")
        preview = actions.preview(request)
        assert not preview.allowed and preview.requests == ("GET /slurm/v0.0.45/job/101/requeue?Hold=true",)
        with pytest.raises(ActionRefused, match="read-only"):
            actions.execute(request)
        with pytest.raises(ActionRefused, match="read-only"):  # the client itself, without the actions
            client.requeue("101")
        with pytest.raises(ActionRefused, match="read-only"):  # a GET by any other caller
            client._get("/slurm/v0.0.45/job/101/requeue")
    assert server.seen and not [path for _, path in server.seen if "requeue" in path]


def test_without_a_served_requeue_or_scontrol_the_refusal_says_what_to_install(tmp_path: Path) -> None:
    with RecordedSlurm("v0.0.44") as server:
        client = SlurmRest(server.url, user="alice", token=TOKEN, read_only=False)
        nothing = SlurmCommand(client, env={"PATH": str(tmp_path)})  # a PATH without scontrol
        preview = SlurmActions(client, command=nothing).preview(slurm_job_request(ActionKind.REQUEUE, "101"))
    assert not preview.allowed
    assert "serves no requeue (it came with v0.0.45, Slurm 26.05)" in preview.refusal
    assert "apt-get install slurm-client" in preview.refusal
    assert not [path for _, path in server.seen if "requeue" in path]


def test_a_pending_job_or_a_stray_value_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with SlurmWithRequeue() as server:
        actions = SlurmActions(SlurmRest(server.url, user="alice", token=TOKEN, read_only=False))
        pending = actions.preview(slurm_job_request(ActionKind.REQUEUE, "102"))
        stray = actions.preview(slurm_job_request(ActionKind.REQUEUE, "101", "now"))
    assert not pending.allowed and "pending" in pending.refusal
    assert not stray.allowed and "'hold'" in stray.refusal
    assert not [path for _, path in server.seen if "requeue" in path]


def test_a_missing_slurm_conf_is_said_at_once(tmp_path: Path) -> None:
    # scontrol retries a missing SLURM_CONF for a minute ("retrying in 1sec up to 60sec"): said before
    client = SlurmRest("http://127.0.0.1:9", user="alice", token=TOKEN)
    command = SlurmCommand(client, env={"PATH": "/usr/bin:/bin", "SLURM_CONF": str(tmp_path / "none.conf")})
    with pytest.raises(SlurmError, match="does not exist"):
        command.cluster()
