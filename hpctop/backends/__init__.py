"""One folder per scheduler backend or integration (ARCHITECTURE.md "One backend, one folder").

Why: a person asking "what does hpctop do with KAI-Scheduler?" opens ``hpctop/backends/kai/``:
what it watches, how it decodes, how its evidence becomes state, reason, queue and gang. A
backend's read side imports :mod:`hpctop.model` and nothing above it.
"""
