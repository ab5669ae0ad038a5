"""Fixtures for the live-cluster tests: a FakeApiServer on 127.0.0.1 and a kubeconfig pointing at it.

The kubeconfig is a real file read by the official loader (``kubernetes.aio.config``), so these
tests cover the same path a user's ``--kubeconfig`` takes; nothing in the client is patched.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import kmock
import orjson
import pytest

from hpctop.model.store import Store
from hpctop.runtime.live_console import LiveConsoleSession
from hpctop.sources.kube.connection import Connection, load_connection
from hpctop.sources.kube.reflector import ReflectorSettings
from hpctop.sources.kube.resources import ResourceSpec
from tests.kube.fakeserver import FakeApiServer
from tests.polling import until

TOKEN = "canary-token-3f9a1c"  # a canary: it must never show up in errors or logs (C4)
#: reflector retries fast enough for a test to see several within a second
FAST = ReflectorSettings(backoff_initial=0.05, backoff_cap=0.2)
#: reflector retries fast enough for a test to see several within a second


@contextmanager
def silent_api_server() -> Iterator[str]:
    """The URL of a TCP listener that accepts connections and never answers: every list, watch,
    discovery, review and dry run hangs on it (the worst network a user can have)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)  # kept open, never read from, never answered

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(2)
        for conn in held:
            conn.close()
        listener.close()


def write_kubeconfig(
    path: Path,
    server: str,
    *,
    token: str | None = TOKEN,
    context: str = "fake",
    namespace: str | None = None,
    user: dict[str, Any] | None = None,
    cluster_extra: dict[str, Any] | None = None,
) -> Path:
    ctx: dict[str, Any] = {"cluster": "fake-cluster", "user": "fake-user"}
    if namespace:
        ctx["namespace"] = namespace
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": context,
        "clusters": [{"name": "fake-cluster", "cluster": {"server": server, **(cluster_extra or {})}}],
        "contexts": [
            {"name": context, "context": ctx},
            {
                "name": "other",
                "context": {"cluster": "fake-cluster", "user": "fake-user", "namespace": "ns2"},
            },
        ],
        "users": [
            {"name": "fake-user", "user": user if user is not None else ({"token": token} if token else {})}
        ],
    }
    path.write_bytes(orjson.dumps(config))  # JSON is YAML
    return path


@pytest.fixture
async def fake() -> AsyncIterator[FakeApiServer]:
    async with FakeApiServer() as server, kmock.Server(server):
        yield server


@pytest.fixture
def server_url(fake: FakeApiServer) -> str:
    return str(fake.url).rstrip("/")


@pytest.fixture
def kubeconfig(tmp_path: Path, server_url: str) -> Path:
    return write_kubeconfig(tmp_path / "config", server_url)


@pytest.fixture
async def connection(kubeconfig: Path) -> Connection:
    return await load_connection(str(kubeconfig))


@pytest.fixture
def store() -> Store:
    return Store(clock=lambda: 1767225600.0)


def make_certificate(directory: Path, cert_name: str) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (skips the test without openssl)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    cert, key = directory / cert_name, directory / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@asynccontextmanager
async def live_console(
    kubeconfig: Path,
    *,
    ready: Callable[[LiveConsoleSession], bool] | None = None,
    what: str = "the session to be ready",
    timeout: float = 10.0,
    resources: Iterable[ResourceSpec] | None = None,
    settings: ReflectorSettings = FAST,
    read_only: bool = True,
    audit_path: Path | None = None,
    kueue_interval: float | None = None,
) -> AsyncIterator[LiveConsoleSession]:
    """A LiveConsoleSession on ``kubeconfig`` (connected in a thread, so the test's loop keeps serving
    the fake), once ``ready`` holds (None: at once); closed on the way out. The session's own
    defaults apply where ``resources`` or ``kueue_interval`` is left at None."""
    options: dict[str, Any] = {"settings": settings, "read_only": read_only, "audit_path": audit_path}
    if resources is not None:
        options["resources"] = resources
    if kueue_interval is not None:
        options["kueue_interval"] = kueue_interval
    session = await asyncio.to_thread(LiveConsoleSession.connect, str(kubeconfig), None, **options)
    try:
        if ready is not None:
            await until(lambda: ready(session), timeout, what)
        yield session
    finally:
        await asyncio.to_thread(session.close)
