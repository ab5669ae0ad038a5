"""P2 memory: Python heap kept per pod and per node in the store (tracemalloc around the build).

Same result: bytes per pod mean something only for pods the store actually holds, so before the
figure the store is checked against what it was fed (:func:`check_store`): every pod and node
loaded is held under its own key, none was skipped, and the snapshot holds one job per (namespace,
owner kind and name) of the loaded pods, counted from the payload's own dicts, not by hpctop's decoder.
"""

from __future__ import annotations

import gc
import random
import tracemalloc
from collections.abc import Collection, Iterable, Mapping
from typing import Any

import orjson

from bench.common import Verdict
from bench.payloads import gpu_pod, node_event
from hpctop.model.store import Store


def loaded_keys(
    objects: Iterable[Mapping[str, Any]],
) -> tuple[set[tuple[str, str]], set[tuple[str, str, str]]]:
    """(namespace, name) of each pod fed, and (namespace, controller kind, name) of their jobs."""
    pods: set[tuple[str, str]] = set()
    jobs: set[tuple[str, str, str]] = set()
    for obj in objects:
        meta = obj["metadata"]
        pods.add((meta["namespace"], meta["name"]))
        owner = next(ref for ref in meta["ownerReferences"] if ref.get("controller"))
        jobs.add((meta["namespace"], owner["kind"], owner["name"]))
    return pods, jobs


def check_store(
    held_pods: Collection[tuple[str, str]],
    held_nodes: Collection[str],
    held_jobs: Collection[tuple[str, str, str]],
    skipped: int,
    fed_pods: set[tuple[str, str]],
    fed_nodes: set[str],
    fed_jobs: set[tuple[str, str, str]],
) -> None:
    """Raise unless the store holds exactly the pods, nodes and jobs it was fed, none skipped."""
    problems = []
    if skipped:
        problems.append(f"{skipped} object(s) skipped")
    for what, held, fed in (("pods", held_pods, fed_pods), ("nodes", held_nodes, fed_nodes)):
        if len(held) != len(fed) or set(held) != fed:
            problems.append(f"{len(held):,} {what} held of {len(fed):,} fed")
    if set(held_jobs) != fed_jobs:
        problems.append(f"{len(held_jobs):,} jobs derived, {len(fed_jobs):,} (namespace, owner) fed")
    if problems:
        raise RuntimeError("P2's store is not what it was fed: " + "; ".join(problems))


def run(pods: int, nodes: int) -> Verdict:
    rng = random.Random(3)
    pod_dicts = [gpu_pod(i, rng) for i in range(pods)]
    pod_events = [orjson.dumps({"type": "ADDED", "object": pod}) for pod in pod_dicts]
    node_events = [node_event(i) for i in range(nodes)]
    fed_pods, fed_jobs = loaded_keys(pod_dicts)
    fed_nodes = {f"gpu-node-{i:05d}" for i in range(nodes)}
    del pod_dicts
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
    snapshot = store.snapshot()
    gc.collect()
    after_pods = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    check_store(
        snapshot.pods,
        snapshot.nodes,
        snapshot.jobs,
        sum(snapshot.skipped.values()),
        fed_pods,
        fed_nodes,
        fed_jobs,
    )
    per_node = (after_nodes - before) / nodes / 1024
    per_pod = (after_pods - after_nodes) / pods / 1024
    return Verdict(
        "P2 memory",
        f"{per_pod:.2f} KiB/pod, {per_node:.2f} KiB/node ({pods:,} pods incl. jobs, {nodes:,} nodes)",
        per_pod <= 3 and per_node <= 6,
        f"goal <= 3 KiB/pod, <= 6 KiB/node; the store's {len(snapshot.pods):,} pods, {len(snapshot.nodes):,}"
        f" nodes and {len(snapshot.jobs):,} jobs checked against what was fed",
    )
