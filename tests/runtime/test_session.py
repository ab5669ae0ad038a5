"""The session (simulator → store → core → binds) and actions through the simulator actuator."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpctop.actions.requests import ActionKind, ActionRequest, ReadOnlyActuator
from hpctop.actions.simulator import SimulatorActuator
from hpctop.errors import ActionRefused
from hpctop.model.objects import JobKey
from hpctop.model.states import JobState
from hpctop.runtime.session import Session, scenario_session
from hpctop.sources.scenario import parse_scenario
from hpctop.sources.simulator import EPOCH, SimulatedCluster
from tests.sources.test_simulator import BASE, JOBS, jobs_by_name, small_session
from tests.sources.test_simulator_firstfit import first_fit

TRAIN: JobKey = ("default", "Job", "train")
WAITING: JobKey = ("default", "Job", "waiting")
SERVE: JobKey = ("default", "Deployment", "serve")


def act(session: Session, kind: ActionKind, key: JobKey, value: str | int | None = None) -> str:
    uid = session.snapshot.jobs[key].uid
    return session.actuator.execute(ActionRequest(kind, key, uid, value)).message


def test_hold_and_release_a_running_gang() -> None:
    session = small_session(BASE + JOBS)
    assert session.snapshot.jobs[TRAIN].state == JobState.RUNNING
    preview = session.actuator.preview(ActionRequest(ActionKind.HOLD, TRAIN))
    assert preview.allowed
    assert preview.changes == (
        "Job default/train: spec.suspend false → true",
        "2 running pod(s) deleted (work since start is lost)",
    )
    assert any("suspend" in r for r in preview.requests)
    message = act(session, ActionKind.HOLD, TRAIN)
    assert "held" in message and "spec.suspend false → true" in message
    job = session.snapshot.jobs[TRAIN]
    assert job.state == JobState.HELD and job.pods == () and job.start_time is None
    assert session.cluster.gpu_free("dgx-0") == [1000] * 8  # resources freed, snapshot refreshed
    assert session.result.plans is not None
    with pytest.raises(ActionRefused, match="already held"):
        act(session, ActionKind.HOLD, TRAIN)
    act(session, ActionKind.RELEASE, TRAIN)
    assert session.snapshot.jobs[TRAIN].state == JobState.PENDING
    session.step(10)
    assert session.snapshot.jobs[TRAIN].state == JobState.RUNNING


def test_release_only_a_held_job() -> None:
    session = small_session(BASE + JOBS)
    preview = session.actuator.preview(ActionRequest(ActionKind.RELEASE, TRAIN))
    assert not preview.allowed and "is not held" in preview.refusal
    with pytest.raises(ActionRefused, match="is not held"):
        act(session, ActionKind.RELEASE, TRAIN)
    act(session, ActionKind.RELEASE, WAITING)
    job = session.snapshot.jobs[WAITING]
    assert job.state == JobState.PENDING and len(job.pending_pods) == 1
    act(session, ActionKind.CANCEL, SERVE)  # frees the T4s
    session.step(10)
    assert session.snapshot.jobs[WAITING].state == JobState.RUNNING


def test_cancel_leaves_a_tombstone_and_frees_the_nodes() -> None:
    session = small_session(BASE + JOBS)
    message = act(session, ActionKind.CANCEL, TRAIN)
    assert "cancelled" in message and "2 running pod(s) deleted" in message
    assert session.snapshot.jobs[TRAIN].state == JobState.CANCELLED
    assert TRAIN not in session.snapshot.workloads
    assert session.cluster.gpu_free("dgx-1") == [1000] * 8
    with pytest.raises(ActionRefused, match="no longer exists"):
        session.actuator.execute(ActionRequest(ActionKind.CANCEL, TRAIN))
    act(session, ActionKind.CANCEL, SERVE)
    assert session.snapshot.jobs[SERVE].state == JobState.CANCELLED


def test_cancel_refuses_a_finished_job_and_a_replaced_uid() -> None:
    session = small_session(BASE + JOBS)
    preview = session.actuator.preview(ActionRequest(ActionKind.CANCEL, TRAIN, job_uid="not-the-uid"))
    assert not preview.allowed and "was replaced" in preview.refusal
    session.advance_to_elapsed(150)
    assert session.snapshot.jobs[TRAIN].state == JobState.COMPLETED
    with pytest.raises(ActionRefused, match="already finished"):
        act(session, ActionKind.CANCEL, TRAIN)


def test_requeue_keeps_name_and_uid_and_counts_restarts() -> None:
    session = small_session(BASE + JOBS)
    before = session.snapshot.jobs[TRAIN]
    message = act(session, ActionKind.REQUEUE, TRAIN)
    assert "restart count 0 → 1" in message
    after = session.snapshot.jobs[TRAIN]
    assert after.uid == before.uid and after.name == before.name
    assert after.state == JobState.PENDING and after.restart_count == 1
    assert set(after.pods).isdisjoint(before.pods)  # new pods
    session.step(10)
    job = session.snapshot.jobs[TRAIN]
    assert job.state == JobState.RUNNING and job.restart_count == 1
    with pytest.raises(ActionRefused, match="release it instead"):
        act(session, ActionKind.REQUEUE, WAITING)
    with pytest.raises(ActionRefused, match="cannot be suspended"):
        act(session, ActionKind.REQUEUE, SERVE)


BLOCKED = """
[[jobs]]
name = "blocked"
queue = "root.research"
submit = 1
duration = 100
per_member = { gpu = 8, cpu = "1", memory = "1Gi" }
priority = 100
"""


def test_priority_and_move_recreate_pending_pods_and_refuse_running_ones() -> None:
    session = small_session(BASE + JOBS + BLOCKED)
    session.step(10)
    key: JobKey = ("default", "Job", "blocked")
    job = session.snapshot.jobs[key]
    assert job.state == JobState.PENDING and job.priority_value == 100
    preview = session.actuator.preview(ActionRequest(ActionKind.PRIORITY, key, value=5000))
    assert (
        preview.allowed
        and "priority 100 (priority-100) → 5000 (priority-5000 (new PriorityClass))" in preview.changes[0]
    )
    assert "cannot change priority in place" in preview.changes[1]
    act(session, ActionKind.PRIORITY, key, 5000)
    job2 = session.snapshot.jobs[key]
    assert job2.priority_value == 5000 and job2.priority_class == "priority-5000"
    assert set(job2.pods).isdisjoint(job.pods) and job2.uid == job.uid
    assert "priority-5000" in session.snapshot.priority_classes
    act(session, ActionKind.MOVE, key, "root.prod")
    assert session.snapshot.jobs[key].queue == "root.prod"
    with pytest.raises(ActionRefused, match="does not exist"):
        act(session, ActionKind.MOVE, key, "root.nowhere")
    with pytest.raises(ActionRefused, match=r"already in root\.prod"):
        act(session, ActionKind.MOVE, key, "root.prod")
    with pytest.raises(ActionRefused, match="running pod"):
        act(session, ActionKind.PRIORITY, TRAIN, 1)
    with pytest.raises(ActionRefused, match="running pod"):
        act(session, ActionKind.MOVE, TRAIN, "root.prod")
    with pytest.raises(ActionRefused, match="not a whole number"):
        session.actuator.execute(ActionRequest(ActionKind.PRIORITY, key, value="high"))
    # a held job: only the template changes
    act(session, ActionKind.PRIORITY, WAITING, 1000)
    act(session, ActionKind.RELEASE, WAITING)
    assert session.snapshot.jobs[WAITING].priority_value == 1000
    assert not session.store.skipped


def test_read_only_session_refuses_everything() -> None:
    scenario = parse_scenario(BASE + JOBS)
    session = Session(SimulatedCluster(scenario), scenario.policy, "t", read_only=True, scheduler=first_fit)
    assert isinstance(session.actuator, ReadOnlyActuator) and session.read_only
    preview = session.actuator.preview(ActionRequest(ActionKind.CANCEL, TRAIN))
    assert not preview.allowed
    with pytest.raises(ActionRefused, match="read-only"):
        session.actuator.execute(ActionRequest(ActionKind.CANCEL, TRAIN))
    assert session.snapshot.jobs[TRAIN].state == JobState.RUNNING


def test_actuator_without_a_session() -> None:
    scenario = parse_scenario(BASE + JOBS)
    cluster = SimulatedCluster(scenario)
    from hpctop.model.store import Store

    store = Store(clock=lambda: cluster.now)
    for kind, raw in cluster.initial_events():
        store.apply_raw(kind, raw)
    calls: list[int] = []
    actuator = SimulatorActuator(cluster, store, on_change=lambda: calls.append(1))
    assert not actuator.read_only
    result = actuator.execute(ActionRequest(ActionKind.HOLD, TRAIN))
    assert result.ok and result.at == EPOCH and calls == [1]
    assert store.snapshot().jobs[TRAIN].state == JobState.HELD


def state_of(session: Session) -> list[tuple[object, ...]]:
    snap = session.snapshot
    return sorted(
        (j.key, j.state.value, j.nodes, j.start_time, j.end_time, j.pods) for j in snap.jobs.values()
    ) + sorted((p.key, p.node_name, p.gpu_indices, p.phase) for p in snap.pods.values())


def test_same_state_in_one_step_or_many() -> None:
    one = small_session(BASE + JOBS, seed=4)
    many = small_session(BASE + JOBS, seed=4)
    one.advance_to_elapsed(137)
    for _ in range(137 * 4):
        many.step(0.25)
    assert one.now == many.now == EPOCH + 137
    assert state_of(one) == state_of(many)
    other = small_session(BASE + JOBS, seed=5)
    other.advance_to_elapsed(137)
    assert state_of(other) != state_of(one)  # the seed matters (pod names)


def test_scenario_session_from_file_with_the_real_core(tmp_path: Path) -> None:
    path = tmp_path / "lab.toml"
    path.write_text(BASE + "[simulation]\nseed = 9\n" + JOBS, encoding="utf-8")
    session = scenario_session(path, at=30)
    assert session.source_name == "scenario:lab.toml"
    assert session.cluster.seed == 9 and session.elapsed == 30
    jobs = jobs_by_name(session)
    assert jobs["train"].state == JobState.RUNNING
    assert jobs["waiting"].state == JobState.HELD
    assert not session.store.skipped and not session.bind_failures
    session.advance_to_elapsed(700)
    jobs = jobs_by_name(session)
    assert jobs["train"].state == JobState.COMPLETED and jobs["cpu-only"].state == JobState.COMPLETED
    # the service holds both T4s, so the T4-only share waits, and the core says why
    assert jobs["share"].state == JobState.PENDING
    reason = session.result.plans[jobs["share"].key].reason
    assert reason is not None and reason.code.value in ("Resources", "Constraints")
    assert session.result.now == session.now


def test_small_steps_reuse_the_schedule_of_the_last_scheduling_point() -> None:
    session = small_session(BASE + JOBS)
    session.advance_to_elapsed(200)  # everything that will run runs; nothing changes for a while
    runs = session.schedule_runs
    for _ in range(8):
        session.step(1)
    assert session.result.now == session.now == EPOCH + 208
    assert session.schedule_runs - runs <= 1  # at most the scheduling point at t = 200+
    session.refresh()
    assert session.schedule_runs - runs <= 2
