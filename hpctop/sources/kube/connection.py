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
- in a pod (in-cluster), the service account token file is re-read when the token in use is a
  minute old (:attr:`Connection.token_period`, on :attr:`Connection.clock`), so the next request
  after the kubelet rotates the projected token carries the new one (C3). hpctop does this itself
  rather than through the package's ``refresh_api_key_hook``, which compares against
  ``datetime.now()`` directly and so cannot run on a test's clock;
- exec plugins run through :mod:`hpctop.sources.kube.exec_plugin`: interactively (the terminal's
  stdin and stderr) only for the first load, before the console draws anything; every later run
  (refresh, re-run after a 401) is detached from the terminal; and every run has a timeout after
  which the plugin is killed and the error says so (C1);
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
from kubernetes.aio.config import incluster_config
from kubernetes.aio.config.config_exception import ConfigException

from hpctop.sources.kube import tls
from hpctop.sources.kube.errors import KubeConfigError
from hpctop.sources.kube.exec_plugin import EXEC_TIMEOUT, ExecIO
from hpctop.sources.kube.exec_plugin import load_kube_config as _load_kube_config

#: where a pod's service account lives (the package's paths)
SERVICE_TOKEN_FILE = incluster_config.SERVICE_TOKEN_FILENAME
SERVICE_CA_FILE = incluster_config.SERVICE_CERT_FILENAME
#: seconds after which the in-cluster token file is read again (client-go: one minute)
TOKEN_PERIOD = 60.0

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
    #: in-cluster: the service account token file, re-read every ``token_period`` seconds (C3)
    token_file: str | None = None
    token_period: float = TOKEN_PERIOD
    _token_read_at: float | None = field(default=None, repr=False)
    #: how many times a re-read of the token file found a new token (C3)
    token_rotations: int = 0

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
        if self.token_file is not None:
            self._reread_token(cfg)
        due = self.refresh_in()
        if due is not None and due <= 0:
            await self._refresh()
        value: str | None = await cfg.get_api_key_with_prefix("BearerToken")
        return value

    def _reread_token(self, cfg: Configuration) -> None:
        """Read the service account token again once the one in use is ``token_period`` old (C3).

        The kubelet rewrites the projected token file well before the old token expires, so a
        minute's delay is safe; an unreadable or empty file keeps the token in use (the kubelet
        replaces the file by a rename, so a half-written one is never seen, but a test may).
        """
        now = self.clock()
        if self._token_read_at is None:
            self._token_read_at = now  # read by the loader just now
            return
        if now - self._token_read_at < self.token_period or self.token_file is None:
            return
        self._token_read_at = now
        try:
            with open(self.token_file, encoding="utf-8") as handle:
                token = handle.read().strip()
        except OSError:
            return
        if not token:
            return
        value = f"Bearer {token}"
        if cfg.api_key.get("BearerToken") != value:
            cfg.api_key["BearerToken"] = value
            self.token_rotations += 1

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
            if hasattr(loader, "exec_io"):
                loader.exec_io = loader.exec_io.background()  # the console may be up: never prompt (C1)
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
            except KubeConfigError:
                raise
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


def _ssl_context(cfg: Configuration, loader: Any) -> ssl.SSLContext | bool | None:
    """The TLS context from the loader's in-memory material (kubeconfig) or the CA path (in-cluster).

    Never from ``cfg.ssl_ca_cert``/``cert_file`` of a kubeconfig: the package would have put
    decoded ``*-data`` there as temp files (hpctop's loader keeps them in memory, :mod:`.tls`).
    """
    if not str(cfg.host).startswith("https"):
        return None
    if loader is not None:
        ca, cert, key = loader.tls_ca, loader.tls_cert, loader.tls_key
    else:
        ca = tls.Material(path=cfg.ssl_ca_cert) if cfg.ssl_ca_cert else None
        cert = tls.Material(path=cfg.cert_file) if cfg.cert_file else None
        key = tls.Material(path=cfg.key_file) if cfg.key_file else None
    try:
        return tls.ssl_context(ca, cert, key, verify=bool(cfg.verify_ssl))
    except (OSError, ssl.SSLError, ValueError) as exc:
        raise KubeConfigError(f"cannot use the TLS files of this context: {type(exc).__name__}") from None


