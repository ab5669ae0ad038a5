"""hpctop as a Kubernetes scheduler: ``hpctop schedule`` binds the pods whose schedulerName is hpctop's.

The same loop as the simulator's :class:`~hpctop.runtime.session.Session` (store → snapshot →
core → binds), on a real cluster. Why it is built the way it is:

- **Only our pods.** kube-scheduler and hpctop share a cluster by ``spec.schedulerName``: each
  binds only the pods that name it. hpctop's core plans every pending job it is shown, so the
  snapshot it gets first loses the pending jobs of other schedulers (:func:`own_view`): a pod
  kube-scheduler will place, or cannot place, must not hold GPUs in hpctop's plan. Their *bound*
  pods stay, since they use the nodes. A placement is bound only when every member is still
  unbound and names our scheduler.
- **A gang is bound all or none** with :func:`hpctop.actions.kube.bind_gang`: N Binding creates
  with uid/RV preconditions, and on the first failure the members already bound are deleted so
  their controller recreates them unbound (a bound pod cannot be unbound). A bare pod (no
  controller) in a failed gang is therefore gone for good: that is reported as a Warning Event
  and in the log. A single-pod placement never needs a rollback.
- **No decisions on stale data.** A cycle runs only while the Pod and Node watches are synced; a
  watch that is retrying skips the cycle (binding from an old view of the nodes would only earn
  refusals, and the preconditions would catch the rest anyway).
- **One binder at a time.** Binding needs the Lease (:mod:`hpctop.runtime.leader`); a standby
  instance keeps its watches warm and does nothing else. Leadership is checked again right
  before each gang, so a lost lease stops binding within the cycle.
- **Decisions are visible where users look**: an ``events.k8s.io/v1`` Event per pod,
  ``Scheduled`` when bound, ``FailedScheduling`` with the core's reason code and message while it
  waits. Pending reasons are posted only when they change (per pod uid), and at most
  ``max_events`` per cycle, so a cluster with a thousand pending pods is not a thousand writes a
  cycle; what was held back goes out in the next cycles.
- **Reads and writes use different clients.** The reflectors get a read-only client (they can
  never write); Bindings, deletes, Events and the Lease go through a writing one. ``--dry-run``
  makes no writing client at all, takes no lease, and prints what it would do.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any, Self

from hpctop.actions.kube import Assignment, GangBindResult, bind_gang
from hpctop.model.backends.queues import policy_from_snapshot
from hpctop.model.objects import JobKey, Pod, PodKey, Reason
from hpctop.model.policy import Policy
from hpctop.model.store import Snapshot, Store
from hpctop.runtime.leader import (
    LEASE_DURATION,
    RENEW_DEADLINE,
    RETRY_PERIOD,
    LeaderElector,
    default_identity,
    micro_time,
)
from hpctop.runtime.live import LiveSession
from hpctop.scheduling.types import ScheduleResult
from hpctop.sources.kube.connection import Connection, load_connection
from hpctop.sources.kube.errors import ServerUnreachable, StreamBroken
from hpctop.sources.kube.reflector import ReflectorSettings, ReflectorState
from hpctop.sources.kube.resources import DEFAULT_RESOURCES, ResourceSpec
from hpctop.sources.kube.transport import KubeClient

ScheduleFn = Callable[[Snapshot, Policy, float], ScheduleResult]
Log = Callable[[str], None]

REPORTING_CONTROLLER = "hpctop"
DEFAULT_INTERVAL = 5.0
DEFAULT_LEASE_NAME = "hpctop-scheduler"
#: the watches a decision cannot be made without (the rest may be forbidden: degraded, not stale)
REQUIRED = ("Pod", "Node")
_DEGRADED = {ReflectorState.FORBIDDEN, ReflectorState.UNAVAILABLE, ReflectorState.UNAUTHORIZED}


@dataclass(frozen=True, slots=True)
class SchedulerOptions:
    """What ``hpctop schedule`` was asked to do (its flags, plus timings tests shorten)."""

    scheduler_name: str = "hpctop"
    interval: float = DEFAULT_INTERVAL
    dry_run: bool = False
    #: bind only this namespace's pods (all pods are still watched: they all use the nodes)
    namespace: str | None = None
    #: default: the kubeconfig context's namespace, else ``default``
    lease_namespace: str | None = None
    lease_name: str = DEFAULT_LEASE_NAME
    identity: str = ""
    lease_duration: float = LEASE_DURATION
    renew_deadline: float = RENEW_DEADLINE
    retry_period: float = RETRY_PERIOD
    #: Events posted per cycle at most (the rest wait for the next cycles)
    max_events: int = 200


@dataclass(frozen=True, slots=True)
class Decision:
    """One job's outcome in a cycle.

    ``action``: ``bound``, ``would-bind`` (dry run), ``failed`` (gang rolled back), ``skipped``
    (a member is no longer ours or already bound), ``pending`` (waits, with the core's reason).
    """

    job: JobKey
    action: str
    pods: tuple[tuple[PodKey, str], ...] = ()
    message: str = ""

    def line(self) -> str:
        ns, kind, name = self.job
        what = f"{kind} {ns}/{name}"
        if self.action in ("bound", "would-bind"):
            verb = "bound" if self.action == "bound" else "would bind"
            where = ", ".join(f"{pod[1]}→{node}" for pod, node in self.pods)
            return f"{verb} {what} ({len(self.pods)} pod{'s' if len(self.pods) != 1 else ''}): {where}"
        return f"{self.action} {what}: {self.message}"


@dataclass
class CycleReport:
    at: float
    #: False when the cycle did nothing: not the leader, watches not synced
    ran: bool
    decisions: list[Decision] = field(default_factory=list)
    note: str = ""
    events_posted: int = 0

    def of(self, action: str) -> list[Decision]:
        return [d for d in self.decisions if d.action == action]


def own_view(snapshot: Snapshot, scheduler_name: str, namespace: str | None = None) -> Snapshot:
    """The snapshot without pending jobs that belong to another scheduler (or namespace).

    A job is left out when it has pending pods, none of them names ``scheduler_name`` (or it is
    outside ``namespace``) and none of its pods holds a node: kube-scheduler's pending pods must
    not take room in hpctop's plan.
    Their bound pods stay in ``pods`` (they use the nodes); so does a foreign job that is partly
    running, whose pending pods the core may then plan but hpctop never binds.
    """
    foreign: list[JobKey] = []
    for key, job in snapshot.jobs.items():
        if not job.pending_pods or job.running_members:
            continue
        pods = [snapshot.pods[k] for k in job.pending_pods if k in snapshot.pods]
        elsewhere = namespace is not None and job.namespace != namespace
        if pods and (elsewhere or all(p.scheduler_name != scheduler_name for p in pods)):
            foreign.append(key)
    if not foreign:
        return snapshot
    jobs = {k: j for k, j in snapshot.jobs.items()}
    for key in foreign:
        del jobs[key]
    return replace(snapshot, jobs=jobs)


def _ours(pod: Pod | None, scheduler_name: str, namespace: str | None = None) -> bool:
    return (
        pod is not None
        and pod.scheduler_name == scheduler_name
        and (namespace is None or pod.namespace == namespace)
        and pod.node_name is None
        and pod.deleted is None
        and not pod.is_terminal
    )


def _reason_text(reason: Reason) -> str:
    message = " ".join(reason.message.split())
    return f"{reason.code}: {message}" if message else str(reason.code)


class HeadlessScheduler:
    """Watches a cluster and binds hpctop's pods; use as an async context manager.

    Entering starts the reflectors (and, unless ``dry_run``, a writing client and the leader
    elector, not yet running); :meth:`serve` runs the loop, :meth:`once` one cycle, and
    :meth:`cycle` is one scheduling pass that tests drive on a clock of their own.
    """

    def __init__(
        self,
        connection: Connection,
        options: SchedulerOptions,
        *,
        policy: Policy | None = None,
        scheduler: ScheduleFn | None = None,
        resources: Sequence[ResourceSpec] = DEFAULT_RESOURCES,
        settings: ReflectorSettings | None = None,
        clock: Callable[[], float] = time.time,
        log: Log | None = None,
    ) -> None:
        self.connection = connection
        self.options = options if options.identity else replace(options, identity=default_identity())
        base = policy if policy is not None else Policy()
        self.base_policy = replace(base, scheduler_name=options.scheduler_name)
        self._schedule = scheduler if scheduler is not None else _default_scheduler()
        self._resources = tuple(resources)
        self._settings = settings
        self._clock = clock
        self._log = log if log is not None else _print
        self.store = Store(clock=clock)
        self.live: LiveSession | None = None
        self.writer: KubeClient | None = None
        self.elector: LeaderElector | None = None
        #: pod uid → the (reason, note) last posted for it: Events are sent on change only
        self._posted: dict[str, tuple[str, str]] = {}
        self._printed: dict[JobKey, str] = {}
        self._event_seq = 0
        self._event_error = ""
        self.cycles = 0

    @property
    def lease_namespace(self) -> str:
        return self.options.lease_namespace or self.connection.namespace or "default"

    # -- lifecycle ---------------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        self.live = LiveSession(
            self.connection,
            self.store,
            namespace=None,  # every pod uses the nodes, whichever namespace it is scheduled for
            resources=self._resources,
            settings=self._settings,
        )
        self.live.start()
        if not self.options.dry_run:
            self.writer = KubeClient(self.connection, read_only=False)
            self.elector = LeaderElector(
                self.writer,
                self.lease_namespace,
                self.options.lease_name,
                self.options.identity,
                lease_duration=self.options.lease_duration,
                renew_deadline=self.options.renew_deadline,
                retry_period=self.options.retry_period,
                on_change=self._on_leader_change,
            )
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if self.elector is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.elector.release(), 5.0)
        finally:
            if self.live is not None:
                await self.live.stop()
            if self.writer is not None:
                await self.writer.close()

    def _on_leader_change(self, leading: bool, why: str) -> None:
        who = self.options.identity
        if leading:
            self._log(f"leader: {who} holds lease {self.lease_namespace}/{self.options.lease_name}")
        else:
            self._log(f"standby: {who} is not the leader ({why}); binding stopped")

    async def wait_synced(self, timeout: float | None = None) -> None:
        assert self.live is not None, "use HeadlessScheduler as an async context manager"
        await asyncio.wait_for(self.live.wait_synced(), timeout)

    def stale(self) -> str:
        """Why the watches cannot be trusted now ('' when they can)."""
        if self.live is None:
            return "not started"
        statuses = self.live.statuses()
        bad = [
            f"{kind} {status.state}"
            for kind, status in statuses.items()
            if status.state is not ReflectorState.SYNCED
            and (kind in REQUIRED or status.state not in _DEGRADED)
        ]
        return ", ".join(bad)

    async def serve(self, stop: asyncio.Event | None = None) -> None:
        """Elect and schedule every ``interval`` seconds until ``stop`` is set or cancelled."""
        stop = stop or asyncio.Event()
        await self.wait_synced()
        elect = (
            asyncio.create_task(self.elector.run(stop), name="hpctop-leader")
            if self.elector is not None
            else None
        )
        try:
            while not stop.is_set():
                await self.cycle()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.options.interval)
        finally:
            if elect is not None:
                elect.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await elect

    async def once(self) -> CycleReport:
        """One cycle: sync, take the lease if free (not in a dry run), schedule, release."""
        await self.wait_synced()
        if self.elector is not None:
            await self.elector.try_acquire_or_renew()
        return await self.cycle()

    # -- one cycle ---------------------------------------------------------------------------------

    def is_leader(self) -> bool:
        return self.options.dry_run or (self.elector is not None and self.elector.is_leader)

    async def cycle(self, now: float | None = None) -> CycleReport:
        """Snapshot, schedule, bind (or print, in a dry run), post Events; one pass."""
        at = self._clock() if now is None else now
        if not self.is_leader():
            holder = self.elector.holder if self.elector is not None else ""
            why = self.elector.last_error if self.elector is not None else ""
            return CycleReport(at, False, note=f"standby ({why or 'lease held by ' + (holder or '?')})")
        stale = self.stale()
        if stale:
            return CycleReport(at, False, note=f"skipped: watches not synced ({stale})")
        name = self.options.scheduler_name
        snapshot = own_view(self.store.snapshot(), name, self.options.namespace)
        policy = policy_from_snapshot(snapshot, self.base_policy)
        result = await asyncio.to_thread(self._schedule, snapshot, policy, at)
        self.cycles += 1
        report = CycleReport(at, True)
        budget = [self.options.max_events]
        for placement in result.placements:
            members = [snapshot.pods.get(a.pod) for a in placement.assignments]
            pairs = tuple((a.pod, a.node) for a in placement.assignments)
            if not members or not all(_ours(p, name, self.options.namespace) for p in members):
                report.decisions.append(
                    Decision(placement.job, "skipped", pairs, "a member is not ours or no longer unbound")
                )
                continue
            if self.options.dry_run:
                report.decisions.append(Decision(placement.job, "would-bind", pairs))
                continue
            if not self.is_leader():  # nothing more is written by an instance that lost the lease
                report.note = "lost the lease during the cycle: binding stopped"
                self._log(report.note)
                return report
            pods = [p for p in members if p is not None]
            assignments = [Assignment.of(p, a.node) for p, a in zip(pods, placement.assignments, strict=True)]
            assert self.writer is not None
            outcome = await bind_gang(self.writer, assignments)
            decision = _decision(placement.job, pairs, outcome, snapshot)
            report.decisions.append(decision)
            self._log(decision.line())
            report.events_posted += await self._bind_events(outcome, pods, budget)
        report.decisions.extend(self._pending(snapshot, result))
        if self.options.dry_run:
            self._print_dry(report)
        elif self.is_leader():
            report.events_posted += await self._pending_events(snapshot, report, budget)
        return report

    def _pending(self, snapshot: Snapshot, result: ScheduleResult) -> list[Decision]:
        out: list[Decision] = []
        name = self.options.scheduler_name
        for key in result.pending_order:
            plan = result.plans.get(key)
            job = snapshot.jobs.get(key)
            if plan is None or job is None or plan.placement is not None or plan.reason is None:
                continue
            if not any(_ours(snapshot.pods.get(k), name, self.options.namespace) for k in job.pending_pods):
                continue
            out.append(Decision(key, "pending", (), _reason_text(plan.reason)))
        return out

    def _print_dry(self, report: CycleReport) -> None:
        """A dry run prints each job's decision when it differs from what was printed before."""
        seen: dict[JobKey, str] = {}
        for decision in report.decisions:
            line = decision.line()
            seen[decision.job] = line
            if self._printed.get(decision.job) != line:
                self._log(line)
        self._printed = seen

    # -- Events --------------------------------------------------------------------------------------

    async def _bind_events(self, outcome: GangBindResult, pods: Sequence[Pod], budget: list[int]) -> int:
        by_uid = {p.uid: p for p in pods}
        posted = 0
        failed = next((o for o in outcome.outcomes if o.state == "failed"), None)
        for o in outcome.outcomes:
            pod = by_uid.get(o.assignment.uid)
            if pod is None:
                continue
            if o.state == "bound":
                note = f"Successfully assigned {pod.namespace}/{pod.name} to {o.assignment.node}"
                posted += await self._event(pod, "Normal", "Scheduled", "Binding", note, budget, force=True)
                continue
            why = f"{failed.assignment.name}: {failed.message}" if failed is not None else "unknown"
            if o.state == "rolled-back":
                note = f"gang binding failed at pod {why}; this member was bound and has been deleted " + (
                    "so its controller recreates it unbound"
                    if pod.owner is not None
                    else "(a bare pod: nothing recreates it; resubmit it)"
                )
                kind = "Normal" if pod.owner is not None else "Warning"
            elif o.state == "stranded":
                note = f"gang binding failed at pod {why}; this member stays bound: {o.message}"
                kind = "Warning"
            elif o.state == "failed":
                note = f"binding to {o.assignment.node} failed: {o.message}; the gang was rolled back"
                kind = "Warning"
            else:
                note = f"gang binding failed at pod {why}; this member was not bound"
                kind = "Warning"
            posted += await self._event(pod, kind, "FailedScheduling", "Binding", note, budget, force=True)
        return posted

    async def _pending_events(self, snapshot: Snapshot, report: CycleReport, budget: list[int]) -> int:
        posted = 0
        name = self.options.scheduler_name
        live: set[str] = set()
        for decision in report.of("pending"):
            job = snapshot.jobs.get(decision.job)
            for key in job.pending_pods if job is not None else ():
                pod = snapshot.pods.get(key)
                if pod is None or not _ours(pod, name, self.options.namespace):
                    continue
                live.add(pod.uid)
                posted += await self._event(
                    pod, "Warning", "FailedScheduling", "Scheduling", decision.message, budget
                )
        for uid in [u for u, (reason, _) in self._posted.items() if reason == "FailedScheduling"]:
            if uid not in live:  # placed or gone: a later FailedScheduling must be posted again
                del self._posted[uid]
        return posted

    async def _event(
        self, pod: Pod, kind: str, reason: str, action: str, note: str, budget: list[int], force: bool = False
    ) -> int:
        if not force and self._posted.get(pod.uid) == (reason, note):
            return 0
        if budget[0] <= 0:
            return 0
        budget[0] -= 1
        self._event_seq += 1
        name = f"{pod.name[:200]}.{uuid.uuid4().hex[:12]}{self._event_seq:x}"
        body: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": pod.namespace},
            "eventTime": micro_time(time.time()),
            "reportingController": REPORTING_CONTROLLER,
            "reportingInstance": self.options.identity[:128],
            "action": action,
            "reason": reason,
            "type": kind,
            "regarding": {
                "apiVersion": "v1",
                "kind": "Pod",
                "namespace": pod.namespace,
                "name": pod.name,
                "uid": pod.uid,
            },
            "note": note[:1024],
        }
        assert self.writer is not None
        path = f"/apis/events.k8s.io/v1/namespaces/{pod.namespace}/events"
        try:
            response = await self.writer.request("POST", path, body=body)
        except (ServerUnreachable, StreamBroken) as exc:
            self._event_failed(f"no answer ({exc.detail})")
            return 0
        if not response.ok:
            self._event_failed(f"HTTP {response.status}")
            return 0
        self._posted[pod.uid] = (reason, note)
        return 1

    def _event_failed(self, why: str) -> None:
        """Events are a courtesy: a failure is logged once per kind and never stops scheduling."""
        if why != self._event_error:
            self._event_error = why
            self._log(f"warning: posting Events failed ({why}); scheduling goes on without them")


def _decision(
    job: JobKey, pairs: tuple[tuple[PodKey, str], ...], outcome: GangBindResult, snapshot: Snapshot
) -> Decision:
    if outcome.ok:
        return Decision(job, "bound", pairs)
    failed = next((o for o in outcome.outcomes if o.state == "failed"), None)
    at = f" at {failed.assignment.name}: {failed.message}" if failed is not None else ""
    bare = [
        o.assignment.name
        for o in outcome.outcomes
        if o.state == "rolled-back"
        and (pod := snapshot.pods.get((o.assignment.namespace, o.assignment.name))) is not None
        and pod.owner is None
    ]
    lost = f"; bare pods deleted for good: {', '.join(bare)}" if bare else ""
    return Decision(job, "failed", pairs, f"gang not bound ({outcome.summary()}){at}{lost}")


def _default_scheduler() -> ScheduleFn:
    from hpctop.scheduling.core import schedule

    return schedule


def _print(line: str) -> None:
    print(line, flush=True)


async def run_schedule(
    kubeconfig: str | None,
    context: str | None,
    options: SchedulerOptions,
    *,
    once: bool = False,
    log: Log | None = None,
    settings: ReflectorSettings | None = None,
    stop: asyncio.Event | None = None,
) -> CycleReport | None:
    """What ``hpctop schedule`` runs: connect, then one cycle (``once``) or the loop until stopped."""
    conn = await load_connection(kubeconfig, context)
    stop = stop or asyncio.Event()
    # SIGTERM (a pod being deleted) ends the loop like Ctrl-C: the lease is released on the way
    # out, so the standby takes over at once instead of after a lease duration.
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with HeadlessScheduler(conn, options, log=log, settings=settings) as scheduler:
        if once:
            report = await scheduler.once()
            if not report.ran:
                (log or _print)(f"nothing scheduled: {report.note}")
            return report
        await scheduler.serve(stop)
    return None


__all__ = [
    "CycleReport",
    "Decision",
    "HeadlessScheduler",
    "SchedulerOptions",
    "own_view",
    "run_schedule",
]
