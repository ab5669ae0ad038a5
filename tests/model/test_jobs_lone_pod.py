"""The one-pod job row (``_derive_lone_pod``) against the general derivation.

Why: a job of a single bare pod takes a shorter path in :func:`derive_job` (the row derived per
watch event, PERFORMANCE.md P3); it must be the very same row the general path builds, for every
state the pod can be in.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from hpctop.model.decode import decode_object
from hpctop.model.jobs import _derive_general, _derive_lone_pod, derive_job, job_key_for_pod
from hpctop.model.objects import BACKFILLED_ANNOTATION, Condition, Pod
from tests.model_fixtures import pod

TIMES = st.one_of(st.none(), st.floats(1.0e9, 1.0e9 + 1e5))
ANNOTATIONS = st.dictionaries(
    st.sampled_from(
        [
            "yunikorn.apache.org/task-groups",
            "hpctop.io/requeue-count",
            "jobset.sigs.k8s.io/restart-attempt",
            "yunikorn.apache.org/queue",
            "hpctop.io/partition",
        ]
    ),
    st.sampled_from(['[{"name":"w","minMember":4}]', "2", "x", "root.a", "", "gpu"]),
    max_size=3,
)
LABELS = st.dictionaries(
    st.sampled_from(["hpctop.io/user", "user", "queue", "kueue.x-k8s.io/queue-name", "hpctop.io/partition"]),
    st.sampled_from(["alice", "root.b", "", "p1"]),
    max_size=3,
)
SCHEDULED = st.one_of(
    st.none(),
    st.builds(
        Condition,
        st.just("PodScheduled"),
        st.sampled_from(["True", "False"]),
        st.sampled_from(["Unschedulable", "SchedulingGated", "SchedulingSkipped", ""]),
        st.sampled_from(["0/3 nodes are available: 3 Insufficient nvidia.com/gpu.", "", "quota"]),
    ),
)


def base_pod(**overrides: Any) -> Pod:
    decoded = decode_object("Pod", orjson.dumps(pod("p", gpus=2)))
    assert isinstance(decoded, Pod)
    return replace(decoded, **overrides)


@settings(max_examples=300, deadline=None)
@given(
    phase=st.sampled_from(["Pending", "Running", "Succeeded", "Failed", "Unknown"]),
    node=st.sampled_from([None, "n1"]),
    deleted=TIMES,
    started=TIMES,
    finished=TIMES,
    created=st.floats(1.0e9, 1.0e9 + 1e5),
    gates=st.lists(st.sampled_from(["a", "b"]), max_size=3).map(tuple),
    restarts=st.integers(0, 3),
    terminated=st.sampled_from([None, "OOMKilled", "Error"]),
    annotations=ANNOTATIONS,
    labels=LABELS,
    scheduled=SCHEDULED,
    priority_class=st.sampled_from([None, "", "high"]),
    deadline=st.sampled_from([None, 0, 30]),
)
def test_the_one_pod_row_is_the_general_row(
    phase: str,
    node: str | None,
    deleted: float | None,
    started: float | None,
    finished: float | None,
    created: float,
    gates: tuple[str, ...],
    restarts: int,
    terminated: str | None,
    annotations: dict[str, str],
    labels: dict[str, str],
    scheduled: Condition | None,
    priority_class: str | None,
    deadline: int | None,
) -> None:
    p = base_pod(
        phase=phase,
        node_name=node,
        deleted=deleted,
        started=started,
        finished=finished,
        created=created,
        scheduling_gates=gates,
        restart_count=restarts,
        terminated_reason=terminated,
        annotations=annotations,
        labels=labels,
        scheduled=scheduled,
        priority_class=priority_class,
        active_deadline_seconds=deadline,
    )
    key = job_key_for_pod(p)
    assert _derive_lone_pod(key, p) == _derive_general(key, [p], None, None)


def test_derive_job_takes_the_short_path_only_for_a_lone_bare_pod() -> None:
    p = base_pod()
    key = job_key_for_pod(p)
    assert derive_job(key, [p], None) == _derive_lone_pod(key, p)
    placeholder = base_pod(annotations={"yunikorn.apache.org/placeholder": "true"})
    # a placeholder is not a member: the general path (no members, one placeholder) decides
    assert derive_job(key, [placeholder], None) == _derive_general(key, [placeholder], None, None)


def test_one_per_node_and_backfilled_are_the_general_rows() -> None:
    """Two fields the lone-pod row used to leave at their defaults (found in session 13)."""
    base = decode_object("Pod", orjson.dumps(pod("p", node="n1", phase="Running", gpus=1)))
    assert isinstance(base, Pod)
    spread = replace(base, one_per_node=True)
    backfilled = replace(base, annotations={**base.annotations, BACKFILLED_ANNOTATION: "true"})
    for p in (spread, backfilled):
        key = job_key_for_pod(p)
        assert _derive_lone_pod(key, p) == _derive_general(key, [p], None, None)
    assert _derive_lone_pod(job_key_for_pod(spread), spread).one_per_node
    assert _derive_lone_pod(job_key_for_pod(backfilled), backfilled).backfilled
