"""FakeApiServer: kmock's KubernetesEmulator taught the parts of an API server the watch contract needs.

Why a subclass and not kmock's emulator as it is: the emulator (kmock 0.8) answers lists with the
literal resourceVersion ``"..."``, ignores ``resourceVersion`` on watches (it replays everything),
never sends a 410, sends no bookmarks and ignores ``timeoutSeconds`` (RELIABILITY.md §5.1). A
reflector tested against that would pass while being wrong about exactly the things that break
in production. So this subclass keeps its own state with a global resourceVersion counter and an
event history, and serves lists and watches from it; everything else of kmock stays usable:
request recording (``fake.requests``), the DSL for scripted answers, which take priority over
these defaults (``fake[kmock.action.WATCH, PODS_RES][0:1] << 429 << {"Retry-After": "3"}``),
and the real HTTP server on 127.0.0.1.

What it does (RELIABILITY.md §5.2, items 1-5 and part of 11):

- a global RV stamped on every write and returned as the list RV; ``limit``/``continue`` pages
  served from a snapshot taken at the first page, as etcd would (a token older than the history
  window gets 410);
- label selectors (``a=b``, ``a!=b``, ``a``, ``!a``) on lists and watches;
- watch from an RV: the events after it, then live ones; an RV older than the history window gets
  410, in-stream by default (as a real server does) or as an HTTP status; an RV of ``""``/``"0"``
  starts with synthetic ADDED events;
- bookmarks every ``bookmark_interval`` seconds of loop time when ``allowWatchBookmarks=true``;
- ``timeoutSeconds``: a clean end after that many seconds of loop time;
- scripted stream faults per watch request (:class:`WatchFault`): drop the connection after N
  events (a truncated chunked body), stall, send garbage lines, send an in-stream ERROR, close at
  once;
- HTTP writes (POST, merge PATCH, DELETE) go through the same RV-stamping path.

Not done (yet): field selectors, ``sendInitialEvents`` (watch-list), preconditions, dryRun, cascade,
binding, SelfSubject reviews, and a selector change turning a MODIFIED into a DELETED for a watcher.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import copy
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

import attrs
import kmock
import orjson
from kmock._internal import enums, rendering
from typing_extensions import override

Obj = dict[str, Any]
Key = tuple[str | None, str]  # (namespace, name)


@dataclass(frozen=True)
class Res:
    kind: str
    group: str
    version: str
    plural: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def kmock(self) -> kmock.resource:
        return kmock.resource(self.group, self.version, self.plural)


PODS = Res("Pod", "", "v1", "pods", True)
NODES = Res("Node", "", "v1", "nodes", False)
JOBS = Res("Job", "batch", "v1", "jobs", True)
DEPLOYMENTS = Res("Deployment", "apps", "v1", "deployments", True)
PRIORITY_CLASSES = Res("PriorityClass", "scheduling.k8s.io", "v1", "priorityclasses", False)
ALL: tuple[Res, ...] = (PODS, NODES, JOBS, DEPLOYMENTS, PRIORITY_CLASSES)


@dataclass
class WatchFault:
    """What one watch request does after ``after`` events: drop, stall, garbage, error or close."""

    action: str  # "drop" | "stall" | "garbage" | "error" | "close"
    after: int = 0
    lines: tuple[bytes, ...] = ()  # for "garbage": raw lines sent (then the stream goes on)
    status: Obj = field(default_factory=dict)  # for "error": the Status object


def status(code: int, reason: str, message: str = "", **details: Any) -> Obj:
    out: Obj = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message or reason,
    }
    if details:
        out["details"] = details
    return out


def parse_selector(text: str) -> list[tuple[str, str, str | None]]:
    """``a=b,c!=d,e,!f`` → [(op, key, value)] with op in =, !=, exists, !exists."""
    out: list[tuple[str, str, str | None]] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "!=" in part:
            k, v = part.split("!=", 1)
            out.append(("!=", k.strip(), v.strip()))
        elif "=" in part:
            k, v = part.replace("==", "=").split("=", 1)
            out.append(("=", k.strip(), v.strip()))
        elif part.startswith("!"):
            out.append(("!exists", part[1:].strip(), None))
        else:
            out.append(("exists", part, None))
    return out


def matches(obj: Obj, selector: list[tuple[str, str, str | None]]) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for op, key, value in selector:
        if op == "=" and labels.get(key) != value:
            return False
        if op == "!=" and labels.get(key) == value:
            return False
        if op == "exists" and key not in labels:
            return False
        if op == "!exists" and key in labels:
            return False
    return True


@attrs.define(kw_only=True)
class FakeApiServer(kmock.KubernetesEmulator):
    """An in-memory API server with resourceVersions, history, bookmarks and fault scripts."""

    window: int = 10_000  # events kept; a watch or a continue token older than this gets 410
    gone_in_stream: bool = True  # 410 as an in-stream ERROR (real servers) or as the HTTP status
    bookmark_interval: float | None = 60.0

    rv: int = attrs.field(default=1, init=False)
    compacted: int = attrs.field(default=0, init=False)  # watches from an RV below this get 410
    state: dict[Res, dict[Key, Obj]] = attrs.field(factory=dict, init=False)
    history: collections.deque[tuple[int, Res, Obj]] = attrs.field(factory=collections.deque, init=False)
    watch_faults: dict[Res, list[WatchFault]] = attrs.field(factory=dict, init=False)
    open_watches: int = attrs.field(default=0, init=False)
    log: list[tuple[float, rendering.Request]] = attrs.field(factory=list, init=False)  # (loop time, req)
    _watchers: set[asyncio.Queue[tuple[int, Res, Obj]]] = attrs.field(factory=set, init=False)
    _streams: dict[int, Any] = attrs.field(factory=dict, init=False)  # raw requests of open watches
    _snapshots: dict[str, tuple[int, list[Obj]]] = attrs.field(factory=dict, init=False)
    _uids: int = attrs.field(default=0, init=False)

    # -- writes (programmatic; HTTP writes come here too) ---------------------------------------

    def _by_plural(self, resource: kmock.resource | None) -> Res | None:
        if resource is None:
            return None
        for res in ALL:
            if (res.group, res.version, res.plural) == (resource.group, resource.version, resource.plural):
                return res
        return None

    def _emit(self, res: Res, etype: str, obj: Obj) -> None:
        event = {"type": etype, "object": copy.deepcopy(obj)}
        self.history.append((self.rv, res, event))
        while len(self.history) > self.window:
            self.compacted = self.history.popleft()[0]
        for queue in list(self._watchers):
            queue.put_nowait((self.rv, res, event))

    def upsert(self, res: Res, obj: Obj) -> Obj:
        """Create or replace an object (ADDED or MODIFIED); returns the stored copy with its RV."""
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        key: Key = (meta.get("namespace") if res.namespaced else None, meta["name"])
        if not res.namespaced:
            meta.pop("namespace", None)
        objects = self.state.setdefault(res, {})
        old = objects.get(key)
        if old is None:
            self._uids += 1
            meta.setdefault("uid", f"uid-{self._uids}")
        else:
            meta["uid"] = old["metadata"].get("uid")
        self.rv += 1
        meta["resourceVersion"] = str(self.rv)
        obj["kind"] = res.kind
        obj["apiVersion"] = res.api_version
        objects[key] = obj
        self._emit(res, "ADDED" if old is None else "MODIFIED", obj)
        return copy.deepcopy(obj)

    def remove(self, res: Res, name: str, namespace: str | None = None) -> Obj | None:
        """Delete an object (DELETED with a new RV); None when it did not exist."""
        key: Key = (namespace if res.namespaced else None, name)
        old = self.state.get(res, {}).pop(key, None)
        if old is None:
            return None
        self.rv += 1
        old["metadata"]["resourceVersion"] = str(self.rv)
        self._emit(res, "DELETED", old)
        return old

    def compact(self) -> None:
        """Forget all history: any watch from an RV before now gets 410 (etcd compaction)."""
        self.history.clear()
        self.compacted = self.rv
        self._snapshots.clear()

    def disconnect(self) -> int:
        """Cut every open watch now (a network blip); returns how many were cut."""
        cut = 0
        for raw in list(self._streams.values()):
            if raw is not None and raw.transport is not None:
                raw.transport.close()
                cut += 1
        return cut

    def items_of(self, res: Res) -> dict[Key, Obj]:
        return dict(self.state.get(res, {}))

    def versions(self, res: Res) -> dict[Key, str]:
        """{(namespace, name): resourceVersion} of what the server holds now."""
        return {k: o["metadata"]["resourceVersion"] for k, o in self.state.get(res, {}).items()}

    def calls(self, res: Res, action: enums.action) -> list[tuple[float, dict[str, str]]]:
        """(loop time, query parameters) of each request of ``action`` on ``res``, in order."""
        return [
            (t, dict(r.params))
            for t, r in self.log
            if r.action == action and self._by_plural(r.resource) == res
        ]

    # -- faults ---------------------------------------------------------------------------------

    def script_watch(self, res: Res, *faults: WatchFault) -> None:
        """The next watch requests of ``res`` misbehave as given, one fault per request, in order."""
        self.watch_faults.setdefault(res, []).extend(faults)

    def fail(
        self,
        res: Res,
        action: enums.action,
        code: int,
        *,
        times: int = 1,
        retry_after: str | None = None,
        reason: str = "",
        details: Obj | None = None,
    ) -> None:
        """The next ``times`` requests of ``action`` on ``res`` get an HTTP ``code`` with a Status."""
        body = status(code, reason or {403: "Forbidden", 429: "TooManyRequests"}.get(code, "Error"))
        if details:
            body["details"] = details
        view = self[action, res.kmock]
        seen = len(list(view))  # kmock slices count every matching request, also earlier ones
        reaction = view[seen : seen + times] << code
        if retry_after is not None:
            reaction = reaction << {"Retry-After": retry_after}
        reaction << orjson.dumps(body)

    # -- the default answers --------------------------------------------------------------------

    @override
    async def _handle(self, request: rendering.Request) -> Any:
        self.log.append((asyncio.get_running_loop().time(), request))
        res = self._by_plural(request.resource)
        if res is not None and request.action in (enums.action.CREATE, enums.action.UPDATE):
            data = request.data if isinstance(request.data, dict) else {}
            if request.action == enums.action.CREATE:
                meta = data.setdefault("metadata", {})
                if request.namespace:
                    meta.setdefault("namespace", request.namespace)
                key = (meta.get("namespace") if res.namespaced else None, meta.get("name", ""))
                if key in self.state.get(res, {}):
                    raise kmock.KubernetesError(status=409, reason="AlreadyExists", message="exists")
                self.upsert(res, data)
            else:
                key = (request.namespace if res.namespaced else None, request.name or "")
                current = self.state.get(res, {}).get(key)
                if current is None:
                    raise kmock.KubernetesObjectNotFoundError()
                self.upsert(res, _merge(copy.deepcopy(current), data))
        elif (
            res is not None
            and request.action == enums.action.DELETE
            and self.remove(res, request.name or "", request.namespace) is None
        ):
            raise kmock.KubernetesObjectNotFoundError()
        # Skip the emulator's own object tracking: this class keeps the state.
        return await kmock.KubernetesScaffold._handle(self, request)

    @override
    async def _serve_fetch(self, request: rendering.Request) -> rendering.Payload:
        res = self._by_plural(request.resource)
        obj = self.state.get(res, {}).get((request.namespace, request.name or "")) if res else None
        if obj is None:
            raise kmock.KubernetesObjectNotFoundError()
        return obj

    @override
    async def _serve_create(self, request: rendering.Request) -> rendering.Payload:
        return await self._serve_fetch_named(request)

    @override
    async def _serve_update(self, request: rendering.Request) -> rendering.Payload:
        return await self._serve_fetch_named(request)

    @override
    async def _serve_delete(self, request: rendering.Request) -> rendering.Payload:
        return status(200, "", "deleted") | {"status": "Success"}

    async def _serve_fetch_named(self, request: rendering.Request) -> rendering.Payload:
        res = self._by_plural(request.resource)
        data = request.data if isinstance(request.data, dict) else {}
        name = request.name or (data.get("metadata") or {}).get("name", "")
        ns = request.namespace or (data.get("metadata") or {}).get("namespace")
        obj = self.state.get(res, {}).get((ns if res and res.namespaced else None, name)) if res else None
        return obj or {}

    def _select(self, res: Res, request: rendering.Request) -> list[Obj]:
        selector = parse_selector(request.params.get("labelSelector", ""))
        ns = request.namespace
        items = [
            o
            for (o_ns, _), o in sorted(
                self.state.get(res, {}).items(), key=lambda kv: (kv[0][0] or "", kv[0][1])
            )
            if (ns is None or o_ns == ns) and matches(o, selector)
        ]
        return [copy.deepcopy(o) for o in items]

    @override
    async def _serve_list(self, request: rendering.Request) -> rendering.Payload:
        res = self._by_plural(request.resource)
        if res is None:
            raise kmock.KubernetesResourceNotFoundError()
        limit = int(request.params.get("limit") or 0)
        token = request.params.get("continue")
        if token:
            snap = self._snapshots.get(token)
            if snap is None or snap[0] < self.compacted:
                raise kmock.KubernetesError(
                    status=410, reason="Expired", message="The provided continue parameter is too old"
                )
            list_rv, items = snap
        else:
            list_rv, items = self.rv, self._select(res, request)
        page, rest = (items[:limit], items[limit:]) if limit else (items, [])
        metadata: Obj = {"resourceVersion": str(list_rv)}
        if rest:
            new_token = base64.urlsafe_b64encode(orjson.dumps([list_rv, len(self._snapshots)])).decode()
            self._snapshots[new_token] = (list_rv, rest)
            metadata["continue"] = new_token
            metadata["remainingItemCount"] = len(rest)
        for item in page:
            item.pop("kind", None)  # list items carry no kind/apiVersion on a real server
            item.pop("apiVersion", None)
        return {"kind": f"{res.kind}List", "apiVersion": res.api_version, "metadata": metadata, "items": page}

    @override
    async def _serve_watch(self, request: rendering.Request) -> Any:  # type: ignore[override]
        res = self._by_plural(request.resource)
        if res is None:
            raise kmock.KubernetesResourceNotFoundError()
        since_text = request.params.get("resourceVersion", "")
        since = int(since_text) if since_text not in ("", "0") else None
        gone = since is not None and since < self.compacted
        if gone and not self.gone_in_stream:
            raise kmock.KubernetesError(
                status=410, reason="Expired", message=f"too old resource version: {since}"
            )
        return self._watch_stream(request, res, since, gone)

    async def _watch_stream(
        self, request: rendering.Request, res: Res, since: int | None, gone: bool
    ) -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        timeout = float(request.params.get("timeoutSeconds") or 0)
        deadline = loop.time() + timeout if timeout else None
        bookmarks = request.params.get("allowWatchBookmarks") == "true" and self.bookmark_interval
        selector = parse_selector(request.params.get("labelSelector", ""))
        ns = request.namespace
        faults = self.watch_faults.get(res) or []
        fault = faults.pop(0) if faults else None
        queue: asyncio.Queue[tuple[int, Res, Obj]] = asyncio.Queue()

        def wanted(r: Res, event: Obj) -> bool:
            meta = event["object"].get("metadata") or {}
            return (
                r == res
                and (ns is None or meta.get("namespace") == ns)
                and matches(event["object"], selector)
            )

        if since is None:
            backlog = [{"type": "ADDED", "object": o} for o in self._select(res, request)]
        else:
            backlog = [e for rv, r, e in self.history if rv > since and wanted(r, e)]
        self._watchers.add(queue)  # no await since the backlog was read: nothing slips between
        self._streams[id(request)] = request._raw_request
        self.open_watches += 1
        try:
            yield b""  # send the headers now
            if gone:
                yield _line(
                    {"type": "ERROR", "object": status(410, "Expired", f"too old resource version: {since}")}
                )
                return
            sent = 0
            next_bookmark = loop.time() + (self.bookmark_interval or 0)

            async def maybe_fault() -> AsyncIterator[bytes]:
                nonlocal fault
                if fault is None or sent < fault.after:
                    return
                f, fault = fault, None
                if f.action == "garbage":
                    for garbage in f.lines:
                        yield garbage
                elif f.action == "error":
                    yield _line({"type": "ERROR", "object": f.status})
                    raise _EndStream
                elif f.action == "close":
                    raise _EndStream
                elif f.action == "drop":
                    raw = request._raw_request
                    assert raw is not None and raw.transport is not None
                    raw.transport.close()  # flushes what was written, then a truncated chunked body
                    raise _EndStream
                elif f.action == "stall":
                    await asyncio.sleep(10**6)

            try:
                async for chunk in maybe_fault():
                    yield chunk
                for event in backlog:
                    yield _line(event)
                    sent += 1
                    async for chunk in maybe_fault():
                        yield chunk
                while True:
                    now = loop.time()
                    waits = [
                        t - now for t in (deadline, next_bookmark if bookmarks else None) if t is not None
                    ]
                    try:
                        _, r, event = await asyncio.wait_for(queue.get(), min(waits) if waits else None)
                    except TimeoutError:
                        # Compare with a margin: a timer may fire a hair early under a
                        # fast-forwarded clock, and a strict check would spin here.
                        if deadline is not None and loop.time() >= deadline - 0.001:
                            return
                        if not bookmarks or loop.time() < next_bookmark - 0.001:
                            continue
                        next_bookmark = loop.time() + (self.bookmark_interval or 0)
                        yield _line(
                            {
                                "type": "BOOKMARK",
                                "object": {
                                    "kind": res.kind,
                                    "apiVersion": res.api_version,
                                    "metadata": {"resourceVersion": str(self.rv)},
                                },
                            }
                        )
                        continue
                    if wanted(r, event):
                        yield _line(event)
                        sent += 1
                        async for chunk in maybe_fault():
                            yield chunk
            except _EndStream:
                return
        finally:
            self._watchers.discard(queue)
            self._streams.pop(id(request), None)
            self.open_watches -= 1


class _EndStream(Exception):
    pass


def _sort_key(item: tuple[Key, Obj]) -> tuple[str, str]:
    return (item[0][0] or "", item[0][1])


def _line(event: Obj) -> bytes:
    return orjson.dumps(event) + b"\n"


def _merge(base: Obj, patch: Obj) -> Obj:
    for key, value in patch.items():
        if value is None:
            base.pop(key, None)
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


def populate(fake: FakeApiServer, res: Res, objs: Iterable[Obj]) -> None:
    for obj in objs:
        fake.upsert(res, obj)
