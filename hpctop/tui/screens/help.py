"""The help screen: every binding from the keymap table, with the keys in effect after remapping."""

from __future__ import annotations

from collections.abc import Mapping

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.keys import format_key
from textual.screen import ModalScreen
from textual.widgets import Static

from hpctop.tui.keymap import KEYMAP, effective_keys
from hpctop.tui.sanitize import sanitize_display

SCOPES = {
    "app": "Anywhere",
    "jobs": "Jobs pane",
    "gpus": "GPU pane",
    "queues": "Queue pane",
    "detail": "Job detail",
    "modal": "Confirmation",
}


#: the narrowest screen that shows the action names (what ``[keys]`` in the config remaps); on an
#: 80-column terminal they took 18 cells and wrapped every "what it does" onto three or four lines
ACTION_COLUMN_MIN_WIDTH = 100


def help_table(keymap: Mapping[str, str], read_only: bool, show_action: bool = True) -> Table:
    table = Table(box=None, expand=True, show_header=True, header_style="bold")
    table.add_column("where", no_wrap=True)
    table.add_column("keys", no_wrap=True, style="bold")
    if show_action:
        table.add_column("action", no_wrap=True)
    table.add_column("what it does")
    for spec in KEYMAP:
        if read_only and spec.mutating:
            continue
        keys = ",".join(display_key(key) for key in effective_keys(spec, keymap).split(","))
        action = (Text(spec.name),) if show_action else ()
        table.add_row(Text(SCOPES[spec.scope]), Text(keys), *action, Text(spec.help))
    return table


def help_title(read_only: bool, show_action: bool) -> Text:
    """The help screen's first line: what it is and how to close it; on a narrow screen a second
    line says where the action names went."""
    title = Text("hpctop keys" + ("  (read-only: actions hidden)" if read_only else ""), style="bold")
    title.append("  · esc closes")
    if not show_action:
        width = ACTION_COLUMN_MIN_WIDTH
        title.append(f"\naction names (what [keys] in the config remaps): from {width} columns wide", "dim")
    return title


#: what the columns and marks of the panes mean (a key table alone left ORDER and ``~`` unexplained)
LEGEND: tuple[tuple[str, str], ...] = (
    ("ORDER", "where the scheduler tries a waiting job (lowest-share queue first, then priority)"),
    (
        "~",
        "hpctop's estimate, where another scheduler decides (KAI, Kueue, Volcano, YuniKorn);"
        " REASON ~starts next: placed in the core's last pass, nothing holds it back (squeue: None)",
    ),
    (
        "TIME / WAIT",
        "run time (0:00 until it starts, as squeue) / submission to start; one TIME/WAIT column"
        " where WAIT does not fit: a waiting job's wait",
    ),
    ("GANG", "members running / the gang's minimum"),
    ("ETA", "when hpctop expects a waiting job to start; none while held or blocked"),
    ("█ ░▒▓ · ✕ ⊘", "GPU in use, a fraction of one in use, free, down, cordoned"),
    ("┃ ⇡ fs", "queue guarantee, using more than it, fair-share factor (1: nothing used)"),
)


def legend_table() -> Table:
    """:data:`LEGEND` as two columns (a wrapped meaning stays in its column)."""
    table = Table(box=None, expand=True, show_header=True, header_style="bold", title_justify="left")
    table.add_column("columns and marks", no_wrap=True, style="bold")
    table.add_column("what they mean")
    for name, meaning in LEGEND:
        table.add_row(Text(name), Text(meaning))
    return table


def display_key(key: str) -> str:
    """A key as the user types it: Textual's name of a punctuation key ("plus", "equals_sign",
    "backslash") becomes its character; names that read well ("down", "enter", "ctrl+p") stay."""
    shown = format_key(key)
    return shown if len(shown) == 1 and shown.isascii() and not shown.isalnum() else key


def permissions_text(permissions: Mapping[str, str]) -> Text:
    items = list(permissions.items())
    t = Text()
    t.append("\nOn the selected job (", style="bold")
    t.append(sanitize_display(items[0][0], cap=200), style="bold")
    t.append("), the cluster's rules review says:\n", style="bold")
    for action, reason in items[1:]:
        t.append(f"  {action:<9}")
        t.append(sanitize_display(reason, cap=300))
        t.append("\n")
    return t


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", id="help_close")]  # noqa: RUF012

    def __init__(
        self, keymap: Mapping[str, str], read_only: bool, permissions: Mapping[str, str] | None = None
    ) -> None:
        """``permissions``: on a live cluster, the selected job's ``namespace/kind`` (first key, empty
        value) then action → what the rules review said, so a greyed-out key says why."""
        super().__init__()
        self._keymap = keymap
        self._read_only = read_only
        self._permissions = permissions

    def compose(self) -> ComposeResult:
        show_action = self.app.size.width >= ACTION_COLUMN_MIN_WIDTH
        with VerticalScroll(id="help-body"):
            title = help_title(self._read_only, show_action)
            yield Static(title, id="help-title")
            yield Static(help_table(self._keymap, self._read_only, show_action), id="help-table")
            yield Static(legend_table(), id="help-legend")
            if self._permissions:
                yield Static(permissions_text(self._permissions), id="help-permissions")
