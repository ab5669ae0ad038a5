"""No hpctop module over ~800 lines without a reason in its docstring (issue 10, the standards).

Why: a long module is often several concerns that grew together, and the rule makes its author
say why it is one; the reason is a paragraph of the module docstring that starts with
``Why one module of this size:`` so a reader (and this test) finds it. The test reads the files as
text, so a module that cannot be imported here still counts.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "hpctop"
LIMIT = 800
MARKER = "Why one module of this size:"
MODULES = sorted(PACKAGE.rglob("*.py"))


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def _reason(path: Path) -> str | None:
    """The paragraph of the module docstring that starts with the marker, if any."""
    doc = ast.get_docstring(ast.parse(path.read_text()))
    for paragraph in (doc or "").split("\n\n"):
        if paragraph.startswith(MARKER):
            return paragraph
    return None


LONG = [pytest.param(p, id=str(p.relative_to(PACKAGE))) for p in MODULES if _lines(p) > LIMIT]


def test_the_rule_sees_the_package() -> None:
    assert len(MODULES) > 50 and (PACKAGE / "cli.py") in MODULES


@pytest.mark.parametrize("path", LONG)
def test_a_module_over_the_limit_says_why_it_is_one(path: Path) -> None:
    reason = _reason(path)
    assert reason is not None, f"{path.name}: {_lines(path)} lines and no paragraph starting {MARKER!r}"
    # a reason, not the marker alone: at least a sentence after it
    assert len(reason.removeprefix(MARKER).split()) >= 12, f"{path.name}: the reason is too short"
