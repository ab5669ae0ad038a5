"""R3 (RELIABILITY.md §R): read-only precedence is the ``--read-only`` flag, then the context's own
``read_only`` (``[contexts.NAME]``), then the global one (config file, or ``HPCTOP_READ_ONLY``).

The matrix below is written out row by row, not computed with the rule it checks. The live side
(which context a console is actually on, and that no key turns writes on) is in
``tests/kube/test_readonly_precedence.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hpctop.config import load_settings, read_only_for
from hpctop.errors import ConfigError

# (global in the file, prod's own read_only (None: no table; "unset": a table without it),
#  --read-only given, context used) → read-only?
MATRIX = [
    (False, None, False, "prod", False),
    (True, None, False, "prod", True),
    (False, "unset", False, "prod", False),
    (True, "unset", False, "prod", True),
    (False, True, False, "prod", True),  # the context's own beats the global
    (True, False, False, "prod", False),
    (False, True, False, "dev", False),  # another context: the global one
    (True, False, False, "dev", True),
    (False, False, True, "prod", True),  # the flag beats everything
    (False, None, True, "dev", True),
    (True, False, True, "prod", True),
    (False, True, False, None, False),  # no context (demo, scenario): the global one
    (True, False, False, None, True),
]


def config(tmp_path: Path, global_ro: bool, prod: bool | str | None) -> Path:
    text = f"read_only = {str(global_ro).lower()}\n"
    if prod is not None:
        text += "\n[contexts.prod]\n"
        if prod != "unset":
            text += f"read_only = {str(prod).lower()}\n"
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("global_ro", "prod", "flag", "context", "expected"), MATRIX)
def test_read_only_precedence_matrix(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    global_ro: bool,
    prod: bool | str | None,
    flag: bool,
    context: str | None,
    expected: bool,
) -> None:
    monkeypatch.delenv("HPCTOP_READ_ONLY", raising=False)
    monkeypatch.delenv("HPCTOP_CONTEXTS", raising=False)
    settings = load_settings(config(tmp_path, global_ro, prod), {"read_only": True if flag else None})
    assert read_only_for(settings, context, True if flag else None) is expected


def test_the_environment_is_global_and_a_context_still_beats_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HPCTOP_READ_ONLY", "true")
    settings = load_settings(config(tmp_path, False, False))
    assert settings.read_only is True  # the environment beats the file's global
    assert read_only_for(settings, "prod", None) is False  # prod's own beats both
    assert read_only_for(settings, "dev", None) is True
    monkeypatch.setenv("HPCTOP_CONTEXTS", '{"dev": {"read_only": false}}')
    settings = load_settings(config(tmp_path, False, None))
    assert read_only_for(settings, "dev", None) is False and read_only_for(settings, "prod", None) is True


def test_a_context_table_with_an_unknown_key_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("theme = 'hpctop-dark'\n[contexts.prod]\nreadonly = true\n")
    with pytest.raises(ConfigError, match=r"line 3: unknown setting 'contexts\.prod\.readonly'"):
        load_settings(path)
    path.write_text("[contexts.prod]\nread_only = 'sometimes'\n")
    with pytest.raises(ConfigError, match=r"line 2: contexts\.prod\.read_only"):
        load_settings(path)
