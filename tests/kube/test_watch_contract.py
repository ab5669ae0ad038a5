"""The rest of the watch contract (RELIABILITY.md §6): W6, W17 and C2, over real HTTP.

W6 and W17 run on loop time (looptime), so a 30 s backoff cap or a 70 s deadline costs no wall
time and the gaps measured are exact. C2 runs on the real clock: the exec plugin is a real
subprocess writing a real RFC 3339 expiry, and looptime would leap over the plugin's run time
(it fast-forwards whenever only external I/O is pending), so its token lifetime is two seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
import sys
import time
from pathlib import Path

import kmock
import pytest

from hpctop.model.store import Store
from hpctop.sources.kube.connection import Connection, load_connection
from hpctop.sources.kube.reflector import Reflector, ReflectorSettings, ReflectorState, ReflectorStatus
from hpctop.sources.kube.resources import NODES as NODE_SPEC
from hpctop.sources.kube.resources import PODS as POD_SPEC
from hpctop.sources.kube.transport import KubeClient
from tests.kube.conftest import write_kubeconfig
from tests.kube.fakeserver import NODES, PODS, FakeApiServer
from tests.kube.reflectors import pods_in, reflecting_on, server_pods
from tests.model_fixtures import node, pod

LIST = kmock.action.LIST
WATCH = kmock.action.WATCH


def initial_watches(fake: FakeApiServer) -> list[dict[str, str]]:
    return [p for _, p in fake.calls(PODS, WATCH) if p.get("sendInitialEvents") == "true"]


# -- W17: streaming list ----------------------------------------------------------------------


@pytest.mark.looptime
async def test_w17_streaming_list_swaps_in_at_the_end_bookmark(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    fake.watch_list = True
    for i in range(3):
        fake.upsert(PODS, pod(f"p{i}"))
    store.replace("Pod", [], "")
    log: list[tuple[float, ReflectorStatus]] = []
    async with KubeClient(connection) as client, reflecting_on(client, store, log=log, watch_list=True) as r:
        await asyncio.wait_for(r.wait_synced(), 60)
        assert pods_in(store) == server_pods(fake)
        fake.upsert(PODS, pod("late"))
        fake.remove(PODS, "p0", "team-a")
        await asyncio.sleep(1)
        assert pods_in(store) == server_pods(fake)
        assert r.status.watch_list and r.status.lists == 1
    assert fake.calls(PODS, LIST) == []  # no list request at all
    [params] = [p for _, p in fake.calls(PODS, WATCH)]  # one stream: the list, then the watch
    assert params["resourceVersionMatch"] == "NotOlderThan" and params["resourceVersion"] == ""
    assert params["allowWatchBookmarks"] == "true"
    first_synced = next(s for _, s in log if s.state is ReflectorState.SYNCED)
    assert first_synced.resource_version == "4"  # the end bookmark's RV: three creates after RV 1


@pytest.mark.looptime
async def test_w17_objects_missing_from_the_initial_events_are_dropped(
    fake: FakeApiServer, connection: Connection
) -> None:
    """Nothing reaches the store before the end bookmark, and then everything at once: a pod the
    store held but the server no longer has is gone in the same swap (as after a relist)."""
    fake.watch_list = True
    fake.upsert(PODS, pod("kept"))
    store = Store(clock=lambda: 1767225600.0)
    store.replace("Pod", [_decoded_pod("vanished")], "1")
    seen: list[set[tuple[str, str]]] = []
    loop_store = store

    async with KubeClient(connection) as client:
        reflector = Reflector(
            client,
            loop_store,
            POD_SPEC,
            settings=ReflectorSettings(watch_list=True, timeout_seconds=(3000, 3000)),
            on_status=lambda s: seen.append(set(loop_store.pods)),
        )
        task = asyncio.create_task(reflector.run())
        await asyncio.wait_for(reflector.wait_synced(), 60)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert set(store.pods) == {("team-a", "kept")}
    # every status before SYNCED saw the old state whole: no half-swapped store
    assert {("team-a", "vanished")} in seen


def _decoded_pod(name: str) -> object:
    import orjson

    from hpctop.model.decode import decode_object

    return decode_object("Pod", orjson.dumps(pod(name) | {"kind": "Pod", "apiVersion": "v1"}))


@pytest.mark.looptime
async def test_w17_rejected_streaming_list_falls_back_to_list_and_watch_for_the_session(
    fake: FakeApiServer, connection: Connection, store: Store
) -> None:
    for i in range(3):
        fake.upsert(PODS, pod(f"p{i}"))  # fake.watch_list is False: sendInitialEvents gets 422
    async with KubeClient(connection) as client, reflecting_on(client, store, watch_list=True) as r:
        await asyncio.wait_for(r.wait_synced(), 60)
        assert pods_in(store) == server_pods(fake)
        fake.disconnect()
        fake.upsert(PODS, pod("after"))
        fake.compact()  # the re-watch gets 410: a relist, which must be a plain list again
        await asyncio.sleep(5)
        assert pods_in(store) == server_pods(fake)
        assert not r.status.watch_list
    assert len(initial_watches(fake)) == 1
    assert len(fake.calls(PODS, LIST)) == 2


@pytest.mark.looptime
async def test_w17_no_end_bookmark_within_the_deadline_falls_back(
    fake: FakeApiServer, connection: Connection, store: Store, looptime: float
) -> None:
    fake.watch_list = True
    fake.watch_list_end = False
    fake.upsert(PODS, pod("p0"))
    log: list[tuple[float, ReflectorStatus]] = []
    async with KubeClient(connection) as client, reflecting_on(client, store, log=log, watch_list=True) as r:
        await asyncio.wait_for(r.wait_synced(), 200)
        assert pods_in(store) == server_pods(fake)
    [(listed_at, _)] = fake.calls(PODS, LIST)
    [(streamed_at, _)] = [(t, p) for t, p in fake.calls(PODS, WATCH) if p.get("sendInitialEvents")]
    assert 69 <= listed_at - streamed_at <= 72  # the 70 s inactivity deadline, then a list at once
    assert all(s.state is not ReflectorState.SYNCED for t, s in log if t < listed_at)


# -- W6: connection refused, server down ------------------------------------------------------


class Outage:
    """A TCP relay in front of the fake server that can go down (connection refused) and up."""

    def __init__(self, target: str) -> None:
        host, port = target.removeprefix("http://").split(":")
        self.target = (host, int(port))
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def up(self) -> None:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.port, reuse_address=True)

    async def down(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, ConnectionError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self._writers -= {writer, up_writer}


def failure_times(log: list[tuple[float, ReflectorStatus]]) -> list[float]:
    """Loop times of the reflector's failed attempts (each bumps ``failures`` once)."""
    times, last = [], 0
    for t, s in log:
        if s.failures > last:
            times.append(t)
            last = s.failures
    return times


