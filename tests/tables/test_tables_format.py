"""Value formats, rendering and the filter/sort vocabulary of the tables, table-driven."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from hpctop.errors import UsageError
from hpctop.model.states import JobState
from hpctop.tables.fmt import EPOCH, duration, from_milli, hostlist, iso
from hpctop.tables.render import Column, flatten, number, render, render_csv, render_json, render_table
from hpctop.tables.select import (
    NODE_STATE_ALIASES,
    NODE_STATES,
    parse_choices,
    parse_job_states,
    partition_matches,
    queue_matches,
    sort_rows,
    split_list,
)


@pytest.mark.parametrize(
    ("ts", "text"),
    [
        (None, None),
        (EPOCH, "2026-01-01T00:00:00Z"),
        (EPOCH + 3600.9, "2026-01-01T01:00:00Z"),
        (EPOCH + 86400 * 31 + 61, "2026-02-01T00:01:01Z"),
    ],
)
def test_iso_is_utc_whole_seconds(ts: float | None, text: str | None) -> None:
    assert iso(ts) == text


@pytest.mark.parametrize(
    "second",
    [0, -1, 951782400, 4107542399, -30_610_224_000, -30_610_224_001, 253_402_300_799, -62_135_596_800],
)
def test_iso_writes_what_strftime_writes(second: int) -> None:
    """The gmtime path (years 1000-9999) and strftime's agree at and beyond its bounds."""
    want = datetime.fromtimestamp(second, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert iso(second + 0.5) == want


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (None, "-"),
        (0, "0:00"),
        (5, "0:05"),
        (65, "1:05"),
        (3723, "1:02:03"),
        (2 * 86400 + 3723, "2-01:02:03"),
        (-4, "0:00"),
    ],
)
def test_duration_like_squeue(seconds: float | None, text: str) -> None:
    assert duration(seconds) == text


@pytest.mark.parametrize(("milli", "value"), [(0, 0), (8000, 8), (220, 0.22), (1500, 1.5), (333, 0.333)])
def test_from_milli_whole_numbers_stay_ints(milli: int, value: float) -> None:
    result = from_milli(milli)
    assert result == value
    assert isinstance(result, int) == (milli % 1000 == 0)


@pytest.mark.parametrize(
    ("names", "text"),
    [
        ([], ""),
        (["n1"], "n1"),
        (["n1", "n2", "n3", "n5"], "n[1-3,5]"),
        (["gpu-007", "gpu-001", "gpu-002", "gpu-004", "gpu-003"], "gpu-[001-004,007]"),
        (["n09", "n10", "n9"], "n[09-10],n9"),
        (["login", "a1", "a2"], "a[1-2],login"),
        (["a1", "a1"], "a1"),
    ],
)
def test_hostlist_compresses_like_slurm(names: list[str], text: str) -> None:
    assert hostlist(names) == text


@pytest.mark.parametrize(
    ("value", "text"), [(8.0, "8"), (0.25, "0.25"), (1.0 / 3, "0.33"), (-0.001, "0"), (2.50, "2.5")]
)
def test_number(value: float, text: str) -> None:
    assert number(value) == text


COLUMNS = (Column("name", "NAME"), Column("gpus", "GPUS", "right"), Column("nodes", "NODELIST"))


def test_table_aligns_columns_without_trailing_spaces() -> None:
    rows = [{"name": "a", "gpus": 8, "nodes": ["n1", "n2"]}, {"name": "longer", "gpus": 0.5, "nodes": []}]
    assert render_table(rows, COLUMNS) == ("NAME    GPUS  NODELIST\na          8  n1,n2\nlonger   0.5  -\n")
    # without the header the widths come from the values alone
    assert render_table(rows, COLUMNS, header=False).splitlines()[0] == "a         8  n1,n2"
    assert render_table([], COLUMNS) == "NAME  GPUS  NODELIST\n"


def test_nested_keys_reach_into_dicts() -> None:
    rows = [{"id": "x", "factors": {"age": 0.5}}]
    assert render_table(rows, [Column("factors.age", "AGE")]) == "AGE\n0.5\n"
    assert flatten(rows[0]) == {"id": "x", "factors.age": 0.5}


def test_json_is_sorted_indented_and_stable() -> None:
    rows = [{"b": 1, "a": [1, 2], "c": None}]
    text = render_json(rows)
    assert text == '[\n  {\n    "a": [\n      1,\n      2\n    ],\n    "b": 1,\n    "c": null\n  }\n]\n'
    assert json.loads(text) == rows
    with pytest.raises(ValueError):
        render_json([{"x": float("nan")}])


def test_csv_quotes_lists_and_leaves_none_empty() -> None:
    rows = [{"name": "a,b", "nodes": ["n1", "n2"], "eta": None, "ok": True, "g": 2.0, "f": {"x": 1}}]
    text = render_csv(rows, ["name", "nodes", "eta", "ok", "g", "f.x"])
    assert text == 'name,nodes,eta,ok,g,f.x\n"a,b","n1,n2",,true,2,1\n'


