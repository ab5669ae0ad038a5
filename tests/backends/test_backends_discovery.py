"""API discovery: which scheduler CRDs exist, at which version, and what to watch (SCHEDULERS.md §1.1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hpctop.model.decode import DecodeError, decode_object
from hpctop.sources.kube.discovery import discover, resources_to_watch
from hpctop.sources.kube.resources import DEFAULT_RESOURCES, ResourceSpec

FIXTURES = Path(__file__).parents[1] / "fixtures" / "backends"


def _group_list(groups: dict[str, list[str]]) -> bytes:
    return json.dumps(
        {
            "kind": "APIGroupList",
            "groups": [
                {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in vs]}
                for g, vs in groups.items()
            ],
        }
    ).encode()


def _by_kind(specs: tuple[ResourceSpec, ...]) -> dict[str, str]:
    return {s.kind: s.version for s in specs}


def test_full_cluster_prefers_kueue_v1beta2_and_mpijob_v2beta1() -> None:
    found = discover((FIXTURES / "apis_group_list.json").read_bytes())
    versions = _by_kind(found.resources)
    assert versions == {
        "Workload.kueue.x-k8s.io": "v1beta2",
        "ClusterQueue.kueue.x-k8s.io": "v1beta2",
        "LocalQueue.kueue.x-k8s.io": "v1beta2",
        "Cohort.kueue.x-k8s.io": "v1beta2",
        "ResourceFlavor.kueue.x-k8s.io": "v1beta2",
        "Queue.scheduling.volcano.sh": "v1beta1",
        "PodGroup.scheduling.volcano.sh": "v1beta1",
        "Job.batch.volcano.sh": "v1alpha1",
        "PodGroup.scheduling.x-k8s.io": "v1alpha1",
        "JobSet": "v1alpha2",
        "LeaderWorkerSet": "v1",
        "PyTorchJob": "v1",
        "TFJob": "v1",
        "MPIJob": "v2beta1",
        "XGBoostJob": "v1",
        "PaddleJob": "v1",
        "JAXJob": "v1",
    }
    assert found.backends >= {"kueue", "kueue-visibility", "volcano", "coscheduling", "kubeflow", "jobset"}
    assert "native-gang" not in found.backends
    assert found.versions["kueue.x-k8s.io"] == "v1beta2"
    assert found.versions["visibility.kueue.x-k8s.io"] == "v1beta1"
    workloads = next(s for s in found.resources if s.plural == "workloads")
    assert workloads.path("team-a") == "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/workloads"
    cq = next(s for s in found.resources if s.plural == "clusterqueues")
    assert cq.path("team-a") == "/apis/kueue.x-k8s.io/v1beta2/clusterqueues"  # cluster-scoped


def test_old_kueue_gets_v1beta1_and_its_v1alpha1_cohort() -> None:
    found = discover(_group_list({"kueue.x-k8s.io": ["v1beta1", "v1alpha1"]}))
    assert _by_kind(found.resources) == {
        "Workload.kueue.x-k8s.io": "v1beta1",
        "ClusterQueue.kueue.x-k8s.io": "v1beta1",
        "LocalQueue.kueue.x-k8s.io": "v1beta1",
        "Cohort.kueue.x-k8s.io": "v1alpha1",
        "ResourceFlavor.kueue.x-k8s.io": "v1beta1",
    }
    assert found.backends == frozenset({"kueue"})


def test_resource_lists_drop_what_a_served_version_lacks() -> None:
    lists = {
        "kueue.x-k8s.io/v1beta1": json.dumps(
            {
                "kind": "APIResourceList",
                "groupVersion": "kueue.x-k8s.io/v1beta1",
                "resources": [
                    {"name": n} for n in ("workloads", "workloads/status", "clusterqueues", "localqueues")
                ],
            }
        ).encode()
    }
    found = discover(_group_list({"kueue.x-k8s.io": ["v1beta1"]}), lists)
    assert sorted(_by_kind(found.resources)) == [
        "ClusterQueue.kueue.x-k8s.io",
        "LocalQueue.kueue.x-k8s.io",
        "Workload.kueue.x-k8s.io",
    ]


def test_aggregated_discovery_lists_resources_per_version() -> None:
    found = discover((FIXTURES / "apis_aggregated.json").read_bytes())
    assert _by_kind(found.resources) == {
        "Workload.kueue.x-k8s.io": "v1beta1",
        "ClusterQueue.kueue.x-k8s.io": "v1beta1",
        "LocalQueue.kueue.x-k8s.io": "v1beta1",
        "Cohort.kueue.x-k8s.io": "v1alpha1",
        "ResourceFlavor.kueue.x-k8s.io": "v1beta1",
        # the fixture's Kueue lists topologies at v1alpha1 beside cohorts (TAS before v0.14)
        "Topology.kueue.x-k8s.io": "v1alpha1",
        "PyTorchJob": "v1",
        "TFJob": "v1",
    }


def test_a_plain_cluster_watches_only_the_core() -> None:
    apis = _group_list({"apps": ["v1"], "batch": ["v1"], "scheduling.k8s.io": ["v1", "v1alpha2"]})
    found = discover(apis)
    assert found.resources == ()
    assert found.backends == frozenset({"native-gang"})
    assert resources_to_watch(apis) == DEFAULT_RESOURCES


def test_watch_list_puts_the_core_first_without_duplicates() -> None:
    watch = resources_to_watch((FIXTURES / "apis_group_list.json").read_bytes())
    assert watch[: len(DEFAULT_RESOURCES)] == DEFAULT_RESOURCES
    assert len({(s.group, s.plural) for s in watch}) == len(watch)
    # batch/v1 jobs and Volcano jobs are both "jobs", in different groups
    assert {s.group for s in watch if s.plural == "jobs"} == {"batch", "batch.volcano.sh"}


@pytest.mark.parametrize("raw", [b"not json", b"[]", b'{"kind": "Status"}'])
def test_garbage_discovery_is_an_error(raw: bytes) -> None:
    with pytest.raises(DecodeError):
        discover(raw)


def test_every_discovered_kind_has_a_decoder() -> None:
    minimal: dict[str, Any] = {"metadata": {"name": "x", "namespace": "ns"}, "spec": {}}
    minimal_lq: dict[str, Any] = {
        "metadata": {"name": "x", "namespace": "ns"},
        "spec": {"clusterQueue": "cq"},
    }
    for spec in discover((FIXTURES / "apis_group_list.json").read_bytes()).resources:
        obj = dict(minimal_lq if spec.plural == "localqueues" else minimal)
        obj["kind"] = spec.kind.split(".", 1)[0]
        obj["apiVersion"] = spec.api_version
        decoded = decode_object(spec.kind, json.dumps(obj).encode())
        assert decoded is not None, spec.kind
