"""``scheduling.inputs.same_inputs``: a refresh that changes nothing the core reads skips the core.

Why these tests: the live console keeps its last result (only ``now`` moved) when a new
snapshot changes nothing the core reads; a field the core does read but the comparison missed
would leave stale plans on screen. So over random event sequences (pods restarted, relabelled,
given a new resourceVersion; pods finished, moved, resized; jobs re-queued, started; nodes
cordoned; entries deleted) every snapshot is scheduled from scratch, and whenever
``same_inputs`` says "unchanged" the full recompute must equal the previous one. The console
test counts core runs through a real ``LiveConsoleSession`` fed with watch-event bytes.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.live_app import live_session
from bench.p6_core import NOW, cluster, policy
from bench.payloads import pod_updates
from hpctop.model.states import JobState
from hpctop.model.store import Snapshot
from hpctop.scheduling.core import schedule
from hpctop.scheduling.inputs import same_inputs
from hpctop.scheduling.memo import Memo
from hpctop.scheduling.types import ScheduleResult

BASE = cluster(48, 150, seed=3)
POLICY = policy()
#: events the core never reads (the left side of the property)
IDLE_KINDS = ("restart", "resource_version", "pod_labels", "job_restart", "job_backfilled")
KINDS = (
    *IDLE_KINDS,
    "finish",
    "move",
    "resize",
    "requeue",
    "start",
    "cordon",
    "delete_pod",
    "delete_job",
    "one_per_node",
)


def _decisions(result: ScheduleResult) -> tuple[Any, ...]:
    return (
        result.cluster,
        result.partitions,
        tuple(result.queues.items()),
        tuple(result.plans.items()),
        result.placements,
        result.pending_order,
    )


def _with(snap: Snapshot, pods: dict[Any, Any], jobs: dict[Any, Any], nodes: dict[Any, Any]) -> Snapshot:
    return dataclasses.replace(
        snap,
        version=snap.version + 1,
        pods=MappingProxyType(pods),
        jobs=MappingProxyType(jobs),
        nodes=MappingProxyType(nodes),
    )


def _event(snap: Snapshot, kind: str, pick: int) -> Snapshot:
    pods, jobs, nodes = dict(snap.pods), dict(snap.jobs), dict(snap.nodes)
    pod_key = sorted(pods)[pick % len(pods)]
    pod = pods[pod_key]
    job_key = sorted(jobs)[pick % len(jobs)]
    job = jobs[job_key]
    if kind == "restart":
        pods[pod_key] = dataclasses.replace(pod, restart_count=pod.restart_count + 1)
    elif kind == "resource_version":
        pods[pod_key] = dataclasses.replace(pod, resource_version=pod.resource_version + "1")
    elif kind == "pod_labels":
        pods[pod_key] = dataclasses.replace(pod, labels={**pod.labels, "touched": str(pick)})
    elif kind == "job_restart":
        jobs[job_key] = dataclasses.replace(job, restart_count=job.restart_count + 1, labels={"x": "y"})
    elif kind == "job_backfilled":
        jobs[job_key] = dataclasses.replace(job, backfilled=not job.backfilled)
    elif kind == "one_per_node":
        jobs[job_key] = dataclasses.replace(job, one_per_node=not job.one_per_node)
    elif kind == "finish":
        pods[pod_key] = dataclasses.replace(pod, phase="Succeeded")
    elif kind == "move":
        pods[pod_key] = dataclasses.replace(pod, node_name=sorted(nodes)[pick % len(nodes)])
    elif kind == "resize":
        pods[pod_key] = dataclasses.replace(pod, requests=pod.requests.scale(2))
    elif kind == "requeue":
        jobs[job_key] = dataclasses.replace(
            job, queue="root.batch" if job.queue != "root.batch" else "root.prod.serve"
        )
    elif kind == "start":
        jobs[job_key] = dataclasses.replace(job, submit_time=job.submit_time - 3600)
    elif kind == "cordon":
        name = sorted(nodes)[pick % len(nodes)]
        nodes[name] = dataclasses.replace(nodes[name], unschedulable=not nodes[name].unschedulable)
    elif kind == "delete_pod":
        del pods[pod_key]
    elif kind == "delete_job":
        del jobs[job_key]
    return _with(snap, pods=pods, jobs=jobs, nodes=nodes)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 10_000)), min_size=1, max_size=6))
def test_unchanged_inputs_give_the_full_recompute(events: list[tuple[str, int]]) -> None:
    snap = BASE
    before = _decisions(schedule(snap, POLICY, NOW, memo=Memo()))
    for kind, pick in events:
        after_snap = _event(snap, kind, pick)
        after = _decisions(schedule(after_snap, POLICY, NOW, memo=Memo()))
        if same_inputs(snap, after_snap):
            assert after == before, f"{kind} was judged unchanged but moved a decision"
        snap, before = after_snap, after


def test_idle_events_are_unchanged_and_decisive_ones_are_not() -> None:
    """The property above is not vacuous: each idle kind is judged unchanged, every other kind changed."""
    pick = next(
        i
        for i in range(1000)
        if BASE.pods[sorted(BASE.pods)[i % len(BASE.pods)]].node_name is not None
        and BASE.jobs[sorted(BASE.jobs)[i % len(BASE.jobs)]].state == JobState.PENDING
    )
    for kind in KINDS:
        assert same_inputs(BASE, _event(BASE, kind, pick)) == (kind in IDLE_KINDS), kind


def test_console_skips_the_core_for_a_restart_and_runs_it_for_a_finish() -> None:
    session = live_session(64, 16)
    runs = session.schedule_runs
    session.store.apply_raw("Pod", pod_updates(64, restarts=1)[5])  # a restart: nothing the core reads
    session.refresh()
    assert (session.schedule_runs, session.core_runs_skipped) == (runs, 1)
    assert session.snapshot.pods[("team-05", "train-00000-worker-5")].restart_count == 1  # rows are fresh
    finished = orjson.loads(pod_updates(64, restarts=1, rv_base=9_000_000)[5])
    finished["object"]["status"]["phase"] = "Succeeded"
    session.store.apply_raw("Pod", orjson.dumps(finished))
    session.refresh()
    assert (session.schedule_runs, session.core_runs_skipped) == (runs + 1, 1)
