"""Each backend's action plans (one module per backend), until they move to ``hpctop/backends/<name>/act.py``.

Why one module per backend: what hpctop does with Kueue (or Volcano, or Slinky) is then read in
one place, and the engine (:mod:`hpctop.actions.engine`) holds everything the backends share. A
module exports one :class:`~hpctop.actions.engine.plan.ActionTable` named ``TABLE``;
:mod:`hpctop.actions.plans.book` gathers them.
"""
