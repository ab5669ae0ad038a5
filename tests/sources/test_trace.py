"""The demo scenario built from the openb trace: faithful to the CSVs, seeded additions, and it runs."""

from __future__ import annotations

import csv
import gzip
import io
import time
from collections import Counter
from importlib import resources

import pytest

from hpctop.model.states import JobState
from hpctop.runtime.session import demo_session
from hpctop.sources.simulator import trace
from hpctop.sources.simulator.trace import openb_scenario
from tests.sources.test_simulator_firstfit import first_fit


def packaged_csv(name: str) -> list[dict[str, str]]:
    data = resources.files("hpctop.sources.simulator").joinpath("data", name).read_bytes()
    return list(csv.DictReader(io.StringIO(gzip.decompress(data).decode())))


def test_packaged_data_is_readable_and_credited() -> None:
    folder = resources.files("hpctop.sources.simulator").joinpath("data")
    readme = folder.joinpath("README.md").read_text(encoding="utf-8")
    assert "Beware of Fragmentation" in readme and "alibaba/clusterdata" in readme
    assert len(packaged_csv(trace.NODE_FILE)) == 1523
    assert len(packaged_csv(trace.POD_FILE)) == 8152


def test_all_nodes_with_their_gpus() -> None:
    rows = packaged_csv(trace.NODE_FILE)
    sc = openb_scenario(1)
    assert len(sc.nodes) == 1523
    assert sum(n.gpus for n in sc.nodes) == sum(int(r["gpu"]) for r in rows) == 6212
    by_name = {n.name: n for n in sc.nodes}
    for row in rows:
        node = by_name[row["sn"]]
        assert node.gpus == int(row["gpu"]) and node.cpu == int(row["cpu_milli"])
        assert node.memory == int(row["memory_mib"]) * 1024**2
        assert node.gpu_model == (row["model"] or None)
    assert Counter(n.gpu_model for n in sc.nodes)["G2"] == 549


