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
  a bug that would otherwise loop against the API server;
- :meth:`KubeClient.request` sends the mutating verbs the actions need (POST, PUT, PATCH, DELETE)
  and returns the whole answer (:class:`ApiResponse`: status, body, the server's ``Audit-Id`` and
  ``Warning`` headers) instead of raising on 4xx/5xx, because the action layer has a rule per
  status (RELIABILITY.md §2.2) and must log the ``Audit-Id`` of a refusal too.

Read-only is enforced here, in one place (RELIABILITY.md §2.4, SCHEDULERS.md §9.1): a client made
with ``read_only=True`` (the default, so a client built for reading can never write by accident)
refuses every verb but GET/HEAD before any socket I/O, before the rate limiter, before credentials
are even asked for. The only exempt requests are POSTs to the three self-subject reviews, matched
on the exact path, which ask the server what the user may do and change nothing. A ``dryRun=All``
request is refused too: it uses a mutating verb, and a mistake in the dry-run flag must not become
a write. The flag is fixed at construction; there is no way to turn a read-only client into a
writing one (R3).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

import aiohttp
import orjson
from asyncio_throttle.throttler import Throttler

from hpctop.errors import ActionRefused
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
MAX_RESPONSE_BODY = 16 * 1024 * 1024  # one object (a mutation's answer), never a list

#: Yielded by :func:`iter_lines` in place of a line that exceeded the size limit.
OVERSIZED: bytes = b"\x00oversized"

#: Verbs that only read; everything else needs a writing client.
READ_METHODS = frozenset({"GET", "HEAD"})

#: The only POSTs a read-only client sends: they ask the server what the user may do.
REVIEW_PATHS = frozenset(
    {
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    }
)


class ReadOnlyViolation(KubeError, ActionRefused):
    """A mutating request was asked of a read-only client; nothing was sent."""

    title = "read-only mode"


def check_read_only(method: str, path: str) -> None:
    """Raise :class:`ReadOnlyViolation` unless a read-only client may send ``method path``.

    The path is compared exactly (no normalisation), so ``.../selfsubjectaccessreviews/../x`` or
    a query string smuggled into the path is not a review.
    """
    verb = method.upper()
    if verb in READ_METHODS:
        return
    if verb == "POST" and path in REVIEW_PATHS:
        return
    raise ReadOnlyViolation(f"read-only mode: {verb} {path} was not sent to the cluster")


@dataclass(frozen=True, slots=True)
class ApiResponse:
    """One answer of the API server to a request sent with :meth:`KubeClient.request`."""

    method: str
    path: str
    status: int
    body: bytes
    #: the apiserver's ``Audit-Id`` response header: links hpctop's audit log to the server's
    audit_id: str | None = None
    #: ``Warning`` response headers (a delete of a Job without a propagation policy gets one)
    warnings: tuple[str, ...] = ()
    retry_after: str | None = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def json(self) -> Any:
        """The decoded body, or None when it is empty or not JSON."""
        if not self.body:
            return None
        try:
            return orjson.loads(self.body)
        except orjson.JSONDecodeError:
            return None

    def error(self) -> ApiError | None:
        """The hpctop error for this answer (None when it is a success)."""
        if self.ok:
            return None
        return error_for_status(
            self.status, self.body[:MAX_ERROR_BODY], retry_after_header=self.retry_after, what=self.path
        )


def _connection_error(exc: BaseException, what: str, read_timeout: float | None = None) -> KubeError:
    if read_timeout is not None and isinstance(exc, aiohttp.ServerTimeoutError | asyncio.TimeoutError):
        return ServerUnreachable(
            f"{what}: no answer from the API server within {read_timeout:g} s "
            "(the request timeout: HPCTOP_REQUEST_TIMEOUT or request_timeout in the config file)"
        )
    if isinstance(exc, aiohttp.ClientConnectorCertificateError | aiohttp.ClientSSLError):
        return CertificateError(f"{what}: {exc}")
    if isinstance(exc, aiohttp.ClientPayloadError):
        return StreamBroken(f"{what}: response ended abnormally ({type(exc).__name__})")
    return ServerUnreachable(f"{what}: {exc or type(exc).__name__}")


_NETWORK_ERRORS = (aiohttp.ClientError, OSError, asyncio.TimeoutError)


