"""Rows of each table from a hand-built snapshot and schedule: fields, filters, order, text."""

from __future__ import annotations

import json

import pytest

from hpctop.model.objects import Node, Pod, Reason
from hpctop.model.states import JobState, ReasonCode
from hpctop.tables import jobs, nodes, prio, queues
from hpctop.tables.fmt import EPOCH
from hpctop.tables.render import render
from tests.table_fixtures import (
    make_job,
    make_node,
    make_partition,
    make_plan,
    make_pod,
    make_result,
    make_snapshot,
    sample_cluster,
)

REQUIRED_JOB_FIELDS = {
    "id",
    "namespace",
    "name",
    "user",
    "queue",
    "partition",
    "state",
    "code",
    "reason",
    "reason_message",
    "priority",
    "members",
    "min_members",
    "running_members",
    "gpus",
    "nodes",
    "submit_time",
    "start_time",
    "eta",
}


def _by_name(rows: list[dict[str, object]]) -> dict[object, dict[str, object]]:
    return {row["name"]: row for row in rows}


def test_job_rows_carry_the_documented_fields() -> None:
    snapshot, result = sample_cluster()
    rows = jobs.job_rows(snapshot, result, include_finished=True, default_queue="root.default")
    assert all(row.keys() >= REQUIRED_JOB_FIELDS for row in rows)
    assert set(jobs.CSV_KEYS) == set(rows[0])
    by = _by_name(rows)
    big = by["big"]
    assert big == {
        **big,
        "id": "team-a/big",
        "state": "PENDING",
        "code": "PD",
        "reason": "Resources",
        "reason_message": "needs 32 GPUs, 10 free",
        "priority": 11750,
        "order": 0,
        "members": 4,
        "min_members": 4,
        "running_members": 0,
        "gpus": 32,
        "nodes": [],
        "submit_time": "2026-01-01T00:01:00Z",
        "start_time": None,
        "eta": "2026-01-01T02:00:00Z",
        "elapsed": None,
    }
    train = by["train"]
    assert train["reason"] is None and train["eta"] is None
    assert train["nodes"] == ["gpu-h100-001"]
    assert train["elapsed"] == 3000  # now is EPOCH+1h, started at EPOCH+10min
    assert train["start_time"] == "2026-01-01T00:10:00Z"
    assert by["notebook"]["gpus"] == 0.25
    assert by["held"]["queue"] == "root.default"  # no queue label: the policy's default queue
    assert by["held"]["reason"] == "Held"
    assert by["done"]["elapsed"] == 900
    assert by["done"]["code"] == "CD"


def test_observed_reason_is_the_fallback_without_a_plan() -> None:
    observed = Reason(ReasonCode.GATED, "pod:PodScheduled", "gate x")
    job = make_job("gated", observed=observed)
    snapshot = make_snapshot([], [], [job])
    row = jobs.job_rows(snapshot, make_result(EPOCH))[0]
    assert (row["reason"], row["reason_message"], row["priority"]) == ("Gated", "gate x", 0)
    planned = make_result(EPOCH, [make_plan(job, reason=ReasonCode.PRIORITY)])
    assert jobs.job_rows(snapshot, planned)[0]["reason"] == "Priority"


def test_finished_jobs_are_hidden_unless_asked() -> None:
    snapshot, result = sample_cluster()
    assert "done" not in _by_name(jobs.job_rows(snapshot, result))
    assert "done" in _by_name(jobs.job_rows(snapshot, result, include_finished=True))
    only = jobs.job_rows(snapshot, result, states={JobState.COMPLETED})
    assert [r["name"] for r in only] == ["done"]


def test_default_order_running_then_pending_in_core_order_then_finished() -> None:
    snapshot, result = sample_cluster()
    names = [r["name"] for r in jobs.job_rows(snapshot, result, include_finished=True)]
    assert names == ["train", "notebook", "big", "held", "done"]


@pytest.mark.parametrize(
    ("filters", "names"),
    [
        ({"queues": ["root.research"]}, ["train", "big"]),
        ({"queues": ["sandbox"]}, ["notebook"]),
        ({"partitions": ["a100"]}, ["notebook"]),
        ({"namespaces": ["team-b"]}, ["notebook"]),
        ({"users": ["bob"]}, ["notebook", "held"]),
        ({"states": {JobState.PENDING, JobState.HELD}}, ["big", "held"]),
        ({"queues": ["root.default"], "default_queue": "root.default"}, ["held"]),
    ],
)
def test_job_filters(filters: dict[str, object], names: list[str]) -> None:
    snapshot, result = sample_cluster()
    rows = jobs.job_rows(snapshot, result, **filters)  # type: ignore[arg-type]
    assert [r["name"] for r in rows] == names


