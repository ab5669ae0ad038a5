"""Kueue's read side: what hpctop watches, how it decodes it, how a Workload explains a job.

Why one folder: a newcomer asking "what does hpctop do with Kueue?" reads this file, ``wire``
beside it (the Structs and projections) and ``act`` (the actions). Kueue (kubernetes-sigs/kueue,
SCHEDULERS.md §5) admits *suspended* jobs by quota: its Workload, one per job, carries the
verdict in conditions (``QuotaReserved``, ``Admitted``, ``Evicted``, ``PodsReady``,
``Finished``) and the queue in ``spec.queueName`` (a LocalQueue) →
``status.admission.clusterQueue``. Here:

- **watches**: Workload, ClusterQueue, LocalQueue, Cohort, ResourceFlavor, at v1beta2 or v1beta1
  (the served version decides; Cohort may be served at v1alpha1 on older releases), and TAS's
  Topology where discovery lists it (v1alpha1 before v0.14);
- **also reads**: an admitted Workload's (compressed) ``topologyAssignment`` and its pod sets'
  ``topologyRequest`` (``wire``), MultiKueue's ``status.clusterName``/``nominatedClusterNames``,
  LocalQueue admission fair sharing (``status.fairSharing``); the detailed ``QuotaReserved=False``
  reasons of v0.19 (``WaitingForQuota``, ``ExceedsMaxQuota``, ``TopologyPlacementFailed``,
  ``PendingEvaluation``, ...) lead the message that is the reason's evidence;
- **decodes** (:mod:`hpctop.backends.kueue.wire`): one wire model reads both versions
  (``cohort`` vs ``cohortName``, ``priorityClassName`` vs ``priorityClassRef``); lists marked
  ``omitempty`` upstream are optional here, missing meaning empty. Quota amounts are summed over
  many nodes, so they are bounded as aggregates (never negative, at most 2^60), not per node;
- **state and reasons**: a Kueue job waiting for quota is suspended, which is *pending*, not held;
  the reason comes from the Workload's conditions (§5.3), never from the pods;
- **queues**: ``root.<cohort>[.<child cohort>...].<clusterqueue>``; a ClusterQueue without a
  cohort is ``root.<clusterqueue>``; a job's ``queue`` is its ClusterQueue's path (quota lives
  there), LocalQueues are listed as kind ``local`` at ``<cq path>.<namespace>/<name>`` for display
  and carry no quota. Kueue quotas are summed over flavors into ``guaranteed`` (per-flavor detail
  stays in ``flavors``); ``max`` is nominal + borrowingLimit per resource, or no limit where a
  ClusterQueue in a cohort may borrow without one; a top-level cohort's ``max`` is its pool
  (what its members and it hold), its ``borrowed`` what its members borrow from one another.

It imports the model (and the neutral helpers in :mod:`hpctop.model.backends`) only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from hpctop.backends.contract import (
    Backend,
    QueuePlace,
    ResourceSpec,
    Selection,
    ServedApis,
)
from hpctop.backends.kueue.wire import (
    CLUSTER_QUEUE,
    COHORT,
    KUEUE_TOPOLOGY,
    KUEUE_WORKLOAD,
    LOCAL_QUEUE,
    RESOURCE_FLAVOR,
    WireClusterQueue,
    WireCohort,
    WireKueueWorkload,
    WireLocalQueue,
    WireResourceFlavor,
    WireTopology,
    cluster_queue_from_wire,
    cohort_from_wire,
    kueue_workload_from_wire,
    local_queue_from_wire,
    resource_flavor_from_wire,
    topology_from_wire,
)
from hpctop.model.backends.evidence import JobEvidence, queue_reason
from hpctop.model.backends.queues import QueueIndex, escape
from hpctop.model.backends.wire import resources_of
from hpctop.model.objects import (
    ClusterQueue,
    Cohort,
    FlavorQuota,
    KueueWorkload,
    LocalQueue,
    QueueInfo,
    Reason,
)
from hpctop.model.policy import ROOT
from hpctop.model.resources import ZERO, Resources
from hpctop.model.states import JobState, ReasonCode

# -- what it watches ---------------------------------------------------------------------------

KUEUE_GROUP = "kueue.x-k8s.io"
VISIBILITY_GROUP = "visibility.kueue.x-k8s.io"
#: the visibility API's versions, preferred first (v1alpha1 in the earliest releases)
VISIBILITY_VERSIONS = ("v1beta2", "v1beta1", "v1alpha1")
KUEUE_VERSIONS = ("v1beta2", "v1beta1")  # preferred first (SCHEDULERS.md §5.1)
#: Cohort was v1alpha1 before it joined the group's versions (Topology too, before v0.14)
COHORT_VERSIONS = ("v1beta2", "v1beta1", "v1alpha1")
_LATER_VERSIONED = (COHORT, KUEUE_TOPOLOGY)


def kueue_resources(version: str = "v1beta2", cohort_version: str | None = None) -> tuple[ResourceSpec, ...]:
    """Kueue's objects at one served version (Cohort may be served at another: v1alpha1 before)."""
    g = KUEUE_GROUP
    return (
        ResourceSpec(KUEUE_WORKLOAD, g, version, "workloads", namespaced=True),
        ResourceSpec(CLUSTER_QUEUE, g, version, "clusterqueues", namespaced=False),
        ResourceSpec(LOCAL_QUEUE, g, version, "localqueues", namespaced=True),
        ResourceSpec(COHORT, g, cohort_version or version, "cohorts", namespaced=False),
        ResourceSpec(RESOURCE_FLAVOR, g, version, "resourceflavors", namespaced=False),
        ResourceSpec(KUEUE_TOPOLOGY, g, version, "topologies", namespaced=False),
    )


