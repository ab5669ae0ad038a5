"""The actuator for the embedded cluster: the same interface a live cluster's actuator has.

Actions go through :class:`~hpctop.sources.simulator.SimulatedCluster`, which answers like an API
server would (new object versions as watch events, or an error), and the events go into the
session's store by the same ``apply_raw`` path every other change takes, so what the console
shows after an action is what the cluster says, not what the actuator hoped. The preview is the
cluster's own plan for the request (``Job ns/x: spec.suspend false → true; 4 running pods
deleted``) and lists the Kubernetes requests a live cluster would be sent for the same action.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager

from hpctop.actions.requests import VERBS, ActionKind, ActionRequest, ActionResult, Preview
from hpctop.errors import ActionFailed, ActionRefused
from hpctop.model.objects import JobKey
from hpctop.model.store import Store
from hpctop.sources.simulator.cluster import Event, SimulatedCluster, SimulatorError


def _requests(kind: ActionKind, key: JobKey, value: str | int | None) -> tuple[str, ...]:
    ns, owner, name = key
    api = "apps/v1" if owner == "Deployment" else "batch/v1"
    target = f"{api} {owner} {ns}/{name}"
    if kind == ActionKind.CANCEL:
        return (f'DELETE {target} {{"propagationPolicy":"Background","preconditions":{{"uid":...}}}}',)
    if kind == ActionKind.HOLD:
        return (f'PATCH {target} {{"spec":{{"suspend":true}}}}',)
    if kind == ActionKind.RELEASE:
        return (f'PATCH {target} {{"spec":{{"suspend":false}}}}',)
    if kind == ActionKind.REQUEUE:
        return (
            f'PATCH {target} {{"spec":{{"suspend":true}}}}',
            f'PATCH {target} {{"spec":{{"suspend":false}}}}',
        )
    if kind == ActionKind.PRIORITY:
        return (
            f'PATCH {target} {{"spec":{{"template":{{"spec":{{"priorityClassName":<class of {value}>}}}}}}}}',
            f"DELETE pending pods of {ns}/{name} (recreated by the controller)",
        )
    return (
        f'PATCH {target} {{"spec":{{"template":{{"metadata":{{"labels":'
        f'{{"yunikorn.apache.org/queue":"{value}"}}}}}}}}}}',
        f"DELETE pending pods of {ns}/{name} (recreated by the controller)",
    )


class SimulatorActuator:
    """Carries out actions on a :class:`SimulatedCluster` and feeds the resulting events to ``store``.

    ``on_change`` is called after the events are applied (the session refreshes its snapshot and
    schedule); ``lock`` serialises actions with the session's clock steps when a caller runs them on
    different threads.
    """

    def __init__(
        self,
        cluster: SimulatedCluster,
        store: Store,
        on_change: Callable[[], None] | None = None,
        lock: AbstractContextManager[object] | None = None,
    ) -> None:
        self.cluster = cluster
        self.store = store
        self._on_change = on_change
        self._lock: AbstractContextManager[object] = lock if lock is not None else contextlib.nullcontext()
        self.executed: list[ActionResult] = []

    @property
    def read_only(self) -> bool:
        return False

    def _refusal(self, request: ActionRequest) -> str | None:
        uid = self.cluster.job_uid(request.job)
        ns, kind, name = request.job
        if uid is None:
            return f"{kind} {ns}/{name} no longer exists in the cluster"
        if request.job_uid and request.job_uid != uid:
            return (
                f"{kind} {ns}/{name} was replaced since you saw it "
                f"(uid {request.job_uid[:8]}… is now {uid[:8]}…); refresh and try again"
            )
        return None

    def preview(self, request: ActionRequest) -> Preview:
        with self._lock:
            refusal = self._refusal(request)
            if refusal is not None:
                return Preview(request, False, (), refusal=refusal)
            try:
                changes = self.cluster.plan(str(request.kind), request.job, request.value)
            except SimulatorError as exc:
                return Preview(request, False, (), refusal=exc.detail)
            return Preview(
                request, True, tuple(changes), requests=_requests(request.kind, request.job, request.value)
            )

    def execute(self, request: ActionRequest) -> ActionResult:
        with self._lock:
            preview = self.preview(request)
            if not preview.allowed:
                raise ActionRefused(preview.refusal)
            key = request.job
            try:
                events = self._send(request, key)
            except SimulatorError as exc:
                raise ActionFailed(exc.detail) from None
            self._apply(events)
            ns, kind, name = key
            result = ActionResult(
                request,
                True,
                # said as what it is: the simulated cluster changed, no real one was sent anything
                f"{kind} {ns}/{name} {VERBS[request.kind]} in the simulated cluster: "
                + "; ".join(preview.changes),
                preview.changes,
                at=self.cluster.now,
            )
            self.executed.append(result)
        if self._on_change is not None:
            self._on_change()
        return result

    def _send(self, request: ActionRequest, key: JobKey) -> list[Event]:
        kind = request.kind
        if kind == ActionKind.CANCEL:
            return self.cluster.cancel(key)
        if kind == ActionKind.HOLD:
            return self.cluster.hold(key)
        if kind == ActionKind.RELEASE:
            return self.cluster.release(key)
        if kind == ActionKind.REQUEUE:
            return self.cluster.requeue(key)
        if kind == ActionKind.PRIORITY:
            if request.value is None or isinstance(request.value, bool):
                raise SimulatorError("a priority value is required")
            return self.cluster.set_priority(key, int(request.value))
        if kind == ActionKind.MOVE:
            return self.cluster.move(key, str(request.value or ""))
        raise SimulatorError(f"unsupported action {kind}")

    def _apply(self, events: list[Event]) -> None:
        for kind, raw in events:
            self.store.apply_raw(kind, raw)
