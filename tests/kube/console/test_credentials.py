"""Credentials on a live console: C1 (interactive exec plugin), C3 (in-cluster token rotation), and
the OIDC refresh before an id-token's ``exp`` (RELIABILITY.md §4, §6 C).

Everything runs for real: the plugins are Python scripts run as subprocesses, the kubeconfig is a
file read by the official loader, the in-cluster case talks TLS to the fake API server with a CA
made by ``openssl``, and the OIDC refresh goes to a token endpoint served by the test over HTTP.
No part of the ``kubernetes`` package is patched.

C1 is shown on the session the CLI builds (:meth:`LiveConsoleSession.connect`, before Textual
starts) with the terminal stood in for by a pipe (stdin) and a file (stderr): the plugin prompts
there exactly once, before the console; every run while the console is up (token refreshes) gets
``/dev/null`` as stdin, says ``interactive: false`` and has its stderr captured, so the "terminal"
file never changes after the console started. A plugin that hangs is killed at the timeout, with
a clear error before any UI, or, during a refresh, a stale resource while keys are still handled.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import ssl
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import aiohttp.web
import pytest

from hpctop.model.store import Store
from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.sources.kube.connection import load_connection
from hpctop.sources.kube.errors import KubeConfigError
from hpctop.sources.kube.exec_plugin import ExecIO
from hpctop.sources.kube.reflector import ReflectorSettings, ReflectorState, ReflectorStatus
from hpctop.sources.kube.resources import NODES as NODE_SPEC
from hpctop.sources.kube.resources import PODS as POD_SPEC
from hpctop.tui.app import make_app
from hpctop.tui.widgets.jobs import JobsTable
from tests.kube.conftest import make_certificate, write_kubeconfig
from tests.kube.fakeserver import NODES, PODS, FakeApiServer
from tests.kube.reflectors import pods_in, reflecting, server_pods
from tests.model_fixtures import node, pod
from tests.polling import until

FAST = ReflectorSettings(backoff_initial=0.05, backoff_cap=0.2, inactivity=5.0)


def authorizations(fake: FakeApiServer) -> list[str]:
    return [str(request.headers.get("Authorization", "")) for _, request in fake.log]


# -- C1: an interactive exec plugin ------------------------------------------------------------

PLUGIN = r"""
import datetime, json, os, pathlib, sys, time
log, lifetime, hang = pathlib.Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
runs = len(log.read_text().splitlines()) if log.exists() else 0
interactive = json.loads(os.environ["KUBERNETES_EXEC_INFO"])["spec"]["interactive"]
entry = {"t": time.time(), "interactive": interactive, "pid": os.getpid()}
with log.with_suffix(".started").open("a") as out:  # before it may wait for anything
    out.write(json.dumps(entry) + "\n")
if interactive:
    sys.stderr.write("Password: ")
    sys.stderr.flush()
    entry["answer"] = sys.stdin.readline().strip()
else:
    entry["stdin"] = sys.stdin.read()  # /dev/null: nothing, at once
    sys.stderr.write("refreshing the token in the background\n")
if hang == "always" or (hang == "refresh" and runs >= 1):
    time.sleep(3600)
with log.open("a") as out:
    out.write(json.dumps(entry) + "\n")
expiry = time.time() + lifetime
stamp = datetime.datetime.fromtimestamp(expiry, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {"token": f"tok-{runs + 1}", "expirationTimestamp": stamp}}))
"""


def plugin_config(
    tmp_path: Path, server_url: str, *, lifetime: float = 3600.0, hang: str = "", mode: str = "IfAvailable"
) -> tuple[Path, Path]:
    """A kubeconfig whose user is the stub plugin; returns it and the plugin's run log."""
    script, log = tmp_path / "plugin.py", tmp_path / "runs.jsonl"
    script.write_text(PLUGIN)
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(script), str(log), str(lifetime), hang],
            "interactiveMode": mode,
        }
    }
    return write_kubeconfig(tmp_path / "config", server_url, user=user), log


def runs_of(log: Path) -> list[dict[str, Any]]:
    """The plugin's runs that got as far as printing a credential."""
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def starts_of(log: Path) -> list[dict[str, Any]]:
    """Every run of the plugin, from its first line (the hanging ones too)."""
    started = log.with_suffix(".started")
    return [json.loads(line) for line in started.read_text().splitlines()] if started.exists() else []


