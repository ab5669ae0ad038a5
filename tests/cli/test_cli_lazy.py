"""``hpctop --help`` imports nothing it does not need (bench S1: within 3x ``python -c pass``).

Why a test: one module-level import in :mod:`hpctop.cli` (the renderer, the sanitiser,
:mod:`logging`, :mod:`pathlib`, :mod:`typing`) undoes the lazy entry and doubles the help's time
(0.14 s -> 0.065 s at load 3.8 with bytecode, bench/README.md "Issue 16, session 12 — qa"); a
timing assertion would be flaky, the set of modules loaded is not.
"""

from __future__ import annotations

import os
import subprocess
import sys

from hpctop import cli
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


def test_a_subcommands_help_loads_only_the_parser_too() -> None:
    loaded = _modules_after(["jobs", "--help"])
    assert not loaded & set(NOT_FOR_HELP)


def test_the_parsers_formats_are_the_renderers() -> None:
    """cli.FORMATS names render's formats without importing it: they must stay the same tuple."""
    assert cli.FORMATS == render.FORMATS
