"""``--slurm-token-secret NS/NAME[:KEY]``: the JWT read from a Kubernetes Secret, never written to disk.

The Secret is served by the fake API server (tests/kube/fakeserver.py) as an API server serves
one (``data`` base64-encoded); slurmrestd is the recorded v0.0.44 one, which answers 401 to any
other token, so a listing proves the token came through. Slinky's ``Token`` resource writes its
JWT into a Secret under one key (slurm-operator internal/builder/common/token_secret.go).
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import kmock
import pytest

from hpctop.sources.kube.connection import load_connection
from hpctop.sources.slurm.secret import SecretTokenError, ServiceRef, discover_service
from tests.kube.conftest import write_kubeconfig
from tests.kube.fakeserver import ALL, FakeApiServer, Res
from tests.slurm.recorded import TOKEN, RecordedSlurm

SECRETS = Res("Secret", "", "v1", "secrets", True)


def _secret(name: str, data: dict[str, str]) -> dict[str, object]:
    encoded = {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}
    return {"metadata": {"name": name, "namespace": "slurm"}, "type": "Opaque", "data": encoded}


@pytest.fixture
async def api() -> AsyncIterator[FakeApiServer]:
    async with FakeApiServer(served=(*ALL, SECRETS)) as server, kmock.Server(server):
        server.upsert(SECRETS, _secret("slurm-token-slurm", {"auth-token": TOKEN}))
        server.upsert(SECRETS, _secret("two-keys", {"auth-token": TOKEN, "other": "x"}))
        yield server


async def _hpctop(tmp_path: Path, api: FakeApiServer, slurm_url: str, *args: str) -> tuple[int, str, str]:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", str(api.url).rstrip("/"))
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "KUBECONFIG"))}
    env |= {"HOME": str(home), "TMPDIR": str(home), "XDG_STATE_HOME": str(home), "HPCTOP_NO_CACHE": "1"}
    argv = [
        *("-m", "hpctop", *args),
        *("--slurm-url", slurm_url, "--slurm-user", "slurm", "--kubeconfig", str(kubeconfig)),
    ]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *argv, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


def _files_holding(directory: Path, secret: str) -> list[str]:
    return [str(p) for p in directory.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


async def test_the_token_comes_from_the_secret_and_never_touches_disk(
    api: FakeApiServer, tmp_path: Path
) -> None:
    with RecordedSlurm("v0.0.44") as slurm:
        code, out, err = await _hpctop(
            tmp_path, api, slurm.url, "nodes", "-N", "--slurm-token-secret", "slurm/slurm-token-slurm"
        )
    assert code == 0, err
    assert "slinky-3" in out and "drained" in out
    assert ("GET", "/slurm/v0.0.44/nodes/") in slurm.seen
    assert _files_holding(tmp_path, TOKEN) == []


async def test_a_secret_with_several_keys_needs_one_named(api: FakeApiServer, tmp_path: Path) -> None:
    with RecordedSlurm("v0.0.44") as slurm:
        code, out, err = await _hpctop(
            tmp_path, api, slurm.url, "prio", "--slurm-token-secret", "slurm/two-keys"
        )
        assert code == 1 and out == ""
        assert "holds 2 keys" in err and TOKEN not in err
        code, out, err = await _hpctop(
            tmp_path, api, slurm.url, "prio", "--slurm-token-secret", "slurm/two-keys:auth-token"
        )
    assert code == 0, err
    assert "102" in out and "103" in out


async def test_a_missing_secret_is_one_line(api: FakeApiServer, tmp_path: Path) -> None:
    with RecordedSlurm("v0.0.44") as slurm:
        code, out, err = await _hpctop(
            tmp_path, api, slurm.url, "nodes", "--slurm-token-secret", "slurm/nope"
        )
    assert code == 1 and out == ""
    assert len(err.splitlines()) == 1 and "slurm/nope" in err
    assert slurm.seen == []  # no token, no request to slurmrestd


PROXY = "/api/v1/namespaces/slurm/services/slurm-restapi:6820/proxy"


async def test_slurmrestd_through_the_api_servers_service_proxy(tmp_path: Path) -> None:
    # the recorded slurmrestd stands behind the proxy path and demands the kubeconfig's bearer
    # token there, as the API server does; the Slurm JWT travels in Slurm's own header
    with RecordedSlurm("v0.0.44", prefix=PROXY, bearer="kube-token") as proxy:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", proxy.url, token="kube-token")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "KUBECONFIG"))}
        env |= {"SLURM_JWT": TOKEN, "HPCTOP_NO_CACHE": "1"}
        argv = ("-m", "hpctop", "nodes", "-o", "json", "--slurm-service", "slurm/slurm-restapi")
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            *argv,
            "--kubeconfig",
            str(kubeconfig),
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    assert "slinky-3" in out.decode()
    assert ("GET", f"{PROXY}/openapi/v3") in proxy.seen
    assert ("GET", f"{PROXY}/slurm/v0.0.44/nodes/") in proxy.seen


SERVICES = Res("Service", "", "v1", "services", True)


def _service(namespace: str, name: str, labels: dict[str, str], port: int = 6820) -> dict[str, object]:
    # the shape slurm-operator's BuildRestapiService gives (internal/builder/restapi_service.go):
    # a port named "slurmrestd" on 6820 targeting the container port of that name
    return {
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "ports": [{"name": "slurmrestd", "port": port, "protocol": "TCP", "targetPort": "slurmrestd"}]
        },
    }


SLINKY_LABELS = {
    "app.kubernetes.io/name": "slurmrestd",
    "app.kubernetes.io/component": "restapi",
    "app.kubernetes.io/instance": "slurm",
}


async def test_auto_finds_the_slurmrestd_service_slinky_made(tmp_path: Path) -> None:
    async with FakeApiServer(served=(*ALL, SERVICES)) as api, kmock.Server(api):
        api.upsert(SERVICES, _service("slurm", "slurm-restapi", SLINKY_LABELS))
        api.upsert(
            SERVICES, _service("slurm", "slurm-controller", {"app.kubernetes.io/name": "slurmctld"}, 6817)
        )
        connection = await load_connection(str(write_kubeconfig(tmp_path / "kc", str(api.url).rstrip("/"))))
        found = await discover_service(connection)
        assert found == ServiceRef("slurm", "slurm-restapi", "6820")
        assert found.proxy_path == "/api/v1/namespaces/slurm/services/slurm-restapi:6820/proxy"
        api.upsert(SERVICES, _service("slurm2", "slurm-restapi", SLINKY_LABELS))
        with pytest.raises(SecretTokenError, match="found 2 slurmrestd Services of Slinky or SUNK"):
            await discover_service(connection)
