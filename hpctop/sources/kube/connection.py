"""From a kubeconfig (or a pod's service account) to what an aiohttp session needs.

Why the official package, and why only this much of it: kubeconfig has many corners (merged
``KUBECONFIG`` paths, relative certificate paths, inline base64 data, exec credential plugins,
OIDC, in-cluster token rotation) and the official ``kubernetes`` package already handles them.
Its async half (``kubernetes.aio.config``) runs exec plugins as asyncio subprocesses, so loading
does not block the event loop. What it produces is a ``Configuration``; hpctop reads the server
URL, the TLS material and the ``Authorization`` value from it and builds its own aiohttp session,
because the generated API models are far too slow for the watch path (PERFORMANCE.md).

Credentials (RELIABILITY.md §4):

- a token with a known expiry (exec plugin ``expirationTimestamp``) is refreshed before each
  request that would carry an expired one; the in-cluster loader re-reads its token file every
  minute through the package's ``refresh_api_key_hook`` (C3);
- after a 401, :meth:`Connection.reauthenticate` loads everything again, which re-runs the
  credential source (C2); the reflector does this at most three times in a row;
- exec plugin failures are logged by the package with the plugin's stderr in the message. That
  text can carry secrets, so the records are intercepted during loading, never passed on, and
  turned into a short :class:`KubeConfigError` that names only the exit status (C4, C5).
"""

from __future__ import annotations

import logging
import os
import re
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from kubernetes.aio.client import Configuration
from kubernetes.aio.config import incluster_config, kube_config
from kubernetes.aio.config.config_exception import ConfigException

from hpctop.sources.kube.errors import KubeConfigError

_PLUGIN_LOGGER = "kubernetes.aio.config.kube_config"
_EXIT = re.compile(r"exec: process returned (\d+)")


