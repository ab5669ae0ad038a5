"""The real console on a live-style session fed with watch events from memory (P3, P5).

:class:`~hpctop.runtime.live_console.LiveConsoleSession` is what ``hpctop --kubeconfig`` runs:
a :class:`LockedStore` written by the reflector thread and read by the console's tick worker,
which snapshots and runs the core when the store changed. Here no reflector runs: a
:class:`Feeder` thread plays the reflector's part, applying pre-built event bytes through
``store.apply_raw`` (decode + store, the same calls a watch line takes) at a paced rate, so
the console is measured while events arrive, GIL contention included.
"""

from __future__ import annotations

import threading
import time

from bench.payloads import node_event, pod_events, pod_updates
from hpctop.model.store import Store
from hpctop.runtime.live_console import LiveConsoleSession, settle_heap
from hpctop.sources.kube.connection import Connection

#: a connection that is never used: no reflector is started
UNUSED = Connection(server="http://127.0.0.1:9", context=None, namespace=None, ssl=None)


def populate(store: Store, pods: int, nodes: int, per_job: int = 8) -> None:
    """The initial sync: ``nodes`` nodes and ``pods`` pods applied as ADDED events."""
    for i in range(nodes):
        store.apply_raw("Node", node_event(i))
    for raw in pod_events(pods, per_job=per_job):
        store.apply_raw("Pod", raw)


def live_session(pods: int, nodes: int, per_job: int = 8) -> LiveConsoleSession:
    """A live console session (core included) holding ``pods`` pods on ``nodes`` nodes.

    The heap is settled once populated (frozen, :func:`settle_heap`), as
    :class:`LiveConsoleSession` does itself when its reflectors report the first full sync (no
    reflector runs here, so that moment never comes): without it the benchmark would time full GC
    collections of the whole store (1-2 s each at 100k pods) that the real console does not pay
    after its initial sync.
    """
    session = LiveConsoleSession(UNUSED)
    populate(session.store, pods, nodes, per_job)
    session.refresh()
    settle_heap()
    return session


class Feeder(threading.Thread):
    """Applies ``events`` to ``store`` cyclically at ``rate`` events/s (``None``: as fast as it can)."""

    def __init__(self, store: Store, events: list[bytes], rate: float | None, batch: int = 50) -> None:
        super().__init__(name="bench-feeder", daemon=True)
        self.store = store
        self.events = events
        self.rate = rate
        self.batch = batch
        self.applied = 0
        self.elapsed = 0.0
        self._halt = threading.Event()

    def run(self) -> None:
        apply = self.store.apply_raw
        events, n = self.events, len(self.events)
        start = time.perf_counter()
        k = 0
        while not self._halt.is_set():
            for _ in range(self.batch):
                apply("Pod", events[k % n])
                k += 1
            self.applied = k
            if self.rate is not None:
                ahead = start + k / self.rate - time.perf_counter()
                if ahead > 0:
                    time.sleep(ahead)
            else:
                time.sleep(0)  # let the console's threads have the GIL between batches
        self.elapsed = time.perf_counter() - start

    def stop(self) -> float:
        """Stop and join; the achieved rate in events/s."""
        self._halt.set()
        self.join()
        return self.applied / self.elapsed if self.elapsed else 0.0


def updates(pods: int, per_job: int = 8) -> list[bytes]:
    return pod_updates(pods, per_job)
