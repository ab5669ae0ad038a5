"""Kubernetes-shaped JSON objects for model tests, built from the formats in SCHEDULERS.md."""

from __future__ import annotations

from typing import Any

import orjson


def event(kind_type: str, obj: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": kind_type, "object": obj})


def pod(
    name: str,
    *,
    namespace: str = "team-a",
    node: str | None = None,
    phase: str = "Pending",
    gpus: int = 0,
    cpu: str = "1",
    memory: str = "1Gi",
    owner: tuple[str, str] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    uid: str | None = None,
    rv: str = "1",
    created: str = "2026-01-01T00:00:00Z",
) -> dict[str, Any]:
    limits: dict[str, str] = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": uid or f"uid-{name}",
        "resourceVersion": rv,
        "creationTimestamp": created,
        "labels": labels or {},
        "annotations": annotations or {},
    }
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "batch/v1",
                "kind": owner[0],
                "name": owner[1],
                "uid": f"uid-{owner[1]}",
                "controller": True,
            }
        ]
    spec: dict[str, Any] = {
        "schedulerName": "hpctop",
        "containers": [
            {"name": "main", "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": limits}}
        ],
    }
    status: dict[str, Any] = {"phase": phase}
    if node:
        spec["nodeName"] = node
        status["conditions"] = [{"type": "PodScheduled", "status": "True"}]
        if phase == "Running":
            status["startTime"] = created
    else:
        status["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
            }
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def node(
    name: str, *, gpus: int = 8, product: str = "NVIDIA-H100-80GB-HBM3", ready: bool = True
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "resourceVersion": "1",
            "labels": {
                "nvidia.com/gpu.product": product,
                "nvidia.com/gpu.count": str(gpus),
                "nvidia.com/gpu.memory": "81559",
            },
        },
        "spec": {},
        "status": {
            "allocatable": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": str(gpus), "pods": "110"},
            "capacity": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": str(gpus), "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def batch_job(
    name: str, *, namespace: str = "team-a", parallelism: int = 1, suspend: bool = False, gpus: int = 1
) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{name}",
            "resourceVersion": "1",
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            "suspend": suspend,
            "template": {
                "metadata": {"labels": {"yunikorn.apache.org/queue": "root.research"}},
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "resources": {"limits": {"nvidia.com/gpu": str(gpus)}, "requests": {"cpu": "4"}},
                        }
                    ]
                },
            },
        },
        "status": {},
    }
