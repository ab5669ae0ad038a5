"""PodGroup, the gang object Volcano and coscheduling share the shape of (SCHEDULERS.md §6.2, §7.1).

Why neutral: ``scheduling.volcano.sh`` and ``scheduling.x-k8s.io`` both define a PodGroup with
``minMember``, ``minResources``, ``phase`` and conditions; one wire model and one projection read
both (decoder keys ``PodGroup.<group>``), and the reasons they share (a closed queue, an
``Unschedulable`` condition, fewer pods than ``minMember``) are written once, here, for the two
backends' ``read`` modules, which add what is their own (Volcano's phases, its queue capability).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

from hpctop.model.backends.evidence import JobEvidence, queue_reason
from hpctop.model.backends.wire import Quantity
from hpctop.model.objects import PodGroup, Reason
from hpctop.model.projection import DecodeError, conditions, controller_of, count
from hpctop.model.resources import Resources
from hpctop.model.states import JobState, ReasonCode
from hpctop.model.structs import ConditionS, MetaS, WireStruct


class WireNetworkTopology(WireStruct, frozen=True):
    """Volcano's ``networkTopology`` (volcano-sh/apis ``scheduling/v1beta1/types.go``)."""

    mode: str = "hard"
    highestTierAllowed: int | None = None
    highestTierName: str | None = None


class WirePodGroupSpec(WireStruct, frozen=True):
    needed = frozenset({"minMember", "minResources", "queue"})

    networkTopology: WireNetworkTopology | None = None  # Volcano only

    minMember: int = 1
    minResources: dict[str, Quantity] | None = None
    queue: str | None = None
    priorityClassName: str | None = None
    scheduleTimeoutSeconds: int | None = None


class WirePodGroupStatus(WireStruct, frozen=True):
    needed = frozenset({"phase"})

    phase: str | None = None
    conditions: list[ConditionS] | None = None
    running: int | None = None
    succeeded: int | None = None
    failed: int | None = None
    scheduled: int | None = None


class WirePodGroup(WireStruct, frozen=True):
    needed = frozenset({"spec", "status"})

    metadata: MetaS
    spec: WirePodGroupSpec = WirePodGroupSpec()
    status: WirePodGroupStatus = WirePodGroupStatus()


def pod_group_projection(group: str, default_queue: str = "") -> Callable[[WirePodGroup, str], PodGroup]:
    """The projection of ``group``'s PodGroups (``default_queue``: where one naming none waits)."""

    def project(w: WirePodGroup, _api_version: str = "") -> PodGroup:
        meta, spec, status = w.metadata, w.spec, w.status
        if not meta.name or not meta.namespace:
            raise DecodeError("PodGroup without metadata.name or metadata.namespace")
        min_member = count(spec.minMember, "spec.minMember", 1)
        queue = spec.queue
        if not queue and default_queue:
            queue = default_queue
        return PodGroup(
            group=group,
            namespace=meta.namespace,
            name=meta.name,
            uid=meta.uid,
            resource_version=meta.resourceVersion,
            owner=controller_of(meta),
            min_member=min_member,
            min_resources=Resources.from_k8s(spec.minResources, aggregate=True),
            queue=queue or None,
            phase=status.phase or "Pending",
            conditions=conditions(status.conditions),
            priority_class=spec.priorityClassName,
            timeout_s=spec.scheduleTimeoutSeconds,
            running=status.running or 0,
            succeeded=status.succeeded or 0,
            failed=status.failed or 0,
            scheduled=status.scheduled or 0,
            network_topology=_network_topology(spec.networkTopology),
        )

    return project


def _network_topology(nt: WireNetworkTopology | None) -> tuple[str, str | None] | None:
    """(mode, the highest tier allowed: its number or its name), or None when unset."""
    if nt is None:
        return None
    highest = str(nt.highestTierAllowed) if nt.highestTierAllowed is not None else nt.highestTierName
    return (nt.mode or "hard", highest or None)


def gang_state(
    ev: JobEvidence, state: JobState, bound: bool, group: str, waiting: Collection[str]
) -> JobState | None:
    """What a ``group`` PodGroup's phase says of its gang beside the pods (None: no say).

    Only a gang that has not started and is not held or finished is the PodGroup's to judge: a
    phase in ``waiting`` (each backend's own, e.g. Volcano's ``Inqueue``) is PENDING, ``Failed`` is
    FAILED; once a member is bound the pods speak.
    """
    pg = ev.pod_group
    if pg is None or pg.group != group:
        return None
    if state.is_finished or bound or state == JobState.HELD:
        return None
    if pg.phase in waiting:
        return JobState.PENDING
    if pg.phase == "Failed":
        return JobState.FAILED
    return None


def gang_reasons(
    pg: PodGroup, ev: JobEvidence, live_members: int, prefix: str, unschedulable: Mapping[str, ReasonCode]
) -> list[Reason]:
    """What any PodGroup says about its waiting gang: its queue closed, ``Unschedulable``, too few pods.

    ``prefix`` names the backend in each reason's source; ``unschedulable`` maps the condition's
    reasons to codes (any other is ``Unschedulable``).
    """
    out: list[Reason] = []
    found = queue_reason(ev.queue_info, f"{prefix}:Queue.state")
    if found is not None:
        out.append(found)
    condition = pg.condition("Unschedulable")
    if condition is not None:
        code = unschedulable.get(condition.reason, ReasonCode.UNSCHEDULABLE)
        out.append(Reason(code, f"{prefix}:PodGroup.Unschedulable", condition.message or condition.reason))
    if live_members < pg.min_member:
        out.append(
            Reason(
                ReasonCode.GANG_INCOMPLETE,
                f"{prefix}:PodGroup.minMember",
                f"{live_members} of minMember {pg.min_member} pods exist",
            )
        )
    return out
