"""The native gang API's read side: a PodGroup of ``scheduling.k8s.io`` as a job's gang.

Why: from Kubernetes 1.36 kube-scheduler itself gang-schedules (KEP-4671). A controller writes a
``Workload`` (``spec.podGroupTemplates[{name, schedulingPolicy.gang.minCount}]``) and, at run
time, one ``PodGroup`` per group, copying the template's policy into
``spec.schedulingPolicy.gang.minCount`` (``spec.workloadRef`` names the template); each pod names
its PodGroup in ``spec.schedulingGroup.podGroupName`` (k8s.io/api ``core/v1`` PodSpec; the older
``workloadRef`` field was replaced in 1.36). The scheduler's verdict is the PodGroup's
``PodGroupInitiallyScheduled`` condition: ``False`` with reason ``Unschedulable`` (its message is
kube-scheduler's ``0/N nodes are available: ...``) or ``SchedulerError``; ``True`` once the gang
was placed (terminal: it never reverts). ``DisruptionTarget`` (``PreemptionByScheduler``) marks a
gang about to be preempted. All from kubernetes/api ``scheduling/v1beta1/types.go``.

Feature-detected: ``scheduling.k8s.io`` is served on every cluster (PriorityClass ``v1``), so the
PodGroup is watched only at a version whose resource list names ``podgroups`` (beta ``v1beta1``
first, then alpha ``v1alpha3``, ``v1alpha2``). The Workload itself is not watched: a PodGroup
carries the policy hpctop shows (its minCount), and a Workload without PodGroups has no pods yet.
Read-only: kube-scheduler has no queue to hold or reorder; the pods' own actions apply.
"""

from __future__ import annotations

from hpctop.backends.contract import Backend, ResourceSpec, Selection, ServedApis
from hpctop.model.backends.evidence import JobEvidence
from hpctop.model.backends.unschedulable import pod_reason
from hpctop.model.objects import NATIVE_SCHEDULING_GROUP, Condition, PodGroup, Reason
from hpctop.model.projection import DecodeError, conditions, controller_of, count
from hpctop.model.resources import ZERO
from hpctop.model.states import JobState, ReasonCode
from hpctop.model.structs import ConditionS, MetaS, WireStruct

#: decoder key: ``Kind.group`` (Volcano and scheduler-plugins define ``PodGroup`` too)
NATIVE_PODGROUP = "PodGroup.scheduling.k8s.io"
VERSIONS = ("v1beta1", "v1alpha3", "v1alpha2")  # preferred first
PODGROUPS = tuple(
    ResourceSpec(NATIVE_PODGROUP, NATIVE_SCHEDULING_GROUP, v, "podgroups", namespaced=True) for v in VERSIONS
)
SCHEDULED = "PodGroupInitiallyScheduled"
DISRUPTION = "DisruptionTarget"


def select(apis: ServedApis) -> Selection:
    """PodGroup at the first version whose resource list names it (the group alone says nothing)."""
    for spec in PODGROUPS:
        listed = apis.listed(spec)
        if listed is not None and spec.plural in listed and apis.available(spec):
            return Selection((spec,), {NATIVE_SCHEDULING_GROUP: spec.version})
    return Selection()


# -- wire ----------------------------------------------------------------------------------------


class WireGang(WireStruct, frozen=True):
    needed = frozenset({"minCount"})

    minCount: int = 1


class WireSchedulingPolicy(WireStruct, frozen=True):
    needed = frozenset({"gang"})

    gang: WireGang | None = None


class WireTopologyConstraint(WireStruct, frozen=True):
    key: str = ""


class WireSchedulingConstraints(WireStruct, frozen=True):
    topology: list[WireTopologyConstraint] | None = None


class WireWorkloadRef(WireStruct, frozen=True):
    workloadName: str = ""
    templateName: str = ""


class WireNativePodGroupSpec(WireStruct, frozen=True):
    needed = frozenset({"schedulingPolicy"})

    schedulingPolicy: WireSchedulingPolicy = WireSchedulingPolicy()
    schedulingConstraints: WireSchedulingConstraints | None = None
    workloadRef: WireWorkloadRef | None = None
    priorityClassName: str | None = None


class WireNativePodGroupStatus(WireStruct, frozen=True):
    conditions: list[ConditionS] | None = None


class WireNativePodGroup(WireStruct, frozen=True):
    needed = frozenset({"spec"})

    metadata: MetaS
    spec: WireNativePodGroupSpec = WireNativePodGroupSpec()
    status: WireNativePodGroupStatus = WireNativePodGroupStatus()


