"""Playing a recording (``hpctop record``) back into a store, at any pace.

The third source of ARCHITECTURE.md's data flow: like the simulator and the live cluster it
produces raw watch events, which go through the same decoder and store, so a recording of a bug
reproduces the bug. A :class:`Replayer` reads the file lazily (recordings of big clusters are
large) and applies everything up to a time ``t`` when asked; ``t`` only moves forward.

Robust to what interrupted recordings look like: a gzip stream without its trailer (read up to
the last flush), a last line cut in half, a line that is not JSON. Each such line is skipped and
counted in :attr:`Replayer.skipped_lines` rather than failing the replay: a partial recording is
still evidence. A file that is not a recording at all (wrong header, newer format) is an error.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from hpctop.errors import UsageError
from hpctop.model.decode import DecodeError, decode_event
from hpctop.model.events import EventType
from hpctop.model.store import Store
from hpctop.sources.record import FORMAT_VERSION, MAGIC


class RecordingError(UsageError):
    """The file is not an hpctop recording this version can read."""

    title = "bad recording"


@dataclass(frozen=True, slots=True)
class Line:
    """One recorded line after the header."""

    t: float
    kind: str
    event: bytes = b""  # the raw watch event (empty for relist markers)
    listed: bool = False  # an item of a list (between relist markers)
    relist: str = ""  # "begin" | "end" | ""
    resource_version: str = ""


def _open(path: Path) -> io.BufferedIOBase:
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise RecordingError(f"cannot read recording {path}: {exc.strerror or exc}") from None
    magic = raw.read(2)
    raw.seek(0)
    if magic == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    return raw  # plain JSON lines are accepted too (hand-made test inputs, ``zcat`` output)


def _lines(stream: io.BufferedIOBase) -> Iterator[bytes | None]:
    """The file's lines; a None at the end when the stream was cut (no gzip trailer, bad block).

    Read in chunks with ``read1`` and split here, not with ``readline``: when a gzip stream ends
    early, ``readline`` drops the partial line it was assembling, and that half line must reach
    the caller to be counted as skipped.
    """
    rest = b""
    try:
        while chunk := stream.read1(1 << 16):
            *lines, rest = (rest + chunk).split(b"\n")
            yield from lines
    except (EOFError, zlib.error, gzip.BadGzipFile, OSError):
        if rest:
            yield rest
        yield None
        return
    if rest:
        yield rest


class Recording:
    """A recording opened for reading: the header now, the lines lazily, once."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._stream = _open(self.path)
        self._iter = _lines(self._stream)
        self.skipped_lines = 0
        self.truncated = False
        first = next(self._iter, None)
        try:
            header = orjson.loads(first) if first else None
        except orjson.JSONDecodeError:
            header = None
        if not isinstance(header, dict) or header.get("hpctop") != MAGIC:
            self.close()
            raise RecordingError(f"{self.path} is not an hpctop recording (no header line)")
        version = header.get("version")
        if not isinstance(version, int) or version > FORMAT_VERSION:
            self.close()
            raise RecordingError(
                f"{self.path} is a version {version} recording; this hpctop reads up to {FORMAT_VERSION}"
            )
        self.header: dict[str, Any] = header
        started = header.get("started")
        self.started = float(started) if isinstance(started, int | float) else 0.0
        self.source = str(header.get("source") or "")

    def lines(self) -> Iterator[Line]:
        for raw in self._iter:
            if raw is None:  # no gzip trailer: the recorder was killed; all flushed lines were read
                self.truncated = True
                return
            if not raw.strip():
                continue
            line = _parse(raw)
            if line is None:
                self.skipped_lines += 1
                continue
            yield line

    def close(self) -> None:
        self._stream.close()


def _parse(raw: bytes) -> Line | None:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    t, kind = data.get("t"), data.get("kind")
    if not isinstance(t, int | float) or not isinstance(kind, str):
        return None
    relist = data.get("relist")
    if relist in ("begin", "end"):
        return Line(float(t), kind, relist=relist, resource_version=str(data.get("resourceVersion") or ""))
    event = data.get("event")
    if not isinstance(event, dict):
        return None
    return Line(float(t), kind, orjson.dumps(event), listed=bool(data.get("listed")))


class Replayer:
    """Applies a recording to a store up to a moving time ``t`` (seconds since the recording began)."""

    def __init__(self, recording: Recording, store: Store) -> None:
        self.recording = recording
        self.store = store
        self.t = 0.0
        self.applied = 0
        self.finished = False
        self._lines = recording.lines()
        self._next: Line | None = None
        # kind → (raw event, decoded object) of each item of a list in progress
        self._lists: dict[str, list[tuple[bytes, object]]] = {}

    @property
    def skipped_lines(self) -> int:
        return self.recording.skipped_lines

    def next_time(self) -> float | None:
        """When the next recorded line happens (None at the end)."""
        if self._next is None and not self.finished:
            self._next = next(self._lines, None)
            if self._next is None:
                self._finish()
        return None if self._next is None else self._next.t

    def advance(self, until: float) -> int:
        """Apply every line with ``t <= until``; returns how many events were applied."""
        applied = 0
        while True:
            when = self.next_time()
            if when is None or when > until:
                break
            line, self._next = self._next, None
            assert line is not None
            applied += self._apply(line)
        self.t = max(self.t, until)
        self.applied += applied
        return applied

    def run_to_end(self) -> int:
        return self.advance(float("inf"))

    def _apply(self, line: Line) -> int:
        if line.relist == "begin":
            self._lists[line.kind] = []
            return 0
        if line.relist == "end":
            items = self._lists.pop(line.kind, [])
            self.store.replace(line.kind, [obj for _, obj in items], line.resource_version)
            return len(items)
        if line.listed and line.kind in self._lists:
            try:
                event = decode_event(line.kind, line.event)
            except DecodeError as exc:
                self.store.skip(exc, line.kind)
                return 0
            if event.type is not EventType.BOOKMARK:
                self._lists[line.kind].append((line.event, event.obj))
            return 0
        return 1 if self.store.apply_raw(line.kind, line.event) else 0

    def _finish(self) -> None:
        """At the end: a list cut off by the end of the file is applied as upserts (the best known)."""
        self.finished = True
        for kind, items in self._lists.items():
            for raw, _ in items:
                self.store.apply_raw(kind, raw)
        self._lists.clear()
        self.recording.close()


__all__ = ["Line", "Recording", "RecordingError", "Replayer"]
