"""A row's view fields are what :func:`merge` says, for every job (rows.make_row's short cut).

``make_row`` calls ``merge`` only for a pending job, because of the view it reads the reason,
the ETA and the order, and ``merge`` gives None for each when the job is not pending. This test
keeps that true: for every job of the demo at t = 1800 (pending, running, finished, held
jobs with and without plans), the row's ETA, its source, its reason and its order source equal
those derived from ``merge``'s view the way the row did before the short cut.
"""

from __future__ import annotations

from collections import Counter

import pytest

from hpctop.runtime.session import demo_session
from hpctop.runtime.slurm_join import SLURM_REASON_SOURCE
from hpctop.scheduling.observed import merge
from hpctop.tui.rows import make_row, order_source, queue_order


@pytest.mark.parametrize("at", [1800.0])
def test_row_view_fields_equal_merges(at: float) -> None:
    session = demo_session(seed=1, at=at)
    plans = session.result.plans
    categories: Counter[str] = Counter()
    for key, job in session.snapshot.jobs.items():
        plan = plans.get(key)
        row = make_row(job, plan)
        view = merge(job, plan)
        reason = ""
        if job.state.is_pending:
            r = view.reason
            reason = (r.message if r.source == SLURM_REASON_SOURCE else r.code.value) if r else ""
        elif job.state.is_finished:
            reason = job.state.value
        order = queue_order(job, plan)
        assert (row.eta, row.eta_source, row.reason, row.order) == (view.eta, view.eta_source, reason, order)
        assert row.order_source == (order_source(view) if order is not None else None)
        categories[row.category] += 1
    assert categories["pending"] and categories["running"]  # both branches were compared
