"""Issue 12: cluster text planted with escape sequences never reaches a shell output raw.

Whoever can name a pod, label a node or answer as an API server can plant ``ESC ] 52`` (write the
user's clipboard), ``ESC ] 0`` (retitle the terminal), CSI, BEL, a C1 ``0x9b``, bidi overrides and
zero-width characters (kubectl CVE-2021-25743). A hand-built cluster carries a planted string in
every text field a table reads (node, pod, job, namespace, user, queue, partition, GPU model,
sharing, MIG profile, reason message, owner kind, PriorityClass), and every table command in every
output format is run through ``main``; error messages on stderr are checked the same way. A
million-character name must give a bounded table line and the whole value in JSON.

On the code before the shared sanitiser (commit 1a556ef) every one of these fails: the planted
bytes came out raw in tables, CSV and on stderr.
"""

from __future__ import annotations

import io
import json
import os
import re
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpctop import cli
from hpctop.model.states import JobState, ReasonCode
from hpctop.model.store import Snapshot
from hpctop.scheduling.types import ScheduleResult
from hpctop.tables.fmt import EPOCH
from tests.cli.conftest import FakeSession
from tests.table_fixtures import (
    make_job,
    make_node,
    make_partition,
    make_plan,
    make_pod,
    make_queue,
    make_result,
    make_snapshot,
)

#: what must never be printed raw: C0 but newline (tab only as TSV's delimiter), DEL, C1, bidi and
#: zero-width format characters
RAW = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)

PLANTED = [
    "\x1b]52;c;ZXZpbA==\x07",  # OSC 52: write the clipboard
    "\x1b]0;pwned\x1b\\",  # OSC 0: the window title
    "\x1b[2J\x1b[1;1H",  # CSI: clear the screen
    "ring\x07bell",
    "\x9b31mred",  # C1 CSI
    "abc\u202edcba",  # RLO
    "x\u2066isolated\u2069",  # LRI ... PDI
    "zero\u200bwidth",
]

COMMANDS = [["jobs", "--all"], ["prio"], ["queues"], ["nodes"], ["nodes", "-N"], ["gpus"]]
FORMATS = ["table", "csv", "tsv", "json"]


def hostile_cluster(text: str) -> tuple[Snapshot, ScheduleResult]:
    """Every text field the tables read carries ``text``."""
    node_name = f"gpu-{text}-001"
    nodes = [
        make_node(node_name, product=f"H100{text}", sharing=text),
        make_node(f"mig-{text}", gpus=4, product="A100", mig=((f"3g{text}", 2),)),
    ]
    pods = [make_pod(f"train{text}-0", node_name, gpu=2000)]
    running = make_job(
        f"train{text}",
        state=JobState.RUNNING,
        namespace=f"ns{text}",
        user=f"u{text}",
        queue=f"root.{text}",
        partition=text,
        running=1,
        nodes=[node_name],
        start=EPOCH + 60,
    )
    running = replace(running, owner_kind=f"Job{text}", priority_class=f"pc{text}")
    waiting = make_job(f"wait{text}", user=text, queue=f"root.{text}", partition=f"{text},{text}b")
    plans = [
        make_plan(running, total=100, partition=text),
        make_plan(
            waiting,
            total=50,
            partition=text,
            order=0,
            reason=ReasonCode.RESOURCES,
            message=f"needs {text}",
            factors={"age": 0.5},
            weighted={"age": 50.0},
        ),
    ]
    queues = [
        make_queue("root", children=[f"root.{text}"], used=2000, running_jobs=1, pending_jobs=1),
        make_queue(f"root.{text}", guaranteed=1000, used=2000, running_jobs=1, pending_jobs=1),
    ]
    partitions = [make_partition(text, [node_name]), make_partition(f"{text}b", [f"mig-{text}"])]
    snapshot = make_snapshot(nodes, pods, [running, waiting])
    return snapshot, make_result(EPOCH + 3600, plans, partitions=partitions, queues=queues)