#: every kind with the versions understood, preferred first
WATCHES: tuple[tuple[ResourceSpec, ...], ...] = tuple(
    tuple(
        replace(spec, version=v)
        for v in (COHORT_VERSIONS if spec.kind in _LATER_VERSIONED else KUEUE_VERSIONS)
    )
    for spec in kueue_resources()
)


def _cohort(spec: ResourceSpec, served: tuple[str, ...], apis: ServedApis) -> ResourceSpec | None:
    """Kueue's Cohort: at the group's version if listed there, else the newest version listing it.

    Without resource lists, a v1beta1 Kueue that also serves v1alpha1 is one whose Cohort is still
    v1alpha1 (it became v1beta1 in later releases, which also serve v1beta2).
    """
    if apis.listed(spec) is not None:
        if apis.available(spec):
            return spec
        for version in COHORT_VERSIONS:
            alt = replace(spec, version=version)
            if alt.version in served and apis.listed(alt) is not None and apis.available(alt):
                return alt
        return None
    if spec.version == "v1beta1" and "v1alpha1" in served:
        return replace(spec, version="v1alpha1")
    return spec


def select(apis: ServedApis) -> Selection:
    """One served version for the whole group (v1beta2 over v1beta1), Cohort where it is listed."""
    served = apis.versions(KUEUE_GROUP)
    version = next((v for v in KUEUE_VERSIONS if v in served), None)
    chosen: list[ResourceSpec] = []
    versions: dict[str, str] = {}
    if version is not None:
        versions[KUEUE_GROUP] = version
        for spec in kueue_resources(version):
            if spec.kind == KUEUE_TOPOLOGY:
                picked = next(
                    (alt for v in COHORT_VERSIONS if apis.available(alt := replace(spec, version=v))), None
                )
                if picked is not None and apis.listed(picked) is not None:
                    chosen.append(picked)  # an optional kind: watched only where discovery lists it
                continue
            picked = _cohort(spec, served, apis) if spec.kind == COHORT else spec
            if picked is not None and apis.available(picked):
                chosen.append(picked)
    for v in VISIBILITY_VERSIONS:  # the visibility API (pending positions)
        if v in apis.versions(VISIBILITY_GROUP):
            versions[VISIBILITY_GROUP] = v
            break
    return Selection(tuple(chosen), versions)


# -- how its evidence becomes state --------------------------------------------------------------

_KUEUE_EVICTED_STATES = {
    "Preempted": JobState.PREEMPTED,
    "MaximumExecutionTimeExceeded": JobState.TIMEOUT,
}


