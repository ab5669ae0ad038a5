"""Recording a cluster's raw event stream to a file (``hpctop record``), for replay and bug reports.

Format (version 1): gzip-compressed JSON lines.

- the first line is a header: ``{"hpctop": "recording", "version": 1, "source": ..., "started": T}``
  where ``started`` is the Unix time that ``t`` = 0 stands for (wall clock for a live cluster,
  the simulation's epoch for the demo), plus optional context fields;
- an event: ``{"t": 12.5, "kind": "Pod", "event": {"type": "MODIFIED", "object": {...}}}``, the
  raw watch event as the API server sent it (``t``: seconds since ``started``);
- a list (the reflector's first list and every relist) is recorded as ADDED events marked
  ``"listed": true``, between ``{"t", "kind", "relist": "begin"}`` and ``{"t", "kind",
  "relist": "end", "resourceVersion": RV}``, so a replay can drop what vanished during a relist,
  exactly as the reflector's swap does. A list that fails halfway has a begin and no end; the next
  begin starts over.

Why record below the reflector, at the HTTP client: the file then holds exactly what hpctop read,
including the events a bug in the decoder or the store would mishandle, which is what a bug
report needs. Lines that are not JSON objects are left out (the reflector skips them too).

Why gzip with periodic sync flushes: a day of a busy cluster is large, and JSON lines compress
about tenfold. A sync flush at least every ``flush_every`` seconds ends a deflate block, so a
recording cut by Ctrl-C or a kill is readable up to its last flush; the reader counts a
truncated last line instead of failing.
"""

from __future__ import annotations

import contextlib
import gzip
import threading
import time
import zlib
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from hpctop.sources.kube.connection import Connection
from hpctop.sources.kube.resources import ResourceSpec
from hpctop.sources.kube.transport import OVERSIZED, KubeClient

FORMAT_VERSION = 1
MAGIC = "recording"
FLUSH_EVERY = 1.0


class Recorder:
    """Writes a recording; thread-safe (the reflectors write, the main thread flushes and closes)."""

    def __init__(
        self,
        path: str | Path,
        source: str,
        *,
        started: float | None = None,
        clock: Callable[[], float] | None = None,
        flush_every: float = FLUSH_EVERY,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.path = Path(path)
        self.started = time.time() if started is None else started
        # ``t`` comes from a monotonic clock by default (a wall clock jump must not reorder lines)
        origin = time.monotonic()
        self._clock = clock if clock is not None else (lambda: time.monotonic() - origin)
        self._flush_every = flush_every
        self._lock = threading.Lock()
        self._file = gzip.open(self.path, "wb")  # noqa: SIM115 (open for the recorder's lifetime)
        self._last_flush = time.monotonic()
        self.events = 0
        self.bytes = 0
        self.closed = False
        header = {"hpctop": MAGIC, "version": FORMAT_VERSION, "source": source, "started": self.started}
        header.update(meta or {})
        self._write(orjson.dumps(header))
        self.flush()

    def _write(self, line: bytes) -> None:
        with self._lock:
            if self.closed:
                return
            self._file.write(line + b"\n")
            self.bytes += len(line) + 1
            if time.monotonic() - self._last_flush >= self._flush_every:
                self._flush_locked()

    def _flush_locked(self) -> None:
        self._file.flush(zlib.Z_SYNC_FLUSH)
        self._last_flush = time.monotonic()

    def flush(self) -> None:
        with self._lock:
            if not self.closed:
                self._flush_locked()

    def flush_if_due(self) -> None:
        with self._lock:
            if not self.closed and time.monotonic() - self._last_flush >= self._flush_every:
                self._flush_locked()

    def close(self) -> None:
        with self._lock:
            if not self.closed:
                self.closed = True
                self._file.close()

    def now(self) -> float:
        return round(self._clock(), 6)

    # -- lines ---------------------------------------------------------------------------------

    def event(
        self, kind: str, event: Mapping[str, Any], *, t: float | None = None, listed: bool = False
    ) -> None:
        """One watch event (a dict with ``type`` and ``object``)."""
        line: dict[str, Any] = {"t": self.now() if t is None else t, "kind": kind, "event": event}
        if listed:
            line["listed"] = True
        self._write(orjson.dumps(line))
        self.events += 1

    def raw_event(self, kind: str, raw: bytes, *, t: float | None = None) -> bool:
        """One watch line as received; False (and nothing written) when it is not a JSON object."""
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return False
        if not isinstance(parsed, dict) or "type" not in parsed:
            return False
        if parsed["type"] == "BOOKMARK":  # only moves the resume point; nothing to replay
            return True
        self.event(kind, parsed, t=t)
        return True

    def relist_begin(self, kind: str) -> None:
        self._write(orjson.dumps({"t": self.now(), "kind": kind, "relist": "begin"}))

    def relist_end(self, kind: str, resource_version: str) -> None:
        line = {"t": self.now(), "kind": kind, "relist": "end", "resourceVersion": resource_version}
        self._write(orjson.dumps(line))

    def listed(self, kind: str, objects: Iterable[Mapping[str, Any]], resource_version: str = "") -> None:
        """A whole list (begin, one ADDED per object, end): how a simulation's start is recorded."""
        self.relist_begin(kind)
        for obj in objects:
            self.event(kind, {"type": "ADDED", "object": obj}, listed=True)
        self.relist_end(kind, resource_version)


class RecordingClient(KubeClient):
    """A ``KubeClient`` that tees every list page and watch line of known resources into a recorder."""

    def __init__(
        self,
        connection: Connection,
        recorder: Recorder,
        resources: Iterable[ResourceSpec],
        namespace: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(connection, **options)
        self.recorder = recorder
        self._specs = {spec.path(namespace): spec for spec in resources}

    async def get(self, path: str, params: Mapping[str, str]) -> bytes:
        body = await super().get(path, params)
        spec = self._specs.get(path)
        if spec is None:
            return body
        recorder = self.recorder
        if not params.get("continue"):
            recorder.relist_begin(spec.kind)
        try:
            page = orjson.loads(body)
            items = page.get("items") or []
            metadata = page.get("metadata") or {}
        except (orjson.JSONDecodeError, AttributeError):
            return body  # the reflector reports this page; nothing sensible to record
        for item in items:
            if isinstance(item, dict):
                item.setdefault("kind", spec.kind)  # list items carry none; replay decodes by kind
                item.setdefault("apiVersion", spec.api_version)
                recorder.event(spec.kind, {"type": "ADDED", "object": item}, listed=True)
        if not metadata.get("continue"):
            recorder.relist_end(spec.kind, str(metadata.get("resourceVersion") or ""))
        return body

    @contextlib.asynccontextmanager
    async def stream(self, path: str, params: Mapping[str, str]) -> AsyncIterator[AsyncIterator[bytes]]:
        spec = self._specs.get(path)
        async with super().stream(path, params) as lines:
            if spec is None:
                yield lines
                return
            kind = spec.kind
            recorder = self.recorder

            async def tee() -> AsyncIterator[bytes]:
                async for line in lines:
                    if line is not OVERSIZED:
                        recorder.raw_event(kind, line)
                    yield line

            yield tee()


__all__ = ["FORMAT_VERSION", "Recorder", "RecordingClient"]
