"""A suspended job's hold is observed, not forecast (hpctop/scheduling/observed.py ``merge``).

Upstream semantics: a Kubernetes Job with ``spec.suspend: true`` is one the Job controller will
create no pods for (and whose running pods it deletes) until the field is false again ("Suspending
a Job", kubernetes.io/docs/concepts/workloads/controllers/job/#suspending-a-job); Kueue uses that
same field to hold a Job until it admits its Workload, and its ``spec.active: false`` deactivates
one. Either way the hold is read from the object the user (or its queueing layer) wrote: it is the
cluster's word, and labelling it "hpctop's forecast" would claim hpctop guessed something it read.
"""

from __future__ import annotations

from hpctop.model.policy import Policy
from hpctop.model.states import JobState, ReasonCode
from hpctop.model.store import Store
from hpctop.scheduling.core import schedule
from hpctop.scheduling.observed import merge
from tests.model_fixtures import batch_job, event, node

NOW = 1767225600.0
KEY = ("team-a", "Job", "train")


def _view(*, suspend: bool) -> tuple[JobState, str | None, ReasonCode | None, str | None, float | None]:
    store = Store(clock=lambda: NOW)
    store.apply_raw("Node", event("ADDED", node("n1", gpus=8)))
    store.apply_raw("Job", event("ADDED", batch_job("train", parallelism=1, suspend=suspend, gpus=1)))
    snap = store.snapshot()
    job = snap.jobs[KEY]
    plan = schedule(snap, Policy(), NOW).plans.get(KEY)
    view = merge(job, plan)
    code = view.reason.code if view.reason is not None else None
    evidence = view.reason.source if view.reason is not None else None
    return view.state, view.reason_source, code, evidence, view.eta


def test_a_suspended_job_is_held_by_its_own_spec_suspend_not_by_a_forecast() -> None:
    state, source, code, evidence, eta = _view(suspend=True)
    assert state == JobState.HELD
    assert code == ReasonCode.HELD
    assert source == "scheduler", "spec.suspend was read from the object: observed"
    assert evidence == "Job:spec.suspend", "the evidence names the field that holds it"
    assert eta is None, "nothing starts a suspended Job: no ETA beside its hold"


def test_the_same_job_unsuspended_is_not_called_held() -> None:
    state, _source, code, _evidence, _eta = _view(suspend=False)
    assert state != JobState.HELD
    assert code != ReasonCode.HELD
