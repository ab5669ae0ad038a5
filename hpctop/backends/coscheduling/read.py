"""coscheduling's read side: the PodGroup a gang's pods name, and what its phase says.

Why: coscheduling is a kube-scheduler plugin; its gang is a ``scheduling.x-k8s.io`` PodGroup
(``minMember``, ``scheduleTimeoutSeconds``) joined by the pod label
``scheduling.x-k8s.io/pod-group``, and its PreFilter writes on the pods ("cannot find enough
sibling pods", "failed recently": parsed with kube-scheduler's messages).
"""

from __future__ import annotations

from hpctop.backends.contract import Backend, ResourceSpec
from hpctop.model.backends.wire import COSCHEDULING_PODGROUP, POD_GROUP_DECODERS
from hpctop.model.objects import COSCHEDULING_GROUP
from hpctop.model.states import ReasonCode

COSCHEDULING_PODGROUPS = ResourceSpec(
    COSCHEDULING_PODGROUP, COSCHEDULING_GROUP, "v1alpha1", "podgroups", namespaced=True
)

REASONS: frozenset[ReasonCode] = frozenset(
    {ReasonCode.GANG_INCOMPLETE, ReasonCode.UNSCHEDULABLE, ReasonCode.QUEUE_HELD}
)

BACKEND = Backend(
    name="coscheduling",
    title="coscheduling (scheduler-plugins)",
    upstream="https://github.com/kubernetes-sigs/scheduler-plugins",
    watches=((COSCHEDULING_PODGROUPS,),),
    fixtures=("tests/fixtures/live_truth/50_coscheduling.yaml",),
    reasons=REASONS,
    actions="hpctop.backends.coscheduling.act",
    detects={COSCHEDULING_GROUP: "coscheduling"},
    decoders={COSCHEDULING_PODGROUP: POD_GROUP_DECODERS[COSCHEDULING_PODGROUP]},
    object_kinds=frozenset({COSCHEDULING_PODGROUP}),
)
