"""Kubeconfig loading and connection errors (RELIABILITY.md §4, C-cases), through the official loader.

Every kubeconfig here is a real file read by ``kubernetes.aio.config``; requests go over real
HTTP(S) to 127.0.0.1. Secrets are canaries: each test that can leak one checks the message.
"""

from __future__ import annotations

import ssl
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp.web
import kmock
import pytest

from hpctop.runtime.live import list_once
from hpctop.sources.kube.connection import load_connection
from hpctop.sources.kube.errors import (
    CertificateError,
    KubeConfigError,
    ServerUnreachable,
    Unauthorized,
)
from hpctop.sources.kube.resources import JOBS, NODES, PODS
from tests.kube.conftest import TOKEN, make_certificate, write_kubeconfig
from tests.kube.fakeserver import JOBS as JOBS_RES
from tests.kube.fakeserver import NODES as NODES_RES
from tests.kube.fakeserver import PODS as PODS_RES
from tests.kube.fakeserver import FakeApiServer
from tests.model_fixtures import node, pod

SECRET = "canary-secret-7d41"


async def test_token_from_kubeconfig_is_sent(fake: FakeApiServer, kubeconfig: Path) -> None:
    fake.upsert(PODS_RES, pod("p"))
    store = await list_once(str(kubeconfig), None, None, resources=[PODS])
    assert ("team-a", "p") in store.pods
    [(_, request)] = [(t, r) for t, r in fake.log if r.action == kmock.action.LIST]
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert request.headers["User-Agent"].startswith("hpctop/")


async def test_context_selection_and_default_namespace(kubeconfig: Path, server_url: str) -> None:
    current = await load_connection(str(kubeconfig))
    assert (current.context, current.namespace, current.server) == ("fake", None, server_url)
    other = await load_connection(str(kubeconfig), "other")
    assert (other.context, other.namespace) == ("other", "ns2")


async def test_kubeconfig_env_is_the_default(
    kubeconfig: Path, monkeypatch: pytest.MonkeyPatch, server_url: str
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    assert (await load_connection()).server == server_url


async def test_missing_kubeconfig(tmp_path: Path) -> None:
    with pytest.raises(KubeConfigError, match="no kubeconfig"):
        await load_connection(str(tmp_path / "nope"))


async def test_missing_context_names_it(kubeconfig: Path) -> None:
    with pytest.raises(KubeConfigError, match="staging"):
        await load_connection(str(kubeconfig), "staging")


async def test_malformed_yaml_is_reported_without_its_contents(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(f"apiVersion: v1\nusers:\n- name: u\n  user: {{token: {SECRET}\n  : : :\n")
    with pytest.raises(KubeConfigError) as info:
        await load_connection(str(path))
    assert SECRET not in str(info.value)
    assert "line" in str(info.value)


def _plugin(tmp_path: Path, body: str) -> dict[str, object]:
    script = tmp_path / "plugin.py"
    script.write_text(body)
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(script)],
            "interactiveMode": "Never",
        }
    }


async def test_exec_plugin_token_is_used(fake: FakeApiServer, tmp_path: Path, server_url: str) -> None:
    credential = (
        '{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",'
        ' "status": {"token": "from-plugin"}}'
    )
    user = _plugin(tmp_path, f"print('{credential}')\n")
    config = write_kubeconfig(tmp_path / "config", server_url, user=user)
    await list_once(str(config), None, None, resources=[PODS])
    assert fake.log[0][1].headers["Authorization"] == "Bearer from-plugin"


async def test_exec_plugin_failure_is_clear_and_redacted(tmp_path: Path, server_url: str) -> None:
    user = _plugin(tmp_path, f"import sys\nsys.stderr.write('token {SECRET} rejected')\nsys.exit(3)\n")
    config = write_kubeconfig(tmp_path / "config", server_url, user=user)
    with pytest.raises(KubeConfigError) as info:
        await load_connection(str(config))
    assert "status 3" in str(info.value)
    assert SECRET not in str(info.value)


async def test_unreachable_server(tmp_path: Path) -> None:
    config = write_kubeconfig(tmp_path / "config", "http://127.0.0.1:9")  # discard port: refused
    with pytest.raises(ServerUnreachable) as info:
        await list_once(str(config), None, None, resources=[PODS])
    assert TOKEN not in str(info.value)


async def test_401_raises_unauthorized(fake: FakeApiServer, kubeconfig: Path) -> None:
    fake.fail(PODS_RES, kmock.action.LIST, 401)
    with pytest.raises(Unauthorized) as info:
        await list_once(str(kubeconfig), None, None, resources=[PODS])
    assert info.value.status == 401
    assert TOKEN not in str(info.value)


async def test_403_on_one_resource_is_a_note_not_a_failure(fake: FakeApiServer, kubeconfig: Path) -> None:
    fake.upsert(PODS_RES, pod("p"))
    fake.upsert(NODES_RES, node("n1"))
    fake.fail(JOBS_RES, kmock.action.LIST, 403)
    notes: list[str] = []
    store = await list_once(str(kubeconfig), None, None, resources=[PODS, NODES, JOBS], notes=notes)
    assert set(store.pods) == {("team-a", "p")} and set(store.nodes) == {"n1"}
    [note] = notes
    assert note.startswith("Job: forbidden")


# -- TLS ---------------------------------------------------------------------------------------


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    return make_certificate(tmp_path, "cert.pem")


@pytest.fixture
async def tls_server(certificate: tuple[Path, Path]) -> AsyncIterator[str]:
    async def pods(_: aiohttp.web.Request) -> aiohttp.web.Response:
        return aiohttp.web.json_response(
            {"kind": "PodList", "metadata": {"resourceVersion": "1"}, "items": []}
        )

    app = aiohttp.web.Application()
    app.router.add_get("/api/v1/pods", pods)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(*certificate)
    runner = aiohttp.web.AppRunner(app)
    await runner.setup()
    site = aiohttp.web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ctx)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"https://127.0.0.1:{port}"
    await runner.cleanup()


async def test_untrusted_certificate_is_a_certificate_error(tls_server: str, tmp_path: Path) -> None:
    config = write_kubeconfig(tmp_path / "config", tls_server)  # no CA: the system store does not know it
    with pytest.raises(CertificateError):
        await list_once(str(config), None, None, resources=[PODS])


async def test_the_contexts_ca_is_trusted(
    tls_server: str, tmp_path: Path, certificate: tuple[Path, Path]
) -> None:
    extra = {"certificate-authority": str(certificate[0])}
    config = write_kubeconfig(tmp_path / "config", tls_server, cluster_extra=extra)
    store = await list_once(str(config), None, None, resources=[PODS])
    assert store.pods == {}


async def test_insecure_skip_tls_verify(tls_server: str, tmp_path: Path) -> None:
    config = write_kubeconfig(
        tmp_path / "config", tls_server, cluster_extra={"insecure-skip-tls-verify": True}
    )
    await list_once(str(config), None, None, resources=[PODS])
