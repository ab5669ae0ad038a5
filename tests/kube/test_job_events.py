"""A job's Events for its detail screen: its owner and its pods, cleaned, without blocking the console.

The FakeApiServer serves ``events.k8s.io/v1`` Events over real HTTP. It ignores field selectors,
which is exactly the case the client-side filter is for: Events about other objects must not show.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.events import clean, list_job_events
from hpctop.sources.kube.transport import KubeClient
from tests.kube.conftest import FAST
from tests.kube.fakeserver import EVENTS, JOBS, NODES, PODS, FakeApiServer
from tests.model_fixtures import batch_job, node, pod
from tests.polling import until


def ev(name: str, kind: str, about: str, reason: str, note: str, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "team-a", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "regarding": {"kind": kind, "name": about, "namespace": "team-a"},
        "reason": reason,
        "note": note,
        "type": extra.pop("type", "Normal"),
        "reportingController": "kubelet",
        **extra,
    }


#: an OSC 52 clipboard write, a bell, a bidi override and a newline, in one kubelet message
PLANTED = "Back-off\x1b]52;c;cGF5bG9hZA==\x07 restarting\u202efailed\ncontainer"


def seed(fake: FakeApiServer) -> None:
    fake.upsert(NODES, node("n1"))
    fake.upsert(JOBS, batch_job("train", parallelism=2))
    for i in range(2):
        fake.upsert(PODS, pod(f"train-{i}", owner=("Job", "train"), node="n1", phase="Running", gpus=1))
    fake.upsert(EVENTS, ev("e1", "Job", "train", "SuccessfulCreate", "Created pod: train-0"))
    fake.upsert(
        EVENTS,
        ev(
            "e2", "Pod", "train-1", "BackOff", PLANTED,
            type="Warning", series={"count": 7, "lastObservedTime": "2026-01-01T00:05:00.000000Z"},
        ),
    )  # fmt: skip
    fake.upsert(EVENTS, ev("e3", "Pod", "other-0", "Scheduled", "not this job's"))
    fake.upsert(EVENTS, ev("e4", "Job", "train-0", "Odd", "a Job named like a pod: not this job's"))


async def test_events_of_owner_and_pods_sanitized(fake: FakeApiServer, connection: Connection) -> None:
    seed(fake)
    async with KubeClient(connection) as client:
        rows = await list_job_events(
            client, "team-a", [("Job", "train"), ("Pod", "train-0"), ("Pod", "train-1")]
        )
    assert [(r.kind, r.name, r.reason) for r in rows] == [
        ("Job", "train", "SuccessfulCreate"),
        ("Pod", "train-1", "BackOff"),
    ]  # oldest first; other objects' Events filtered out even though the server ignored the selector
    backoff = rows[1]
    assert (backoff.type, backoff.count, backoff.last_time) == ("Warning", 7, 1767225900.0)
    assert "\x1b" not in backoff.message and "\x07" not in backoff.message and "\u202e" not in backoff.message
    assert "\n" not in backoff.message and backoff.message.endswith("failed container")
    selectors = [str(r.params.get("fieldSelector")) for _, r in fake.log if r.url.path.endswith("/events")]
    assert sorted(selectors) == ["regarding.name=train", "regarding.name=train-0", "regarding.name=train-1"]


def test_clean_caps_and_strips() -> None:
    assert clean("ok") == "ok"
    assert clean("a\tb\r\nc") == "a b  c"
    assert clean("x" * 50, cap=10) == "x" * 9 + "…"
    assert clean("\u200bzero\x9bwidth") == "\N{REPLACEMENT CHARACTER}zero\N{REPLACEMENT CHARACTER}width"
    assert clean(None) == ""


@pytest.mark.serial  # wall time: a cached read within 50 ms
async def test_session_job_events_is_cached_and_refreshed_in_the_background(
    fake: FakeApiServer, connection: Connection
) -> None:
    seed(fake)
    session = LiveConsoleSession(connection, settings=FAST, events_ttl=0.2)
    session.start()
    key = ("team-a", "Job", "train")
    try:
        await until(lambda: session.synced and key in session.snapshot.jobs, what="the job")
        started = time.perf_counter()
        assert session.job_events(key) == []  # nothing cached yet: returns at once, fetch scheduled
        assert time.perf_counter() - started < 0.05
        await until(lambda: len(session.job_events(key)) == 2, what="the job's Events")
        fake.upsert(EVENTS, ev("e5", "Pod", "train-0", "Pulled", "image pulled"))
        await until(lambda: len(session.job_events(key)) == 3, what="the refresh after the TTL")
        assert session.job_events_error(key) == ""
    finally:
        assert await asyncio.to_thread(session.close)
