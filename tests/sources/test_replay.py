"""Recordings of the simulator and their replay: same cluster, any pace, cut files still readable."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import orjson
import pytest

from hpctop.actions.requests import ActionKind, ActionRequest
from hpctop.cli import main
from hpctop.errors import ActionRefused
from hpctop.model.store import Store
from hpctop.runtime.recording import ReplaySession, record_simulation
from hpctop.runtime.session import Session, demo_session
from hpctop.sources.record import Recorder
from hpctop.sources.replay import RecordingError
from hpctop.sources.scenario import parse_scenario
from hpctop.sources.simulator.cluster import EPOCH, SimulatedCluster
from tests.sources.test_simulator import BASE, JOBS

SMALL_TEXT = BASE + JOBS
SMALL = parse_scenario(SMALL_TEXT, name="t")


def same_cluster(a: Store, b: Store) -> bool:
    return a.pods == b.pods and a.nodes == b.nodes and a.workloads == b.workloads


def fresh(at: float) -> Session:
    session = Session(SimulatedCluster(SMALL, seed=1), SMALL.policy, "scenario:t.toml")
    session.advance_to_elapsed(at)
    return session


def test_replay_reproduces_the_recorded_simulation(tmp_path: Path) -> None:
    path = tmp_path / "small.jsonl.gz"
    stats, recorded = record_simulation(path, SMALL, seed=1, source_name="scenario:t.toml", until=300)
    assert stats.events > 20
    replay = ReplaySession(path)
    assert replay.now == EPOCH  # the clock is the simulation's
    replay.advance_to_elapsed(120)
    assert same_cluster(replay.store, fresh(120).store)  # mid-way, at a recording step
    replay.advance_to_elapsed(300)
    assert same_cluster(replay.store, recorded.store)
    assert replay.skipped_lines == 0 and replay.finished
    states = {j.name: j.state for j in replay.snapshot.jobs.values()}
    assert states == {j.name: j.state for j in recorded.snapshot.jobs.values()}


def test_demo_recording_replays_the_demo(tmp_path: Path) -> None:
    from hpctop.sources.simulator.trace import openb_scenario

    path = tmp_path / "demo.jsonl.gz"
    record_simulation(path, openb_scenario(1), seed=1, source_name="demo", until=300)
    replay = ReplaySession(path)
    replay.advance_to_elapsed(300)
    demo = demo_session(seed=1, at=300)
    assert len(replay.store.nodes) == 1523
    assert same_cluster(replay.store, demo.store)


def test_cli_record_and_replay_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SMALL_TEXT)
    path = tmp_path / "rec.jsonl.gz"
    assert main(["record", str(path), "--scenario", str(scenario), "--at", "120"]) == 0
    assert "recorded" in capsys.readouterr().err
    assert main(["jobs", "--replay", str(path), "--at", "120", "-a", "-o", "json"]) == 0
    replayed = {r["name"]: r["state"] for r in json.loads(capsys.readouterr().out)}
    assert main(["jobs", "--scenario", str(scenario), "--at", "120", "-a", "-o", "json"]) == 0
    simulated = {r["name"]: r["state"] for r in json.loads(capsys.readouterr().out)}
    assert replayed == simulated and {"COMPLETED", "FAILED", "PENDING"} <= set(replayed.values())
    assert main(["jobs", "--replay", str(path), "--demo"]) == 2


def _cut_recording(tmp_path: Path) -> tuple[Path, int]:
    """A recording as a kill leaves it: flushed, no gzip trailer, the last line half written."""
    live = tmp_path / "live.jsonl.gz"
    recorder = Recorder(live, "test", started=EPOCH, clock=lambda: 1.0)
    events = SimulatedCluster(SMALL, seed=1).initial_events()
    for kind, raw in events:
        recorder.raw_event(kind, raw)
    recorder._file.write(b'{"t": 2.0, "kind": "Pod", "event": {"type": "ADD')  # cut mid-line
    recorder.flush()
    cut = tmp_path / "cut.jsonl.gz"
    shutil.copyfile(live, cut)  # the copy has no trailer: the recorder was never closed
    recorder.close()
    return cut, len(events)


def test_a_cut_recording_is_read_up_to_the_cut(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cut, count = _cut_recording(tmp_path)
    with pytest.raises(EOFError):
        gzip.decompress(cut.read_bytes())  # really cut: gzip itself refuses it
    replay = ReplaySession(cut)
    replay.run_to_end()
    assert replay.recording.truncated
    assert replay.skipped_lines == 1  # the half line, counted
    assert replay.replayer.applied == count
    assert len(replay.store.nodes) == 4
    assert main(["nodes", "--replay", str(cut), "--at", "10", "-o", "json"]) == 0
    assert "1 line(s) of the recording skipped" in capsys.readouterr().err


def test_not_a_recording(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "x.jsonl"
    plain.write_bytes(b'{"hello": 1}\n')
    with pytest.raises(RecordingError, match="not an hpctop recording"):
        ReplaySession(plain)
    newer = tmp_path / "newer.jsonl"
    newer.write_bytes(orjson.dumps({"hpctop": "recording", "version": 99, "started": 0}) + b"\n")
    with pytest.raises(RecordingError, match="version 99"):
        ReplaySession(newer)
    assert main(["jobs", "--replay", str(tmp_path / "missing.gz")]) == 2
    assert "cannot read recording" in capsys.readouterr().err


async def test_console_plays_a_recording(tmp_path: Path) -> None:
    from hpctop.tui.app import make_app

    path = tmp_path / "small.jsonl.gz"
    _, recorded = record_simulation(path, SMALL, seed=1, source_name="scenario:t.toml", until=300)
    replay = ReplaySession(path, speed=10)
    app = make_app(replay, tick_interval=0)
    async with app.run_test(size=(160, 50)) as pilot:
        assert app.simulated and app.read_only  # a clock to play; nothing to act on
        app.step_now(120)
        await pilot.pause()
        assert replay.elapsed == 120 and app.result.now == EPOCH + 120
        assert same_cluster(replay.store, fresh(120).store)
        app.step_now(1000)
        assert replay.connection == "replay, ended"
        assert same_cluster(replay.store, recorded.store)
        await pilot.press("q")
    with pytest.raises(ActionRefused, match="cannot be changed"):
        replay.actuator.execute(ActionRequest(ActionKind.CANCEL, ("default", "Job", "train")))
