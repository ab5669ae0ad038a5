"""Numbers the console shows must mean what they say (issue 15, "honest numbers").

Each test here failed on the code before the fix it guards: the borrowing marker lit by CPU use
under a GPU-only guarantee, fair shares of siblings adding up to more than their parent's, the
status bar counting free GPUs where every pane counts used ones, and so on.
"""

from __future__ import annotations

import math
import time

import pytest

from hpctop.actions.audit import AuditRecord
from hpctop.model.history import JournalEntry
from hpctop.model.policy import Policy, QueueSpec
from hpctop.model.resources import Resources
from hpctop.runtime.session import demo_session
from hpctop.scheduling.queues import QueueTree, borrows
from hpctop.tui.app import make_app
from hpctop.tui.rows import cells, make_row, waiting_ranks
from hpctop.tui.screens.detail import detail_text
from hpctop.tui.widgets.charts import ChartsPane, tick_labels, top_series, wait_histogram
from hpctop.tui.widgets.status import StatusBar
from tests.sample_session import SampleSession

CLUSTER = Resources.of(cpu=64_000, memory=512 * 2**30, gpu=16_000)


def _tree(*specs: QueueSpec) -> QueueTree:
    tree = QueueTree(Policy(queues=specs, default_queue="root.default"))
    tree.compute_normalized_shares(CLUSTER)
    return tree


def test_cpu_use_under_a_gpu_only_guarantee_is_not_borrowing() -> None:
    gpu_only = Resources.of(gpu=4000)
    assert not borrows(Resources.of(cpu=8000, memory=2**34, gpu=2000), gpu_only)
    assert borrows(Resources.of(cpu=8000, gpu=5000), gpu_only)
    tree = _tree(QueueSpec("root.a", guaranteed=gpu_only))
    tree.add_used("root.a", Resources.of(cpu=8000, memory=2**34, gpu=2000))
    status = tree.status(CLUSTER)
    assert not status["root.a"].borrowing
    # root has no guarantee: its use borrows nobody's
    assert not status["root"].borrowing
    tree.add_used("root.a", Resources.of(gpu=3000))
    assert tree.status(CLUSTER)["root.a"].borrowing


def test_sibling_shares_sum_to_the_parent_share() -> None:
    # a, b hold 12 of 16 GPUs; c and the default queue have no guarantee: they split the other 4
    tree = _tree(
        QueueSpec("root.a", guaranteed=Resources.of(gpu=8000)),
        QueueSpec("root.b", guaranteed=Resources.of(gpu=4000)),
        QueueSpec("root.c"),
        QueueSpec("root.a.x", guaranteed=Resources.of(gpu=2000)),
        QueueSpec("root.a.y"),
    )
    status = tree.status(CLUSTER)
    top = [p for p in status if status[p].parent == "root"]
    assert sorted(top) == ["root.a", "root.b", "root.c", "root.default"]
    assert math.isclose(sum(status[p].normalized_share for p in top), 1.0)
    assert math.isclose(status["root.c"].normalized_share, 0.125)
    assert math.isclose(status["root.default"].normalized_share, 0.125)
    kids = [status["root.a.x"].normalized_share, status["root.a.y"].normalized_share]
    assert math.isclose(sum(kids), status["root.a"].normalized_share)
    assert math.isclose(kids[1], 0.5 - 0.125)


def test_a_queue_without_guarantee_gets_nothing_when_siblings_hold_everything() -> None:
    tree = _tree(
        QueueSpec("root.a", guaranteed=Resources.of(gpu=10_000)),
        QueueSpec("root.b", guaranteed=Resources.of(gpu=6000)),
    )
    status = tree.status(CLUSTER)
    assert status["root.default"].normalized_share == 0.0
    assert math.isclose(status["root.a"].normalized_share + status["root.b"].normalized_share, 1.0)


def test_guarantees_above_the_parent_are_scaled_to_it() -> None:
    tree = _tree(
        QueueSpec("root.a", guaranteed=Resources.of(gpu=4000)),
        QueueSpec("root.a.x", guaranteed=Resources.of(gpu=4000)),
        QueueSpec("root.a.y", guaranteed=Resources.of(gpu=4000)),
    )
    status = tree.status(CLUSTER)
    assert math.isclose(status["root.a.x"].normalized_share + status["root.a.y"].normalized_share, 0.25)


# -- the console's numbers (each of these failed on the code before this branch) ---------------


_DEMO = demo_session(seed=1, at=600)  # ~1 s; has held jobs and running ones with GPU indices


def _demo_detail(pick: object) -> str:
    snapshot, result = _DEMO.snapshot, _DEMO.result
    job = next(j for j in snapshot.jobs.values() if pick(j))  # type: ignore[operator]
    return detail_text(job, result.plans.get(job.key), snapshot, result.now, [], {}).plain


