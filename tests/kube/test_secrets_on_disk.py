"""Credentials never touch disk (issue 12, RELIABILITY.md C4): an mTLS kubeconfig's inline key.

A kubeconfig with ``certificate-authority-data``, ``client-certificate-data`` and
``client-key-data`` is loaded by the real loader and used against the fake API server behind TLS
that *requires* a client certificate (so the key was really used). During the run and after it,
including after SIGTERM of a child ``hpctop jobs`` stuck on a list that never answers, no file
under ``$TMPDIR`` holds any of that material. The official loader writes every ``*-data`` field to
a temp file it removes only at a clean exit, which is what these tests catch.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp.web
import pytest

from hpctop.runtime.live import list_once
from hpctop.sources.kube.connection import load_connection
from hpctop.sources.kube.resources import PODS as POD_SPEC
from tests.kube.conftest import make_certificate, write_kubeconfig
from tests.kube.fakeserver import PODS, FakeApiServer
from tests.model_fixtures import pod

ROOT = Path(__file__).resolve().parents[2]


def client_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed client certificate and its key (the server trusts exactly this one)."""
    cert, key = directory / "client.crt", directory / "client.key"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=hpctop-user",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@contextlib.asynccontextmanager
async def mtls_fake(
    server_cert: Path, server_key: Path, client_ca: Path
) -> AsyncIterator[tuple[FakeApiServer, int]]:
    async with FakeApiServer() as fake:
        handler = aiohttp.web.Server(fake)
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(server_cert, server_key)
        ctx.verify_mode = ssl.CERT_REQUIRED  # no client certificate, no handshake
        ctx.load_verify_locations(cafile=str(client_ca))
        server = await asyncio.get_running_loop().create_server(handler, "127.0.0.1", 0, ssl=ctx)
        try:
            yield fake, server.sockets[0].getsockname()[1]
        finally:
            server.close()
            await handler.shutdown(1.0)
            await server.wait_closed()


def pem_body(path: Path) -> list[bytes]:
    """Distinctive lines of a PEM file (its base64 lines), and the DER they decode to."""
    lines = [line for line in path.read_bytes().splitlines() if line and not line.startswith(b"-----")]
    return [*lines, base64.b64decode(b"".join(lines))]


def leaks(directory: Path, secrets: list[bytes]) -> list[str]:
    """Files under ``directory`` holding any of ``secrets`` or a PEM private key."""
    found = []
    for path in directory.rglob("*"):
        with contextlib.suppress(OSError):
            if path.is_file():
                data = path.read_bytes()
                if b"PRIVATE KEY" in data or any(s in data for s in secrets):
                    found.append(str(path))
    return found


@pytest.fixture
def mtls(tmp_path: Path) -> tuple[Path, Path, Path, Path, Path]:
    """(server cert, server key, client cert, client key, kubeconfig dir): the files the test made."""
    keys = tmp_path / "keys"
    keys.mkdir()
    server_cert, server_key = make_certificate(keys, "server.crt")
    client_cert, client_key = client_certificate(keys)
    return server_cert, server_key, client_cert, client_key, keys


def mtls_kubeconfig(path: Path, port: int, server_cert: Path, client_cert: Path, client_key: Path) -> Path:
    def b64(p: Path) -> str:
        return base64.b64encode(p.read_bytes()).decode()

    return write_kubeconfig(
        path,
        f"https://127.0.0.1:{port}",
        user={"client-certificate-data": b64(client_cert), "client-key-data": b64(client_key)},
        cluster_extra={"certificate-authority-data": b64(server_cert)},
    )


async def test_inline_client_key_is_used_but_never_written(
    tmp_path: Path, mtls: tuple[Path, Path, Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    server_cert, server_key, client_cert, client_key, _ = mtls
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))  # the stdlib caches gettempdir()
    secrets = pem_body(client_key) + pem_body(client_cert) + pem_body(server_cert)
    async with mtls_fake(server_cert, server_key, client_cert) as (fake, port):
        fake.upsert(PODS, pod("p"))
        config = mtls_kubeconfig(tmp_path / "config", port, server_cert, client_cert, client_key)
        connection = await load_connection(str(config))
        assert leaks(tmpdir, secrets) == []  # loaded: nothing in TMPDIR
        store = await list_once(None, None, None, resources=[POD_SPEC], connection=connection)
        assert ("team-a", "p") in store.pods  # the handshake needed the client key
        assert leaks(tmpdir, secrets) == []


async def test_no_key_material_in_tmpdir_during_a_one_shot_command_nor_after_its_sigterm(
    tmp_path: Path, mtls: tuple[Path, Path, Path, Path, Path]
) -> None:
    server_cert, server_key, client_cert, client_key, _ = mtls
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    secrets = pem_body(client_key) + pem_body(client_cert) + pem_body(server_cert)
    async with mtls_fake(server_cert, server_key, client_cert) as (fake, port):
        fake.upsert(PODS, pod("p"))
        fake.list_stalls[PODS] = 1  # the command stays mid-run, its credentials loaded and in use
        config = mtls_kubeconfig(tmp_path / "config", port, server_cert, client_cert, client_key)
        env = dict(os.environ, TMPDIR=str(tmpdir), XDG_CONFIG_HOME=str(tmp_path))
        env["HPCTOP_REQUEST_TIMEOUT"] = "60"
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hpctop", "jobs", "--kubeconfig", str(config),
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 30
            while fake.stalled_lists == 0:
                assert child.returncode is None, "the command ended before its list was stalled"
                assert time.monotonic() < deadline, "the command never reached the pod list"
                await asyncio.sleep(0.05)
            during = leaks(tmpdir, secrets)
            child.send_signal(signal.SIGTERM)
            await asyncio.wait_for(child.wait(), 10)
        finally:
            if child.returncode is None:
                child.kill()
                await child.wait()
        assert during == []
        assert leaks(tmpdir, secrets) == []


CERT_PLUGIN = r"""
import json, pathlib, sys
cert, key = pathlib.Path(sys.argv[1]).read_text(), pathlib.Path(sys.argv[2]).read_text()
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {"clientCertificateData": cert, "clientKeyData": key}}))
"""


async def test_exec_plugin_client_certificate_is_used_but_never_written(
    tmp_path: Path, mtls: tuple[Path, Path, Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    server_cert, server_key, client_cert, client_key, _ = mtls
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))
    script = tmp_path / "plugin.py"
    script.write_text(CERT_PLUGIN)
    secrets = pem_body(client_key) + pem_body(client_cert)
    async with mtls_fake(server_cert, server_key, client_cert) as (fake, port):
        fake.upsert(PODS, pod("p"))
        user = {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": sys.executable,
                "args": [str(script), str(client_cert), str(client_key)],
                "interactiveMode": "Never",
            }
        }
        config = write_kubeconfig(
            tmp_path / "config",
            f"https://127.0.0.1:{port}",
            user=user,
            cluster_extra={"certificate-authority": str(server_cert)},
        )
        connection = await load_connection(str(config))
        store = await list_once(None, None, None, resources=[POD_SPEC], connection=connection)
        assert ("team-a", "p") in store.pods  # the plugin's key made the handshake
        assert leaks(tmpdir, secrets) == []
