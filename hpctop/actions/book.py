"""The book of every registered backend's action plans, built from the backend registry.

Why from the registry: a backend is added by adding its folder and one line in
:data:`hpctop.backends.registry.BACKENDS`; its ``BACKEND.actions`` names the module of its plans
(``hpctop.backends.kueue.act``), which must export ``TABLE``, an
:class:`~hpctop.actions.engine.plan.ActionTable` for that backend. The registry itself never
imports an act module (the read side stays below the actions), so the actions layer does it here.
A backend without actions (``actions`` None) gets a table that says "read-only: why".

The engine must not import the backends (their act modules import it); the facade
(:mod:`hpctop.actions.kube`) gives the engine this book.
"""

from __future__ import annotations

import importlib

from hpctop.actions.engine.plan import ActionTable, PlanBook
from hpctop.backends.contract import Backend
from hpctop.backends.registry import BACKENDS


def table_of(backend: Backend) -> ActionTable:
    """The action table ``backend`` registers: its act module's ``TABLE``, or a read-only one."""
    if backend.actions is None:
        return ActionTable(backend.name, read_only=backend.read_only or "read-only: no reason given")
    table = getattr(importlib.import_module(backend.actions), "TABLE", None)
    if not isinstance(table, ActionTable) or table.backend != backend.name:
        raise TypeError(f"{backend.actions} must export TABLE = ActionTable({backend.name!r}, ...)")
    return table


#: in the registry's order (overlays are asked in this order: Kueue's before Slinky's)
TABLES: tuple[ActionTable, ...] = tuple(table_of(backend) for backend in BACKENDS)
BOOK = PlanBook(TABLES)
#: the owner kinds hpctop acts on (as it keys jobs: a vcjob is ``Job.batch.volcano.sh``)
KINDS: tuple[str, ...] = BOOK.job_kinds

__all__ = ["BOOK", "KINDS", "TABLES", "table_of"]
