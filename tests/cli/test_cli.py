"""The command line over a hand-built cluster: formats, filters, sorting, errors and exit codes.

The session factory is replaced by one that returns the sample cluster of
``table_fixtures``, so these tests check the CLI's own work (arguments, settings, exit
statuses, output) without the simulator. ``test_cli_demo.py`` runs the real demo end to end.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hpctop import __version__, cli
from hpctop.errors import ConfigError
from tests.cli.conftest import FakeSession
from tests.table_fixtures import sample_cluster


@pytest.fixture
def calls(private_env: None, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Replace the session factories; record how they were called."""
    monkeypatch.setenv("USER", "bob")
    monkeypatch.setenv("HPCTOP_NO_CACHE", "1")  # the fake session's answers must not be cached
    seen: list[dict[str, Any]] = []

    def demo_session(seed: int = 1, at: float = 0.0, read_only: bool = False) -> FakeSession:
        seen.append({"source": "demo", "seed": seed, "at": at, "read_only": read_only})
        return FakeSession(*sample_cluster())

    def scenario_session(
        path: Path, seed: int | None = None, at: float = 0.0, read_only: bool = False
    ) -> FakeSession:
        seen.append({"source": str(path), "seed": seed, "at": at, "read_only": read_only})
        return FakeSession(*sample_cluster())

    fake = SimpleNamespace(demo_session=demo_session, scenario_session=scenario_session)
    monkeypatch.setattr(cli, "_session_module", lambda: fake)
    return seen


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_jobs_json_has_the_documented_shape(
    calls: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "jobs", "-o", "json")
    assert (code, err) == (0, "")
    rows = json.loads(out)
    assert [r["name"] for r in rows] == ["train", "notebook", "big", "held"]
    assert rows[3]["queue"] == "root.default"  # the policy's default queue
    assert calls == [{"source": "demo", "seed": 1, "at": 0.0, "read_only": False}]
    assert out == json.dumps(rows, indent=2, sort_keys=True) + "\n"


def test_source_flags_before_or_after_the_command(
    calls: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "--seed", "3", "--at", "3600", "jobs")[0] == 0
    assert run(capsys, "jobs", "--demo", "--seed", "4", "--at", "60.5")[0] == 0
    assert [(c["seed"], c["at"]) for c in calls] == [(3, 3600.0), (4, 60.5)]


def test_seed_from_environment_and_config_file(
    calls: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    config = tmp_path / "c.toml"
    config.write_text("seed = 11\nread_only = true\n")
    run(capsys, "jobs", "--config", str(config))
    monkeypatch.setenv("HPCTOP_SEED", "12")
    run(capsys, "jobs", "--config", str(config))
    run(capsys, "jobs", "--config", str(config), "--seed", "13")
    assert [(c["seed"], c["read_only"]) for c in calls] == [(11, True), (12, True), (13, True)]


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["--state", "PD"], ["big", "held"]),
        (["-t", "running"], ["train", "notebook"]),
        (["--state", "CD"], ["done"]),
        (["--all"], ["train", "notebook", "big", "held", "done"]),
        (["--queue", "root.research"], ["train", "big"]),
        (["--partition", "a100"], ["notebook"]),
        (["--namespace", "team-b"], ["notebook"]),
        (["--user", "alice"], ["train", "big"]),
        (["--me"], ["notebook", "held"]),
        (["--sort", "-priority"], ["big", "train", "notebook", "held"]),
        (["--sort", "user,-gpus"], ["big", "train", "held", "notebook"]),
        (["--state", "PD,R", "--sort", "name"], ["big", "held", "notebook", "train"]),
    ],
)
def test_jobs_filters_and_sort(
    calls: list[dict[str, Any]], capsys: pytest.CaptureFixture[str], argv: list[str], names: list[str]
) -> None:
    code, out, _ = run(capsys, "jobs", "-o", "json", *argv)
    assert code == 0
    assert [r["name"] for r in json.loads(out)] == names