@pytest.mark.looptime
async def test_w6_refused_at_start_and_mid_watch_backs_off_and_recovers_without_loss(
    fake: FakeApiServer, tmp_path: Path, server_url: str, store: Store
) -> None:
    outage = Outage(server_url)
    connection = await load_connection(str(write_kubeconfig(tmp_path / "config", outage.url)))
    loop = asyncio.get_running_loop()
    fake.upsert(PODS, pod("p0"))
    log: list[tuple[float, ReflectorStatus]] = []
    async with KubeClient(connection) as client, reflecting_on(client, store, log=log) as r:
        # -- down at start: refused, backing off with a visible "reconnecting since"
        await asyncio.sleep(100)
        assert r.status.state is ReflectorState.RETRYING and r.status.stale
        assert r.status.note.startswith("reconnecting since ") and r.status.reconnecting_since
        start_gaps = [b - a for a, b in itertools_pairwise(failure_times(log))]
        assert start_gaps[0] <= 1.6 + 1e-6  # 0.8 s with full jitter
        assert max(start_gaps) <= 30.0 + 1e-6  # the cap
        assert max(start_gaps) > 10  # it grew
        assert len(start_gaps) <= 12  # ~0.22 QPS, not a hot loop
        await outage.up()
        await asyncio.wait_for(r.wait_synced(), 40)
        assert pods_in(store) == server_pods(fake)
        assert r.status.reconnecting_since is None
        lists_before = len(fake.calls(PODS, LIST))
        resume_rv = r.status.resource_version

        # -- down mid-watch: changes made meanwhile arrive after the recovery, with no relist
        await outage.down()
        fake.upsert(PODS, pod("during"))
        fake.remove(PODS, "p0", "team-a")
        down_at = loop.time()
        await asyncio.sleep(90)
        assert r.status.stale and r.status.note.startswith("reconnecting since ")
        await outage.up()
        await asyncio.wait_for(r.wait_synced(), 40)
        await asyncio.sleep(1)
        assert pods_in(store) == server_pods(fake)
        assert len(fake.calls(PODS, LIST)) == lists_before
        [first_after] = [p for t, p in fake.calls(PODS, WATCH) if t > down_at][:1]
        assert first_after["resourceVersion"] == resume_rv
        mid_gaps = [b - a for a, b in itertools_pairwise([t for t in failure_times(log) if t >= down_at])]
        assert mid_gaps and max(mid_gaps) <= 30.0 + 1e-6

        # -- healthy for over two minutes: the next outage starts from the initial step again
        await asyncio.sleep(150)
        await outage.down()
        second_down = loop.time()
        await asyncio.sleep(5)
        again = [t for t in failure_times(log) if t >= second_down]
        assert len(again) >= 2 and again[1] - again[0] <= 1.6 + 1e-6
        await outage.up()


