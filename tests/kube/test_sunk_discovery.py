"""``--slurm-service auto`` on a CoreWeave SUNK cluster: the fake API server serves SUNK-shaped Services.

The Services are the ones SUNK's ``slurm`` Helm chart renders for release ``slurm`` in
``tenant-slurm`` (the namespace CoreWeave's SunkCluster reference gives), copied from a published
copy of that chart: github.com/agatakrajewska/iac-testing-github at
5d2fce6ed9b57c9f0b4a01ff98ad3d14763f5b1f, ``slurm/templates/rest/rest-service.yaml`` (slurmrestd,
with ``rest.enabled``), ``slurm/templates/accounting/accounting-service.yaml`` (slurmdbd) and the
common labels of ``slurm/templates/_helpers.tpl`` (``slurm.labels``). Both carry the same chart
labels; only the selector tells the slurmrestd one apart, and its port is 6819, not Slinky's 6820.
"""

from __future__ import annotations

from pathlib import Path

import kmock
import pytest

from hpctop.sources.kube.connection import load_connection
from hpctop.sources.slurm.secret import SecretTokenError, ServiceRef, discover_service
from tests.kube.conftest import write_kubeconfig
from tests.kube.fakeserver import ALL, FakeApiServer, Res

SERVICES = Res("Service", "", "v1", "services", True)
RELEASE = "slurm"
NAMESPACE = "tenant-slurm"
#: ``slurm.labels`` in _helpers.tpl: helm.sh/chart is the chart's name alone (``slurm.chart``)
COMMON = {
    "helm.sh/chart": "slurm",
    "app.kubernetes.io/part-of": RELEASE,
    "app.kubernetes.io/managed-by": "Helm",
}


def _chart_service(name: str, app: str, component: str, port_name: str, port: int) -> dict[str, object]:
    return {
        "metadata": {"name": f"{RELEASE}-{name}", "namespace": NAMESPACE, "labels": dict(COMMON)},
        "spec": {
            "clusterIP": "None",
            "selector": {
                "app.kubernetes.io/name": app,
                "app.kubernetes.io/instance": f"{RELEASE}-{name}",
                "app.kubernetes.io/component": component,
                **COMMON,
            },
            "ports": [{"name": port_name, "protocol": "TCP", "port": port, "targetPort": port}],
        },
    }


SUNK_REST = _chart_service("rest", "slurmrestd", "rest", "slurmrestd", 6819)
SUNK_ACCOUNTING = _chart_service("accounting", "slurmdbd", "accounting", "slurmdbd", 6819)


async def test_auto_finds_the_slurmrestd_service_sunks_chart_made(tmp_path: Path) -> None:
    async with FakeApiServer(served=(*ALL, SERVICES)) as api, kmock.Server(api):
        api.upsert(SERVICES, SUNK_ACCOUNTING)  # the same chart labels, another daemon: not it
        connection = await load_connection(str(write_kubeconfig(tmp_path / "kc", str(api.url).rstrip("/"))))
        with pytest.raises(SecretTokenError, match="found 0 slurmrestd Services"):
            await discover_service(connection)
        api.upsert(SERVICES, SUNK_REST)
        found = await discover_service(connection)
    assert found == ServiceRef(NAMESPACE, "slurm-rest", "6819")
    assert found.proxy_path == "/api/v1/namespaces/tenant-slurm/services/slurm-rest:6819/proxy"


async def test_a_slinky_and_a_sunk_slurmrestd_together_must_be_named(tmp_path: Path) -> None:
    slinky = {
        "metadata": {
            "name": "slurm-restapi",
            "namespace": "slurm",
            "labels": {"app.kubernetes.io/name": "slurmrestd", "app.kubernetes.io/component": "restapi"},
        },
        "spec": {"ports": [{"name": "slurmrestd", "port": 6820, "protocol": "TCP"}]},
    }
    async with FakeApiServer(served=(*ALL, SERVICES)) as api, kmock.Server(api):
        api.upsert(SERVICES, SUNK_REST)
        api.upsert(SERVICES, slinky)
        connection = await load_connection(str(write_kubeconfig(tmp_path / "kc", str(api.url).rstrip("/"))))
        with pytest.raises(SecretTokenError) as refused:
            await discover_service(connection)
    message = str(refused.value)
    assert "found 2 slurmrestd Services" in message
    assert "slurm/slurm-restapi (Slinky)" in message and "tenant-slurm/slurm-rest (SUNK)" in message
