"""Accounting (QOS, shares) without a Slurm: a recorded 22.05 answer and the v0.0.42/v0.0.44 shapes.

Why: CI without Debian's Slurm packages still holds the QOS and association readers to what Slurm
printed. ``fixtures/accounting-v0.0.38.json`` is what a real 22.05 slurmrestd (with slurmdbd)
answered, with ``sshare`` and ``sacctmgr show qos`` read at the same moment
(``python -m tests.slurm.record_accounting``); the comparisons are the real-Slurm tests' own
(:mod:`tests.slurm.accounting`). The v0.0.42/v0.0.44 QOS answers are validated against SchedMD's
schemas as Slinky vendors them (``test_recorded_versions``); their expected rows follow from the
schema's documented meanings (``wall_clock.per.job`` is MaxWall in minutes, ``{"set": false}`` is
no limit).
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from hpctop.backends.slurm.wire import parse_association, shares_from_associations
from hpctop.cli import main
from tests.cli.test_cli_hostile import check_clean
from tests.slurm.accounting import assert_shares_read_like_sshare, qos_values, sacctmgr_qos, sshare_rows
from tests.slurm.recorded import FIXTURES, TOKEN, RecordedSlurm, load
from tests.slurm.test_recorded_versions import VERSIONS


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(
    private_env: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., Done]:
    """``hpctop ARGS --slurm-url <server>`` in this process (no interpreter start per call)."""
    for name in [n for n in os.environ if n.startswith("SLURM_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("SLURM_JWT", TOKEN)
    monkeypatch.setenv("HPCTOP_NO_CACHE", "1")

    def run(server: RecordedSlurm, *args: str) -> Done:
        code = main([*args, "--slurm-url", server.url, "--slurm-user", "alice"])
        out, err = capsys.readouterr()
        return Done(code, out, err)

    return run


def _recorded() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / "accounting-v0.0.38.json").read_text())
    return data


def _server(data: dict[str, Any]) -> RecordedSlurm:
    responses = {"qos": data["qos"], "associations": data["associations"]}
    return RecordedSlurm("v0.0.38", openapi={"paths": data["paths"]}, responses=responses)


def test_the_recording_is_a_real_2205_with_accounting() -> None:
    data = _recorded()
    assert "22.05" in data["source"] and data["qos"]["meta"]["Slurm"]["release"].startswith("22.05")
    assert "/slurmdb/v0.0.38/qos" in data["paths"] and "/slurm/v0.0.38/shares" not in data["paths"]
    # sshare (slurmctld) had usage when it was recorded: the associations' lack of it is a real gap
    assert any(int(r[4]) > 0 for r in sshare_rows(data["sshare"]) if r[1])
    assert all(a["usage"] is None for a in data["associations"]["associations"])


def test_queues_from_recorded_2205_associations_read_like_its_sshare(cli: Callable[..., Done]) -> None:
    data = _recorded()
    with _server(data) as server:
        done = cli(server, "queues", "-o", "json")
        text = cli(server, "queues")
    assert done.returncode == 0, done.stderr
    assert_shares_read_like_sshare(json.loads(done.stdout), sshare_rows(data["sshare"]))
    assert "not served" in done.stderr and len(done.stderr.splitlines()) == 1
    # sshare's text: "parent" for the account that takes its parent's shares, blank for root's
    lines = [line.split() for line in text.stdout.splitlines()]
    assert lines[1] == ["root", "0.000000"]
    assert ["theory", "parent", "0.731707"] in lines


def test_queues_qos_from_recorded_2205_reads_like_its_sacctmgr(cli: Callable[..., Done]) -> None:
    data = _recorded()
    with _server(data) as server:
        done = cli(server, "queues", "--qos", "-o", "json")
    assert done.returncode == 0, done.stderr
    assert qos_values(json.loads(done.stdout)) == sacctmgr_qos(data["sacctmgr_qos"])


def test_fair_tree_norm_shares_and_a_parent_sharing_account() -> None:
    """Hand-checked against sshare's figures above: physics' level holds physics/root (1), bio (5)
    and, through theory (shares ``parent``), theory/root (1): 1/7, 5/7, 1/7; theory shows physics'."""
    raw = [
        {"account": "root", "user": None, "parent_account": None, "shares_raw": 1},
        {"account": "physics", "user": None, "parent_account": "root", "shares_raw": 30},
        {"account": "chemistry", "user": None, "parent_account": "root", "shares_raw": 10},
        {"account": "root", "user": "root", "parent_account": None, "shares_raw": 1},
        {"account": "physics", "user": "root", "parent_account": None, "shares_raw": 1},
        {"account": "bio", "user": None, "parent_account": "physics", "shares_raw": 5},
        {"account": "theory", "user": None, "parent_account": "physics", "shares_raw": 0x7FFFFFFF},
        {"account": "theory", "user": "root", "parent_account": None, "shares_raw": 1},
    ]
    shares = {(s.account, s.user): s for s in shares_from_associations([parse_association(r) for r in raw])}
    assert shares[("root", "")].raw_shares is None and shares[("root", "")].norm_shares == 0.0
    assert shares[("physics", "")].norm_shares == pytest.approx(30 / 41)
    assert shares[("root", "root")].norm_shares == pytest.approx(1 / 41)
    assert shares[("physics", "root")].norm_shares == pytest.approx(1 / 7)
    assert shares[("bio", "")].norm_shares == pytest.approx(5 / 7)
    assert shares[("theory", "")].raw_shares is None
    assert shares[("theory", "")].norm_shares == pytest.approx(30 / 41)
    assert shares[("theory", "root")].norm_shares == pytest.approx(1 / 7)
    assert {s.raw_usage for s in shares.values()} == {None}