class Terminal:
    """A stand-in for the user's terminal: stdin is a pipe the test types into, stderr a file."""

    def __init__(self, tmp_path: Path, typed: bytes = b"") -> None:
        self.read_fd, self.write_fd = os.pipe()
        if typed:
            os.write(self.write_fd, typed)
        self.screen = tmp_path / "terminal"
        self._stderr = self.screen.open("wb")

    def io(self, interactive_timeout: float = 10.0, timeout: float = 10.0) -> ExecIO:
        return ExecIO(
            terminal=True,
            stdin=self.read_fd,
            stderr=self._stderr.fileno(),
            timeout=timeout,
            interactive_timeout=interactive_timeout,
        )

    def shown(self) -> bytes:
        self._stderr.flush()
        return self.screen.read_bytes()

    def close(self) -> None:
        self._stderr.close()
        os.close(self.read_fd)
        os.close(self.write_fd)


@pytest.fixture
def terminal(tmp_path: Path) -> Any:
    term = Terminal(tmp_path, typed=b"hunter2\n")
    yield term
    term.close()


def connect(config: Path, io: ExecIO) -> LiveConsoleSession:
    return LiveConsoleSession.connect(
        str(config), None, resources=[POD_SPEC, NODE_SPEC], settings=FAST, exec_io=io
    )


@pytest.mark.serial  # wall time: a 2 s token refreshed twice within 15 s
async def test_c1_interactive_plugin_prompts_before_the_console_and_never_during_it(
    fake: FakeApiServer, tmp_path: Path, server_url: str, terminal: Terminal
) -> None:
    config, log = plugin_config(tmp_path, server_url, lifetime=2.0)
    fake.upsert(NODES, node("n1"))
    fake.upsert(PODS, pod("p0"))
    session = await asyncio.to_thread(connect, config, terminal.io())
    try:
        await until(lambda: session.synced, 10, "the first list")
        before_console = terminal.shown()
        app = make_app(session, tick_interval=0.1, show_charts=False)
        async with app.run_test(size=(120, 40)) as pilot:
            console_started = time.time()
            # the 2 s token is refreshed before its expiry, twice, while the console runs
            await until(lambda: session.connection_settings.refreshes >= 2, 15, "two refreshes")
            table = app.query_one("#jobs", JobsTable)
            column = table.sort_column
            await pilot.press("s")
            assert table.sort_column != column  # the console kept its keyboard
            await pilot.press("q")
    finally:
        await asyncio.to_thread(session.close)
    first, *later = runs_of(log)
    assert first["interactive"] is True and first["answer"] == "hunter2"  # it prompted, and was answered
    assert first["t"] < console_started
    assert before_console == b"Password: "
    assert len(later) >= 2 and any(run["t"] > console_started for run in later)
    assert all(run["interactive"] is False and run["stdin"] == "" for run in later)
    assert terminal.shown() == before_console  # nothing written to the terminal once the console ran
    seen = authorizations(fake)
    assert "Bearer tok-1" in seen and "Bearer tok-3" in seen  # the refreshed tokens were used


@pytest.mark.serial  # wall time: a 0.5 s timeout within 5 s
@pytest.mark.parametrize("interactive", [False, True], ids=["background", "prompting"])
async def test_c1_a_hanging_plugin_is_a_clear_error_before_any_ui(
    tmp_path: Path, server_url: str, interactive: bool
) -> None:
    config, log = plugin_config(tmp_path, server_url, hang="always")
    term = Terminal(tmp_path)  # nothing typed: a prompting plugin waits for ever
    io = term.io(interactive_timeout=0.5) if interactive else ExecIO(terminal=False, timeout=0.5)
    started = time.monotonic()
    try:
        with pytest.raises(KubeConfigError, match=r"did not finish within 0\.5 s"):
            await asyncio.to_thread(connect, config, io)
    finally:
        term.close()
    assert time.monotonic() - started < 5
    assert runs_of(log) == []  # it never got to print a credential
    [run] = starts_of(log)
    assert run["interactive"] is interactive
    with pytest.raises(ProcessLookupError):  # killed at the timeout, and reaped
        os.kill(run["pid"], 0)


