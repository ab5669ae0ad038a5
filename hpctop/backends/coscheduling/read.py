"""coscheduling's read side: the PodGroup a gang's pods name, and what its phase says (§7.1).

Why: coscheduling (kubernetes-sigs/scheduler-plugins) is a kube-scheduler plugin; its gang is a
``scheduling.x-k8s.io`` PodGroup (``minMember``, ``scheduleTimeoutSeconds``) joined by the pod
label ``scheduling.x-k8s.io/pod-group``. Its PodGroup status carries a phase (``Pending``,
``PreScheduling``, ``Scheduling``, ``Running``, ``Failed``...) and counts, no conditions; its
PreFilter writes on the pods ("cannot find enough sibling pods", "failed recently"), which
kube-scheduler's message parser reads. So a waiting gang's own reason here is a missing member.
The PodGroup's shape is shared with Volcano (:mod:`hpctop.model.backends.podgroup`).
"""

from __future__ import annotations

from hpctop.backends.contract import Backend, ResourceSpec
from hpctop.model.backends.evidence import JobEvidence
from hpctop.model.backends.podgroup import WirePodGroup, gang_reasons, gang_state, pod_group_projection
from hpctop.model.objects import COSCHEDULING_GROUP, Reason
from hpctop.model.states import JobState, ReasonCode

COSCHEDULING_PODGROUP = "PodGroup.scheduling.x-k8s.io"
COSCHEDULING_PODGROUPS = ResourceSpec(
    COSCHEDULING_PODGROUP, COSCHEDULING_GROUP, "v1alpha1", "podgroups", namespaced=True
)
#: the phases of a gang not yet placed (apis/scheduling/v1alpha1/types.go PodGroupPhase)
_WAITING_PHASES = ("Pending", "PreScheduling", "Scheduling")


def job_state(ev: JobEvidence, state: JobState, bound: bool) -> JobState | None:
    """A coscheduling gang's PodGroup phase weighed against the pods (None: no say)."""
    return gang_state(ev, state, bound, COSCHEDULING_GROUP, _WAITING_PHASES)


def job_reasons(ev: JobEvidence, state: JobState, live_members: int) -> list[Reason] | None:
    """The PodGroup's reasons for a waiting gang (None: no coscheduling PodGroup, or starting)."""
    pg = ev.pod_group
    if pg is None or pg.group != COSCHEDULING_GROUP or state == JobState.STARTING:
        return None
    return gang_reasons(pg, ev, live_members, "coscheduling", {})


BACKEND = Backend(
    name="coscheduling",
    title="coscheduling (scheduler-plugins)",
    upstream="https://github.com/kubernetes-sigs/scheduler-plugins",
    watches=((COSCHEDULING_PODGROUPS,),),
    fixtures=("tests/fixtures/live_truth/50_coscheduling.yaml",),
    reasons=frozenset({ReasonCode.GANG_INCOMPLETE}),
    actions="hpctop.backends.coscheduling.act",
    labels=("scheduling.x-k8s.io/pod-group",),
    detects={COSCHEDULING_GROUP: "coscheduling"},
    decoders={COSCHEDULING_PODGROUP: (WirePodGroup, pod_group_projection(COSCHEDULING_GROUP))},
    object_kinds=frozenset({COSCHEDULING_PODGROUP}),
    job_state=job_state,
    job_reasons=job_reasons,
)
