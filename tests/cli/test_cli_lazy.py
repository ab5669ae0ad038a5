"""``hpctop --help`` imports nothing it does not need (bench S1: within 3x ``python -c pass``).

Why a test: one module-level import in :mod:`hpctop.cli` (the renderer, the sanitiser,
:mod:`logging`, :mod:`pathlib`, :mod:`typing`) undoes the lazy entry and doubles the help's time
(0.14 s -> 0.065 s at load 3.8 with bytecode, bench/README.md "Issue 16, session 12 — qa"); a
timing assertion would be flaky, the set of modules loaded is not.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import subprocess
import sys

import pytest

import hpctop
from hpctop import cli
from hpctop.errors import UsageError
from hpctop.tables import render

#: what ``--help`` must not load: hpctop's heavier modules and the standard library's
#: slower imports that only a command's run needs
NOT_FOR_HELP = (
    "hpctop.tables.render",
    "hpctop.tables.select",
    "hpctop.sanitize",
    "hpctop.model",
    "hpctop.config",
    "hpctop.runtime",
    "logging",
    "pathlib",
    "typing",
    "dataclasses",
    "json",
    "orjson",
    "textual",
)


def _modules_after(argv: list[str]) -> set[str]:
    code = (
        "import sys\n"
        "from hpctop.cli import main\n"
        f"main({argv!r})\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HPCTOP_")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert "usage: hpctop" in done.stdout
    return set(done.stderr.split())


def test_help_loads_only_the_parser() -> None:
    loaded = _modules_after(["--help"])
    heavy = sorted(m for m in loaded if m in NOT_FOR_HELP or m.split(".")[0] in NOT_FOR_HELP)
    assert heavy == [], f"--help imported {heavy}"
    assert "shutil" not in loaded  # argparse's formatter would load it (and bz2, lzma) for the width


def test_a_subcommands_help_loads_only_the_parser_too() -> None:
    loaded = _modules_after(["jobs", "--help"])
    assert not loaded & set(NOT_FOR_HELP)


def test_the_parsers_formats_are_the_renderers() -> None:
    """cli.FORMATS names render's formats without importing it: they must stay the same tuple."""
    assert cli.FORMATS == render.FORMATS


#: argument lists of every shape main sees: top-level help, each command's help, options before
#: and after the command, a value that is another command's name, usage errors
_ARGUMENT_LISTS = (
    [],
    ["--help"],
    ["--demo", "--seed", "3"],
    ["version"],
    ["--seed", "3", "jobs", "-o", "json", "--sort", "-prio"],
    ["jobs", "--state", "PD", "-u", "nodes"],
    ["--context", "prio", "queues", "-t", "open"],
    ["nodes", "-N", "--at", "60"],
    ["gpus", "-p", "a100"],
    ["record", "/tmp/x.gz", "--duration", "5"],
    ["schedule", "--once", "--dry-run"],
    ["prio", "--norm"],
    ["queues", "--qos"],
    ["jobs", "--bogus"],
    ["nope"],
    *([name, "--help"] for name in cli.COMMAND_HELP),
)


def _parsed(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[str, object]:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            return ("args", vars(parser.parse_args(argv)))
    except SystemExit as done:
        return ("exit", (done.code, out.getvalue()))
    except UsageError as exc:
        return ("usage", str(exc))


@pytest.mark.parametrize("argv", _ARGUMENT_LISTS, ids=" ".join)
def test_the_parser_of_the_named_commands_parses_as_the_whole_one(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """main builds only the options of the subcommands named in its arguments: every argument list
    must parse (or print its help, or fail) exactly as with every subcommand built."""
    monkeypatch.setenv("COLUMNS", "100")
    whole = _parsed(cli.build_parser(), argv)
    named = _parsed(cli.build_parser(only=cli._named_commands(argv)), argv)
    assert named == whole
    if argv == ["--help"]:
        assert whole[0] == "exit" and "jobs, like squeue" in str(whole[1])


def test_the_help_lists_every_command_once() -> None:
    parser = cli.build_parser()
    choices = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert list(choices) == list(cli.COMMAND_HELP)


@pytest.mark.parametrize("columns", ["100", "", "0", "wide", None])
def test_terminal_columns_is_shutils(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The help's width is read without shutil (S1): it must be what shutil reads."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setenv("LINES", "30")
    assert cli.terminal_columns() == shutil.get_terminal_size().columns


def test_version_loads_neither_logging_nor_the_sanitiser() -> None:
    code = (
        "import sys\n"
        "from hpctop.cli import main\n"
        "main(['version'])\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HPCTOP_")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.split() == ["hpctop", hpctop.__version__]
    loaded = set(done.stderr.split())
    assert not loaded & {*NOT_FOR_HELP, "shutil", "math"}


def test_a_parser_without_the_chosen_command_parses_otherwise() -> None:
    """The check above can fail: a parser that left out the chosen command's options does not
    parse that command's options."""
    argv = ["jobs", "--state", "PD"]
    assert _parsed(cli.build_parser(only=()), argv)[0] == "usage"
    assert _parsed(cli.build_parser(only=cli._named_commands(argv)), argv)[0] == "args"
