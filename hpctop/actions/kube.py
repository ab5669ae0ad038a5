"""The live cluster's actuator: the actions engine with every backend's plans.

Why this module: the engine (:mod:`hpctop.actions.engine`) knows how to preview, send, answer and
settle a request and nothing about a backend; the plans (each backend's ``act.py``, gathered in
:mod:`hpctop.actions.book`) know each backend's requests and nothing about HTTP.
:class:`KubeActions` puts the two together, and is what the rest of hpctop imports (the console's
session, the tests). What each action sends, per owner kind, is in ``docs/actions.md``; the
module docstrings of the plans say why.

Sync and async: the :class:`~hpctop.actions.requests.Actuator` protocol is synchronous;
:class:`KubeActions` is the async core and :class:`~hpctop.actions.actuator.KubeActuator` its
adapter on a loop thread of its own. Gang binding (:func:`bind_gang`) is for hpctop's headless
scheduler (:mod:`hpctop.actions.engine.binding`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hpctop.actions.book import BOOK, KINDS
from hpctop.actions.engine.binding import Assignment, BindOutcome, GangBindResult, bind_gang
from hpctop.actions.engine.core import ActionEngine
from hpctop.actions.engine.plan import PlanBook
from hpctop.actions.engine.shapes import HELD_ANNOTATION
from hpctop.actions.engine.targets import FIELD_MANAGER, Seen, StaleTarget, Step, Target
from hpctop.actions.requests import ActionForbidden, ActionResult, Permission, Preview, queue_request
from hpctop.backends.kueue.act import queue_kind_refusal
from hpctop.backends.slinky.act import SLINKY_PARTITION, SLINKY_PRIORITY
from hpctop.errors import ActionRefused
from hpctop.sources.kube.transport import KubeClient


class KubeActions(ActionEngine):
    """Previews and executes job and queue actions on one cluster (see :class:`ActionEngine` for
    the keyword arguments); ``book`` defaults to every backend's plans."""

    def __init__(self, client: KubeClient, book: PlanBook = BOOK, **kwargs: Any) -> None:
        super().__init__(client, book, **kwargs)

    async def preview_queue_stop_policy(self, kind: str, name: str, namespace: str, policy: str) -> Preview:
        """The server's dry run of setting a Kueue queue's ``spec.stopPolicy`` ("close / open queue").

        ``kind`` is ``ClusterQueue`` (cluster-scoped: ``namespace`` is ignored) or ``LocalQueue``;
        ``policy`` is ``Hold``, ``HoldAndDrain`` (also evicts what is admitted) or ``None``. The
        queue's state is remembered so :meth:`set_queue_stop_policy` sends with its resourceVersion.
        """
        request = queue_request(kind, name, namespace, policy)
        refusal = queue_kind_refusal(kind)
        if refusal is not None:
            return Preview(request, False, (), refusal=refusal)
        return await self.preview(request)

    async def set_queue_stop_policy(self, kind: str, name: str, namespace: str, policy: str) -> ActionResult:
        """Set a Kueue queue's ``spec.stopPolicy``: a merge patch carrying the resourceVersion the
        last :meth:`preview_queue_stop_policy` saw (else that of a fresh read), ``fieldManager=hpctop``.

        Raises :class:`ActionRefused` when nothing was sent (:class:`StaleTarget` with a fresh
        preview on a 409) and :class:`~hpctop.errors.ActionFailed` when the server refused or the
        outcome is unknown.
        """
        refusal = queue_kind_refusal(kind)
        if refusal is not None:
            raise ActionRefused(refusal)
        return await self.execute(queue_request(kind, name, namespace, policy))


def summarize(obj: Mapping[str, Any]) -> dict[str, str]:
    """The fields a person cares about when deciding again, flattened to ``a.b → value``."""
    return BOOK.fields.summarize(obj)


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[str, ...]:
    """What changed between two versions of an object, one line per field."""
    return BOOK.fields.diff(before, after)


__all__ = [
    "FIELD_MANAGER",
    "HELD_ANNOTATION",
    "KINDS",
    "SLINKY_PARTITION",
    "SLINKY_PRIORITY",
    "ActionForbidden",
    "Assignment",
    "BindOutcome",
    "GangBindResult",
    "KubeActions",
    "Permission",
    "Seen",
    "StaleTarget",
    "Step",
    "Target",
    "bind_gang",
    "diff",
    "summarize",
]
