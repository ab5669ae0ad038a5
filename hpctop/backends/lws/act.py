"""The LeaderWorkerSet backend's actions: a LeaderWorkerSet is held like a Deployment.

Why: it has no suspend field, so hold scales it to zero with the old count saved in the
``hpctop.io/held-replicas`` annotation, in one RV-guarded patch, and release restores that count
(the engine's :class:`~hpctop.actions.engine.shapes.ScaledPlan`). A requeue is refused: scaling
to zero and back is a hold and a release, which the user can do and see. Move is offered for the
RBAC view because a Slinky LeaderWorkerSet's partition is an annotation (:mod:`hpctop.backends.slinky.act`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from hpctop.actions.engine.plan import ActionTable, Need
from hpctop.actions.engine.shapes import HELD_ANNOTATION, ScaledPlan
from hpctop.actions.requests import ActionKind


class LeaderWorkerSetPlan(ScaledPlan):
    kind = "LeaderWorkerSet"
    children = "StatefulSets"
    refused: ClassVar[Mapping[ActionKind, str]] = {
        ActionKind.REQUEUE: (
            "requeue of a LeaderWorkerSet is not supported: hold it (scale to 0), then release it"
        )
    }

    def offers(self, action: ActionKind) -> list[Need] | str:
        return self.own("patch") if action == ActionKind.MOVE else super().offers(action)


TABLE = ActionTable(
    "lws", plans=(LeaderWorkerSetPlan(),), acted=(("spec", "replicas"),), annotations=(HELD_ANNOTATION,)
)

__all__ = ["TABLE", "LeaderWorkerSetPlan"]
