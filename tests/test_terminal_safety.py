"""Terminal safety, RELIABILITY.md §6 T3 (static check) and T5 (huge and wide text keeps the layout).

T3: Textual and Rich parse a ``str`` as markup in many sinks (§3.2), so the rule is that cluster text
reaches them only as data (``Text``, ``Content``) or with ``markup=False``. Following data flow
through the program is more than a test can do honestly, so the checker below is syntactic and
errs towards flagging: any *string-building* expression (f-string, concatenation, ``%``,
``str()``/``format``/``join``, ``sanitize_display``: sanitised is not escaped) handed to a markup
sink, and every markup switch or parser call that is not a literal, is a finding. Bare names and
other calls are trusted, because mypy --strict types them and the sinks in hpctop.tui receive
``Text`` builders. A line ending in ``# t3: ok <why>`` is an accepted exception. The checker is
itself tested on a planted file, so a refactor that blinds it fails here rather than passing quietly.

T5: a 1 MB message, very long names, CJK, emoji, combining marks and right-to-left text in a job:
the table columns stay where the header puts them (counted in terminal cells, not code points), no
crash, and drawing and moving stay fast.
"""

from __future__ import annotations

import ast
import time
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.segment import Segment

from hpctop.model.objects import JobKey, Reason
from hpctop.model.states import JobState, ReasonCode
from hpctop.tui.app import make_app
from hpctop.tui.sanitize import CELL_CAP, fit_cells
from hpctop.tui.screens.detail import JobDetailScreen
from hpctop.tui.widgets.jobs import JobsTable
from tests.sample_session import SampleSession

TUI = Path(__file__).resolve().parents[1] / "hpctop" / "tui"

# -- T3: the checker ---------------------------------------------------------------------------------

#: constructors whose first positional argument is parsed as markup when it is a str (§3.2)
SINK_CALLS = frozenset({"Static", "Label", "Button", "Tab", "Tree", "OptionList", "Option", "Checkbox"})
#: methods that take renderables and parse a str (Static.update, DataTable.add_row, notify, ...)
SINK_METHODS = frozenset(
    {
        "update",
        "notify",
        "add_row",
        "add_column",
        "add_option",
        "add_options",
        "set_options",
        "add",
        "add_leaf",
    }
)
SINK_METHODS = SINK_METHODS | {"set_label", "write", "push_screen_title"}
#: attributes rendered through ``Widget.render_str`` / ``Content.from_markup``
SINK_ATTRS = frozenset({"border_title", "border_subtitle", "tooltip", "title", "sub_title", "label"})
#: parsers: allowed only on a literal template (``Content.from_markup("Pod: $name", name=s)``)
PARSERS = frozenset({"from_markup", "to_content", "render_markup"})
#: calls never allowed with data: clipboard (OSC 52) and "escaping" that does not escape (§3.2)
FORBIDDEN = frozenset({"copy_to_clipboard", "escape"})
STR_METHODS = frozenset({"format", "join", "ljust", "rjust", "center", "strip", "lower", "upper", "replace"})
STR_FUNCS = frozenset({"str", "repr", "format", "sanitize_display", "fit_cells"})


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _builds_str(node: ast.expr) -> bool:
    """Whether ``node`` is an expression that makes a new ``str`` (so it may carry data)."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return any(
            _builds_str(side) or (isinstance(side, ast.Constant) and isinstance(side.value, str))
            for side in (node.left, node.right)
        )
    if isinstance(node, ast.IfExp):
        return _builds_str(node.body) or _builds_str(node.orelse)
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name):
            return node.func.id in STR_FUNCS
        if isinstance(node.func, ast.Attribute):
            return node.func.attr in STR_METHODS
    return False


def _literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _markup(call: ast.Call) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == "markup"), None)


def check_source(source: str, path: str = "<planted>") -> list[Finding]:
    """Every place in ``source`` where text could reach a markup parser (see the module docstring)."""
    lines = source.splitlines()
    found: list[Finding] = []

    def flag(node: ast.AST, what: str) -> None:
        line = getattr(node, "lineno", 0)
        end = getattr(node, "end_lineno", line) or line
        if not any("# t3: ok" in lines[i - 1] for i in range(line, end + 1) if 0 < i <= len(lines)):
            found.append(Finding(path, line, what))

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = _name(node.func)
            markup = _markup(node)
            if markup is not None and not (isinstance(markup, ast.Constant) and markup.value is False):
                flag(node, f"{name}(markup={ast.unparse(markup)}): markup must be literally False")
            if name in PARSERS and not (node.args and _literal(node.args[0])):
                flag(node, f"{name}() on a non-literal template: use Content.from_markup(tpl, **vars)")
            if name in FORBIDDEN and not all(_literal(a) for a in node.args):
                flag(node, f"{name}() with data")
            if name == "Link" or any(k.arg == "link" and not _literal(k.value) for k in node.keywords):
                flag(node, f"{name}(): hyperlink built from data")
            sink = (isinstance(node.func, ast.Name) and name in SINK_CALLS) or (
                isinstance(node.func, ast.Attribute) and name in SINK_METHODS
            )
            if sink and markup is None:
                args = node.args if name in ("add_row", "add_options", "set_options") else node.args[:1]
                args = args + [k.value for k in node.keywords if k.arg in ("label", "prompt", "message")]
                for arg in args:
                    if _builds_str(arg):
                        flag(arg, f"{name}(): a built str is parsed as markup (pass Text/Content)")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                value = node.value
                sink = isinstance(target, ast.Attribute) and target.attr in SINK_ATTRS
                if sink and value is not None and (isinstance(node, ast.AugAssign) or _builds_str(value)):
                    assert isinstance(target, ast.Attribute)
                    flag(node, f".{target.attr} = a built str (rendered as markup)")
    return found


def check_tree(root: Path = TUI) -> list[Finding]:
    out: list[Finding] = []
    for path in sorted(root.rglob("*.py")):
        out += check_source(path.read_text(encoding="utf-8"), str(path.relative_to(root.parent.parent)))
    return out


PLANTED = """
from textual.widgets import Static, Label, Button
from rich.text import Text
from textual.content import Content
from rich.markup import escape