async def test_status_bar_counts_used_over_total_and_names_free() -> None:
    session = SampleSession(seed=1)
    app = make_app(session, tick_interval=0, clock=lambda: 0.0, show_charts=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        text = str(app.query_one(StatusBar).render())
        parts = session.result.partitions
        used = sum(p.allocated.gpu for p in parts) / 1000
        total = sum(p.capacity.gpu for p in parts) / 1000
        free = sum(p.free.gpu for p in parts) / 1000
        assert f"GPUs {round(used, 2):g}/{round(total, 2):g} used" in text, text
        assert f"{round(free, 2):g} free" in text, text


def test_held_job_detail_is_honest() -> None:
    body = _demo_detail(lambda j: j.state.value == "HELD")
    assert "value None" not in body
    assert "position" not in body and "tried " not in body  # a held job is not in the order
    assert "not in the scheduler's order while held" in body
    # the factors' sum and the total of 0 are both said, and why they differ
    assert "0 while held" in body and "  sum " in body
    assert "eligible partitions" in body  # a list of partitions is not "the" partition


def test_pod_gpu_indices_are_labelled() -> None:
    body = _demo_detail(lambda j: j.state.is_active and j.per_member.gpu >= 1000 and j.pods)
    pod_lines = [line for line in body.splitlines() if " node " in line]
    assert pod_lines and all("GPU #" in line or "GPUs #" in line for line in pod_lines), pod_lines
    assert not any(line.rstrip().endswith(" GPUs 0") for line in pod_lines)


def test_action_history_is_printed_once() -> None:
    snapshot, result = _DEMO.snapshot, _DEMO.result
    job = next(j for j in snapshot.jobs.values() if j.state.is_active)
    at = 1000.0
    journal = [JournalEntry(at, "hold", True, "held it")]
    audit = [AuditRecord("2026-01-01T00:16:40Z", at + 0.2, "outcome", "hold", job.id, True, 200, "patched")]
    body = detail_text(job, None, snapshot, result.now, journal, {}, audit=audit).plain
    section = body[body.index("Actions from this console") :]
    assert section.count("hold") == 1, section
    # a journal entry with no audit record (refused before sending) is still listed
    alone = detail_text(job, None, snapshot, result.now, journal, {}, audit=[]).plain
    assert "held it" in alone


def test_time_of_a_pending_job_is_zero_and_wait_has_its_own_column() -> None:
    snapshot, result = _DEMO.snapshot, _DEMO.result
    job = next(j for j in snapshot.jobs.values() if j.state.is_pending)
    row = make_row(job, result.plans.get(job.key))
    now = job.submit_time + 125
    texts = dict(
        zip(
            ("JOB", "USER", "QUEUE", "PARTITION", "ST", "ORDER", "PRIO", "GANG", "GPUS", "TIME", "WAIT"),
            cells(row, now),
            strict=False,
        )
    )
    assert texts["TIME"] == "0:00"  # squeue: no run time before it starts
    assert texts["WAIT"] == "2:05"


def test_order_is_the_place_among_the_jobs_still_waiting() -> None:
    snapshot, result = _DEMO.snapshot, _DEMO.result
    rows = [make_row(j, result.plans.get(j.key)) for j in snapshot.jobs.values()]
    held = [r for r in rows if r.state.value == "HELD"]
    assert held and all(r.order is None for r in held)  # held: passed over, no place
    ranks = waiting_ranks(rows)
    assert sorted(ranks.values()) == list(range(1, len(ranks) + 1))


def test_charts_keep_every_series_and_start_at_zero() -> None:
    series = {f"p{i}": [float(i), float(10 - i)] for i in range(9)}
    shown = top_series(series, n=5)
    assert len(shown) == 6 and "other" in shown
    # nothing dropped: the points add up to the same totals
    assert [sum(v[k] for v in shown.values()) for k in (0, 1)] == [
        sum(v[k] for v in series.values()) for k in (0, 1)
    ]
    assert list(shown)[:5] == ["p0", "p1", "p2", "p3", "p4"]  # the largest now
    edges, counts, width = wait_histogram([0.0, 0.5, 3.0, 12.0])
    assert edges[0] == 0.0 and sum(counts) == 4 and width == 1.0


@pytest.mark.serial  # wall time: the charts within 10 s
async def test_colourblind_theme_charts_use_its_palette() -> None:
    session = SampleSession(seed=1)
    app = make_app(session, theme="hpctop-colorblind", tick_interval=0, clock=lambda: 0.0)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        charts = app.query_one(ChartsPane)
        okabe_ito = {(0xE6, 0x9F, 0x00), (0x56, 0xB4, 0xE9), (0x00, 0x9E, 0x73), (0xF0, 0xE4, 0x42)}
        assert okabe_ito <= set(charts._colours())
        started = time.perf_counter()
        for _ in range(3):
            app.step_now(300)
        await pilot.pause()
        assert time.perf_counter() - started < 10
        legend = str(charts.query_one("#legend-alloc").render())
        names = {p.name for p in session.result.partitions}
        assert all(n in legend for n in names) or "other" in legend, legend


def test_wait_axis_ticks_stay_distinct_for_short_waits() -> None:
    # every job started within 9 seconds: the axis ends at 0.15 minutes
    assert tick_labels([0.0, 0.075, 0.15]) == ["0.00", "0.07", "0.15"]
    assert tick_labels([0.0, 1.25, 2.5]) == ["0.0", "1.2", "2.5"]  # one decimal below 3, as before
    assert tick_labels([0.0, 6.0, 12.0]) == ["0", "6", "12"]


def test_held_job_priority_value_comes_from_its_priority_class() -> None:
    """A held job has no pods, so no resolved ``spec.priority``: its class's value stands in
    (Kubernetes admission resolves a pod's priority from its PriorityClass object)."""
    snapshot = _DEMO.snapshot
    job = next(j for j in snapshot.jobs.values() if j.state.value == "HELD" and j.priority_class)
    assert job.priority_class is not None and job.priority_value is None and not job.pods
    expected = snapshot.priority_classes[job.priority_class].value
    body = _demo_detail(lambda j: j.key == job.key)
    assert "(value -)" not in body
    assert f"priority class {job.priority_class} (value {expected}, from the PriorityClass" in body
