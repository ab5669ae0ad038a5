"""History ring buffers and the action journal (no Textual here)."""

from __future__ import annotations

from hpctop.model.history import ActionJournal, History, JournalEntry
from tests.sample_session import SampleSession


def test_record_series_and_throughput() -> None:
    session = SampleSession(seed=3, jobs=80)
    history = History(capacity=5)
    assert history.record(session.snapshot, session.result) is not None
    assert history.record(session.snapshot, session.result) is None  # nothing moved
    for _ in range(8):
        session.step(600)
        history.record(session.snapshot, session.result)
    assert len(history.samples) == 5  # bounded
    times, alloc = history.series("gpu_allocated")
    assert len(times) == 5 and set(alloc) == {"h100", "a100", "t4"}
    assert all(len(v) == 5 for v in alloc.values())
    _, pending = history.series("pending")
    assert "root.research.nlp" in pending and "root" not in pending  # leaf queues only
    _, started, finished = history.throughput()
    assert len(started) == len(finished) == 5
    assert sum(finished) > 0
    assert all(w >= 0 for w in history.waits)


def test_started_counts_and_waits() -> None:
    session = SampleSession(seed=5, jobs=40)
    history = History()
    history.record(session.snapshot, session.result)
    before = sum(1 for j in session.jobs.values() if j.start_time is not None)
    session.step(3600)
    sample = history.record(session.snapshot, session.result)
    after = sum(
        1 for j in session.jobs.values() if j.start_time is not None and j.start_time > session.now - 3600
    )
    assert sample is not None and sample.started == after
    assert len(history.waits) == after
    assert before >= 0


def test_journal_bounded() -> None:
    journal = ActionJournal(per_job=2, max_jobs=2)
    for i in range(3):
        journal.add(("ns", "Job", "a"), JournalEntry(float(i), "hold", True, f"m{i}"))
    assert [e.message for e in journal.of(("ns", "Job", "a"))] == ["m1", "m2"]
    journal.add(("ns", "Job", "b"), JournalEntry(0, "cancel", False, "x"))
    journal.add(("ns", "Job", "c"), JournalEntry(0, "cancel", False, "x"))
    assert journal.of(("ns", "Job", "a")) == []
    assert len(journal.entries) == 2
