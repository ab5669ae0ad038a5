"""From a kubeconfig (or a pod's service account) to what an aiohttp session needs.

Why the official package, and why only this much of it: kubeconfig has many corners (merged
``KUBECONFIG`` paths, relative certificate paths, inline base64 data, exec credential plugins,
OIDC, in-cluster token rotation) and the official ``kubernetes`` package already handles them.
Its async half (``kubernetes.aio.config``) runs exec plugins as asyncio subprocesses, so loading
does not block the event loop. What it produces is a ``Configuration``; hpctop reads the server
URL, the TLS material and the ``Authorization`` value from it and builds its own aiohttp session,
because the generated API models are far too slow for the watch path (PERFORMANCE.md).

Credentials (RELIABILITY.md §4):

- a token with a known expiry (exec plugin ``status.expirationTimestamp``, or an OIDC id-token's
  ``exp``) is refreshed *before* it expires: :meth:`Connection.authorization` re-runs the source
  once the token is within its refresh margin (a fifth of its lifetime, at most a minute), and
  :meth:`Connection.refresh_in` tells the reflectors when that will be, so a long watch closes and
  reopens with the new token instead of outliving the old one (client-go authenticates a watch
  only when it opens; an auth proxy may cut it at the expiry). Refreshes are single-flight: ten
  reflectors reconnecting at once run the plugin once. The package's own check
  (``_is_expired``) is not used: it reads the wall clock directly with a fixed 5-minute skew, so a
  token living less than that would be re-fetched on every request;
- the in-cluster loader re-reads its token file every minute through the package's
  ``refresh_api_key_hook`` (C3);
- after a 401, :meth:`Connection.reauthenticate` loads everything again, which re-runs the
  credential source (C2); the reflector does this at most three times in a row;
- exec plugin failures are logged by the package with the plugin's stderr in the message. That
  text can carry secrets, so the records are intercepted during loading, never passed on, and
  turned into a short :class:`KubeConfigError` that names only the exit status (C4, C5).
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import json
import logging
import os
import re
import ssl
import time
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
    #: wall clock (epoch seconds) that expiries are compared with; tests pass a virtual one
    clock: Callable[[], float] = field(default=time.time, repr=False)
    #: refresh this long before the expiry at most (less for a short-lived token: a fifth of it)
    refresh_margin: float = 60.0
    _issued: float = field(default_factory=time.time, repr=False)
    _refreshing: asyncio.Lock | None = field(default=None, repr=False)
    #: how many times the credential source was re-run before an expiry (C2)
    refreshes: int = 0

    def expiry(self) -> float | None:
        """When the current token expires (epoch seconds), or None when its source says nothing."""
        loader = self._loader
        if loader is None:
            return None
        exec_expiry = getattr(loader, "exec_plugin_expiry", None)
        if isinstance(exec_expiry, datetime.datetime):
            return exec_expiry.timestamp()
        return _oidc_expiry(loader)

    def refresh_in(self) -> float | None:
        """Seconds until the token should be refreshed (may be <= 0), or None without an expiry."""
        expiry = self.expiry()
        if expiry is None:
            return None
        lifetime = max(expiry - self._issued, 0.0)
        margin = min(self.refresh_margin, lifetime / 5)
        return expiry - margin - self.clock()

    async def authorization(self) -> str | None:
        """The ``Authorization`` header value for the next request (refreshed when due)."""
        cfg = self._configuration
        if cfg is None:
            return None
        due = self.refresh_in()
        if due is not None and due <= 0:
            await self._refresh()
        value: str | None = await cfg.get_api_key_with_prefix("BearerToken")
        return value

    async def renew(self, seen: int) -> None:
        """Refresh now unless it happened since the caller read :attr:`refreshes` as ``seen``.

        A reflector ends its watch when :meth:`refresh_in` said so on the *loop's* clock; the
        wall clock may still be a hair short of the due time, and reopening would then carry the
        old token. So the reflector asks for the refresh by generation instead of by time, and
        ten reflectors asking at once still run the source once.
        """
        await self._refresh(lambda: self.refreshes == seen)

    async def _refresh(self, needed: Callable[[], bool] | None = None) -> None:
        """Re-run the credential source once for everyone who finds the token due at once."""
        if self._loader is None or self.expiry() is None:
            return
        if self._refreshing is None:
            self._refreshing = asyncio.Lock()
        async with self._refreshing:
            if needed is not None:
                if not needed():
                    return
            else:
                due = self.refresh_in()
                if due is None or due > 0:  # another request refreshed it while this one waited
                    return
            cfg, loader = self._configuration, self._loader
            issued = self.clock()
            capture = _Capture()
            logger = logging.getLogger(_PLUGIN_LOGGER)
            logger.addFilter(capture)
            try:
                if getattr(loader, "exec_plugin_expiry", None) is not None:
                    # The package skips the plugin while *its* check thinks the token is fresh. An
                    # expiry in the past (not a deleted one) keeps this credential "expiring" for
                    # the requests that queue on the lock meanwhile.
                    loader.exec_plugin_expiry = datetime.datetime.fromtimestamp(0, datetime.UTC)
                    await loader.load_from_exec_plugin()
                else:
                    provider = loader._user["auth-provider"]
                    await loader._refresh_oidc(provider)
                    loader.token = "Bearer {}".format(provider["config"]["id-token"])
            except Exception as exc:  # the loader logs and raises many kinds; never the secret
                raise KubeConfigError(_plugin_failure(capture.messages) or _redact(exc)) from None
            finally:
                logger.removeFilter(capture)
            failure = _plugin_failure(capture.messages)
            if failure is not None:
                raise KubeConfigError(failure)
            if cfg is not None and getattr(loader, "token", None):
                cfg.api_key["BearerToken"] = loader.token
            self._issued = issued
            self.refreshes += 1

    async def reauthenticate(self) -> None:
        """Load the credentials again from their source (after a 401)."""
        if self._reload is None:
            return
        issued = self.clock()
        cfg, loader, _ = await self._reload()
        self._configuration, self._loader = cfg, loader
        self._issued = issued


def _oidc_expiry(loader: Any) -> float | None:
    """The ``exp`` of an OIDC id-token (epoch seconds), read without verifying it (the server does)."""
    user = getattr(loader, "_user", None)
    try:
        if getattr(loader, "provider", None) != "oidc" or user is None:
            return None
        token = str(user["auth-provider"]["config"]["id-token"])
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        exp = claims.get("exp")
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return None
    return float(exp) if isinstance(exp, int | float) else None


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