@pytest.mark.serial  # wall time: each key within 0.5 s
async def test_c1_a_refresh_that_hangs_leaves_the_console_responsive(
    fake: FakeApiServer, tmp_path: Path, server_url: str, terminal: Terminal
) -> None:
    config, log = plugin_config(tmp_path, server_url, lifetime=1.5, hang="refresh")
    fake.upsert(NODES, node("n1"))
    session = await asyncio.to_thread(connect, config, terminal.io(timeout=0.5))
    try:
        await until(lambda: session.synced, 10, "the first list")
        app = make_app(session, tick_interval=0.1, show_charts=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(lambda: len(starts_of(log)) >= 2, 10, "the refresh to start")
            table = app.query_one("#jobs", JobsTable)
            for _ in range(3):  # keys are handled at once while the plugin hangs
                column = table.sort_column
                pressed = time.perf_counter()
                await pilot.press("s")
                assert table.sort_column != column
                assert time.perf_counter() - pressed < 0.5

            def pod_status() -> ReflectorStatus:
                return session.statuses["Pod"]

            await until(lambda: "did not finish within 0.5 s" in pod_status().last_error, 10, "the timeout")
            assert pod_status().state is ReflectorState.RETRYING or pod_status().failures > 0
            await until(lambda: "stale" in session.connection, 10, "the stale mark")
            await pilot.press("q")
    finally:
        await asyncio.to_thread(session.close)
    assert terminal.shown() == b"Password: "
    assert len(runs_of(log)) == 1  # only the first run printed a credential
    for run in starts_of(log)[1:]:
        assert run["interactive"] is False
        with pytest.raises(ProcessLookupError):
            os.kill(run["pid"], 0)


async def test_c1_always_interactive_plugin_refuses_to_run_without_a_terminal(
    tmp_path: Path, server_url: str
) -> None:
    config, log = plugin_config(tmp_path, server_url, mode="Always")
    with pytest.raises(KubeConfigError, match="needs a terminal"):
        await load_connection(str(config), exec_io=ExecIO(terminal=False))
    assert starts_of(log) == []  # not even started


async def test_c1_missing_plugin_names_it_and_gives_the_install_hint(tmp_path: Path, server_url: str) -> None:
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": str(tmp_path / "kubelogin"),
            "interactiveMode": "IfAvailable",
            "installHint": "kubelogin is missing:\n  brew install int128/kubelogin/kubelogin",
        }
    }
    config = write_kubeconfig(tmp_path / "config", server_url, user=user)
    with pytest.raises(KubeConfigError) as info:
        await load_connection(str(config), exec_io=ExecIO(terminal=False))
    assert "kubelogin" in str(info.value) and "FileNotFoundError" in str(info.value)
    assert "brew install int128/kubelogin/kubelogin" in str(info.value) and "\n" not in str(info.value)


# -- C3: in-cluster token rotation -------------------------------------------------------------


@contextlib.asynccontextmanager
async def tls_fake(cert: Path, key: Path) -> AsyncIterator[tuple[FakeApiServer, int]]:
    """The fake API server behind TLS (in-cluster URLs are always https)."""
    async with FakeApiServer() as fake:
        handler = aiohttp.web.Server(fake)
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(cert, key)
        server = await asyncio.get_running_loop().create_server(handler, "127.0.0.1", 0, ssl=ctx)
        try:
            yield fake, server.sockets[0].getsockname()[1]
        finally:
            server.close()
            await handler.shutdown(1.0)
            await server.wait_closed()


async def test_c3_rotated_in_cluster_token_is_used_within_a_minute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = make_certificate(tmp_path, "ca.crt")
    token = tmp_path / "token"
    token.write_text("sa-token-1")
    async with tls_fake(cert, key) as (fake, port):
        monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
        monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(port))
        connection = await load_connection(in_cluster=True, token_file=str(token), ca_file=str(cert))
        assert connection.context == "in-cluster" and connection.server == f"https://127.0.0.1:{port}"
        now = [1000.0]
        connection.clock = lambda: now[0]  # the minute is the connection's clock, not a real wait
        fake.upsert(PODS, pod("p0"))
        store = Store(clock=time.time)
        async with reflecting(connection, store, inactivity=5.0) as pods:
            await asyncio.wait_for(pods.wait_synced(), 10)
            assert set(authorizations(fake)) == {"Bearer sa-token-1"}

            token.write_text("sa-token-2")  # the kubelet rotates the projected token
            now[0] += 30
            seen = len(fake.log)
            fake.disconnect()  # the next request: the watch reopens
            await until(lambda: len(fake.log) > seen, 10, "the watch to reopen")
            assert authorizations(fake)[seen:] == ["Bearer sa-token-1"]  # read at most once a minute

            now[0] += 31  # a minute since the file was read
            seen = len(fake.log)
            fake.disconnect()
            await until(lambda: len(fake.log) > seen, 10, "the watch to reopen")
            assert authorizations(fake)[seen:] == ["Bearer sa-token-2"]
            fake.upsert(PODS, pod("p1"))
            await until(lambda: pods_in(store) == server_pods(fake), 10, "the new pod")
        assert connection.token_rotations == 1


