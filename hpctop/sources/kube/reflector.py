"""The reflector: one resource's list → synced → watch loop, kept converging on the server's state.

Why hpctop owns this loop instead of using a library's watch: every library surveyed in
RELIABILITY.md §1.1 misses at least one of relisting after a 410, backing off, honouring
``Retry-After``, or noticing a stalled connection, and each of those leaves either a model that
silently differs from the cluster or a client that hammers a sick API server. The shape follows
kopf's watching module (list, mark listed, watch from the list's resourceVersion, relist on 410,
per-line inactivity watchdog) with client-go's reflector rules for what each failure means.

The loop, per resource (RELIABILITY.md §1.2):

1. **List** page by page (``limit``/``continue``), always a consistent read (no
   ``resourceVersion``), so a relist can never move the model back in time. A 410 on a
   ``continue`` page starts over from the first page (W4).
2. **Swap**: the decoded items replace the resource in the store in one call
   (:meth:`Store.replace`), which drops what vanished while the watch was away (W2).
3. **Synced**: the status says so only now.
4. **Watch** from the list's resourceVersion with ``allowWatchBookmarks`` and a random
   ``timeoutSeconds``; every line resets an inactivity deadline (W10). Each line is decoded once
   and applied; its resourceVersion (bookmarks included, W13) is where the next watch resumes.

Failures and what they cost: a 410 (HTTP or in-stream), or a too-large RV, relists; connection
errors, resets, stalls and 429 re-watch from the same RV after a backoff (429: at least
``Retry-After``, W7); 5xx back off and, after ``max_failures`` in a row, relist (W8); a watch that
ends within a second with no events counts as a failure, not a normal end (the Events bug, W5);
garbage lines are skipped and counted (W12), and too many in one stream reopen it. A 403 marks
the resource forbidden and retries rarely, without touching the others; a 401 re-runs the
credential source up to three times, then stops this resource with "re-authentication required".

Three refinements of that loop (RELIABILITY.md §1.3-1.4, §4):

- **Reconnecting is visible** (W6): while the server cannot be reached the status says
  ``reconnecting since HH:MM:SS`` and the resource is stale; the watch resumes from the same RV,
  so nothing that happened during the outage is lost and nothing is relisted.
- **Streaming list** (W17, KEP-3157, ``ReflectorSettings.watch_list``): the first read is a watch
  with ``sendInitialEvents=true``; its ADDED events are gathered on the side and replace the
  resource in one step at the ``k8s.io/initial-events-end`` bookmark, exactly like a relist, and
  the same stream then goes on as the watch. A server that rejects it (400/403/422), ends it
  before the bookmark, or does not send the bookmark within the inactivity deadline gets plain
  list+watch for the rest of the session: list+watch is always correct, watch-list only cheaper.
- **Credentials with an expiry** (C2): a watch is authenticated when it opens, so a stream that
  outlives its token only fails at the next reconnect, and an auth proxy may cut it at the expiry.
  The watch therefore ends itself shortly before the credential is due for refresh
  (:meth:`Connection.refresh_in`) and reopens from the same RV with the new token; that end is
  neither a failure nor a relist.

Nothing here blocks the event loop for long: list pages of every kind are decoded in one pass
per page (a page of 5,000 pods is a few hundred milliseconds; the loop gets a turn between
pages), and cancellation
(quitting) closes the open stream at once (W18).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

import orjson

from hpctop.model.decode import DecodeError, decode_event, decode_list
from hpctop.model.events import EventType
from hpctop.model.store import Store
from hpctop.sources.kube.backoff import Backoff
from hpctop.sources.kube.errors import (
    ApiError,
    Forbidden,
    Gone,
    KubeError,
    NotFound,
    ServerError,
    ServerUnreachable,
    StreamBroken,
    TooManyRequests,
    Unauthorized,
    error_for_status,
)
from hpctop.sources.kube.resources import ResourceSpec
from hpctop.sources.kube.transport import OVERSIZED, KubeClient


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while a list is read, decoded and swapped into the store.

    Decoding builds many small acyclic objects, and ``Store.replace`` indexes them (sets, dicts);
    on a large heap each full collection they trigger re-traverses everything listed so far, so
    the cyclic collector more than doubles that cost (bench/README.md, P1, P4), and reference
    counting frees everything anyway. The pause spans the whole list, pages and swap (issue 16:
    it used to cover each page's decode only, and the swap of 200k pods ran with the GC on).
    Cyclic garbage made meanwhile elsewhere in the process waits for the next collection.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


log = logging.getLogger(__name__)


class ReflectorState(StrEnum):
    SYNCING = "syncing"  # listing, nothing shown yet for this resource
    SYNCED = "synced"  # listed and watching
    RETRYING = "retrying"  # a failure; waiting for the next attempt (rows may be stale)
    FORBIDDEN = "forbidden"  # RBAC says no; the feature that needs it is degraded
    UNAVAILABLE = "unavailable"  # the server does not serve this resource (404)
    UNAUTHORIZED = "unauthorized"  # credentials rejected even after refreshing them
    STOPPED = "stopped"


#: seconds between two status reports of a busy watch (see Reflector._report_events)
STATUS_EVERY = 0.05

#: how much later than its deadline (no data for ``inactivity``) a watch's watchdog may fire, at
#: most (and at most a tenth of ``inactivity``). Why (issue 16, K1): one ``asyncio.timeout`` per
#: watch line (a timer pushed on the loop's heap and cancelled) was 5-9 us of the reflector's
#: ~30-40 us per event at 5,000 events/s; one watchdog per stream, moved on only once it would
#: fire before the deadline, is moved once per ``slack`` of a busy stream. It never fires early:
#: a stall is reported between ``inactivity`` and ``inactivity + slack`` after the last line
#: (exactly ``inactivity`` after the stream opened when no line came at all).
WATCHDOG_SLACK = 1.0


@dataclass(frozen=True, slots=True)
class ReflectorStatus:
    """What the status bar shows for one resource. Times are wall-clock seconds (``time.time``)."""

    kind: str
    state: ReflectorState = ReflectorState.SYNCING
    note: str = ""  # why the state is what it is now (empty when synced)
    last_error: str = ""  # the most recent failure, kept after recovery
    since: float = 0.0
    synced_once: bool = False
    resource_version: str = ""
    #: wall-clock time the server became unreachable (W6); None while it answers
    reconnecting_since: float | None = None
    watch_list: bool = False  # the current read came from a streaming list (W17)
    last_event_at: float | None = None
    retry_at: float | None = None
    lists: int = 0
    #: objects read so far by the first list under way (shown as "listing… N pods"; see relist)
    listed: int = 0
    watches: int = 0
    events: int = 0
    bad_lines: int = 0
    failures: int = 0

    @property
    def stale(self) -> bool:
        """Rows of this resource may differ from the cluster right now."""
        return self.state is not ReflectorState.SYNCED


@dataclass(frozen=True, slots=True)
class ReflectorSettings:
    page_size: int = 5000
    timeout_seconds: tuple[int, int] = (300, 600)  # server-side watch timeout drawn from this range
    inactivity: float = 70.0  # client-side deadline per line, bookmarks included
    max_failures: int = 5  # consecutive 5xx / very short watches before a relist
    max_bad_lines: int = 100  # garbage lines in one stream before it is reopened
    very_short: float = 1.0  # a watch ending this fast with no events is a failure
    forbidden_retry: float = 300.0  # how often a forbidden resource is tried again
    max_reauth: int = 3
    label_selector: str | None = None
    backoff_initial: float = 0.8
    backoff_cap: float = 30.0
    #: try a streaming list (sendInitialEvents) before list+watch; off by default because a server
    #: without the feature costs one rejected request per resource (W17)
    watch_list: bool = False


@dataclass(frozen=True, slots=True)
class ListRetry:
    """How long a one-shot list (``hpctop jobs --kubeconfig ...``) keeps trying: the reflector's
    rules (W4, W7, W8), bounded, since a person or a script is waiting for the table."""

    max_wait: float = 10.0  # seconds spent waiting in all (Retry-After, backoff) before giving up
    max_restarts: int = 3  # 410 on a ``continue`` page: restarts from the first page
    max_server_errors: int = 3  # 5xx (or a page that is not a list) retried this many times


class _Relist(Exception):
    """An in-stream ERROR that is neither 410 nor a server error: start over with a list."""


class _NoWatchList(Exception):
    """The server does not do streaming lists (rejected, or no end bookmark): use list+watch."""


#: the annotation of the bookmark that ends a streaming list's initial events (KEP-3157)
INITIAL_EVENTS_END = b"k8s.io/initial-events-end"


@dataclass(slots=True)
class _WatchOutcome:
    events: int
    duration: float
    renew: bool = False  # ended on purpose before the credential's refresh: not a failure


class Reflector:
    """Keeps one resource of ``store`` equal to the server's, until cancelled."""

    def __init__(
        self,
        client: KubeClient,
        store: Store,
        spec: ResourceSpec,
        *,
        namespace: str | None = None,
        settings: ReflectorSettings | None = None,
        on_status: Callable[[ReflectorStatus], None] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.client = client
        self.store = store
        self.spec = spec
        self.namespace = namespace
        self.settings = settings or ReflectorSettings()
        self._on_status = on_status
        self._rng = rng or random.Random()
        self.backoff = Backoff(
            initial=self.settings.backoff_initial, cap=self.settings.backoff_cap, rng=self._rng.random
        )
        self.status = ReflectorStatus(spec.kind, since=time.time())
        self._rv: str | None = None  # where the next watch resumes; None: list first
        self.settled = asyncio.Event()  # set once synced, forbidden, unavailable or unauthorized
        self._synced = asyncio.Event()
        self._watch_list = self.settings.watch_list  # cleared for the session on the first refusal
        self._unreported = 0  # events applied and not yet in ``status`` (see _report_events)
        self._report: asyncio.TimerHandle | None = None

    # -- status ---------------------------------------------------------------------------------

    def _update(self, **changes: Any) -> None:
        state = changes.get("state")
        if state is not None and state != self.status.state:
            changes.setdefault("since", time.time())
        self.status = replace(self.status, **changes)
        if self.status.state in (
            ReflectorState.SYNCED,
            ReflectorState.FORBIDDEN,
            ReflectorState.UNAVAILABLE,
            ReflectorState.UNAUTHORIZED,
        ):
            self.settled.set()
        if self.status.state is ReflectorState.SYNCED:
            self._synced.set()
        else:
            self._synced.clear()
        if self._on_status is not None:
            self._on_status(self.status)

    async def wait_synced(self) -> None:
        """Wait until the resource is synced (again)."""
        await self._synced.wait()

    # -- the loop -------------------------------------------------------------------------------

    async def run(self) -> None:
        self._rv = None
        failures = 0  # consecutive 5xx / very short watches since the last list
        reauth = 0
        just_listed = False
        try:
            while True:
                try:
                    if self._rv is None and self._watch_list:
                        self._update(state=ReflectorState.SYNCING, retry_at=None)
                        try:
                            outcome = await self._watch(None)
                        except _NoWatchList as exc:
                            self._watch_list = False
                            log.info("%s: streaming list not used: %s", self.spec.kind, exc)
                            continue  # list+watch at once: this was no failure of the server
                        failures = 0
                        just_listed = True
                    else:
                        if self._rv is None:
                            self._update(state=ReflectorState.SYNCING, retry_at=None)
                            self._rv = await self.relist()
                            failures = 0
                            just_listed = True
                            self._update(
                                state=ReflectorState.SYNCED,
                                synced_once=True,
                                note="",
                                resource_version=self._rv,
                                retry_at=None,
                                reconnecting_since=None,
                                watch_list=False,
                            )
                        outcome = await self._watch(self._rv)
                    reauth = 0
                    if outcome.renew:
                        failures = 0
                        continue
                    if outcome.events == 0 and outcome.duration < self.settings.very_short:
                        failures += 1
                        if failures >= self.settings.max_failures:
                            self._rv = None
                        await self._retry("the watch closed at once with no events")
                        continue
                    failures = 0
                    just_listed = False
                except Gone as exc:
                    self._rv = None
                    if just_listed:  # a 410 right after a relist: do not loop on relists
                        await self._retry(exc.detail)
                    just_listed = False
                except _Relist as exc:
                    self._rv = None
                    await self._retry(str(exc))
                except TooManyRequests as exc:
                    await self._retry(exc.detail, floor=exc.retry_after or 0.0)
                except ServerError as exc:
                    failures += 1
                    if failures >= self.settings.max_failures:
                        self._rv = None
                    await self._retry(exc.detail, floor=exc.retry_after or 0.0)
                except Forbidden as exc:
                    self._rv = None
                    self._update(state=ReflectorState.FORBIDDEN, note=exc.detail, last_error=exc.detail)
                    await self._sleep(self.settings.forbidden_retry)
                except NotFound as exc:
                    self._rv = None
                    self._update(state=ReflectorState.UNAVAILABLE, note=exc.detail, last_error=exc.detail)
                    await self._sleep(self.settings.forbidden_retry)
                except Unauthorized as exc:
                    reauth += 1
                    if reauth > self.settings.max_reauth:
                        self._update(
                            state=ReflectorState.UNAUTHORIZED,
                            note=exc.detail,
                            last_error=exc.detail,
                            retry_at=None,
                        )
                        return
                    try:
                        await self.client.connection.reauthenticate()
                    except KubeError as reload_error:
                        self._update(state=ReflectorState.UNAUTHORIZED, note=reload_error.detail)
                        return
                    await self._retry(exc.detail)
                except ServerUnreachable as exc:  # refused, DNS: re-watch from the same RV (W6)
                    await self._retry(exc.detail, reconnecting=True)
                except KubeError as exc:  # reset, stall, certificate, other 4xx
                    await self._retry(exc.detail)
        finally:
            if self.status.state is not ReflectorState.UNAUTHORIZED:
                self._update(state=ReflectorState.STOPPED)

    async def _sleep(self, delay: float) -> None:
        self._update(retry_at=time.time() + delay)
        await asyncio.sleep(delay)

    async def _retry(self, note: str, *, floor: float = 0.0, reconnecting: bool = False) -> None:
        delay = max(self.backoff.next(), floor)
        since = self.status.reconnecting_since
        if reconnecting:
            since = since if since is not None else time.time()
            note = f"reconnecting since {time.strftime('%H:%M:%S', time.localtime(since))}: {note}"
        self._update(
            state=ReflectorState.RETRYING,
            note=note[:300],
            last_error=note[:300],
            failures=self.status.failures + 1,
            reconnecting_since=since if reconnecting else None,
        )
        log.info("%s: %s; retrying in %.1fs", self.spec.kind, note[:300], delay)
        await self._sleep(delay)

    # -- list -----------------------------------------------------------------------------------

    async def list_once(self, rules: ListRetry | None = None) -> str:
        """:meth:`relist` with the loop's list rules, bounded: the one-shot commands' read.

        A 410 on a ``continue`` page starts over from page 1 (a consistent read; nothing of the
        abandoned pages is kept, so no page is mixed from two snapshots, W4); a 429 waits at least
        ``Retry-After`` (W7); a 5xx backs off (W8). Waiting stops after ``rules.max_wait`` seconds
        in all, and the last error is raised with what was tried. Everything else (403, 404,
        401, unreachable, a read timeout) is raised at once: the caller decides.
        """
        rules = rules or ListRetry()
        waited = 0.0
        restarts = server_errors = 0
        while True:
            try:
                return await self.relist()
            except Gone as exc:
                restarts += 1
                if restarts > rules.max_restarts:
                    exc.detail = f"{exc.detail} (the list was restarted {rules.max_restarts} times)"
                    raise
                log.info("%s: %s; listing again from the first page", self.spec.kind, exc.detail)
                continue
            except TooManyRequests as exc:
                delay = max(exc.retry_after or 0.0, self.backoff.next())
                failure: ApiError = exc
            except ServerError as exc:
                server_errors += 1
                if server_errors > rules.max_server_errors:
                    exc.detail = f"{exc.detail} (tried {server_errors} times)"
                    raise
                delay = max(exc.retry_after or 0.0, self.backoff.next())
                failure = exc
            if waited + delay > rules.max_wait:
                failure.detail = (
                    f"{failure.detail} (the server asks to wait {delay:g} s more; "
                    f"a one-shot read waits at most {rules.max_wait:g} s)"
                )
                raise failure
            log.info("%s: %s; retrying in %.1fs", self.spec.kind, failure.detail, delay)
            waited += delay
            await asyncio.sleep(delay)

    async def relist(self) -> str:
        """Read every page, then replace the resource in the store in one step; return the RV.

        The first list of this reflector goes into the store page by page instead (there is no
        earlier state to keep whole, and a big cluster's first list takes seconds to tens of
        seconds: the console shows its rows as they come, with ``listed`` counting them, issue
        16), and its end drops what the whole list did not name (:meth:`Store.end_listed`), so a
        list restarted after a 410 ends exactly as a swapped one. Until then the resource is
        ``SYNCING``: the console runs no core on it and says the rows are a partial list.
        """
        first = not self.status.synced_once
        self._update(lists=self.status.lists + 1, listed=0)
        path = self.spec.path(self.namespace)
        objects: list[Any] = []
        params: dict[str, str] = {"limit": str(self.settings.page_size)}
        if self.settings.label_selector:
            params["labelSelector"] = self.settings.label_selector
        kind = self.spec.kind
        with gc_paused():
            while True:
                body = await self.client.get(path, params)
                # One decode pass over the page (PERFORMANCE.md P1, P4), every kind; a bad item is
                # skipped and noted, only a page that is no list at all fails the read.
                try:
                    decoded = decode_list(kind, body, self.spec.api_version)
                except DecodeError:
                    raise ServerError(f"{path}: the list answer is not a JSON list", status=200) from None
                del body
                objects.extend(decoded.objects)
                for error in decoded.skipped:
                    self.store.skip(error, kind)
                if first:
                    self.store.add_listed(kind, decoded.objects)
                    self._update(listed=len(objects))
                token: object = decoded.continue_token
                page_rv: object = decoded.resource_version
                await asyncio.sleep(0)  # let the console breathe between pages
                if not token:
                    rv = str(page_rv or "")
                    break
                params["continue"] = str(token)
            if first:
                self.store.end_listed(kind, objects, rv)
            else:
                self.store.replace(kind, objects, rv)
        return rv

    # -- watch ----------------------------------------------------------------------------------

    async def _watch(self, rv: str | None) -> _WatchOutcome:
        """Stream events from ``rv`` until the server ends the watch; return where to resume.

        ``rv=None`` is a streaming list (W17): the initial ADDED events are gathered until the
        end bookmark, swapped in as one relist, and the stream then continues as the watch.
        """
        low, high = self.settings.timeout_seconds
        initial = rv is None
        params = {
            "watch": "true",
            "resourceVersion": rv or "",
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(self._rng.randint(low, high)),
        }
        if initial:
            params["sendInitialEvents"] = "true"
            params["resourceVersionMatch"] = "NotOlderThan"
        if self.settings.label_selector:
            params["labelSelector"] = self.settings.label_selector
        loop = asyncio.get_running_loop()
        started = loop.time()
        events = 0
        bad = 0
        gathered: list[Any] = []
        # C2: end the stream before the credential is due, so the next one carries a fresh token
        credential = self.client.connection.refreshes
        due = self.client.connection.refresh_in()
        renew_at = started + max(due, 0.0) if due is not None else None
        initial_deadline = started + self.settings.inactivity
        self._update(watches=self.status.watches + 1)
        if initial:
            self._update(lists=self.status.lists + 1)
        async with contextlib.AsyncExitStack() as stack:
            stack.callback(self._report_events)  # however the stream ends, its events are counted
            try:
                lines = await stack.enter_async_context(
                    self.client.stream(self.spec.path(self.namespace), params)
                )
            except ApiError as exc:
                if initial and exc.status in (400, 403, 422):
                    raise _NoWatchList(f"the server refused it ({exc.status})") from None
                raise
            if not initial and self.status.state is not ReflectorState.SYNCED:  # reconnected: live again
                self._update(state=ReflectorState.SYNCED, note="", retry_at=None, reconnecting_since=None)
            inactivity = self.settings.inactivity
            slack = min(WATCHDOG_SLACK, inactivity / 10)
            watchdog = asyncio.timeout(None)
            try:
                async with watchdog:
                    while True:
                        # the deadline of this read: no data for ``inactivity``, the credential's
                        # renewal, a streaming list's end bookmark; the watchdog is moved on only
                        # when it would fire before it (see WATCHDOG_SLACK)
                        now = loop.time()
                        due = now + inactivity
                        fire = due + slack
                        if renew_at is not None:
                            due, fire = min(due, renew_at), min(fire, renew_at)
                        if initial:
                            due, fire = min(due, initial_deadline), min(fire, initial_deadline)
                        when = watchdog.when()
                        if when is None:  # the stream's first read: the exact deadline
                            watchdog.reschedule(due)
                        elif when < due:
                            watchdog.reschedule(fire)
                        line = await anext(lines, None)
                        if line is None:
                            if initial:
                                raise _NoWatchList("the stream ended before the initial-events-end bookmark")
                            return _WatchOutcome(events, loop.time() - started)
                        if initial:
                            end_rv = self._gather(line, gathered)
                            if end_rv is not None:
                                self.store.replace(self.spec.kind, gathered, end_rv)
                                gathered = []
                                initial = False
                                self._rv = end_rv
                                self._update(
                                    state=ReflectorState.SYNCED,
                                    synced_once=True,
                                    note="",
                                    resource_version=end_rv,
                                    retry_at=None,
                                    reconnecting_since=None,
                                    watch_list=True,
                                )
                            continue
                        new_rv = self._apply(line)
                        if new_rv is None:
                            bad += 1
                            if bad > self.settings.max_bad_lines:
                                raise StreamBroken(f"{bad} malformed lines in one watch, reopening it")
                            continue
                        events += 1
                        if new_rv:
                            self._rv = new_rv  # progress survives a broken stream: resume from here
                        self._unreported += 1
                        if self._report is None:
                            self._report = loop.call_later(STATUS_EVERY, self._report_events)
            except TimeoutError:
                now = loop.time()
                if initial and now >= initial_deadline - 0.001:
                    raise _NoWatchList(
                        f"no initial-events-end bookmark within {self.settings.inactivity:.0f}s"
                    ) from None
                if renew_at is not None and now >= renew_at - 0.001:
                    await self.client.connection.renew(credential)
                    return _WatchOutcome(events, now - started, renew=True)
                raise StreamBroken(f"no data for {self.settings.inactivity:.0f}s, reconnecting") from None

    def _report_events(self) -> None:
        """Publish the events applied since the last report (count, resourceVersion, time).

        Why not per event: a status update is a new frozen status (16 fields) and a call into the
        console's handler, which copies its map of statuses: ~10 us per event, a tenth of what the
        whole apply costs, on the thread the store is fed from (K1: the console applied 915 of
        5,000 events/s at 50k pods). The status bar reads these at most every tick; reported
        :data:`STATUS_EVERY` after the first unreported event, and when the stream ends.
        """
        if self._report is not None:
            self._report.cancel()
            self._report = None
        if self._unreported:
            count, self._unreported = self._unreported, 0
            self._update(
                resource_version=self._rv or "", events=self.status.events + count, last_event_at=time.time()
            )

    def _gather(self, line: bytes, gathered: list[Any]) -> str | None:
        """One line of a streaming list's initial phase: keep an ADDED object aside, or return
        the RV when the line is the end bookmark. Nothing reaches the store before that bookmark,
        so a stream broken halfway leaves the previous state whole (the swap rule of §1.2)."""
        if line is OVERSIZED:
            self._bad("oversized watch line")
            return None
        try:
            event = decode_event(self.spec.kind, line)
        except DecodeError as exc:
            if b'"ERROR"' in line:
                self._raise_in_stream_error(line)
            self._bad(exc)
            return None
        if event.type is EventType.BOOKMARK:
            if INITIAL_EVENTS_END in line and _ends_initial_events(line):
                return event.resource_version
            return None
        if event.type is EventType.DELETED:
            return None
        if event.obj is not None:
            gathered.append(event.obj)
        return None

    def _apply(self, line: bytes) -> str | None:
        """Apply one watch line. Return its RV ("" when it has none), or None when it was skipped.

        An in-stream ``ERROR`` raises the error it stands for.
        """
        kind = self.spec.kind
        if line is OVERSIZED:
            self._bad("oversized watch line")
            return None
        try:
            event = self.store.apply_line(kind, line)  # decode + apply (a held pod: what moved)
        except DecodeError as exc:
            if b'"ERROR"' in line:
                self._raise_in_stream_error(line)
            self._bad(exc)
            return None
        return event.resource_version

    def _bad(self, problem: str | DecodeError) -> None:
        error = problem if isinstance(problem, DecodeError) else DecodeError(problem, kind=self.spec.kind)
        self.store.skip(error, self.spec.kind)
        self._update(bad_lines=self.status.bad_lines + 1)

    def _raise_in_stream_error(self, line: bytes) -> None:
        try:
            parsed = orjson.loads(line)
        except orjson.JSONDecodeError:
            return
        if not isinstance(parsed, dict) or parsed.get("type") != "ERROR":
            return
        status = parsed.get("object")
        if not isinstance(status, dict):
            raise _Relist("an in-stream ERROR without a Status")
        code = status.get("code")
        error: ApiError = error_for_status(
            code if isinstance(code, int) else 500, orjson.dumps(status), what=self.spec.path(self.namespace)
        )
        if isinstance(error, Gone | ServerError | TooManyRequests):
            raise error
        if status.get("reason") == "InternalError":
            raise ServerError(error.detail, status=500, reason="InternalError")
        raise _Relist(f"watch ended with an error: {error.detail}")


def _ends_initial_events(line: bytes) -> bool:
    """True for a BOOKMARK annotated ``k8s.io/initial-events-end: "true"`` (read as a plain dict:
    a bookmark's object is not a whole object, RELIABILITY.md §1.2 item 6)."""
    try:
        parsed = orjson.loads(line)
        annotations = parsed["object"]["metadata"].get("annotations") or {}
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return False
    return isinstance(annotations, dict) and annotations.get(INITIAL_EVENTS_END.decode()) == "true"
