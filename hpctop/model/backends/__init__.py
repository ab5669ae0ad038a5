"""Neutral helpers the backends share, below every ``hpctop/backends/<name>/`` folder.

Why a package: the backends themselves live in :mod:`hpctop.backends` (one folder each); what
two of them share, or what the store and the jobs read whichever backend wrote it, is here, so
that no backend imports another's read side: aggregate quantities and the owner-kind decoder
(``wire``), a job's evidence and the QueueHeld reason (``evidence``), the neutral queue tree's
index, path escaping and the tree as the core's policy (``queues``). Nothing here imports a
backend or the registry.
"""