# -- OIDC: refreshed before the id-token's exp ---------------------------------------------------


def id_token(exp: float, n: int) -> str:
    def part(obj: dict[str, Any]) -> str:
        return base64.b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    return f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part({'exp': int(exp), 'sub': 'alice', 'n': n})}.c2ln"


@contextlib.asynccontextmanager
async def identity_provider(lifetime: float) -> AsyncIterator[tuple[str, list[dict[str, str]]]]:
    """A token endpoint: each refresh returns a new id-token living ``lifetime`` seconds."""
    grants: list[dict[str, str]] = []

    async def discovery(request: aiohttp.web.Request) -> aiohttp.web.Response:
        return aiohttp.web.json_response({"token_endpoint": f"{request.url.origin()}/token"})

    async def token(request: aiohttp.web.Request) -> aiohttp.web.Response:
        form = await request.post()
        grants.append({k: str(v) for k, v in form.items()})
        n = len(grants)
        return aiohttp.web.json_response(
            {"id_token": id_token(time.time() + lifetime, n), "refresh_token": f"refresh-{n}"}
        )

    app = aiohttp.web.Application()
    app.router.add_get("/.well-known/openid-configuration", discovery)
    app.router.add_post("/token", token)
    runner = aiohttp.web.AppRunner(app)
    await runner.setup()
    site = aiohttp.web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}", grants
    finally:
        await runner.cleanup()


def jwt_expiry(token: str) -> float | None:
    try:
        payload = token.split(".")[1]
        return float(json.loads(base64.b64decode(payload + "=" * (-len(payload) % 4)))["exp"])
    except (IndexError, ValueError, KeyError):
        return None


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the package's OIDC requestor, not hpctop
async def test_oidc_id_token_is_refreshed_before_its_exp(
    fake: FakeApiServer, tmp_path: Path, server_url: str
) -> None:
    async with identity_provider(lifetime=3.0) as (issuer, grants):
        user = {
            "auth-provider": {
                "name": "oidc",
                "config": {
                    "client-id": "hpctop",
                    "client-secret": "s3cret",
                    "idp-issuer-url": issuer,
                    "id-token": id_token(time.time() + 3600, 0),
                    "refresh-token": "refresh-0",
                },
            }
        }
        config = write_kubeconfig(tmp_path / "config", server_url, user=user)
        connection = await load_connection(str(config))
        assert grants == []  # an id-token valid for an hour is used as it is
        expiry = connection.expiry()
        assert expiry is not None and abs(expiry - (time.time() + 3600)) < 5
        fake.token_expiry, fake.token_clock = jwt_expiry, time.time

        # now a short-lived one: the next refresh returns 3 s tokens, refreshed before each exp
        connection._loader._user["auth-provider"]["config"].value["id-token"] = id_token(time.time() + 1.0, 0)
        fake.upsert(PODS, pod("p0"))
        store = Store(clock=time.time)
        async with reflecting(connection, store, inactivity=5.0) as pods:
            await asyncio.wait_for(pods.wait_synced(), 10)
            await until(lambda: len(grants) >= 3, 15, "three refreshes")
            fake.upsert(PODS, pod("late"))
            await until(lambda: pods_in(store) == server_pods(fake), 10, "the late pod")
            assert pods.status.state is ReflectorState.SYNCED
    assert [g["grant_type"] for g in grants] == ["refresh_token"] * len(grants)
    assert [g["refresh_token"] for g in grants[:3]] == ["refresh-0", "refresh-1", "refresh-2"]
    assert fake.expired_rejections == []  # never a request with an expired id-token
    assert fake.expired_cuts == 0  # and never a watch outliving one
    used = {a.removeprefix("Bearer ") for a in authorizations(fake)}
    assert len(used) >= 3 and all(jwt_expiry(t) is not None for t in used)
