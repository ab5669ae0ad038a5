"""YuniKorn's queue tree from its REST API (SCHEDULERS.md §4.4), polled into the store.

Why poll REST rather than read the ``queues.yaml`` ConfigMap: the ConfigMap is only the intent;
the REST tree also holds what YuniKorn made of it (dynamic queues from placement rules, the
state, allocated and pending usage), and it is the same on every YuniKorn release since 1.0.

Reaching it: by default through the API server's service proxy
(``/api/v1/namespaces/{ns}/services/yunikorn-service:9080/proxy/ws/v1/...``), so the kubeconfig's
credentials and TLS apply and nothing else has to be reachable; ``--yunikorn-url`` points at the
service directly instead (a port-forward, an ingress).

Most clusters have no YuniKorn, and that is normal, not an error. So without ``--yunikorn-url``
nothing is polled until YuniKorn is seen: a pod with ``schedulerName: yunikorn`` in the store, or
the ``yunikorn-service`` Service in its namespace. Detection is re-tried now and then (a cheap
GET, or no request at all when the pods already tell). A 403 or 404 from the proxy is a note in
the status bar (``YuniKorn: forbidden``) and a long wait, never an error that stops anything.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable

import aiohttp

from hpctop.sources.kube.backoff import Backoff
from hpctop.sources.kube.errors import Forbidden, KubeError, NotFound, Unauthorized, error_for_status
from hpctop.sources.kube.transport import KubeClient

NAMESPACE = "yunikorn"
SERVICE = "yunikorn-service"
PORT = 9080
POLL_INTERVAL = 15.0
#: how often to look again for a YuniKorn that was not there (or refused us)
DETECT_INTERVAL = 60.0
TIMEOUT = 10.0
MAX_BODY = 32 * 1024 * 1024
MAX_ERROR_BODY = 64 * 1024


class YuniKornState(enum.Enum):
    ABSENT = "not installed"  # nothing polled, nothing shown
    OK = "ok"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not found"
    UNREACHABLE = "unreachable"
    INVALID = "invalid answer"


class YuniKornPoller:
    """Detects YuniKorn, then polls ``/ws/v1/partition/{p}/queues`` and hands each answer to ``apply``.

    ``apply`` gets the raw document (e.g. a bound ``Store.apply_yunikorn_queues``, under the
    store's lock) and returns False for a document it could not decode. ``pods_say_yunikorn``
    answers whether any pod in the store names ``yunikorn`` as its scheduler.
    """

    def __init__(
        self,
        apply: Callable[[bytes], bool],
        *,
        client: KubeClient | None = None,
        url: str | None = None,
        pods_say_yunikorn: Callable[[], bool] = lambda: False,
        namespace: str = NAMESPACE,
        service: str = SERVICE,
        port: int = PORT,
        partition: str = "default",
        interval: float = POLL_INTERVAL,
        detect_interval: float = DETECT_INTERVAL,
        timeout: float = TIMEOUT,
        backoff: Backoff | None = None,
    ) -> None:
        if client is None and url is None:
            raise ValueError("YuniKornPoller needs a client (service proxy) or a url")
        self.apply = apply
        self.client = client
        self.url = url.rstrip("/") if url else None
        self.pods_say_yunikorn = pods_say_yunikorn
        self.namespace = namespace
        self.service = service
        self.port = port
        self.partition = partition
        self.interval = interval
        self.detect_interval = detect_interval
        self.timeout = timeout
        self.backoff = backoff if backoff is not None else Backoff(initial=min(interval, 2.0), cap=120.0)
        self.state = YuniKornState.ABSENT
        self.detail = ""
        self.polls = 0

    @property
    def proxy_path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/services/{self.service}:{self.port}/proxy"

    @property
    def queues_path(self) -> str:
        return f"/ws/v1/partition/{self.partition}/queues"

    @property
    def note(self) -> str:
        """The status-bar phrase: empty while absent or fine, ``YuniKorn: forbidden`` etc. otherwise."""
        if self.state in (YuniKornState.ABSENT, YuniKornState.OK):
            return ""
        return f"YuniKorn: {self.state.value}"

    async def detect(self) -> bool:
        """Whether YuniKorn is worth polling: a direct URL, a pod scheduled by it, or its Service."""
        if self.url is not None or self.pods_say_yunikorn():
            return True
        assert self.client is not None
        try:
            await self.client.get(f"/api/v1/namespaces/{self.namespace}/services/{self.service}", {})
        except (Forbidden, NotFound, Unauthorized):
            return False  # not installed, or we may not look: either way nothing to poll
        except KubeError:
            return False  # the API server is having trouble; the reflectors report that
        return True

    async def fetch(self, session: aiohttp.ClientSession | None) -> bytes:
        """One GET of the queue tree; hpctop's errors (or :class:`aiohttp.ClientError`) on failure."""
        if self.url is None:
            assert self.client is not None
            return await asyncio.wait_for(
                self.client.get(self.proxy_path + self.queues_path, {}), self.timeout
            )
        assert session is not None
        async with session.get(
            self.url + self.queues_path, timeout=aiohttp.ClientTimeout(total=self.timeout)
        ) as response:
            body = await response.content.read(MAX_BODY)
            if response.status >= 400:
                raise error_for_status(response.status, body[:MAX_ERROR_BODY], what=self.queues_path)
            return body

    async def poll_once(self, session: aiohttp.ClientSession | None = None) -> YuniKornState:
        """Fetch and apply the tree once; the resulting state (also kept in :attr:`state`)."""
        self.polls += 1
        try:
            raw = await self.fetch(session)
        except (Forbidden, Unauthorized):
            self.state = YuniKornState.FORBIDDEN
        except NotFound:
            self.state = YuniKornState.NOT_FOUND
        except (KubeError, aiohttp.ClientError, TimeoutError) as exc:
            self.state, self.detail = YuniKornState.UNREACHABLE, type(exc).__name__
        else:
            self.state = YuniKornState.OK if self.apply(raw) else YuniKornState.INVALID
        return self.state

    async def run(self) -> None:
        """Detect, then poll until cancelled; refusals and absences wait ``detect_interval``."""
        session = aiohttp.ClientSession() if self.url is not None else None
        try:
            while True:
                if self.state is YuniKornState.ABSENT and not await self.detect():
                    await asyncio.sleep(self.detect_interval)
                    continue
                state = await self.poll_once(session)
                if state is YuniKornState.OK:
                    self.backoff.reset()
                    delay = self.interval
                elif state in (YuniKornState.FORBIDDEN, YuniKornState.NOT_FOUND):
                    delay = self.detect_interval  # asking again soon will not change the answer
                else:
                    delay = max(self.backoff.next(), self.interval)
                await asyncio.sleep(delay)
        finally:
            if session is not None:
                await session.close()


__all__ = ["YuniKornPoller", "YuniKornState"]
