"""GPU metrics from the DCGM exporter through Prometheus: the joins (SCHEDULERS.md §3.5) and outages.

The joins are tested on plain label dicts (every spelling the exporter and Prometheus produce);
the poller against a tiny real Prometheus (aiohttp on 127.0.0.1) that can be made to fail, and the
live session against the FakeApiServer plus that Prometheus, so staleness is seen where the user
sees it: in the status bar's connection text.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from hpctop.model.metrics import GpuMetrics, MetricsView, Sample, holder_of, join_samples
from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.metrics import QUERY, MetricsError, PrometheusPoller, parse_vector
from tests.kube.conftest import FAST
from tests.kube.fakeserver import NODES, PODS, FakeApiServer
from tests.model_fixtures import node, pod
from tests.polling import until

H100 = "NVIDIA H100 80GB HBM3"


def s(metric: str, value: float, **labels: str) -> dict[str, Any]:
    """One element of a Prometheus instant vector, as the HTTP API writes it."""
    return {"metric": {"__name__": metric, **labels}, "value": [1767225600.0, repr(value)]}


#: every label spelling of §3.5 on one cluster: n1 runs the exporter with host networking, n2
#: without (the host label is then the exporter pod's name), and GPU 3 of n1 is split by MIG
SAMPLES: list[dict[str, Any]] = [
    # current exporter, Prometheus honor_labels: false -> exported_* name the holder, pod the exporter
    s("DCGM_FI_DEV_GPU_UTIL", 87.0, gpu="0", UUID="GPU-0", modelName=H100, hostname="n1",
      exported_pod="train-0", exported_namespace="team-a", exported_container="main",
      pod="dcgm-exporter-n1abc", namespace="gpu-operator"),
    s("DCGM_FI_DEV_FB_USED", 40960.0, gpu="0", hostname="n1", exported_pod="train-0",
      exported_namespace="team-a"),
    s("DCGM_FI_DEV_FB_FREE", 40960.0, gpu="0", hostname="n1"),
    s("DCGM_FI_DEV_POWER_USAGE", 612.5, gpu="0", hostname="n1"),
    s("DCGM_FI_DEV_GPU_TEMP", 71.0, gpu="0", hostname="n1"),
    s("DCGM_FI_DEV_XID_ERRORS", 79.0, gpu="0", hostname="n1"),
    # older exporter: Hostname, --use-old-namespace pod_name/pod_namespace
    s("DCGM_FI_DEV_GPU_UTIL", 12.0, gpu="1", Hostname="n1", pod_name="train-1", pod_namespace="team-b",
      container_name="worker"),
    # no host networking: the host label is the exporter pod's name; honor_labels: true -> pod/namespace
    s("DCGM_FI_DEV_GPU_UTIL", 55.0, gpu="2", Hostname="dcgm-exporter-x7k2p", pod="infer-7",
      namespace="team-c", container="srv"),
    # MIG: GPU_UTIL is 0 there; GR engine activity says how busy each instance is
    s("DCGM_FI_DEV_GPU_UTIL", 0.0, gpu="3", hostname="n1", GPU_I_PROFILE="3g.40gb", GPU_I_ID="1",
      pod="mig-a", namespace="team-a"),
    s("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.75, gpu="3", hostname="n1", GPU_I_PROFILE="3g.40gb", GPU_I_ID="1"),
    s("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.0, gpu="3", hostname="n1", GPU_I_PROFILE="3g.40gb", GPU_I_ID="2"),
    # a GPU nobody holds: plain pod names the exporter itself, so no holder
    s("DCGM_FI_DEV_GPU_UTIL", 0.0, gpu="4", hostname="n1", pod="dcgm-exporter-n1abc",
      namespace="gpu-operator"),
    # unusable: no GPU index
    s("DCGM_FI_DEV_GPU_UTIL", 50.0, hostname="n1"),
]  # fmt: skip


def samples() -> list[Sample]:
    return parse_vector(vector(SAMPLES))


def vector(result: list[dict[str, Any]]) -> bytes:
    import orjson

    return orjson.dumps({"status": "success", "data": {"resultType": "vector", "result": result}})


def test_joins_every_label_spelling_and_mig() -> None:
    gpus, skipped = join_samples(samples(), {"n1": None, "n2": None}, {"dcgm-exporter-x7k2p": "n2"})
    assert skipped == 1  # the sample without a GPU index
    g0 = gpus[("n1", 0, None)]
    assert g0 == GpuMetrics(
        node="n1", index=0, uuid="GPU-0", model=H100, util_pct=87.0, fb_used_mib=40960.0,
        fb_free_mib=40960.0, power_w=612.5, temp_c=71.0, last_xid=79,
        holder=("team-a", "train-0", "main"),
    )  # fmt: skip
    assert g0.busy_pct == 87.0 and g0.fb_total_mib == 81920.0
    assert gpus[("n1", 1, None)].holder == ("team-b", "train-1", "worker")
    # joined through the exporter pod's node, not kept under the pod's name
    assert gpus[("n2", 2, None)].holder == ("team-c", "infer-7", "srv")
    assert not any(k[0] == "dcgm-exporter-x7k2p" for k in gpus)
    mig1, mig2 = gpus[("n1", 3, "1")], gpus[("n1", 3, "2")]
    assert (mig1.mig_profile, mig1.util_pct, mig1.busy_pct) == ("3g.40gb", 0.0, 75.0)
    assert mig1.holder == ("team-a", "mig-a", "")
    assert (mig2.busy_pct, mig2.holder) == (0.0, None)
    assert gpus[("n1", 4, None)].holder is None
    view = MetricsView(gpus=gpus)
    assert [g.key for g in view.on_node("n1")] == [
        ("n1", 0, None), ("n1", 1, None), ("n1", 3, "1"), ("n1", 3, "2"), ("n1", 4, None)
    ]  # fmt: skip
    assert [g.key for g in view.of_pod("team-a", "mig-a")] == [("n1", 3, "1")]


def test_unknown_host_is_kept_and_exported_labels_win() -> None:
    gpus, _ = join_samples(samples(), set())  # no nodes known yet (first list still running)
    assert ("n1", 0, None) in gpus  # the host label is kept, so the GPU is still listed
    assert ("dcgm-exporter-x7k2p", 2, None) in gpus
    labels = {"exported_pod": "a", "exported_namespace": "x", "pod_name": "b", "pod": "c", "hostname": "h"}
    assert holder_of(labels, "h") == ("x", "a", "")
    assert holder_of({"pod": "h", "namespace": "ns"}, "h") is None  # the exporter pod named as host


def test_parse_vector_rejects_what_is_not_an_instant_vector() -> None:
    with pytest.raises(MetricsError, match="query failed"):
        parse_vector(b'{"status":"error","errorType":"bad_data","error":"parse error"}')
    with pytest.raises(MetricsError, match="instant vector"):
        parse_vector(b'{"status":"success","data":{"resultType":"matrix","result":[]}}')
    with pytest.raises(MetricsError, match="not JSON"):
        parse_vector(b"<html>")
    odd: list[dict[str, Any]] = [
        {"metric": {}, "value": [0, "NaN"]},
        {"metric": "x"},
        s("DCGM_FI_DEV_GPU_TEMP", 40.0, gpu="0"),
    ]
    assert [x.metric for x in parse_vector(vector(odd))] == ["DCGM_FI_DEV_GPU_TEMP"]


class Prometheus:
    """A tiny Prometheus HTTP API: answers ``result``, or ``fail`` (an HTTP status, or "hang")."""

    def __init__(self) -> None:
        self.result: list[dict[str, Any]] = SAMPLES
        self.fail: int | str | None = None
        self.queries: list[str] = []
        self.url = ""

    async def query(self, request: web.Request) -> web.StreamResponse:
        self.queries.append(request.query.get("query", ""))
        if self.fail == "hang":
            await asyncio.sleep(30)
        if isinstance(self.fail, int):
            return web.Response(status=self.fail, text="upstream connect error")
        return web.Response(body=vector(self.result), content_type="application/json")


@pytest.fixture
async def prom() -> AsyncIterator[Prometheus]:
    p = Prometheus()
    app = web.Application()
    app.router.add_get("/prom/api/v1/query", p.query)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    p.url = f"http://127.0.0.1:{port}/prom/"  # a path prefix, as behind an ingress
    yield p
    await runner.cleanup()


async def test_poller_outage_marks_stale_keeps_values_and_recovers(prom: Prometheus) -> None:
    now = [1000.0]
    views: list[MetricsView] = []
    poller = PrometheusPoller(
        prom.url, views.append, lambda: ({"n1": None, "n2": None}, {"dcgm-exporter-x7k2p": "n2"}),
        timeout=0.3, clock=lambda: now[0],
    )  # fmt: skip
    async with aiohttp.ClientSession() as session:
        assert await poller.poll_once(session)
        assert prom.queries == [QUERY]
        assert all(name in QUERY for name in ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_XID_ERRORS"))
        good = views[-1]
        assert not good.stale and good.note(now[0]) == "" and len(good.gpus) == 6

        prom.fail = 503
        now[0] = 1030.0
        assert not await poller.poll_once(session)
        assert views[-1].stale and views[-1].gpus == good.gpus  # the last values stay, marked
        assert views[-1].note(now[0]) == "GPU metrics stale 30s (HTTP 503)"

        prom.fail = "hang"
        now[0] = 1042.0
        assert not await poller.poll_once(session)
        assert views[-1].note(now[0]) == "GPU metrics stale 42s (no answer in 0.3s)"
        assert views[-1].failing_since == 1030.0  # since the first failure of the run

        prom.fail = None
        assert await poller.poll_once(session)
        assert not views[-1].stale and views[-1].updated_at == 1042.0


async def test_live_session_shows_metrics_and_a_stale_note(
    fake: FakeApiServer, connection: Connection, prom: Prometheus
) -> None:
    fake.upsert(NODES, node("n1"))
    fake.upsert(NODES, node("n2"))
    fake.upsert(PODS, pod("dcgm-exporter-x7k2p", namespace="gpu-operator", node="n2", phase="Running"))
    session = LiveConsoleSession(connection, settings=FAST, prometheus_url=prom.url, metrics_interval=0.05)
    session.start()
    try:
        await until(lambda: session.synced, what="sync")
        await until(
            lambda: session.gpu_metrics is not None and ("n2", 2, None) in session.gpu_metrics.gpus,
            what="GPU 2 joined to n2 through the exporter pod",
        )
        assert session.connection == "synced"
        prom.fail = 500
        await until(lambda: "GPU metrics stale" in session.connection, what="the stale note")
        assert session.connection.startswith("synced, GPU metrics stale")
        assert session.gpu_metrics is not None and ("n1", 0, None) in session.gpu_metrics.gpus
        prom.fail = None
        await until(lambda: session.connection == "synced", timeout=5, what="recovery")
    finally:
        assert await asyncio.to_thread(session.close)
