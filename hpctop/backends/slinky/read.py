"""Slinky's and SUNK's read side: what reveals them, and where their words live on pods.

Why: slurm-bridge (SchedMD Slinky) lets Slurm schedule Kubernetes pods: the Slurm job's options
are annotations on the top workload object (``slurmjob.slinky.slurm.net/partition`` names a
*Slurm* partition, which Slurm validates, so it is not read as one of hpctop's), and a pod's
node is ``slinky.slurm.net/slurm-node``. SUNK (CoreWeave) runs Slurm nodes as pods and marks them
``sunk.coreweave.com/*``. Neither adds a kind hpctop watches; the job rows are their pods' owners,
read by :mod:`hpctop.model.jobs` with the annotations kept at decode time.
"""

from __future__ import annotations

from hpctop.backends.contract import Backend

#: slurm-bridge's partition annotation names a *Slurm* partition (SchedMD/slurm-bridge
#: docs/workload.md), which Slurm validates: it is not read as one of hpctop's partitions
SLINKY_PARTITION = "slurmjob.slinky.slurm.net/partition"
#: SUNK's partition label is one of hpctop's partitions (the pod runs in that Slurm partition)
SUNK_PARTITION = "sunk.coreweave.com/partition"

BACKEND = Backend(
    name="slinky",
    title="Slinky (slurm-bridge) and SUNK",
    upstream="https://github.com/SlinkyProject/slurm-bridge",
    watches=(),
    fixtures=("tests/fixtures/live_truth/60_workloads.yaml",),
    reasons=frozenset(),  # the wait is Slurm's to explain (hpctop.sources.slurm)
    actions="hpctop.backends.slinky.act",
    labels=("slurmjob.slinky.slurm.net/", "slinky.slurm.net/", "sunk.coreweave.com/"),
    detects={"sunk.coreweave.com": "sunk", "slinky.slurm.net": "slinky"},
)
