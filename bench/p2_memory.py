"""P2 memory: Python heap kept per pod and per node in the store (tracemalloc around the build)."""

from __future__ import annotations

import gc
import random
import tracemalloc

import orjson

from bench.common import Verdict
from bench.payloads import gpu_pod
from hpctop.model.store import Store


def _node(i: int) -> bytes:
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


def run(pods: int, nodes: int) -> Verdict:
    rng = random.Random(3)
    pod_events = [orjson.dumps({"type": "ADDED", "object": gpu_pod(i, rng)}) for i in range(pods)]
    node_events = [_node(i) for i in range(nodes)]
    gc.collect()
    tracemalloc.start()
    store = Store()
    before = tracemalloc.get_traced_memory()[0]
    for raw in node_events:
        store.apply_raw("Node", raw)
    gc.collect()
    after_nodes = tracemalloc.get_traced_memory()[0]
    for raw in pod_events:
        store.apply_raw("Pod", raw)
    store.snapshot()
    gc.collect()
    after_pods = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    per_node = (after_nodes - before) / nodes / 1024
    per_pod = (after_pods - after_nodes) / pods / 1024
    return Verdict(
        "P2 memory",
        f"{per_pod:.2f} KiB/pod, {per_node:.2f} KiB/node ({pods:,} pods incl. jobs, {nodes:,} nodes)",
        per_pod <= 3 and per_node <= 6,
        "goal <= 3 KiB/pod, <= 6 KiB/node",
    )
