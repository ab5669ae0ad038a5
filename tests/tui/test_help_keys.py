"""The help screen names keys as the user types them: "+", "=", "\\", not Textual's internal
names ("plus", "equals_sign") and not a half-replaced name ("back/" from "backslash")."""

from __future__ import annotations

from rich.console import Console

from hpctop.tui.screens.help import help_table


def _rendered(keymap: dict[str, str]) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(help_table(keymap, read_only=False))
    return console.export_text()


def _keys_of(text: str, action: str) -> str:
    for line in text.splitlines():
        cells = line.split()
        if action in cells:
            return cells[cells.index(action) - 1]
    raise AssertionError(f"no help row for {action}")


def test_punctuation_keys_are_shown_as_characters() -> None:
    text = _rendered({})
    assert _keys_of(text, "faster") == "+,="
    assert _keys_of(text, "slower") == "-"
    assert _keys_of(text, "filter") == "/"
    assert _keys_of(text, "help") == "?"
    assert "equals_sign" not in text and "question_mark" not in text


def test_remapped_key_is_shown_whole() -> None:
    text = _rendered({"filter": "backslash", "sort": "ctrl+s"})
    assert _keys_of(text, "filter") == "\\"
    assert _keys_of(text, "sort") == "ctrl+s"
    assert _keys_of(text, "cursor_down") == "down,j"  # readable names stay as they are
