"""sanitize_display: RELIABILITY.md §3.3 invariants (T1, T2, T4, T6) as unit and property tests."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from hpctop.tui.sanitize import CELL_CAP, has_flagged, safe_text, sanitize_display

FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b-\u200f\u061c]")
FORBIDDEN_STRICT = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b-\u200f\u061c]")

PLANTED = [
    "\x1b[2J\x1b[3J\x1b[1;1H",
    "\x1b]52;c;ZXZpbA==\x07",
    "\x1b]8;;https://evil/\x1b\\CLICK\x1b]8;;\x1b\\",
    "\x1b]0;pwned\x1b\\",
    "\x1b[?1049l",
    "\x1bP+q\x1b\\",
    "\x9b31m",
    "over\rwrite",
    "back\x08space\x7f",
    "abc\u202edcba",
    "zero\u200bwidth",
]
MARKUP = [
    "[bold]x",
    "[@click=app.quit]x[/]",
    "job-[/oops]",
    "[/]",
    "[link=https://e.example]l[/link]",
    "[$accent]v",
]


def test_planted_sequences_are_neutralised_and_visible() -> None:
    for s in PLANTED:
        out = sanitize_display(s)
        assert not FORBIDDEN_STRICT.search(out), (s, out)
        assert "\x1b" not in out
        if "\x1b" in s:
            assert "␛" in out  # the user sees that something was there


def test_c1_and_cr_become_visible() -> None:
    assert sanitize_display("\x9b") == "\\x9b"
    assert sanitize_display("a\rb") == "a␍b"
    assert sanitize_display("a\u202eb") == "a<U+202E>b"


def test_newlines_only_when_asked() -> None:
    assert sanitize_display("a\nb\tc") == "a␊b␉c"
    assert sanitize_display("a\nb\tc", keep_newlines=True) == "a\nb\tc"


def test_markup_is_left_as_text_and_renders_literally() -> None:
    for s in MARKUP:
        text = safe_text(s)
        assert text.plain == s
        assert text.spans == []
        console = Console(width=200, record=True, color_system=None)
        console.print(text)
        assert s in console.export_text()


def test_length_cap() -> None:
    out = sanitize_display("x" * (CELL_CAP * 3))
    assert len(out) == CELL_CAP and out.endswith("…")


def test_flagging_for_confirm_dialogs() -> None:
    assert has_flagged("train\u202e1")
    assert not has_flagged("train-1")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(codec=None), max_size=300))
def test_property_no_forbidden_output_and_idempotent(s: str) -> None:
    out = sanitize_display(s)
    assert not FORBIDDEN_STRICT.search(out)
    assert sanitize_display(out) == out
    keep = sanitize_display(s, keep_newlines=True)
    assert not FORBIDDEN.search(keep)
    assert sanitize_display(keep, keep_newlines=True) == keep
    out.encode("utf-8")  # no lone surrogates survive
    Text(out)  # building a renderable never raises


escape_seq = st.builds(
    lambda intro, body, end: intro + body + end,
    st.sampled_from(["\x1b[", "\x1b]", "\x1bP", "\x1b_", "\x1b^", "\x1bX", "\x9b", "\x9d"]),
    st.text(max_size=20),
    st.sampled_from(["\x07", "\x1b\\", "m", "", "\x9c"]),
)
markup_tag = st.builds(lambda t: f"[{t}]", st.text(max_size=20))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(escape_seq, markup_tag, st.text(max_size=10)), max_size=8).map("".join))
def test_property_sequences_and_tags(s: str) -> None:
    out = sanitize_display(s)
    assert "\x1b" not in out and "\x9b" not in out and "\x9d" not in out
    assert sanitize_display(out) == out
    assert safe_text(s).spans == []


# -- hpctop.sanitize: the same rules for the shell's sinks, and cutting to a column ------------------


def test_the_console_and_the_shell_share_one_sanitiser() -> None:
    import hpctop.sanitize as shared
    import hpctop.tui.sanitize as console

    assert console.sanitize_display is shared.sanitize_display
    assert console.has_flagged is shared.has_flagged
    for s in PLANTED:
        assert shared.sanitize_line(s) == shared.sanitize_display(" ".join(s.split()))


def test_sanitize_line_is_one_line() -> None:
    from hpctop.sanitize import sanitize_line

    assert sanitize_line("a\nb\r\n\tc  d") == "a b c d"
    assert not FORBIDDEN_STRICT.search(sanitize_line("x\x1b]0;t\x07\x85\u2028y"))


def test_fit_cuts_in_terminal_cells() -> None:
    from hpctop.sanitize import cell_width, fit

    assert fit("abcdef", 4) == "abc…" and fit("abc", 4) == "abc" and fit("abc", 0) == ""
    assert cell_width("日本語") == 6
    assert fit("日本語ab", 5) == "日本…"
    assert cell_width(fit("日本語ab", 5)) <= 5
    assert fit("e\u0301" * 3, 3) == "e\u0301" * 3  # combining marks take no cell
    huge = fit("名" * 1_000_000, 10)
    assert cell_width(huge) <= 10 and huge.endswith("…")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec=None), max_size=80), st.integers(min_value=1, max_value=40))
def test_property_fit_never_exceeds_the_column(s: str, width: int) -> None:
    from hpctop.sanitize import cell_width, fit

    clean = sanitize_display(s)
    out = fit(clean, width)
    assert cell_width(out) <= width
    assert out == clean or out.endswith("…")
