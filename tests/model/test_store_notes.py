"""Skipped objects are never silent: counted by reason, noted once each, shown in the console status."""

from __future__ import annotations

from hpctop.model.decode import DecodeError
from hpctop.model.store import MAX_NOTES, Store
from hpctop.runtime.live_console import skipped_note
from tests.model_fixtures import event, pod


def test_the_console_status_counts_skipped_objects_and_shows_the_latest_note() -> None:
    store = Store()
    assert skipped_note(store) == ""
    bad = pod("p", gpus=1)
    bad["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": "-8"}
    store.apply_raw("Pod", event("ADDED", bad))
    note = skipped_note(store)
    assert note.startswith("1 malformed object(s) skipped")
    assert "Pod team-a/p: spec.containers[].resources: nvidia.com/gpu: '-8' is negative" in note


def test_notes_are_bounded_and_say_how_many_were_left_out() -> None:
    store = Store()
    for i in range(MAX_NOTES + 5):
        store.skip(DecodeError("missing", field="metadata.name", kind="Pod", identity=f"ns/p{i}"))
    notes = store.notes_text()
    assert len(notes) == MAX_NOTES + 1 and notes[-1] == "and 5 more skipped object(s) not listed"
    assert sum(store.skipped.values()) == MAX_NOTES + 5
