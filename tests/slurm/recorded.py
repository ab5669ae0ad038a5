"""A recorded slurmrestd (v0.0.42, v0.0.44) for the versions Debian's Slurm cannot serve, and a small
OpenAPI validator that holds the recorded responses to SchedMD's schemas.

Why both: the responses are written to exercise the fields hpctop reads, so their *shape* must be
proven upstream's. :func:`validate` walks a response against the schemas recorded from
SlinkyProject/slurm-client's copy of SchedMD's OpenAPI document (``fixtures/openapi-<v>.json``,
source and commit inside): a key the schema does not name, a wrong type or a missing required
field is an error. :class:`RecordedSlurm` serves those responses over HTTP at the paths the
document lists (v0.0.42+ spell collections with a trailing ``/``), ``/openapi/v3`` with those
paths, and refuses a missing or wrong token with 401 as slurmrestd's ``rest_auth/jwt`` does.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"
TOKEN = "recorded-token"


def load(version: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the recorded OpenAPI subset, the recorded responses) of ``v0.0.42`` or ``v0.0.44``."""
    openapi = json.loads((FIXTURES / f"openapi-{version}.json").read_text())
    responses = json.loads((FIXTURES / f"responses-{version}.json").read_text())
    return openapi, responses


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def validate(value: Any, schema: dict[str, Any], schemas: dict[str, Any], where: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema`` (an empty list when it conforms)."""
    if "$ref" in schema:
        return validate(value, schemas[schema["$ref"].rsplit("/", 1)[-1]], schemas, where)
    errors: list[str] = []
    kind = schema.get("type")
    if kind is not None:
        wanted = _TYPES[kind]
        if not isinstance(value, wanted) or (kind in ("integer", "number") and isinstance(value, bool)):
            return [f"{where}: {type(value).__name__} where the schema says {kind}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict) and "properties" in schema:
        props = schema["properties"]
        for key, item in value.items():
            if key not in props:
                errors.append(f"{where}.{key}: not in the schema")
            else:
                errors += validate(item, props[key], schemas, f"{where}.{key}")
        errors += [
            f"{where}.{key}: required and missing" for key in schema.get("required", []) if key not in value
        ]
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            errors += validate(item, schema["items"], schemas, f"{where}[{index}]")
    return errors


class RecordedSlurm:
    """slurmrestd answering from the recorded responses; ``seen`` keeps (method, path) of each request."""

    def __init__(
        self,
        version: str,
        *,
        responses: dict[str, Any] | None = None,
        prefix: str = "",
        bearer: str | None = None,
        openapi: dict[str, Any] | None = None,
    ) -> None:
        self.version = version
        #: served under this path (an API server's service proxy path) and, with ``bearer``, only to
        #: requests that carry ``Authorization: Bearer <bearer>``, as the API server's proxy demands
        self.prefix = prefix
        self.bearer = bearer
        if openapi is None:
            self.openapi, recorded = load(version)
        else:  # a version recorded elsewhere (v0.0.38 from the real 22.05: accounting-v0.0.38.json)
            self.openapi, recorded = openapi, {}
        self.responses = responses if responses is not None else recorded
        self.seen: list[tuple[str, str]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                owner.seen.append((self.command, self.path))
                if owner.bearer is not None and self.headers.get("Authorization") != f"Bearer {owner.bearer}":
                    self._send(401, {"kind": "Status", "code": 401, "reason": "Unauthorized"})
                    return
                if not self.path.startswith(owner.prefix):
                    self._send(404, {"errors": [{"error": f"nothing at {self.path}"}]})
                    return
                if self.headers.get("X-SLURM-USER-TOKEN") != TOKEN:
                    self._send(401, {"errors": [{"error": "Authentication failure"}]})
                    return
                status, body = owner.route(self.command, self.path[len(owner.prefix) :])
                self._send(status, body)

            def _send(self, status: int, body: dict[str, Any]) -> None:
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_DELETE = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def route(self, method: str, path: str) -> tuple[int, dict[str, Any]]:
        paths = self.openapi["paths"]
        if path == "/openapi/v3":
            return 200, {"openapi": "3.0.3", "paths": {p: {key: {} for key in m} for p, m in paths.items()}}
        if method != "GET":
            return 405, {"errors": [{"error": "the recorded server answers reads only"}]}
        prefix = f"/slurm/{self.version}/"
        if path in paths and path.startswith(prefix):
            name = path[len(prefix) :].strip("/")
            if name in self.responses:
                return 200, self.responses[name]
        db = f"/slurmdb/{self.version}/"
        if path in paths and path.startswith(db) and path[len(db) :].strip("/") in self.responses:
            return 200, self.responses[path[len(db) :].strip("/")]  # slurmdbd's (qos, associations)
        match = re.fullmatch(rf"{re.escape(prefix)}job/(\d+)", path)
        if match:
            jobs = [j for j in self.responses["jobs"]["jobs"] if str(j["job_id"]) == match[1]]
            return (200, {**self.responses["jobs"], "jobs": jobs}) if jobs else (500, _invalid_job())
        return 404, {"errors": [{"error": f"no recorded answer for {path}"}]}

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> RecordedSlurm:
        self.thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.server.shutdown()
        self.server.server_close()


def _invalid_job() -> dict[str, Any]:
    return {"errors": [{"error": "Invalid job id specified", "error_number": 2017}]}