def test_render_rejects_unknown_format() -> None:
    with pytest.raises(UsageError, match="yaml"):
        render([], COLUMNS, "yaml")


@pytest.mark.parametrize(
    ("text", "states"),
    [
        (None, None),
        ("", None),
        ("RUNNING", {JobState.RUNNING}),
        ("r", {JobState.RUNNING}),
        ("PD", {JobState.PENDING, JobState.HELD}),
        ("pending, CD", {JobState.PENDING, JobState.COMPLETED}),
        ("CF", {JobState.STARTING}),
        ("configuring", {JobState.STARTING}),
        ("out_of_memory", {JobState.OOM}),
        ("all", set(JobState)),
    ],
)
def test_job_states_by_name_or_code(text: str | None, states: set[JobState] | None) -> None:
    parsed = parse_job_states(text)
    assert (None if parsed is None else set(parsed)) == states


def test_unknown_job_state_lists_the_valid_ones() -> None:
    with pytest.raises(UsageError, match=r"unknown job state 'RUNING'.*RUNNING.*PD"):
        parse_job_states("RUNING")


def test_node_states_and_aliases() -> None:
    assert parse_choices("MIXED,idle", NODE_STATES, "node state", NODE_STATE_ALIASES) == frozenset(
        {"mix", "idle"}
    )
    assert parse_choices("all", NODE_STATES, "node state") == frozenset(NODE_STATES)
    with pytest.raises(UsageError, match="unknown node state 'busy'"):
        parse_choices("busy", NODE_STATES, "node state")


@pytest.mark.parametrize(
    ("queue", "wanted", "match"),
    [
        ("root.research.nlp", ["root.research.nlp"], True),
        ("root.research.nlp", ["root.research"], True),
        ("root.research.nlp", ["nlp"], True),
        ("root.researchers", ["root.research"], False),
        ("root.sandbox", ["root.research", "sandbox"], True),
        (None, ["root"], False),
    ],
)
def test_queue_matching(queue: str | None, wanted: list[str], match: bool) -> None:
    assert queue_matches(queue, wanted) is match


def test_partition_matching_accepts_any_of_several() -> None:
    assert partition_matches("h100,a100", ["a100"])
    assert not partition_matches("h100", ["a100"])
    assert not partition_matches(None, ["a100"])


def test_split_list() -> None:
    assert split_list(" a, b,,c ") == ["a", "b", "c"]
    assert split_list(None) == []


ROWS = [
    {"name": "a", "prio": 5, "eta": None},
    {"name": "b", "prio": 9, "eta": "2026-01-01T01:00:00Z"},
    {"name": "c", "prio": 5, "eta": "2026-01-01T00:30:00Z"},
]


@pytest.mark.parametrize(
    ("spec", "order"),
    [
        (None, ["a", "b", "c"]),
        ("prio", ["a", "c", "b"]),
        ("-prio", ["b", "a", "c"]),
        ("prio,-name", ["c", "a", "b"]),
        ("eta", ["c", "b", "a"]),
        ("-eta", ["b", "c", "a"]),
    ],
)
def test_sort_multi_key_with_empty_values_last(spec: str | None, order: list[str]) -> None:
    assert [r["name"] for r in sort_rows(ROWS, spec, ["name", "prio", "eta"])] == order


def test_sort_alias_and_unknown_field() -> None:
    assert [r["name"] for r in sort_rows(ROWS, "-p", ["name", "prio"], {"p": "prio"})] == ["b", "a", "c"]
    with pytest.raises(UsageError, match=r"unknown sort field 'size' \(choose from name, prio\)"):
        sort_rows(ROWS, "size", ["name", "prio"])


@pytest.mark.parametrize(
    "value",
    ["x" * 8, "x" * 9, "tab\there", "esc\x1b[31m", "del\x7f", "名前", "e\u0301", "\u202eevil", ""],
)
def test_cell_fast_path_matches_sanitise_and_fit(value: str) -> None:
    """A printable ASCII cell that fits skips sanitise/fit; every other cell goes through them,
    and both ways give what ``fit(sanitize_display(...))`` gives."""
    from hpctop.sanitize import fit, sanitize_display

    column = Column("v", "V", width=8)
    assert column.text({"v": value}) == fit(sanitize_display(value, cap=8 * 4 + 8), 8)


def test_table_widths_count_terminal_cells_when_a_column_is_not_ascii() -> None:
    rows = [{"a": "名前", "b": 1}, {"a": "ab", "b": 22}]
    text = render_table(rows, [Column("a", "A"), Column("b", "B", "right")])
    assert text == "A      B\n名前   1\nab    22\n"
