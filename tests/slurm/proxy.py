"""A recording HTTP proxy in front of slurmrestd: what reached the server, method and path.

Why: "read-only sends nothing" is a claim about the wire, so the test reads the wire. Every
request is forwarded unchanged (headers, body) and its method and path are kept in ``seen``.
"""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

_HOP = {"host", "connection", "content-length", "transfer-encoding", "accept-encoding"}


class RecordingProxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.seen: list[tuple[str, str]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _forward(self) -> None:
                proxy.seen.append((self.command, self.path))
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                request = urllib.request.Request(
                    proxy.upstream + self.path, data=body, headers=headers, method=self.command
                )
                try:
                    with urllib.request.urlopen(request, timeout=10) as resp:
                        status, payload, ctype = resp.status, resp.read(), resp.headers.get("Content-Type")
                except urllib.error.HTTPError as err:
                    status, payload, ctype = err.code, err.read(), err.headers.get("Content-Type")
                self.send_response(status)
                self.send_header("Content-Type", ctype or "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = _forward

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def mutating(self) -> list[tuple[str, str]]:
        return [(m, p) for m, p in self.seen if m not in ("GET", "HEAD")]

    def __enter__(self) -> RecordingProxy:
        self.thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.server.shutdown()
        self.server.server_close()
