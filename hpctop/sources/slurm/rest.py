"""The slurmrestd client: version negotiation, JWT auth, one chokepoint, and the neutral job model.

Why one chokepoint: every request goes through ``SlurmRest._send``, the only method that opens a
connection. A read-only client (the default) runs each request through the Kubernetes transport's
own :func:`~hpctop.sources.kube.transport.check_read_only` there, before the token is attached or
a socket opened, so a mutating verb cannot leave a read-only client whoever calls it.
Why negotiation: Debian's Slurm 22.05 serves ``/slurm/v0.0.36``-``v0.0.38``, Slinky's
slurmrestd ``v0.0.42`` and newer; the server's OpenAPI document lists the paths it serves (v0.0.42+
spells collections with a trailing ``/``), and the highest known version is used. v0.0.40+ wraps
numbers as ``{"set", "infinite", "number"}`` and states as lists; :mod:`hpctop.backends.slurm.wire`
reads both shapes. A malformed entry is skipped and counted in ``SlurmRest.skipped``.
Accounting (QOS, associations) is slurmdbd's, served under ``/slurmdb/<version>/`` only when
slurmrestd runs its ``openapi/dbv0.0.x`` plugin beside a slurmdbd: :meth:`SlurmRest.db_path`
finds it, and its absence or a slurmdbd that is down is one :class:`SlurmError`, never a crash.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from hpctop.backends.slurm.wire import (
    MalformedObject,
    SlurmAssociation,
    SlurmJob,
    SlurmNode,
    SlurmPartition,
    SlurmQos,
    SlurmReservation,
    SlurmShare,
    parse_association,
    parse_job,
    parse_node,
    parse_partition,
    parse_qos,
    parse_reservation,
    parse_share,
    shares_from_associations,
    text,
)
from hpctop.errors import PlainMessageError
from hpctop.sources.kube.transport import ReadOnlyViolation, check_read_only

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
#: slurmrestd's GETs that act: v0.0.45 (Slurm 26.05) serves ``GET /slurm/v0.0.45/job/{id}/requeue``
_ACTING_GET = re.compile(r"^/slurm/v[\d.]+/job/[^/?]+/requeue/?(\?.*)?$")
#: the requeue path as the OpenAPI document lists it (SchedMD/slurm 0f73a8143e, Slurm 26.05)
_REQUEUE = re.compile(r"^/slurm/(v\d+\.\d+\.\d+)/job/\{job_id\}/requeue/?$")


class SlurmError(PlainMessageError):
    """slurmrestd unreachable, refusing the token, or answering with Slurm's own errors.

    ``status`` is the HTTP status (None when no answer came); ``slurm`` says the text is Slurm's
    own (its ``errors`` list: ``Access/permission denied``, ``Invalid job id specified``).
    """

    def __init__(
        self, message: str, *, status: int | None = None, slurm: bool = False, token: str = ""
    ) -> None:
        super().__init__(message)
        self.status = status
        self.slurm = slurm
        #: what the answer says of the token: "refused" (401/403, Slurm's auth errors, or a token
        #: that has expired or names another user), "maybe" (22.05's bare "Unspecified error"), ""
        self.token = token


def token_from(*, token_file: str | None = None, env: Mapping[str, str] | None = None) -> str | None:
    """The JWT: a file (kept in memory only) or ``SLURM_JWT`` (what ``scontrol token`` prints)."""
    if token_file:
        return Path(token_file).read_text().strip().removeprefix("SLURM_JWT=")
    source = os.environ if env is None else env
    value = source.get("SLURM_JWT")
    return value.strip() if value else None


#: what a job update sends, per API version family (v0.0.38 takes strings, v0.0.40+ wrapped numbers)
UpdateFields = Mapping[str, object]


class SlurmRest:
    """The slurmrestd client; ``version`` is negotiated on first use.

    Every request goes through :meth:`_send`, the one method that opens a connection. A client
    made with ``read_only=True`` (the default) passes every request through
    :func:`hpctop.sources.kube.transport.check_read_only`, the check the Kubernetes transport
    makes, before any socket is opened: a mutating verb raises and nothing is sent.
    """

    def __init__(
        self,
        url: str,
        *,
        user: str,
        token: str | None,
        timeout: float = 5.0,
        read_only: bool = True,
        opener: Callable[..., Any] | None = None,
        base_path: str = "",
    ) -> None:
        self.url = url.rstrip("/") + base_path.rstrip("/")
        self.user = user
        self.token = token
        self.timeout = timeout
        self.read_only = read_only
        self.version: str | None = None
        self.served: frozenset[str] = frozenset()
        #: objects skipped as malformed, per kind (``nodes``, ``jobs``...), since this client was made
        self.skipped: dict[str, int] = {}
        self._open = opener or urllib.request.urlopen

    # -- the chokepoint ------------------------------------------------------------------------

    def gate(self, method: str, target: str) -> None:
        """The read-only check of everything that leaves this client: an HTTP request from
        :meth:`_send`, a ``scontrol`` command from :class:`hpctop.sources.slurm.command.SlurmCommand`.

        A read-only client lets reads through and raises
        :class:`~hpctop.sources.kube.transport.ReadOnlyViolation` for the rest, before the token
        is read, a socket opened or a process started. slurmrestd v0.0.45 serves a requeue as a
        ``GET`` (``/slurm/v0.0.45/job/{id}/requeue``), so a GET of a requeue path is refused too.
        """
        if not self.read_only:
            return
        if method.upper() == "GET" and _ACTING_GET.match(target):
            raise ReadOnlyViolation(f"read-only mode: GET {target} requeues a job and was not sent to Slurm")
        check_read_only(method, target)

    def _send(self, method: str, path: str, body: Mapping[str, object] | None = None) -> dict[str, object]:
        self.gate(method, path)  # raises before the token is read or a socket opened
        headers = {"X-SLURM-USER-NAME": self.user, "Accept": "application/json"}
        if self.token:
            headers["X-SLURM-USER-TOKEN"] = self.token
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        try:
            with self._open(request, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as err:
            raise _http_error(err, method, path, token=self.token, user=self.user) from err
        except OSError as err:
            raise SlurmError(f"slurmrestd unreachable at {self.url}: {err}") from err
        try:
            answer = json.loads(raw)
        except ValueError as err:
            raise SlurmError(f"slurmrestd sent no JSON on {path}: {err}") from err
        if not isinstance(answer, dict):
            raise SlurmError(f"slurmrestd sent a non-object on {path}")
        errors = slurm_errors(answer)
        if errors:
            raise SlurmError(f"Slurm: {errors}")
        return answer

    def _get(self, path: str) -> dict[str, object]:
        return self._send("GET", path)

    # -- negotiation ---------------------------------------------------------------------------

    def negotiate(self) -> str:
        """The highest API version both the server's OpenAPI document and this client know."""
        doc = self._get("/openapi/v3")
        paths = doc.get("paths")
        self.served = frozenset(paths if isinstance(paths, dict) else ())
        served = {m.group(1) for p in self.served if (m := _VERSION.match(p))}
        usable = [v for v in KNOWN_VERSIONS if v in served]
        if not usable:
            raise SlurmError(f"slurmrestd serves no known job API (served: {sorted(served)})")
        self.version = usable[-1]
        return self.version

    def path(self, name: str) -> str:
        """``/slurm/<version>/<name>`` as the server spells it (v0.0.42+ adds a trailing ``/``)."""
        version = self.version or self.negotiate()
        bare = f"/slurm/{version}/{name}"
        if bare in self.served or f"{bare}/" not in self.served:
            return bare
        return f"{bare}/"

    def serves(self, name: str) -> bool:
        bare = self.path(name).rstrip("/")
        return bare in self.served or f"{bare}/" in self.served

    def db_path(self, name: str) -> str | None:
        """``/slurmdb/<version>/<name>`` as the server spells it, at the highest version it serves for
        ``name`` up to the negotiated one; None when it serves none (slurmrestd runs without the
        ``openapi/dbv0.0.x`` plugin, which it loads only beside slurmdbd)."""
        version = self.version or self.negotiate()
        for known in reversed(KNOWN_VERSIONS[: KNOWN_VERSIONS.index(version) + 1]):
            bare = f"/slurmdb/{known}/{name}"
            if bare in self.served:
                return bare
            if f"{bare}/" in self.served:
                return f"{bare}/"
        return None

    def _list(
        self,
        name: str,
        key: str,
        parse: Callable[[Mapping[str, object]], T],
        *,
        path: str | None = None,
        keys: tuple[str, ...] = (),
    ) -> list[T]:
        data = self._get(path or self.path(name))
        raw = data.get(key)
        for other in keys:  # the same list under another spelling (v0.0.38's "QOS", v0.0.40+'s "qos")
            raw = data.get(other) if raw is None else raw
        if isinstance(raw, Mapping) and key == "shares":  # v0.0.40+: {"shares": {"shares": [...]}}
            raw = raw.get("shares")
        items: list[T] = []
        bad = 0
        for item in raw if isinstance(raw, list) else []:
            try:
                if not isinstance(item, Mapping):
                    raise MalformedObject(f"a {name} entry that is not an object")
                items.append(parse(item))
            except (MalformedObject, TypeError, ValueError):
                bad += 1
        if bad:
            self.skipped[name] = self.skipped.get(name, 0) + bad
        return items

    # -- reads ---------------------------------------------------------------------------------

    def jobs(self) -> list[SlurmJob]:
        return sorted(self._list("jobs", "jobs", parse_job), key=lambda j: j.job_id)

    def job(self, job_id: str) -> SlurmJob | None:
        """One job by squeue's id (``123`` or an array task ``123_4``); None when Slurm no longer has it."""
        try:
            found = self._list(f"job/{job_id}", "jobs", parse_job)
        except SlurmError as exc:
            if exc.slurm and "Invalid job id" in str(exc):
                return None
            raise
        return found[0] if found else None

    def nodes(self) -> list[SlurmNode]:
        return sorted(self._list("nodes", "nodes", parse_node), key=lambda n: n.name)

    def partitions(self) -> list[SlurmPartition]:
        return self._list("partitions", "partitions", parse_partition)

    def reservations(self) -> list[SlurmReservation]:
        return sorted(self._list("reservations", "reservations", parse_reservation), key=lambda r: r.name)

    def shares(self) -> list[SlurmShare]:
        """sshare's data: ``/shares`` from v0.0.40 (Slurm 23.11) on; before it, what slurmdbd's
        associations hold (the tree and raw shares, no usage: see
        :func:`~hpctop.backends.slurm.wire.shares_from_associations`)."""
        version = self.version or self.negotiate()
        if self.serves("shares"):
            return self._list("shares", "shares", parse_share)
        if version < "v0.0.40" and self.db_path("associations") is not None:
            return shares_from_associations(self.associations())
        raise SlurmError(
            f"slurmrestd {version} serves no shares (sshare's data): /shares came with v0.0.40 "
            "(Slurm 23.11), and it serves no /slurmdb associations either (slurmrestd without "
            "slurmdbd and its openapi/dbv0.0.x plugin)"
        )

    def associations(self) -> list[SlurmAssociation]:
        """slurmdbd's associations (``sacctmgr show assoc``); needs slurmdbd."""
        return self._list("associations", "associations", parse_association, path=self._db("associations"))

    def qos(self) -> list[SlurmQos]:
        """slurmdbd's QOS (``sacctmgr show qos``), in id order as sacctmgr lists them; needs slurmdbd."""
        return self._list("qos", "qos", parse_qos, path=self._db("qos"), keys=("QOS",))

    def _db(self, name: str) -> str:
        path = self.db_path(name)
        if path is None:
            raise SlurmError(
                f"slurmrestd {self.version} serves no /slurmdb/.../{name}: it runs without slurmdbd "
                "(its openapi/dbv0.0.x plugin is not loaded)"
            )
        return path

    # -- job changes (never sent by a read-only client) ------------------------------------------

    def cancel(self, job_id: str) -> dict[str, object]:
        """``scancel``: DELETE /job/{id} (SIGKILL, as scancel without --signal)."""
        return self._send("DELETE", self.path(f"job/{job_id}"))

    def update(self, job_id: str, fields: UpdateFields) -> dict[str, object]:
        """``scontrol update job``: POST /job/{id} with the fields to change."""
        return self._send("POST", self.path(f"job/{job_id}"), fields)

    def requeue_path(self, job_id: str) -> str | None:
        """``/slurm/<v>/job/<id>/requeue`` where the server serves one (v0.0.45+), else None.

        Any served version's path will do, whichever version the reads negotiated: the answer is
        only Slurm's status and errors, which :func:`slurm_errors` reads in every version.
        """
        self.version or self.negotiate()
        found = sorted((m.group(1), p) for p in self.served if (m := _REQUEUE.match(p)))
        return found[-1][1].replace("{job_id}", job_id) if found else None

    def requeue(self, job_id: str, *, hold: bool = False) -> dict[str, object]:
        """``scontrol requeue`` (``requeuehold`` with ``hold``) through slurmrestd v0.0.45+: a GET."""
        path = self.requeue_path(job_id)
        if path is None:
            raise SlurmError(f"slurmrestd {self.version} serves no requeue (v0.0.45, Slurm 26.05, has one)")
        return self._send("GET", f"{path}?Hold=true" if hold else path)

    def cluster(self, job_id: str) -> str | None:
        """The cluster slurmrestd serves: ``meta.slurm.cluster`` (v0.0.40+) or the job's ``cluster``."""
        answer = self._get(self.path(f"job/{job_id}"))
        meta = answer.get("meta")
        slurm = meta.get("slurm") if isinstance(meta, Mapping) else None
        name = text(slurm.get("cluster")) if isinstance(slurm, Mapping) else ""
        jobs = answer.get("jobs")
        if not name and isinstance(jobs, list) and jobs and isinstance(jobs[0], Mapping):
            name = text(jobs[0].get("cluster"))
        return name or None

    def update_fields(
        self, *, hold: bool | None = None, priority: int | None = None, partition: str | None = None
    ) -> dict[str, object]:
        """The body of a job update in this server's version's shape."""
        version = self.version or self.negotiate()
        wrapped = version >= "v0.0.40"
        body: dict[str, object] = {}
        if hold is not None:
            body["hold"] = hold
        if priority is not None:
            body["priority"] = {"set": True, "number": priority} if wrapped else str(priority)
        if partition is not None:
            body["partition"] = partition
        return body


