"""Q1 quit latency (issue 15): from ``q`` to the user's terminal given back, and to the process gone.

The real ``hpctop`` runs in a pseudo-terminal (the helpers of ``tests/tui/test_console_terminal.py``:
its own session, the pty as its controlling terminal), once on the demo and once on a live
kubeconfig whose API server accepts connections and never answers (every list, watch and review
hangs: the worst network a user can have), and once on a live kubeconfig whose API server
serves ``big`` realistic pods (:class:`bench.p8_peer.PeerServer`, ~7 KiB each with
managedFields) and then holds its watches open and silent (issue 16: quitting took 2-7 s at
50k-200k pods, the heap of a big cluster being freed on the way out). After the first frame
(for the big case: after the pods were listed, their watch opened, and ``settle`` seconds for the
rows), ``q`` is written; the figure is the time until the alternate screen is left
(``ESC [?1049l``, the screen is the user's again) and until the process has exited, the median of
``repeats`` runs (``big_repeats`` for the big case). Goal: under 1 s to the terminal and to the
process gone, whatever the network does and whatever the size.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import Verdict
from bench.p8_peer import PeerServer
from tests.kube.conftest import silent_api_server, write_kubeconfig
from tests.tui.test_console_terminal import HPCTOP, _cleanup, _start

GOAL_S = 1.0


def _one_quit(
    tmp: Path, argv: list[str], settle: float, ready: Callable[[], bool] = lambda: True
) -> tuple[float, float]:
    """(seconds to the terminal given back, seconds to the process gone) after ``q``, written
    ``settle`` seconds after the first frame and ``ready()``."""
    console = _start(tmp, argv)
    try:
        console.wait_drawn(timeout=120)
        deadline = time.monotonic() + 600
        while not ready():
            if time.monotonic() > deadline:
                raise RuntimeError("the console never finished its first list")
            console.read(0.2)
        end = time.monotonic() + settle
        while time.monotonic() < end:
            console.read(0.1)
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


def run(repeats: int = 3, big: int = 0, big_repeats: int = 1, settle: float = 3.0) -> Verdict:
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
        if big:
            figures[f"{big:,} pods"] = _big_case(tmp, big, big_repeats, settle)
    worst = max(max(restored, gone) for restored, gone in figures.values())
    figure = ", ".join(
        f"{case}: terminal back {restored:.2f} s, process gone {gone:.2f} s"
        for case, (restored, gone) in figures.items()
    )
    return Verdict(
        "Q1 quit",
        figure,
        worst < GOAL_S,
        f"goal: terminal back and process gone < {GOAL_S:g} s after q (median of {repeats}"
        f"{f', {big_repeats} for the big case' if big else ''}, pty, real hpctop)",
    )


def _big_case(tmp: Path, pods: int, repeats: int, settle: float) -> tuple[float, float]:
    """(terminal back, process gone) medians on a console that has listed ``pods`` pods."""
    with PeerServer(pods, hold_watches=True) as server:
        server.prebuild()
        config = write_kubeconfig(tmp / "kubeconfig-big", server.url)
        runs = []
        for _ in range(repeats):
            seen = server.watches.get("/api/v1/pods", 0)

            def listed(before: int = seen) -> bool:  # the pods' list is done: their watch opened
                return server.watches.get("/api/v1/pods", 0) > before

            runs.append(_one_quit(tmp, [str(HPCTOP), "--kubeconfig", str(config)], settle, listed))
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def register(
    sizes: dict[str, dict[str, tuple[float, ...]]],
    runs: dict[str, Callable[..., Verdict]],
    names: dict[str, str],
) -> None:
    """Add Q1 to ``python -m bench`` (full, quick and smoke sizes)."""
    sizes["full"]["Q1"] = (5, 100_000, 3)
    sizes["quick"]["Q1"] = (3, 10_000, 1)
    sizes["smoke"]["Q1"] = (1,)
    runs["Q1"] = run
    names["Q1"] = "Q1 quit"
