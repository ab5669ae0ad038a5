"""A read-only slurmrestd client: version negotiation, JWT auth, and one neutral job model.

Why its own chokepoint: every request goes through ``SlurmRest._get``, which is the only method
that opens a connection and only ever sends ``GET``; a mutating verb cannot leave this module.
Why negotiation: Debian's Slurm 22.05 serves ``/slurm/v0.0.36``-``v0.0.38``, Slinky's
slurmrestd ``v0.0.42`` and newer; the server's OpenAPI document lists the paths it serves, and
the highest known version is used. v0.0.40+ wraps numbers as ``{"set", "infinite", "number"}``
and job states as lists; ``_number``/``_state`` read both shapes into ``SlurmJob``.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hpctop.errors import PlainMessageError

KNOWN_VERSIONS = (
    "v0.0.36",
    "v0.0.37",
    "v0.0.38",
    "v0.0.39",
    "v0.0.40",
    "v0.0.41",
    "v0.0.42",
    "v0.0.43",
    "v0.0.44",
)
_VERSION = re.compile(r"^/slurm/(v\d+\.\d+\.\d+)/jobs/?$")


class SlurmError(PlainMessageError):
    """slurmrestd unreachable, refusing the token, or answering with Slurm's own errors."""


@dataclass(frozen=True, slots=True)
class SlurmJob:
    """One Slurm job as ``squeue`` shows it, whatever the API version."""

    job_id: int
    name: str
    user: str
    account: str
    partition: str
    qos: str
    state: str  # Slurm's own base state: PENDING, RUNNING, ...
    reason: str  # Slurm's state_reason: None, Resources, Priority, JobHeldUser, ...
    priority: int
    nodes: str  # Slurm's hostlist expression ("" while pending)
    node_count: int
    submit_time: int
    start_time: int  # for a pending job: Slurm's own expected start (0 when unknown)
    time_limit_min: int | None
    array_job_id: int | None
    array_task_id: int | None
    het_job_id: int | None
    tres: str


def _number(value: object) -> int | None:
    """An integer as v0.0.38 (plain) or v0.0.40+ (``{"set": .., "infinite": .., "number": ..}``) sends it."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, Mapping):
        if not value.get("set", True) or value.get("infinite", False):
            return None
        number = value.get("number")
        return int(number) if isinstance(number, int) else None
    return None


#: state flags squeue shows instead of the base state (job_state_string's precedence)
_SHOWN_FLAGS = ("COMPLETING", "CONFIGURING", "RESIZING", "REQUEUED", "REQUEUE_HOLD", "STAGE_OUT", "SIGNALING")


def _state(value: object) -> str:
    """v0.0.38 sends squeue's word; v0.0.40+ the base state and its flags (``["RUNNING", "COMPLETING"]``)."""
    if isinstance(value, list):
        words = [str(v) for v in value]
        shown = [flag for flag in _SHOWN_FLAGS if flag in words]
        return shown[0] if shown else (words[0] if words else "")
    return str(value or "")


_RANGE = re.compile(r"^(?P<prefix>[^\[]*)\[(?P<ranges>[^\]]*)\](?P<suffix>.*)$")


def expand_hostlist(expression: str) -> list[str]:
    """Slurm's hostlist expression (``sn[1-2,5],gpu7``) as node names, zero padding kept."""
    names: list[str] = []
    depth = 0
    part = ""
    for char in expression + ",":
        if char == "," and depth == 0:
            if part:
                names.extend(_expand_one(part))
            part = ""
            continue
        depth += {"[": 1, "]": -1}.get(char, 0)
        part += char
    return names


