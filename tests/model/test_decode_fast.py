"""The msgspec decoder against the oracle (tests/decode_oracle.py: pydantic models + plain projections).

Why: hpctop decodes with msgspec only (PERFORMANCE.md P1/P3): a strict fast path, and what it
refuses read field by field (odd fields hpctop does not need dropped, malformed needed fields
refusing the object). The oracle states the same contract in pydantic, written for clarity; on
every generated object both must agree: the same :class:`Pod` (or :class:`Node`) for what the
oracle accepts, a refusal for what it refuses (never half-applied), and what the strict path
takes alone it must build the same.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpctop.errors import QuantityError
from hpctop.model.decode import DecodeError, decode_event, decode_list, decoders_of
from hpctop.model.objects import Node, Pod
from hpctop.model.projection import node_from_struct, pod_from_struct
from hpctop.model.tolerant import NotTaken
from tests.decode_oracle import reference_node as node_reference
from tests.decode_oracle import reference_pod as reference
from tests.model_fixtures import event, pod

WORDS = st.text(alphabet="abcxyz-./0123456789", min_size=0, max_size=8)
NAMES = st.sampled_from(["p", "w-0", "train-1"] * 3 + [""])
WEIRD: st.SearchStrategy[Any] = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, allow_infinity=False), WORDS
)


def maybe(strategy: st.SearchStrategy[Any], weird: float = 0.02) -> st.SearchStrategy[Any]:
    """Mostly a well-typed value, with probability ``weird`` anything (the refusals must match too)."""
    valid = round(1 / weird) - 1
    return st.sampled_from([False] * valid + [True]).flatmap(lambda odd: WEIRD if odd else strategy)


QUANTITY = st.one_of(
    st.sampled_from(["1", "500m", "80Gi", "1.5Ti", "2e3", "0", "-1", "4", "1Gi", "8"]),
    maybe(st.just("1"), 0.05),  # now and then garbage: "lots", "", None, ...
    st.integers(0, 64),
    st.floats(0, 8, allow_nan=False),
)
RESOURCE_NAMES = st.sampled_from(
    ["cpu", "memory", "nvidia.com/gpu", "nvidia.com/mig-1g.5gb", "pods", "example.com/fpga"]
)
RESOURCE_MAP = st.dictionaries(RESOURCE_NAMES, QUANTITY, max_size=4)
ANNOTATION_KEYS = st.sampled_from(
    [
        "yunikorn.apache.org/task-groups",
        "alibabacloud.com/gpu-milli",
        "alibabacloud.com/gpu-count",
        "alibabacloud.com/gpu-card-model",
        "alibabacloud.com/gpu-index",
        "hpctop.io/user",
        "unrelated.example.com/x",
        "prometheus.io/scrape",
    ]
)
ANNOTATION_VALUES = st.sampled_from(["1", "250", "0-1", "T4|V100", "|", "true", "[]"] * 3 + ["", "0-x"])
TIMES = st.sampled_from(["2026-01-01T00:00:00Z", "2026-01-01T00:01:30+00:00", ""] * 5 + ["yesterday"])


def optional(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional=fields)


CONTAINER = optional(
    name=WORDS,
    resources=maybe(optional(requests=maybe(RESOURCE_MAP), limits=maybe(RESOURCE_MAP))),
)
TOLERATION = optional(
    key=maybe(WORDS),
    operator=maybe(st.sampled_from(["Equal", "Exists"])),
    value=maybe(WORDS),
    effect=maybe(st.sampled_from(["NoSchedule", "NoExecute"])),
    tolerationSeconds=st.integers(0, 300),
)
CONDITION = st.fixed_dictionaries(
    {"type": maybe(st.sampled_from(["PodScheduled", "Ready", "Initialized"]), 0.05)},
    optional={
        "status": maybe(st.sampled_from(["True", "False", "Unknown"])),
        "reason": maybe(st.sampled_from(["Unschedulable", "SchedulingGated", ""])),
        "message": maybe(WORDS),
    },
)
STATE = optional(terminated=maybe(optional(reason=maybe(WORDS), finishedAt=maybe(TIMES))))
CONTAINER_STATUS = optional(
    restartCount=maybe(st.integers(0, 5)), state=maybe(STATE), lastState=maybe(STATE), image=WORDS
)
OWNER = optional(
    apiVersion=maybe(st.sampled_from(["batch/v1", "apps/v1"])),
    kind=maybe(st.sampled_from(["Job", "ReplicaSet"])),
    name=maybe(NAMES),
    uid=WORDS,
    controller=maybe(st.booleans()),
)
OPTIONAL_METADATA: dict[str, st.SearchStrategy[Any]] = {
    "uid": maybe(WORDS),
    "resourceVersion": maybe(st.sampled_from(["1", "42"])),
    "labels": maybe(st.dictionaries(WORDS, maybe(WORDS, 0.05), max_size=3)),
    "annotations": maybe(st.dictionaries(ANNOTATION_KEYS, maybe(ANNOTATION_VALUES, 0.05), max_size=4)),
    "ownerReferences": maybe(st.lists(maybe(OWNER, 0.05), max_size=2)),
    "creationTimestamp": maybe(TIMES),
    "deletionTimestamp": maybe(TIMES),
}
METADATA = st.fixed_dictionaries(
    {"name": maybe(NAMES, 0.02), "namespace": maybe(st.sampled_from(["team-a"] * 8 + [""]), 0.02)},
    optional=OPTIONAL_METADATA,
)
SPEC = optional(
    nodeName=maybe(st.sampled_from(["", "n1"])),
    schedulerName=maybe(st.sampled_from(["yunikorn", "default-scheduler"])),
    containers=maybe(st.lists(maybe(CONTAINER, 0.05), max_size=3), 0.05),
    initContainers=maybe(st.lists(CONTAINER, max_size=2)),
    overhead=maybe(RESOURCE_MAP),
    nodeSelector=maybe(
        st.dictionaries(st.sampled_from(["nvidia.com/gpu.product", "zone"]), maybe(WORDS, 0.05), max_size=2)
    ),
    tolerations=maybe(st.lists(maybe(TOLERATION, 0.05), max_size=3)),
    priority=maybe(st.integers(-10, 10)),
    priorityClassName=maybe(WORDS),
    schedulingGates=maybe(st.lists(st.fixed_dictionaries({"name": maybe(WORDS, 0.05)}), max_size=2)),
    activeDeadlineSeconds=maybe(st.integers(0, 100)),
    volumes=st.lists(optional(name=WORDS), max_size=2),
)
STATUS = optional(
    phase=maybe(st.sampled_from(["Pending", "Running", "Succeeded", "Failed"])),
    reason=maybe(WORDS),
    startTime=maybe(TIMES),
    conditions=maybe(st.lists(maybe(CONDITION, 0.05), max_size=3)),
    containerStatuses=maybe(st.lists(maybe(CONTAINER_STATUS, 0.05), max_size=2)),
)
POD = st.fixed_dictionaries(
    {"metadata": maybe(METADATA, 0.02)}, optional={"spec": maybe(SPEC, 0.02), "status": maybe(STATUS, 0.02)}
)


def fast(raw: bytes) -> Pod | None:
    try:
        obj = decode_event("Pod", raw).obj
    except DecodeError:
        return None
    assert isinstance(obj, Pod)
    return obj


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(POD)
def test_the_decoder_matches_the_oracle(obj: dict[str, Any]) -> None:
    raw = event("MODIFIED", obj)
    assert fast(raw) == reference(raw)


def strict(raw: bytes) -> Pod | str | None:
    """The strict path alone: ``"not taken"`` where it hands the bytes to the field-by-field path."""
    try:
        decoded = decoders_of("Pod").event.decode(raw)
    except NotTaken:
        return "not taken"
    try:
        return pod_from_struct(decoded.object)
    except (DecodeError, QuantityError, ValueError):
        return None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(POD)
def test_the_strict_path_takes_only_what_the_oracle_takes_and_builds_the_same(obj: dict[str, Any]) -> None:
    raw = event("MODIFIED", obj)
    got = strict(raw)
    if got != "not taken":
        assert got == reference(raw)


def test_an_odd_field_hpctop_does_not_need_keeps_the_object() -> None:
    obj = pod("p")
    obj["status"]["containerStatuses"] = [{"restartCount": "3"}]  # a string: odd, and not needed
    raw = event("ADDED", obj)
    assert strict(raw) == "not taken"
    decoded = fast(raw)
    assert decoded is not None and decoded == reference(raw) and decoded.restart_count == 0


def test_realistic_pods_take_the_msgspec_path() -> None:
    from bench.payloads import pod_events

    for raw in pod_events(16, per_job=4):
        got = strict(raw)
        assert isinstance(got, Pod) and got == reference(raw)


def test_a_page_with_one_bad_pod_keeps_the_others() -> None:
    good = [pod(f"w-{i}", owner=("Job", "j"), gpus=1) for i in range(3)]
    bad = pod("w-bad")
    bad["spec"]["containers"] = [{"resources": {"requests": {"cpu": "lots"}}}]
    odd = pod("w-odd")
    odd["status"]["containerStatuses"] = [{"restartCount": "2"}]  # odd, not needed: dropped
    items = [good[0], bad, good[1], odd, good[2]]
    page = orjson.dumps({"kind": "PodList", "metadata": {"resourceVersion": "7"}, "items": items})
    decoded = decode_list("Pod", page)
    assert [p.name for p in decoded.objects] == ["w-0", "w-1", "w-odd", "w-2"]
    assert len(decoded.skipped) == 1 and decoded.resource_version == "7"
    assert decoded.objects[2].restart_count == 0
    assert [e.identity for e in decoded.skipped] == ["team-a/w-bad"]
    assert decoded.skipped[0].field == "spec.containers[].resources"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(POD, max_size=4))
def test_list_pages_keep_what_the_items_keep(items: list[dict[str, Any]]) -> None:
    page = orjson.dumps({"kind": "PodList", "metadata": {"resourceVersion": "7"}, "items": items})
    decoded = decode_list("Pod", page)
    expected = [p for p in (reference(event("ADDED", item)) for item in items) if p is not None]
    assert decoded.objects == expected
    assert len(decoded.skipped) == len(items) - len(expected)


def test_realistic_pod_is_the_same_both_ways() -> None:
    from bench.payloads import pod_events

    for raw in pod_events(16, per_job=4):
        assert fast(raw) == reference(raw) is not None


def test_pods_of_one_template_share_their_parts() -> None:
    a = fast(event("ADDED", pod("w-0", owner=("Job", "j"), gpus=8, annotations={"hpctop.io/user": "ann"})))
    b = fast(event("ADDED", pod("w-1", owner=("Job", "j"), gpus=8, annotations={"hpctop.io/user": "ann"})))
    assert a is not None and b is not None
    assert a.requests is b.requests and a.owner is b.owner and a.annotations is b.annotations
    assert a.labels is not b.labels  # labels are per pod (not shared: they rarely repeat whole)


@pytest.mark.parametrize("bad", ["1.5", "x", 1.5, True])
def test_wrong_typed_needed_fields_are_refused_whole(bad: object) -> None:
    obj = pod("p")
    obj["spec"]["priority"] = bad
    with pytest.raises(DecodeError) as caught:
        decode_event("Pod", event("ADDED", obj))
    assert caught.value.field == "spec.priority" and caught.value.identity == "team-a/p"
    assert reference(event("ADDED", obj)) is None


TAINT = st.fixed_dictionaries(
    {"key": maybe(st.sampled_from(["nvidia.com/gpu", "node.kubernetes.io/not-ready"]), 0.05)},
    optional={"value": maybe(WORDS), "effect": maybe(st.sampled_from(["NoSchedule", "NoExecute"]))},
)
NODE_LABELS = st.dictionaries(
    st.sampled_from(
        [
            "nvidia.com/gpu.product",
            "nvidia.com/gpu.replicas",
            "nvidia.com/gpu.memory",
            "nvidia.com/gpu.count",
            "nvidia.com/mig.strategy",
            "alibabacloud.com/gpu-card-model",
            "zone",
        ]
    ),
    maybe(st.sampled_from(["1", "2", "8", "81559", "H100", "mixed", "x"]), 0.05),
    max_size=4,
)
NODE_RESOURCES = st.dictionaries(
    st.sampled_from(
        ["cpu", "memory", "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "alibabacloud.com/gpu-count"]
    ),
    QUANTITY,
    max_size=4,
)
NODE = st.fixed_dictionaries(
    {
        "metadata": maybe(
            st.fixed_dictionaries(
                {"name": maybe(st.sampled_from(["n1", "gpu-0", ""]), 0.02)},
                optional={
                    "uid": maybe(WORDS),
                    "resourceVersion": maybe(st.sampled_from(["1", "42"])),
                    "labels": maybe(NODE_LABELS),
                    "creationTimestamp": maybe(TIMES),
                },
            ),
            0.02,
        )
    },
    optional={
        "spec": maybe(
            optional(
                unschedulable=maybe(st.booleans()), taints=maybe(st.lists(maybe(TAINT, 0.05), max_size=2))
            ),
            0.02,
        ),
        "status": maybe(
            optional(
                capacity=maybe(NODE_RESOURCES),
                allocatable=maybe(NODE_RESOURCES),
                conditions=maybe(st.lists(maybe(CONDITION, 0.05), max_size=2)),
            ),
            0.02,
        ),
    },
)


def node_fast(raw: bytes) -> Node | None:
    try:
        obj = decode_event("Node", raw).obj
    except DecodeError:
        return None
    assert isinstance(obj, Node)
    return obj


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(NODE)
def test_nodes_through_msgspec_match_the_wire_models(obj: dict[str, Any]) -> None:
    raw = event("MODIFIED", obj)
    assert node_fast(raw) == node_reference(raw)
    try:
        taken = decoders_of("Node").event.decode(raw)
    except NotTaken:
        return
    try:
        strict_node: Node | None = node_from_struct(taken.object)
    except (DecodeError, QuantityError, ValueError):
        strict_node = None
    assert strict_node == node_reference(raw)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(NODE, max_size=4))
def test_node_pages_keep_what_the_items_keep(items: list[dict[str, Any]]) -> None:
    page = orjson.dumps({"kind": "NodeList", "metadata": {"resourceVersion": "3"}, "items": items})
    decoded = decode_list("Node", page)
    expected = [n for n in (node_reference(event("ADDED", item)) for item in items) if n is not None]
    assert decoded.objects == expected
    assert len(decoded.skipped) == len(items) - len(expected)


def test_realistic_nodes_take_the_msgspec_path() -> None:
    from bench.payloads import node_event

    for i in range(4):
        raw = node_event(i)
        taken = decoders_of("Node").event.decode(raw)
        assert node_from_struct(taken.object) == node_reference(raw) is not None


def test_owner_references_are_shared_by_uid_and_never_mixed_up() -> None:
    a = fast(event("ADDED", pod("w-0", owner=("Job", "j"))))
    b = fast(event("ADDED", pod("w-1", owner=("Job", "j"))))
    assert a is not None and b is not None and a.owner is b.owner
    renamed = pod("w-2", owner=("Job", "j"))
    renamed["metadata"]["ownerReferences"][0]["name"] = "other"  # same uid, another name
    c = fast(event("ADDED", renamed))
    assert c is not None and c.owner is not None and a.owner is not None
    assert c.owner.name == "other" and c.owner.uid == a.owner.uid == "uid-j"
    assert c == reference(event("ADDED", renamed))


EDGE_BYTES = {
    # what msgspec raises for these is not a msgspec error: they must still reach pydantic
    "invalid UTF-8": (b'"team-a"', b'"te\xffam"'),
    "nesting deeper than msgspec recurses": (
        b'"kind":"Pod"',
        b'"kind":"Pod","x":' + b"[" * 3000 + b"]" * 3000,
    ),
    "an int beyond 64 bits": (b'"cpu":"1"', b'"cpu":123456789012345678901234567890'),
    "a float beyond double": (b'"cpu":"1"', b'"cpu":1e400'),
    "a duplicated key": (b'"uid":', b'"uid":"x","uid":'),
}


@pytest.mark.parametrize("case", sorted(EDGE_BYTES))
def test_edge_bytes_get_the_reference_answer(case: str) -> None:
    old, new = EDGE_BYTES[case]
    raw = event("ADDED", pod("p")).replace(old, new, 1)
    assert raw != event("ADDED", pod("p"))
    assert fast(raw) == reference(raw)  # never an exception other than DecodeError
    items = [pod("p"), pod("q")]
    page = orjson.dumps({"kind": "PodList", "metadata": {}, "items": items}).replace(old, new, 1)
    decoded = decode_list("Pod", page)  # never the whole page: only the bad item is skipped
    expected = [x for x in (fast(raw), fast(event("ADDED", pod("q")))) if x is not None]
    assert decoded.objects == expected and len(decoded.skipped) == 2 - len(expected)
