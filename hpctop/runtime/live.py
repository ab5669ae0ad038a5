"""A live cluster as a source: one reflector per resource feeding one store.

Two ways in, for the two ways hpctop is used:

- :func:`run_live` (the console): load the connection, start a reflector per resource, and keep
  the store converging on the cluster until cancelled. Each resource fails on its own: a 403 on
  Jobs greys out what needs Jobs and leaves Pods and Nodes live. Quitting cancels the task, which
  closes every stream at once (W18).
- :func:`list_once` (the shell tables, ``hpctop jobs --kubeconfig ...``): one consistent list of
  each resource, concurrently, into a store, and no watch.

Credentials are acquired by :func:`hpctop.sources.kube.connection.load_connection` before any
reflector starts, so an interactive exec plugin runs before a console would draw (C1); callers
that start a TUI should call it first and pass the connection in.

A namespace of ``None`` means every namespace (the cluster view, like ``squeue``), not the
context's default namespace.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType, TracebackType
from typing import Self

from hpctop.model.store import Store
from hpctop.sources.kube.connection import Connection, load_connection
from hpctop.sources.kube.errors import Forbidden, NotFound
from hpctop.sources.kube.reflector import (
    ListRetry,
    Reflector,
    ReflectorSettings,
    ReflectorState,
    ReflectorStatus,
)
from hpctop.sources.kube.registry import discover_registry
from hpctop.sources.kube.resources import DEFAULT_RESOURCES, ResourceSpec
from hpctop.sources.kube.transport import KubeClient

StatusCallback = Callable[[ReflectorStatus], None]

#: seconds a one-shot read waits for an answer (a stalled server must not hold a table for minutes)
LIST_TIMEOUT = 20.0


class LiveSession:
    """Reflectors for a set of resources, sharing one client and one store.

    Use as an async context manager: entering starts the reflectors, leaving cancels them and
    closes the HTTP session. :meth:`statuses` is what the status bar reads.
    """

    def __init__(
        self,
        connection: Connection,
        store: Store,
        *,
        namespace: str | None = None,
        resources: Iterable[ResourceSpec] = DEFAULT_RESOURCES,
        settings: ReflectorSettings | None = None,
        on_status: StatusCallback | None = None,
        qps: int = 50,
        client: KubeClient | None = None,
    ) -> None:
        self.connection = connection
        self.store = store
        # A caller may bring its own client: ``hpctop record`` passes one that tees every list page
        # and watch line into a file, so the recording is what the reflectors really read.
        self.client = client if client is not None else KubeClient(connection, qps=qps)
        self.reflectors: dict[str, Reflector] = {
            spec.kind: Reflector(
                self.client, store, spec, namespace=namespace, settings=settings, on_status=on_status
            )
            for spec in resources
        }
        self._tasks: list[asyncio.Task[None]] = []

    def statuses(self) -> Mapping[str, ReflectorStatus]:
        return MappingProxyType({kind: r.status for kind, r in self.reflectors.items()})

    async def wait_settled(self) -> None:
        """Wait until every resource is synced, or known to be forbidden/unavailable/unauthorized."""
        await asyncio.gather(*(r.settled.wait() for r in self.reflectors.values()))

    async def wait_synced(self) -> None:
        """Wait until every resource that is not forbidden or unavailable is synced now."""
        degraded = {ReflectorState.FORBIDDEN, ReflectorState.UNAVAILABLE, ReflectorState.UNAUTHORIZED}
        while True:
            await self.wait_settled()
            pending = [r for r in self.reflectors.values() if r.status.state not in degraded]
            if all(r.status.state is ReflectorState.SYNCED for r in pending):
                return
            await asyncio.gather(*(r.wait_synced() for r in pending))

    def start(self) -> None:
        for kind, reflector in self.reflectors.items():
            self._tasks.append(asyncio.create_task(reflector.run(), name=f"hpctop-reflector-{kind}"))

    async def stop(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.client.close()

    async def __aenter__(self) -> Self:
        self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()


async def run_live(
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
    store: Store,
    *,
    resources: Iterable[ResourceSpec] = DEFAULT_RESOURCES,
    settings: ReflectorSettings | None = None,
    on_status: StatusCallback | None = None,
    on_session: Callable[[LiveSession], None] | None = None,
    connection: Connection | None = None,
    client_factory: Callable[[Connection], KubeClient] | None = None,
) -> None:
    """Keep ``store`` equal to the cluster until cancelled.

    Errors in loading the kubeconfig raise before anything starts (``KubeConfigError``); after
    that, failures are per resource and visible through ``on_status`` / the session's statuses.
    ``client_factory`` builds the HTTP client from the connection (default: a plain ``KubeClient``).
    """
    conn = connection or await load_connection(kubeconfig, context)
    client = client_factory(conn) if client_factory is not None else None
    async with LiveSession(
        conn,
        store,
        namespace=namespace,
        resources=resources,
        settings=settings,
        on_status=on_status,
        client=client,
    ) as session:
        if on_session is not None:
            on_session(session)
        await asyncio.Event().wait()  # until cancelled


async def list_once(
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
    *,
    resources: Iterable[ResourceSpec] | None = None,
    store: Store | None = None,
    notes: list[str] | None = None,
    settings: ReflectorSettings | None = None,
    connection: Connection | None = None,
    request_timeout: float = LIST_TIMEOUT,
    retry: ListRetry | None = None,
) -> Store:
    """List each resource once (consistent reads, paginated) into a store; no watch.

    Each list follows the reflector's rules, bounded (:meth:`Reflector.list_once`: Retry-After
    honoured, a 410 on a ``continue`` page restarts the list, 5xx retried), and a request that
    gets no answer for ``request_timeout`` seconds fails with a message that says so.

    A resource the user may not list (403) or that the server does not serve (404) is left out
    and described in ``notes``; any other failure (unreachable server, bad certificate, 401)
    raises, since a table from a partial read would mislead.
    """
    conn = connection or await load_connection(kubeconfig, context)
    target = store if store is not None else Store()
    async with KubeClient(conn, read_timeout=request_timeout) as client:
        if resources is None:
            resources = await discover_resources(client, notes)
        reflectors = [
            Reflector(client, target, spec, namespace=namespace, settings=settings) for spec in resources
        ]

        async def one(reflector: Reflector) -> None:
            try:
                await reflector.list_once(retry)
            except (Forbidden, NotFound) as exc:
                if notes is not None:
                    notes.append(f"{reflector.spec.kind}: {exc}")

        try:
            async with asyncio.TaskGroup() as group:
                for reflector in reflectors:
                    group.create_task(one(reflector))
        except ExceptionGroup as failed:
            raise _first_leaf(failed) from None
    return target


async def discover_resources(client: KubeClient, notes: list[str] | None = None) -> tuple[ResourceSpec, ...]:
    """What to read on this cluster: the core resources plus the scheduler CRDs ``/apis`` offers.

    Only what discovery lists is read, at the version it serves (a cluster without Kueue never sees
    a Kueue request, nor one whose Kubeflow operator lacks a kind a request for that kind); when
    discovery itself fails or is forbidden, the core resources alone are read and a note says so.
    """
    return (await discover_registry(client, notes)).watch_list()


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


__all__ = ["LiveSession", "list_once", "run_live"]
