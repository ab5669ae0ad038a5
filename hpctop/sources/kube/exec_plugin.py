"""Exec credential plugins run the way a terminal console needs them (RELIABILITY.md C1).

Why hpctop runs the plugin itself instead of leaving it to ``kubernetes.aio``: the package's
``ExecProvider`` ignores ``interactiveMode``, hands the plugin hpctop's own standard input at every
run, keeps its standard error in a pipe (so a password prompt is never seen), and has no timeout
(a plugin waiting for a browser login that never comes freezes hpctop before its first frame).
On a console those are real failures: a plugin re-run for a token refresh while Textual owns the
terminal would read the keys meant for the console, and one that prompts would draw over it.

The rules here follow client-go's exec authenticator, with hpctop's two phases:

- **before the console starts** (:func:`~hpctop.sources.kube.connection.load_connection`, called
  by the CLI and :meth:`LiveConsoleSession.connect` before any UI), a plugin whose
  ``interactiveMode`` is ``IfAvailable`` (the default for ``v1beta1``) or ``Always`` runs
  *interactively* when standard input is a terminal: it gets the terminal's stdin and stderr, so it
  can prompt, and ``KUBERNETES_EXEC_INFO`` says ``interactive: true``;
- **afterwards** (a refresh before an expiry, a re-run after a 401: :class:`Connection`), every
  run is non-interactive: stdin is ``/dev/null`` and stderr is captured and dropped (it may carry
  secrets, C4/C5), so nothing reaches the live screen. A plugin with ``interactiveMode: Always``
  then fails with a clear error instead of prompting (the resource shows "re-authentication
  required"; restarting hpctop prompts again before the console);
- **every run has a timeout** (:data:`EXEC_TIMEOUT`, or :data:`INTERACTIVE_TIMEOUT` while a person
  may be typing): the plugin is killed at the end of it and the error says so.

What the plugin prints is read as the package reads it (token with an optional
``expirationTimestamp``, or a client certificate and key), so the rest of the loader is unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubernetes.aio.config import kube_config as _kube_config
from kubernetes.aio.config.dateutil import parse_rfc3339 as _parse_rfc3339

from hpctop.sources.kube import tls
from hpctop.sources.kube.errors import KubeConfigError

#: seconds a non-interactive plugin may run (client-go has none; a hung plugin must not hang hpctop)
EXEC_TIMEOUT = 60.0
#: seconds an interactive plugin may run: a person types a password or finishes a browser login
INTERACTIVE_TIMEOUT = 300.0

_MODES = ("Never", "IfAvailable", "Always")
kube_config: Any = _kube_config  # the package's loader module is untyped
parse_rfc3339: Any = _parse_rfc3339


@dataclass(frozen=True, slots=True)
class ExecIO:
    """Where a plugin's stdin and stderr go, and for how long it may run.

    ``terminal`` says the plugin may prompt (hpctop has not drawn anything yet and stdin is a
    terminal); ``stdin``/``stderr`` are the file descriptors it then gets (the process's own by
    default; tests pass pipes and files).
    """

    terminal: bool = False
    stdin: int | None = None
    stderr: int | None = None
    timeout: float = EXEC_TIMEOUT
    interactive_timeout: float = INTERACTIVE_TIMEOUT

    @classmethod
    def before_console(cls, timeout: float = EXEC_TIMEOUT) -> ExecIO:
        """The first load, before any UI: interactive when standard input is a terminal."""
        try:
            terminal = os.isatty(0)
        except OSError:
            terminal = False
        return cls(terminal=terminal, timeout=timeout)

    def background(self) -> ExecIO:
        """The same limits, never interactive (refreshes while the console runs)."""
        return ExecIO(terminal=False, timeout=self.timeout, interactive_timeout=self.interactive_timeout)


def _get(node: Any, key: str) -> Any:
    """A key of the package's ``ConfigNode`` (or a plain dict), None when absent."""
    getter = getattr(node, "safe_get", None)
    if getter is not None:
        return getter(key)
    return node.get(key) if isinstance(node, Mapping) else None


