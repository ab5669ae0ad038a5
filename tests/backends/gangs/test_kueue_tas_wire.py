"""Kueue's compressed ``topologyAssignment`` decoded (the examples of kubernetes-sigs/kueue
``apis/kueue/v1beta2/workload_types.go`` at ff69552e79ad21652c36caa97038382e55625cf7), and a
malformed one refused: the Workload is skipped and noted, never half-applied."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hpctop.model.decode import decode_object
from hpctop.model.objects import KueueWorkload, TopologyDomain
from hpctop.model.projection import DecodeError
from hpctop.model.store import Store

BLOCK, RACK = "cloud.provider.com/topology-block", "cloud.provider.com/topology-rack"
EXAMPLE_1 = {
    "levels": [BLOCK, RACK],
    "slices": [
        {
            "domainCount": 2,
            "valuesPerLevel": [
                {"individual": {"roots": ["block-1", "block-1"]}},
                {"individual": {"roots": ["rack-1", "rack-2"]}},
            ],
            "podCounts": {"individual": [4, 2]},
        }
    ],
}
EXAMPLE_2 = {
    "levels": [BLOCK, RACK],
    "slices": [
        {
            "domainCount": 2,
            "valuesPerLevel": [
                {"universal": "block-1"},
                {"individual": {"prefix": "rack-", "roots": ["1", "2"]}},
            ],
            "podCounts": {"individual": [4, 2]},
        }
    ],
}
#: Example 1 as Kueue v1beta1 wrote it (plain domains)
V1BETA1 = {
    "levels": [BLOCK, RACK],
    "domains": [{"values": ["block-1", "rack-1"], "count": 4}, {"values": ["block-1", "rack-2"], "count": 2}],
}
WANT = (TopologyDomain(("block-1", "rack-1"), 4), TopologyDomain(("block-1", "rack-2"), 2))


def _workload(assignment: dict[str, Any], version: str = "v1beta2") -> dict[str, Any]:
    return {
        "metadata": {"name": "job-x-1a2b3", "namespace": "team-a", "uid": "wl-1"},
        "spec": {"queueName": "main", "podSets": [{"name": "main", "count": 6}]},
        "status": {
            "conditions": [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved"}],
            "admission": {
                "clusterQueue": "cq",
                "podSetAssignments": [{"name": "main", "count": 6, "topologyAssignment": assignment}],
            },
        },
    }


def _decode(raw: dict[str, Any], version: str = "v1beta2") -> KueueWorkload:
    wl = decode_object("Workload.kueue.x-k8s.io", orjson.dumps(raw), f"kueue.x-k8s.io/{version}")
    assert isinstance(wl, KueueWorkload)
    return wl


@pytest.mark.parametrize(
    ("assignment", "version"), [(EXAMPLE_1, "v1beta2"), (EXAMPLE_2, "v1beta2"), (V1BETA1, "v1beta1")]
)
def test_the_upstream_examples_decode_into_the_same_domains(assignment: dict[str, Any], version: str) -> None:
    (placed,) = _decode(_workload(assignment), version).placements
    assert placed.pod_set == "main" and placed.levels == (BLOCK, RACK)
    assert placed.domains == WANT


@pytest.mark.parametrize(
    "slice_",
    [
        {
            "domainCount": 3,
            "valuesPerLevel": [{"universal": "b"}, {"individual": {"roots": ["1", "2"]}}],
            "podCounts": {"universal": 1},
        },
        {"domainCount": 2, "valuesPerLevel": [{"universal": "b"}], "podCounts": {"universal": 1}},
        {
            "domainCount": 2,
            "valuesPerLevel": [{"universal": "b"}, {"universal": "r"}],
            "podCounts": {"individual": [1]},
        },
        {"domainCount": 2, "valuesPerLevel": [{}, {"universal": "r"}], "podCounts": {"universal": 1}},
        {
            "domainCount": 10**9,
            "valuesPerLevel": [{"universal": "b"}, {"universal": "r"}],
            "podCounts": {"universal": 1},
        },
    ],
    ids=["roots-vs-count", "levels-vs-values", "counts-vs-domains", "no-value", "hostile-count"],
)
def test_a_malformed_slice_is_refused_and_the_workload_noted(slice_: dict[str, Any]) -> None:
    raw = _workload({"levels": [BLOCK, RACK], "slices": [slice_]})
    with pytest.raises(DecodeError):
        _decode(raw)
    store = Store(clock=lambda: 0.0)
    event = orjson.dumps(
        {"type": "ADDED", "object": {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", **raw}}
    )
    assert store.apply_raw("Workload.kueue.x-k8s.io", event) is False
    snap = store.snapshot()
    assert not any(isinstance(o, KueueWorkload) for o in snap.objects.values())
    assert sum(snap.skipped.values()) == 1 and any("topologyAssignment" in n for n in snap.notes)


def test_pending_evaluation_and_waiting_for_pods_ready_are_reasons_with_kueues_word() -> None:
    from hpctop.backends.kueue.read import job_reasons
    from hpctop.model.backends.evidence import JobEvidence
    from hpctop.model.states import JobState, ReasonCode

    for word, code in (
        ("PendingEvaluation", ReasonCode.PRIORITY),
        ("WaitingForPodsReady", ReasonCode.WAITING_FOR_SCHEDULING),
    ):
        raw = _workload(EXAMPLE_1)
        raw["status"] = {
            "conditions": [{"type": "QuotaReserved", "status": "False", "reason": word, "message": "m"}]
        }
        reasons = job_reasons(JobEvidence(kueue=_decode(raw)), JobState.PENDING, 0) or []
        assert [(r.code, r.message) for r in reasons] == [(code, f"{word}: m")]
