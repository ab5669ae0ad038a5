"""P7 compares the binds themselves: the session's bind log, and the check that a changed one fails.

Why: P7 replays the demo headless and with the console's view read every 60 s and must show that
reading the view changes no decision. Until session 14 it compared the *number* of binds, which
a run binding the same count to other nodes or at other times passed. The session now records
each job bound whole (``record_binds``), and ``bench.p7_sim.bind_difference`` compares the two
runs' logs and refused binds; these tests hold the log to the store and show that each kind of
difference (node, GPUs, time, a job missing, a refused bind) is caught and fails the line.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench import p7_sim
from bench.p7_sim import Replay, bind_difference
from hpctop.runtime.session import BindFailure, BindRecord, Session, demo_session, session_for
from hpctop.sources.scenario import parse_scenario
from tests.sources.test_simulator import BASE, JOBS


def _session(record: bool) -> Session:
    return session_for(parse_scenario(BASE + JOBS), "test", seed=4, record_binds=record)


def test_the_bind_log_is_what_the_store_holds() -> None:
    session = _session(record=True)
    session.advance_to_elapsed(400)
    log = session.bind_log
    assert log is not None and log, "the scenario binds something"
    pods = session.snapshot.pods
    assert sum(len(r.assignments) for r in log) == session.binds
    for record in log:
        for pod, node, gpus in record.assignments:
            assert pods[pod].node_name == node
            assert tuple(pods[pod].gpu_indices) == gpus
    times = [r.at for r in log]
    assert times == sorted(times) and len(set(times)) > 1  # bound at several scheduling points
    assert _session(record=False).bind_log is None  # not kept unless asked


def test_headless_and_view_runs_of_the_demo_bind_the_same() -> None:
    runs = []
    for read_view in (False, True):
        session = demo_session(seed=1, record_binds=True)
        while session.elapsed < 300:
            session.step(60)
            if read_view:
                _ = session.result
        assert session.bind_log is not None
        runs.append((session.bind_log, list(session.bind_failures)))
    assert len(runs[0][0]) > 100
    assert bind_difference(runs[0], runs[1]) is None


def _log() -> tuple[list[BindRecord], list[BindFailure]]:
    binds = [
        BindRecord(10.0, ("ns", "Job", "a"), ((("ns", "a-0"), "n1", (0, 1)),), False),
        BindRecord(10.0, ("ns", "Job", "b"), ((("ns", "b-0"), "n2", ()), (("ns", "b-1"), "n3", ())), True),
        BindRecord(20.0, ("ns", "Job", "c"), ((("ns", "c-0"), "n1", (2,)),), False),
    ]
    return binds, []


def test_each_kind_of_difference_is_found() -> None:
    binds, failures = _log()
    assert bind_difference((binds, failures), (list(binds), [])) is None
    b = binds[1]
    other_node = replace(b, assignments=(b.assignments[0], (("ns", "b-1"), "n4", ())))
    other_gpus = replace(binds[0], assignments=((("ns", "a-0"), "n1", (0, 2)),))
    cases = {
        "node": [binds[0], other_node, binds[2]],
        "GPUs": [other_gpus, binds[1], binds[2]],
        "time": [binds[0], binds[1], replace(binds[2], at=30.0)],
        "backfill": [binds[0], replace(b, backfilled=False), binds[2]],
        "order": [binds[1], binds[0], binds[2]],
        "missing": binds[:2],
        "extra": [*binds, replace(binds[2], job=("ns", "Job", "d"))],
    }
    for what, changed in cases.items():
        found = bind_difference((binds, failures), (changed, []))
        assert found is not None, what
    refused = BindFailure(20.0, ("ns", "Job", "c"), ("ns", "c-0"), "n1", "no room", 0)
    assert bind_difference((binds, [refused]), (binds, [])) is not None
    assert bind_difference((binds, [refused]), (binds, [replace(refused, node="n2")])) is not None


def test_the_line_fails_when_the_view_run_bound_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    binds, _ = _log()
    moved = [binds[0], binds[1], replace(binds[2], at=30.0)]

    def fake(horizon: float, read_view: bool) -> Replay:
        stats = {"binds": 4.0, "schedule_seconds": 0.1, "events": 10.0, "schedule_runs": 2.0}
        stats["skipped_cycles"] = 0.0
        # the same number of binds on both sides: the count alone would have passed
        return Replay(horizon, 0.1, 0.1, 0.2, stats, [(0.0, horizon, 0.2)], moved if read_view else binds, [])

    monkeypatch.setattr(p7_sim, "_replay", fake)
    monkeypatch.setattr(p7_sim, "demo_session", lambda seed: None)
    with pytest.raises(RuntimeError, match=r"changed the decisions.*bind 2"):
        p7_sim.run(60.0)
    monkeypatch.setattr(p7_sim, "_replay", lambda horizon, read_view: fake(horizon, False))
    assert "the same 3 jobs bound" in p7_sim.run(60.0).line()