def bad(app, name, widget, table, reason):
    app.notify(f"job {name} failed")  # BAD 1 notify defaults to markup
    Static(f"pod {name}")  # BAD 2
    Label("node " + name)  # BAD 3
    widget.update(sanitize_display(name))  # BAD 4 sanitised is not escaped
    table.add_row(Text("ok"), "x" + name)  # BAD 5 second cell
    Static(Text(name), markup=True)  # BAD 6
    Text.from_markup(reason)  # BAD 7
    Content.from_markup(f"[b]{name}[/]")  # BAD 8
    widget.border_title = f"{name}"  # BAD 9
    widget.tooltip = "queue: %s" % name  # BAD 10
    app.copy_to_clipboard(name)  # BAD 11
    Static(escape(name))  # BAD 12
    Button("x", markup=flag_value)  # BAD 13
    app.notify(name if reason else f"{reason}!")  # BAD 14
    Text("x", style=Style(link=name))  # BAD 15
    widget.border_subtitle = "{}".format(name)  # BAD 16

def good(app, name, widget, table):
    app.notify(f"job {name} failed", markup=False)
    Static(Text(name))
    Static(Content(name))
    Static("GPUs")
    Label(id="x")
    widget.update(Text(name, no_wrap=True))
    table.add_row(Text(name), Content(name))
    Content.from_markup("Pod: $name", name=name)
    widget.border_title = "Jobs"
    widget.border_title = title_text
    settings.update({"a": 1})
    app.notify(f"{name}")  # t3: ok planted exception, to test the marker