async def _read_capped(response: aiohttp.ClientResponse, cap: int) -> bytes:
    """The whole body, or its first ``cap`` bytes (the rest is drained and dropped)."""
    buf = bytearray()
    async for chunk in response.content.iter_any():
        if len(buf) < cap:
            buf += chunk[: cap - len(buf)]
    return bytes(buf)


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
        read_only: bool = True,
    ) -> None:
        self.connection = connection
        self._read_only = read_only
        self.throttler = Throttler(rate_limit=qps, period=1.0)
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._session: aiohttp.ClientSession | None = None
        self._write_session: aiohttp.ClientSession | None = None
        self.requests = 0

    def _new_session(self) -> aiohttp.ClientSession:
        ssl_arg: object = self.connection.ssl if self.connection.ssl is not None else True
        connector = aiohttp.TCPConnector(ssl=ssl_arg, limit=0)  # type: ignore[arg-type]
        return aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=self._connect_timeout),
            headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
            auto_decompress=True,
        )

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = self._new_session()
        return self._session

    @property
    def write_session(self) -> aiohttp.ClientSession:
        """The session for mutations: aiohttp silently resends an "idempotent" request (PUT and
        DELETE included) once when a kept-alive connection is reset, and has no public switch for
        it. A resent DELETE or PUT is exactly the blind retry RELIABILITY.md §2.2 forbids (the first
        may have been applied: M5), so mutations get their own session with that retry off."""
        if self._write_session is None or self._write_session.closed:
            session = self._new_session()
            session._retry_connection = False
            self._write_session = session
        return self._write_session

    @property
    def read_only(self) -> bool:
        """Fixed at construction: a read-only client never becomes a writing one (R3)."""
        return self._read_only

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._write_session is not None:
            await self._write_session.close()
            self._write_session = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @contextlib.asynccontextmanager
    async def _open(
        self,
        method: str,
        path: str,
        params: Mapping[str, str],
        *,
        read_timeout: float | None,
        data: bytes | None = None,
        content_type: str | None = None,
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        """Every request goes through here, so the read-only check is in exactly one place."""
        if self._read_only:
            check_read_only(method, path)  # before the throttler, the credentials and the socket
        await self.throttler.acquire()  # type: ignore[no-untyped-call]
        self.requests += 1
        headers: dict[str, str] = {}
        auth = await self.connection.authorization()
        if auth:
            headers["Authorization"] = auth
        if content_type is not None:
            headers["Content-Type"] = content_type
        url = self.connection.server + path
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=self._connect_timeout, sock_read=read_timeout
        )
        session = self.session if method.upper() in READ_METHODS else self.write_session
        try:
            response = await session.request(
                method,
                url,
                params=dict(params),
                data=data,
                headers=headers,
                timeout=timeout,
                proxy=self.connection.proxy,
                server_hostname=self.connection.server_hostname,
            )
        except _NETWORK_ERRORS as exc:
            raise _connection_error(exc, path, read_timeout) from None
        try:
            yield response
        finally:
            response.release()

    @contextlib.asynccontextmanager
    async def _request(
        self, path: str, params: Mapping[str, str], *, read_timeout: float | None
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        async with self._open("GET", path, params, read_timeout=read_timeout) as response:
            if response.status >= 400:
                try:
                    body = await response.content.read(MAX_ERROR_BODY)
                except _NETWORK_ERRORS:
                    body = b""
                raise error_for_status(
                    response.status, body, retry_after_header=response.headers.get("Retry-After"), what=path
                )
            yield response

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: object = None,
        content_type: str = "application/json",
        timeout: float | None = None,
    ) -> ApiResponse:
        """Send one request (any verb) and return the server's answer, error statuses included.

        Raises :class:`ReadOnlyViolation` (nothing sent) on a read-only client, and
        :class:`ServerUnreachable`/:class:`StreamBroken` when no complete answer came back: for a
        mutation that means the outcome is unknown, and the caller must re-read before retrying.
        """
        data = orjson.dumps(body) if body is not None else None
        async with self._open(
            method,
            path,
            params or {},
            read_timeout=timeout if timeout is not None else self._read_timeout,
            data=data,
            content_type=content_type if data is not None else None,
        ) as response:
            try:
                payload = await _read_capped(response, MAX_RESPONSE_BODY)
            except _NETWORK_ERRORS as exc:
                raise _connection_error(exc, path) from None
            return ApiResponse(
                method=method.upper(),
                path=path,
                status=response.status,
                body=payload,
                audit_id=response.headers.get("Audit-Id"),
                warnings=tuple(response.headers.getall("Warning", ())),
                retry_after=response.headers.get("Retry-After"),
            )

    async def get(self, path: str, params: Mapping[str, str]) -> bytes:
        """GET ``path`` and return the body (a list page); errors raised as hpctop errors."""
        async with self._request(path, params, read_timeout=self._read_timeout) as response:
            try:
                return await response.read()
            except _NETWORK_ERRORS as exc:
                raise _connection_error(exc, path, self._read_timeout) from None

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


__all__ = [
    "OVERSIZED",
    "REVIEW_PATHS",
    "ApiError",
    "ApiResponse",
    "KubeClient",
    "ReadOnlyViolation",
    "check_read_only",
    "iter_lines",
]
