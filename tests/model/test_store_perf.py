"""The store's shortcuts (PERFORMANCE.md P2/P3) change what it costs, never what it shows."""

from __future__ import annotations

from hpctop.model.jobs import parse_gang
from hpctop.model.store import Store
from tests.model_fixtures import batch_job, event, node, pod


def _store() -> Store:
    return Store(clock=lambda: 1767225600.0)


def test_a_resource_version_only_change_keeps_the_job_row() -> None:
    s = _store()
    s.apply_raw("Pod", event("ADDED", pod("w-0", owner=("Job", "j"), node="n1", phase="Running", rv="1")))
    before = s.snapshot()
    s.apply_raw("Pod", event("MODIFIED", pod("w-0", owner=("Job", "j"), node="n1", phase="Running", rv="2")))
    after = s.snapshot()
    key = ("team-a", "Job", "j")
    assert after.jobs[key] is before.jobs[key]  # not derived again: nothing it reads moved
    assert after.pods[("team-a", "w-0")].resource_version == "2"  # but the pod is the new one
    assert before.pods[("team-a", "w-0")].resource_version == "1"  # and the old snapshot kept its own
    assert after.version > before.version


def test_a_change_the_job_reads_derives_it_again() -> None:
    s = _store()
    s.apply_raw("Pod", event("ADDED", pod("w-0", owner=("Job", "j"), rv="1")))
    assert s.snapshot().jobs[("team-a", "Job", "j")].pending_members == 1
    s.apply_raw("Pod", event("MODIFIED", pod("w-0", owner=("Job", "j"), node="n1", phase="Running", rv="2")))
    snap = s.snapshot()
    job = snap.jobs[("team-a", "Job", "j")]
    assert job.pending_members == 0 and job.running_members == 1
    assert snap.pods_by_node["n1"] == frozenset({("team-a", "w-0")})


def test_snapshots_share_unchanged_maps_and_copy_changed_ones() -> None:
    s = _store()
    s.apply_raw("Node", event("ADDED", node("n1")))
    s.apply_raw("Job", event("ADDED", batch_job("j")))
    s.apply_raw("Pod", event("ADDED", pod("j-0", owner=("Job", "j"))))
    first = s.snapshot()
    second = s.snapshot()
    for name in ("nodes", "pods", "jobs", "workloads", "priority_classes", "pods_by_node"):
        assert getattr(first, name) is getattr(second, name), name
    s.apply_raw("Pod", event("MODIFIED", pod("j-0", owner=("Job", "j"), node="n1", phase="Running")))
    third = s.snapshot()
    assert third.nodes is first.nodes and third.workloads is first.workloads
    assert third.pods is not first.pods and third.jobs is not first.jobs
    assert third.pods_by_node is not first.pods_by_node
    assert "n1" not in first.pods_by_node and "n1" in third.pods_by_node  # the old one did not move
    s.apply_raw("Node", event("DELETED", node("n1")))
    assert "n1" not in s.snapshot().nodes and "n1" in third.nodes
    s.replace("Node", [])
    assert s.snapshot().nodes == {}


def test_tombstones_reach_the_snapshot_after_a_cached_one() -> None:
    s = _store()
    s.apply_raw("Pod", event("ADDED", pod("p")))
    assert s.snapshot().jobs[("team-a", "Pod", "p")].state.code == "PD"
    s.apply_raw("Pod", event("DELETED", pod("p")))
    assert s.snapshot().jobs[("team-a", "Pod", "p")].state.code == "CA"
    s.apply_raw("Pod", event("ADDED", pod("p")))
    assert s.snapshot().jobs[("team-a", "Pod", "p")].state.code == "PD"


def test_parse_gang_is_cached_by_the_annotation_text() -> None:
    groups = '[{"name":"workers","minMember":4}]'
    a = parse_gang({"yunikorn.apache.org/task-groups": groups})
    b = parse_gang({"yunikorn.apache.org/task-groups": groups, "other": "x"})
    assert a is b and a is not None and a.min_member == 4 and a.style == "soft"
    hard = parse_gang(
        {
            "yunikorn.apache.org/task-groups": groups,
            "yunikorn.apache.org/schedulingPolicyParameters": "gangSchedulingStyle=Hard "
            "placeholderTimeoutInSeconds=30",
        }
    )
    assert hard is not None and (hard.style, hard.timeout_s) == ("hard", 30)
    assert parse_gang({"yunikorn.apache.org/task-groups": "{not json"}) is None
    assert parse_gang({"yunikorn.apache.org/task-groups": '[{"minMember":"x"}]'}) is None


def test_bare_pod_jobs_share_the_pod_labels() -> None:
    s = _store()
    s.apply_raw("Pod", event("ADDED", pod("p", labels={"hpctop.io/user": "ann", "queue": "root.a"})))
    snap = s.snapshot()
    job = snap.jobs[("team-a", "Pod", "p")]
    assert job.labels == {"hpctop.io/user": "ann", "queue": "root.a"}
    assert job.user == "ann" and job.queue == "root.a"