def job_state(ev: JobEvidence, state: JobState, bound: bool) -> JobState | None:
    """The job's state once its Workload is weighed against what the pods say (None: no Workload).

    ``bound``: some live member is on a node (pods beat a stale queue condition for running work).
    """
    wl = ev.kueue
    if wl is None:
        return None
    finished = wl.condition("Finished")
    if finished is not None and finished.status == "True":
        return JobState.FAILED if finished.reason == "Failed" else JobState.COMPLETED
    if state.is_finished:
        return state
    if not wl.active:
        return JobState.HELD
    reserved = wl.condition("QuotaReserved")
    if reserved is None or reserved.status != "True":
        if bound:
            return state  # pods still winding down after an eviction
        evicted = wl.condition("Evicted")
        if evicted is not None and evicted.status == "True" and evicted.reason in _KUEUE_EVICTED_STATES:
            return _KUEUE_EVICTED_STATES[evicted.reason]
        if _backing_off(wl):
            return JobState.REQUEUED
        return JobState.PENDING  # a Kueue job waits suspended: that is pending, not held
    if state == JobState.HELD:
        return JobState.PENDING  # quota reserved, job not yet unsuspended (admission checks)
    return state


def _backing_off(wl: KueueWorkload) -> bool:
    if wl.requeue_at is None:
        return False
    requeued = wl.condition("Requeued")
    return requeued is None or requeued.status != "True"


# -- how its evidence becomes reasons ------------------------------------------------------------

_KUEUE_QUOTA_REASONS = {
    "Inadmissible": ReasonCode.INADMISSIBLE,
    "Misconfigured": ReasonCode.INADMISSIBLE,
    "NoMatchingFlavor": ReasonCode.NO_MATCHING_FLAVOR,
    "WaitingForQuota": ReasonCode.QUOTA_EXCEEDED,
    "ExceedsMaxQuota": ReasonCode.QUOTA_EXCEEDED,
    "TopologyPlacementFailed": ReasonCode.TOPOLOGY,
    "WaitingForPreemptedWorkloads": ReasonCode.PREEMPTING,
    "Suspended": ReasonCode.HELD,
    # not yet looked at by the scheduler: behind others in the queue
    "PendingEvaluation": ReasonCode.PRIORITY,
    # waiting for admitted workloads to become ready (waitForPodsReady blockAdmission)
    "WaitingForPodsReady": ReasonCode.WAITING_FOR_SCHEDULING,
}
_KUEUE_EVICTED_REASONS = {
    "PodsReadyTimeout": ReasonCode.GANG_TIMEOUT,
    "NodeFailures": ReasonCode.NODE_UNAVAILABLE,
    "ClusterQueueStopped": ReasonCode.QUEUE_HELD,
    "LocalQueueStopped": ReasonCode.QUEUE_HELD,
    "Deactivated": ReasonCode.HELD,
}


def _kueue_pending_code(reason: str, message: str) -> ReasonCode:
    """``QuotaReserved=False`` → code; reason ``Pending`` is read from its message (older Kueue)."""
    if reason in _KUEUE_QUOTA_REASONS:
        return _KUEUE_QUOTA_REASONS[reason]
    text = message.lower()
    if "insufficient" in text or "quota" in text or "exceed" in text:
        return ReasonCode.QUOTA_EXCEEDED
    if "doesn't match" in text or "does not match" in text or "untolerated" in text or "no flavor" in text:
        return ReasonCode.NO_MATCHING_FLAVOR
    if "doesn't exist" in text or "inactive" in text or "not found" in text:
        return ReasonCode.INADMISSIBLE
    return ReasonCode.QUOTA_EXCEEDED


def _detailed(reason: str, message: str) -> str:
    """The message as evidence, led by Kueue's detailed reason (v0.19: WaitingForQuota, ...)."""
    if reason in _KUEUE_QUOTA_REASONS and message:
        return f"{reason}: {message}"
    return message or reason


