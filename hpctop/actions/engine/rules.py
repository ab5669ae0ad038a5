"""What each answer of the API server means for an action, written once (RELIABILITY.md §2.2).

Why one table: every backend's request (a Job's patch, a Command create, a queue's stopPolicy, a
ConfigMap edit) gets the same answers, and they mean the same thing. Retrying is safe only after a
401 (the request was not processed) and a 429 with a short ``Retry-After`` (bounded), never on an
Eviction's 429, which is a PodDisruptionBudget saying no; that is :func:`retry_wait`. Every other
answer is final and :func:`judge` says what it is:

===========  ======================================================================================
404          ``gone``: a cancel's success (M3); otherwise "no longer exists"
409          ``conflict``: the object changed; the caller re-reads and asks again (M2)
422, a       ``refused`` (:class:`~hpctop.actions.requests.ServerRejected`): validation or an
webhook's    admission webhook said no; not retried (M6)
denial
403          ``refused`` (:class:`~hpctop.actions.requests.ActionForbidden`): RBAC or a policy,
             even after a positive review; the cached rules are dropped; not retried (M10)
429          ``failed``: throttled (or a PDB): nothing was changed
5xx          ``unknown``: the caller settles by re-reading, never by resending (M5)
===========  ======================================================================================

The outcome names are :class:`~hpctop.actions.requests.Outcome`'s, which results and the
console's summary carry.
"""

from __future__ import annotations

from dataclasses import dataclass

from hpctop.actions.engine.objects import is_pdb, status_message
from hpctop.actions.engine.targets import Step, Target
from hpctop.actions.requests import ActionForbidden, ActionKind, Outcome, ServerRejected, outcome_of
from hpctop.errors import ActionFailed, HpctopError
from hpctop.sources.kube.transport import ApiResponse


@dataclass(frozen=True, slots=True)
class Judgement:
    """What a non-2xx answer means: its ``outcome`` (gone, conflict and unknown are the caller's to
    handle; any other is final, and ``error`` is what to raise), and the server's ``text``."""

    outcome: Outcome
    text: str
    error: HpctopError | None = None


@dataclass(frozen=True, slots=True)
class Subject:
    """What the messages about an answer name: the object, the action on it, the owner kind and
    action a console greys out after a 403, and a hint on the RBAC it needs."""

    target: Target
    doing: str
    kind: str
    action: ActionKind
    forbidden_hint: str = ""


def retry_wait(
    response: ApiResponse, step: Step, *, tried: int, max_tries: int, max_wait: float
) -> float | None:
    """How long to wait before resending after a 429, or None when it must not be resent."""
    if response.status != 429 or (step.subresource == "eviction" and is_pdb(response)):
        return None
    error = response.error()
    wait = error.retry_after if error is not None and error.retry_after is not None else 1.0
    return wait if tried < max_tries and wait <= max_wait else None


def _admission_denied(status: int, text: str) -> bool:
    return status == 400 and "admission webhook" in text.lower() and "denied" in text.lower()


def judge(response: ApiResponse, step: Step, subject: Subject, partial: str = "") -> Judgement:
    """The meaning of a non-2xx answer to ``step`` (see the module's table). ``partial`` says what
    was done before this step, for the messages."""
    status = response.status
    text = status_message(response)
    target = subject.target
    if status == 404:
        return Judgement(Outcome.GONE, text)
    if status == 409:
        return Judgement(Outcome.CONFLICT, text)
    if status >= 500:
        return Judgement(Outcome.UNKNOWN, text)
    error: HpctopError
    if status == 422 or _admission_denied(status, text):
        error = ServerRejected(f"the server rejected {subject.doing}: {text}{partial}")
    elif status == 403:
        error = ActionForbidden(
            f"the API server refused {step.verb} {target.resource} {target.where} (403): {text}. "
            f"{subject.forbidden_hint}RBAC or an admission policy denies it even though it was offered; "
            f"nothing more was sent and hpctop does not retry{partial}",
            namespace=target.namespace,
            kind=subject.kind,
            action=subject.action,
        )
    elif status == 429 and step.subresource == "eviction":
        error = ActionFailed(
            f"{target} cannot be evicted now: a PodDisruptionBudget blocks it ({text}); try later"
        )
    elif status == 429:
        retry = response.error()
        after = f"; the server asks to wait {retry.retry_after:g}s" if retry and retry.retry_after else ""
        error = ActionFailed(f"the API server is throttling requests{after}: nothing was changed{partial}")
    else:
        error = ActionFailed(f"{subject.doing} failed (HTTP {status}): {text}{partial}")
    return Judgement(outcome_of(error), text, error)


__all__ = ["Judgement", "Subject", "judge", "retry_wait"]
