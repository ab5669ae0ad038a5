"""The "What may I do?" screen: who the cluster thinks you are and which actions it would allow.

Why a screen of its own: greyed-out keys say *that* an action is not offered, not *why*, and a
user who expected to cancel a job needs the reason (no rule grants ``delete jobs.batch`` in that
namespace) to ask an administrator for the right thing. The answers come from the per-namespace
SelfSubjectRulesReview, which Kubernetes documents as a UI hint: "probably denied" is not proof,
and the server's own 403 still decides (RELIABILITY.md §2.3). Every string from the cluster goes
through the sanitiser; the body is one Rich ``Text``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from hpctop.actions.requests import ActionKind
from hpctop.tui.sanitize import sanitize_display

if TYPE_CHECKING:
    from hpctop.actions.kube import Permission

_MARK = {True: "✓", False: "✗", None: "?"}


def permission_lines(
    identity: str, table: Mapping[tuple[str, str], Mapping[ActionKind, Permission]], fallback: str
) -> Text:
    """``identity``, then per (namespace, kind) each action's answer; ``fallback`` where none came."""
    t = Text()
    t.append("What may I do?\n", style="bold")
    t.append("identity: ")
    t.append(sanitize_display(identity, cap=200), style="bold")
    t.append("\n(the rules review is a hint; the API server's answer to the request decides)\n", style="dim")
    for (namespace, kind), permissions in table.items():
        t.append("\n")
        t.append(sanitize_display(f"{namespace} / {kind}", cap=200), style="bold underline")
        t.append("\n")
        for action in ActionKind:
            permission = permissions.get(action)
            mark = _MARK[permission.allowed] if permission is not None else "·"
            reason = permission.reason if permission is not None else fallback
            t.append(f"  {mark} {action.value:<9}")
            t.append(sanitize_display(reason, cap=300))
            t.append("\n")
    return t


class PermissionsScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q", "dismiss", "Close", id="permissions_close")]  # noqa: RUF012

    def __init__(self, body: Text) -> None:
        super().__init__()
        self.body = body

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static(self.body, id="permissions-body")
