"""No pane shows more in use than the nodes have (issue 16: the queue pane read 20,032 of 20,000 GPUs).

Why: a queue's usage counts every running member of its jobs and a partition's allocation summed
every bound pod's requests, so pods bound to a node outside the node list (a node hpctop may not
list, one deleted before its pods) and pods beyond their node's allocatable (stale pods not yet
seen gone) made "used" exceed the capacity it is drawn against. The core now clamps what a node
holds at its allocatable and shows a queue's ``used`` as what the view's nodes hold; the
scheduling usage (fair share, quotas) still counts every running member.
"""

from __future__ import annotations

from types import MappingProxyType

from bench.p6_core import CLASSES, NOW, _job, _node, _pod
from hpctop.model.objects import Job, Pod, PodKey
from hpctop.model.policy import Policy
from hpctop.model.resources import Resources
from hpctop.model.store import Snapshot
from hpctop.scheduling.core import schedule
from hpctop.scheduling.memo import Memo

GI = 1024**3


class _NoCordon:
    def random(self) -> float:
        return 1.0


def _snapshot() -> Snapshot:
    nodes = [_node(i, _NoCordon()) for i in range(2)]  # type: ignore[arg-type]
    six = Resources(6000, 16 * GI, 6000)
    pods: dict[PodKey, Pod] = {}
    jobs = {}
    by_node: dict[str, set[PodKey]] = {}
    # node-00000 (8 GPUs) holds two 6-GPU pods (one is stale); a third runs on a node not listed
    placed = [("a", "node-00000", (0, 1, 2, 3, 4, 5)), ("b", "node-00000", (6, 7)), ("c", "node-gone", ())]
    for name, where, indices in placed:
        pod = _pod(name, six, where, indices, NOW - 60)
        pods[pod.key] = pod
        by_node.setdefault(where, set()).add(pod.key)
        job: Job = _job(
            name,
            six,
            (pod.key,),
            running=(where,),
            queue="root",
            pclass=CLASSES[1],
            submit=NOW - 60,
            limit=3600,
        )
        jobs[job.key] = job
    return Snapshot(
        version=1,
        taken_at=NOW,
        nodes=MappingProxyType({n.name: n for n in nodes}),
        pods=MappingProxyType(pods),
        jobs=MappingProxyType(jobs),
        workloads=MappingProxyType({}),
        priority_classes=MappingProxyType({pc.name: pc for pc in CLASSES}),
        pods_by_node=MappingProxyType({k: frozenset(v) for k, v in by_node.items()}),
    )


def test_used_never_above_total_in_partitions_and_queues() -> None:
    result = schedule(_snapshot(), Policy(), NOW, memo=Memo())
    assert result.cluster.gpu == 16_000
    for part in result.partitions:
        assert part.allocated.gpu <= part.capacity.gpu
    assert sum(p.allocated.gpu for p in result.partitions) == 8_000  # node-00000 full, node-00001 empty
    root = result.queues["root"]
    assert root.used.gpu <= result.cluster.gpu
    # one 6-GPU pod is held: "b" is beyond node-00000's 8 GPUs, "c" on a node not in the list
    assert root.used.gpu == 6_000
    assert root.running_jobs == 3  # still counted as running jobs


def test_scheduling_usage_still_counts_every_running_member() -> None:
    """Fair share keeps the schedulers' count: the share is of all 18 running GPUs, not the 6 held."""
    result = schedule(_snapshot(), Policy(), NOW, memo=Memo())
    assert result.queues["root"].cluster_share > 6_000 / 16_000
