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

import re

from hpctop.backends.contract import Backend, ResourceSpec
from hpctop.model import structs
from hpctop.model.backends.wire import workload_decoder
from hpctop.model.objects import ReasonFragment
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

# -- pod Unschedulable messages --------------------------------------------------------------------

_HEAD = re.compile(r"^\s*\d+/\d+ nodes are available:\s*")
_CLAUSE = re.compile(r"^(\d+)\s+(.*?)\.?\s*$")
_SPLIT = re.compile(r",\s+(?=\d+\s)")
_NODE_DOWN_TAINTS = (
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unsch",
)


#: what kube-scheduler's plugins write, by plugin (pkg/scheduler/framework/plugins/*): a fragment
#: is matched by the first pattern that occurs in it, lower-cased
_PLUGIN_FRAGMENTS: tuple[tuple[str, ReasonCode], ...] = (
    # NodeResourcesFit
    ("insufficient", ReasonCode.RESOURCES),
    ("too many pods", ReasonCode.RESOURCES),
    # DynamicResources: no ResourceSlice device satisfies the claim (capacity of devices)
    ("cannot allocate all claims", ReasonCode.RESOURCES),
    ("resourceclaim", ReasonCode.CONSTRAINTS),
    ("claim", ReasonCode.CONSTRAINTS),
    # NodeUnschedulable, node lifecycle taints
    ("were unschedulable", ReasonCode.NODE_UNAVAILABLE),
    ("not ready", ReasonCode.NODE_UNAVAILABLE),
    # PodTopologySpread
    ("topology spread", ReasonCode.TOPOLOGY),
    # TaintToleration
    ("untolerated taint", ReasonCode.CONSTRAINTS),
    ("taint that the pod didn't tolerate", ReasonCode.CONSTRAINTS),
    # NodeAffinity, InterPodAffinity
    ("affinity", ReasonCode.CONSTRAINTS),
    ("selector", ReasonCode.CONSTRAINTS),
    # VolumeBinding, VolumeRestrictions, VolumeZone, NodeVolumeLimits
    ("persistentvolumeclaim", ReasonCode.CONSTRAINTS),
    ("volume", ReasonCode.CONSTRAINTS),
    # NodePorts
    ("free ports", ReasonCode.CONSTRAINTS),
    # NodeName
    ("didn't match the requested node name", ReasonCode.CONSTRAINTS),
)


def _fragment_code(detail: str) -> ReasonCode:
    """The code of one clause of a scheduler message; a clause no known plugin writes is Unschedulable."""
    text = detail.lower()
    if "untolerated taint" in text and any(t in detail for t in _NODE_DOWN_TAINTS):
        return ReasonCode.NODE_UNAVAILABLE
    for pattern, code in _PLUGIN_FRAGMENTS:
        if pattern in text:
            return code
    return ReasonCode.UNSCHEDULABLE


def parse_unschedulable(message: str) -> tuple[ReasonFragment, ...]:
    """``0/5 nodes are available: 3 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint ...``.

    The ``preemption:`` tail (what preemption could not fix) is dropped: it repeats the counts.
    Coscheduling's PreFilter messages (no node counts) become one fragment with count 0.
    """
    text = message.strip()
    lowered = text.lower()
    if "cannot find enough sibling pods" in lowered:
        return (ReasonFragment(0, ReasonCode.GANG_INCOMPLETE, text),)
    if "failed recently" in lowered:
        return (ReasonFragment(0, ReasonCode.GANG_TIMEOUT, text),)
    if "resource gap" in lowered:
        return (ReasonFragment(0, ReasonCode.RESOURCES, text),)
    head = _HEAD.match(text)
    if head is None:
        # a message without node counts (a PreFilter rejection: VolumeBinding, a plugin's own)
        return (ReasonFragment(0, _fragment_code(text), text),) if text else ()
    body = text[head.end() :].split(" preemption:", 1)[0].strip()
    out = []
    for clause in _SPLIT.split(body):
        m = _CLAUSE.match(clause)
        if m is not None:
            detail = m.group(2)
            out.append(ReasonFragment(int(m.group(1)), _fragment_code(detail), detail))
        elif clause.strip():
            # PreFilter rejections come without a node count: "pod has unbound immediate PVCs"
            detail = clause.strip().rstrip(".")
            out.append(ReasonFragment(0, _fragment_code(detail), detail))
    return tuple(out)


def pod_reason(message: str) -> tuple[ReasonCode, tuple[ReasonFragment, ...]]:
    """The job-level code of a pod's Unschedulable message, and its fragments.

    Gang clauses win; else any ``Insufficient`` clause makes it ``Resources`` (more capacity is
    the fix); else the clause that rules out the most nodes. A message no known plugin writes is
    ``Unschedulable`` (the message is the evidence), never ``Resources`` by default.
    """
    fragments = parse_unschedulable(message)
    codes = {f.code for f in fragments}
    for code in (ReasonCode.GANG_INCOMPLETE, ReasonCode.GANG_TIMEOUT, ReasonCode.RESOURCES):
        if code in codes:
            return code, fragments
    if fragments:
        return max(fragments, key=lambda f: f.count).code, fragments
    return ReasonCode.UNSCHEDULABLE, fragments


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