T = TypeVar("T")


def slurm_errors(answer: Mapping[str, object]) -> str:
    """Slurm's own error text from a response's ``errors`` (``Access/permission denied``), or ""."""
    errors = answer.get("errors")
    if not isinstance(errors, list):
        return ""
    texts = []
    for err in errors:
        if isinstance(err, Mapping):
            said = text(err.get("error")) or text(err.get("description"))
            detail = text(err.get("description"))
            texts.append(f"{said} ({detail})" if detail and detail != said else said)
        elif isinstance(err, str):
            texts.append(err)
    return "; ".join(t for t in texts if t)


def _http_error(
    err: urllib.error.HTTPError, method: str, path: str, *, token: str | None = None, user: str = ""
) -> SlurmError:
    """An HTTP error with Slurm's own words when the body carries them (a 500 with ``errors``),
    and what it says of the token (:func:`token_verdict`)."""
    body = err.read()[:4000]
    detail = body[:500].decode(errors="replace")
    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    said = slurm_errors(answer) if isinstance(answer, dict) else ""
    if said:
        detail = said
    verdict, why = token_verdict(err.code, answer, token=token, user=user)
    return SlurmError(
        f"slurmrestd {err.code} on {method} {path}: {detail}" + (f"; {why}" if why else ""),
        status=err.code,
        slurm=bool(said),
        token=verdict,
    )


