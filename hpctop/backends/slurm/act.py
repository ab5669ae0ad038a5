"""Job actions on Slurm's own jobs, through slurmrestd: preview, confirm, execute, audit.

The same path as the Kubernetes actions (:mod:`hpctop.actions.kube`), with Slurm's verbs:

=========  =====================================================================================
cancel     ``DELETE /slurm/<v>/job/<id>`` (scancel: SIGKILL)
hold       ``POST /slurm/<v>/job/<id>`` ``{"hold": true}`` (scontrol hold: priority 0, JobHeld*)
release    ``POST ... {"hold": false}`` (scontrol release)
priority   ``POST ... {"priority": N}`` (scontrol update job priority=N; v0.0.38 takes a string,
           v0.0.40+ ``{"set": true, "number": N}``)
move       ``POST ... {"partition": P}`` (scontrol update job partition=P; pending jobs only)
requeue    ``GET /slurm/v0.0.45/job/<id>/requeue`` (``?Hold=true``: requeuehold) where slurmrestd
           serves it (v0.0.45, Slurm 26.05); else ``scontrol requeue <id>`` (``requeuehold``) run
           by the local Slurm client, once it is shown to reach the same cluster as the same user
           (:mod:`hpctop.sources.slurm.command`); without one, refused with what to install
=========  =====================================================================================

A requeue's ``value`` ``"hold"`` asks ``requeuehold`` (the job comes back held, to be released).

Why it looks the way it does:

- **Read-only where requests are sent.** The client's read-only flag is checked in
  :meth:`hpctop.sources.slurm.rest.SlurmRest.gate`, called by the one method that opens a
  connection and by the one that starts ``scontrol``, with the function the Kubernetes transport
  uses; this module never decides on its own that a request may go out. A read-only preview
  still says what would be sent.
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
from hpctop.sanitize import sanitize_line
from hpctop.sources.slurm.command import INSTALL_HINT, SlurmCommand
from hpctop.sources.slurm.rest import SlurmError, SlurmRest

__all__ = [
    "SLURM_JOB_KIND",
    "TABLE",
    "SlurmActionFailed",
    "SlurmActionForbidden",
    "SlurmActions",
    "is_held",
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
    method: str  # an HTTP method, or RUN: a scontrol command (``command``)
    body: dict[str, object] | None
    changes: tuple[str, ...]
    #: the request path when it is not ``job/<id>`` (v0.0.45's requeue)
    path: str = ""
    #: scontrol's arguments (method RUN)
    command: tuple[str, ...] = ()


def is_held(job: SlurmJob) -> bool:
    """Held as scontrol hold leaves a job: pending with priority 0 or a JobHeld* reason."""
    return job.state == "PENDING" and (job.priority == 0 or job.reason.startswith("JobHeld"))


class SlurmActions:
    """The :class:`~hpctop.actions.requests.Actuator` for Slurm jobs, on one slurmrestd client."""

    def __init__(
        self,
        client: SlurmRest,
        *,
        audit: AuditLog | None = None,
        context: str = "",
        command: SlurmCommand | None = None,
    ) -> None:
        self.client = client
        #: the local Slurm client, for a requeue slurmrestd does not serve (gated by ``client``)
        self.command = command if command is not None else SlurmCommand(client)
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
        path = self._target(job_id, plan)
        self._audit(request, "intent", method=plan.method, path=path, message=json.dumps(plan.body or {}))
        status: int | None = 200
        said = "sent"
        try:
            if plan.method == "DELETE":
                self.client.cancel(job_id)
            elif plan.method == "RUN":
                status = None  # no HTTP: scontrol's exit status 0
                printed = self.command.requeue(job_id, hold="requeuehold" in plan.command)
                said = sanitize_line(printed) or "ran"
            elif plan.path:
                self.client.requeue(job_id, hold=plan.path.endswith("?Hold=true"))
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
        self._audit(request, "outcome", method=plan.method, path=path, ok=True, status=status, message=said)
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
            return self._requeue_plan(request, job)
        if state in _FINISHED:
            raise ActionRefused(f"Slurm job {job.job_id} has already ended ({state})")
        client = self.client
        if kind is ActionKind.CANCEL:
            return _Plan("DELETE", None, (f"state: {state} -> CANCELLED",))
        if kind is ActionKind.HOLD:
            if state != "PENDING":
                raise ActionRefused(f"only a pending job can be held; Slurm job {job.job_id} is {state}")
            if is_held(job):
                raise ActionRefused(f"Slurm job {job.job_id} is held already ({job.reason})")
            return _Plan("POST", client.update_fields(hold=True), (f"priority: {job.priority} -> 0 (held)",))
        if kind is ActionKind.RELEASE:
            if not is_held(job):
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

    def _requeue_plan(self, request: ActionRequest, job: SlurmJob) -> _Plan:
        """slurmrestd's requeue where served (v0.0.45+), else scontrol's, once shown to be safe."""
        job_id = request.job[2]  # squeue's id, checked by _job_id (an array task: 123_4)
        value = request.value
        if value not in (None, "", "hold"):
            raise ActionRefused(f"a Slurm requeue takes no value but 'hold' (requeuehold), not {value!r}")
        hold = value == "hold"
        if job.state == "PENDING":  # slurm_errno.c ESLURM_JOB_PENDING: "Job is pending execution"
            raise ActionRefused(
                f"Slurm job {job.job_id} is pending: only a started or ended job can be requeued"
            )
        changes = (
            f"state: {job.state} -> PENDING" + (", held (release it to run)" if hold else ""),
            "the job restarts from the beginning of its script (restarts +1)",
        )
        path = self.client.requeue_path(job_id)
        if path is not None:
            return _Plan("GET", None, changes, path=f"{path}?Hold=true" if hold else path)
        version = self.client.version
        command = self.command
        if command.which() is None:
            raise ActionRefused(
                f"slurmrestd {version} serves no requeue (it came with v0.0.45, Slurm 26.05) and "
                f"there is no '{command.program}' here to run 'scontrol requeue': {INSTALL_HINT}"
            )
        try:
            local = command.cluster()
        except SlurmError as exc:
            why = f"cannot tell which cluster scontrol reaches, so it is not run: {exc}"
            raise ActionRefused(why) from None
        try:
            remote = self.client.cluster(job_id)
        except SlurmError as exc:
            why = f"cannot read slurmrestd's cluster name, so scontrol is not run: {exc}"
            raise ActionRefused(why) from None
        if remote is None:
            raise ActionRefused(
                "slurmrestd names no cluster (no meta.slurm.cluster, no job cluster), so scontrol's "
                f"cluster {local!r} cannot be checked against it: not run"
            )
        if local != remote:
            raise ActionRefused(
                f"scontrol here reaches cluster {local!r}, slurmrestd serves cluster {remote!r}: "
                "not run (point SLURM_CONF at the slurmrestd's cluster)"
            )
        user = command.local_user()
        if user != self.client.user:
            raise ActionRefused(
                f"scontrol would act as local user {user!r}, slurmrestd as {self.client.user!r}: not run"
            )
        args = ("requeuehold" if hold else "requeue", job_id)
        return _Plan("RUN", None, changes, command=args)

    def _target(self, job_id: str, plan: _Plan) -> str:
        """What the plan acts on, as the preview and the audit log name it."""
        if plan.method == "RUN":
            return self.command.describe(plan.command)
        return plan.path or self.client.path(f"job/{job_id}")

    def _describe(self, request: ActionRequest, job_id: str, plan: _Plan) -> str:
        path = self._target(job_id, plan)
        if plan.method == "RUN":
            return f"{path} (the local Slurm client, as {self.command.local_user()}, cluster checked)"
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
            ActionKind.REQUEUE: "requeued",
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
