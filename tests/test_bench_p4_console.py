"""P4's console path (``bench.p4_cold._console_start``) runs the console's own sync, checked.

Why: the verdict's ``_cold_start`` lists with ``list_once`` beside the session, so the session
never sees its lists end: it never freezes the heap (what the console does at the sync) and the
console never ticks while the lists stream in (where every row was first built without plans,
then again with them). ``_console_start`` times the session's own reflectors against the same
page server, the tick worker running meanwhile; this runs it at a tiny size and shows that the
rows were built while listing and that the count check holds (a missing pod fails it).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest
from aiohttp import web

from bench import p4_cold
from hpctop.tui import rows


def test_console_start_lists_ticks_and_paints_every_job(monkeypatch: pytest.MonkeyPatch) -> None:
    built = {"make": 0, "replan": 0}
    make, replan = rows.make_row, rows.replan_row

    def counting_make(job, plan):  # type: ignore[no-untyped-def]
        built["make"] += 1
        return make(job, plan)

    def counting_replan(row, job, plan):  # type: ignore[no-untyped-def]
        built["replan"] += 1
        return replan(row, job, plan)

    monkeypatch.setattr(rows, "make_row", counting_make)
    monkeypatch.setattr(rows, "replan_row", counting_replan)
    monkeypatch.setattr(p4_cold, "PAGE", 50)  # six pages of pods
    pages = p4_cold.payload(300, 10)
    answer = p4_cold.PageServer._list

    async def slow_list(self: p4_cold.PageServer, request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(0.05)  # a page takes a while: the console ticks between pages
        return await answer(self, request)

    monkeypatch.setattr(p4_cold.PageServer, "_list", slow_list)

    async def once(expected: int) -> float:
        with tempfile.TemporaryDirectory() as tmp:
            async with p4_cold.PageServer(pages) as server:
                config = p4_cold.kubeconfig(Path(tmp), server.url)
                return await p4_cold._console_start(config, expected, 10, tick=0.0)

    seconds = asyncio.run(once(300))
    assert seconds > 0
    # every job's row built once from nothing: the listing views' rows, then the first core
    # run's re-planned (tick=0: a tick at every poll, so listing views between the pages)
    assert built["make"] == 300
    assert 0 < built["replan"] <= 300
    with pytest.raises(RuntimeError, match="expected 301 jobs"):
        asyncio.run(once(301))


def test_the_verdict_times_the_console_path_and_prints_the_list_once_path_beside(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 16, session 17: P4's verdict is what a user waits for (``_console_start``); the
    ``list_once`` path (``_cold_start``) is printed beside it. Each side answers its own time here,
    so the line shows which side its figure is."""
    calls: list[str] = []

    async def console(config: str, expected: int, nodes: int | None = None) -> float:
        calls.append("console")
        return 3.0

    async def beside(config: str, expected: int, nodes: int | None = None) -> float:
        calls.append("beside")
        return 5.0

    monkeypatch.setattr(p4_cold, "_console_start", console)
    monkeypatch.setattr(p4_cold, "_cold_start", beside)
    monkeypatch.setattr(p4_cold, "_loads_all", lambda pages, mode="off": (2.0 if mode == "off" else 4.0, 12))
    verdict = p4_cold.run(10, 2, repeats=2)
    assert calls == ["console", "beside", "console", "beside"]
    line = verdict.line()
    assert "3.00 s to a painted jobs pane = 1.5x orjson.loads, GC off (2.00 s)" in line
    assert "list_once beside the session and one tick 5.00 s (2.5x)" in line
    assert verdict.passed


def test_the_p4_profile_is_of_the_verdicts_path() -> None:
    """``profile_misses p4`` profiles what the verdict times (the console path); ``p4b`` the
    ``list_once`` path printed beside it."""
    from bench import profile_misses

    console, beside = profile_misses.p4(100), profile_misses.p4b(100)
    assert "(_console_start)" in console and "(_cold_start)" not in console
    assert "(_cold_start)" in beside and "(_console_start)" not in beside
