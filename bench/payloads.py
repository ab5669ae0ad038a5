"""Realistic Kubernetes payloads for benchmarks, built once outside timed regions.

Pods look like GPU training pods of a real cluster: owner references, a dozen labels, scheduler
annotations, env, volumes, probes, container statuses and conditions, so that a pod is a few
kilobytes of JSON like those measured on public dumps (PERFORMANCE.md).
"""

from __future__ import annotations

import random
from typing import Any

import orjson


def gpu_pod(i: int, rng: random.Random, per_job: int = 8) -> dict[str, Any]:
    """Pod ``i``; pods ``per_job`` at a time belong to one Job (``per_job=1``: a job per pod)."""
    job = f"train-{i // per_job:05d}"
    node = f"gpu-node-{rng.randrange(10_000):05d}"
    gpus = rng.choice([1, 2, 4, 8])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{job}-worker-{i % per_job}",
            "namespace": f"team-{i % 37:02d}",
            "uid": f"5f0c{i:08x}-1b2c-4d5e-8f90-{i:012x}",
            "resourceVersion": str(1_000_000 + i),
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "generateName": f"{job}-worker-",
            "labels": {
                "batch.kubernetes.io/controller-uid": f"c{i // per_job:08x}",
                "batch.kubernetes.io/job-name": job,
                "controller-uid": f"c{i // per_job:08x}",
                "job-name": job,
                "yunikorn.apache.org/app-id": job,
                "yunikorn.apache.org/queue": f"root.dept{i % 3}.team{i % 7}",
                "app.kubernetes.io/name": "trainer",
                "app.kubernetes.io/part-of": "llm-platform",
                "hpctop.io/user": f"user{i % 113}",
            },
            "annotations": {
                "yunikorn.apache.org/task-group-name": "workers",
                "yunikorn.apache.org/task-groups": '[{"name":"workers","minMember":8,"minResource":'
                '{"cpu":"32","memory":"256Gi","nvidia.com/gpu":"8"}}]',
                "batch.kubernetes.io/job-completion-index": str(i % 8),
                "kubectl.kubernetes.io/default-container": "trainer",
                "prometheus.io/scrape": "true",
                "prometheus.io/port": "9400",
            },
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": job,
                    "uid": f"c{i // per_job:08x}-0000-4000-8000-000000000000",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "schedulerName": "yunikorn",
            "nodeName": node,
            "priorityClassName": "research-high",
            "priority": 1000,
            "restartPolicy": "Never",
            "serviceAccountName": "default",
            "tolerations": [
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
            ],
            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
            "containers": [
                {
                    "name": "trainer",
                    "image": "registry.example.com/llm/trainer:2026.11.3",
                    "command": ["torchrun", "--nnodes=8", "--nproc-per-node=8", "train.py"],
                    "env": [{"name": f"ENV_{k}", "value": f"value-{k}-{i}"} for k in range(12)],
                    "resources": {
                        "requests": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": str(gpus)},
                        "limits": {"memory": "256Gi", "nvidia.com/gpu": str(gpus)},
                    },
                    "volumeMounts": [
                        {"name": "data", "mountPath": "/data"},
                        {"name": "shm", "mountPath": "/dev/shm"},
                        {
                            "name": "kube-api-access",
                            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                            "readOnly": True,
                        },
                    ],
                    "ports": [{"containerPort": 29500, "protocol": "TCP"}],
                    "terminationMessagePath": "/dev/termination-log",
                    "imagePullPolicy": "IfNotPresent",
                }
            ],
            "volumes": [
                {"name": "data", "persistentVolumeClaim": {"claimName": "datasets"}},
                {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}},
                {
                    "name": "kube-api-access",
                    "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]},
                },
            ],
        },
        "status": {
            "phase": "Running",
            "hostIP": f"10.{i % 250}.{i % 200}.{i % 100}",
            "podIP": f"172.{i % 250}.{i % 200}.{i % 100}",
            "startTime": "2026-01-01T00:01:00Z",
            "qosClass": "Burstable",
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": "2026-01-01T00:01:00Z"}
                for t in (
                    "PodReadyToStartContainers",
                    "Initialized",
                    "Ready",
                    "ContainersReady",
                    "PodScheduled",
                )
            ],
            "containerStatuses": [
                {
                    "name": "trainer",
                    "ready": True,
                    "restartCount": 0,
                    "image": "registry.example.com/llm/trainer:2026.11.3",
                    "imageID": "registry.example.com/llm/trainer@sha256:" + "ab" * 32,
                    "containerID": "containerd://" + f"{i:064x}",
                    "started": True,
                    "state": {"running": {"startedAt": "2026-01-01T00:01:30Z"}},
                }
            ],
        },
    }