class _Capture(logging.Filter):
    """Swallows the package's log records during loading and keeps their messages for us."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            self.messages.append(record.getMessage())
        return False


def _plugin_failure(messages: list[str]) -> str | None:
    """A redacted description of an exec plugin failure, or None when there was none."""
    for message in messages:
        if not message.startswith("exec"):
            continue
        exited = _EXIT.search(message)
        if exited:
            return f"the credential plugin exited with status {exited.group(1)}"
        if "decode" in message:
            return "the credential plugin printed something that is not JSON"
        if "missing" in message or "malformed" in message:
            return "the credential plugin's output lacks a token or a client certificate"
        return "the credential plugin failed"
    return None


def _redact(exc: BaseException) -> str:
    """A message from a loader exception, without file contents (YAML errors quote the file)."""
    if isinstance(exc, ConfigException):
        text = str(exc)
        plugin = _plugin_failure([text])
        return plugin or text.splitlines()[0][:200]
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        return f"malformed YAML at line {mark.line + 1}"
    return type(exc).__name__


def default_kubeconfig_paths() -> list[str]:
    """The files kubectl would read: ``$KUBECONFIG`` (colon-separated) or ``~/.kube/config``."""
    env = os.environ.get("KUBECONFIG")
    if env:
        return [p for p in env.split(os.pathsep) if p]
    return [os.path.expanduser("~/.kube/config")]


Loader = Callable[[], Awaitable[tuple[Configuration, Any, dict[str, Any]]]]


@dataclass
class Connection:
    """A server URL, TLS settings and a source of ``Authorization`` values."""

    server: str
    context: str | None
    namespace: str | None
    ssl: ssl.SSLContext | bool | None
    server_hostname: str | None = None
    proxy: str | None = None
    _configuration: Configuration | None = field(default=None, repr=False)
    _loader: Any = field(default=None, repr=False)
    _reload: Loader | None = field(default=None, repr=False)

    async def authorization(self) -> str | None:
        """The ``Authorization`` header value for the next request (refreshed when expired)."""
        cfg, loader = self._configuration, self._loader
        if cfg is None:
            return None
        expiry = getattr(loader, "exec_plugin_expiry", None)
        if expiry is not None and kube_config._is_expired(expiry):  # type: ignore[no-untyped-call]
            capture = _Capture()
            logger = logging.getLogger(_PLUGIN_LOGGER)
            logger.addFilter(capture)
            try:
                await loader.load_from_exec_plugin()
            finally:
                logger.removeFilter(capture)
            if getattr(loader, "token", None):
                cfg.api_key["BearerToken"] = loader.token
        value: str | None = await cfg.get_api_key_with_prefix("BearerToken")
        return value

    async def reauthenticate(self) -> None:
        """Load the credentials again from their source (after a 401)."""
        if self._reload is None:
            return
        cfg, loader, _ = await self._reload()
        self._configuration, self._loader = cfg, loader


def _ssl_context(cfg: Configuration) -> ssl.SSLContext | bool | None:
    if not str(cfg.host).startswith("https"):
        return None
    try:
        ctx = ssl.create_default_context(cafile=cfg.ssl_ca_cert or None)
        if cfg.cert_file:
            ctx.load_cert_chain(cfg.cert_file, cfg.key_file or None)
    except (OSError, ssl.SSLError) as exc:
        raise KubeConfigError(f"cannot use the TLS files of this context: {type(exc).__name__}") from None
    if not cfg.verify_ssl:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


async def _load_file(paths: list[str], context: str | None) -> tuple[Configuration, Any, dict[str, Any]]:
    existing = [p for p in paths if os.path.exists(p)]
    if not existing:
        raise KubeConfigError(f"no kubeconfig at {os.pathsep.join(paths)}")
    cfg = Configuration()
    capture = _Capture()
    logger = logging.getLogger(_PLUGIN_LOGGER)
    logger.addFilter(capture)
    try:
        loader = await kube_config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=os.pathsep.join(existing),
            context=context,
            client_configuration=cfg,
            persist_config=False,
        )
    except Exception as exc:  # the loader raises ConfigException, yaml errors, KeyError, TypeError...
        raise KubeConfigError(f"{os.pathsep.join(existing)}: {_redact(exc)}") from None
    finally:
        logger.removeFilter(capture)
    failure = _plugin_failure(capture.messages)
    if failure is not None:
        raise KubeConfigError(failure)
    current: dict[str, Any] = dict(loader.current_context or {})
    return cfg, loader, current


async def _load_in_cluster() -> tuple[Configuration, Any, dict[str, Any]]:
    cfg = Configuration()
    try:
        incluster_config.load_incluster_config(  # type: ignore[no-untyped-call]
            client_configuration=cfg, try_refresh_token=True
        )
    except ConfigException as exc:
        raise KubeConfigError(f"in-cluster configuration: {_redact(exc)}") from None
    return cfg, None, {}


def in_cluster_available() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST") and os.environ.get("KUBERNETES_SERVICE_PORT"))


async def load_connection(
    kubeconfig: str | None = None,
    context: str | None = None,
    *,
    in_cluster: bool | None = None,
) -> Connection:
    """Load the connection settings the way kubectl would.

    ``kubeconfig`` may hold several paths separated by ``os.pathsep``. With ``in_cluster=None``
    the service account is used only when no kubeconfig was named and none exists at the default
    places, but the pod environment is there.
    """
    paths = kubeconfig.split(os.pathsep) if kubeconfig else default_kubeconfig_paths()
    if in_cluster is None:
        in_cluster = (
            kubeconfig is None
            and context is None
            and not any(os.path.exists(p) for p in paths)
            and in_cluster_available()
        )

    async def reload() -> tuple[Configuration, Any, dict[str, Any]]:
        return await (_load_in_cluster() if in_cluster else _load_file(paths, context))

    cfg, loader, current = await reload()
    ctx_body = current.get("context") or {}
    namespace = ctx_body.get("namespace") if isinstance(ctx_body, dict) else None
    return Connection(
        server=str(cfg.host).rstrip("/"),
        context=current.get("name") if not in_cluster else "in-cluster",
        namespace=namespace,
        ssl=_ssl_context(cfg),
        server_hostname=getattr(cfg, "tls_server_name", None) or None,
        proxy=getattr(cfg, "proxy", None) or None,
        _configuration=cfg,
        _loader=loader,
        _reload=reload,
    )
