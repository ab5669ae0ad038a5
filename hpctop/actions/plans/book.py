"""The book of every backend's action plans: the one place that lists them.

Why a module of its own: the engine must not import the backends (they import it), so the
facade (:mod:`hpctop.actions.kube`) gives the engine this book. Adding a backend's actions means
writing its plan module and adding its ``TABLE`` here.
"""

from __future__ import annotations

from hpctop.actions.engine.plan import ActionTable, PlanBook
from hpctop.actions.plans import (
    coscheduling,
    jobset,
    kube_scheduler,
    kubeflow,
    kueue,
    lws,
    slinky,
    volcano,
    yunikorn,
)

#: in the order kinds are listed (the console asks permissions in this order)
TABLES: tuple[ActionTable, ...] = (
    kube_scheduler.TABLE,
    kueue.TABLE,
    jobset.TABLE,
    kubeflow.TABLE,
    volcano.TABLE,
    lws.TABLE,
    coscheduling.TABLE,
    slinky.TABLE,
    yunikorn.TABLE,
)
BOOK = PlanBook(TABLES)
#: the owner kinds hpctop acts on (as it keys jobs: a vcjob is ``Job.batch.volcano.sh``)
KINDS: tuple[str, ...] = BOOK.job_kinds

__all__ = ["BOOK", "KINDS", "TABLES"]
