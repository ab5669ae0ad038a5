"""Gang binding for hpctop's headless scheduler: N Binding creates, all or none as far as the API allows.

Why its own module: the API server has no multi-object transaction, so binding a gang is a rule
(see :func:`bind_gang`) on top of the same safety as every other write: each Binding carries the
pod's uid (and RV) as preconditions, a lost answer is settled by re-reading the pod by uid and
never by sending again blindly (M5), and a rollback deletes with a uid precondition.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hpctop.actions.engine.objects import dig, status_message
from hpctop.actions.engine.targets import FIELD_MANAGER
from hpctop.model.objects import Pod
from hpctop.sources.kube.errors import ServerUnreachable, StreamBroken
from hpctop.sources.kube.transport import KubeClient


@dataclass(frozen=True, slots=True)
class Assignment:
    """One gang member and the node it goes to; uid (and RV) become the Binding's preconditions."""

    namespace: str
    name: str
    uid: str
    node: str
    resource_version: str = ""

    @classmethod
    def of(cls, pod: Pod, node: str) -> Assignment:
        return cls(pod.namespace, pod.name, pod.uid, node, pod.resource_version)

    @property
    def path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/pods/{self.name}"


@dataclass(frozen=True, slots=True)
class BindOutcome:
    assignment: Assignment
    #: bound | failed | not-tried | rolled-back | stranded
    state: str
    status: int | None = None
    message: str = ""
    audit_id: str | None = None


@dataclass(frozen=True, slots=True)
class GangBindResult:
    outcomes: tuple[BindOutcome, ...]

    @property
    def ok(self) -> bool:
        return all(o.state == "bound" for o in self.outcomes)

    @property
    def stranded(self) -> tuple[BindOutcome, ...]:
        """Members left bound after a failed gang (their rollback delete failed too)."""
        return tuple(o for o in self.outcomes if o.state == "stranded")

    def summary(self) -> str:
        counts: dict[str, int] = {}
        for outcome in self.outcomes:
            counts[outcome.state] = counts.get(outcome.state, 0) + 1
        return ", ".join(f"{n} {state}" for state, n in counts.items())


@dataclass
class _BindTry:
    retries: int = 0
    notes: list[str] = field(default_factory=list)


async def _bind_one(
    client: KubeClient, a: Assignment, *, max_retries: int, sleep: Callable[[float], Awaitable[None]]
) -> BindOutcome:
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": a.name, "namespace": a.namespace, "uid": a.uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": a.node},
    }
    if a.resource_version:
        body["metadata"]["resourceVersion"] = a.resource_version
    attempt = _BindTry()
    while True:
        try:
            response = await client.request(
                "POST", a.path + "/binding", params={"fieldManager": FIELD_MANAGER}, body=body
            )
        except (ServerUnreachable, StreamBroken) as exc:
            response = None
            why = exc.detail
        if response is not None and response.ok:
            return BindOutcome(a, "bound", response.status, audit_id=response.audit_id)
        if response is not None and response.status == 429 and attempt.retries < max_retries:
            error = response.error()
            attempt.retries += 1
            await sleep(min(error.retry_after if error and error.retry_after else 1.0, 5.0))
            continue
        if response is not None and response.status < 500 and response.status != 409:
            return BindOutcome(a, "failed", response.status, status_message(response), response.audit_id)
        # 409 (already bound: maybe our own earlier try), 5xx or no answer: the outcome is decided
        # by re-reading the pod by uid, never by sending the Binding again blindly (M5).
        if response is not None:
            why = f"HTTP {response.status}: {status_message(response)}"
        read = await client.request("GET", a.path)
        pod = read.json() if read.ok else None
        if isinstance(pod, dict) and dig(pod, "metadata", "uid") == a.uid:
            bound_to = dig(pod, "spec", "nodeName")
            if bound_to == a.node:
                return BindOutcome(a, "bound", response.status if response else None, f"confirmed ({why})")
            if bound_to:
                return BindOutcome(
                    a, "failed", response.status if response else None, f"already bound to {bound_to} ({why})"
                )
            if response is not None and response.status != 409 and attempt.retries < max_retries:
                attempt.retries += 1  # a transient 5xx, and the pod is still unbound: safe to try again
                await sleep(0.5)
                continue
        elif read.status == 404 or isinstance(pod, dict):
            return BindOutcome(
                a, "failed", response.status if response else None, f"pod gone or replaced ({why})"
            )
        return BindOutcome(a, "failed", response.status if response else None, why)


async def bind_gang(
    client: KubeClient,
    assignments: Sequence[Assignment],
    *,
    max_retries: int = 2,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> GangBindResult:
    """Bind a gang's pods all-or-none, as far as the API allows.

    The API server has no multi-object transaction: a gang bind is N Binding creates
    (``POST pods/{n}/binding``), each carrying the pod's uid (and RV) as preconditions, so a pod
    recreated under the same name is never bound by accident. The rule:

    1. Bind the members one by one, in order. Transient errors (429, 5xx, no answer) are settled by
       re-reading the pod by uid (bound to our node = success) and retried at most ``max_retries``
       times while the pod is still unbound; a 409 (bound elsewhere, or a new uid) is final.
    2. On the first member that fails, stop: the rest are not bound ("not-tried").
    3. A bound pod cannot be unbound (``spec.nodeName`` is immutable), so every member bound so
       far is **deleted** (uid precondition, ``gracePeriodSeconds: 0``, Background): its
       controller (Job, JobSet, ...) recreates it unbound and the gang is scheduled again later.
       Gang members must therefore be controller-owned; a bare pod would be lost.
    4. A member whose rollback delete fails is reported "stranded": bound, with the gang broken.

    Returns the outcome per member; ``ok`` only when all are bound.
    """
    outcomes: list[BindOutcome] = []
    failed_at: int | None = None
    for index, a in enumerate(assignments):
        outcome = await _bind_one(client, a, max_retries=max_retries, sleep=sleep)
        outcomes.append(outcome)
        if outcome.state != "bound":
            failed_at = index
            break
    if failed_at is None:
        return GangBindResult(tuple(outcomes))
    final: list[BindOutcome] = []
    for outcome in outcomes[:failed_at]:
        final.append(await _roll_back(client, outcome))
    final.append(outcomes[failed_at])
    final.extend(BindOutcome(a, "not-tried") for a in assignments[failed_at + 1 :])
    return GangBindResult(tuple(final))


async def _roll_back(client: KubeClient, outcome: BindOutcome) -> BindOutcome:
    a = outcome.assignment
    options = {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "propagationPolicy": "Background",
        "gracePeriodSeconds": 0,
        "preconditions": {"uid": a.uid},
    }
    try:
        response = await client.request("DELETE", a.path, body=options)
    except (ServerUnreachable, StreamBroken) as exc:
        return BindOutcome(a, "stranded", None, f"bound; rollback delete got no answer ({exc.detail})")
    if response.ok or response.status == 404:
        return BindOutcome(
            a, "rolled-back", response.status, "deleted so its controller recreates it unbound"
        )
    return BindOutcome(
        a, "stranded", response.status, f"bound; rollback delete failed: {status_message(response)}"
    )


__all__ = ["Assignment", "BindOutcome", "GangBindResult", "bind_gang"]