def _phase(conds: tuple[Condition, ...]) -> str:
    """A phase word from the conditions: ``Scheduled``, the False reason, or ``Pending``."""
    for cond in conds:
        if cond.type == SCHEDULED:
            if cond.status == "True":
                return "Scheduled"
            return cond.reason or "Pending"
    return "Pending"


def pod_group_from_wire(w: WireNativePodGroup, _api_version: str = "") -> PodGroup:
    meta, spec = w.metadata, w.spec
    if not meta.name or not meta.namespace:
        raise DecodeError("PodGroup without metadata.name or metadata.namespace")
    gang = spec.schedulingPolicy.gang
    # a basic policy (no gang) schedules pod by pod: a group of one, for hpctop's gang purposes
    minimum = count(gang.minCount, "spec.schedulingPolicy.gang.minCount", 1) if gang is not None else 1
    conds = conditions(w.status.conditions)
    ref = spec.workloadRef
    keys = spec.schedulingConstraints.topology if spec.schedulingConstraints else None
    return PodGroup(
        group=NATIVE_SCHEDULING_GROUP,
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid,
        resource_version=meta.resourceVersion,
        owner=controller_of(meta),
        min_member=minimum,
        min_resources=ZERO,
        queue=None,  # kube-scheduler has no queues
        phase=_phase(conds),
        conditions=conds,
        priority_class=spec.priorityClassName or None,
        workload_ref=f"{ref.workloadName}/{ref.templateName}"
        if ref is not None and ref.workloadName
        else None,
        topology_keys=tuple(t.key for t in keys or () if t.key),
    )


# -- state and reasons ---------------------------------------------------------------------------


def _native(ev: JobEvidence) -> PodGroup | None:
    pg = ev.pod_group
    return pg if pg is not None and pg.group == NATIVE_SCHEDULING_GROUP else None


def job_state(ev: JobEvidence, state: JobState, bound: bool) -> JobState | None:
    """A gang not yet placed is pending whatever its pods say (None: not a native PodGroup)."""
    pg = _native(ev)
    if pg is None or state.is_finished or bound or state == JobState.HELD:
        return None
    return JobState.PENDING if pg.phase != "Scheduled" else None


def job_reasons(ev: JobEvidence, state: JobState, live_members: int) -> list[Reason] | None:
    """The scheduler's verdict on the gang, and a gang missing members (None: not native)."""
    pg = _native(ev)
    if pg is None or state == JobState.STARTING:
        return None
    out: list[Reason] = []
    for cond in pg.conditions:
        if cond.type == SCHEDULED and cond.status == "False":
            source = f"k8s:PodGroup.{SCHEDULED}"
            if cond.reason == "Unschedulable" and cond.message:
                code, fragments = pod_reason(cond.message)
                out.append(Reason(code, source, cond.message, fragments))
            else:
                out.append(Reason(ReasonCode.UNSCHEDULABLE, source, cond.message or cond.reason))
        elif cond.type == DISRUPTION and cond.status == "True":
            out.append(
                Reason(ReasonCode.PREEMPTING, f"k8s:PodGroup.{DISRUPTION}", cond.message or cond.reason)
            )
    if live_members < pg.min_member:
        out.append(
            Reason(
                ReasonCode.GANG_INCOMPLETE,
                "k8s:PodGroup.gang.minCount",
                f"{live_members} of minCount {pg.min_member} pods exist",
            )
        )
    return out


REASONS: frozenset[ReasonCode] = frozenset(
    {
        ReasonCode.GANG_INCOMPLETE,
        ReasonCode.UNSCHEDULABLE,
        ReasonCode.PREEMPTING,
        # what kube-scheduler's message parses into (pod_reason)
        ReasonCode.RESOURCES,
        ReasonCode.CONSTRAINTS,
        ReasonCode.NODE_UNAVAILABLE,
        ReasonCode.TOPOLOGY,
    }
)

BACKEND = Backend(
    name="workload-api",
    title="Kubernetes Workload API (native gangs, KEP-4671)",
    upstream="https://github.com/kubernetes/api",
    watches=(PODGROUPS,),
    fixtures=("tests/fixtures/gangs_2026/gangs.yaml",),
    reasons=REASONS,
    actions=None,
    read_only="kube-scheduler's gangs have no queue to hold, reorder or close; the pods' own actions apply",
    decoders={NATIVE_PODGROUP: (WireNativePodGroup, pod_group_from_wire)},
    object_kinds=frozenset({NATIVE_PODGROUP}),
    select=select,
    job_state=job_state,
    job_reasons=job_reasons,
)

__all__ = ["BACKEND", "NATIVE_PODGROUP"]
