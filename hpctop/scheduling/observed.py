"""Observed first, forecast labelled: what a job row shows on a cluster another scheduler runs.

Why: the core (:mod:`hpctop.scheduling.core`) plans every pending job as if hpctop were the
scheduler. On the demo it is, so its plan is the truth. On a live cluster the job's *owner*
decides: its binder (``spec.schedulerName``: kube-scheduler, YuniKorn, Volcano, slurm-bridge, ...)
and, if any, its queueing layer (Kueue, Volcano's queues, YuniKorn's queues). What that owner
wrote (a Workload condition, a PodGroup condition, a pod's ``PodScheduled`` message) is the
*observed* state and reason; the core's plan is a *forecast* and is labelled so (ARCHITECTURE.md
"Observed first, forecast labelled").

:func:`merge` joins one :class:`~hpctop.model.objects.Job` with its
:class:`~hpctop.scheduling.types.JobPlan`:

- the reason is the observed one when the owner wrote one, else the core's (source
  ``forecast`` unless hpctop's own scheduler owns the job);
- an ETA is shown only when nothing observed blocks the job (no ETA beside an inadmissible
  workload, a queue over its quota, a constraint nothing satisfies, a gang missing members), and
  carries its source: ``scheduler`` when the owner is hpctop's own scheduler (the demo, ``hpctop
  schedule``), ``forecast`` when hpctop computed it for another owner, ``None`` otherwise;
- where the core does not model the owner's order (Kueue's per-ClusterQueue FIFO with cohorts,
  Volcano's queue ordering, YuniKorn's application sorting) ``ordering_note`` says the order and
  ETA are hpctop's estimate;
- a held job's hold is observed, never a forecast: ``HELD`` is read from the object itself (a
  Job's ``spec.suspend: true``, which the Job controller obeys by creating no pods and deleting
  the running ones; Kueue's ``spec.active: false`` on a Workload; Volcano's ``Aborted`` phase), so
  when the owner wrote no reason of its own the hold is shown as the object's word;
- a job still bound only to nodes that are not Ready is lost with them (``NODE_FAIL``);
- "starts now" is never shown for a job whose owner has just said it cannot start.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hpctop.backends.kubeflow.read import KUBEFLOW_KINDS
from hpctop.model.decode import VOLCANO_JOB_KIND
from hpctop.model.objects import Job, Node, Reason
from hpctop.model.states import JobState, ReasonCode
from hpctop.scheduling.types import JobPlan

#: the marker the tables and the console put before an ETA that is hpctop's forecast
FORECAST_MARK = "~"
#: the name hpctop's own scheduler binds with (the demo's pods and ``hpctop schedule``)
OWN_SCHEDULER = "hpctop"
#: reasons under which the owner itself will not start the job now: no ETA may stand beside them
BLOCKERS = frozenset(
    {
        ReasonCode.HELD,
        ReasonCode.QUEUE_HELD,
        ReasonCode.INADMISSIBLE,
        ReasonCode.NO_MATCHING_FLAVOR,
        ReasonCode.QUOTA_EXCEEDED,
        ReasonCode.ADMISSION_CHECK,
        ReasonCode.GATED,
        ReasonCode.DEPENDENCY,
        ReasonCode.GANG_INCOMPLETE,
        ReasonCode.GANG_TIMEOUT,
        ReasonCode.CONSTRAINTS,
        ReasonCode.NODE_UNAVAILABLE,
        ReasonCode.TOPOLOGY,
        ReasonCode.UNSCHEDULABLE,
    }
)
#: binders that are the queueing layer too (their queues decide the order)
QUEUEING_BINDERS = {"yunikorn": "yunikorn", "volcano": "volcano", "kai-scheduler": "kai"}
#: owners whose ordering the core does not reproduce, with what the view says about it
ORDERING_NOTES = {
    "kueue": "Kueue orders each ClusterQueue (FIFO within priority, with cohort borrowing and "
    "preemption); position and ETA here are hpctop's estimate, not Kueue's",
    "volcano": "Volcano orders jobs by its queues and plugins; position and ETA here are hpctop's estimate",
    "yunikorn": "YuniKorn sorts applications within each queue; position and ETA here are hpctop's estimate",
    "coscheduling": "the coscheduling plugin orders gangs by priority and age; ETA here is hpctop's estimate",
    "kai": "KAI-Scheduler orders jobs by queue priority, fair share (over-quota weight) and job priority, "
    "and publishes no order (only through its reflectjoborder plugin); position and ETA here are "
    "hpctop's estimate",
}


@dataclass(frozen=True, slots=True)
class JobView:
    """What a row shows for one job: observed state and reason, labelled forecast."""

    state: JobState
    reason: Reason | None
    #: "scheduler": observed (the owner wrote it, or the object's own state says it, as a hold)
    #: | "forecast": hpctop's core computed it
    reason_source: str | None
    eta: float | None
    eta_source: str | None  # "scheduler" | "forecast" | None
    order: int | None
    binder: str | None
    queue_layer: str | None
    ordering_note: str | None = None


def owner_of(job: Job) -> tuple[str | None, str | None]:
    """(binder, queueing layer) of a job: who places its pods and who decides when it may start."""
    binder = job.scheduler_name or None
    layer: str | None = None
    for backend in job.backends:
        if backend != "coscheduling":
            layer = backend
            break
    if layer is None and binder in QUEUEING_BINDERS:
        layer = QUEUEING_BINDERS[binder]
    if layer is None and "coscheduling" in job.backends:
        layer = "coscheduling"
    return binder, layer


#: where each kind keeps the flag that holds it: a Kubernetes Job and a JobSet ``spec.suspend``, the
#: Kubeflow training operators ``spec.runPolicy.suspend``, a Volcano Job its ``Aborted`` phase
_HOLD_FIELDS = {
    "Job": "spec.suspend",
    "JobSet": "spec.suspend",
    **{kind: "spec.runPolicy.suspend" for kind in KUBEFLOW_KINDS},
    VOLCANO_JOB_KIND: "status.state.phase",
}


def held_by_object(job: Job) -> Reason:
    """The hold of a ``HELD`` job as what it is: read from the job's object, not forecast."""
    kind = job.owner_kind or "job"
    field = _HOLD_FIELDS.get(kind, "state")
    message = f"{kind} {job.name} is held ({field}): nothing of it starts until it is released"
    return Reason(ReasonCode.HELD, f"{kind}:{field}", message)