async def _load_file(
    paths: list[str], context: str | None, io: ExecIO
) -> tuple[Configuration, Any, dict[str, Any]]:
    existing = [p for p in paths if os.path.exists(p)]
    if not existing:
        raise KubeConfigError(f"no kubeconfig at {os.pathsep.join(paths)}")
    cfg = Configuration()
    capture = _Capture()
    logger = logging.getLogger(_PLUGIN_LOGGER)
    logger.addFilter(capture)
    try:
        loader = await _load_kube_config(os.pathsep.join(existing), context, cfg, io)
    except KubeConfigError:
        raise
    except Exception as exc:  # the loader raises ConfigException, yaml errors, KeyError, TypeError...
        raise KubeConfigError(f"{os.pathsep.join(existing)}: {_redact(exc)}") from None
    finally:
        logger.removeFilter(capture)
    failure = _plugin_failure(capture.messages)
    if failure is not None:
        raise KubeConfigError(failure)
    current: dict[str, Any] = dict(loader.current_context or {})
    return cfg, loader, current


async def _load_in_cluster(token_file: str, ca_file: str) -> tuple[Configuration, Any, dict[str, Any]]:
    cfg = Configuration()
    try:
        # the token is re-read by Connection (C3), not by the package's wall-clock hook
        incluster_config.InClusterConfigLoader(  # type: ignore[no-untyped-call]
            token_filename=token_file, cert_filename=ca_file, try_refresh_token=False
        ).load_and_set(cfg)
    except ConfigException as exc:
        raise KubeConfigError(f"in-cluster configuration: {_redact(exc)}") from None
    # the package keeps the file as it is ("bearer " and any trailing newline); the re-read uses this
    _, _, token = str(cfg.api_key.get("BearerToken") or "").partition(" ")
    cfg.api_key["BearerToken"] = f"Bearer {token.strip()}"
    return cfg, None, {}


def in_cluster_available() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST") and os.environ.get("KUBERNETES_SERVICE_PORT"))


async def load_connection(
    kubeconfig: str | None = None,
    context: str | None = None,
    *,
    in_cluster: bool | None = None,
    exec_io: ExecIO | None = None,
    exec_timeout: float = EXEC_TIMEOUT,
    token_file: str = SERVICE_TOKEN_FILE,
    ca_file: str = SERVICE_CA_FILE,
) -> Connection:
    """Load the connection settings the way kubectl would.

    ``kubeconfig`` may hold several paths separated by ``os.pathsep``. With ``in_cluster=None``
    the service account is used only when no kubeconfig was named and none exists at the default
    places, but the pod environment is there (``token_file``/``ca_file``: the service account's,
    by default where Kubernetes mounts them).

    Call it before any UI: an exec plugin may prompt on the terminal then (``exec_io``, by default
    :meth:`ExecIO.before_console`: interactive when stdin is a terminal). Every later run of the
    plugin, including a reload after a 401, is non-interactive; each gives up after
    ``exec_timeout`` seconds (C1).
    """
    first_io = exec_io if exec_io is not None else ExecIO.before_console(exec_timeout)
    paths = kubeconfig.split(os.pathsep) if kubeconfig else default_kubeconfig_paths()
    if in_cluster is None:
        in_cluster = (
            kubeconfig is None
            and context is None
            and not any(os.path.exists(p) for p in paths)
            and in_cluster_available()
        )

    async def load(io: ExecIO) -> tuple[Configuration, Any, dict[str, Any]]:
        return await (_load_in_cluster(token_file, ca_file) if in_cluster else _load_file(paths, context, io))

    async def reload() -> tuple[Configuration, Any, dict[str, Any]]:
        return await load(first_io.background())

    cfg, loader, current = await load(first_io)
    ctx_body = current.get("context") or {}
    namespace = ctx_body.get("namespace") if isinstance(ctx_body, dict) else None
    return Connection(
        server=str(cfg.host).rstrip("/"),
        context=current.get("name") if not in_cluster else "in-cluster",
        namespace=namespace,
        ssl=_ssl_context(cfg, loader),
        server_hostname=getattr(cfg, "tls_server_name", None) or None,
        proxy=getattr(cfg, "proxy", None) or None,
        _configuration=cfg,
        _loader=loader,
        _reload=reload,
        token_file=token_file if in_cluster else None,
    )
