"""P2 memory: Python heap kept per pod and per node in the store (tracemalloc around the build)."""

from __future__ import annotations

import gc
import random
import tracemalloc

import orjson

from bench.common import Verdict
from bench.payloads import gpu_pod, node_event
from hpctop.model.store import Store


def run(pods: int, nodes: int) -> Verdict:
    rng = random.Random(3)
    pod_events = [orjson.dumps({"type": "ADDED", "object": gpu_pod(i, rng)}) for i in range(pods)]
    node_events = [node_event(i) for i in range(nodes)]
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