def pod_list(count: int, seed: int = 7) -> bytes:
    rng = random.Random(seed)
    items = [gpu_pod(i, rng) for i in range(count)]
    return orjson.dumps(
        {"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "9"}, "items": items}
    )


def pod_events(count: int, seed: int = 7, per_job: int = 8) -> list[bytes]:
    rng = random.Random(seed)
    return [orjson.dumps({"type": "ADDED", "object": gpu_pod(i, rng, per_job)}) for i in range(count)]


def node_event(i: int) -> bytes:
    """An ADDED watch event for ``gpu-node-{i:05d}``, the nodes the pods above name."""
    return orjson.dumps(
        {
            "type": "ADDED",
            "object": {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": f"gpu-node-{i:05d}",
                    "uid": f"node-uid-{i:08x}",
                    "resourceVersion": str(i),
                    "creationTimestamp": "2026-01-01T00:00:00Z",
                    "labels": {
                        "kubernetes.io/hostname": f"gpu-node-{i:05d}",
                        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                        "nvidia.com/gpu.count": "8",
                        "nvidia.com/gpu.memory": "81559",
                        "nvidia.com/gpu.present": "true",
                        "nvidia.com/gpu.clique": f"cluster-1.{i // 18}",
                        "topology.kubernetes.io/zone": f"zone-{i % 3}",
                        "node.kubernetes.io/instance-type": "p5.48xlarge",
                    },
                },
                "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
                "status": {
                    "allocatable": {"cpu": "190", "memory": "2000Gi", "nvidia.com/gpu": "8", "pods": "110"},
                    "capacity": {"cpu": "192", "memory": "2048Gi", "nvidia.com/gpu": "8", "pods": "110"},
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            },
        }
    )


def pod_updates(
    pods: int, per_job: int = 8, seed: int = 7, restarts: int = 1, rv_base: int = 2_000_000
) -> list[bytes]:
    """One MODIFIED event per pod of :func:`pod_events` (``restarts`` counted, a new resourceVersion).

    Replayed once over a store synced from :func:`pod_events`, each event changes its pod's job
    row. Replayed again, the same bytes change nothing (same resourceVersion, same fields): to
    keep every event real work, alternate two sets with different ``restarts`` and ``rv_base``
    (what ``bench/p3_watch.py`` does).
    """
    rng = random.Random(seed)
    out = []
    for i in range(pods):
        pod = gpu_pod(i, rng, per_job)
        pod["metadata"]["resourceVersion"] = str(rv_base + i)
        pod["status"]["containerStatuses"][0]["restartCount"] = restarts
        out.append(orjson.dumps({"type": "MODIFIED", "object": pod}))
    return out


def _fields(value: object) -> object:
    """FieldsV1 of ``value`` as an API server writes it: ``f:<key>`` per field, ``k:{...}`` per
    keyed list item (containers and volumes by name, conditions by type), ``{}`` for leaves."""
    if isinstance(value, dict):
        return {f"f:{k}": _fields(v) for k, v in value.items()}
    if isinstance(value, list):
        out: dict[str, object] = {}
        for item in value:
            if isinstance(item, dict):
                key = "name" if "name" in item else "type" if "type" in item else None
                if key is not None:
                    out["k:" + orjson.dumps({key: item[key]}).decode()] = {".": {}, **_fields(item)}  # type: ignore[dict-item]
        return out
    return {}


def served_pod(i: int, rng: random.Random, per_job: int = 1) -> dict[str, Any]:
    """:func:`gpu_pod` as a real API server serves it: with ``metadata.managedFields`` (the Job
    controller's create and the kubelet's status update, in the shape of FieldsV1), ~6 KiB of
    JSON. The managed fields are derived from the object itself, so they name its real fields."""
    obj = gpu_pod(i, rng, per_job)
    meta, spec, status = obj["metadata"], obj["spec"], obj["status"]
    created = {
        "f:metadata": _fields(
            {k: meta[k] for k in ("generateName", "labels", "annotations", "ownerReferences") if k in meta}
        ),
        "f:spec": _fields(spec),
    }
    meta["managedFields"] = [
        {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
         "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": created},
        {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": "2026-01-01T00:00:09Z",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:status": _fields(status)}, "subresource": "status"},
    ]  # fmt: skip
    return obj