def itertools_pairwise(values: list[float]) -> list[tuple[float, float]]:
    return list(itertools.pairwise(values))


# -- C2: refresh before a known expiry --------------------------------------------------------

PLUGIN = """
import datetime, json, pathlib, sys, time
counter = pathlib.Path(sys.argv[1])
n = int(counter.read_text() or "0") + 1 if counter.exists() else 1
counter.write_text(str(n))
expiry = time.time() + float(sys.argv[2])
stamp = datetime.datetime.fromtimestamp(expiry, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {"token": f"tok-{n}-{expiry!r}", "expirationTimestamp": stamp}}))
"""


def token_expiry(token: str) -> float | None:
    parts = token.split("-", 2)
    return float(parts[2]) if len(parts) == 3 and parts[0] == "tok" else None


async def test_c2_token_is_refreshed_before_expiry_and_watches_reopen_in_time(
    fake: FakeApiServer, tmp_path: Path, server_url: str
) -> None:
    script, counter = tmp_path / "plugin.py", tmp_path / "calls"
    script.write_text(PLUGIN)
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(script), str(counter), "2.0"],
            "interactiveMode": "Never",
        }
    }
    connection = await load_connection(str(write_kubeconfig(tmp_path / "config", server_url, user=user)))
    fake.token_expiry, fake.token_clock = token_expiry, time.time
    fake.bookmark_interval = 0.5
    fake.upsert(PODS, pod("p0"))
    fake.upsert(NODES, node("n1"))
    store = Store(clock=time.time)
    async with (
        KubeClient(connection) as client,
        reflecting_on(client, store, inactivity=5.0) as pods,
        reflecting_on(client, store, NODE_SPEC, inactivity=5.0) as nodes,
    ):
        await asyncio.wait_for(asyncio.gather(pods.wait_synced(), nodes.wait_synced()), 10)
        await asyncio.sleep(4.5)  # two token lifetimes and more
        fake.upsert(PODS, pod("late"))
        await asyncio.sleep(0.3)
        assert pods_in(store) == server_pods(fake)
        assert pods.status.state is ReflectorState.SYNCED and nodes.status.state is ReflectorState.SYNCED
    calls = int(counter.read_text())
    assert fake.expired_rejections == []  # never a 401 for an old token
    assert fake.expired_cuts == 0  # never a watch cut at its token's expiry
    assert connection.refreshes >= 2
    assert calls == connection.refreshes + 1  # single-flight: two reflectors, one plugin run each time
    assert len(fake.calls(PODS, LIST)) == 1  # reopening for a token is no relist
    assert len(fake.calls(PODS, WATCH)) >= 3