#: Slurm's words for a credential it will not take (slurm_errno.c: SLURM_PROTOCOL_AUTHENTICATION_ERROR,
#: ESLURM_AUTH_CRED_INVALID, ESLURM_AUTH_EXPIRED, ESLURM_AUTH_NOBODY, ESLURM_REST_AUTH_FAIL)
_AUTH_TEXTS = (
    "Protocol authentication error",
    "Invalid authentication credential",
    "Authentication credential expired",
    "Rejecting authentication of user nobody",
    "Authentication failure",
)


def token_verdict(
    status: int, answer: object, *, token: str | None, user: str, now: float | None = None
) -> tuple[str, str]:
    """("refused" | "maybe" | "", why) for an error answer, checked on the real Slurm 22.05.

    Slurm 22.05's slurmrestd (``rest_auth/jwt``) passes the token on to slurmctld, which refuses
    a bad one ("auth_g_verify: ... has authentication error" in its log); slurmrestd then answers
    HTTP 500 with nothing but ``"Unspecified error"`` (error number -1), the very answer it gives
    when slurmctld cannot be reached at all. So such an answer is "maybe", and the token's own
    claims, read here without its key, say what they can: one that has expired, or that names
    another user than ``X-SLURM-USER-NAME``, is "refused".
    """
    errors = answer.get("errors") if isinstance(answer, Mapping) else None
    texts = [
        text(e.get("error")) + " " + text(e.get("description"))
        for e in errors or ()
        if isinstance(e, Mapping)
    ]
    if status in (401, 403) or any(t in line for line in texts for t in _AUTH_TEXTS):
        return "refused", ""
    numbers = [e.get("error_number", e.get("errno")) for e in errors or () if isinstance(e, Mapping)]
    bare = status == 500 and bool(texts) and all(n == -1 for n in numbers)
    bare = bare and all(line.startswith("Unspecified error") for line in texts)
    if not bare:
        return "", ""
    claims = _claims(token or "")
    moment = time.time() if now is None else now
    expiry = claims.get("exp")
    if isinstance(expiry, int | float) and expiry <= moment:
        when = time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(expiry))
        return "refused", f"the token expired at {when}"
    named = claims.get("sun")
    if isinstance(named, str) and user and named != user:
        return "refused", f"the token is for user {named!r}, not {user!r}"
    return "maybe", (
        "Slurm 22.05's slurmrestd answers so when slurmctld refuses the token (another key, "
        "expired, another user's) or cannot be reached"
    )


def _claims(token: str) -> dict[str, object]:
    """A JWT's claims, unverified (only to explain a refusal; the key is slurmctld's)."""
    parts = token.split(".")
    if len(parts) != 3:
        return {}
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, binascii.Error):
        return {}
    return claims if isinstance(claims, dict) else {}
