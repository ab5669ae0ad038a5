"""The engine: preview, execute and settle any plan's action on one cluster, with the same rules.

Why it looks the way it does (RELIABILITY.md §2, SCHEDULERS.md §9):

- **The user saw a state; the server decides whether it still holds.** :meth:`ActionEngine.preview`
  reads the object, remembers its uid and resourceVersion, and sends the *identical* first request
  with ``dryRun=All``: the preview is the server's own answer (admission, validation, RBAC), not
  hpctop's guess. :meth:`ActionEngine.execute` then sends with the remembered preconditions,
  without re-reading first: the server's precondition check is atomic, a client-side comparison is
  not. A 409 means the object changed: hpctop re-reads, says what changed, and raises
  :class:`~hpctop.actions.engine.targets.StaleTarget` holding a fresh preview (M2).
- **Never retry blindly** (:mod:`hpctop.actions.engine.rules`), and settle a lost answer by
  re-reading (:mod:`hpctop.actions.engine.settle`).
- **Permissions** (:mod:`hpctop.actions.engine.permissions`): an access review for the exact
  request right before sending; the server's 403 still wins and drops the cached rules.
- **Audit**: an intent record before sending and an outcome record per answer, with the server's
  ``Audit-Id`` (:mod:`hpctop.actions.audit`).

Nothing here knows a backend: which requests an action is, what is refused and what happens next
come from the plans in the :class:`~hpctop.actions.engine.plan.PlanBook` it is given.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from hpctop.actions.audit import AuditLog
from hpctop.actions.engine.objects import dig, status_message
from hpctop.actions.engine.permissions import Reviews
from hpctop.actions.engine.plan import KindPlan, PlanBook, Sending, not_served
from hpctop.actions.engine.rules import Subject, judge, retry_wait
from hpctop.actions.engine.settle import Poller, settle
from hpctop.actions.engine.targets import Seen, StaleTarget, Step, Target, owner_refs
from hpctop.actions.requests import (
    ActionKind,
    ActionRequest,
    ActionResult,
    Outcome,
    Permission,
    Preview,
    failed_result,
)
from hpctop.errors import ActionFailed, ActionRefused, HpctopError
from hpctop.model.objects import JobKey
from hpctop.sources.kube.errors import ServerUnreachable, StreamBroken
from hpctop.sources.kube.registry import ResourceRegistry, discover_registry
from hpctop.sources.kube.transport import ApiResponse, KubeClient, ReadOnlyViolation

READ_ONLY = "read-only mode: no action is sent to the cluster"


def created(body: Any) -> str | None:
    """``Command AbortJob job-abortjob-x7 created``: what a create's answer names (kind, the
    action it carries if any, and the name the server generated)."""
    if not isinstance(body, dict) or not body.get("kind"):
        return None
    action = f" {body['action']}" if body.get("action") else ""
    return f"{body['kind']}{action} {dig(body, 'metadata', 'name')} created"


class ActionEngine:
    """Previews and executes actions on one cluster through a :class:`KubeClient`, by the plans of
    ``book``. ``client`` must be made with ``read_only=False`` to act; a read-only client makes every
    preview say so and every execute raise :class:`ReadOnlyViolation` before any I/O (R1)."""

    def __init__(
        self,
        client: KubeClient,
        book: PlanBook,
        *,
        audit: AuditLog | None = None,
        propagation: str = "Background",
        rules_ttl: float = 30.0,
        max_throttle_wait: float = 10.0,
        max_throttle_retries: int = 2,
        evict_timeout: float = 60.0,
        phase_timeout: float = 10.0,
        poll_interval: float = 1.0,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        registry: ResourceRegistry | None = None,
    ) -> None:
        if propagation not in ("Background", "Foreground"):
            raise ValueError("propagation must be Background or Foreground (Orphan would leave pods running)")
        self.client = client
        self.book = book
        self.audit_log = audit
        self.propagation = propagation
        self.max_throttle_wait = max_throttle_wait
        self.max_throttle_retries = max_throttle_retries
        #: how long a Kueue requeue waits for the eviction, and a Volcano Command for the phase to
        #: move, polling every ``poll_interval`` seconds: bounded, so an absent controller is a
        #: clear message instead of a hung console
        self.evict_timeout = evict_timeout
        self.phase_timeout = phase_timeout
        self.poll_interval = poll_interval
        self.reviews = Reviews(client, rules_ttl=rules_ttl, clock=clock)
        self._clock = clock
        self._sleep = sleep
        #: where each kind is served on this cluster: given (the session's discovery), or
        #: discovered on first use and forgotten on a context switch
        self._given_registry = registry
        self._registry = registry
        self._seen: dict[ActionRequest, Seen] = {}
        #: owner-job requests that stand for another object's action, and the plan that decides them
        self._redirected: dict[ActionRequest, KindPlan | None] = {}

    # -- what the plans may ask (PlanContext) ------------------------------------------------------

    def clock(self) -> float:
        """Now, by the engine's clock (what results and previews are stamped with)."""
        return self._clock()

    @property
    def poller(self) -> Poller:
        return Poller(self.read, self.poll_interval, self._sleep)

    def owner_target(self, namespace: str, kind: str, name: str) -> Target | None:
        if self._registry is None or kind not in self.book.by_kind:
            return None
        return Target.of((namespace, kind, name), self._registry)

    def audit(self, **fields: Any) -> None:
        if self.audit_log is not None:
            self.audit_log.append(context=self.context, cluster=self.client.connection.server, **fields)

    # -- the session -------------------------------------------------------------------------------

    @property
    def read_only(self) -> bool:
        return self.client.read_only

    @property
    def context(self) -> str:
        return self.client.connection.context or ""

    @property
    def rules_ttl(self) -> float:
        return self.reviews.rules_ttl

    def forget(self) -> None:
        """Drop cached permissions, identity and previewed states (on a context switch)."""
        self._seen.clear()
        self.reviews.forget()
        self._registry = self._given_registry

    async def registry(self) -> ResourceRegistry:
        """The cluster's resource registry (discovered once, on the first action that needs it)."""
        if self._registry is None:
            self._registry = await discover_registry(self.client)
        return self._registry

    async def target(self, key: JobKey) -> Target | None:
        """Where the object of ``key`` is served; None for a kind no plan acts on or not served."""
        if key[1] not in self.book.by_kind:
            return None
        return Target.of(key, await self.registry())

    async def close(self) -> None:
        await self.client.close()

    async def whoami(self) -> str:
        return await self.reviews.whoami()

    async def access_review(
        self, verb: str, group: str, resource: str, namespace: str, name: str = "", subresource: str = ""
    ) -> tuple[bool, str]:
        return await self.reviews.access_review(verb, group, resource, namespace, name, subresource)

    async def rules(self, namespace: str) -> tuple[list[dict[str, Any]], bool]:
        return await self.reviews.rules(namespace)

    async def permissions(self, namespace: str, kind: str) -> dict[ActionKind, Permission]:
        """Which actions to offer on a job of owner ``kind`` in ``namespace``, with reasons."""
        return await self.reviews.permissions(self.book, namespace, kind)

    async def read(self, target: Target) -> dict[str, Any] | None:
        """The object now, or None when it does not exist."""
        response = await self.client.request("GET", target.path)
        if response.status == 404:
            return None
        if response.status == 401:
            await self.client.connection.reauthenticate()
            response = await self.client.request("GET", target.path)
        error = response.error()
        if error is not None:
            raise ActionFailed(f"cannot read {target}: {error.detail}")
        body = response.json()
        if not isinstance(body, dict):
            raise ActionFailed(f"cannot read {target}: the server's answer is not an object")
        return body

    # -- planning ----------------------------------------------------------------------------------

    def _plan(self, request: ActionRequest, obj: dict[str, Any] | None = None) -> KindPlan | None:
        return self.book.plan_for(request, obj, self._redirected.get(request))

    def _static_refusal(self, request: ActionRequest) -> str | None:
        plan = self._plan(request)
        if plan is None:
            return self.book.unknown_kind(request.kind, request.job[1])
        return plan.static_refusal(request)

    def _state_refusal(self, request: ActionRequest, target: Target, obj: dict[str, Any]) -> str | None:
        uid = str(dig(obj, "metadata", "uid") or "")
        if request.job_uid and request.job_uid != uid:
            return (
                f"{target} was replaced since you saw it (uid {request.job_uid[:8]}… is now {uid[:8]}…); "
                "refresh and try again"
            )
        if request.kind == ActionKind.CANCEL:
            return None
        plan = self._plan(request, obj)
        assert plan is not None
        return plan.state_refusal(self, request, target, obj)

    async def _via_owner(self, request: ActionRequest) -> ActionRequest:
        """The request on the owner job, where the plan says the owner is what the API lets one
        change (a PodGroup's hold is its owner's suspend; a Kueue Workload's move is a label of its
        job): the first ownerReference to a kind with a suspend field."""
        plan = self._plan(request)
        redirect = plan.redirect(request) if plan is not None else None
        if redirect is None:
            return request
        target = await self.target(request.job)
        if target is None:
            return request
        try:
            obj = await self.read(target)
        except (ServerUnreachable, StreamBroken):
            return request
        if obj is None:
            return request
        for ref in owner_refs(obj):
            if self.book.suspend_path(str(ref.get("kind"))) is None or not ref.get("name"):
                continue
            owner = dataclasses.replace(
                request,
                job=(request.job[0], str(ref["kind"]), str(ref["name"])),
                job_uid=str(ref.get("uid") or ""),
            )
            self._redirected[owner] = redirect.plan
            return owner
        return request

    # -- the preview -------------------------------------------------------------------------------

    async def preview(self, request: ActionRequest) -> Preview:
        """The server's dry run of the exact requests an execute would send."""
        asked = request
        request = await self._via_owner(request)
        if request is not asked:
            preview = await self.preview(request)
            note = f"acts on {request.job[1]} {request.job[2]}, the owner of {asked.job[1]} {asked.job[2]}"
            return dataclasses.replace(preview, request=asked, changes=(note, *preview.changes))
        refusal = self._static_refusal(request)
        if refusal is not None:  # refused without even a read
            return Preview(request, False, (), refusal=refusal)
        try:
            target = await self.target(request.job)
        except (ServerUnreachable, StreamBroken) as exc:
            return Preview(request, False, (), refusal=f"cannot read the cluster's discovery: {exc.detail}")
        if target is None:
            return Preview(request, False, (), refusal=not_served(request.job[1]))
        try:
            obj = await self.read(target)
        except (ServerUnreachable, StreamBroken) as exc:
            return Preview(request, False, (), refusal=f"cannot read {target}: {exc.detail}")
        plan = self._plan(request, obj)
        assert plan is not None
        if obj is None:
            return Preview(request, False, (), refusal=plan.missing(request, target))
        refusal = self._state_refusal(request, target, obj)
        if refusal is not None:
            return Preview(request, False, (), refusal=refusal)
        terminating = dig(obj, "metadata", "deletionTimestamp")
        if terminating and request.kind == ActionKind.CANCEL:
            finalizers = ", ".join(dig(obj, "metadata", "finalizers") or []) or "none"
            return Preview(
                request,
                False,
                (),
                refusal=f"{target} is already terminating (since {terminating}; finalizers: {finalizers})",
            )
        steps = plan.steps(self, request, target, obj)
        described = tuple(s.describe() for s in steps)
        if self.read_only:
            return Preview(request, False, (), refusal=READ_ONLY, requests=described)
        answer = await self.dry_run(request, steps[0], described)
        if isinstance(answer, Preview):
            return answer
        self._seen[request] = Seen(obj, self._clock())
        expected = plan.expected(self, request, target, obj)
        if not answer.ok:  # the server cannot dry-run it (a webhook without dry-run support)
            changes = ("server preview unavailable: " + status_message(answer), *expected)
            return Preview(request, True, changes, requests=described)
        changes = plan.dry_run(self, request, target, obj, answer.json()) + expected
        return Preview(request, True, changes, requests=described)

    async def dry_run(
        self, request: ActionRequest, step: Step, described: tuple[str, ...]
    ) -> ApiResponse | Preview:
        """Send ``step`` with ``dryRun=All``: the server's answer, or the Preview that refuses (no
        answer, or the server would refuse it). A 400 saying the dry run itself is unsupported is
        returned as an answer: the action stays possible, the preview says it is unavailable."""
        try:
            answer = await self.client.request(
                step.method, step.path, params=step.params(dry_run=True), body=step.body,
                content_type=step.content_type,
            )  # fmt: skip
        except (ServerUnreachable, StreamBroken) as exc:
            return Preview(request, False, (), refusal=f"preview failed: {exc.detail}", requests=described)
        if answer.ok or (answer.status == 400 and "dry" in status_message(answer).lower()):
            return answer
        return Preview(
            request,
            False,
            (),
            refusal=f"the server would refuse this (HTTP {answer.status}): {status_message(answer)}",
            requests=described,
        )

    # -- execution ---------------------------------------------------------------------------------

    async def execute(self, request: ActionRequest) -> ActionResult:
        """Send the action: preconditions from the last preview of this request (else a fresh read).

        Returns a result on success; raises :class:`ActionRefused` when nothing was sent or the
        server changed nothing (:class:`StaleTarget` on a 409, with a fresh preview), and
        :class:`ActionFailed` when the server refused or the outcome could not be confirmed.
        """
        request = await self._via_owner(request)
        refusal = self._static_refusal(request)
        if refusal is not None:
            raise ActionRefused(refusal)
        target = await self.target(request.job)
        if target is None:
            raise ActionRefused(not_served(request.job[1]))
        if self.read_only:
            raise ReadOnlyViolation(READ_ONLY)
        seen = self._seen.pop(request, None)
        if seen is None:
            obj = await self.read(target)
            if obj is None:
                plan = self._plan(request)
                assert plan is not None
                if request.kind == ActionKind.CANCEL:
                    return self._result(request, True, f"{target} already gone", outcome=Outcome.GONE)
                raise ActionRefused(plan.missing(request, target))
            seen = Seen(obj, self._clock())
        obj = seen.obj
        target = target.at_version_of(obj)
        refusal = self._state_refusal(request, target, obj)
        if refusal is not None:
            raise ActionRefused(refusal)
        plan = self._plan(request, obj)
        assert plan is not None
        if request.kind == ActionKind.CANCEL and dig(obj, "metadata", "deletionTimestamp"):
            # Terminating: shown as such, and the delete is not sent again (M4).
            return self._result(request, True, f"{target} is already terminating; nothing sent")
        return await self.carry_out(request, plan, target, seen, plan.steps(self, request, target, obj))

    async def carry_out(
        self,
        request: ActionRequest,
        plan: KindPlan,
        target: Target,
        seen: Seen,
        steps: list[Step],
        *,
        again: Callable[[], Awaitable[Preview]] | None = None,
    ) -> ActionResult:
        """Send ``steps`` of a checked action on the object as ``seen``: the access review of each
        step, the intent record, then each request and what its answer means. ``again`` is the
        fresh preview a 409 asks with (by default :meth:`preview` of the same request)."""
        sending = Sending(request, plan, target, seen, await self.whoami(), plan.audit_action(request))
        steps = await self._reviewed(sending, steps)
        self.audit(
            phase="intent",
            user=sending.user,
            action=sending.action,
            job=sending.job,
            uid=seen.uid,
            method=" + ".join(s.method for s in steps),
            path=steps[0].path,
            dry_run=False,
            preconditions={"uid": seen.uid, "resourceVersion": seen.rv},
            message=plan.intent(request, steps),
        )
        return await self._run(sending, steps, again or (lambda: self.preview(request)))

    async def _reviewed(self, sending: Sending, steps: list[Step]) -> list[Step]:
        """Ask the access review for each step right before sending; a denied step is sent as the
        plan's fallback where that is allowed (a pod deleted where its eviction is not), else
        nothing is sent and a ``refused`` record is audited."""
        target = sending.target
        for step in steps:
            allowed, reason = await self.access_review(
                step.verb, step.group, step.resource, target.namespace, target.name, step.subresource
            )
            fallback = None if allowed else sending.plan.fallback(step, target, sending.seen.obj)
            if fallback is not None:
                ok, _ = await self.access_review(
                    fallback.verb, fallback.group, fallback.resource, target.namespace, target.name
                )
                if ok:
                    return [fallback]
            if not allowed:
                sub = f"/{step.subresource}" if step.subresource else ""
                what = f"{step.verb} {step.resource}{sub}{'.' + step.group if step.group else ''}"
                message = (
                    f"not allowed: you may not {what} {target.where} (SelfSubjectAccessReview"
                    + (f": {reason}" if reason else "")
                    + "); nothing was sent"
                )
                self.audit(
                    phase="refused", user=sending.user, action=sending.action, job=sending.job,
                    uid=sending.seen.uid, ok=False, message=message,
                )  # fmt: skip
                raise ActionRefused(message)
        return steps

    def _result(
        self,
        request: ActionRequest,
        ok: bool,
        message: str,
        changes: tuple[str, ...] = (),
        outcome: str = Outcome.DONE,
    ) -> ActionResult:
        return ActionResult(request, ok, message, changes, at=self._clock(), outcome=outcome)

    async def send(self, step: Step, *, job: str, user: str, uid: str, action: str) -> ApiResponse:
        """One request, with the only retries that are safe (:func:`~hpctop.actions.engine.rules.retry_wait`
        and once after a 401: the request was not processed); each answer is audited."""
        throttled = 0
        reauthenticated = False
        while True:
            response = await self.client.request(
                step.method, step.path, params=step.params(dry_run=False), body=step.body,
                content_type=step.content_type,
            )  # fmt: skip
            self.audit(
                phase="outcome", user=user, action=action, job=job, uid=uid, method=step.method,
                path=step.path, status=response.status, audit_id=response.audit_id or "", ok=response.ok,
                message=status_message(response) if not response.ok else "; ".join(response.warnings),
            )  # fmt: skip
            if response.status == 401 and not reauthenticated:
                reauthenticated = True
                await self.client.connection.reauthenticate()
                continue
            wait = retry_wait(
                response, step, tried=throttled, max_tries=self.max_throttle_retries,
                max_wait=self.max_throttle_wait,
            )  # fmt: skip
            if wait is None:
                return response
            throttled += 1
            await self._sleep(wait)

    async def _run(
        self, sending: Sending, steps: list[Step], again: Callable[[], Awaitable[Preview]]
    ) -> ActionResult:
        request, plan, target, seen = sending.request, sending.plan, sending.target, sending.seen
        subject = Subject(
            target, plan.doing(request, target), request.job[1], request.kind, plan.forbidden_hint(target)
        )
        done: list[str] = []
        previous: ApiResponse | None = None
        unconfirmed = False
        for index, planned in enumerate(steps):
            step = await plan.before(self, sending, planned, done)
            if step.chain_rv and previous is not None:
                step = step.with_rv(str(dig(previous.json(), "metadata", "resourceVersion") or ""))
            try:
                response = await self.send(
                    step, job=sending.job, user=sending.user, uid=seen.uid, action=sending.action
                )
            except (ServerUnreachable, StreamBroken) as exc:
                self.audit(
                    phase="outcome", user=sending.user, action=sending.action, job=sending.job,
                    uid=seen.uid, method=step.method, path=step.path, ok=None,
                    message=f"no answer: {exc.detail}",
                )  # fmt: skip
                return await self._settle(sending, step, f"no answer ({exc.detail})", done)
            if response.ok:
                previous = response
                done.append(self._done_text(plan, target, step, response))
                if response.warnings:
                    done.append("server warning: " + "; ".join(response.warnings))
                verified = await plan.verify(self, sending, step)
                if verified is not None:
                    unconfirmed = unconfirmed or not verified[0]
                    done.append(verified[1])
                continue
            partial = f" ({'; '.join(done)} before this)" if done else ""
            verdict = judge(response, step, subject, partial)
            if verdict.outcome == Outcome.GONE:
                fallback = plan.fallback(step, target, seen.obj) if step.subresource else None
                if fallback is not None:
                    # Either the object is gone, or this cluster does not serve the subresource.
                    if await self.read(target) is None:
                        return self._gone(sending)
                    steps[index + 1 : index + 1] = [fallback]
                    continue
                if request.kind == ActionKind.CANCEL:
                    return self._gone(sending)
                raise ActionFailed(f"{target} no longer exists{partial}")
            if verdict.outcome == Outcome.CONFLICT:
                raise await self._stale(sending, verdict.text, partial, again)
            if verdict.outcome == Outcome.UNKNOWN:
                return await self._settle(sending, step, f"HTTP {response.status}: {verdict.text}", done)
            if response.status == 403:
                self.reviews.drop(target.namespace)
            assert verdict.error is not None
            raise verdict.error
        if unconfirmed:
            message = f"{target}: {request.kind.value} sent, not yet confirmed by the controller"
            return self._result(request, True, message, tuple(done))
        notes = plan.after(request, target, seen.obj)
        return self._result(request, True, plan.done(request, target, seen.obj), (*done, *notes))

    def _done_text(self, plan: KindPlan, target: Target, step: Step, response: ApiResponse) -> str:
        """What one accepted request did, as the result lists it."""
        own = plan.done_text(step, response.json())
        if own is not None:
            return own
        if step.method == "DELETE":
            return f"{target} deleted ({step.body and step.body.get('propagationPolicy')} propagation)"
        if step.subresource == "eviction":
            return f"{target} evicted"
        body = response.json()
        said = self.book.fields.set_by(step.body, body) if step.method == "PATCH" else created(body)
        return said or f"{step.method} {step.path}: HTTP {response.status}"

    def _gone(self, sending: Sending) -> ActionResult:
        """A cancel answered 404: the job was deleted meanwhile. Said so, and recorded as such (the
        404 answer alone reads as a failure in the audit log)."""
        message = (
            f"{sending.target} already gone: it was deleted before the cancel arrived (HTTP 404); "
            "nothing to do"
        )
        self.audit(
            phase="result", user=sending.user, action=sending.action, job=sending.job, uid=sending.seen.uid,
            status=404, ok=True, message=message,
        )  # fmt: skip
        return self._result(sending.request, True, message, outcome=Outcome.GONE)

    async def _stale(
        self, sending: Sending, text: str, partial: str, again: Callable[[], Awaitable[Preview]]
    ) -> StaleTarget:
        """A 409: re-read, say what changed, and ask again with a fresh preview. Never retried."""
        target = sending.target
        now = await self.read(target)
        if now is None:
            gone = "is already gone" if sending.request.kind == ActionKind.CANCEL else "no longer exists"
            return StaleTarget(f"{target} {gone}{partial}", changed=("deleted",), preview=None)
        changed = self.book.fields.diff(sending.seen.obj, now)
        fresh = await again()
        return StaleTarget(
            f"{target} changed since you saw it, so nothing was done{partial}: " + "; ".join(changed)
            + f" (server: {text}). Confirm again to act on the new state.",
            changed=changed,
            preview=fresh,
        )  # fmt: skip

    async def _settle(self, sending: Sending, step: Step, why: str, done: list[str]) -> ActionResult:
        request, plan, target = sending.request, sending.plan, sending.target
        settled = await settle(
            self.read, plan, target=target, seen=sending.seen, step=step, doing=plan.doing(request, target),
            done_message=plan.done(request, target, sending.seen.obj), why=why, done=done,
        )  # fmt: skip
        return self._result(request, True, settled.message, settled.changes)

    async def execute_many(self, requests: Sequence[ActionRequest]) -> list[ActionResult]:
        """A bulk action, reported per job: one failure does not stop the others. A request that
        raised is a failed result whose ``outcome`` says what became of it (conflict, refused, ...)."""
        results: list[ActionResult] = []
        for request in requests:
            try:
                results.append(await self.execute(request))
            except HpctopError as exc:
                results.append(failed_result(request, exc, at=self._clock()))
        return results


__all__ = ["READ_ONLY", "ActionEngine"]
