"""Slurm-style tables (squeue, sinfo, sshare, sprio) from a snapshot and a schedule, as text, JSON or CSV.

Each table module turns a :class:`~hpctop.model.store.Snapshot` and the core's
:class:`~hpctop.scheduling.types.ScheduleResult` into plain ``dict`` rows; :mod:`.render` turns
rows into text, JSON or CSV. Nothing here imports Textual or Rich (an import-linter contract
checks it), so the one-shot commands start fast and scripts can use the rows directly.
"""
