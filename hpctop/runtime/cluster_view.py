"""A live cluster read once, for the shell tables (``hpctop jobs --kubeconfig ...``).

Scripts and cron jobs want what ``squeue`` gives: one consistent look, printed, and an exit. So
this lists each resource once through the live read path (real kubeconfig loading, real HTTP,
the same decoder and store as the console) and runs the scheduling core over the snapshot with
hpctop's default policy (one partition per GPU product plus ``cpu``) and the queues the cluster's
schedulers define (Kueue ClusterQueues and Cohorts, Volcano Queues; else the jobs' queue
labels), so pending jobs get the same reasons, priorities and ETAs as in the demo. A resource the
user may not list is left out and named in ``notes`` rather than failing the whole table, and so
is each malformed object the store skipped (kind, namespace/name, field).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from hpctop.model.backends.queues import policy_from_snapshot
from hpctop.model.policy import Policy
from hpctop.model.store import Snapshot
from hpctop.runtime.live import LIST_TIMEOUT, list_once
from hpctop.scheduling.core import schedule
from hpctop.scheduling.types import ScheduleResult


@dataclass
class ClusterView:
    """The parts of a session the tables read, for a live cluster listed once."""

    policy: Policy
    now: float
    snapshot: Snapshot
    result: ScheduleResult
    source_name: str
    notes: list[str] = field(default_factory=list)
    speed: float = 1.0


def read_cluster(
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None = None,
    policy: Policy | None = None,
    request_timeout: float = LIST_TIMEOUT,
) -> ClusterView:
    """List the cluster once and schedule the snapshot (wall-clock ``now``)."""
    notes: list[str] = []
    store = asyncio.run(
        list_once(kubeconfig, context, namespace, notes=notes, request_timeout=request_timeout)
    )
    notes.extend(store.notes_text())  # each skipped object, once: none is dropped silently
    now = time.time()
    snapshot = store.snapshot()
    # the queues the cluster's own schedulers define (Kueue, Volcano, YuniKorn) give the quotas
    chosen = policy_from_snapshot(snapshot, policy or Policy())
    result = schedule(snapshot, chosen, now)
    source = f"context:{context}" if context else "kubeconfig"
    return ClusterView(chosen, now, snapshot, result, source, notes)
