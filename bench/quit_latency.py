"""Q1 quit latency (issue 15): from ``q`` to the user's terminal given back, and to the process gone.

The real ``hpctop`` runs in a pseudo-terminal (the helpers of ``tests/tui/test_console_terminal.py``:
its own session, the pty as its controlling terminal), once on the demo and once on a live
kubeconfig whose API server accepts connections and never answers (every list, watch and review
hangs: the worst network a user can have). After the first frame, ``q`` is written; the figure
is the time until the alternate screen is left (``ESC [?1049l``, the screen is the user's
again) and until the process has exited, the median of ``repeats`` runs. Goal: under 1 s to the
terminal, whatever the network does.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import Verdict
from tests.kube.conftest import silent_api_server, write_kubeconfig
from tests.tui.test_console_terminal import HPCTOP, _cleanup, _start

GOAL_S = 1.0


def _one_quit(tmp: Path, argv: list[str], settle: float) -> tuple[float, float]:
    """(seconds to the terminal given back, seconds to the process gone) after ``q``."""
    console = _start(tmp, argv)
    try:
        console.wait_drawn(timeout=60)
        time.sleep(settle)
        started = time.monotonic()
        os.write(console.master, b"q")
        restored: float | None = None
        while console.process.poll() is None and time.monotonic() - started < 30:
            console.read(0.02)
            if restored is None and b"\x1b[?1049l" in console.tail():
                restored = time.monotonic() - started
        console.finish(timeout=30)
        gone = time.monotonic() - started
    finally:
        _cleanup(console)
    return (restored if restored is not None else gone), gone


def run(repeats: int = 3) -> Verdict:
    figures: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="hpctop-q1-") as name:
        tmp = Path(name)
        cases: dict[str, Callable[[], list[str]]] = {"demo": lambda: [str(HPCTOP), "--demo"]}
        with silent_api_server() as url:
            config = write_kubeconfig(tmp / "kubeconfig", url)
            cases["silent server"] = lambda: [str(HPCTOP), "--kubeconfig", str(config)]
            for case, argv in cases.items():
                runs = [_one_quit(tmp, argv(), settle=1.0) for _ in range(repeats)]
                figures[case] = (
                    statistics.median(r[0] for r in runs),
                    statistics.median(r[1] for r in runs),
                )
    worst = max(restored for restored, _ in figures.values())
    figure = ", ".join(
        f"{case}: terminal back {restored:.2f} s, process gone {gone:.2f} s"
        for case, (restored, gone) in figures.items()
    )
    return Verdict(
        "Q1 quit",
        figure,
        worst < GOAL_S,
        f"goal: terminal back < {GOAL_S:g} s after q (median of {repeats}, pty, real hpctop)",
    )


def register(
    sizes: dict[str, dict[str, tuple[float, ...]]],
    runs: dict[str, Callable[..., Verdict]],
    names: dict[str, str],
) -> None:
    """Add Q1 to ``python -m bench`` (full, quick and smoke sizes)."""
    sizes["full"]["Q1"] = (5,)
    sizes["quick"]["Q1"] = (3,)
    sizes["smoke"]["Q1"] = (1,)
    runs["Q1"] = run
    names["Q1"] = "Q1 quit"
