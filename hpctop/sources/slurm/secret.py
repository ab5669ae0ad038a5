"""Slurm through Kubernetes: the JWT from a Secret (``--slurm-token-secret NS/NAME[:KEY]``, in memory
only), and slurmrestd reached through the API server's service proxy (``--slurm-service``).

Why a Secret: on Slinky and SUNK clusters the operator mints the Slurm token into a Secret
(Slinky's ``Token`` resource writes a signed JWT under the key its ``secretRef`` names); asking
the user to copy it to a file would put a credential on disk. The Secret is read once through the
project's own Kubernetes client (:class:`~hpctop.sources.kube.transport.KubeClient`, read-only,
with the kubeconfig's credentials), base64-decoded and handed to the Slurm client; it is never
written anywhere, and its value never appears in an error message.

``KEY`` may be left out when the Secret holds exactly one key.

Why the service proxy: slurmrestd in a Slinky cluster is a ClusterIP Service (``slurm-restapi``
on port 6820 in Slinky's chart), unreachable from a laptop. The API server proxies it at
``/api/v1/namespaces/NS/services/NAME:PORT/proxy/``, with the kubeconfig's credentials (its
``Authorization`` and client certificate) on the outer hop and the Slurm JWT in Slurm's own
headers, which the proxy passes through. The user's RBAC must allow ``services/proxy``.
``--slurm-service auto`` finds the Service Slinky's operator makes for slurmrestd by its labels
(``app.kubernetes.io/name: slurmrestd``, ``app.kubernetes.io/component: restapi``, port
``slurmrestd``; slurm-operator internal/builder/labels/labels.go and restapi_service.go at
f2ed3fc5), and the one CoreWeave SUNK's ``slurm`` Helm chart makes when ``rest.enabled`` is set
(CoreWeave docs, "Can I submit Slurm jobs from Kubernetes pods using slurmrestd"). SUNK's chart
is licensed, not public; the shape used is that of a published copy of it
(github.com/agatakrajewska/iac-testing-github ``slurm/templates/rest/rest-service.yaml`` and
``_helpers.tpl`` at 5d2fce6e): a Service ``<release>-rest`` labelled only with the chart's common
labels (``helm.sh/chart: slurm``, ``app.kubernetes.io/part-of``, ``app.kubernetes.io/managed-by``),
whose *selector* names the slurmrestd pods (``app.kubernetes.io/name: slurmrestd``,
``app.kubernetes.io/component: rest``), port ``slurmrestd`` on 6819. So SUNK's is found by its
chart label and its selector, Slinky's by its own labels; exactly one in all must be found.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import ssl
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hpctop.errors import PlainMessageError
from hpctop.sources.kube.connection import Connection, load_connection
from hpctop.sources.kube.errors import KubeError
from hpctop.sources.kube.transport import KubeClient

__all__ = [
    "SecretRef",
    "SecretTokenError",
    "ServiceRef",
    "discover_service",
    "proxy_target",
    "read_token",
    "token_from_secret",
]


class SecretTokenError(PlainMessageError):
    """The Secret named for the Slurm token cannot be read or holds no usable token."""


@dataclass(frozen=True, slots=True)
class SecretRef:
    namespace: str
    name: str
    key: str | None

    @classmethod
    def parse(cls, text: str) -> SecretRef:
        """``NS/NAME`` or ``NS/NAME:KEY``."""
        where, colon, key = text.partition(":")
        namespace, _, name = where.partition("/")
        if not namespace or not name or "/" in name or (colon and not key):
            raise SecretTokenError(f"a Slurm token Secret is NS/NAME[:KEY], not {text!r}")
        return cls(namespace, name, key or None)

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" + (f":{self.key}" if self.key else "")


async def read_token(connection: Connection, ref: SecretRef, *, timeout: float = 10.0) -> str:
    """The token the Secret holds (one GET of the Secret, through a read-only client)."""
    path = f"/api/v1/namespaces/{ref.namespace}/secrets/{ref.name}"
    try:
        async with KubeClient(connection, read_timeout=timeout) as kube:
            body = await kube.get(path, {})
    except KubeError as exc:
        raise SecretTokenError(f"cannot read the Slurm token Secret {ref}: {exc}") from None
    try:
        data = json.loads(body).get("data") or {}
    except (ValueError, AttributeError):
        raise SecretTokenError(f"the Slurm token Secret {ref} is not a Secret") from None
    if not isinstance(data, dict) or not data:
        raise SecretTokenError(f"the Slurm token Secret {ref} holds no data")
    key = ref.key
    if key is None:
        if len(data) != 1:
            raise SecretTokenError(
                f"the Slurm token Secret {ref} holds {len(data)} keys: name one (NS/NAME:KEY)"
            )
        key = next(iter(data))
    if key not in data:
        raise SecretTokenError(f"the Slurm token Secret {ref} has no key {key!r}")
    try:
        token = base64.b64decode(str(data[key]), validate=True).decode().strip()
    except (binascii.Error, UnicodeDecodeError):
        raise SecretTokenError(
            f"the key {key!r} of the Slurm token Secret {ref} is not base64 text"
        ) from None
    token = token.removeprefix("SLURM_JWT=")
    if not token:
        raise SecretTokenError(f"the key {key!r} of the Slurm token Secret {ref} is empty")
    return token


def token_from_secret(ref: str, *, kubeconfig: str | None, context: str | None, timeout: float = 10.0) -> str:
    """``--slurm-token-secret``: load the kubeconfig as kubectl would and read the token."""
    parsed = SecretRef.parse(ref)

    async def read() -> str:
        try:
            connection = await load_connection(kubeconfig, context)
        except KubeError as exc:
            raise SecretTokenError(f"cannot reach Kubernetes for the Slurm token Secret: {exc}") from None
        return await read_token(connection, parsed, timeout=timeout)

    return asyncio.run(read())


@dataclass(frozen=True, slots=True)
class ServiceRef:
    namespace: str
    name: str
    port: str

    @classmethod
    def parse(cls, text: str) -> ServiceRef:
        """``NS/NAME`` or ``NS/NAME:PORT`` (a number or the port's name; default 6820, slurmrestd's)."""
        where, colon, port = text.partition(":")
        namespace, _, name = where.partition("/")
        if not namespace or not name or "/" in name or (colon and not port):
            raise SecretTokenError(f"a slurmrestd Service is NS/NAME[:PORT], not {text!r}")
        return cls(namespace, name, port or "6820")

    @property
    def proxy_path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/services/{self.name}:{self.port}/proxy"


#: the labels slurm-operator puts on slurmrestd's Service (internal/builder/labels/labels.go)
SLINKY_RESTAPI_SELECTOR = "app.kubernetes.io/name=slurmrestd,app.kubernetes.io/component=restapi"
#: SUNK's slurm chart labels its Services with the chart's name (``slurm.labels`` in _helpers.tpl)
SUNK_CHART_SELECTOR = "helm.sh/chart=slurm"
#: ... and selects its slurmrestd pods with these (templates/rest/rest-service.yaml)
SUNK_REST_PODS = {"app.kubernetes.io/name": "slurmrestd", "app.kubernetes.io/component": "rest"}


async def discover_service(connection: Connection, *, timeout: float = 10.0) -> ServiceRef:
    """The one slurmrestd Service a Slinky operator or SUNK's chart made, cluster-wide."""
    try:
        async with KubeClient(connection, read_timeout=timeout) as kube:
            slinky = await kube.get("/api/v1/services", {"labelSelector": SLINKY_RESTAPI_SELECTOR})
            sunk = await kube.get("/api/v1/services", {"labelSelector": SUNK_CHART_SELECTOR})
    except KubeError as exc:
        raise SecretTokenError(f"cannot list Services to find slurmrestd: {exc}") from None
    found = [(ref, "Slinky") for ref in _services(slinky, lambda spec: True)]
    found += [
        (ref, "SUNK") for ref in _services(sunk, _selects_sunk_rest) if ref not in {r for r, _ in found}
    ]
    if len(found) != 1:
        listed = ", ".join(f"{r.namespace}/{r.name} ({maker})" for r, maker in found) or "none"
        raise SecretTokenError(
            f"--slurm-service auto found {len(found)} slurmrestd Services of Slinky or SUNK ({listed}): "
            "name one as NS/NAME"
        )
    return found[0][0]


