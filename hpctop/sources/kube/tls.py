"""TLS material from a kubeconfig kept in memory, never written to a file system (C4, issue 12).

Why: the official loader turns every ``*-data`` field (``certificate-authority-data``,
``client-certificate-data``, ``client-key-data``, an exec plugin's ``clientKeyData``) into a file
under ``$TMPDIR`` and removes it only at a clean interpreter exit (``atexit``), so a decoded client
key sits on disk while hpctop runs and stays there after a SIGTERM or a crash. Here the loader
keeps such data as bytes (:class:`Material`), and :func:`ssl_context` builds the context from them:

- the CA through ``cadata`` (Python's ``ssl`` accepts certificates from memory);
- the client certificate and key through ``load_cert_chain``, which only takes paths: on Linux
  each is written to an anonymous memory file (``os.memfd_create``) and passed as
  ``/proc/self/fd/N``, which lives on no file system and vanishes with the descriptor, closed as
  soon as OpenSSL has read it. Elsewhere they go into 0600 files in a fresh 0700 directory that is
  removed right after the call, on every exit path of it.

A path the user named in the kubeconfig (``client-key: /home/me/key.pem``) is used as it is: it
is already their file.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import shutil
import ssl
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_PROC_FD = "/proc/self/fd"


@dataclass(frozen=True, slots=True)
class Material:
    """A certificate or key: its bytes (decoded ``*-data``) or the path of the user's own file."""

    data: bytes | None = None
    path: str | None = None

    def __repr__(self) -> str:  # never the bytes (a key) in a log or a traceback
        return f"Material(path={self.path!r})" if self.path else "Material(<in memory>)"


def material(
    obj: Any, file_key: str | None, data_key: str, base_path: str, *, base64_data: bool = True
) -> Material | None:
    """``obj[data_key]`` (base64-decoded when ``base64_data``) or the path in ``obj[file_key]``.

    Data wins over a file, as in the package's ``FileOrData``; None when neither is set.
    """
    data = obj[data_key] if data_key in obj else None  # noqa: SIM401 (the package's ConfigNode has no get)
    if data:
        raw = data.encode() if isinstance(data, str) else bytes(data)
        if base64_data:
            try:
                raw = base64.standard_b64decode(raw)
            except (binascii.Error, ValueError):
                raise ValueError(f"{data_key} is not base64") from None
        return Material(data=raw)
    if file_key is not None and file_key in obj and obj[file_key]:
        path = os.path.normpath(os.path.join(base_path, str(obj[file_key])))
        if not os.path.isfile(path):
            raise ValueError(f"{file_key}: no such file {path}")
        return Material(path=path)
    return None


@contextlib.contextmanager
def _paths(items: list[bytes]) -> Iterator[list[str]]:
    """Paths from which each of ``items`` can be read, for the duration of the block only."""
    if hasattr(os, "memfd_create") and os.path.isdir(_PROC_FD):
        fds: list[int] = []
        try:
            for item in items:
                fd = os.memfd_create("hpctop-tls", getattr(os, "MFD_CLOEXEC", 0))
                fds.append(fd)
                view = memoryview(item)
                while view:
                    view = view[os.write(fd, view) :]
            yield [f"{_PROC_FD}/{fd}" for fd in fds]
        finally:
            for fd in fds:
                os.close(fd)
        return
    directory = tempfile.mkdtemp(prefix="hpctop-tls-")  # mode 0700
    try:
        names = []
        for index, item in enumerate(items):
            name = os.path.join(directory, str(index))
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(item)
            names.append(name)
        yield names
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def load_cert_chain(ctx: ssl.SSLContext, cert: Material, key: Material | None) -> None:
    """``ctx.load_cert_chain`` from memory or the user's paths; nothing stays on disk."""
    pending = [m.data for m in (cert, key) if m is not None and m.data is not None]
    with _paths(pending) as paths:
        given = iter(paths)
        cert_path = cert.path if cert.data is None else next(given)
        key_path = None if key is None else (key.path if key.data is None else next(given))
        assert cert_path is not None
        ctx.load_cert_chain(cert_path, key_path)


def ssl_context(
    ca: Material | None, cert: Material | None, key: Material | None, *, verify: bool = True
) -> ssl.SSLContext:
    """A client context trusting ``ca`` (else the system's) and presenting ``cert``/``key``."""
    if ca is not None and ca.data is not None:
        pem = ca.data.lstrip()
        cadata: str | bytes = pem.decode("ascii") if pem.startswith(b"-----") else ca.data
        ctx = ssl.create_default_context(cadata=cadata)
    else:
        ctx = ssl.create_default_context(cafile=ca.path if ca is not None else None)
    if cert is not None:
        load_cert_chain(ctx, cert, key)
    if not verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx
