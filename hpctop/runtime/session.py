"""A running session: the embedded cluster, the store, the scheduling core and the binder, wired.

The session owns the loop a live hpctop-as-binder deployment would run: the cluster's events go
into the store, a snapshot goes to the core, and the core's placements are bound back through the
cluster, whose answer (events again) goes into the store. Nothing here takes decisions of its own.

Determinism is a requirement (tests, screenshots, bug reports that say "seed 1, --at 3600"): the
core runs only at fixed points of the virtual clock (every ``interval`` virtual seconds from t = 0,
whatever the size of the steps a caller takes), the store's clock is the virtual clock, and no
wall-clock time enters a decision. So the same seed and the same ``at`` give the same cluster,
whether it was reached in one call or in a thousand small steps of a console running at speed.

Cheap where it can be (PERFORMANCE.md P7), without changing what is decided:

* a scheduling point runs the core only when a bind could succeed: the cluster says whether any
  pending pod fits on any node now (:meth:`SimulatedCluster.placement_possible`, incremental). The
  core has no preemption, so when nothing fits physically a cycle would bind nothing whatever its
  order, quotas or reservations; skipping it changes no decision. A point where nothing changed
  since the last cycle (no event, no placement) is skipped too, as before, unless ``MAX_IDLE``
  has passed (ages grow, and a new order could let a job start);
* a scheduling point runs the core in placements-only mode (``schedule(..., placements_only=True)``,
  when the session uses the default core): the same binds, without the plans, reasons and
  roll-ups only the view needs (jobs that cannot be tried, e.g. over quota, are dropped before
  their priority is computed); a scheduler passed in by the caller runs as it is;
* the *view* (``snapshot`` and ``result``, what the console and the tables show) is computed when
  it is read, not after every step: a run of steps nobody looks at in between (``--at``, a
  benchmark, a console behind on its ticks) costs one core run for the view, not one per step;
* the event bytes go straight into the store without copies;
* the loop and the view read run with the automatic GC paused (the caller's state restored on
  the way out): its young collections traversed every fresh snapshot copy and core answer; what
  they leave is moved to the oldest generation untraversed (:func:`promote_young`), since it
  holds no cyclic garbage and the young collection right after found none while traversing it.
"""

from __future__ import annotations

import gc
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from hpctop.actions.requests import Actuator, ReadOnlyActuator
from hpctop.actions.simulator import SimulatorActuator
from hpctop.model.objects import JobKey, PodKey
from hpctop.model.policy import Policy
from hpctop.model.store import Snapshot, Store
from hpctop.runtime import heap
from hpctop.scheduling.priority import FrozenPriorities
from hpctop.scheduling.types import ScheduleResult
from hpctop.sources.scenario import Scenario, load_scenario
from hpctop.sources.simulator.cluster import EPOCH, Event, SimulatedCluster, SimulatorError
from hpctop.sources.simulator.logs import log_lines

ScheduleFn = Callable[[Snapshot, Policy, float], ScheduleResult]

#: virtual seconds between scheduling points (a scheduler's cycle)
DEFAULT_INTERVAL = 10.0
#: virtual seconds per real second in the demo
DEMO_SPEED = 60.0
#: run the core at least this often (virtual seconds) even when nothing changed (ages grow)
MAX_IDLE = 60.0
#: young containers (``gc.get_count()[0]``) left since the last promotion before the loop
#: promotes them (``promote_young``, see ``Session._run_due``); a scheduling point leaves ~400-1,700
YOUNG_OBJECTS = 10_000


#: containers promoted by :func:`promote_young` after which it runs one full collection instead
#: (the cyclic garbage promoted with the rest, none of the session's own, is found there)
PROMOTED_PER_FULL_COLLECTION = 2_000_000
_promoted = [0]  # containers promoted since the last such full collection (process-wide: one GC)


def promote_young() -> None:
    """Move every container the GC tracks into its oldest generation, traversing none (O(1)).

    Why: the loop and the view read run with the automatic GC paused and leave thousands of
    young containers (a view read ~6-12k: the snapshot's maps, the plans' closures, the memo's
    fresh entries), nearly all alive until the next read or point, and no reference cycle among
    them (P7 to t = 3,000 with ``gc.DEBUG_SAVEALL``: no cyclic garbage at all). With the GC back
    on, the caller's next allocation ran a young collection that traversed them all and freed
    nothing, and a middle and a full one later traversed them again (P7 to t = 4,800: 0.9-1.5 s
    of ~15 s CPU in collections). ``gc.freeze()`` then ``gc.unfreeze()`` splices the
    generations' lists into the oldest one and resets the young count, with no traversal: what
    is garbage dies by its reference count as before. Cyclic garbage young at that moment
    (another thread's, the console's widgets) waits instead for a full collection: one runs here
    every ``PROMOTED_PER_FULL_COLLECTION`` promoted containers, so it stays bounded even when
    the promotions come so often that the automatic young collections never run. Skipped when
    something is frozen (``gc.unfreeze`` would thaw it: the live console freezes its synced heap).
    """
    if heap.frozen():  # not gc.get_freeze_count(): it walks every frozen object (hpctop.runtime.heap)
        return
    _promoted[0] += gc.get_count()[0]
    if _promoted[0] >= PROMOTED_PER_FULL_COLLECTION:
        _promoted[0] = 0
        gc.collect()
        return
    gc.freeze()
    gc.unfreeze()


def default_scheduler() -> ScheduleFn:
    """The scheduling core (imported late so that the simulator works while the core is replaced in tests)."""
    from hpctop.scheduling.core import schedule

    return schedule


def default_decider() -> ScheduleFn:
    """The core in placements-only mode: the same binds as :func:`default_scheduler`, no view built."""
    from hpctop.scheduling.core import schedule

    def decide(snapshot: Snapshot, policy: Policy, now: float) -> ScheduleResult:
        return schedule(snapshot, policy, now, placements_only=True)

    return decide


@dataclass(frozen=True, slots=True)
class BindRecord:
    """A job the session bound whole at a scheduling point: when, which job, its pods' nodes and GPUs.

    Kept only when the session is asked to (``record_binds``): a benchmark that replays the same
    trace two ways (P7: headless and with the view read) compares these lists, not the counts.
    """

    at: float
    job: JobKey
    assignments: tuple[tuple[PodKey, str, tuple[int, ...]], ...]
    backfilled: bool


@dataclass(frozen=True, slots=True)
class BindFailure:
    """A placement the cluster refused; any members already bound were unbound again."""

    at: float
    job: JobKey
    pod: PodKey
    node: str
    message: str
    rolled_back: int


class Session:
    """Simulator → store → core → binds, on a virtual clock."""

    def __init__(
        self,
        cluster: SimulatedCluster,
        policy: Policy | None = None,
        source_name: str = "demo",
        *,
        speed: float = DEMO_SPEED,
        read_only: bool = False,
        scheduler: ScheduleFn | None = None,
        interval: float = DEFAULT_INTERVAL,
        record_binds: bool = False,
    ) -> None:
        if interval <= 0:
            raise ValueError("interval must be positive")
        self.cluster = cluster
        self.policy = policy if policy is not None else cluster.scenario.policy
        self.source_name = source_name
        self.speed = speed
        self.interval = interval
        self.lock = threading.RLock()
        self._schedule = scheduler if scheduler is not None else default_scheduler()
        # what the scheduling points run: only the binds matter there, so the default core runs
        # in placements-only mode (same placements); a scheduler given by the caller runs as is
        self._decide = scheduler if scheduler is not None else default_decider()
        self._decide_is_view = scheduler is not None
        self.store = Store(clock=lambda: self.cluster.now)
        self.bind_failures: deque[BindFailure] = deque(maxlen=1000)
        #: every job bound whole, in bind order, when ``record_binds`` (``None`` otherwise)
        self.bind_log: list[BindRecord] | None = [] if record_binds else None
        self.binds = 0
        self.schedule_runs = 0
        self.schedule_seconds = 0.0  # real seconds spent in the core (for the stats pane and benches)
        self._tick = 0  # next scheduling point: EPOCH + _tick * interval
        self._sched_version = -1
        self._sched_at = -math.inf
        self._placed_last = False
        self._view_version = -1
        self._view_stale = True
        self._snapshot: Snapshot | None = None
        self._result: ScheduleResult | None = None
        #: the priority each job started with, kept while it runs (Slurm freezes it at the start)
        self.frozen = FrozenPriorities()
        self.skipped_cycles = 0  # scheduling points where no bind could succeed, so the core was not run
        self._apply(cluster.initial_events())
        # The nodes, the trace and the first objects live as long as the session: collecting the
        # young generations moves them to the oldest one, so the loop's young collections stop
        # re-scanning them. Not ``gc.freeze()``, which this did before: the session is in
        # reference cycles (the store's clock, the actuator's callback, the KAI and DRA writers'
        # back references), and a frozen object is never collected, so every session built, and
        # all it held, stayed in memory for good (~67 MB per session at t = 1,200). Not a full
        # collection either: it would traverse the whole heap (the trace, an earlier session
        # left to the GC) inside every build. With the automatic GC paused in the loop and the
        # view read, the full collections that freezing spared are rare.
        gc.collect(1)
        inner = SimulatorActuator(cluster, self.store, on_change=self.refresh, lock=self.lock)
        self.actuator: Actuator = ReadOnlyActuator(inner) if read_only else inner
        self._run_due(self.cluster.now)

    # -- clock -----------------------------------------------------------------------------------

    @property
    def now(self) -> float:
        return self.cluster.now

    @property
    def elapsed(self) -> float:
        """Virtual seconds since t = 0 (what ``--at`` counts)."""
        return self.cluster.now - EPOCH

    @property
    def read_only(self) -> bool:
        return self.actuator.read_only

    @property
    def snapshot(self) -> Snapshot:
        """The store's snapshot at the current virtual time (computed on first read after a step)."""
        with self.lock:
            if self._view_stale or self._snapshot is None:
                self.refresh(force=False)
            assert self._snapshot is not None
            return self._snapshot

    @property
    def result(self) -> ScheduleResult:
        """The core's answer on :attr:`snapshot` (reasons, estimates, order) at the current time."""
        with self.lock:
            if self._view_stale or self._result is None:
                self.refresh(force=False)
            assert self._result is not None
            return self._result

    def step(self, virtual_seconds: float) -> None:
        """Advance the cluster by ``virtual_seconds``, scheduling and binding at each scheduling point.

        The view is brought up to date when it is next read (:attr:`snapshot`, :attr:`result`).
        """
        if virtual_seconds < 0:
            raise ValueError("the virtual clock only moves forward")
        with self.lock:
            self._run_due(self.cluster.now + virtual_seconds)
            self._view_stale = True

    def advance_to(self, t: float) -> None:
        """Advance to Unix time ``t`` (no-op when it is in the past)."""
        if t > self.cluster.now:
            self.step(t - self.cluster.now)

    def advance_to_elapsed(self, seconds: float) -> None:
        """Advance to ``seconds`` of virtual time since t = 0."""
        self.advance_to(EPOCH + seconds)

    def refresh(self, force: bool = True) -> None:
        """A new snapshot and schedule at the current virtual time (after a step or an action).

        With ``force`` false (what :meth:`step` does), a schedule computed at the last scheduling
        point is reused when nothing changed since and it is less than ``interval`` old: the
        console steps many times a second, and the core's answer cannot differ but for ``now``.
        """
        with self.lock:
            now = self.cluster.now
            self._view_stale = False
            result = self._result
            if (
                not force
                and result is not None
                and self._view_version == self.store.version
                and now - result.now < self.interval
            ):
                if result.now != now:
                    self._result = replace(result, now=now)
                return
            # The automatic GC stays paused as in the loop (``_run_due``): with it on, every
            # young collection during a view read traversed the snapshot's fresh copies of the
            # pod and job maps (each entry), and the full cycle's answer was promoted through
            # every generation (P7 to t = 6,000: 1.15 s of 16.6 s CPU in collections during
            # view reads). What the read leaves is promoted untraversed (``promote_young``).
            paused = gc.isenabled()
            if paused:
                gc.disable()
            try:
                self._snapshot = snapshot = self.store.snapshot()
                started = time.perf_counter()
                self._result = self.frozen.apply(self._schedule(snapshot, self.policy, now), snapshot.jobs)
                self.schedule_seconds += time.perf_counter() - started
                self.schedule_runs += 1
                self._view_version = self.store.version
            finally:
                if paused:
                    promote_young()
                    gc.enable()

    # -- the loop --------------------------------------------------------------------------------

    def _apply(self, events: list[Event]) -> None:
        apply = self.store.apply_raw
        for kind, raw in events:
            apply(kind, raw)

    def _run_due(self, target: float) -> None:
        # The cyclic GC's automatic full collections re-scan the whole store as it grows (every
        # finished pod stays); the loop makes few reference cycles, so it pauses the automatic
        # GC and collects only the young generations once per scheduling point (5-10 % less CPU
        # to t = 2,400 s of the demo, the same peak memory). Enabled again on the way out.
        # Collected only once YOUNG_OBJECTS containers were left since the last collection: a
        # collection traverses every young container whole, and each point's snapshot copies
        # (dicts of every pod) die by refcount at the next one, so collecting at every point
        # paid for traversing them (P7 profile: 0.55 s over 122 points, 1.5 ms each). Since
        # session 13 what is left is promoted untraversed instead (``promote_young``): the loop
        # leaves no cyclic garbage, and the young collections found none while they traversed it.
        paused = gc.isenabled()
        if paused:
            gc.disable()
        try:
            while True:
                tick_at = EPOCH + self._tick * self.interval
                if tick_at > target:
                    break
                self._apply(self.cluster.advance(tick_at))
                self._cycle(tick_at)
                self._tick += 1
                if paused and gc.get_count()[0] >= YOUNG_OBJECTS:
                    promote_young()
            self._apply(self.cluster.advance(target))
        finally:
            if paused:
                promote_young()
                gc.enable()

    def _cycle(self, at: float) -> None:
        unchanged = self.store.version == self._sched_version and not self._placed_last
        if unchanged and at - self._sched_at < MAX_IDLE:
            return
        if not self.cluster.placement_possible():
            # no pending pod fits on any node: the core would bind nothing (see the module's doc)
            self._placed_last = False
            self.skipped_cycles += 1
            return
        snapshot = self.store.snapshot()
        started = time.perf_counter()
        result = self._decide(snapshot, self.policy, at)
        self.schedule_seconds += time.perf_counter() - started
        self.schedule_runs += 1
        self._placed_last = bool(result.placements)
        for placement in result.placements:
            self._bind(
                placement.job,
                [(a.pod, a.node, tuple(a.gpu_indices)) for a in placement.assignments],
                at,
                backfilled=placement.backfilled,
            )
        self.frozen.started(result.placements)
        self._sched_version = self.store.version
        self._sched_at = at
        if not result.placements and self._decide_is_view:
            # nothing changed after this schedule: it is also the view's
            self._snapshot, self._result = snapshot, self.frozen.apply(result, snapshot.jobs)
            self._view_version = self.store.version

    def _bind(
        self,
        job: JobKey,
        assignments: list[tuple[PodKey, str, tuple[int, ...]]],
        at: float,
        *,
        backfilled: bool = False,
    ) -> None:
        bound: list[PodKey] = []
        for pod, node, gpus in assignments:
            try:
                events = self.cluster.bind(pod, node, gpus, backfilled=backfilled)
            except SimulatorError as exc:
                for done in bound:
                    self._apply(self.cluster.unbind(done))
                self.bind_failures.append(BindFailure(at, job, pod, node, exc.detail, len(bound)))
                return
            self._apply(events)
            bound.append(pod)
            self.binds += 1
        if self.bind_log is not None:
            self.bind_log.append(BindRecord(at, job, tuple(assignments), backfilled))

    # -- read-only views: the console's y (YAML) and l (logs) -----------------------------------

    def manifests(self, job: JobKey) -> list[dict[str, object]]:
        """The job's object and its live pods as the simulated API serves them."""
        with self.lock:
            return self.cluster.manifests(job)

    def containers(self, namespace: str, pod: str) -> list[str]:
        """The simulator's pods run one container."""
        return [SIMULATED_CONTAINER]

    def follow_log(self, namespace: str, pod: str, container: str) -> SimulatedLog:
        return SimulatedLog(self, namespace, pod, container)

    def stats(self) -> dict[str, float]:
        return {
            "virtual_elapsed_s": self.elapsed,
            "events": float(self.cluster.events_emitted),
            "binds": float(self.binds),
            "bind_failures": float(len(self.bind_failures)),
            "schedule_runs": float(self.schedule_runs),
            "skipped_cycles": float(self.skipped_cycles),
            "schedule_seconds": self.schedule_seconds,
            "skipped_objects": float(sum(self.store.skipped.values())),
        }


#: the one container of a simulated pod
SIMULATED_CONTAINER = "main"


class SimulatedLog:
    """A simulated pod's log, computed from the virtual clock on each read (:mod:`..logs`)."""

    def __init__(self, session: Session, namespace: str, pod: str, container: str) -> None:
        self.session, self.namespace, self.pod, self.container = session, namespace, pod, container
        self._note = "following"

    def lines(self) -> list[str]:
        with self.session.lock:
            span = self.session.cluster.pod_log_span(self.namespace, self.pod)
        if span is None:
            self._note = "the pod has not started (no log yet)"
            return []
        started, until, service = span
        self._note = "following" if until >= self.session.now else "ended (the pod finished)"
        return log_lines(self.pod, self.container, started, until, service=service)

    @property
    def note(self) -> str:
        return self._note

    def close(self) -> None:
        """Nothing runs in the background."""


def session_for(
    scenario: Scenario,
    source_name: str,
    *,
    seed: int = 1,
    at: float = 0.0,
    read_only: bool = False,
    speed: float = DEMO_SPEED,
    scheduler: ScheduleFn | None = None,
    gpu_api: str = "device-plugin",
    scheduler_style: str = "hpctop",
    record_binds: bool = False,
) -> Session:
    cluster = SimulatedCluster(scenario, seed=seed, gpu_api=gpu_api, scheduler_style=scheduler_style)
    if gpu_api != "device-plugin":
        source_name = f"{source_name}+{gpu_api}"  # the header says which GPU API the cluster plays
    session = Session(
        cluster,
        scenario.policy,
        source_name,
        speed=speed,
        read_only=read_only,
        scheduler=scheduler,
        record_binds=record_binds,
    )
    if at > 0:
        session.advance_to_elapsed(at)
    return session


def demo_session(
    seed: int = 1,
    at: float = 0.0,
    read_only: bool = False,
    scheduler: ScheduleFn | None = None,
    gpu_api: str = "device-plugin",
    scheduler_style: str = "hpctop",
    record_binds: bool = False,
) -> Session:
    """The demo: the Alibaba openb GPU trace (1,523 nodes, 8,152 tasks), ``at`` virtual seconds in.

    ``scheduler_style`` ``kai``: the cluster also writes KAI-Scheduler's objects (Queues,
    PodGroups, fractional GPUs, reservation pods; hpctop.sources.simulator.kai).
    """
    from hpctop.sources.simulator.trace import openb_scenario

    source = "demo" if scheduler_style == "hpctop" else f"demo:{scheduler_style}"
    return session_for(
        openb_scenario(seed),
        source,
        seed=seed,
        at=at,
        read_only=read_only,
        scheduler=scheduler,
        gpu_api=gpu_api,
        scheduler_style=scheduler_style,
        record_binds=record_binds,
    )


def scenario_session(
    path: Path,
    seed: int | None = None,
    at: float = 0.0,
    read_only: bool = False,
    scheduler: ScheduleFn | None = None,
    gpu_api: str = "device-plugin",
) -> Session:
    """A session on a scenario file; ``seed`` defaults to the file's ``[simulation] seed``, else 1."""
    scenario = load_scenario(path)
    chosen = seed if seed is not None else (scenario.seed if scenario.seed is not None else 1)
    return session_for(
        scenario,
        f"scenario:{Path(path).name}",
        seed=chosen,
        at=at,
        read_only=read_only,
        scheduler=scheduler,
        gpu_api=gpu_api,
    )
