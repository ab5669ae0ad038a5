"""kube-scheduler's read side: the core resources, their decoders, what its pod conditions say.

Why: with no queueing layer, a job is its owner (a batch Job, a Deployment, a StatefulSet, or a
lone pod) and its pods, and the only scheduler evidence is each pod's ``PodScheduled`` condition,
written by kube-scheduler's plugins (pkg/scheduler/framework/plugins/*): ``SchedulingGated``,
``Unschedulable`` with ``0/N nodes are available: <n> <why>, ...``. These resources are served by
every API server, so they are never looked up in discovery (``builtin``).
:func:`parse_unschedulable` reads the message into ``(count, code, detail)`` fragments (§2.1),
:func:`pod_reason` into the code of the job. The pods' decoders live in
:mod:`hpctop.model.structs` / :mod:`hpctop.model.projection` (every backend reads pods); this
module registers them.
"""

from __future__ import annotations

from hpctop.backends.contract import Backend, ResourceSpec
from hpctop.model import structs
from hpctop.model.backends.unschedulable import parse_unschedulable, pod_reason
from hpctop.model.backends.wire import workload_decoder
from hpctop.model.projection import node_from_struct, pod_from_struct, priority_class_from_struct
from hpctop.model.states import ReasonCode

PODS = ResourceSpec("Pod", "", "v1", "pods", namespaced=True)
NODES = ResourceSpec("Node", "", "v1", "nodes", namespaced=False)
JOBS = ResourceSpec("Job", "batch", "v1", "jobs", namespaced=True)
DEPLOYMENTS = ResourceSpec("Deployment", "apps", "v1", "deployments", namespaced=True)
PRIORITY_CLASSES = ResourceSpec(
    "PriorityClass", "scheduling.k8s.io", "v1", "priorityclasses", namespaced=False
)
#: YuniKorn's queues.yaml lives in a ConfigMap (core, served everywhere): written, never watched
CONFIGMAPS = ResourceSpec("ConfigMap", "", "v1", "configmaps", namespaced=True)

#: what a live session watches by default, in the order their status is shown
DEFAULT_RESOURCES: tuple[ResourceSpec, ...] = (PODS, NODES, JOBS, PRIORITY_CLASSES, DEPLOYMENTS)

# -- pod Unschedulable messages: the parser is neutral (the native gang API reads it too)

#: what pod conditions can say (:func:`pod_reason`, ``SchedulingGated``, and YuniKorn's
#: ``SchedulingSkipped``: a used-up queue quota); the gang codes are coscheduling's PreFilter, a
#: kube-scheduler plugin, writing on the pod
REASONS: frozenset[ReasonCode] = frozenset(
    {
        ReasonCode.GATED,
        ReasonCode.RESOURCES,
        ReasonCode.CONSTRAINTS,
        ReasonCode.NODE_UNAVAILABLE,
        ReasonCode.TOPOLOGY,
        ReasonCode.UNSCHEDULABLE,
        ReasonCode.GANG_INCOMPLETE,
        ReasonCode.GANG_TIMEOUT,
        ReasonCode.QUOTA_EXCEEDED,
    }
)

BACKEND = Backend(
    name="kube-scheduler",
    title="kube-scheduler (plain pods, Jobs, Deployments)",
    upstream="https://github.com/kubernetes/kubernetes",
    watches=tuple((spec,) for spec in DEFAULT_RESOURCES),
    fixtures=(
        "tests/fixtures/live_truth/00_nodes.yaml",
        "tests/fixtures/live_truth/10_kube_scheduler.yaml",
        "tests/fixtures/live_truth/80_gpu_sharing.yaml",
    ),
    reasons=REASONS,
    actions="hpctop.backends.kube_scheduler.act",
    builtin=True,
    writes=(CONFIGMAPS,),
    decoders={
        "Pod": (structs.PodS, lambda w, _: pod_from_struct(w)),
        "Node": (structs.NodeS, lambda w, _: node_from_struct(w)),
        "PriorityClass": (structs.PriorityClassS, lambda w, _: priority_class_from_struct(w)),
        **{kind: workload_decoder(kind) for kind in ("Job", "Deployment", "StatefulSet")},
    },
)

__all__ = ["BACKEND", "DEFAULT_RESOURCES", "parse_unschedulable", "pod_reason"]