def _expand_one(part: str) -> list[str]:
    match = _RANGE.match(part)
    if match is None:
        return [part]
    out: list[str] = []
    for span in match["ranges"].split(","):
        first, _, last = span.partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            return [part]
        for number in range(int(first), int(last or first) + 1):
            out.extend(
                f"{match['prefix']}{number:0{len(first)}d}{rest}" for rest in _expand_one(match["suffix"])
            )
    return out


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def parse_job(raw: Mapping[str, object]) -> SlurmJob:
    array_task = _number(raw.get("array_task_id"))
    array_job = _number(raw.get("array_job_id"))
    het = _number(raw.get("het_job_id"))
    return SlurmJob(
        job_id=_number(raw.get("job_id")) or 0,
        name=_text(raw.get("name")),
        user=_text(raw.get("user_name")),
        account=_text(raw.get("account")),
        partition=_text(raw.get("partition")),
        qos=_text(raw.get("qos")),
        state=_state(raw.get("job_state")),
        reason=_text(raw.get("state_reason")) or "None",
        priority=_number(raw.get("priority")) or 0,
        nodes=_text(raw.get("nodes")),
        node_count=_number(raw.get("node_count")) or 0,
        submit_time=_number(raw.get("submit_time")) or 0,
        start_time=_number(raw.get("start_time")) or 0,
        time_limit_min=_number(raw.get("time_limit")),
        array_job_id=array_job or None,
        array_task_id=array_task,
        het_job_id=het or None,
        tres=_text(raw.get("tres_req_str")) or _text(raw.get("tres_alloc_str")),
    )


def token_from(*, token_file: str | None = None, env: Mapping[str, str] | None = None) -> str | None:
    """The JWT: a file (kept in memory only) or ``SLURM_JWT`` (what ``scontrol token`` prints)."""
    if token_file:
        return Path(token_file).read_text().strip().removeprefix("SLURM_JWT=")
    source = os.environ if env is None else env
    value = source.get("SLURM_JWT")
    return value.strip() if value else None


class SlurmRest:
    """GET-only slurmrestd client; ``version`` is negotiated on first use."""

    def __init__(self, url: str, *, user: str, token: str | None, timeout: float = 5.0) -> None:
        self.url = url.rstrip("/")
        self.user = user
        self.token = token
        self.timeout = timeout
        self.version: str | None = None

    def _get(self, path: str) -> dict[str, object]:
        headers = {"X-SLURM-USER-NAME": self.user, "Accept": "application/json"}
        if self.token:
            headers["X-SLURM-USER-TOKEN"] = self.token
        request = urllib.request.Request(self.url + path, headers=headers, method="GET")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                body = resp.read()
        except urllib.error.HTTPError as err:
            detail = err.read()[:500].decode(errors="replace")
            raise SlurmError(f"slurmrestd {err.code} on {path}: {detail}") from err
        except OSError as err:
            raise SlurmError(f"slurmrestd unreachable at {self.url}: {err}") from err
        try:
            data = json.loads(body)
        except ValueError as err:
            raise SlurmError(f"slurmrestd sent no JSON on {path}: {err}") from err
        if not isinstance(data, dict):
            raise SlurmError(f"slurmrestd sent a non-object on {path}")
        errors = data.get("errors")
        if isinstance(errors, list) and errors:
            raise SlurmError(f"slurm: {errors}")
        return data

    def negotiate(self) -> str:
        """The highest API version both the server's OpenAPI document and this client know."""
        doc = self._get("/openapi/v3")
        paths = doc.get("paths")
        served = {m.group(1) for p in (paths if isinstance(paths, dict) else {}) if (m := _VERSION.match(p))}
        usable = [v for v in KNOWN_VERSIONS if v in served]
        if not usable:
            raise SlurmError(f"slurmrestd serves no known job API (served: {sorted(served)})")
        self.version = usable[-1]
        return self.version

    def jobs(self) -> list[SlurmJob]:
        version = self.version or self.negotiate()
        data = self._get(f"/slurm/{version}/jobs")
        raw = data.get("jobs")
        jobs = [parse_job(j) for j in (raw if isinstance(raw, list) else []) if isinstance(j, dict)]
        return sorted(jobs, key=lambda j: j.job_id)
