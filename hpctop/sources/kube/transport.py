"""hpctop's own HTTP to the API server: raw bytes in, hpctop errors out.

Why not the official client's API classes: their responses go through the generated models,
20-30x slower than decoding the bytes straight into hpctop's slim models (PERFORMANCE.md P1), and
their watch helper has the defects listed in RELIABILITY.md §1.1. So this module keeps only what
the reflector needs:

- :meth:`KubeClient.get` returns a response body as bytes (a list page);
- :meth:`KubeClient.stream` opens a watch and yields its lines as bytes, split here rather than
  with aiohttp's ``readline`` so that a line of any size is read whole (W14), and an oversized one
  is skipped instead of breaking the stream;
- every error becomes one class of :mod:`hpctop.sources.kube.errors`, with ``Retry-After`` parsed;
- every request first passes a client-side rate limiter (asyncio-throttle), a last guard against
  a bug that would otherwise loop against the API server.

Read-only by construction: there is no method here that sends anything but GET.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import Self

import aiohttp
from asyncio_throttle.throttler import Throttler

from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.errors import (
    ApiError,
    CertificateError,
    KubeError,
    ServerUnreachable,
    StreamBroken,
    error_for_status,
)

USER_AGENT = "hpctop/0.1"
MAX_ERROR_BODY = 64 * 1024
MAX_LINE = 64 * 1024 * 1024

#: Yielded by :func:`iter_lines` in place of a line that exceeded the size limit.
OVERSIZED: bytes = b"\x00oversized"


def _connection_error(exc: BaseException, what: str) -> KubeError:
    if isinstance(exc, aiohttp.ClientConnectorCertificateError | aiohttp.ClientSSLError):
        return CertificateError(f"{what}: {exc}")
    if isinstance(exc, aiohttp.ClientPayloadError):
        return StreamBroken(f"{what}: response ended abnormally ({type(exc).__name__})")
    return ServerUnreachable(f"{what}: {exc or type(exc).__name__}")


_NETWORK_ERRORS = (aiohttp.ClientError, OSError, asyncio.TimeoutError)


async def iter_lines(chunks: AsyncIterator[bytes], max_line: int = MAX_LINE) -> AsyncIterator[bytes]:
    """Split a byte stream into non-empty lines; an oversized line becomes :data:`OVERSIZED`."""
    buf = bytearray()
    discarding = False
    async for chunk in chunks:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                if not discarding:
                    buf += chunk[start:]
                    if len(buf) > max_line:
                        buf.clear()
                        discarding = True
                        yield OVERSIZED
                break
            if discarding:
                discarding = False
            else:
                buf += chunk[start:end]
                if len(buf) > max_line:
                    yield OVERSIZED
                elif buf.strip():
                    yield bytes(buf)
                buf.clear()
            start = end + 1
    if buf.strip() and not discarding:
        yield bytes(buf)


class KubeClient:
    """One aiohttp session to one API server, with throttling and error mapping."""

    def __init__(
        self,
        connection: Connection,
        *,
        qps: int = 50,
        connect_timeout: float = 10.0,
        read_timeout: float = 120.0,
    ) -> None:
        self.connection = connection
        self.throttler = Throttler(rate_limit=qps, period=1.0)
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._session: aiohttp.ClientSession | None = None
        self.requests = 0

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            ssl_arg: object = self.connection.ssl if self.connection.ssl is not None else True
            connector = aiohttp.TCPConnector(ssl=ssl_arg, limit=0)  # type: ignore[arg-type]
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=self._connect_timeout),
                headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
                auto_decompress=True,
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @contextlib.asynccontextmanager
    async def _request(
        self, path: str, params: Mapping[str, str], *, read_timeout: float | None
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        await self.throttler.acquire()  # type: ignore[no-untyped-call]
        self.requests += 1
        headers: dict[str, str] = {}
        auth = await self.connection.authorization()
        if auth:
            headers["Authorization"] = auth
        url = self.connection.server + path
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=self._connect_timeout, sock_read=read_timeout
        )
        try:
            response = await self.session.get(
                url,
                params=dict(params),
                headers=headers,
                timeout=timeout,
                proxy=self.connection.proxy,
                server_hostname=self.connection.server_hostname,
            )
        except _NETWORK_ERRORS as exc:
            raise _connection_error(exc, path) from None
        try:
            if response.status >= 400:
                try:
                    body = await response.content.read(MAX_ERROR_BODY)
                except _NETWORK_ERRORS:
                    body = b""
                raise error_for_status(
                    response.status, body, retry_after_header=response.headers.get("Retry-After"), what=path
                )
            yield response
        finally:
            response.release()

    async def get(self, path: str, params: Mapping[str, str]) -> bytes:
        """GET ``path`` and return the body (a list page); errors raised as hpctop errors."""
        async with self._request(path, params, read_timeout=self._read_timeout) as response:
            try:
                return await response.read()
            except _NETWORK_ERRORS as exc:
                raise _connection_error(exc, path) from None

    @contextlib.asynccontextmanager
    async def stream(self, path: str, params: Mapping[str, str]) -> AsyncIterator[AsyncIterator[bytes]]:
        """Open a streaming GET (a watch); the yielded iterator gives its lines as bytes.

        No read timeout is set on the socket: the caller keeps an inactivity deadline per line
        (the reflector's watchdog), which also covers a half-open connection.
        """
        async with self._request(path, params, read_timeout=None) as response:

            async def lines() -> AsyncIterator[bytes]:
                try:
                    async for line in iter_lines(response.content.iter_any()):
                        yield line
                except _NETWORK_ERRORS as exc:
                    raise _connection_error(exc, path) from None

            yield lines()


__all__ = ["OVERSIZED", "ApiError", "KubeClient", "iter_lines"]
