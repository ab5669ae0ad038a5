"""Kueue's own pending positions, from its visibility API (SCHEDULERS.md §5.5), polled.

Why ask Kueue instead of relying on hpctop's core: the core orders pending jobs by its model of
the queue (priority, then age), which is what Kueue does for ``StrictFIFO``/``BestEffortFIFO``
queues in the simple case, but Kueue also knows what hpctop cannot see (requeue backoff, the
``requeuingStrategy``, workloads evicted and waiting, fair sharing); its visibility API says where
each pending Workload really stands, in its ClusterQueue and in its LocalQueue. The console shows
both when both are known.

How: an aggregated API (``visibility.kueue.x-k8s.io``; ``v1beta2``, older ``v1beta1``, earliest
``v1alpha1``), served only when Kueue's ``VisibilityOnDemand`` feature is on. It is polled, not
watched (the server has no watch for it). Nothing is asked until the store holds a ClusterQueue
with pending workloads; then the group is discovered once (``GET /apis/<group>``; a 404 means
not served, which is normal, and nothing more is asked for a long while), and each such
ClusterQueue's ``pendingworkloads`` is read every :data:`POLL_INTERVAL` seconds. A 403 (the
identity may not ``get clusterqueues/pendingworkloads``) is a note, never an error that stops
anything; the positions already shown are kept and marked stale by their age.

A pending Workload is matched to its job by its controller owner (``metadata.ownerReferences``),
which is how the store keys jobs: ``(namespace, owner kind, owner name)``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import orjson

from hpctop.model.objects import JobKey
from hpctop.sources.kube.errors import Forbidden, KubeError, NotFound, Unauthorized
from hpctop.sources.kube.transport import KubeClient

GROUP = "visibility.kueue.x-k8s.io"
VERSIONS = ("v1beta2", "v1beta1", "v1alpha1")
POLL_INTERVAL = 10.0
#: how long to wait before asking again when the API is not served or refused
RETRY_INTERVAL = 300.0
#: workloads asked for per ClusterQueue (the API's own default is 1000)
LIMIT = 1000


@dataclass(frozen=True, slots=True)
class PendingPosition:
    """Where one pending Workload stands in Kueue's queues (positions count from 0, as Kueue's)."""

    workload: str
    cluster_queue: str
    local_queue: str
    in_cluster_queue: int
    in_local_queue: int
    priority: int


@dataclass(frozen=True, slots=True)
class PendingPositions:
    """The positions of every pending Workload found at the last poll, by job."""

    by_job: Mapping[JobKey, PendingPosition] = field(default_factory=lambda: MappingProxyType({}))
    at: float | None = None  # wall-clock time of the poll that produced them
    note: str = ""  # why positions are missing or old ("" when fine)


def parse_pending(raw: bytes, cluster_queue: str) -> dict[JobKey, PendingPosition]:
    """A ``PendingWorkloadsSummary`` → positions by job; items it cannot read are skipped."""
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    items = doc.get("items") if isinstance(doc, dict) else None
    out: dict[JobKey, PendingPosition] = {}
    for item in items if isinstance(items, list) else ():
        try:
            meta = item["metadata"]
            namespace, name = str(meta.get("namespace") or ""), str(meta["name"])
            position = PendingPosition(
                workload=name,
                cluster_queue=cluster_queue,
                local_queue=str(item.get("localQueueName") or ""),
                in_cluster_queue=int(item.get("positionInClusterQueue", -1)),
                in_local_queue=int(item.get("positionInLocalQueue", -1)),
                priority=int(item.get("priority") or 0),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
        out[_job_of(item, namespace, name)] = position
    return out


def _job_of(item: Mapping[str, Any], namespace: str, name: str) -> JobKey:
    owners = item["metadata"].get("ownerReferences") or []
    chosen = next((o for o in owners if isinstance(o, dict) and o.get("controller")), None)
    if chosen is None and owners and isinstance(owners[0], dict):
        chosen = owners[0]
    if chosen is not None and chosen.get("kind") and chosen.get("name"):
        return (namespace, str(chosen["kind"]), str(chosen["name"]))
    return (namespace, "Workload", name)


def served_version(raw: bytes) -> str | None:
    """The version to use from an ``APIGroup`` document, or None when it lists none we read."""
    try:
        doc = orjson.loads(raw)
        listed = {str(v["version"]) for v in doc.get("versions") or []}
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return None
    return next((v for v in VERSIONS if v in listed), None)


class KueueVisibilityPoller:
    """Polls the visibility API for the ClusterQueues ``cluster_queues()`` names; hands each
    result to ``publish`` (one reference swap on the reader's side)."""

    def __init__(
        self,
        client: KubeClient,
        cluster_queues: Callable[[], Iterable[str]],
        publish: Callable[[PendingPositions], None],
        *,
        interval: float = POLL_INTERVAL,
        retry_interval: float = RETRY_INTERVAL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.cluster_queues = cluster_queues
        self.publish = publish
        self.interval = interval
        self.retry_interval = retry_interval
        self.clock = clock
        self.version: str | None = None  # once discovered
        self.polls = 0
        self._last = PendingPositions()

    async def run(self) -> None:
        """Until cancelled. Never raises for the server's answers (they become notes)."""
        while True:
            queues = sorted(set(self.cluster_queues()))
            if not queues:
                await asyncio.sleep(self.interval)
                continue
            if self.version is None:
                self.version = await self._discover()
                if self.version is None:
                    await asyncio.sleep(self.retry_interval)
                    continue
            wait = await self.poll(queues)
            await asyncio.sleep(wait)

    async def _discover(self) -> str | None:
        try:
            raw = await self.client.get(f"/apis/{GROUP}", {})
        except NotFound:
            return None  # not served: normal, no note
        except (Forbidden, Unauthorized):
            self._publish(self._last.by_job, self._last.at, "Kueue positions: forbidden")
            return None
        except KubeError as exc:
            self._publish(self._last.by_job, self._last.at, f"Kueue positions: {type(exc).__name__}")
            return None
        return served_version(raw)

    async def poll(self, queues: Iterable[str]) -> float:
        """Read every queue's pending workloads once; returns how long to wait before the next poll."""
        found: dict[JobKey, PendingPosition] = {}
        for queue in queues:
            path = f"/apis/{GROUP}/{self.version}/clusterqueues/{queue}/pendingworkloads"
            try:
                raw = await self.client.get(path, {"limit": str(LIMIT)})
            except (Forbidden, Unauthorized):
                self._publish(self._last.by_job, self._last.at, "Kueue positions: forbidden")
                return self.retry_interval
            except NotFound:
                continue  # the queue was deleted since the store said so
            except KubeError as exc:  # kept, and aged, until the next poll answers
                self._publish(self._last.by_job, self._last.at, f"Kueue positions: {type(exc).__name__}")
                return self.interval
            found.update(parse_pending(raw, queue))
        self.polls += 1
        self._publish(found, self.clock(), "")
        return self.interval

    def _publish(self, by_job: Mapping[JobKey, PendingPosition], at: float | None, note: str) -> None:
        self._last = PendingPositions(MappingProxyType(dict(by_job)), at, note)
        self.publish(self._last)


__all__ = [
    "GROUP",
    "KueueVisibilityPoller",
    "PendingPosition",
    "PendingPositions",
    "parse_pending",
    "served_version",
]
