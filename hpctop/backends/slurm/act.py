"""Job actions on Slurm's own jobs, through slurmrestd: preview, confirm, execute, audit.

The same path as the Kubernetes actions (:mod:`hpctop.actions.kube`), with Slurm's verbs:

=========  =====================================================================================
cancel     ``DELETE /slurm/<v>/job/<id>`` (scancel: SIGKILL)
hold       ``POST /slurm/<v>/job/<id>`` ``{"hold": true}`` (scontrol hold: priority 0, JobHeld*)
release    ``POST ... {"hold": false}`` (scontrol release)
priority   ``POST ... {"priority": N}`` (scontrol update job priority=N; v0.0.38 takes a string,
           v0.0.40+ ``{"set": true, "number": N}``)
move       ``POST ... {"partition": P}`` (scontrol update job partition=P; pending jobs only)
requeue    refused: no slurmrestd version up to v0.0.44 serves a requeue (``scontrol requeue``
           is an RPC of its own); the refusal says so
=========  =====================================================================================

Why it looks the way it does:

- **Read-only where requests are sent.** The client's read-only flag is checked in
  :meth:`hpctop.sources.slurm.rest.SlurmRest._send`, the one method that opens a connection, by
  the function the Kubernetes transport uses; this module never decides on its own that a
  request may go out. A read-only preview still says what would be sent.
- **The preview is the state the user saw.** slurmrestd has no dry run, so the preview reads the
  job (``GET /job/<id>``), refuses what Slurm would refuse for its state (cancel a finished job,
  hold a running one, release one that is not held), and lists the exact request. ``execute``
  reads the job again right before sending: a job that finished or was requeued meanwhile is
  refused, not acted on.
- **Slurm's own errors are shown as Slurm's.** A 500 with ``errors`` (``Access/permission
  denied``, ``Invalid partition name specified``) becomes :class:`SlurmActionFailed` with that
  text; a permission denial is :class:`SlurmActionForbidden`. Nothing is retried: an answer lost
  to a timeout is reported with the job's state read afterwards.
- **Audit**: an intent record before sending and an outcome record after, with the HTTP status,
  in the same log as the Kubernetes actions (:mod:`hpctop.actions.audit`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from hpctop.actions.audit import AuditLog
from hpctop.actions.engine.plan import ActionTable
from hpctop.actions.requests import ActionForbidden, ActionKind, ActionRequest, ActionResult, Preview
from hpctop.backends.slurm.wire import SlurmJob
from hpctop.errors import ActionFailed, ActionRefused
from hpctop.sources.slurm.rest import SlurmError, SlurmRest

__all__ = [
    "SLURM_JOB_KIND",
    "TABLE",
    "SlurmActionFailed",
    "SlurmActionForbidden",
    "SlurmActions",
    "slurm_job_request",
]

#: the Kubernetes engine's table (hpctop.actions.book): Slurm's jobs are no Kubernetes objects, so
#: the engine has no plan for them; :class:`SlurmActions` sends their actions to slurmrestd
TABLE = ActionTable(
    "slurm",
    read_only="no Kubernetes object to act on: Slurm's jobs are acted on through slurmrestd (SlurmActions)",
)

#: the kind in a Slurm job's :data:`~hpctop.model.objects.JobKey` (namespace "", name = squeue's id)
SLURM_JOB_KIND = "SlurmJob"

_JOB_ID = re.compile(r"^\d+(_\d+)?$")
_FINISHED = frozenset(
    {
        "BOOT_FAIL",
        "CANCELLED",
        "COMPLETED",
        "DEADLINE",
        "FAILED",
        "NODE_FAIL",
        "OUT_OF_MEMORY",
        "PREEMPTED",
        "TIMEOUT",
    }
)
_RUNNING = frozenset({"RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING", "SIGNALING", "STAGE_OUT"})
#: Slurm's error texts that mean "you may not" (slurm_errno.c: ESLURM_ACCESS_DENIED, ESLURM_USER_ID_MISSING)
_DENIED = ("Access/permission denied", "Invalid user id")


class SlurmActionFailed(ActionFailed):
    """slurmrestd answered an action with Slurm's own error (shown as Slurm wrote it)."""

    title = "Slurm refused"