def interactive_mode(exec_config: Any) -> str:
    """``interactiveMode``; ``IfAvailable`` when absent (client-go's default before ``v1``)."""
    mode = _get(exec_config, "interactiveMode") or "IfAvailable"
    if mode not in _MODES:
        choices = ", ".join(_MODES)
        raise KubeConfigError(f"the credential plugin's interactiveMode {mode!r} is not one of {choices}")
    return str(mode)


async def run_exec_plugin(exec_config: Any, io: ExecIO) -> dict[str, Any]:
    """Run the plugin once and return the ExecCredential's ``status``.

    Raises :class:`KubeConfigError` with a short, redacted message (never the plugin's output).
    """
    command = _get(exec_config, "command")
    api_version = _get(exec_config, "apiVersion")
    if not command or not api_version:
        raise KubeConfigError("the credential plugin's exec section lacks command or apiVersion")
    mode = interactive_mode(exec_config)
    interactive = mode != "Never" and io.terminal
    if mode == "Always" and not interactive:
        raise KubeConfigError(
            "the credential plugin needs a terminal (interactiveMode: Always); "
            "hpctop runs it only before the console starts, from a terminal"
        )
    args = [str(command), *(str(a) for a in (_get(exec_config, "args") or []))]
    env = dict(os.environ)
    for item in _get(exec_config, "env") or []:
        env[str(item["name"])] = str(item["value"])
    info = {"apiVersion": api_version, "kind": "ExecCredential", "spec": {"interactive": interactive}}
    env["KUBERNETES_EXEC_INFO"] = json.dumps(info)
    timeout = io.interactive_timeout if interactive else io.timeout
    try:
        proc = await asyncio.create_subprocess_exec(
            *args,
            env=env,
            # interactive: the terminal's (None inherits hpctop's own); otherwise nothing to read,
            # and stderr into a pipe that is dropped. A session of its own takes the background
            # plugin off the terminal altogether: no /dev/tty to draw on, no Ctrl+C meant for hpctop.
            stdin=io.stdin if interactive else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=io.stderr if interactive else subprocess.PIPE,
            start_new_session=not interactive,
        )
    except OSError as exc:
        hint = " ".join(str(_get(exec_config, "installHint") or "").split())[:200]
        message = f"cannot run the credential plugin {args[0]!r}: {type(exc).__name__}"
        raise KubeConfigError(f"{message}; {hint}" if hint else message) from None
    try:
        async with asyncio.timeout(timeout):
            stdout, _stderr = await proc.communicate()  # stderr: captured, never shown (C4)
    except TimeoutError:
        raise KubeConfigError(
            f"the credential plugin did not finish within {timeout:g} s and was stopped"
        ) from None
    finally:
        if proc.returncode is None:  # timed out or cancelled (quitting): no plugin left behind
            await _stop(proc, group=not interactive)
    if proc.returncode != 0:
        raise KubeConfigError(f"the credential plugin exited with status {proc.returncode}")
    try:
        data = json.loads(stdout)
    except ValueError:
        raise KubeConfigError("the credential plugin printed something that is not JSON") from None
    if not isinstance(data, dict) or not all(k in data for k in ("apiVersion", "kind", "status")):
        raise KubeConfigError("the credential plugin's output is not an ExecCredential")
    if data["apiVersion"] != api_version:
        raise KubeConfigError(
            f"the credential plugin answered {data['apiVersion']!r}, not the {api_version!r} asked for"
        )
    status = data["status"]
    if not isinstance(status, dict):
        raise KubeConfigError("the credential plugin's output is not an ExecCredential")
    return status


#: seconds to wait for a killed plugin's exit (its pipes may stay open in an orphan meanwhile)
_REAP_WAIT = 2.0