def test_every_task_is_a_job_member() -> None:
    rows = packaged_csv(trace.POD_FILE)
    sc = openb_scenario(1)
    from_trace = [j for j in sc.jobs if ("hpctop.io/synthetic", "training-gang") not in j.labels]
    synthetic = [j for j in sc.jobs if ("hpctop.io/synthetic", "training-gang") in j.labels]
    assert len(synthetic) == trace.TRAINING_GANGS
    assert all(j.gpu_models and j.gpu_models[0] in trace.TRAINING_MODELS for j in synthetic)
    assert sum(j.members for j in from_trace) == len(rows) == 8152
    assert sum(j.per_member.gpu * j.members for j in from_trace) == sum(
        int(r["num_gpu"]) * int(r["gpu_milli"] or 0) for r in rows
    )
    tasks = {j.name: j for j in sc.jobs}
    # openb-pod-0022 from SCHEDULERS.md §3.2: 0.22 of a T4, 4 CPUs, BE
    job = tasks["openb-pod-0022"]
    assert job.gpu_milli == 220 and job.gpu_count == 1 and job.gpu_models == ("T4",) and job.cpu == 4000
    assert job.priority_class == "best-effort"
    assert {j.kind for j in sc.jobs} == {"batch", "service"}
    assert sc.notes["gangs"] >= 3 and 5 <= sc.notes["services"] <= 12
    gangs = [j for j in sc.jobs if j.kind == "batch" and j.members > 1]
    assert all(j.gpu_count > 1 and j.min_members == j.members for j in gangs)
    assert 10 <= sum(j.held for j in sc.jobs) <= 100
    assert sum(j.fail for j in sc.jobs) > 1000  # the trace's Failed tasks
    assert max(j.duration or 0 for j in sc.jobs) <= trace.MAX_DURATION
    assert max(j.submit for j in sc.jobs) == pytest.approx((12_901_761 - trace.T0) // trace.COMPRESSION)


def test_tenants_quotas_and_priority_classes() -> None:
    sc = openb_scenario(1)
    queues = {q.path: q for q in sc.policy.queues}
    leaves = [q for q in queues.values() if q.path.count(".") == 2]
    assert len(leaves) == 7 and {q.path.split(".")[1] for q in leaves} == {"research", "product", "platform"}
    assert sum(q.guaranteed.gpu for q in leaves) == 6212 * 1000
    assert all(q.max is None or q.max.gpu >= q.guaranteed.gpu for q in leaves)
    assert {j.queue for j in sc.jobs} == {q.path for q in leaves}
    assert {(p.name, p.value) for p in sc.priority_classes} >= {
        ("latency-sensitive", 1000),
        ("best-effort", 100),
    }
    assert all(j.namespace == j.queue.rsplit(".", 1)[1] for j in sc.jobs)


def test_seeded_and_deterministic() -> None:
    a, b = openb_scenario(1), openb_scenario(2)
    assert openb_scenario(1) is a  # cached; the scenario is frozen
    assert [j.queue for j in a.jobs] != [j.queue for j in b.jobs]
    trace.openb_scenario.cache_clear()
    assert openb_scenario(1).jobs == a.jobs


def test_time_mapping() -> None:
    assert trace.virtual_time(0) == 0 and trace.virtual_time(trace.T0) == 0
    assert trace.virtual_time(trace.T0 + 86_400) == 120  # a trace day is two virtual minutes
    assert trace.run_time(0) == trace.MIN_DURATION and trace.run_time(10**7) == trace.MAX_DURATION
    assert trace.time_limit(540) == 600 and trace.time_limit(601) == 1800


def test_demo_runs_a_while_with_the_real_core() -> None:
    started = time.perf_counter()
    session = demo_session(seed=1, at=300)
    assert session.source_name == "demo" and session.elapsed == 300
    states = Counter(j.state for j in session.snapshot.jobs.values())
    assert states[JobState.RUNNING] > 200 and states[JobState.COMPLETED] > 0
    assert not session.store.skipped and not session.bind_failures
    assert len(session.snapshot.nodes) == 1523
    assert time.perf_counter() - started < 20


def test_demo_is_deterministic_at_3600() -> None:
    a = demo_session(seed=1, at=3600, scheduler=first_fit)
    b = demo_session(seed=1, at=3600, scheduler=first_fit)
    for s in (a, b):
        assert not s.store.skipped and not s.bind_failures
    ja, jb = a.snapshot.jobs, b.snapshot.jobs
    assert ja.keys() == jb.keys()
    assert all(ja[k].state == jb[k].state and ja[k].nodes == jb[k].nodes for k in ja)
    assert a.snapshot.pods.keys() == b.snapshot.pods.keys()
    assert all(a.snapshot.pods[k].gpu_indices == b.snapshot.pods[k].gpu_indices for k in a.snapshot.pods)
    states = Counter(j.state for j in ja.values())
    assert states[JobState.RUNNING] > 1000 and states[JobState.HELD] > 10


@pytest.mark.slow
def test_whole_trace_through_the_core() -> None:
    """Every arrival and every run to the end, with the real core; prints virtual seconds per second.

    Reproduce: ``.venv/bin/pytest -q -m slow tests/sources/test_trace.py -s``.
    """
    session = demo_session(seed=1)
    started = time.perf_counter()
    cpu = time.process_time()

    def busy() -> bool:
        jobs = session.snapshot.jobs.values()
        return any(j.kind == "batch" and j.state == JobState.RUNNING for j in jobs)

    while (session.cluster.arrivals_left or busy()) and session.elapsed < 40_000:
        session.step(600)
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu
    end = session.elapsed
    states = Counter(j.state.value for j in session.snapshot.jobs.values())
    print(
        f"\nwhole trace: {end:.0f} virtual s in {wall:.1f} s wall ({cpu:.1f} s CPU) = {end / wall:.0f} "
        f"virtual s per real s; {session.cluster.events_emitted} events, {session.binds} binds, "
        f"{session.schedule_runs} core runs ({session.schedule_seconds:.1f} s in the core), "
        f"{session.skipped_cycles} scheduling points skipped (nothing fits); {dict(states)}"
    )
    assert not session.store.skipped and not session.bind_failures
    assert session.elapsed < 40_000
    live = [j for j in session.snapshot.jobs.values() if j.kind == "batch" and not j.state.is_finished]
    assert all(j.state in (JobState.HELD, JobState.PENDING) for j in live)
    assert states["COMPLETED"] > 6000 and states["FAILED"] > 1500


@pytest.mark.slow
def test_skipping_impossible_cycles_changes_no_decision_on_the_trace() -> None:
    """To past t = 10,000, where only jobs that fit nowhere wait: the same binds with and without skipping.

    Skipped points are where ``placement_possible`` is False; a session told that a bind is always
    possible runs the core at every one of them and must reach the same cluster.
    """
    skipping = demo_session(seed=1)
    always = demo_session(seed=1)
    always.cluster.placement_possible = lambda: True  # type: ignore[method-assign]
    for t in (2_400, 6_000, 10_500):
        skipping.advance_to_elapsed(t)
        always.advance_to_elapsed(t)
        assert skipping.cluster.events_emitted == always.cluster.events_emitted
        a, b = skipping.snapshot, always.snapshot
        assert a.pods.keys() == b.pods.keys()
        assert all(a.pods[k].node_name == b.pods[k].node_name for k in a.pods)
        assert all(a.pods[k].gpu_indices == b.pods[k].gpu_indices for k in a.pods)
    assert skipping.skipped_cycles > 100 and skipping.schedule_runs < always.schedule_runs
    assert skipping.result.pending_order == always.result.pending_order
