"""What can go wrong talking to an API server, as hpctop errors with a title a person can read.

HTTP statuses and socket failures are mapped to these classes once, in the transport, so that the
reflector's retry rules (RELIABILITY.md §1.2, §1.3) and the console's messages are written against
a handful of names instead of status numbers and aiohttp exception types scattered about. The shape
follows kopf's ``clients/errors.py``: client errors and server errors, with the statuses that carry
a rule of their own (401, 403, 404, 410, 429) as subclasses.

Messages never carry a server's whole body (it is capped at 256 characters) nor anything from the
request headers, so a token cannot reach a log or the screen through an error (C4).
"""

from __future__ import annotations

from typing import Any

import orjson

from hpctop.errors import HpctopError

MAX_DETAIL = 256


class KubeError(HpctopError):
    """Base of every error met while talking to a Kubernetes API server."""

    title = "Kubernetes error"


class KubeConfigError(KubeError):
    """The kubeconfig is missing or malformed, the context does not exist, or credentials failed."""

    title = "kubeconfig problem"
    exit_code = 2


class ServerUnreachable(KubeError):
    """No TCP connection: DNS failure, connection refused, timeout, reset before a response."""

    title = "API server unreachable"


class CertificateError(KubeError):
    """The TLS handshake failed: the server's certificate is not trusted or does not match."""

    title = "bad server certificate"
    exit_code = 2


class StreamBroken(KubeError):
    """A response body ended abnormally: connection reset, truncated chunk, inactivity deadline."""

    title = "connection lost"


class ApiError(KubeError):
    """The server answered with an error status; ``status``, ``reason`` and the Status body kept."""

    title = "API error"

    def __init__(
        self,
        detail: str,
        *,
        status: int,
        reason: str = "",
        retry_after: float | None = None,
        causes: tuple[str, ...] = (),
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.reason = reason
        self.retry_after = retry_after
        self.causes = causes


class ClientError(ApiError):
    """A 4xx answer: the request itself is the problem."""


class Unauthorized(ClientError):
    """401: the credential is missing, expired or rejected."""

    title = "not authenticated (re-authentication required)"


class Forbidden(ClientError):
    """403: authenticated, but RBAC does not allow this verb on this resource."""

    title = "forbidden"


class NotFound(ClientError):
    """404: the resource type or the object does not exist (a CRD not installed, for example)."""

    title = "not found"


class Gone(ClientError):
    """410 (or a too-large resourceVersion): the version asked for is compacted; relist."""

    title = "resource version expired"


class TooManyRequests(ClientError):
    """429: the server asks to slow down; ``retry_after`` says for how long, when it says."""

    title = "too many requests"


class ServerError(ApiError):
    """A 5xx answer, or an in-stream ``InternalError``: back off and retry."""

    title = "API server error"


def _parse_retry_after(header: str | None, details: Any) -> float | None:
    if header:
        try:
            seconds = float(header.strip())
        except ValueError:
            seconds = -1.0  # an HTTP date: rare from an apiserver; fall through to the body
        if seconds >= 0:
            return seconds
    if isinstance(details, dict):
        value = details.get("retryAfterSeconds")
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            return float(value)
    return None


def status_details(status: dict[str, Any]) -> tuple[str, str, tuple[str, ...], Any]:
    """(message, reason, cause reasons, details) of a ``kind: Status`` object."""
    details = status.get("details")
    causes: tuple[str, ...] = ()
    if isinstance(details, dict) and isinstance(details.get("causes"), list):
        causes = tuple(str(c.get("reason", "")) for c in details["causes"] if isinstance(c, dict))
    message = str(status.get("message") or "")[:MAX_DETAIL]
    reason = str(status.get("reason") or "")
    return message, reason, causes, details


def error_for_status(
    status: int, body: bytes, *, retry_after_header: str | None = None, what: str = ""
) -> ApiError:
    """The hpctop error for an HTTP error response (or an in-stream ``ERROR`` Status)."""
    message, reason, details = "", "", None
    causes: tuple[str, ...] = ()
    try:
        parsed = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict) and parsed.get("kind") == "Status":
        message, reason, causes, details = status_details(parsed)
    elif body:
        message = body[:MAX_DETAIL].decode("utf-8", "replace")
    retry_after = _parse_retry_after(retry_after_header, details)
    where = f"{what}: " if what else ""
    detail = f"{where}HTTP {status}" + (f" {reason}" if reason else "") + (f": {message}" if message else "")
    cls: type[ApiError]
    too_large = "ResourceVersionTooLarge" in causes or "too large resource version" in message.lower()
    if status == 410 or (too_large and status in (504, 500)):
        cls = Gone
    elif status == 401:
        cls = Unauthorized
    elif status == 403:
        cls = Forbidden
    elif status == 404:
        cls = NotFound
    elif status == 429:
        cls = TooManyRequests
    elif status >= 500:
        cls = ServerError
    else:
        cls = ClientError
    return cls(detail, status=status, reason=reason, retry_after=retry_after, causes=causes)