"""


def test_t3_checker_finds_every_planted_violation_and_nothing_else() -> None:
    findings = check_source(PLANTED)
    src = PLANTED.splitlines()
    bad_lines = {i + 1 for i, line in enumerate(src) if "# BAD" in line}
    assert len(bad_lines) == 16  # the numbered cases
    assert {f.line for f in findings} == bad_lines, "\n".join(map(str, findings))


def test_t3_no_markup_sink_takes_built_text_in_hpctop_tui() -> None:
    findings = check_tree()
    assert not findings, "markup sinks fed with built strings:\n" + "\n".join(map(str, findings))
    assert len(list(TUI.rglob("*.py"))) > 10  # the tree was really walked


# -- T5: huge, wide, combining and right-to-left text -------------------------------------------------

MB = 1 << 20
WIDE = "训练任务-🚀-データ-"  # CJK, emoji (2 cells each) and kana
COMBINING = "e\u0301a\u0308o\u0323"  # three letters, three zero-width marks
RTL = "מודל-نموذج-"  # Hebrew and Arabic, drawn right to left by the terminal


def _cells(strip: list[Segment]) -> list[str]:
    """The strip as terminal cells: a wide character and a "" for its right half, marks joined."""
    out: list[str] = []
    for seg in strip:
        for ch in seg.text:
            width = cell_len(ch)
            if width == 0 and out:
                out[-1] += ch
            elif width == 2:
                out += [ch, ""]
            else:
                out.append(ch)
    return out


def test_fit_cells_is_exact_in_cells() -> None:
    for text in (WIDE * 9, COMBINING * 9, RTL * 9, "a" + "🚀" * 5, "x", "", WIDE[:3]):
        for width in (1, 2, 7, 8, 16):
            for right in (False, True):
                fitted = fit_cells(text, width, right)
                assert cell_len(fitted) == width, (text, width, fitted)
                if cell_len(text) > width:
                    assert fitted.rstrip().endswith("…")


def _plant(session: SampleSession) -> tuple[JobKey, JobKey]:
    pending = next(k for k, j in session.jobs.items() if j.state == JobState.PENDING)
    running = next(k for k, j in session.jobs.items() if j.state == JobState.RUNNING)
    huge = (WIDE + COMBINING + RTL) * (MB // len(WIDE + COMBINING + RTL))
    session.jobs[pending] = replace(
        session.jobs[pending],
        name=huge,
        user=WIDE,
        observed_reason=Reason(ReasonCode.RESOURCES, "annotation", huge),
    )
    session.jobs[running] = replace(session.jobs[running], name=WIDE + COMBINING * 20 + RTL, user=RTL)
    session.refresh()
    return pending, running


@pytest.mark.serial  # wall time: each key within 3 s, all within 15 s
async def test_t5_huge_and_wide_text_keeps_the_columns_and_stays_responsive() -> None:
    session = SampleSession(seed=1)
    pending, running = _plant(session)
    started = time.perf_counter()
    app = make_app(session, tick_interval=0, clock=lambda: 0.0, user="alice", show_charts=False)
    async with app.run_test(size=(160, 48)) as pilot:
        jobs = app.query_one("#jobs", JobsTable)
        assert len(next(r for r in jobs.rows if r.key == pending).name) <= CELL_CAP  # capped on entry
        jobs.sort_by("NAME", reverse=True)  # the planted (non-ASCII) names sort first
        jobs.action_jump(0)
        await pilot.pause()
        shown = {jobs.view[i].key for i in range(min(len(jobs.view), jobs.size.height - 1))}
        assert {pending, running} <= shown
        width = len(_cells(list(jobs.render_line(0))))  # the header line, all ASCII
        assert width >= sum(jobs._widths) // 2
        starts = [2]
        for w in jobs._widths:
            starts.append(starts[-1] + w + 1)
        for y in range(jobs.size.height):
            cells = _cells(list(jobs.render_line(y)))
            assert len(cells) == width, (y, len(cells))
            if y <= len(jobs.view):
                for start in starts[1:]:
                    if start - 1 < width:
                        assert cells[start - 1] == " ", (y, start, "".join(cells))
        name_col = slice(starts[1], starts[2] - 1)
        first = "".join(_cells(list(jobs.render_line(1)))[name_col])
        assert first.rstrip().endswith("…") and any(ch in first for ch in WIDE + RTL)
        # responsive: moving, redrawing and a tick stay far from the 1 MB worth of work
        t0 = time.perf_counter()
        for _ in range(10):
            await pilot.press("down")
        await pilot.press("up")
        app.step_now(60)
        await pilot.pause()
        assert time.perf_counter() - t0 < 3.0
        app.open_detail(pending)
        await pilot.pause()
        assert isinstance(app.screen, JobDetailScreen)
        await pilot.press("escape")
        await pilot.pause()
    assert app.return_code in (None, 0)
    assert time.perf_counter() - started < 15.0


@pytest.mark.parametrize("text", [WIDE * 3, COMBINING * 8, RTL * 4])
def test_t5_queue_label_is_cut_by_cells(text: str) -> None:
    from rich.cells import set_cell_size

    from hpctop.tui.widgets.queues import NAME

    assert cell_len(set_cell_size("  ▾ " + text, NAME)) == NAME
