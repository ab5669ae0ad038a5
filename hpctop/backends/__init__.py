"""One folder per backend: what hpctop watches, decodes, explains and does for each scheduler.

Why: "what does hpctop do with Kueue?" used to take six files (a resource table, discovery, a
wire module, the decoder's table, the evidence module, a 2,300-line actions module). Now it is
``hpctop/backends/kueue/``; the layers (sources → model → scheduling → actions → views) are
unchanged, because a backend's folder is split by layer.

The contract (``docs/architecture.md`` draws it; import-linter in ``pyproject.toml`` and
``tests/backends/test_backends_registered.py`` enforce it)::

    hpctop/backends/<name>/        a Python identifier: kueue, kube_scheduler, volcano, ...
        __init__.py                a docstring: the upstream project, what read and act hold
        read.py                    exports BACKEND: hpctop.backends.contract.Backend
        wire.py                    (optional) its msgspec Structs and projections, when read.py
                                   would pass ~800 lines
        act.py                     its action plans on the actions engine (hpctop.actions)

- **read side** (``read.py``, ``wire.py``): imports :mod:`hpctop.model` (and the neutral helpers
  in :mod:`hpctop.model.backends`), :mod:`hpctop.backends.contract`, :mod:`hpctop.errors` and
  :mod:`hpctop.sanitize`; never :mod:`hpctop.sources`, ``scheduling``, ``actions``, ``runtime``,
  ``tables``, ``tui``, nor another backend's folder (what two backends share is a neutral helper
  in :mod:`hpctop.model.backends`). ``BACKEND`` declares: name, title, upstream repository, the
  kinds it watches with the versions it understands (``watches``), the resources it only writes,
  the API groups that reveal it, the labels it reads, its bare-kind aliases, its fixtures, the
  reason codes it can produce, its decoders (``Kind.group`` → Struct, projection) and which of
  them the store keeps as backend objects,
  and optional hooks: ``select`` (the discovery choice; default: the first served version of each
  kind), ``job_state``, ``job_reasons``, ``fold_queues``, ``queue_shape``, ``place_in_queue``.
- **act side** (``act.py``): the plans for its kinds, on the actions engine; never ``tui``,
  ``runtime`` or ``tables``. ``BACKEND.actions`` names it by module path (the registry never
  imports it, so the read side stays below the actions), or is None with ``read_only`` saying why.

To add a backend: create the folder with ``read.py`` exporting ``BACKEND``, add its fixtures
(upstream-sourced, see ``tests/fixtures``), and add one import and one entry to
:data:`hpctop.backends.registry.BACKENDS`. The decoder, the store, discovery, the resource
tables and the registered-backends test pick it up from there.
"""
