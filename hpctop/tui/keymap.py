"""Key bindings as data: one table of action → default keys → meaning.

Slurm users arrive with their own muscle memory and terminals that eat some keys, so every binding
can be remapped from the config (``make_app(..., keymap={"cancel": "x"})``). Keeping the table as
data means the help screen, the footer, the read-only filter and the tests that press every key all
read the same list and cannot drift apart. Each entry becomes a Textual ``Binding`` with ``id`` set
to the entry's name, so remapping uses Textual's own keymap machinery (``App.set_keymap``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from textual.binding import Binding

#: Actions that change the cluster: hidden and inert in read-only mode.
MUTATING = frozenset(
    {
        "cancel",
        "requeue",
        "hold",
        "release",
        "priority",
        "move",
        "mark",
        "queue_close",
        "queue_open",
        "queue_edit",
    }
)


@dataclass(frozen=True, slots=True)
class KeySpec:
    name: str  # the id a config remaps
    keys: str  # default key(s), comma-separated Textual key names
    action: str  # the Textual action string
    description: str  # short, for the footer
    help: str  # one line, for the help screen
    scope: str  # app | jobs | gpus | queues | detail | modal
    show: bool = True

    @property
    def mutating(self) -> bool:
        return self.name in MUTATING


KEYMAP: tuple[KeySpec, ...] = (
    # -- anywhere --------------------------------------------------------------------------------
    KeySpec("quit", "q", "quit", "Quit", "Leave hpctop (ctrl+c too)", "app"),
    KeySpec("help", "question_mark", "help", "Help", "Show every key binding and what it does", "app"),
    KeySpec(
        "palette",
        "ctrl+p",
        "command_palette",
        "Palette",
        "Jump to a job/node/queue, switch theme, ...",
        "app",
        False,
    ),
    KeySpec("next_pane", "tab", "app.focus_next", "Next pane", "Move focus to the next pane", "app", False),
    KeySpec(
        "prev_pane",
        "shift+tab",
        "app.focus_previous",
        "Prev pane",
        "Move focus to the previous pane",
        "app",
        False,
    ),
    KeySpec("focus_gpus", "1", "focus_pane('gpus')", "GPUs", "Focus the GPU pane", "app", False),
    KeySpec("focus_queues", "2", "focus_pane('queues')", "Queues", "Focus the queue pane", "app", False),
    KeySpec("focus_jobs", "3", "focus_pane('jobs')", "Jobs", "Focus the jobs pane", "app", False),
    KeySpec("zoom", "z", "zoom", "Zoom", "GPU pane zoom: cluster heat map → partition → node", "app"),
    KeySpec(
        "charts",
        "C",
        "toggle_charts",
        "Charts",
        "Show or hide the charts (shown by default from 44 rows; smaller, they replace the top panes)",
        "app",
        False,
    ),
    KeySpec(
        "faster", "plus,equals_sign", "speed(2.0)", "Faster", "Double the simulated clock speed", "app", False
    ),
    KeySpec("slower", "minus", "speed(0.5)", "Slower", "Halve the simulated clock speed", "app", False),
    KeySpec("pause", "P", "pause", "Pause", "Pause or resume the simulated clock", "app", False),
    KeySpec("refresh", "ctrl+r", "refresh", "Refresh", "Re-read the cluster and redraw now", "app", False),
    # -- reads of the selected job (k9s habits; allowed in read-only) -----------------------------
    KeySpec("logs", "l", "object_view('logs')", "Logs", "Follow the selected job's pod log", "app", False),
    KeySpec("yaml", "y", "object_view('yaml')", "YAML", "The selected job's objects as YAML", "app", False),
    # -- actions (app-wide so they also work in the job detail screen) ---------------------------
    KeySpec("cancel", "c", "job_action('cancel')", "Cancel", "Cancel the selected/marked jobs", "app"),
    KeySpec("requeue", "r", "job_action('requeue')", "Requeue", "Requeue the selected/marked jobs", "app"),
    # not only pending ones: a running Kubernetes job can be held too (suspended, its pods stopped)
    KeySpec(
        "hold",
        "h",
        "job_action('hold')",
        "Hold",
        "Hold jobs until released (a running one is stopped)",
        "app",
    ),
    KeySpec("release", "u", "job_action('release')", "Release", "Release held jobs", "app"),
    KeySpec("priority", "p", "job_action('priority')", "Priority", "Set a job's priority value", "app"),
    KeySpec("move", "m", "job_action('move')", "Move", "Move jobs to another queue", "app"),
    # -- jobs pane -------------------------------------------------------------------------------
    KeySpec("cursor_down", "down,j", "cursor(1)", "Down", "Next job", "jobs", False),
    KeySpec("cursor_up", "up,k", "cursor(-1)", "Up", "Previous job", "jobs", False),
    KeySpec("page_down", "pagedown,ctrl+d", "page(1)", "Page down", "One screen of jobs down", "jobs", False),
    KeySpec("page_up", "pageup,ctrl+u", "page(-1)", "Page up", "One screen of jobs up", "jobs", False),
    KeySpec(
        "first",
        "home,g",
        "jump(0)",
        "First",
        "First job; the cursor stays on the top row as jobs arrive",
        "jobs",
        False,
    ),
    KeySpec("last", "end,G", "jump(-1)", "Last", "Last job", "jobs", False),
    KeySpec("detail", "enter", "detail", "Detail", "Open the job detail screen", "jobs"),
    KeySpec("mark", "space", "mark", "Mark", "Mark/unmark the job for bulk actions", "jobs"),
    KeySpec("sort", "s", "sort_next", "Sort", "Sort by the next column", "jobs"),
    KeySpec("sort_reverse", "S", "sort_reverse", "Reverse", "Reverse the sort order", "jobs", False),
    KeySpec("filter", "slash", "filter", "Filter", "Filter rows by text across all columns", "jobs"),
    KeySpec(
        "filter_state", "f", "cycle_state", "State", "Quick filter: all → pending → running → done", "jobs"
    ),
    KeySpec(
        "filter_queue",
        "Q",
        "only_queue",
        "Queue",
        "Quick filter: only the selected job's queue",
        "jobs",
        False,
    ),
    KeySpec(
        "filter_partition",
        "A",
        "only_partition",
        "Partition",
        "Quick filter: only the job's partition",
        "jobs",
        False,
    ),
    KeySpec(
        "filter_mine",
        "M",
        "only_mine",
        "Mine",
        "Quick filter: only my jobs (config user or $USER)",
        "jobs",
        False,
    ),
    KeySpec("clear_filters", "escape", "clear_filters", "Clear", "Clear every filter", "jobs", False),
    # -- GPU pane --------------------------------------------------------------------------------
    KeySpec("gpu_down", "down,j", "move(1)", "Down", "Next node", "gpus", False),
    KeySpec("gpu_up", "up,k", "move(-1)", "Up", "Previous node", "gpus", False),
    KeySpec("gpu_next_part", "right,l", "move_partition(1)", "Next part.", "Next partition", "gpus", False),
    KeySpec("gpu_prev_part", "left", "move_partition(-1)", "Prev part.", "Previous partition", "gpus", False),
    # -- queue pane ------------------------------------------------------------------------------
    KeySpec("queue_down", "down,j", "move(1)", "Down", "Next queue", "queues", False),
    KeySpec("queue_up", "up,k", "move(-1)", "Up", "Previous queue", "queues", False),
    KeySpec("queue_toggle", "enter", "toggle_queue", "Expand", "Expand or collapse the queue", "queues"),
    KeySpec("queue_expand", "right,l", "expand(True)", "Expand", "Expand the queue", "queues", False),
    KeySpec("queue_collapse", "left", "expand(False)", "Collapse", "Collapse the queue", "queues", False),
    KeySpec(
        "queue_close",
        "x",
        "app.queue_stop('close')",
        "Close queue",
        "Close the selected Kueue queue: Hold (admit nothing new) or HoldAndDrain (also evict)",
        "queues",
    ),
    KeySpec(
        "queue_open",
        "o",
        "app.queue_stop('open')",
        "Open queue",
        "Open the selected Kueue queue again (stopPolicy None)",
        "queues",
    ),
    KeySpec(
        "queue_edit",
        "e",
        "app.queue_edit",
        "Edit queue",
        "YuniKorn queue: set its priority offset or quota (queues.yaml in its ConfigMap)",
        "queues",
    ),
    # -- screens ---------------------------------------------------------------------------------
    KeySpec("close", "escape", "close", "Close", "Close this screen", "detail"),
    KeySpec("confirm", "y", "confirm", "Confirm", "Confirm the action", "modal"),
    KeySpec("deny", "n,escape", "deny", "Cancel", "Do not act", "modal"),
)


def bindings(scope: str) -> list[Binding]:
    """The Textual bindings of one scope (their ids are the table's names, for remapping)."""
    return [
        Binding(spec.keys, spec.action, spec.description, show=spec.show, id=spec.name)
        for spec in KEYMAP
        if spec.scope == scope
    ]


def specs(scope: str | None = None) -> list[KeySpec]:
    return [s for s in KEYMAP if scope is None or s.scope == scope]


def effective_keys(spec: KeySpec, keymap: Mapping[str, str]) -> str:
    """The keys a binding answers to after the user's remapping."""
    return keymap.get(spec.name, spec.keys)


def validate_keymap(keymap: Mapping[str, str]) -> dict[str, str]:
    """Reject names that are not in the table (a typo in the config should say so)."""
    known = {s.name for s in KEYMAP}
    unknown = sorted(set(keymap) - known)
    if unknown:
        from hpctop.errors import ConfigError

        raise ConfigError(
            f"unknown key binding name(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    return dict(keymap)
