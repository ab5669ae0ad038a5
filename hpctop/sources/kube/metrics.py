"""GPU telemetry from Prometheus (the DCGM exporter's gauges), polled in the background.

Why Prometheus and not the exporters themselves: the exporters listen on every GPU node's pod
network, which a laptop with a kubeconfig rarely reaches, and scraping a thousand of them is
Prometheus's job already. One instant query per poll fetches every gauge hpctop shows
(``{__name__=~"DCGM_FI_DEV_GPU_UTIL|..."}``), so a poll is one round trip whatever the cluster
size, and the answer is joined to nodes and pods by :func:`hpctop.model.metrics.join_samples`.

Failures never stop anything else: the poller runs as one task beside the reflectors, every
request has a total timeout, and a failed poll keeps the last GPUs, marks them stale (the status
bar says ``GPU metrics stale 42s (...)``) and retries after a backoff, never faster than the poll
interval. Prometheus answers are untrusted input: a malformed answer is a failed poll, and label
values are capped (they are sanitised again where they are drawn).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Mapping
from typing import Any

import aiohttp
import orjson

from hpctop.errors import HpctopError
from hpctop.model.metrics import LABEL_CAP, METRIC_FIELDS, MetricsView, Sample, join_samples
from hpctop.sources.kube.backoff import Backoff

#: seconds between polls (DCGM exporter's default collection interval is 30 s; 10 s is lively enough)
POLL_INTERVAL = 10.0
#: seconds one query may take, connection included
QUERY_TIMEOUT = 5.0
#: the one instant query that fetches every gauge hpctop shows
QUERY = '{__name__=~"' + "|".join(METRIC_FIELDS) + '"}'
MAX_BODY = 32 * 1024 * 1024


class MetricsError(HpctopError):
    """A poll that gave no usable answer; the message is one short line for the status bar."""


def parse_vector(raw: bytes) -> list[Sample]:
    """The samples of a ``/api/v1/query`` answer whose result is an instant vector.

    Raises :class:`MetricsError` for anything else (an error answer, a matrix, broken JSON);
    a single malformed element is skipped, NaN values included.
    """
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise MetricsError(f"not JSON: {exc.msg}") from None
    if not isinstance(doc, dict):
        raise MetricsError("not a Prometheus answer")
    if doc.get("status") != "success":
        raise MetricsError(f"query failed: {str(doc.get('error') or doc.get('errorType') or '?')[:120]}")
    data = doc.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "vector":
        raise MetricsError("not an instant vector")
    result = data.get("result")
    if not isinstance(result, list):
        raise MetricsError("no result list")
    samples: list[Sample] = []
    for item in result:
        sample = _sample(item)
        if sample is not None:
            samples.append(sample)
    return samples


def _sample(item: Any) -> Sample | None:
    if not isinstance(item, dict):
        return None
    metric, value = item.get("metric"), item.get("value")
    if not isinstance(metric, dict) or not isinstance(value, list) or len(value) != 2:
        return None
    try:
        number = float(value[1])
    except (TypeError, ValueError):
        return None
    if math.isnan(number):
        return None
    labels = {str(k)[:LABEL_CAP]: str(v)[:LABEL_CAP] for k, v in metric.items()}
    return Sample(labels.pop("__name__", ""), labels, number)


class PrometheusPoller:
    """Polls one Prometheus for the DCGM gauges and publishes a :class:`MetricsView` after each poll.

    ``context`` is called at each poll for what the join needs: the node names and a map of pod
    name → node (for a host label holding the exporter pod's name). ``publish`` gets every new
    view, good or stale; it runs in the poller's loop and must be quick (it swaps a reference).
    """

    def __init__(
        self,
        url: str,
        publish: Callable[[MetricsView], None],
        context: Callable[[], tuple[Mapping[str, object], Mapping[str, str]]] = lambda: ({}, {}),
        *,
        interval: float = POLL_INTERVAL,
        timeout: float = QUERY_TIMEOUT,
        clock: Callable[[], float] = time.time,
        backoff: Backoff | None = None,
    ) -> None:
        self.url = url.rstrip("/") + "/api/v1/query"
        self.publish = publish
        self.context = context
        self.interval = interval
        self.timeout = timeout
        self._clock = clock
        self.backoff = backoff if backoff is not None else Backoff(initial=min(interval, 2.0), cap=60.0)
        self.view = MetricsView()
        self.polls = 0

    async def query(self, session: aiohttp.ClientSession) -> list[Sample]:
        """One instant query; :class:`MetricsError` for every way it can fail."""
        try:
            async with session.get(
                self.url,
                params={"query": QUERY},
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                headers={"Accept": "application/json"},
            ) as response:
                body = await response.content.read(MAX_BODY)
                if response.status >= 400:
                    try:
                        parse_vector(body)  # Prometheus explains a bad query in JSON; a proxy does not
                    except MetricsError as exc:
                        if str(exc).startswith("query failed"):
                            raise MetricsError(f"HTTP {response.status}: {exc}") from None
                    raise MetricsError(f"HTTP {response.status}")
                return parse_vector(body)
        except TimeoutError:
            raise MetricsError(f"no answer in {self.timeout:g}s") from None
        except aiohttp.ClientError as exc:
            raise MetricsError(f"unreachable: {type(exc).__name__}") from None

    async def poll_once(self, session: aiohttp.ClientSession) -> bool:
        """Query, join and publish; True when the poll succeeded."""
        self.polls += 1
        try:
            samples = await self.query(session)
        except MetricsError as exc:
            self.view = self.view.failed(self._clock(), str(exc))
            self.publish(self.view)
            return False
        nodes, pod_nodes = self.context()
        gpus, skipped = join_samples(samples, nodes, pod_nodes)
        self.view = MetricsView(gpus=gpus, updated_at=self._clock(), skipped=skipped)
        self.publish(self.view)
        return True

    async def run(self) -> None:
        """Poll until cancelled: every ``interval`` while healthy, backing off while failing."""
        async with aiohttp.ClientSession() as session:
            while True:
                if await self.poll_once(session):
                    self.backoff.reset()
                    delay = self.interval
                else:
                    delay = max(self.backoff.next(), self.interval)
                await asyncio.sleep(delay)


__all__ = ["QUERY", "MetricsError", "PrometheusPoller", "parse_vector"]
