"""Every registered backend has an action table, and the book of plans is built from the registry.

Issue 10: "a test lists the registered backends and checks each one has ... an actions table
(even if that table is 'read-only: why')". The tables are each backend's ``act.py`` ``TABLE``,
found through ``BACKEND.actions``; what a table says per kind and action is what the console's
permissions greys out with, so each answer must be an RBAC need or a reason, never empty.
"""

from __future__ import annotations

import dataclasses

import pytest

from hpctop.actions.book import BOOK, KINDS, TABLES, table_of
from hpctop.actions.engine.plan import ActionTable, PlanBook, where
from hpctop.actions.requests import ActionKind
from hpctop.backends.jobset.act import JobSetPlan
from hpctop.backends.registry import BACKENDS


def test_each_registered_backend_has_its_table_in_registry_order() -> None:
    assert [t.backend for t in TABLES] == [b.name for b in BACKENDS]
    for table, backend in zip(TABLES, BACKENDS, strict=True):
        if backend.actions is None:  # a read-only backend (KAI: its pod grouper owns the queue) says why
            assert table.read_only == backend.read_only and backend.read_only, backend.name
        else:
            assert backend.actions == f"hpctop.backends.{backend.name.replace('-', '_')}.act"
        assert table.plans or table.overlays or table.read_only, backend.name


def test_every_kind_answers_every_action_with_a_need_or_a_reason() -> None:
    for table in TABLES:
        for kind, row in table.supports().items():
            assert set(row) == set(ActionKind), kind
            for action, said in row.items():
                assert said == "offered" or len(said) > len("not supported: ") + 10, (kind, action, said)
            assert any(said == "offered" for said in row.values()), f"{kind} offers nothing"


def test_the_kinds_acted_on_are_the_job_kinds_of_the_plans() -> None:
    assert set(KINDS) == {
        "Job",
        "Deployment",
        "Pod",
        "Workload",
        "JobSet",
        "PyTorchJob",
        "TFJob",
        "MPIJob",
        "XGBoostJob",
        "PaddleJob",
        "JAXJob",
        "Job.batch.volcano.sh",
        "LeaderWorkerSet",
        "PodGroup.scheduling.x-k8s.io",
    }
    assert all(where(kind) is not None for kind in KINDS)  # RBAC names a group and a plural for each
    assert {"ClusterQueue", "LocalQueue", "YuniKornQueue"} <= set(BOOK.by_kind) - set(KINDS)


def test_the_needs_name_the_resource_each_request_goes_to() -> None:
    assert BOOK.needs(ActionKind.CANCEL, "Job") == [("delete", "batch", "jobs", "")]
    assert BOOK.needs(ActionKind.CANCEL, "Pod") == [("create", "", "pods", "eviction")]
    assert BOOK.needs(ActionKind.HOLD, "Job.batch.volcano.sh") == [
        ("create", "bus.volcano.sh", "commands", "")
    ]
    assert BOOK.needs(ActionKind.HOLD, "ClusterQueue") == [("patch", "kueue.x-k8s.io", "clusterqueues", "")]
    assert BOOK.needs(ActionKind.PRIORITY, "YuniKornQueue") == [("patch", "", "configmaps", "")]
    assert "immutable" in str(BOOK.needs(ActionKind.MOVE, "Job.batch.volcano.sh"))
    assert "it acts on: Deployment, JAXJob, Job" in str(BOOK.needs(ActionKind.CANCEL, "CronJob"))


def test_a_read_only_backend_gets_a_table_saying_why() -> None:
    backend = dataclasses.replace(BACKENDS[0], actions=None, read_only="the API has no write verbs")
    table = table_of(backend)
    assert table == ActionTable(BACKENDS[0].name, read_only="the API has no write verbs")
    assert table.supports() == {}


def test_an_act_module_without_its_table_is_refused() -> None:
    with pytest.raises(TypeError, match="must export TABLE"):
        table_of(dataclasses.replace(BACKENDS[0], actions="hpctop.actions.requests"))


def test_two_backends_cannot_plan_the_same_kind() -> None:
    with pytest.raises(ValueError, match="two backends plan JobSet"):
        PlanBook((ActionTable("a", plans=(JobSetPlan(),)), ActionTable("b", plans=(JobSetPlan(),))))