class SlurmActionForbidden(ActionForbidden):
    """Slurm said the user may not act on this job (``Access/permission denied``)."""

    title = "Slurm: permission denied"


def slurm_job_request(kind: ActionKind, job_id: str, value: str | int | None = None) -> ActionRequest:
    """An action on a Slurm job by squeue's id (``123``, ``123_4``)."""
    return ActionRequest(kind, ("", SLURM_JOB_KIND, job_id), value=value)


@dataclass(frozen=True, slots=True)
class _Plan:
    method: str
    body: dict[str, object] | None
    changes: tuple[str, ...]


def _held(job: SlurmJob) -> bool:
    return job.state == "PENDING" and (job.priority == 0 or job.reason.startswith("JobHeld"))


class SlurmActions:
    """The :class:`~hpctop.actions.requests.Actuator` for Slurm jobs, on one slurmrestd client."""

    def __init__(self, client: SlurmRest, *, audit: AuditLog | None = None, context: str = "") -> None:
        self.client = client
        self.audit = audit
        self.context = context or f"slurm:{client.url}"

    @property
    def read_only(self) -> bool:
        return self.client.read_only

    # -- preview -------------------------------------------------------------------------------

    def preview(self, request: ActionRequest) -> Preview:
        """What the action would send and change, for the job as Slurm has it now."""
        try:
            job_id = self._job_id(request)
            job = self._read(job_id)
            plan = self._plan(request, job)
        except ActionRefused as exc:
            return Preview(request, False, (), refusal=exc.detail)
        sent = self._describe(request, job_id, plan)
        if self.read_only:
            return Preview(
                request,
                False,
                plan.changes,
                refusal="read-only mode: no action is sent to Slurm",
                requests=(sent,),
            )
        return Preview(request, True, plan.changes, requests=(sent,))

    # -- execute -------------------------------------------------------------------------------

    def execute(self, request: ActionRequest) -> ActionResult:
        """Send the action (after re-reading the job); Slurm's answer decides, nothing is retried."""
        job_id = self._job_id(request)
        path = self.client.path(f"job/{job_id}")
        try:
            job = self._read(job_id)
            plan = self._plan(request, job)
        except ActionRefused as exc:
            self._audit(request, "refused", path=path, ok=False, message=exc.detail)
            raise
        self._audit(request, "intent", method=plan.method, path=path, message=json.dumps(plan.body or {}))
        try:
            if plan.method == "DELETE":
                self.client.cancel(job_id)
            else:
                self.client.update(job_id, plan.body or {})
        except ActionRefused as exc:  # read-only: refused at the send chokepoint, nothing went out
            self._audit(request, "refused", method=plan.method, path=path, ok=False, message=exc.detail)
            raise
        except SlurmError as exc:
            self._audit(
                request,
                "outcome",
                method=plan.method,
                path=path,
                ok=False,
                status=exc.status,
                message=str(exc),
            )
            raise self._failure(request, exc) from None
        self._audit(request, "outcome", method=plan.method, path=path, ok=True, status=200, message="sent")
        after = self._read_after(job_id)
        return ActionResult(request, True, self._done_text(request, job_id, after), plan.changes)

    # -- pieces --------------------------------------------------------------------------------

    @staticmethod
    def _job_id(request: ActionRequest) -> str:
        namespace, kind, name = request.job
        if kind != SLURM_JOB_KIND or namespace or not _JOB_ID.match(name):
            raise ActionRefused(f"not a Slurm job id: {name!r}")
        return name

    def _read(self, job_id: str) -> SlurmJob:
        try:
            job = self.client.job(job_id)
        except SlurmError as exc:
            raise ActionRefused(f"cannot read Slurm job {job_id}: {exc}") from None
        if job is None:
            raise ActionRefused(f"Slurm job {job_id} no longer exists")
        return job

    def _read_after(self, job_id: str) -> SlurmJob | None:
        try:
            return self.client.job(job_id)
        except SlurmError:
            return None

    def _plan(self, request: ActionRequest, job: SlurmJob) -> _Plan:
        kind = request.kind
        state = job.state
        if kind is ActionKind.REQUEUE:
            raise ActionRefused(
                "slurmrestd serves no requeue (none of v0.0.36-v0.0.44 has one): use 'scontrol requeue "
                f"{job.job_id}'"
            )
        if state in _FINISHED:
            raise ActionRefused(f"Slurm job {job.job_id} has already ended ({state})")
        client = self.client
        if kind is ActionKind.CANCEL:
            return _Plan("DELETE", None, (f"state: {state} -> CANCELLED",))
        if kind is ActionKind.HOLD:
            if state != "PENDING":
                raise ActionRefused(f"only a pending job can be held; Slurm job {job.job_id} is {state}")
            if _held(job):
                raise ActionRefused(f"Slurm job {job.job_id} is held already ({job.reason})")
            return _Plan("POST", client.update_fields(hold=True), (f"priority: {job.priority} -> 0 (held)",))
        if kind is ActionKind.RELEASE:
            if not _held(job):
                raise ActionRefused(f"Slurm job {job.job_id} is not held")
            return _Plan("POST", client.update_fields(hold=False), (f"reason: {job.reason} -> released",))
        if kind is ActionKind.PRIORITY:
            value = request.value
            if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).isdigit():
                raise ActionRefused(f"a Slurm priority is a whole number, not {value!r}")
            if state in _RUNNING:
                raise ActionRefused(f"Slurm job {job.job_id} is {state}: its priority no longer matters")
            number = int(value)
            return _Plan(
                "POST", client.update_fields(priority=number), (f"priority: {job.priority} -> {number}",)
            )
        if kind is ActionKind.MOVE:
            partition = str(request.value or "")
            if not partition or not all(partition.split(",")):
                raise ActionRefused("name the partition to move the job to")
            if state != "PENDING":
                raise ActionRefused(
                    f"only a pending job can change partition; Slurm job {job.job_id} is {state}"
                )
            if partition == job.partition:
                raise ActionRefused(f"Slurm job {job.job_id} is in partition {partition} already")
            return _Plan(
                "POST",
                client.update_fields(partition=partition),
                (f"partition: {job.partition} -> {partition}",),
            )
        raise ActionRefused(f"Slurm jobs have no {kind.value} action")

    def _describe(self, request: ActionRequest, job_id: str, plan: _Plan) -> str:
        path = self.client.path(f"job/{job_id}")
        body = f" {json.dumps(plan.body, sort_keys=True)}" if plan.body is not None else ""
        return f"{plan.method} {path}{body}"

    def _failure(self, request: ActionRequest, exc: SlurmError) -> ActionFailed:
        text = str(exc)
        if exc.slurm and any(word in text for word in _DENIED):
            return SlurmActionForbidden(text, namespace="", kind=SLURM_JOB_KIND, action=request.kind)
        if exc.slurm:
            return SlurmActionFailed(text)
        return ActionFailed(f"{text}; the outcome is unknown: check squeue before trying again")

    @staticmethod
    def _done_text(request: ActionRequest, job_id: str, after: SlurmJob | None) -> str:
        verb = {
            ActionKind.CANCEL: "cancelled",
            ActionKind.HOLD: "held",
            ActionKind.RELEASE: "released",
            ActionKind.PRIORITY: "reprioritised",
            ActionKind.MOVE: "moved",
        }.get(request.kind, request.kind.value)
        if after is None:
            return f"Slurm job {job_id} {verb} (Slurm no longer lists it)"
        return (
            f"Slurm job {job_id} {verb}: now {after.state}, reason {after.reason}, "
            f"priority {after.priority}, partition {after.partition}"
        )

    def _audit(self, request: ActionRequest, phase: str, **fields: object) -> None:
        if self.audit is None:
            return
        self.audit.append(
            phase=phase,
            context=self.context,
            user=self.client.user,
            action=request.kind.value,
            job="/".join(part for part in request.job if part),
            **fields,
        )
