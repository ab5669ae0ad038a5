"""The JobSet backend's actions: a JobSet is held, released and requeued like a batch Job.

Why: ``spec.suspend`` on a JobSet suspends its child Jobs, which deletes their pods; releasing
resumes them (SCHEDULERS.md §2.3). Cancel is a guarded Background DELETE, so the child Jobs and
their pods go with it. Priority and move are refused (pod priority is immutable once admitted); a
Kueue-managed JobSet is re-prioritized and moved through its Workload (:mod:`hpctop.backends.kueue.act`).
"""

from __future__ import annotations

from hpctop.actions.engine.plan import ActionTable
from hpctop.actions.engine.shapes import SuspendPlan


class JobSetPlan(SuspendPlan):
    kind = "JobSet"
    on_cancel = "its child Jobs and their pods are deleted by the garbage collector"
    on_hold = "the JobSet controller suspends its child Jobs, which deletes their pods"
    on_release = "the JobSet controller resumes its child Jobs"


TABLE = ActionTable("jobset", plans=(JobSetPlan(),), acted=(("spec", "suspend"),))

__all__ = ["TABLE", "JobSetPlan"]