def test_jobs_table_and_csv(calls: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> None:
    _, table, _ = run(capsys, "jobs")
    assert table.splitlines()[0].startswith("JOBID")
    assert "(Resources)" in table
    _, bare, _ = run(capsys, "jobs", "--no-header")
    assert [line.split()[0] for line in bare.splitlines()] == [
        line.split()[0] for line in table.splitlines()[1:]
    ]
    _, text, _ = run(capsys, "jobs", "-o", "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["name"] for r in rows] == ["train", "notebook", "big", "held"]
    assert rows[2]["reason"] == "Resources" and rows[2]["gpus"] == "32" and rows[0]["eta"] == ""


def test_prio(calls: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "prio", "-o", "json")
    assert code == 0
    rows = json.loads(out)
    assert [r["name"] for r in rows] == ["big", "held"]
    assert set(rows[0]["factors"]) == {"age", "fairshare", "jobsize", "partition", "qos"}
    assert rows[0]["weighted"]["fairshare"] == 10000
    _, sorted_out, _ = run(capsys, "prio", "-o", "json", "--sort", "age")
    assert [r["name"] for r in json.loads(sorted_out)] == ["held", "big"]
    _, norm, _ = run(capsys, "prio", "--norm")
    assert "0.5000" in norm


def test_queues_nodes_gpus(calls: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "queues", "-o", "json", "--queue", "root.research")
    assert [r["path"] for r in json.loads(out)] == ["root.research", "root.research.nlp"]
    _, out, _ = run(capsys, "queues", "--state", "closed")
    assert out.splitlines()[1].split()[:2] == ["sandbox", "closed"]
    _, out, _ = run(capsys, "nodes", "-o", "json")
    assert [(r["partition"], r["state"]) for r in json.loads(out)][:2] == [("h100", "mix"), ("h100", "drng")]
    _, out, _ = run(capsys, "nodes", "-N", "-o", "json", "--state", "idle")
    assert [r["node"] for r in json.loads(out)] == ["cpu-001"]
    _, out, _ = run(capsys, "gpus", "-o", "json", "--sort", "-free")
    # a 3g.40gb slice in use is 3/7 of a GPU
    assert [(r["model"], r["free"]) for r in json.loads(out)] == [("A100", 3.321), ("H100", 2)]
    _, out, _ = run(capsys, "gpus", "--partition", "h100")
    assert out.splitlines()[1].split()[:4] == ["h100", "H100", "2", "16"]


def test_scenario_source(
    calls: list[dict[str, Any]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text("nodes: []\n")
    assert run(capsys, "jobs", "--scenario", str(scenario), "--seed", "5")[0] == 0
    # without a seed from the user, the scenario file's own seed applies (None lets it choose)
    assert run(capsys, "jobs", "--scenario", str(scenario), "--at", "10")[0] == 0
    assert calls == [
        {"source": str(scenario), "seed": 5, "at": 0.0, "read_only": False},
        {"source": str(scenario), "seed": None, "at": 10.0, "read_only": False},
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["jobs", "--state", "RUNING"], "unknown job state 'RUNING'"),
        (["jobs", "--sort", "size"], "unknown sort field 'size'"),
        (["jobs", "-o", "yaml"], "invalid choice: 'yaml'"),
        (["jobs", "--scenario", "/nonexistent/s.yaml"], "scenario file not found: /nonexistent/s.yaml"),
        (["jobs", "--demo", "--scenario", "x.yaml"], "cannot be used together"),
        (["jobs", "--at", "-5"], "must be a finite number of seconds"),
        (["jobs", "--at", "soon"], "is not a number of seconds"),
        (["jobs", "--seed", "x"], "is not a whole number"),
        (["--speed", "0"], "must be a positive number"),
        (["nodes", "--state", "busy"], "unknown node state 'busy'"),
        (["queues", "--state", "full"], "unknown queue state 'full'"),
        (["gpus", "--namespace", "x"], "unrecognized arguments: --namespace x"),
        (["squeue"], "invalid choice: 'squeue'"),
        (
            ["jobs", "--config", "/nonexistent/c.toml"],
            "invalid configuration: /nonexistent/c.toml: file not found",
        ),
    ],
)
def test_bad_input_is_one_line_on_stderr_with_status_2(
    calls: list[dict[str, Any]], capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("hpctop: ")
    assert message in err
    assert calls == []  # rejected before a cluster was built


def test_me_without_a_user_name(
    calls: list[dict[str, Any]], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("USER")
    monkeypatch.delenv("LOGNAME", raising=False)
    code, _, err = run(capsys, "jobs", "--me")
    assert code == 2 and "--me needs your user name" in err


def test_bad_scenario_exits_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from hpctop.errors import ScenarioError

    def scenario_session(path: Path, **_: Any) -> FakeSession:
        raise ScenarioError(f"{path} line 3: nodes: expected a list")

    monkeypatch.setattr(cli, "_session_module", lambda: SimpleNamespace(scenario_session=scenario_session))
    scenario = tmp_path / "bad.yaml"
    scenario.write_text("nodes: 3\n")
    code, out, err = run(capsys, "jobs", "--scenario", str(scenario))
    assert (code, out) == (2, "")
    assert err == f"hpctop: invalid scenario: {scenario} line 3: nodes: expected a list\n"


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "version") == (0, f"hpctop {__version__}\n", "")
    code, out, _ = run(capsys, "--version")
    assert (code, out) == (0, f"hpctop {__version__}\n")
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "jobs" in out and "prio" in out
    code, out, _ = run(capsys, "jobs", "--help")
    assert code == 0 and "--state" in out and "--sort" in out


def test_kubectl_plugin_name(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.argv", ["/usr/local/bin/kubectl-hpctop", "jobs", "--state", "nope"])
    code = cli.main()
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("kubectl hpctop: usage error: unknown job state 'nope'")


def _fake_console(monkeypatch: pytest.MonkeyPatch, pick: str | None = None) -> list[dict[str, Any]]:
    """Replace the console with one that records how it was made and may 'pick' a theme."""
    started: list[dict[str, Any]] = []

    class App:
        return_code = 0  # what hpctop.tui.terminal.run_console reads after run()

        def __init__(self, theme: str) -> None:
            self.theme = theme

        def run(self, **options: Any) -> None:
            started.append({"ran": True})
            if pick is not None:
                self.theme = pick

    def make_app(session: FakeSession, **kwargs: Any) -> App:
        started.append({"speed": session.speed, **kwargs})
        return App(kwargs["theme"])

    monkeypatch.setattr(cli, "_load_make_app", lambda: make_app)
    return started


def test_console_starts_the_app_with_settings(
    calls: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    started = _fake_console(monkeypatch)
    config = tmp_path / "c.toml"
    config.write_text('theme = "hpctop-light"\n[keymap]\nquit = "ctrl+q"\n')
    code, _, _ = run(capsys, "--config", str(config), "--speed", "120", "--theme", "hpctop-colorblind")
    assert code == 0
    assert started == [
        {
            "speed": 120.0,
            "theme": "hpctop-colorblind",
            "read_only": False,
            "keymap": {"quit": "ctrl+q"},
            "user": "bob",
            "tick_interval": 1.0,
        },
        {"ran": True},
    ]
    # a one-off --theme is not written back
    assert config.read_text() == 'theme = "hpctop-light"\n[keymap]\nquit = "ctrl+q"\n'


def test_console_remembers_the_theme_picked_in_it(
    calls: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    _fake_console(monkeypatch, pick="hpctop-colorblind")
    config = tmp_path / "c.toml"
    config.write_text("# mine\nseed = 2\n")
    assert run(capsys, "--config", str(config))[0] == 0
    assert config.read_text() == '# mine\nseed = 2\ntheme = "hpctop-colorblind"\n'


def test_console_theme_save_failure_is_a_warning(
    calls: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    _fake_console(monkeypatch, pick="hpctop-light")

    def refuse(name: str, path: object = None) -> None:
        raise ConfigError("/home/x/.config/hpctop/config.toml: cannot write (read-only file system)")

    monkeypatch.setattr("hpctop.config.save_theme", refuse)
    code, _, err = run(capsys)
    assert code == 0
    assert err.startswith("hpctop: could not remember the theme")


def test_usage_doc_covers_every_command_and_flag() -> None:
    import argparse

    doc = (Path(__file__).resolve().parents[2] / "docs" / "usage.md").read_text(encoding="utf-8")
    parser = cli.build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subparsers.choices.items():
        assert f"hpctop {name}" in doc, name
        for action in sub._actions:
            longest = max(action.option_strings, key=len, default="")
            if longest and longest != "--help":
                assert f"`{longest}" in doc or f"{longest} " in doc or f"[{longest}" in doc, (name, longest)


def test_tables_never_load_textual(tmp_path: Path) -> None:
    import subprocess
    import sys

    scenario = tmp_path / "s.toml"
    scenario.write_text('[[nodes]]\nname = "n"\ngpus = 1\ngpu_model = "T4"\ncpu = "8"\nmemory = "32Gi"\n')
    code = (
        "import sys\n"
        "from hpctop.cli import main\n"
        "assert main(['version']) == 0\n"
        f"assert main(['gpus', '--scenario', {str(scenario)!r}, '-o', 'json']) == 0\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HPCTOP_")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.splitlines()[-1] == "[]"
    assert '"model": "T4"' in out.stdout
