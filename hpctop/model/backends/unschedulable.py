"""kube-scheduler's ``Unschedulable`` message read into fragments and a job-level code (§2.1).

Why neutral: kube-scheduler writes this message on a pod's ``PodScheduled`` condition and, for a
gang of the native Workload API (KEP-4671), on the PodGroup's ``PodGroupInitiallyScheduled``
condition, so two backends read it (``kube_scheduler``, which re-exports these names, and
``workload_api``); a backend folder never imports another's. Moved here unchanged.
"""

from __future__ import annotations

import re

from hpctop.model.objects import ReasonFragment
from hpctop.model.states import ReasonCode

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
