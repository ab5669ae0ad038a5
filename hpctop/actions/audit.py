"""A local, append-only record of every action hpctop sent to a cluster, and a reader for it.

Why hpctop keeps its own log when the API server has one: the server's audit log is usually out
of the user's reach, it records only what arrived (not what was refused before sending, nor a
request whose answer was lost), and it does not say which console action a request belonged to.
Each mutation gets an *intent* record before anything is sent and an *outcome* record per answer
(RELIABILITY.md §2.3, M11). The outcome carries the server's ``Audit-Id`` response header, so an
administrator can find the same request in the apiserver's audit log.

What is never written: tokens, keys, ``Authorization`` headers, request or response bodies (an
object may hold secrets). Records hold only the fields of :data:`FIELDS`; free text (the server's
message) is capped and scrubbed of anything shaped like a bearer token or a JWT, as a second line
of defence (C4).

The file is created with mode ``0600`` (and put back to ``0600`` if someone widened it), in a
directory created ``0700``; each record is one JSON line written with a single ``write`` on an
``O_APPEND`` descriptor, so records from two hpctop processes never interleave within a line.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

#: The only keys a record may have; anything else handed to :meth:`AuditLog.append` is dropped.
FIELDS = (
    "time",
    "ts",
    "phase",  # intent | outcome | refused
    "context",
    "cluster",
    "user",
    "action",
    "job",  # namespace/Kind/name
    "uid",
    "method",
    "path",
    "dry_run",
    "preconditions",
    "status",
    "audit_id",
    "ok",
    "message",
)
MAX_MESSAGE = 512

_SECRETS = (
    re.compile(r"(?i)\bbearer\s+[\w\-.~+/=]+"),
    re.compile(r"\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*"),  # a JWT (service-account and OIDC tokens)
    re.compile(r"(?i)\b(token|password|secret)=\S+"),
)


def scrub(text: str) -> str:
    """``text`` capped, with control characters and token-shaped substrings replaced."""
    text = "".join(ch if ch.isprintable() else " " for ch in text[: MAX_MESSAGE * 2])
    for pattern in _SECRETS:
        text = pattern.sub("[redacted]", text)
    return text[:MAX_MESSAGE]


def default_path() -> Path:
    """``$XDG_STATE_HOME/hpctop/audit.jsonl`` (``~/.local/state/hpctop/audit.jsonl`` by default)."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "hpctop" / "audit.jsonl"


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One line of the audit log, as the console shows it."""

    time: str
    ts: float
    phase: str
    action: str
    job: str
    ok: bool | None
    status: int | None
    message: str
    context: str = ""
    user: str = ""
    uid: str = ""
    method: str = ""
    path: str = ""
    audit_id: str = ""
    dry_run: bool = False

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> AuditRecord:
        status = raw.get("status")
        ok = raw.get("ok")
        return cls(
            time=str(raw.get("time", "")),
            ts=float(raw.get("ts") or 0.0),
            phase=str(raw.get("phase", "")),
            action=str(raw.get("action", "")),
            job=str(raw.get("job", "")),
            ok=ok if isinstance(ok, bool) else None,
            status=status if isinstance(status, int) and not isinstance(status, bool) else None,
            message=str(raw.get("message", "")),
            context=str(raw.get("context", "")),
            user=str(raw.get("user", "")),
            uid=str(raw.get("uid", "")),
            method=str(raw.get("method", "")),
            path=str(raw.get("path", "")),
            audit_id=str(raw.get("audit_id") or ""),
            dry_run=bool(raw.get("dry_run", False)),
        )


class AuditLog:
    """Appends records to a JSONL file (mode 0600) and reads them back."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, clock: Any = time.time) -> None:
        self.path = Path(path) if path is not None else default_path()
        self._clock = clock

    def append(self, **fields: Any) -> dict[str, Any]:
        """Write one record; returns what was written (unknown keys dropped, text scrubbed)."""
        now = float(self._clock())
        record: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
            "ts": round(now, 3),
        }
        for key in FIELDS:
            if key in fields and key not in record:
                value = fields[key]
                record[key] = scrub(value) if isinstance(value, str) else value
        line = orjson.dumps(record, default=str) + b"\n"
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            if stat.S_IMODE(os.fstat(fd).st_mode) != 0o600:
                os.fchmod(fd, 0o600)
            os.write(fd, line)
        finally:
            os.close(fd)
        return record

    def records(self) -> Iterator[AuditRecord]:
        """Every readable record, oldest first; a malformed line is skipped."""
        with contextlib.suppress(FileNotFoundError), self.path.open("rb") as handle:
            for line in handle:
                try:
                    raw = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(raw, dict):
                    yield AuditRecord.from_dict(raw)

    def read(self, *, limit: int = 200, job: str | None = None) -> list[AuditRecord]:
        """The last ``limit`` records (of one job, ``namespace/Kind/name``, when given), newest last."""
        out = [r for r in self.records() if job is None or r.job == job]
        return out[-limit:] if limit else out


__all__ = ["FIELDS", "AuditLog", "AuditRecord", "default_path", "scrub"]
