"""A lone pod's row derived again after a status event keeps its previous row's tuples.

Why: each tuple a row holds is a GC-tracked object alive until the next snapshot, and the row is
derived once per watch event; reusing the equal ``pods``/``pending_pods``/``nodes`` tuples and
keeping only the previous pod (not a (pod, row) pair) left 2 tracked objects per event instead
of 6 (issue 16, P3). The row must still be what a derivation from scratch gives.
"""

from __future__ import annotations

from hpctop.model.jobs import derive_job, job_key_for_pod
from hpctop.model.objects import Job
from hpctop.model.store import Store
from tests.model_fixtures import event, pod

NOW = 1767225600.0


def _line(restarts: int, rv: int, node: str | None) -> bytes:
    obj = pod("p", node=node, phase="Running" if node else "Pending", gpus=1, rv=str(rv))
    obj["status"]["containerStatuses"] = [{"name": "main", "restartCount": restarts}]
    return event("MODIFIED" if rv > 1 else "ADDED", obj)


def _row_and_fresh(store: Store) -> tuple[Job, Job | None]:
    held = store.pods[("team-a", "p")]
    key = job_key_for_pod(held)
    return store.snapshot().jobs[key], derive_job(key, [held], None)


def test_a_status_event_keeps_the_rows_tuples_and_the_row_is_a_fresh_derivation() -> None:
    store = Store(clock=lambda: NOW)
    store.apply_raw("Pod", _line(0, 1, "n1"))
    first, fresh = _row_and_fresh(store)
    assert first == fresh
    store.apply_raw("Pod", _line(1, 2, "n1"))
    second, fresh = _row_and_fresh(store)
    assert second == fresh and second.restart_count == 1
    assert second.pods is first.pods and second.nodes is first.nodes
    assert second.nodes == ("n1",)


def test_a_moved_pod_gets_new_tuples() -> None:
    store = Store(clock=lambda: NOW)
    store.apply_raw("Pod", _line(0, 1, None))
    pending, fresh = _row_and_fresh(store)
    assert pending == fresh and pending.pending_pods == pending.pods == (("team-a", "p"),)
    store.apply_raw("Pod", _line(0, 2, "n2"))
    bound, fresh = _row_and_fresh(store)
    assert bound == fresh and bound.nodes == ("n2",) and bound.pending_pods == ()