def test_jobs_text_table_shows_squeue_columns() -> None:
    snapshot, result = sample_cluster()
    text = render(jobs.job_rows(snapshot, result), jobs.COLUMNS, "table")
    lines = text.splitlines()
    assert lines[0].split() == [
        "JOBID",
        "NAME",
        "USER",
        "QUEUE",
        "PARTITION",
        "ST",
        "PRIO",
        "PODS",
        "NODES",
        "GPUS",
        "TIME",
        "ETA",
        "NODELIST(REASON)",
    ]
    big = next(line for line in lines if line.startswith("team-a/big"))
    assert big.split()[5:] == ["PD", "11750", "0/4", "-", "32", "-", "2026-01-01T02:00:00Z", "(Resources)"]
    train = next(line for line in lines if line.startswith("team-a/train"))
    assert train.split()[5:] == ["R", "1200", "2/2", "1", "6", "50:00", "-", "gpu-h100-001"]


@pytest.mark.parametrize(
    ("partition", "shown"),
    [(None, "-"), ("h100", "h100"), ("a,b,c", "a,b,c"), ("A10,G2,G3,P100,T4", "A10,G2,+3")],
)
def test_jobs_table_shortens_long_partition_lists(partition: str | None, shown: str) -> None:
    job = make_job("j", partition=partition)
    snapshot = make_snapshot([], [], [job])
    row = jobs.job_rows(snapshot, make_result(EPOCH))[0]
    assert row["partition"] == partition  # JSON keeps every name
    line = render([row], jobs.COLUMNS, "table", header=False)
    assert line.split()[4] == shown


def test_prio_rows_have_factors_and_weighted_terms() -> None:
    snapshot, result = sample_cluster()
    rows = prio.prio_rows(snapshot, result, default_queue="root.default")
    # sprio does not list held jobs (not eligible: no age, priority 0); ``--state held`` shows them
    assert [r["name"] for r in rows] == ["big"]
    held = prio.prio_rows(snapshot, result, states={JobState.HELD}, default_queue="root.default")
    assert [(r["name"], r["priority"], r["factors"]["age"]) for r in held] == [("held", 0, 0.0)]
    rows = [*rows, *held]
    big = rows[0]
    assert big["priority"] == 11750
    assert big["factors"] == {"age": 0.5, "fairshare": 1.0, "jobsize": 0.25, "partition": 1.0, "qos": 0.0}
    assert big["weighted"]["fairshare"] == 10000.0
    assert sum(big["weighted"].values()) == big["priority"]
    # a breakdown without some factor still has every documented key
    assert set(rows[1]["factors"]) == set(prio.FACTORS)
    text = render(rows, prio.COLUMNS, "table").splitlines()
    assert text[0].split() == [
        "JOBID",
        "USER",
        "QUEUE",
        "PARTITION",
        "PRIORITY",
        "AGE",
        "FAIRSHARE",
        "JOBSIZE",
        "PARTPRIO",
        "QOS",
    ]
    assert text[1].split()[4:] == ["11750", "500", "10000", "250", "1000", "0"]
    norm = render(rows, prio.NORM_COLUMNS, "table").splitlines()
    assert norm[1].split()[5:] == ["0.5000", "1.0000", "0.2500", "1.0000", "0.0000"]


def test_queue_rows_in_tree_order_with_indented_names() -> None:
    _, result = sample_cluster()
    rows = queues.queue_rows(result)
    assert [r["path"] for r in rows] == ["root", "root.research", "root.research.nlp", "root.sandbox"]
    research = rows[1]
    assert research == {
        **research,
        "guaranteed_gpus": 8,
        "used_gpus": 6,
        "max_gpus": 12,
        "pending_gpus": 32,
        "running_jobs": 1,
        "pending_jobs": 1,
        "fairshare": 0.594604,
        "borrowing": False,
        "depth": 1,
        "leaf": False,
    }
    assert rows[2]["max_gpus"] is None
    text = render(rows, queues.COLUMNS, "table").splitlines()
    assert [line[:12].rstrip() for line in text[1:]] == ["root", "  research", "    nlp", "  sandbox"]
    assert [r["path"] for r in queues.queue_rows(result, queues=["root.research"])] == [
        "root.research",
        "root.research.nlp",
    ]
    assert [r["path"] for r in queues.queue_rows(result, states={"closed"})] == ["root.sandbox"]


def test_node_states_and_per_node_rows() -> None:
    snapshot, result = sample_cluster()
    rows = {r["node"]: r for r in nodes.node_rows(snapshot, result)}
    assert {n: r["state"] for n, r in rows.items()} == {
        "cpu-001": "idle",
        "gpu-a100-001": "mix",
        "gpu-h100-001": "mix",
        "gpu-h100-002": "drng",
    }
    h100 = rows["gpu-h100-001"]
    # the Succeeded pod on the node no longer holds resources
    assert (h100["gpus_alloc"], h100["gpus_total"], h100["cpus_alloc"], h100["pods"]) == (6, 8, 2, 2)
    assert rows["gpu-a100-001"]["mig"] == {"3g.40gb": {"allocated": 1, "free": 1, "total": 2}}
    only = nodes.node_rows(snapshot, result, partitions=["h100"], states={"drng"})
    assert [r["node"] for r in only] == ["gpu-h100-002"]


