"""Confirmation, input and picker modals for actions.

The confirmation shows the actuator's *preview* (what will change) before anything is sent, and
names every target job. Names are sanitised, and bidi/zero-width characters are flagged in a
separate warning line (RELIABILITY.md T4), so a job named to look like another cannot be confirmed
by mistake. All text is built as Rich ``Text``; no cluster string is parsed as markup.

Each modal answers once (:class:`OnceModal`): two Enters that arrive in one read of the terminal
(a double press, a key repeat) used to dismiss a picker twice, the second popping the main screen
(``ScreenStackError``, the console gone). The confirmation opens with *Cancel* focused, so an
Enter meant for the screen before it (the picker's second Enter) never confirms: only ``y`` or a
click on *Confirm* does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from rich.console import Console, ConsoleOptions
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from hpctop.actions.requests import Preview
from hpctop.tui.keymap import bindings
from hpctop.tui.sanitize import has_flagged, sanitize_display

R = TypeVar("R")


def preview_text(
    title: str, previews: Sequence[Preview], names: Sequence[str], noun: str = "job", simulated: bool = False
) -> Text:
    """What confirming would do, before anything is done: each change as "→ …" (a "✓" read as done
    already), each refusal as "✗ …". ``simulated``: the changes are the simulated cluster's (the
    requests listed are what a live cluster would be sent, and nothing is sent anywhere)."""
    t = Text()
    t.append(title + "\n", style="bold")
    if simulated:
        t.append("In the simulated cluster, if you confirm (no real cluster is touched):\n", style="dim")
    t.append("\n")
    flagged = [n for n in names if has_flagged(n)]
    for p in previews:
        if p.allowed:
            for change in p.changes:
                t.append("  → ")
                t.append(sanitize_display(change, cap=400))
                t.append("\n")
        else:
            t.append("  ✗ ", style="bold red")
            t.append(sanitize_display(f"{p.request.job[0]}/{p.request.job[2]}: {p.refusal}", cap=400))
            t.append("\n")
        if p.requests and simulated:
            t.append("      a live cluster would be sent:\n", style="dim")
        for req in p.requests:
            # a request's body (its JSON) on a line of its own under it: a long one-line request
            # wrapped at the dialog's margin, as if the body were a change of its own
            head, brace, body = req.partition(" {")
            t.append("      ")
            t.append(sanitize_display(head, cap=400), style="dim")
            t.append("\n")
            if brace:
                t.append("        ")
                t.append(sanitize_display("{" + body, cap=400), style="dim")
                t.append("\n")
    if flagged:
        t.append("\n⚠ names contain hidden, bidi or control characters (shown as <U+…>/␛):\n", style="bold")
        for n in flagged:
            t.append("    ")
            t.append(sanitize_display(n, cap=200))
            t.append("\n")
    allowed = sum(1 for p in previews if p.allowed)
    where = " in the simulated cluster" if simulated else ""
    t.append(f"\n{allowed} of {len(previews)} {noun}(s) will be changed{where}. Confirm? (y/n)")
    return t


#: the marks that start an item of a preview: a wrapped item goes on under its text, not its mark
ITEM_MARKS = ("→ ", "✗ ", "⚠ ")


def item_hang(plain: str) -> int:
    """Where a preview line's continuation goes: under its own text, past its indent and its mark."""
    indent = len(plain) - len(plain.lstrip(" "))
    return indent + 2 if plain[indent:].startswith(ITEM_MARKS) else indent


class HangingText:
    """``text`` wrapped to the dialog's width with each line's continuation under the line's own
    text (its indent, and its mark: "→ ", "✗ "). Rich wraps a ``Text`` at the margin, so at 80
    columns "✗ search/openb-pod-1601: ... has already finished (complete)" went on at the dialog's
    edge, as if "(complete)" were an item of its own. ``hang``: the continuation's column for a
    line's plain text (:func:`item_hang` by default; the job detail's hangs under the value).
    ``str()`` is the text unwrapped (what tests and a copy read)."""

    def __init__(self, text: Text, hang: Callable[[str], int] = item_hang) -> None:
        self.text = text
        self.hang = hang

    def __str__(self) -> str:
        return self.text.plain

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        width = options.max_width
        for line in self.text.split("\n", allow_blank=True):
            indent = self.hang(line.plain)
            if line.cell_len <= width or indent * 2 > width:
                yield line
                continue
            head, body = line.divide([indent])[:2] if indent else (Text(), line)
            for i, part in enumerate(body.wrap(console, width - indent)):
                part.rstrip()
                yield (head if i == 0 else Text(" " * indent)) + part


class OnceModal(ModalScreen[R]):
    """A modal whose answer is given once: later answers (a second Enter) are ignored."""

    answered = False

    def answer(self, result: R | None) -> None:
        if self.answered or not self.is_current:
            return
        self.answered = True
        self.dismiss(result)


class ConfirmScreen(OnceModal[bool]):
    BINDINGS = list(bindings("modal"))  # noqa: RUF012

    def __init__(self, body: Text, can_confirm: bool) -> None:
        super().__init__()
        self._body = body
        self._can_confirm = can_confirm

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box", classes="modal-box"):
            with VerticalScroll(id="confirm-scroll"):  # a long preview scrolls; the buttons stay
                yield Static(HangingText(self._body), id="confirm-body")
            with Horizontal(classes="modal-buttons"):
                yield Button("Confirm (y)", id="confirm-yes", variant="error", disabled=not self._can_confirm)
                yield Button("Cancel (n)", id="confirm-no")

    @property
    def body_text(self) -> str:
        """The preview as plain text (what the dialog shows, before it is wrapped to its width)."""
        return self._body.plain

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()  # an Enter typed ahead never confirms

    def action_confirm(self) -> None:
        if self._can_confirm:
            self.answer(True)

    def action_deny(self) -> None:
        self.answer(False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "confirm-yes":
            self.action_confirm()
        else:
            self.action_deny()


class PromptScreen(OnceModal[str]):
    """One line of input (a new priority, a filter); escape gives ``None``."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt_cancel")]  # noqa: RUF012

    def __init__(self, title: str, value: str = "", placeholder: str = "", integer: bool = False) -> None:
        super().__init__()
        self._title = title
        self._value = value
        self._placeholder = placeholder
        self._integer = integer

    def compose(self) -> ComposeResult:
        with Vertical(classes="modal-box prompt-box"):
            yield Static(Text(self._title, style="bold"))
            yield Input(
                value=self._value,
                placeholder=self._placeholder,
                type="integer" if self._integer else "text",
                id="prompt-input",
            )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.answer(event.value)

    def action_cancel(self) -> None:
        self.answer(None)


class PickScreen(OnceModal[str]):
    """Choose one of several values (a queue to move jobs to)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="pick_cancel")]  # noqa: RUF012

    def __init__(self, title: str, choices: Sequence[str]) -> None:
        super().__init__()
        self._title = title
        self._choices = list(choices)

    def compose(self) -> ComposeResult:
        with Vertical(classes="modal-box pick-box"):
            yield Static(Text(self._title, style="bold"))
            yield OptionList(
                *[Option(Text(sanitize_display(c, cap=200)), id=str(i)) for i, c in enumerate(self._choices)]
            )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.answer(self._choices[int(event.option.id or 0)])

    def action_cancel(self) -> None:
        self.answer(None)
