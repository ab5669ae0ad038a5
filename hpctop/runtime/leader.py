"""Leader election through a ``coordination.k8s.io/v1`` Lease, for ``hpctop schedule``.

Why: two hpctop schedulers binding the same pods from two views of the cluster would place one
gang twice over the same free GPUs (each sees them free), and the loser's partial gang would then
be rolled back, over and over. Only one instance may bind; the others watch and wait. Kubernetes'
own answer is a Lease object that the leader renews, and hpctop follows client-go's
``leaderelection`` rules so that it behaves the way operators expect:

- **Every write is a compare-and-swap.** The Lease is created with a POST (a 409 AlreadyExists
  means someone else was first) and changed only with a PUT that carries the resourceVersion we
  read; the API server refuses it with 409 if anyone wrote in between. Two candidates can never
  both believe they took the lease.
- **Expiry is measured on our own clock, not theirs.** A candidate does not compare the holder's
  ``renewTime`` with its own wall clock (clocks of two machines differ). It remembers when it last
  *saw the record change* and takes over only when the record has stood still for
  ``leaseDurationSeconds`` of its own monotonic time. So a newcomer always waits one full lease
  duration before taking a lease that looks stale.
- **The leader stops before the lease could be taken.** The leader counts itself leader only
  until ``renew_deadline`` (shorter than the lease duration) after its last successful renewal,
  on its monotonic clock: if renewals fail (network, API server down, a 409 because someone else
  took it), :attr:`LeaderElector.is_leader` turns False by itself, and the scheduler checks it
  right before every gang it binds. Losing the lease stops binding at once, not at the next cycle.
- **A clean exit hands over at once.** :meth:`LeaderElector.release` writes an empty holder with a
  1 s duration (client-go's ``ReleaseOnCancel``), so the standby does not wait out the lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hpctop.sources.kube.errors import ServerUnreachable, StreamBroken
from hpctop.sources.kube.transport import ApiResponse, KubeClient

LEASE_API = "/apis/coordination.k8s.io/v1"
#: client-go's defaults (``leaderelection.LeaderElectionConfig`` as kube-scheduler sets them)
LEASE_DURATION = 15.0
RENEW_DEADLINE = 10.0
RETRY_PERIOD = 2.0


def default_identity() -> str:
    """``hostname_random``, as client-go does: unique per process even on one host."""
    return f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"


def micro_time(at: float) -> str:
    """A Kubernetes ``MicroTime`` (RFC 3339 with microseconds), as Lease times are written."""
    moment = datetime.datetime.fromtimestamp(at, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """The fields of a Lease that election reads; ``rv`` is what the next PUT must carry."""

    holder: str
    duration: int
    acquire_time: str
    renew_time: str
    transitions: int
    rv: str

    @classmethod
    def of(cls, obj: dict[str, Any]) -> LeaseRecord:
        spec = obj.get("spec") or {}
        return cls(
            holder=str(spec.get("holderIdentity") or ""),
            duration=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=str(spec.get("acquireTime") or ""),
            renew_time=str(spec.get("renewTime") or ""),
            transitions=int(spec.get("leaseTransitions") or 0),
            rv=str((obj.get("metadata") or {}).get("resourceVersion") or ""),
        )


class LeaderElector:
    """Acquires and renews one Lease for one identity; :attr:`is_leader` says whether to bind now.

    Drive it with :meth:`run` (a task that tries every ``retry_period``) or call
    :meth:`try_acquire_or_renew` yourself (``--once``). ``on_change(leading)`` is called when
    leadership is gained or lost, for the log.
    """

    def __init__(
        self,
        client: KubeClient,
        namespace: str,
        name: str,
        identity: str,
        *,
        lease_duration: float = LEASE_DURATION,
        renew_deadline: float = RENEW_DEADLINE,
        retry_period: float = RETRY_PERIOD,
        monotonic: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        on_change: Callable[[bool, str], None] | None = None,
    ) -> None:
        if client.read_only:
            raise ValueError("leader election writes a Lease: it needs a client made with read_only=False")
        if not 0 < retry_period < renew_deadline <= lease_duration:
            raise ValueError("need 0 < retry_period < renew_deadline <= lease_duration")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self._monotonic = monotonic
        self._wall = wall
        self._on_change = on_change
        self._observed: LeaseRecord | None = None
        self._observed_at = 0.0
        self._renewed_at: float | None = None  # monotonic time of our last successful write
        self._leading = False
        self.holder = ""  # who holds the lease, as last seen
        self.last_error = ""

    @property
    def path(self) -> str:
        return f"{LEASE_API}/namespaces/{self.namespace}/leases/{self.name}"

    @property
    def is_leader(self) -> bool:
        """True only while our last renewal is younger than ``renew_deadline`` (our own clock)."""
        if self._renewed_at is None:
            return False
        if self._monotonic() - self._renewed_at >= self.renew_deadline:
            self._set_leading(False, "renewal deadline passed")
            return False
        return self._leading

    def _set_leading(self, leading: bool, why: str) -> None:
        if not leading:
            self._renewed_at = None
        if leading != self._leading:
            self._leading = leading
            if self._on_change is not None:
                self._on_change(leading, why)

    def _spec(self, old: LeaseRecord | None, *, holder: str, duration: float) -> dict[str, Any]:
        now = micro_time(self._wall())
        taking = old is None or old.holder != holder
        return {
            "holderIdentity": holder,
            "leaseDurationSeconds": max(round(duration), 1),
            "acquireTime": now if taking or old is None else (old.acquire_time or now),
            "renewTime": now,
            "leaseTransitions": 0 if old is None else old.transitions + (1 if taking else 0),
        }

    def _body(self, spec: dict[str, Any], rv: str | None) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": self.name, "namespace": self.namespace}
        if rv:
            meta["resourceVersion"] = rv
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta, "spec": spec}

    async def _send(self, method: str, path: str, body: dict[str, Any] | None = None) -> ApiResponse | None:
        try:
            return await self.client.request(method, path, body=body, timeout=self.renew_deadline)
        except (ServerUnreachable, StreamBroken) as exc:
            self.last_error = exc.detail
            return None

    def _observe(self, record: LeaseRecord) -> None:
        if record != self._observed:
            self._observed, self._observed_at = record, self._monotonic()
        self.holder = record.holder

    def _won(self, response: ApiResponse) -> bool:
        obj = response.json()
        if isinstance(obj, dict):
            self._observe(LeaseRecord.of(obj))
        self._renewed_at = self._monotonic()
        self.last_error = ""
        self._set_leading(True, "acquired" if not self._leading else "renewed")
        return True

    def _lost(self, why: str) -> bool:
        self.last_error = why
        if self._leading:
            self._set_leading(False, why)
        return False

    async def try_acquire_or_renew(self) -> bool:
        """One attempt; True when we hold the lease after it. Never raises for API answers."""
        read = await self._send("GET", self.path)
        if read is None:
            return self._lost(f"lease unreadable: {self.last_error}")
        if read.status == 404:
            spec = self._spec(None, holder=self.identity, duration=self.lease_duration)
            created = await self._send(
                "POST", f"{LEASE_API}/namespaces/{self.namespace}/leases", self._body(spec, None)
            )
            if created is not None and created.ok:
                return self._won(created)
            return self._lost(_why(created, self.last_error, "create"))
        obj = read.json()
        if not read.ok or not isinstance(obj, dict):
            return self._lost(_why(read, self.last_error, "read"))
        record = LeaseRecord.of(obj)
        self._observe(record)
        mine = record.holder == self.identity
        if not mine and record.holder:
            expires = self._observed_at + max(record.duration, 1)
            if self._monotonic() < expires:
                return self._lost(f"held by {record.holder}")
        spec = self._spec(record, holder=self.identity, duration=self.lease_duration)
        updated = await self._send("PUT", self.path, self._body(spec, record.rv))
        if updated is not None and updated.ok:
            return self._won(updated)
        return self._lost(_why(updated, self.last_error, "update"))

    async def release(self) -> bool:
        """Give the lease up now (empty holder, 1 s), if we hold it; True when released."""
        leading = self._leading
        self._set_leading(False, "released")
        if not leading or self._observed is None:
            return False
        read = await self._send("GET", self.path)
        obj = read.json() if read is not None and read.ok else None
        if not isinstance(obj, dict):
            return False
        record = LeaseRecord.of(obj)
        if record.holder != self.identity:
            return False
        spec = self._spec(record, holder="", duration=1)
        spec["leaseTransitions"] = record.transitions
        done = await self._send("PUT", self.path, self._body(spec, record.rv))
        return done is not None and done.ok

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Try to acquire, then renew, every ``retry_period`` until cancelled (or ``stop`` is set)."""
        stop = stop or asyncio.Event()
        while not stop.is_set():
            await self.try_acquire_or_renew()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.retry_period)


def _why(response: ApiResponse | None, fallback: str, what: str) -> str:
    if response is None:
        return f"lease {what}: no answer ({fallback})"
    body = response.json()
    message = body.get("message") if isinstance(body, dict) else None
    return f"lease {what}: HTTP {response.status} {message or ''}".rstrip()


__all__ = ["LeaderElector", "LeaseRecord", "default_identity", "micro_time"]