def _kueue_reasons(wl: KueueWorkload, ev: JobEvidence, state: JobState) -> list[Reason]:
    out: list[Reason] = []
    if not wl.active:
        out.append(Reason(ReasonCode.HELD, "kueue:Workload.spec.active", "spec.active=false"))
    for info in (ev.local_queue, ev.queue_info):
        found = queue_reason(info, "kueue:ClusterQueue.stopPolicy")
        if found is not None:
            out.append(found)
    reserved = wl.condition("QuotaReserved")
    if reserved is None and not wl.conditions and wl.active:
        out.append(
            Reason(ReasonCode.PRIORITY, "kueue:Workload", "not yet evaluated: behind others in the queue")
        )
    elif reserved is not None and reserved.status == "False":
        code = _kueue_pending_code(reserved.reason, reserved.message)
        out.append(Reason(code, "kueue:Workload.QuotaReserved", _detailed(reserved.reason, reserved.message)))
    evicted = wl.condition("Evicted")
    if evicted is not None and evicted.status == "True" and evicted.reason in _KUEUE_EVICTED_REASONS:
        code = _KUEUE_EVICTED_REASONS[evicted.reason]
        if code != ReasonCode.HELD or wl.active:
            out.append(Reason(code, "kueue:Workload.Evicted", evicted.message or evicted.reason))
    if _backing_off(wl) and wl.requeue_at is not None:
        at = datetime.fromtimestamp(wl.requeue_at, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        out.append(
            Reason(ReasonCode.BACKOFF, "kueue:Workload.requeueState", f"requeue #{wl.requeue_count} at {at}")
        )
    admitted = wl.condition("Admitted")
    if (
        admitted is not None
        and admitted.status == "False"
        and admitted.reason == "UnsatisfiedAdmissionChecks"
        and reserved is not None
        and reserved.status == "True"
    ):
        out.append(
            Reason(ReasonCode.ADMISSION_CHECK, "kueue:Workload.Admitted", admitted.message or admitted.reason)
        )
    if wl.cluster_name and reserved is not None and reserved.status == "True" and state.is_pending:
        where = f"dispatched to worker cluster {wl.cluster_name} (MultiKueue): its pods run there"
        out.append(Reason(ReasonCode.WAITING_FOR_SCHEDULING, "kueue:Workload.status.clusterName", where))
    ready = wl.condition("PodsReady")
    if state == JobState.STARTING and ready is not None and ready.status == "False":
        out.append(Reason(ReasonCode.STARTING, "kueue:Workload.PodsReady", ready.message or ready.reason))
    return out


def job_reasons(ev: JobEvidence, state: JobState, live_members: int) -> list[Reason] | None:
    """Every reason the Workload gives for a waiting (or starting) job; None: no Workload."""
    return None if ev.kueue is None else _kueue_reasons(ev.kueue, ev, state)


#: every code :func:`job_reasons` can give
REASONS: frozenset[ReasonCode] = frozenset(
    {
        *_KUEUE_QUOTA_REASONS.values(),
        *_KUEUE_EVICTED_REASONS.values(),
        ReasonCode.HELD,
        ReasonCode.QUEUE_HELD,
        ReasonCode.PRIORITY,
        ReasonCode.BACKOFF,
        ReasonCode.ADMISSION_CHECK,
        ReasonCode.STARTING,
        ReasonCode.WAITING_FOR_SCHEDULING,
    }
)


# -- its queues ----------------------------------------------------------------------------------

#: the lookups :func:`fold_queues` adds to the neutral tree (QueueIndex.lookup)
CQ_PATHS = "kueue.clusterqueue"  # ClusterQueue name → path
LQ_PATHS = "kueue.localqueue"  # (namespace, LocalQueue) → path
LOCAL_CQ = "kueue.localqueue.clusterqueue"  # (namespace, LocalQueue) → ClusterQueue name


def _cells(quotas: Iterable[FlavorQuota], which: str) -> Resources | None:
    values = [(q.resource, getattr(q, which)) for q in quotas if getattr(q, which) is not None]
    return resources_of(values) if values else None


def _kueue_max(cq: ClusterQueue) -> Resources | None:
    nominal = resources_of((q.resource, q.nominal) for q in cq.quotas)
    if cq.cohort is None:
        return nominal  # nothing to borrow from
    cells = [(q.resource, q.nominal + q.borrowing_limit) for q in cq.quotas if q.borrowing_limit is not None]
    limit = resources_of(cells)
    return limit if limit != ZERO else None


def _kueue(
    cohorts: list[Cohort], cqs: list[ClusterQueue], lqs: list[LocalQueue], out: dict[str, QueueInfo]
) -> tuple[dict[str, str], dict[tuple[str, str], str], dict[tuple[str, str], str]]:
    parents: dict[str, str | None] = {c.name: c.parent for c in cohorts}
    for cq in cqs:
        if cq.cohort is not None:
            parents.setdefault(cq.cohort, None)
    cohort_path: dict[str, str] = {}

    def path_of(name: str) -> str:
        if name in cohort_path:
            return cohort_path[name]
        chain: list[str] = []
        seen: set[str] = set()
        cur: str | None = name
        while cur is not None and cur not in seen:  # a parent cycle is cut where it closes
            seen.add(cur)
            chain.append(cur)
            cur = parents.get(cur)
        path = ".".join([ROOT, *(escape(c) for c in reversed(chain))])
        cohort_path[name] = path
        return path

    by_cohort = {c.name: c for c in cohorts}
    cq_path: dict[str, str] = {}
    for cq in cqs:
        base = path_of(cq.cohort) if cq.cohort is not None else ROOT
        cq_path[cq.name] = f"{base}.{escape(cq.name)}"
    # cohorts first (their usage is rolled up from the ClusterQueues below)
    pools: dict[str, list[QueueInfo]] = {}
    for cq in cqs:
        active = next((c for c in cq.conditions if c.type == "Active"), None)
        if cq.stop_policy not in ("", "None"):
            state, why = "Held", f"kueue:ClusterQueue.stopPolicy={cq.stop_policy}"
        elif active is not None and active.status == "False":
            state, why = (
                "Closed",
                f"kueue:ClusterQueue.Active=False {active.reason}: {active.message}".strip(),
            )
        else:
            state, why = "Open", ""
        parent = path_of(cq.cohort) if cq.cohort is not None else ROOT
        info = QueueInfo(
            path=cq_path[cq.name],
            name=cq.name,
            parent=parent,
            kind="cluster",
            backend="kueue",
            state=state,
            guaranteed=resources_of((q.resource, q.nominal) for q in cq.quotas),
            max=_kueue_max(cq),
            borrowing_limit=_cells(cq.quotas, "borrowing_limit"),
            lending_limit=_cells(cq.quotas, "lending_limit"),
            weight=cq.weight,
            allocated=resources_of((u.resource, u.total) for u in cq.usage),
            borrowed=resources_of((u.resource, u.borrowed) for u in cq.usage),
            pending_jobs=cq.pending_workloads,
            admitted_jobs=cq.admitted_workloads,
            flavors=cq.quotas,
            usage=cq.usage,
            state_reason=why,
        )
        out[info.path] = info
        if cq.cohort is not None:
            pools.setdefault(cq.cohort, []).append(info)
    # deepest cohorts first, so a parent cohort sums its child cohorts' totals
    for name in sorted(parents, key=lambda n: -path_of(n).count(".")):
        cohort = by_cohort.get(name)
        members = pools.get(name, [])
        own = resources_of((q.resource, q.nominal) for q in cohort.quotas) if cohort else ZERO
        pool = sum((m.guaranteed for m in members), own)
        parent_name = parents.get(name)
        info = QueueInfo(
            path=path_of(name),
            name=name,
            parent=path_of(parent_name) if parent_name is not None else ROOT,
            kind="cohort",
            backend="kueue",
            state="Open",
            guaranteed=pool,
            max=pool if parent_name is None and pool != ZERO else None,
            weight=cohort.weight if cohort else None,
            allocated=sum((m.allocated for m in members), ZERO),
            borrowed=sum((m.borrowed for m in members), ZERO),
            pending_jobs=sum(m.pending_jobs for m in members),
            admitted_jobs=sum(m.admitted_jobs for m in members),
            flavors=cohort.quotas if cohort else (),
        )
        out[info.path] = info
        if parent_name is not None:
            pools.setdefault(parent_name, []).append(info)
    lq_path: dict[tuple[str, str], str] = {}
    local_cq: dict[tuple[str, str], str] = {}
    for lq in lqs:
        parent = cq_path.get(lq.cluster_queue) or f"{ROOT}.{escape(lq.cluster_queue)}"
        path = f"{parent}.{lq.namespace}/{escape(lq.name)}"
        held = lq.stop_policy not in ("", "None")
        out[path] = QueueInfo(
            path=path,
            name=lq.name,
            parent=parent,
            kind="local",
            backend="kueue",
            state="Held" if held else ("Open" if lq.cluster_queue in cq_path else "Unknown"),
            pending_jobs=lq.pending_workloads,
            admitted_jobs=lq.admitted_workloads,
            state_reason=f"kueue:LocalQueue.stopPolicy={lq.stop_policy}" if held else "",
        )
        lq_path[(lq.namespace, lq.name)] = path
        local_cq[(lq.namespace, lq.name)] = lq.cluster_queue
    return cq_path, lq_path, local_cq


def fold_queues(objects: Iterable[object], out: dict[str, QueueInfo]) -> Mapping[str, Mapping[Any, str]]:
    """Kueue's Cohorts, ClusterQueues and LocalQueues into the neutral tree (see the module)."""
    cohorts: list[Cohort] = []
    cqs: list[ClusterQueue] = []
    lqs: list[LocalQueue] = []
    for obj in objects:
        if isinstance(obj, ClusterQueue):
            cqs.append(obj)
        elif isinstance(obj, LocalQueue):
            lqs.append(obj)
        elif isinstance(obj, Cohort):
            cohorts.append(obj)
    if not (cqs or lqs or cohorts):
        return {}
    cq_path, lq_path, local_cq = _kueue(cohorts, cqs, lqs, out)
    return {CQ_PATHS: cq_path, LQ_PATHS: lq_path, LOCAL_CQ: local_cq}


def queue_shape(obj: object) -> tuple[object, ...] | None:
    """What of a Kueue queue object moves a job's queue path or QueueHeld reason (not its usage)."""
    if isinstance(obj, ClusterQueue):
        active = next((c.status for c in obj.conditions if c.type == "Active"), None)
        return (obj.cohort, obj.stop_policy, active)
    if isinstance(obj, LocalQueue):
        return (obj.cluster_queue, obj.stop_policy)
    if isinstance(obj, Cohort):
        return (obj.parent,)
    return None


def place_in_queue(ev: JobEvidence, _queue_name: str | None, index: QueueIndex) -> QueuePlace | None:
    """A Kueue job waits in its admitting ClusterQueue, else its LocalQueue's (None: no Workload)."""
    wl = ev.kueue
    if wl is None:
        return None
    lq = (wl.namespace, wl.queue_name)
    cq = wl.cluster_queue or index.lookup(LOCAL_CQ).get(lq)
    path = (index.lookup(CQ_PATHS).get(cq) or f"{ROOT}.{escape(cq)}") if cq else None
    local_path = index.lookup(LQ_PATHS).get(lq)
    return QueuePlace(path, index.queues.get(local_path) if local_path else None)


# -- the descriptor ------------------------------------------------------------------------------

BACKEND = Backend(
    name="kueue",
    title="Kueue",
    upstream="https://github.com/kubernetes-sigs/kueue",
    watches=WATCHES,
    fixtures=(
        "tests/fixtures/live_truth/20_kueue.yaml",
        "tests/fixtures/backends/kueue_quota_borrowing.json",
    ),
    reasons=REASONS,
    actions="hpctop.backends.kueue.act",
    labels=("kueue.x-k8s.io/",),
    detects={KUEUE_GROUP: "kueue", VISIBILITY_GROUP: "kueue-visibility"},
    decoders={
        KUEUE_WORKLOAD: (WireKueueWorkload, kueue_workload_from_wire),
        CLUSTER_QUEUE: (WireClusterQueue, lambda w, _: cluster_queue_from_wire(w)),
        LOCAL_QUEUE: (WireLocalQueue, lambda w, _: local_queue_from_wire(w)),
        COHORT: (WireCohort, lambda w, _: cohort_from_wire(w)),
        RESOURCE_FLAVOR: (WireResourceFlavor, lambda w, _: resource_flavor_from_wire(w)),
        KUEUE_TOPOLOGY: (WireTopology, topology_from_wire),
    },
    aliases={"Workload": KUEUE_WORKLOAD, "ClusterQueue": CLUSTER_QUEUE, "LocalQueue": LOCAL_QUEUE},
    object_kinds=frozenset(
        {KUEUE_WORKLOAD, CLUSTER_QUEUE, LOCAL_QUEUE, COHORT, RESOURCE_FLAVOR, KUEUE_TOPOLOGY}
    ),
    select=select,
    job_state=job_state,
    job_reasons=job_reasons,
    fold_queues=fold_queues,
    queue_shape=queue_shape,
    place_in_queue=place_in_queue,
)
