"""The benchmarks at smoke size (``python -m bench --smoke``): every code path runs, every line is whole.

Figures at this size mean nothing and PASS/MISS is not checked; what is checked is that each
benchmark ran (no "not measured" line), printed its goal, a number and a verdict.
"""

from __future__ import annotations

import re
import shutil

import pytest

from bench.__main__ import NAMES, RUNS, run_one

LINE = re.compile(r"^(?P<figure>.*\d.*?)\s+(?P<status>PASS|MISS)(  \(.+\))?$")


@pytest.mark.parametrize("goal", list(RUNS))
def test_smoke_line(goal: str) -> None:
    if goal == "P8" and shutil.which("kubectl") is None:
        pytest.skip("P8 compares with kubectl, which is not installed (apt-get install kubectl)")
    verdict = run_one(goal, "smoke")
    line = verdict.line()
    assert verdict.ran, line
    assert line.startswith(NAMES[goal] + " "), line
    match = LINE.match(line[len(NAMES[goal]) :].strip())
    assert match is not None, line
    assert re.search(r"\d", match["figure"]), line


def test_p8_takes_a_command_the_kernel_killed_as_a_result() -> None:
    """kubectl -o json at 100k pods is killed by the out-of-memory killer on a 23 GiB machine: P8
    records that side as killed (infinite time, the RSS it reached), any other failure raises."""
    import math
    import os
    from pathlib import Path

    from bench.p8_peer import Launcher

    launcher = Launcher()
    try:
        killed = ["sh", "-c", "kill -9 $$"]
        seconds, rss = launcher.time(killed, dict(os.environ), Path(os.devnull), killable=True)
        assert math.isinf(seconds) and rss > 0
        with pytest.raises(RuntimeError, match="exited -9"):
            launcher.time(killed, dict(os.environ), Path(os.devnull))
        with pytest.raises(RuntimeError, match="exited 3"):
            launcher.time(["sh", "-c", "exit 3"], dict(os.environ), Path(os.devnull), killable=True)
    finally:
        launcher.close()