@pytest.mark.parametrize("version", VERSIONS)
def test_queues_qos_from_a_newer_version(cli: Callable[..., Done], version: str) -> None:
    with RecordedSlurm(version) as server:
        done = cli(server, "queues", "--qos", "-o", "json")
        text = cli(server, "queues", "--qos")
        prio = cli(server, "prio", "-o", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert qos_values(rows) == [
        ("normal", 0, "", "", 1.0, None, None, None, None, None),
        ("high", 400, "low", "", 1.0, "cpu=64,gres/gpu=16", "gres/gpu=8", 4, 20, 86400),
        ("low", 100, "", "NO_DECAY", 0.5, None, None, None, None, None),
    ]
    assert [(r["name"], r["norm_priority"], r["grp_jobs"]) for r in rows] == [
        ("normal", 0.0, None),
        ("high", 1.0, 10),
        ("low", 0.25, None),
    ]
    high = next(line for line in text.stdout.splitlines() if line.startswith("high"))
    assert high.split()[-1] == "1-00:00:00"  # 1440 minutes, as sacctmgr prints a day
    # prio's QOS factor: every recorded job is in "normal" (priority 0 of at most 400)
    assert prio.returncode == 0 and prio.stderr == "", prio.stderr
    assert {(r["qos"], r["qos_factor"]) for r in json.loads(prio.stdout)} == {("normal", 0.0)}


def test_queues_qos_needs_slurm(cli: Callable[..., Done], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["queues", "--qos", "--demo"]) == 2
    assert "needs --slurm-url" in capsys.readouterr().err


def test_hostile_qos_and_account_names_reach_no_output_raw(cli: Callable[..., Done]) -> None:
    """A QOS, its description and an account are cluster text: escapes and controls never pass raw."""
    hostile = "\x1b]52;c;ZXZpbA==\x07\u202e"
    _, responses = load("v0.0.44")
    responses = copy.deepcopy(responses)
    responses["qos"]["qos"][1]["name"] = f"high{hostile}"
    responses["qos"]["qos"][1]["description"] = hostile
    responses["qos"]["qos"][1]["preempt"]["list"] = [f"low{hostile}"]
    responses["shares"]["shares"]["shares"][1]["name"] = f"research{hostile}"
    with RecordedSlurm("v0.0.44", responses=responses) as server:
        for args in (("queues", "--qos"), ("queues",)):
            for fmt in ("table", "json", "csv", "tsv"):
                done = cli(server, *args, "-o", fmt)
                assert done.returncode == 0, done.stderr
                assert "high" in done.stdout or "research" in done.stdout
                check_clean(done.stdout, fmt)
                check_clean(done.stderr, "table")
