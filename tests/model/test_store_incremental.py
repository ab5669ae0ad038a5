"""The store's incremental job rows against a derivation from scratch, over random event sequences.

Why: a watch event re-derives only the job it touches, and a one-pod job re-derived after a
status change takes the fields its labels and annotations decide (user, queue, partitions) from
the row derived before (``jobs._derive_lone_pod``'s ``previous``, PERFORMANCE.md P3). Whatever
the order of events and snapshots, every row must be the one a store that saw only the final
objects derives (rows of deleted, unfinished jobs are the store's tombstones).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpctop.model import jobs
from hpctop.model.states import JobState
from hpctop.model.store import Store
from tests.model_fixtures import batch_job, event, pod

NOW = 1767225600.0
#: the pods of ns0 belong to the Job ``j`` (which may or may not exist), those of ns1 to no owner
PODS = [("ns0", "p0"), ("ns0", "p1"), ("ns1", "p2"), ("ns1", "p3")]
LABELS = st.dictionaries(
    st.sampled_from(["hpctop.io/user", "user", "queue", "yunikorn.apache.org/queue", "hpctop.io/partition"]),
    st.sampled_from(["alice", "bob", "root.a", "p1", ""]),
    max_size=3,
)
ANNOTATIONS = st.dictionaries(
    st.sampled_from(
        [
            "yunikorn.apache.org/queue",
            "hpctop.io/partition",
            "hpctop.io/requeue-count",
            "slurmjob.slinky.slurm.net/partition",
            "unkept.example.com/x",
        ]
    ),
    st.sampled_from(["root.b", "p2", "3", "gpu"]),
    max_size=2,
)
POD_STATE = st.fixed_dictionaries(
    {
        "which": st.integers(0, len(PODS) - 1),
        "phase": st.sampled_from(["Pending", "Running", "Succeeded", "Failed"]),
        "node": st.sampled_from([None, "n1", "n2"]),
        "labels": LABELS,
        "annotations": ANNOTATIONS,
        "restarts": st.integers(0, 2),
    }
)
STEP = st.one_of(
    st.tuples(st.just("pod"), POD_STATE),
    st.tuples(st.just("delete"), st.integers(0, len(PODS) - 1)),
    st.tuples(st.just("job"), st.booleans()),  # the owner Job of ns0 added (True) or deleted
    st.tuples(st.just("snapshot"), st.none()),
)


def _pod(state: dict[str, Any], rv: int) -> dict[str, Any]:
    namespace, name = PODS[state["which"]]
    obj = pod(
        name,
        namespace=namespace,
        node=state["node"],
        phase=state["phase"],
        gpus=1,
        owner=("Job", "j") if namespace == "ns0" else None,  # a pod's owner never changes
        labels=state["labels"],
        annotations=state["annotations"],
        rv=str(rv),
    )
    obj["status"]["containerStatuses"] = [{"name": "main", "restartCount": state["restarts"]}]
    return obj


def _check(store: Store, current: dict[tuple[str, str], bytes], job: bytes | None) -> None:
    fresh = Store(clock=lambda: NOW)
    if job is not None:
        fresh.apply_raw("Job", job)
    for raw in current.values():
        fresh.apply_raw("Pod", raw)
    expected = fresh.snapshot().jobs
    got = store.snapshot().jobs
    for key, row in expected.items():
        assert got.get(key) == row, key
    for key, row in got.items():
        if key not in expected:
            assert row.state == JobState.CANCELLED, key  # a tombstone of a deleted job


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(STEP, min_size=1, max_size=40))
def test_incremental_rows_equal_rows_derived_from_scratch(steps: list[tuple[str, Any]]) -> None:
    store = Store(clock=lambda: NOW)
    current: dict[tuple[str, str], bytes] = {}
    job: bytes | None = None
    for rv, (what, arg) in enumerate(steps, start=2):
        if what == "pod":
            obj = _pod(arg, rv)
            key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
            kind = "MODIFIED" if key in current else "ADDED"
            current[key] = event("ADDED", obj)
            assert store.apply_raw("Pod", event(kind, obj))
        elif what == "delete":
            namespace, name = PODS[arg]
            raw = current.pop((namespace, name), None)
            if raw is not None:
                assert store.apply_raw("Pod", raw.replace(b'"ADDED"', b'"DELETED"', 1))
        elif what == "job":
            obj = batch_job("j", parallelism=2)
            obj["metadata"]["namespace"] = "ns0"
            if arg:
                job = event("ADDED", obj)
                assert store.apply_raw("Job", job)
            elif job is not None:
                assert store.apply_raw("Job", event("DELETED", obj))
                job = None
        else:
            _check(store, current, job)
    _check(store, current, job)


def test_a_status_change_reuses_the_previous_rows_label_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    """Non-vacuity: after a status-only change the label searches are not run again (they are
    counted), and after a relabel they are; the rows are right either way."""
    searches: list[tuple[str, ...]] = []
    search = jobs._first

    def counted(keys: Iterable[str], *maps: dict[str, str]) -> str | None:
        searches.append(tuple(keys))
        return search(keys, *maps)

    monkeypatch.setattr(jobs, "_first", counted)
    store = Store(clock=lambda: NOW)
    labels = {"hpctop.io/user": "alice", "queue": "root.a"}
    store.apply_raw("Pod", event("ADDED", pod("p", namespace="ns0", phase="Pending", labels=labels)))
    assert store.snapshot().jobs[("ns0", "Pod", "p")].user == "alice"
    assert searches
    searches.clear()
    running = pod("p", namespace="ns0", phase="Running", node="n1", labels=labels, rv="2")
    store.apply_raw("Pod", event("MODIFIED", running))
    after = store.snapshot().jobs[("ns0", "Pod", "p")]
    assert after.state == JobState.RUNNING and after.user == "alice" and after.queue == "root.a"
    assert searches == []  # the short cut was taken
    relabelled = pod("p", namespace="ns0", phase="Running", node="n1", labels={"user": "bob"}, rv="3")
    store.apply_raw("Pod", event("MODIFIED", relabelled))
    assert store.snapshot().jobs[("ns0", "Pod", "p")].user == "bob"
    assert searches


def test_a_row_merged_with_its_owner_is_not_reused_once_the_owner_is_gone() -> None:
    """The row derived with an owner object reads the owner's labels (its template's queue): once
    the owner is deleted, the one pod left is derived afresh, not from that row."""
    store = Store(clock=lambda: NOW)
    owner = batch_job("j", parallelism=1)
    owner["metadata"]["namespace"] = "ns0"
    store.apply_raw("Job", event("ADDED", owner))
    store.apply_raw("Pod", event("ADDED", pod("p", namespace="ns0", owner=("Job", "j"))))
    assert store.snapshot().jobs[("ns0", "Job", "j")].queue == "root.research"
    running = pod("p", namespace="ns0", owner=("Job", "j"), phase="Running", node="n1", rv="2")
    store.apply_raw("Pod", event("MODIFIED", running))
    store.apply_raw("Job", event("DELETED", owner))
    assert store.snapshot().jobs[("ns0", "Job", "j")].queue is None
