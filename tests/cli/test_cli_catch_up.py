"""``--at`` on a terminal: the catch-up says how far it is, and is the same run as one advance.

Why: ``hpctop --demo --at 7200`` left the terminal silent for ~90 s while the simulation ran.
:func:`hpctop.cli._catch_up` runs it in stretches that end on scheduling points and rewrites one
line on stderr; the answer must not move by a byte for it (decisions must not change).
"""

from __future__ import annotations

import io

import orjson

from hpctop import cli
from hpctop.runtime.session import Session, demo_session
from hpctop.tables import jobs as jobs_table

AT = 900.0


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _answer(session: Session) -> bytes:
    rows = jobs_table.job_rows(session.snapshot, session.result, include_finished=True)
    return orjson.dumps(rows, option=orjson.OPT_SORT_KEYS)


def test_catch_up_in_stretches_is_the_same_run_and_says_how_far() -> None:
    at_once = demo_session(seed=1, at=AT)
    stepped = demo_session(seed=1)
    terminal = _Terminal()
    cli._catch_up(stepped, AT, terminal)
    assert stepped.elapsed == at_once.elapsed == AT
    assert _answer(stepped) == _answer(at_once)
    said = terminal.getvalue()
    assert "simulating to t=900 s" in said and said.rstrip().endswith("(100 %)"), said[-200:]
    assert said.endswith("\n"), "the console starts on a line of its own"


def test_catch_up_off_a_terminal_prints_nothing() -> None:
    quiet = io.StringIO()
    session = demo_session(seed=1)
    cli._catch_up(session, 60.0, quiet)
    assert session.elapsed == 60.0 and quiet.getvalue() == ""