@pytest.mark.parametrize(
    ("node", "pods", "state"),
    [
        (make_node("n", ready=False), [], "down"),
        (make_node("n", unschedulable=True), [], "drain"),
        (make_node("n", gpus=2), [make_pod("p", "n", gpu=2000)], "alloc"),
        (make_node("n", gpus=2), [make_pod("p", "n", gpu=500)], "mix"),
        (make_node("n", gpus=0, cpu=2000), [make_pod("p", "n", gpu=0, cpu=2000)], "alloc"),
        (make_node("n"), [make_pod("p", "n", phase="Failed")], "idle"),
    ],
)
def test_node_state_words_like_sinfo(node: Node, pods: list[Pod], state: str) -> None:
    snapshot = make_snapshot([node], pods, [])
    result = make_result(EPOCH, partitions=[make_partition("p", ["n"])])
    assert nodes.node_rows(snapshot, result)[0]["state"] == state


def test_summary_groups_partition_and_state() -> None:
    snapshot, result = sample_cluster()
    rows = nodes.summary_rows(snapshot, result)
    assert [(r["partition"], r["state"], r["nodes"]) for r in rows] == [
        ("h100", "mix", 1),
        ("h100", "drng", 1),
        ("a100", "mix", 1),
        ("cpu", "idle", 1),
    ]
    assert rows[0]["gpus_total"] == 8 and rows[0]["gpus_alloc"] == 6
    assert rows[0]["nodelist"] == "gpu-h100-001"


def test_nodes_outside_every_partition_are_listed_as_none() -> None:
    snapshot = make_snapshot([make_node("n1"), make_node("n2")], [], [])
    result = make_result(EPOCH, partitions=[make_partition("p", ["n1"])])
    assert [(r["partition"], r["nodelist"]) for r in nodes.summary_rows(snapshot, result)] == [
        ("p", "n1"),
        ("(none)", "n2"),
    ]


def test_gpu_rows_add_up() -> None:
    snapshot, result = sample_cluster()
    rows = nodes.gpu_rows(snapshot, result)
    assert [(r["partition"], r["model"]) for r in rows] == [("h100", "H100"), ("a100", "A100")]
    h100, a100 = rows
    assert (h100["total"], h100["allocated"], h100["free"], h100["unavailable"]) == (16, 7, 2, 7)
    # a quarter GPU plus a 3g.40gb MIG slice, three of an A100's seven compute slices (issue 11)
    assert (a100["total"], a100["allocated"], a100["free"]) == (4, 0.679, 3.321)
    assert a100["mig"] == {"3g.40gb": {"allocated": 1, "free": 1, "total": 2}}
    assert "mig" not in h100
    for row in rows:
        assert row["total"] == row["allocated"] + row["free"] + row["unavailable"]
    assert nodes.gpu_rows(snapshot, result, partitions=["a100"]) == [a100]
    text = render(rows, nodes.GPU_COLUMNS, "table").splitlines()
    assert text[2].split() == ["a100", "A100", "1", "4", "0.68", "3.32", "0", "none", "3g.40gb:1/2"]


def _all_tables() -> list[list[dict[str, object]]]:
    snapshot, result = sample_cluster()
    return [
        jobs.job_rows(snapshot, result, include_finished=True),
        prio.prio_rows(snapshot, result),
        queues.queue_rows(result),
        nodes.node_rows(snapshot, result),
        nodes.summary_rows(snapshot, result),
        nodes.gpu_rows(snapshot, result),
    ]


def test_json_rows_round_trip_and_are_stable() -> None:
    first = [render(rows, [], "json") for rows in _all_tables()]
    second = [render(rows, [], "json") for rows in _all_tables()]
    assert first == second
    for text, rows in zip(first, _all_tables(), strict=True):
        assert rows and json.loads(text) == rows


def test_a_job_without_gpus_shows_a_dash_in_the_table_and_0_in_json_and_csv() -> None:
    """The table writes "none" as ``-`` (squeue leaves TRES empty): a CPU-only job's GPUS is
    ``-``, as the console's pane shows it; JSON and CSV, the data, keep the number."""
    snapshot = make_snapshot([], [], [make_job("cpu-only", gpu=0), make_job("one", gpu=1000)])
    rows = jobs.job_rows(snapshot, make_result(EPOCH))
    table = render(rows, jobs.COLUMNS, "table").splitlines()
    gpus_at = table[0].split().index("GPUS")
    shown = {line.split()[1]: line.split()[gpus_at] for line in table[1:]}
    assert shown == {"cpu-only": "-", "one": "1"}
    assert [r["gpus"] for r in json.loads(render(rows, jobs.COLUMNS, "json"))] == [0, 1]
    csv_lines = render(rows, jobs.COLUMNS, "csv", csv_first=jobs.CSV_KEYS).splitlines()
    at = csv_lines[0].split(",").index("gpus")
    assert [line.split(",")[at] for line in csv_lines[1:]] == ["0", "1"]