@pytest.fixture
def planted(private_env: None, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The session factory returns the hostile cluster of the text appended to the list."""
    monkeypatch.setenv("HPCTOP_NO_CACHE", "1")
    texts: list[str] = []

    def demo_session(seed: int = 1, at: float = 0.0, read_only: bool = False) -> FakeSession:
        return FakeSession(*hostile_cluster(texts[-1]))

    monkeypatch.setattr(cli, "_session_module", lambda: SimpleNamespace(demo_session=demo_session))
    return texts


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def check_clean(out: str, fmt: str) -> None:
    body = out.replace("\t", "") if fmt == "tsv" else out
    found = RAW.search(body)
    assert found is None, f"{fmt}: raw {found.group()!r} in {out[max(found.start() - 40, 0) :][:120]!r}"


@pytest.mark.parametrize("text", PLANTED)
def test_planted_text_is_visible_but_harmless_in_every_table_and_format(
    planted: list[str], capsys: pytest.CaptureFixture[str], text: str
) -> None:
    planted.append(text)
    for command in COMMANDS:
        for fmt in FORMATS:
            code, out, err = run([*command, "-o", fmt], capsys)
            assert (code, err) == (0, ""), (command, fmt, err)
            check_clean(out, fmt)
            if fmt == "json":
                json.loads(out)
                assert out.isascii()
            else:
                # the planted text reached the output, as stand-ins a user can see
                assert any(mark in out for mark in ("␛", "␇", "\\x9b", "<U+")), (command, fmt, out)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.one_of(
            st.sampled_from(PLANTED),
            st.sampled_from(["\x1b[", "\x1b]", "\x1bP", "\x9b", "\x9d", "\x07", "\x1b\\", "\r", "\n"]),
            st.text(alphabet=st.characters(codec="utf-8"), max_size=6),
        ),
        min_size=1,
        max_size=5,
    ).map("".join)
)
def test_property_no_planted_character_reaches_any_output(
    planted: list[str], capsys: pytest.CaptureFixture[str], text: str
) -> None:
    planted.append(text)
    for command in COMMANDS:
        for fmt in FORMATS:
            code, out, err = run([*command, "-o", fmt], capsys)
            assert code == 0, err
            check_clean(out, fmt)
            check_clean(err, "table")


def test_a_million_character_name_gives_a_bounded_line_and_the_whole_value_in_json(
    planted: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    planted.append("n" * 1_000_000)
    for command in COMMANDS:
        code, out, _ = run([*command, "-o", "table"], capsys)
        assert code == 0
        assert max(len(line) for line in out.splitlines()) < 600, command
        assert "…" in out
    code, out, _ = run(["jobs", "-o", "json"], capsys)
    names = [row["name"] for row in json.loads(out)]
    assert "train" + "n" * 1_000_000 in names
    code, out, _ = run(["jobs", "-o", "csv"], capsys)
    assert max(len(line) for line in out.splitlines()) < 40_000  # capped cells, not megabytes


@pytest.mark.parametrize("text", PLANTED)
def test_error_messages_on_stderr_are_sanitised(
    planted: list[str], capsys: pytest.CaptureFixture[str], text: str
) -> None:
    code, out, err = run(["jobs", "--scenario", f"/nonexistent/{text}.toml"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "scenario file not found" in err
    check_clean(err, "table")


def test_schedule_log_lines_are_sanitised(monkeypatch: pytest.MonkeyPatch) -> None:
    """``hpctop schedule`` logs decisions naming pods: each line goes out sanitised."""
    import hpctop.runtime.scheduler as scheduler

    async def fake_run(kubeconfig: Any, context: Any, options: Any, *, once: bool, log: Any) -> None:
        for text in PLANTED:
            log(f"bind ns/pod{text} -> node{text}")

    monkeypatch.setattr(scheduler, "run_schedule", fake_run)
    for name in list(os.environ):
        if name.startswith("HPCTOP_"):
            monkeypatch.delenv(name)
    out = io.StringIO()
    args = cli.build_parser().parse_args(["schedule", "--context", "c", "--once"])
    settings = cli._settings(args)
    assert cli._cmd_schedule(args, settings, out) == 0
    assert out.getvalue().count("\n") == len(PLANTED)
    check_clean(out.getvalue(), "table")


def test_library_warnings_reach_stderr_sanitised(
    planted: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A library warning quoting the server (nothing configures logging) is sanitised too."""
    import logging

    run(["version"], capsys)  # main installs the sanitised last-resort handler
    monkeypatch.setattr(logging.getLogger(), "handlers", [])  # as outside pytest: none configured
    for text in PLANTED:
        logging.getLogger("kubernetes.client.rest").warning("server said %s", text)
    err = capsys.readouterr().err
    assert err.count("server said") == len(PLANTED)
    check_clean(err, "table")
