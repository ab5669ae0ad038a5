"""The answer cache of the simulated cluster's tables (issue 15): byte-identical, keyed, private.

A cached answer must be exactly the uncached one (the same bytes), must not be used when anything
in its key differs (seed, arguments, scenario content, hpctop's files), must be ignored when it
is corrupt, foreign or readable by others, and must be written 0600 in a 0700 directory. Every
test uses its own temporary cache directory (``HPCTOP_CACHE_DIR``), never the user's.
"""

from __future__ import annotations

import shutil
import stat
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

import hpctop
from hpctop import cli
from hpctop.tables import cache
from tests.cli.test_cli_demo import SCENARIO


@pytest.fixture
def cache_dir(private_env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv("HPCTOP_CACHE_DIR", str(where))
    return where


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "racks.toml"
    path.write_text(SCENARIO)
    return path


def answer(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    return out


def no_simulator(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make building a session fail loudly: what is printed then came from the cache."""
    built: list[str] = []

    def refuse(*args: Any, **kwargs: Any) -> None:
        built.append("session")
        raise AssertionError("the simulator ran although the answer was cached")

    monkeypatch.setattr(
        cli, "_session_module", lambda: SimpleNamespace(demo_session=refuse, scenario_session=refuse)
    )
    return built


def test_cached_answer_is_byte_identical_and_private(
    cache_dir: Path, scenario: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for command in (["jobs", "--all"], ["prio"], ["queues"], ["nodes", "-N"], ["gpus"]):
        for fmt in ("json", "table", "csv"):
            argv = [*command, "--scenario", str(scenario), "--at", "120", "-o", fmt]
            uncached = answer(capsys, *argv, "--no-cache")
            first = answer(capsys, *argv)  # computed and kept
            assert first == uncached
    files = list(cache_dir.glob("*.json"))
    assert len(files) == 15
    assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    built = no_simulator(monkeypatch)
    argv = ["jobs", "--all", "--scenario", str(scenario), "--at", "120", "-o", "json"]
    assert answer(capsys, *argv) == answer(capsys, *argv)
    assert built == []


def test_the_demo_answer_from_the_cache_is_the_same_bytes(
    cache_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["jobs", "--demo", "--seed", "1", "--at", "20", "-o", "json"]
    kept = answer(capsys, *argv)
    no_simulator(monkeypatch)
    assert answer(capsys, *argv) == kept


def test_a_different_key_is_not_served(
    cache_dir: Path, scenario: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["jobs", "--all", "--scenario", str(scenario), "--at", "120", "-o", "json"]
    answer(capsys, *argv)
    built = no_simulator(monkeypatch)
    answer(capsys, *argv)
    assert built == []
    for changed in (
        [*argv, "--seed", "2"],
        [*argv[:-4], "--at", "121", "-o", "json"],
        [*argv, "--state", "PD"],
    ):
        with pytest.raises(AssertionError, match="simulator ran"):
            cli.main(changed)
    assert len(built) == 3
    scenario.write_text(SCENARIO.replace("duration = 600", "duration = 601"))  # same name, new content
    with pytest.raises(AssertionError, match="simulator ran"):
        cli.main(argv)
    scenario.write_text(SCENARIO)
    monkeypatch.setattr(cache, "_fingerprint", "an edited checkout")
    with pytest.raises(AssertionError, match="simulator ran"):
        cli.main(argv)
    monkeypatch.setenv("HPCTOP_NO_CACHE", "1")
    monkeypatch.setattr(cache, "_fingerprint", None)
    with pytest.raises(AssertionError, match="simulator ran"):
        cli.main(argv)
    capsys.readouterr()


def test_corrupt_foreign_or_widened_files_are_ignored(
    cache_dir: Path, scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["queues", "--scenario", str(scenario), "-o", "json"]
    good = answer(capsys, *argv)
    (path,) = cache_dir.glob("*.json")
    key = orjson.loads(path.read_bytes())["key"]
    for bad in (
        b"\x00garbage",
        b"[1, 2]",
        orjson.dumps({"key": {**key, "version": "0"}, "answer": "FORGED\n"}),
    ):
        path.write_bytes(bad)
        assert answer(capsys, *argv) == good
        assert orjson.loads(path.read_bytes())["answer"] == good  # replaced by the real answer
    path.write_bytes(orjson.dumps({"key": key, "answer": "FORGED\n"}))
    path.chmod(0o644)  # readable (and so maybe written) by others: not trusted
    assert answer(capsys, *argv) == good
    assert cache.load(key, cache_dir) == good


def test_the_fingerprint_follows_every_file_of_the_package(tmp_path: Path) -> None:
    copy = tmp_path / "hpctop"
    shutil.copytree(Path(hpctop.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = cache.source_fingerprint(copy)
    assert before == cache.source_fingerprint(copy)
    (copy / "tables" / "jobs.py").write_text((copy / "tables" / "jobs.py").read_text() + "\n# edited\n")
    assert cache.source_fingerprint(copy) != before
    assert cache.source_fingerprint() == cache.source_fingerprint(Path(hpctop.__file__).parent)


def test_no_cache_writes_nothing(
    cache_dir: Path, scenario: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    answer(capsys, "gpus", "--scenario", str(scenario), "--no-cache")
    monkeypatch.setenv("HPCTOP_NO_CACHE", "1")
    answer(capsys, "gpus", "--scenario", str(scenario))
    assert not cache_dir.exists() or not list(cache_dir.glob("*.json"))
