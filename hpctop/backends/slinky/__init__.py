"""The Kubernetes side of Slurm: SchedMD Slinky (slurm-bridge) and CoreWeave SUNK (SCHEDULERS.md §8.6).

``read``: detection of their API groups; the pods and owners they run are read as any other, with
their annotations (``slurmjob.slinky.slurm.net/*``, ``sunk.coreweave.com/*``). ``act``: Slinky's
annotation plans; SUNK is read-only (its queueing is Slurm's). The Slurm side itself (slurmrestd)
is :mod:`hpctop.sources.slurm`.
"""
