"""The watch path's pod decode (``hpctop.model.pod_events``) against the general decoder.

Why: a pod event of a pod the store holds as projected decodes only its metadata identity,
timestamps and status, and takes every other field from the held pod when the digest of the
spec, labels, annotations and owner references is the one recorded for it. Whatever the order of
events, every stored pod must equal what the general decoder makes of the same line (and every
job row what a store fed only the final objects derives: ``test_store_incremental.py`` runs
through the same path), and a pod the store rewrote (KAI GPU-memory share) or replaced by a relist
must never be reused.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hpctop.model.decode import decode_event
from hpctop.model.pod_events import decode_pod_event
from hpctop.model.store import Store
from tests.model_fixtures import event, node, pod

NOW = 1767225600.0
NAMES = ["p0", "p1"]
STATE = st.fixed_dictionaries(
    {
        "which": st.integers(0, len(NAMES) - 1),
        "phase": st.sampled_from(["Pending", "Running", "Succeeded", "Failed"]),
        "node": st.sampled_from([None, "n1"]),
        "labels": st.sampled_from([{}, {"queue": "a"}, {"queue": "b", "hpctop.io/user": "u"}]),
        "annotations": st.sampled_from([{}, {"yunikorn.apache.org/queue": "root.x"}, {"x.io/unkept": "1"}]),
        "gpus": st.sampled_from([0, 1]),
        "restarts": st.integers(0, 2),
        "scheduled": st.sampled_from([None, ("False", "Unschedulable", "0/2 nodes"), ("True", "", "")]),
        "started": st.sampled_from([None, "2026-01-01T00:01:00Z"]),
        "terminated": st.sampled_from([None, ("OOMKilled", "2026-01-01T00:05:00Z")]),
        "deleting": st.booleans(),
        "type": st.sampled_from(["MODIFIED", "MODIFIED", "DELETED"]),
    }
)


def _obj(state: dict[str, Any], rv: int) -> dict[str, Any]:
    obj = pod(
        NAMES[state["which"]],
        node=state["node"],
        phase=state["phase"],
        gpus=state["gpus"],
        owner=("Job", "j"),
        labels=state["labels"],
        annotations=state["annotations"],
        rv=str(rv),
    )
    status = obj["status"]
    cs: dict[str, Any] = {"name": "main", "restartCount": state["restarts"]}
    if state["terminated"] is not None:
        reason, finished = state["terminated"]
        cs["lastState"] = {"terminated": {"reason": reason, "finishedAt": finished}}
    status["containerStatuses"] = [cs]
    if state["scheduled"] is not None:
        flag, reason, message = state["scheduled"]
        status["conditions"] = [
            {"type": "PodScheduled", "status": flag, "reason": reason, "message": message}
        ]
    if state["started"] is not None:
        status["startTime"] = state["started"]
    if state["deleting"]:
        obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:09:00Z"
    return obj


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(STATE, min_size=1, max_size=30))
def test_every_stored_pod_is_the_general_decoders(steps: list[dict[str, Any]]) -> None:
    store = Store(clock=lambda: NOW)
    held: set[str] = set()
    for rv, state in enumerate(steps, start=2):
        obj = _obj(state, rv)
        name = obj["metadata"]["name"]
        kind = state["type"] if name in held else "ADDED"
        line = event(kind, obj)
        expected = decode_event("Pod", line).obj
        assert store.apply_raw("Pod", line)
        key = ("team-a", name)
        if kind == "DELETED":
            held.discard(name)
            assert key not in store.pods
        else:
            held.add(name)
            assert store.pods[key] == expected
    fresh = Store(clock=lambda: NOW)
    for pod_key, stored in store.pods.items():
        assert stored.key == pod_key
    for name in held:
        last = next(s for s in reversed(steps) if NAMES[s["which"]] == name)
        fresh.apply_raw("Pod", event("ADDED", _obj(last, 1)))
    got, want = store.snapshot().jobs, fresh.snapshot().jobs
    for job_key, row in want.items():
        assert got[job_key] == row


def _line(restarts: int, rv: int, **changes: Any) -> bytes:
    obj = pod("p", node="n1", phase="Running", gpus=1, owner=("Job", "j"), labels={"queue": "a"}, rv=str(rv))
    obj["status"]["containerStatuses"] = [{"name": "main", "restartCount": restarts}]
    obj["metadata"]["annotations"].update(changes.get("annotations", {}))
    return event("MODIFIED" if rv > 1 else "ADDED", obj)


def test_a_status_change_of_a_held_pod_reuses_its_static_fields() -> None:
    """Non-vacuity: the fast path ran (the maps are the held pod's very objects: the general path
    builds new ones) and the pod is still the general decoder's."""
    store = Store(clock=lambda: NOW)
    store.apply_raw("Pod", _line(0, 1))
    first = store.pods[("team-a", "p")]
    line = _line(1, 2)
    assert store.apply_raw("Pod", line)
    second = store.pods[("team-a", "p")]
    assert second.labels is first.labels and second.requests is first.requests
    assert second.restart_count == 1 and second == decode_event("Pod", line).obj
    relabelled = _line(2, 3, annotations={"yunikorn.apache.org/queue": "root.y"})
    assert store.apply_raw("Pod", relabelled)
    third = store.pods[("team-a", "p")]
    assert third.annotations == {"yunikorn.apache.org/queue": "root.y"}
    assert third == decode_event("Pod", relabelled).obj


def test_a_pod_the_store_rewrote_or_a_relist_replaced_is_not_reused() -> None:
    store = Store(clock=lambda: NOW)
    store.apply_raw("Pod", _line(0, 1))
    # a relist replaces the pod with another projection (here: other requests); the next event
    # names the first spec again and must be decoded whole, not patched onto the relisted pod
    other = decode_event("Pod", event("ADDED", pod("p", node="n1", phase="Running", gpus=4))).obj
    store.replace("Pod", [other])
    line = _line(1, 2)
    store.apply_raw("Pod", line)
    assert store.pods[("team-a", "p")] == decode_event("Pod", line).obj
    # a KAI gpu-memory pod is stored with its share of the node's GPU (a rewrite): no digest
    gpu_node = node("n1", gpus=8)
    gpu_node["metadata"]["labels"]["nvidia.com/gpu.memory"] = "81920"
    store.apply_raw("Node", event("ADDED", gpu_node))
    memory = _line(0, 3, annotations={"gpu-memory": "40960"})
    store.apply_raw("Pod", memory)
    rewritten = store.pods[("team-a", "p")]
    assert rewritten != decode_event("Pod", memory).obj  # the share replaced the MiB request
    assert ("team-a", "p") not in store._pod_digests
    again = _line(1, 4, annotations={"gpu-memory": "40960"})
    store.apply_raw("Pod", again)
    assert store.pods[("team-a", "p")].requests == rewritten.requests


def test_lines_the_fast_path_does_not_take_go_the_general_way() -> None:
    held = Store(clock=lambda: NOW)
    held.apply_raw("Pod", _line(0, 1))
    bookmark = b'{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"77"}}}'
    assert decode_pod_event(bookmark, held.pods, held._pod_digests)[0].resource_version == "77"
    bad_phase = _line(1, 2).replace(b'"phase":"Running"', b'"phase":7')
    try:
        decode_pod_event(bad_phase, held.pods, held._pod_digests)
    except Exception as exc:  # the general decoder's own answer, whatever it is
        general: object = type(exc)
    else:
        general = "decoded"
    try:
        decode_event("Pod", bad_phase)
    except Exception as exc:
        assert general is type(exc)
    else:
        assert general == "decoded"
