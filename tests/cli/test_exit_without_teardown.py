"""The real process ends without the interpreter's teardown once the console or a table is done (Q1).

Why a subprocess: the fast way out is ``os._exit``, taken only by ``main()`` without ``argv`` (the
real ``hpctop`` process). The script replaces the console with one that writes to stdout without
flushing and registers an ``atexit`` handler, and holds an object whose ``__del__`` leaves a mark
when it is freed after ``main()`` returns: the output and the ``atexit`` mark must be there
(flushed, run), the ``__del__`` mark must not (``main()`` never returned: nothing was freed). The
same script calling ``main([])`` (a caller in the process) gets the status back and frees what it
holds, which shows that the marks tell the two apart.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = r"""
import atexit, pathlib, sys
import hpctop.cli as cli

marks, mode = pathlib.Path(sys.argv[1]), sys.argv[2]


class Held:
    def __del__(self):
        (marks / "teardown").write_text("freed")


HELD = Held()


def console(args, settings, out):
    out.write("console ran")  # no newline, no flush: what the fast exit must flush
    atexit.register(lambda: (marks / "atexit").write_text("ran"))
    return 7


cli._run_console = console
sys.argv = ["hpctop"]
status = cli.main() if mode == "real" else cli.main([])
del HELD  # a caller that got the status back frees what it holds
raise SystemExit(status)
"""


def _run(tmp_path: Path, mode: str) -> tuple[int, str, set[str]]:
    marks = tmp_path / mode
    marks.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(marks), mode],
        capture_output=True,
        text=True,
        timeout=60,
        env={"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"), "PATH": "/usr/bin:/bin"},
    )
    assert not done.stderr, done.stderr
    return done.returncode, done.stdout, {p.name for p in marks.iterdir()}


def test_the_real_process_skips_the_teardown_but_flushes_and_runs_atexit(tmp_path: Path) -> None:
    code, out, marks = _run(tmp_path, "real")
    assert code == 7
    assert out == "console ran"
    assert marks == {"atexit"}  # atexit ran; no __del__ of the heap at teardown


def test_a_caller_in_the_process_gets_the_status_and_the_usual_teardown(tmp_path: Path) -> None:
    code, out, marks = _run(tmp_path, "argv")
    assert code == 7
    assert out == "console ran"
    assert marks == {"atexit", "teardown"}