async def _stop(proc: asyncio.subprocess.Process, *, group: bool) -> None:
    """Kill a plugin that overran, with everything it started when it has a session of its own.

    A plugin is often a wrapper (a shell script, ``aws``, ``gke-gcloud-auth-plugin``) whose child
    inherits the stdout pipe: killing only the wrapper leaves the child holding the pipe open, and
    waiting for the pipe's end then takes as long as the child lives. A background plugin runs in
    a session (hence a process group) of its own, so the whole group is killed. An interactive one
    shares the terminal's foreground group with hpctop (it must, to read the keyboard), so only it
    is killed, and its exit is awaited for a bounded time, never its pipes.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if group:
            os.killpg(proc.pid, signal.SIGKILL)  # start_new_session: its pgid is its pid
        else:
            proc.kill()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(asyncio.shield(proc.wait()), _REAP_WAIT)


class ConsoleKubeConfigLoader(_kube_config.KubeConfigLoader):
    """The package's kubeconfig loader with :func:`run_exec_plugin` for exec users.

    Everything else (merging, contexts, certificates, OIDC) is the package's. :attr:`exec_io` is
    set by :mod:`hpctop.sources.kube.connection`: interactive for the first load only.
    """

    exec_io: ExecIO = ExecIO()
    #: the context's TLS material, in memory (the package would write ``*-data`` to temp files)
    tls_ca: tls.Material | None = None
    tls_cert: tls.Material | None = None
    tls_key: tls.Material | None = None

    def _load_cluster_info(self) -> None:
        """The package's ``_load_cluster_info`` with the certificates kept as :class:`tls.Material`.

        ``ssl_ca_cert``/``cert_file``/``key_file`` are never set, so ``_set_config`` copies no temp
        file name into the configuration and :func:`tls.ssl_context` builds the context instead.
        """
        loader: Any = self
        cluster, user = loader._cluster, loader._user
        if "server" in cluster:
            loader.host = cluster["server"].rstrip("/")
            if loader.host.startswith("https"):
                base_path = loader._get_base_path(cluster.path)
                try:
                    self.tls_ca = tls.material(
                        cluster, "certificate-authority", "certificate-authority-data", base_path
                    )
                    if self.tls_cert is None:  # an exec plugin may have given one
                        self.tls_cert = tls.material(
                            user, "client-certificate", "client-certificate-data", base_path
                        )
                        self.tls_key = tls.material(user, "client-key", "client-key-data", base_path)
                except ValueError as exc:
                    raise KubeConfigError(str(exc)) from None
        if "insecure-skip-tls-verify" in cluster:
            loader.verify_ssl = not cluster["insecure-skip-tls-verify"]
        if "tls-server-name" in cluster:
            loader.tls_server_name = cluster["tls-server-name"]
        if "proxy-url" in cluster:
            loader.proxy = cluster["proxy-url"]

    async def load_from_exec_plugin(self) -> bool:
        loader: Any = self  # the package's attributes are untyped
        expiry = getattr(self, "exec_plugin_expiry", None)
        if expiry is not None and not kube_config._is_expired(expiry):
            return True
        status = await run_exec_plugin(loader._user["exec"], self.exec_io)
        if "token" in status:
            loader.token = f"Bearer {status['token']}"
            if "expirationTimestamp" in status:
                loader.exec_plugin_expiry = parse_rfc3339(status["expirationTimestamp"])
            return True
        if "clientCertificateData" in status and "clientKeyData" in status:
            # kept in memory (hpctop.sources.kube.tls), never the package's temp files
            self.tls_cert = tls.material(status, None, "clientCertificateData", "", base64_data=False)
            self.tls_key = tls.material(status, None, "clientKeyData", "", base64_data=False)
            return True
        raise KubeConfigError("the credential plugin's output lacks a token or a client certificate")


async def load_kube_config(
    config_file: str, context: str | None, client_configuration: Any, io: ExecIO
) -> ConsoleKubeConfigLoader:
    """``kube_config.load_kube_config`` with :class:`ConsoleKubeConfigLoader` (no persisting)."""
    merged = kube_config.KubeConfigMerger(config_file)
    make: Any = ConsoleKubeConfigLoader
    loader: Any = make(config_dict=merged.config, active_context=context, config_base_path=None)
    loader.exec_io = io
    await loader.load_and_set(client_configuration)
    result: ConsoleKubeConfigLoader = loader
    return result
