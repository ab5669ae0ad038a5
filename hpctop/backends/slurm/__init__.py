"""Slurm itself, through slurmrestd: the jobs ``sbatch`` submits on a Slinky or SUNK cluster, which
never appear as Kubernetes objects, and Slurm's nodes, partitions, shares and reservations.

``wire``: the neutral model of what slurmrestd sends, every API version (v0.0.36-v0.0.44) read into
the same records. ``read``: the descriptor (no Kubernetes kinds: Slurm's objects come over HTTP).
``act``: cancel, hold, release, priority and partition changes as slurmrestd requests. The HTTP
clients (slurmrestd, and the Kubernetes Secret holding the token) are sources, so they live in
:mod:`hpctop.sources.slurm`: a backend's read side imports nothing above the model. The Kubernetes
side of Slurm-on-Kubernetes (slurm-bridge pods, NodeSets) is :mod:`hpctop.backends.slinky`.
"""