def _selects_sunk_rest(spec: dict[str, Any]) -> bool:
    selector = spec.get("selector")
    return isinstance(selector, dict) and all(selector.get(k) == v for k, v in SUNK_REST_PODS.items())


def _services(body: bytes, keep: Callable[[dict[str, Any]], bool]) -> list[ServiceRef]:
    """The Services of a list answer whose spec ``keep`` accepts, each at its slurmrestd port."""
    items = json.loads(body).get("items") or []
    found: list[ServiceRef] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        meta = item.get("metadata") or {}
        spec = item.get("spec") or {}
        if not isinstance(spec, dict) or not keep(spec):
            continue
        ports = spec.get("ports") or []
        named = [p for p in ports if isinstance(p, dict) and p.get("name") == "slurmrestd"] or ports[:1]
        port = named[0].get("port") if named and isinstance(named[0], dict) else None
        if meta.get("namespace") and meta.get("name") and isinstance(port, int):
            found.append(ServiceRef(str(meta["namespace"]), str(meta["name"]), str(port)))
    return found


def _opener(connection: Connection, authorization: str | None) -> Callable[..., Any]:
    """urllib's ``urlopen`` with the connection's TLS (CA, client certificate) and Authorization."""
    context = connection.ssl if isinstance(connection.ssl, ssl.SSLContext) else None
    if connection.ssl is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    handlers: list[urllib.request.BaseHandler] = [urllib.request.HTTPSHandler(context=context)]
    if connection.proxy is None:
        handlers.append(urllib.request.ProxyHandler({}))
    opener = urllib.request.build_opener(*handlers)

    def open_request(request: urllib.request.Request, timeout: float) -> Any:
        if authorization:
            request.add_unredirected_header("Authorization", authorization)
        return opener.open(request, timeout=timeout)

    return open_request


def proxy_target(
    service: str, *, kubeconfig: str | None, context: str | None
) -> tuple[str, str, Callable[..., Any]]:
    """``--slurm-service``: (API server URL, the service's proxy path, an opener carrying the credentials)."""

    async def load() -> tuple[Connection, str | None, ServiceRef]:
        try:
            connection = await load_connection(kubeconfig, context)
            ref = await discover_service(connection) if service == "auto" else ServiceRef.parse(service)
            return connection, await connection.authorization(), ref
        except KubeError as exc:
            raise SecretTokenError(f"cannot reach Kubernetes for the slurmrestd Service: {exc}") from None

    connection, authorization, ref = asyncio.run(load())
    return connection.server, ref.proxy_path, _opener(connection, authorization)
