"""Running plans share what their partition and request shape fix (issue 16, P4's first view).

Why: the console's first view reads every running job's plan (200,000 at P4's size), and each
plan derived its partition's factor and capacity and its job-size, partition and QoS terms
(``priority.static_terms``, with a ``Resources`` built by ``Job.requested``) on its own, though
jobs on the same partition with the same request and QoS value share them. These check that the
terms are derived once per shape, that the plans stay ``priority.breakdown`` at each job's start
(``test_scheduling_plan_priorities``'s oracle), and that ``priority.requested_gpu_cpu`` is
``Job.requested``'s GPUs and CPUs for every kind of job.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any

import pytest

from bench.p6_core import NOW
from hpctop.model.objects import Job
from hpctop.model.resources import Resources
from hpctop.model.states import JobState
from hpctop.scheduling import core
from hpctop.scheduling.memo import Memo
from hpctop.scheduling.priority import requested_gpu_cpu, static_terms
from tests.scheduling.test_scheduling_plan_priorities import BASE, POLICY, _expected_running


def test_running_plans_derive_the_static_terms_once_per_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Job] = []
    real = static_terms  # what the core calls

    def counting(job: Job, **kwargs: Any) -> tuple[float, float, float]:
        calls.append(job)
        return real(job, **kwargs)

    monkeypatch.setattr(core, "static_terms", counting)
    result = core.schedule(BASE, POLICY, NOW, memo=Memo())
    in_cycle = len(calls)  # the pending jobs' totals
    running = [j for j in BASE.jobs.values() if j.state == JobState.RUNNING]
    plans = {j.key: result.plans[j.key] for j in running}
    shapes = {(plans[j.key].partition, *requested_gpu_cpu(j), j.priority_value) for j in running}
    assert len(shapes) < len(running)  # jobs alike: shapes shared
    assert len(calls) - in_cycle == len(shapes)
    expected = _expected_running(BASE, result)
    for key, plan in plans.items():
        want = expected[key]
        assert plan.priority.total == want.total
        assert (dict(plan.priority.factors), dict(plan.priority.weighted)) == (want.factors, want.weighted)


def test_requested_gpu_cpu_is_the_jobs_requested_vector() -> None:
    jobs = list(BASE.jobs.values())
    assert jobs
    per = Resources.of(cpu=1500, memory=2**30, gpu=2000, **{"example.com/fpga": 1})
    jobs += [
        dataclasses.replace(jobs[0], per_member=per, members=3, requested_total=None),
        dataclasses.replace(jobs[0], per_member=per, members=0, requested_total=None),
        dataclasses.replace(jobs[0], per_member=per, members=3, requested_total=Resources.of(cpu=7, gpu=0)),
    ]
    for job in jobs:
        assert requested_gpu_cpu(job) == (job.requested.gpu, job.requested.cpu)


def test_a_running_plans_partition_is_the_first_holding_its_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A job on one node finds its partition without ``_Cycle.running_partition`` (called for the
    jobs on several nodes only), and the answer is that method's, a node in no partition included."""
    running = [j for j in BASE.jobs.values() if j.state == JobState.RUNNING]
    one = next(j for j in running if len(j.nodes) == 1)
    lost = dataclasses.replace(one, nodes=("no-such-node",))
    snap = dataclasses.replace(
        BASE, version=BASE.version + 1, jobs=MappingProxyType({**BASE.jobs, lost.key: lost})
    )
    asked: list[Job] = []
    real = core._Cycle.running_partition

    def counting(self: core._Cycle, job: Job) -> str | None:
        asked.append(job)
        return real(self, job)

    monkeypatch.setattr(core._Cycle, "running_partition", counting)
    result = core.schedule(snap, POLICY, NOW, memo=Memo())
    cycle = core._Cycle(snap, POLICY, NOW, Memo(), False)
    jobs = [j for j in snap.jobs.values() if j.state == JobState.RUNNING]
    got = {j.key: result.plans[j.key].partition for j in jobs}
    assert {len(j.nodes) == 1 for j in jobs} == {True, False}  # both kinds here
    assert all(len(j.nodes) != 1 for j in asked)
    asked.clear()
    assert got == {j.key: cycle.running_partition(j) for j in jobs}
    assert got[lost.key] is None
