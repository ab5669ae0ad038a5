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


def test_p5_same_sort_finds_each_way_two_sorts_can_disagree() -> None:
    """P5's check that hpctop's order is DataTable's: agreeing orders pass, with ties broken each
    by its own input order; a wrong key sequence, a tie run holding other rows, or a tie out of
    its side's input order is reported."""
    from bench.p5_view import same_sort

    text = ["b", "a", "b", "a"]
    ours_tie = [0, 1, 2, 3]  # ours added rows 0, 1, 2, 3
    their_tie = [3, 2, 1, 0]  # theirs added them 3, 2, 1, 0
    assert same_sort([1, 3, 0, 2], [3, 1, 2, 0], text, ours_tie, their_tie) is None
    assert "key" in str(same_sort([0, 2, 1, 3], [3, 1, 2, 0], text, ours_tie, their_tie))
    assert "input order" in str(same_sort([3, 1, 0, 2], [3, 1, 2, 0], text, ours_tie, their_tie))
    assert "different rows" in str(same_sort([1, 1, 0, 2], [3, 1, 2, 0], text, ours_tie, their_tie))
    assert "rows against" in str(same_sort([1, 3, 0], [3, 1, 2, 0], text, ours_tie, their_tie))


def test_p5_fails_when_the_panes_sort_is_not_datatables(monkeypatch: pytest.MonkeyPatch) -> None:
    """A jobs pane sorting USER by the wrong field makes P5 raise (its line: not measured)."""
    import asyncio
    from operator import attrgetter

    from bench import p5_view
    from hpctop.tui import jobindex

    monkeypatch.setitem(jobindex._ATTR_KEYS, "USER", attrgetter("queue"))
    with pytest.raises(RuntimeError, match="sort cold by USER"):
        asyncio.run(p5_view._versus(200, 1))
