"""From scheduler evidence to a job's state and its pending reasons (SCHEDULERS.md §1.4, §1.5, §10).

Why: pods alone tell a misleading story on a cluster with a queueing layer. A Kueue job waiting
for quota is *suspended* (it looks held), a Volcano gang in ``Inqueue`` has pods that are merely
Pending, and the real "why" sits in a Workload condition or a PodGroup condition, not on a pod.
This module reads that evidence, object by object, and answers two questions for
:func:`hpctop.model.jobs.derive_job`: which normalised state the job is in, and every
``Reason(code, source, message)`` that explains a wait, so the detail pane can show them all and
the REASON column the first by §1.5 precedence. It also parses the default scheduler's
``Unschedulable`` message into ``(count, code, detail)`` fragments (§2.1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hpctop.model.backends.queues import CLOSED_STATES
from hpctop.model.objects import (
    NATIVE_SCHEDULING_GROUP,
    VOLCANO_GROUP,
    KueueWorkload,
    PodGroup,
    QueueInfo,
    Reason,
    ReasonFragment,
)
from hpctop.model.resources import ZERO
from hpctop.model.states import JobState, ReasonCode

_PRECEDENCE = {code: i for i, code in enumerate(ReasonCode)}


@dataclass(frozen=True, slots=True)
class JobEvidence:
    """What the scheduler backends say about one job (the store joins these)."""

    kueue: KueueWorkload | None = None
    pod_group: PodGroup | None = None
    queue: str | None = None  # neutral queue path (Kueue ClusterQueue path, Volcano queue path)
    queue_info: QueueInfo | None = None
    local_queue: QueueInfo | None = None

    @property
    def backends(self) -> tuple[str, ...]:
        out = []
        if self.kueue is not None:
            out.append("kueue")
        if self.pod_group is not None:
            out.append(self.pod_group.backend)
        elif self.queue_info is not None and self.queue_info.backend not in out:
            out.append(self.queue_info.backend)
        return tuple(out)


def by_precedence(reasons: list[Reason]) -> tuple[Reason, ...]:
    """Reasons ordered by §1.5 precedence (stable among equals)."""
    return tuple(sorted(reasons, key=lambda r: _PRECEDENCE[r.code]))


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


# -- state ---------------------------------------------------------------------------------------


def pod_group_state(ev: JobEvidence, state: JobState, bound: bool) -> JobState | None:
    """A gang's PodGroup phase weighed against the pods (None: no PodGroup, or nothing to add)."""
    pg = ev.pod_group
    if pg is not None and pg.group == NATIVE_SCHEDULING_GROUP:
        return None  # the native gang API's own hooks (hpctop.backends.workload_api) say
    if pg is not None and not state.is_finished and not bound and state != JobState.HELD:
        if pg.group == VOLCANO_GROUP and pg.phase in ("Pending", "Inqueue"):
            return JobState.PENDING
        if pg.group != VOLCANO_GROUP and pg.phase in ("Pending", "PreScheduling", "Scheduling"):
            return JobState.PENDING
        if pg.phase == "Failed":
            return JobState.FAILED
    return None


# -- reasons -------------------------------------------------------------------------------------


def queue_reason(info: QueueInfo | None, source: str) -> Reason | None:
    """QueueHeld when the queue a job waits in is Closed, Draining or Held (the queue says why)."""
    if info is None or info.state not in CLOSED_STATES:
        return None
    where = re.split(r"[ =]", info.state_reason, maxsplit=1)[0] or source
    detail = f" ({info.state_reason})" if info.state_reason else ""
    return Reason(ReasonCode.QUEUE_HELD, where, f"queue {info.path} is {info.state}{detail}")


_VOLCANO_UNSCHEDULABLE = {
    "NotEnoughResources": ReasonCode.RESOURCES,
    "NotEnoughTasks": ReasonCode.GANG_INCOMPLETE,
    "NotEnoughPodsOfTask": ReasonCode.GANG_INCOMPLETE,
}


def _pod_group_reasons(pg: PodGroup, ev: JobEvidence, live_members: int) -> list[Reason]:
    out: list[Reason] = []
    prefix = "vc" if pg.group == VOLCANO_GROUP else "coscheduling"
    found = queue_reason(ev.queue_info, f"{prefix}:Queue.state")
    if found is not None:
        out.append(found)
    unschedulable = pg.condition("Unschedulable")
    if unschedulable is not None:
        code = _VOLCANO_UNSCHEDULABLE.get(unschedulable.reason, ReasonCode.UNSCHEDULABLE)
        out.append(
            Reason(code, f"{prefix}:PodGroup.Unschedulable", unschedulable.message or unschedulable.reason)
        )
    if live_members < pg.min_member:
        out.append(
            Reason(
                ReasonCode.GANG_INCOMPLETE,
                f"{prefix}:PodGroup.minMember",
                f"{live_members} of minMember {pg.min_member} pods exist",
            )
        )
    if pg.group == VOLCANO_GROUP and unschedulable is None:
        info = ev.queue_info
        if pg.phase == "Pending":
            if info is not None and info.max is not None and _used_up(info):
                out.append(
                    Reason(
                        ReasonCode.QUOTA_EXCEEDED,
                        "vc:Queue.capability",
                        f"queue {info.path} capability used up",
                    )
                )
            else:
                out.append(Reason(ReasonCode.PRIORITY, "vc:PodGroup.phase", "Pending: not yet enqueued"))
        elif pg.phase == "Inqueue":
            out.append(
                Reason(
                    ReasonCode.WAITING_FOR_SCHEDULING,
                    "vc:PodGroup.phase",
                    "Inqueue: the queue has room, waiting for allocation",
                )
            )
    return out


def _used_up(info: QueueInfo) -> bool:
    cap = info.max
    if cap is None:
        return False
    used = info.allocated
    if (cap.gpu and used.gpu >= cap.gpu) or (cap.cpu and used.cpu >= cap.cpu):
        return True
    if cap.memory and used.memory >= cap.memory:
        return True
    have = dict(used.extended)
    return any(v and have.get(k, 0) >= v for k, v in cap.extended) and cap != ZERO


def pod_group_reasons(ev: JobEvidence, state: JobState, live_members: int) -> list[Reason] | None:
    """The PodGroup's reasons for a waiting gang (None: no PodGroup, or the gang is starting)."""
    if ev.pod_group is None or ev.pod_group.group == NATIVE_SCHEDULING_GROUP or state == JobState.STARTING:
        return None
    return _pod_group_reasons(ev.pod_group, ev, live_members)
