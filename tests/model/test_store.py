"""The store: events applied with indexes, jobs derived from pods and owners, bad input counted."""

from __future__ import annotations

from hpctop.model.states import JobState
from hpctop.model.store import Store
from tests.model_fixtures import batch_job, event, node, pod


def _store() -> Store:
    return Store(clock=lambda: 1767225600.0)


def test_pods_indexed_by_node_and_job() -> None:
    s = _store()
    s.apply_raw("Node", event("ADDED", node("n1")))
    s.apply_raw("Job", event("ADDED", batch_job("train", parallelism=2)))
    s.apply_raw(
        "Pod", event("ADDED", pod("train-0", owner=("Job", "train"), node="n1", phase="Running", gpus=1))
    )
    s.apply_raw("Pod", event("ADDED", pod("train-1", owner=("Job", "train"), gpus=1)))
    snap = s.snapshot()
    assert snap.pods_by_node["n1"] == frozenset({("team-a", "train-0")})
    job = snap.jobs[("team-a", "Job", "train")]
    assert job.members == 2
    assert job.running_members == 1
    assert job.pending_pods == (("team-a", "train-1"),)
    assert job.queue == "root.research"
    assert job.state == JobState.RUNNING

    # the pending pod is bound: it moves into the node index
    s.apply_raw(
        "Pod", event("MODIFIED", pod("train-1", owner=("Job", "train"), node="n1", phase="Running", gpus=1))
    )
    snap2 = s.snapshot()
    assert len(snap2.pods_by_node["n1"]) == 2
    assert snap2.jobs[("team-a", "Job", "train")].pending_pods == ()
    # the earlier snapshot did not change under us
    assert len(snap.pods_by_node["n1"]) == 1


def test_pod_leaves_node_index_when_finished_or_deleted() -> None:
    s = _store()
    s.apply_raw("Pod", event("ADDED", pod("p", node="n1", phase="Running")))
    s.apply_raw("Pod", event("MODIFIED", pod("p", node="n1", phase="Succeeded")))
    assert "n1" not in s.snapshot().pods_by_node
    assert s.snapshot().jobs[("team-a", "Pod", "p")].state == JobState.COMPLETED


def test_held_job_without_pods() -> None:
    s = _store()
    s.apply_raw("Job", event("ADDED", batch_job("held", parallelism=4, suspend=True, gpus=8)))
    job = s.snapshot().jobs[("team-a", "Job", "held")]
    assert job.state == JobState.HELD
    assert job.state.code == "PD"
    assert job.members == 4
    assert job.requested.gpu == 32000


def test_deleting_an_unfinished_job_leaves_a_cancelled_tombstone() -> None:
    s = _store()
    s.apply_raw("Job", event("ADDED", batch_job("j")))
    s.apply_raw("Pod", event("ADDED", pod("j-0", owner=("Job", "j"))))
    s.snapshot()
    s.apply_raw("Job", event("DELETED", batch_job("j")))
    s.apply_raw("Pod", event("DELETED", pod("j-0", owner=("Job", "j"))))
    job = s.snapshot().jobs[("team-a", "Job", "j")]
    assert job.state == JobState.CANCELLED
    assert job.state.code == "CA"


def test_malformed_objects_are_skipped_and_counted_never_half_applied() -> None:
    s = _store()
    good = pod("ok")
    bad = pod("bad")
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "a lot"
    assert s.apply_raw("Pod", event("ADDED", good))
    assert not s.apply_raw("Pod", event("ADDED", bad))
    assert not s.apply_raw("Pod", b"{garbage")
    snap = s.snapshot()
    assert set(snap.pods) == {("team-a", "ok")}
    assert sum(snap.skipped.values()) == 2
    # a bad MODIFIED leaves the previous good version in place
    broken = pod("ok", node="n1")
    broken["spec"]["containers"][0]["resources"]["requests"]["memory"] = "??"
    assert not s.apply_raw("Pod", event("MODIFIED", broken))
    assert s.snapshot().pods[("team-a", "ok")].node_name is None


def test_relist_replaces_and_drops_vanished_objects() -> None:
    from hpctop.model.decode import decode_object

    s = _store()
    for name in ("a", "b", "c"):
        s.apply_raw("Pod", event("ADDED", pod(name)))
    import orjson

    fresh = [decode_object("Pod", orjson.dumps(pod(n))) for n in ("b", "d")]
    s.replace("Pod", fresh, resource_version="99")
    snap = s.snapshot()
    assert {k[1] for k in snap.pods} == {"b", "d"}
    assert s.resource_versions["Pod"] == "99"


def test_replicaset_pods_fold_into_their_deployment() -> None:
    s = _store()
    obj = pod("llm-7d9f8-abcde", labels={"pod-template-hash": "7d9f8"}, node="n1", phase="Running")
    obj["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "llm-7d9f8", "uid": "rs", "controller": True}
    ]
    s.apply_raw("Pod", event("ADDED", obj))
    job = s.snapshot().jobs[("team-a", "Deployment", "llm")]
    assert job.kind == "service"
    assert job.state == JobState.RUNNING


def test_yunikorn_gang_min_members() -> None:
    s = _store()
    groups = '[{"name":"workers","minMember":4,"minResource":{"nvidia.com/gpu":"8"}}]'
    ann = {"yunikorn.apache.org/task-groups": groups}
    for i in range(4):
        s.apply_raw("Pod", event("ADDED", pod(f"w-{i}", owner=("Job", "g"), annotations=ann, gpus=8)))
    job = s.snapshot().jobs[("team-a", "Job", "g")]
    assert job.gang is not None and job.gang.min_member == 4
    assert job.min_members == 4
    assert job.pending_members == 4


def test_pending_job_has_no_start_time_even_if_the_job_status_has_one() -> None:
    s = _store()
    obj = batch_job("j", gpus=1)
    obj["status"]["startTime"] = "2026-01-01T00:00:05Z"  # set at creation on a live cluster
    obj["metadata"]["annotations"] = {"hpctop.io/requeue-count": "2"}
    s.apply_raw("Job", event("ADDED", obj))
    s.apply_raw("Pod", event("ADDED", pod("j-0", owner=("Job", "j"), gpus=1)))
    job = s.snapshot().jobs[("team-a", "Job", "j")]
    assert job.state == JobState.PENDING
    assert job.start_time is None
    assert job.restart_count == 2
    s.apply_raw("Pod", event("MODIFIED", pod("j-0", owner=("Job", "j"), gpus=1, node="n1", phase="Running")))
    assert s.snapshot().jobs[("team-a", "Job", "j")].start_time is not None