def _lost_with_nodes(job: Job, nodes: Mapping[str, Node]) -> bool:
    if not job.state.is_active or job.state == JobState.COMPLETING or not job.nodes:
        return False
    found = [nodes.get(n) for n in job.nodes]
    return all(n is not None and not n.ready for n in found)


def merge(
    job: Job, plan: JobPlan | None, nodes: Mapping[str, Node] | None = None, own: str = OWN_SCHEDULER
) -> JobView:
    """The row's view of ``job``: the owner's word first, hpctop's plan as a labelled forecast."""
    binder, layer = owner_of(job)
    ours = binder == own and layer is None
    state = job.state
    if nodes is not None and _lost_with_nodes(job, nodes):
        state = JobState.NODE_FAIL
    waiting = state.is_pending or state == JobState.STARTING
    observed = job.observed_reason if waiting else None
    planned = plan.reason if plan is not None and waiting else None
    reason: Reason | None
    source: str | None
    if ours:
        reason, source = (planned, "scheduler") if planned is not None else (observed, "scheduler")
    elif observed is not None:
        reason, source = observed, "scheduler"
    elif state == JobState.HELD:
        # the object says it is held (spec.suspend, ...): observed; the core only repeats it
        reason, source = held_by_object(job), "scheduler"
    else:
        reason, source = planned, "forecast"
    if reason is None:
        source = None
    eta = plan.eta if plan is not None and state.is_pending else None
    if eta is not None and (state == JobState.HELD or (reason is not None and reason.code in BLOCKERS)):
        eta = None
    if eta is not None and not ours and any(r.code in BLOCKERS for r in job.reasons):
        eta = None  # any observed blocker, even one ranked below the code shown
    if (
        eta is not None
        and not ours
        and observed is not None
        and plan is not None
        and plan.placement is not None
    ):
        # the core would start it now, yet its owner has just said it cannot (a claim, a
        # resource the core does not model): "now" would contradict the owner
        eta = None
    order = plan.order if plan is not None and state.is_pending else None
    return JobView(
        state=state,
        reason=reason,
        reason_source=source,
        eta=eta,
        eta_source=None if eta is None else ("scheduler" if ours else "forecast"),
        order=order,
        binder=binder,
        queue_layer=layer,
        ordering_note=None if ours or layer is None else ORDERING_NOTES.get(layer),
    )
