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
which is how the store keys jobs: ``(namespace, owner kind, owner name)``; the summary's decoding
is Kueue's (:mod:`hpctop.backends.kueue.wire`), the polling is here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType

import orjson

from hpctop.backends.kueue.read import VISIBILITY_GROUP, VISIBILITY_VERSIONS
from hpctop.backends.kueue.wire import PendingPosition, PendingPositions, parse_pending
from hpctop.model.objects import JobKey
from hpctop.sources.kube.errors import Forbidden, KubeError, NotFound, Unauthorized
from hpctop.sources.kube.transport import KubeClient

GROUP = VISIBILITY_GROUP
VERSIONS = VISIBILITY_VERSIONS
POLL_INTERVAL = 10.0
#: how long to wait before asking again when the API is not served or refused
RETRY_INTERVAL = 300.0
#: workloads asked for per ClusterQueue (the API's own default is 1000)
LIMIT = 1000


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
