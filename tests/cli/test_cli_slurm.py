"""``hpctop jobs --slurm-url`` without a real Slurm: a server that is down, a hostile one, and the rows.

The down server is a real closed port (nothing mocked): the command must fail with one clear,
sanitised line on stderr and a non-zero status, and print no table.
"""

from __future__ import annotations

import http.server
import io
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import ClassVar

import pytest

from hpctop.backends.slurm.wire import expand_hostlist, parse_job
from hpctop.cli import main


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_down_slurmrestd_is_one_line_and_non_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURM_JWT", "x")
    code, out, err = _run("jobs", "--slurm-url", f"http://127.0.0.1:{_closed_port()}", "-o", "json")
    assert code != 0
    assert out == ""
    assert len(err.splitlines()) == 1
    assert "slurmrestd unreachable" in err


def test_down_slurmrestd_with_the_demo_leaves_out_only_the_slurm_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SLURM_JWT", "x")
    url = f"http://127.0.0.1:{_closed_port()}"
    code, out, err = _run("jobs", "--demo", "--seed", "1", "--at", "600", "--slurm-url", url, "-o", "json")
    assert code == 0
    rows = json.loads(out)
    assert rows and all("backend" not in row for row in rows)
    assert "Slurm jobs left out" in err


class _Hostile(http.server.BaseHTTPRequestHandler):
    """A slurmrestd (v0.0.40 shapes) with an escape-laden job name; it keeps the tokens sent."""

    tokens: ClassVar[list[str | None]] = []

    def do_GET(self) -> None:
        self.tokens.append(self.headers.get("X-SLURM-USER-TOKEN"))
        if self.path == "/openapi/v3":
            body: object = {"paths": {"/slurm/v0.0.40/jobs": {}}}
        else:
            body = {
                "jobs": [
                    {
                        "job_id": 7,
                        "name": "\x1b]0;pwned\x07evil",
                        "user_name": "ann",
                        "partition": "gpu",
                        "job_state": ["RUNNING", "COMPLETING"],
                        "state_reason": "None",
                        "priority": {"set": True, "infinite": False, "number": 42},
                        "nodes": "sn[1-2]",
                        "node_count": {"set": True, "number": 2},
                        "start_time": {"set": True, "number": 1_700_000_000},
                        "tres_req_str": "cpu=4,mem=2G,node=2,gres/gpu=4",
                    }
                ]
            }
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def hostile_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_slurm_rows_are_sanitised_and_read_like_squeue(
    hostile_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLURM_JWT", "x")
    code, out, _ = _run("jobs", "--slurm-url", hostile_url, "--no-header")
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out
    assert " CG " in out and "sn[1-2]" in out
    code, out, _ = _run("jobs", "--slurm-url", hostile_url, "-o", "json")
    (row,) = json.loads(out)
    assert (row["backend"], row["code"], row["priority"], row["gpus"], row["nodes"]) == (
        "slurm",
        "CG",
        42,
        4,
        ["sn1", "sn2"],
    )
    assert row["memory"] == 2 * 2**30


def test_hostlist_and_state_flags() -> None:
    assert expand_hostlist("sn[1-2,5],gpu[09-10]") == ["sn1", "sn2", "sn5", "gpu09", "gpu10"]
    assert parse_job({"job_state": ["PENDING", "REQUEUED"]}).state == "REQUEUED"


def test_token_file_is_sent_and_a_missing_one_is_a_usage_error(
    hostile_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SLURM_JWT", raising=False)
    token = tmp_path / "token"
    token.write_text("SLURM_JWT=from-the-file\n")  # what 'scontrol token' prints
    _Hostile.tokens.clear()
    code, _, _ = _run("jobs", "--slurm-url", hostile_url, "--slurm-token-file", str(token), "-o", "json")
    assert code == 0
    assert _Hostile.tokens and set(_Hostile.tokens) == {"from-the-file"}
    code, out, err = _run("jobs", "--slurm-url", hostile_url, "--slurm-token-file", str(tmp_path / "nope"))
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "Slurm token file" in err
