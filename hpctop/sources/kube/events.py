"""The Kubernetes Events of one job: its owner object and its pods, for the job detail screen.

Why ask per object with a field selector instead of watching every Event of the cluster: Events
are the noisiest resource there is (thousands a minute on a busy cluster), and the console only
needs them for the one job whose detail is open. A handful of small GETs when the detail opens
(and again every few seconds while it stays open) costs the API server next to nothing.

``events.k8s.io/v1`` is asked first (``regarding.name``; served since Kubernetes 1.19), core
``v1`` (``involvedObject.name``) when that API is not served. The answer is filtered again here on
kind, name and namespace, because a field selector the server does not apply (an aggregated API,
a test double) must not show another object's Events. Reason and message are other people's text,
so they are cleaned of control, bidi and zero-width characters here, and the screen sanitises
them once more when it draws them.
"""

from __future__ import annotations

import asyncio
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from hpctop.sources.kube.errors import NotFound
from hpctop.sources.kube.transport import KubeClient

#: at most this many objects are asked about per job (the owner and its first pods)
MAX_OBJECTS = 20
#: Events kept per job, newest last
MAX_ROWS = 50
MESSAGE_CAP = 1024
FIELD_CAP = 128


@dataclass(frozen=True, slots=True)
class EventRow:
    """One Event as the detail screen shows it; every string already cleaned."""

    type: str  # Normal / Warning
    reason: str
    message: str
    count: int
    last_time: float | None  # epoch seconds
    kind: str  # what it is about
    name: str


def clean(text: object, cap: int = MESSAGE_CAP) -> str:
    """``text`` on one line, without control, bidi or zero-width characters, at most ``cap`` long."""
    s = text if isinstance(text, str) else ("" if text is None else str(text))
    if not (s.isascii() and s.isprintable()):
        out = []
        for ch in s:
            if ch in "\n\t\r":
                out.append(" ")
            elif ch.isprintable() and unicodedata.category(ch) not in ("Cf", "Cs", "Co"):
                out.append(ch)
            else:
                out.append("\N{REPLACEMENT CHARACTER}")
        s = "".join(out)
    return s if len(s) <= cap else s[: cap - 1] + "…"


def _time(value: Any) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _row(obj: Any) -> tuple[str, str, str, EventRow] | None:
    """(namespace, kind, name, row) of one Event in either API's shape; None if not an Event."""
    if not isinstance(obj, dict):
        return None
    about = obj.get("regarding") or obj.get("involvedObject")
    if not isinstance(about, dict):
        return None
    series = obj.get("series") if isinstance(obj.get("series"), dict) else {}
    assert isinstance(series, dict)
    count = series.get("count") or obj.get("count") or obj.get("deprecatedCount") or 1
    last = (
        _time(series.get("lastObservedTime"))
        or _time(obj.get("lastTimestamp"))
        or _time(obj.get("deprecatedLastTimestamp"))
        or _time(obj.get("eventTime"))
        or _time(obj.get("firstTimestamp"))
        or _time((obj.get("metadata") or {}).get("creationTimestamp"))
    )
    row = EventRow(
        type=clean(obj.get("type") or "", FIELD_CAP),
        reason=clean(obj.get("reason") or "", FIELD_CAP),
        message=clean(obj.get("note") if "note" in obj else obj.get("message") or ""),
        count=count if isinstance(count, int) and count > 0 else 1,
        last_time=last,
        kind=clean(about.get("kind") or "", FIELD_CAP),
        name=clean(about.get("name") or "", 256),
    )
    return str(about.get("namespace") or ""), str(about.get("kind") or ""), str(about.get("name") or ""), row


async def _events_about(client: KubeClient, namespace: str, kind: str, name: str) -> list[EventRow]:
    try:
        raw = await client.get(
            f"/apis/events.k8s.io/v1/namespaces/{namespace}/events",
            {"fieldSelector": f"regarding.name={name}", "limit": "200"},
        )
    except NotFound:  # events.k8s.io not served: the core API has the same Events
        raw = await client.get(
            f"/api/v1/namespaces/{namespace}/events",
            {"fieldSelector": f"involvedObject.name={name}", "limit": "200"},
        )
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return []
    items = doc.get("items") if isinstance(doc, dict) else None
    rows = []
    for item in items if isinstance(items, list) else ():
        parsed = _row(item)
        if parsed is None:
            continue
        ns, k, n, row = parsed
        if n == name and (not ns or ns == namespace) and (not k or k == kind):
            rows.append(row)
    return rows


async def list_job_events(
    client: KubeClient, namespace: str, objects: Iterable[tuple[str, str]], limit: int = MAX_ROWS
) -> list[EventRow]:
    """Events about any of ``objects`` ((kind, name) pairs in ``namespace``), oldest first.

    The first :data:`MAX_OBJECTS` objects are asked about concurrently; one that fails (403, a
    timeout) leaves out its Events and raises only when every object failed, so a detail screen
    shows what it can.
    """
    wanted: Sequence[tuple[str, str]] = list(dict.fromkeys(objects))[:MAX_OBJECTS]
    results = await asyncio.gather(
        *(_events_about(client, namespace, kind, name) for kind, name in wanted), return_exceptions=True
    )
    rows: list[EventRow] = []
    errors: list[BaseException] = []
    for result in results:
        if isinstance(result, BaseException):
            if isinstance(result, asyncio.CancelledError):
                raise result
            errors.append(result)
        else:
            rows.extend(result)
    if errors and len(errors) == len(results):
        raise errors[0]
    rows.sort(key=lambda r: (r.last_time or 0.0, r.kind, r.name, r.reason))
    return rows[-limit:]


__all__ = ["EventRow", "clean", "list_job_events"]
