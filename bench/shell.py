"""S1 shell answers (issue 15): ``hpctop --help``, ``version`` and ``jobs --demo --at T``.

Each figure is the wall time of a fresh ``python -m hpctop`` process (imports included, as a user
waits for them), the median of several runs. ``jobs --demo`` is timed cold (an empty answer
cache: the simulation runs to ``--at``) and warm (the same command again: the answer comes from
the cache of :mod:`hpctop.tables.cache`); the warm bytes are checked to be the cold ones. The
cache is a temporary directory (``HPCTOP_CACHE_DIR``), never the user's. Goals: help and version
under 0.3 s and ``--help`` within 3x ``python -c pass`` (timed interleaved with it: the reference
of PERFORMANCE.md P10, a bare interpreter start on this machine now), warm under 1 s; cold is
printed (it is the simulation's cost, PERFORMANCE.md P7). The reference gives the same result:
it is the simplest program that prints the same help, a bare interpreter writing the bytes
``--help`` wrote (``python -c "import sys; sys.stdout.buffer.write(...)"``), and every run of
either side is checked to have printed exactly those bytes (``usage: hpctop`` first); ``version``
is checked to print hpctop's version.

Bytecode: every process runs with a bytecode cache (``PYTHONPYCACHEPREFIX`` in the scratch
directory, ``PYTHONDONTWRITEBYTECODE`` dropped) warmed by one untimed run of each command, as an
installed hpctop runs (pip compiles on install). Without it a machine that sets
``PYTHONDONTWRITEBYTECODE=1`` (this one does) recompiles ``hpctop/cli.py`` and every module it
imports in every process: ~20-30 ms that no user pays, and not what S1 measures.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import hpctop
from bench.common import Verdict

HELP_GOAL_S = 0.3
#: PERFORMANCE.md P10: ``--help`` within this many times a bare interpreter start (``python -c pass``)
HELP_GOAL_RATIO = 3.0
WARM_GOAL_S = 1.0
_REPO = Path(__file__).resolve().parent.parent


def _run(
    argv: Sequence[str], env: dict[str, str], program: Sequence[str] = ("-m", "hpctop")
) -> tuple[float, bytes]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *program, *argv], capture_output=True, env=env, cwd=_REPO, check=False
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"hpctop {' '.join(argv)} exited {done.returncode}: {done.stderr[-300:]!r}")
    return elapsed, done.stdout


def run(repeats: int = 5, at: int = 3600, cold_repeats: int = 3) -> Verdict:
    """Median wall times of help, version, and jobs --demo --at ``at`` cold and warm."""
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("HPCTOP_") and k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
    }
    scratch = Path(tempfile.mkdtemp(prefix="hpctop-bench-shell-"))
    try:
        env = {
            **base,
            "XDG_CONFIG_HOME": str(scratch / "config"),
            "PYTHONPYCACHEPREFIX": str(scratch / "pycache"),
        }
        jobs = ["jobs", "--demo", "--seed", "1", "--at", str(at), "-o", "json"]
        help_text = _run(["--help"], env)[1]  # (the warm-ups write the bytecode cache; not timed)
        if not help_text.startswith(b"usage: hpctop"):
            raise RuntimeError(f"hpctop --help printed {help_text[:80]!r}")
        version_text = _run(["version"], env)[1]
        if version_text.split() != [b"hpctop", hpctop.__version__.encode()]:
            raise RuntimeError(f"hpctop version printed {version_text[:80]!r}")
        # the reference: the same interpreter doing nothing but print the same help
        bare = ("-c", f"import sys; sys.stdout.buffer.write({help_text!r})")
        _run([], env, bare)
        help_s: list[float] = []
        bare_s: list[float] = []
        for _ in range(repeats):  # interleaved with its reference
            for side, program, times in (("--help", ("-m", "hpctop"), help_s), ("python -c", bare, bare_s)):
                elapsed, out = _run(["--help"] if side == "--help" else [], env, program)
                if out != help_text:
                    raise RuntimeError(f"{side} printed another help than the first --help: {out[:80]!r}")
                times.append(elapsed)
        version_s: list[float] = []
        for _ in range(repeats):
            elapsed, out = _run(["version"], env)
            if out != version_text:
                raise RuntimeError(f"hpctop version printed {out[:80]!r}, then {version_text[:80]!r}")
            version_s.append(elapsed)
        cold_s: list[float] = []
        warm_s: list[float] = []
        for i in range(cold_repeats):
            run_env = {**env, "HPCTOP_CACHE_DIR": str(scratch / f"cache-{i}")}
            cold, first = _run(jobs, run_env)
            cold_s.append(cold)
            for _ in range(max(repeats // cold_repeats, 1)):
                warm, again = _run(jobs, run_env)
                if again != first:
                    raise RuntimeError("the cached answer differs from the computed one")
                warm_s.append(warm)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    med: Callable[[list[float]], float] = statistics.median
    figures: dict[str, Any] = {
        "help": med(help_s),
        "bare": med(bare_s),
        "version": med(version_s),
        "cold": med(cold_s),
        "warm": med(warm_s),
    }
    help_ratio = figures["help"] / figures["bare"]
    figure = (
        f"--help {figures['help']:.2f} s = {help_ratio:.1f}x python -c printing the same help"
        f" ({figures['bare']:.2f} s),"
        f" version {figures['version']:.2f} s, "
        f"jobs --demo --at {at}: cold {figures['cold']:.1f} s, warm {figures['warm']:.2f} s"
    )
    passed = (
        max(figures["help"], figures["version"]) < HELP_GOAL_S
        and help_ratio <= HELP_GOAL_RATIO
        and figures["warm"] < WARM_GOAL_S
    )
    detail = (
        f"goals: help/version < {HELP_GOAL_S} s and help <= {HELP_GOAL_RATIO:g}x a bare interpreter"
        f" printing the same help (PERFORMANCE.md P10), warm < {WARM_GOAL_S} s;"
        f" medians of {repeats}, cold {cold_repeats};"
        " the warm answer's P10 reference (a tiny scenario's jobs) is not measured"
    )
    return Verdict("S1 shell", figure, passed, detail)


def register(
    sizes: dict[str, dict[str, tuple[float, ...]]],
    runs: dict[str, Callable[..., Verdict]],
    names: dict[str, str],
) -> None:
    """Add S1 to ``python -m bench`` (full, quick and smoke sizes)."""
    sizes["full"]["S1"] = (5, 3600, 3)
    sizes["quick"]["S1"] = (3, 600, 1)
    sizes["smoke"]["S1"] = (1, 0, 1)
    runs["S1"] = run
    names["S1"] = "S1 shell"
