"""Column names, sort keys and state words of every table, without the tables.

``hpctop --help`` lists the sort fields and state words of each command. Kept here, apart from
the table modules (which import the model and the core), the help and the argument checks cost
no import of the model: ``hpctop --help`` and ``hpctop version`` answer in a fraction of a second
(issue 15). The table modules re-export these under their old names.
"""

from __future__ import annotations

#: CSV column order (JSON has the same keys, sorted)
JOB_CSV_KEYS = (
    "id",
    "namespace",
    "name",
    "user",
    "queue",
    "partition",
    "state",
    "code",
    "reason",
    "reason_message",
    "priority",
    "order",
    "members",
    "min_members",
    "running_members",
    "pending_members",
    "gpus",
    "gpus_per_member",
    "cpus",
    "memory",
    "nodes",
    "submit_time",
    "start_time",
    "end_time",
    "eta",
    "elapsed",
    "time_limit",
    "kind",
    "owner_kind",
    "priority_class",
    "restart_count",
    "backfilled",
    # who owns the job and where its reason and ETA came from (issue 11: observed first)
    "eta_source",
    "reason_source",
    "binder",
    "queue_layer",
)
JOB_SORT_KEYS = tuple(sorted(JOB_CSV_KEYS))


#: the factors every row carries (0 when the core reported none), in sprio's column order
PRIO_FACTORS = ("age", "fairshare", "jobsize", "partition", "qos")

PRIO_CSV_KEYS = (
    "id",
    "namespace",
    "name",
    "user",
    "queue",
    "partition",
    "state",
    "priority",
    "order",
    *(f"factors.{f}" for f in PRIO_FACTORS),
    *(f"weighted.{f}" for f in PRIO_FACTORS),
)
PRIO_SORT_KEYS = tuple(sorted(PRIO_CSV_KEYS))


QUEUE_CSV_KEYS = (
    "path",
    "name",
    "parent",
    "depth",
    "leaf",
    "state",
    "guaranteed_gpus",
    "used_gpus",
    "max_gpus",
    "pending_gpus",
    "used_cpus",
    "used_memory",
    "running_jobs",
    "pending_jobs",
    "fairshare",
    "dominant_share",
    "dominant_resource",
    "cluster_share",
    "normalized_share",
    "borrowing",
)
QUEUE_SORT_KEYS = tuple(sorted(QUEUE_CSV_KEYS))


NODE_CSV_KEYS = (
    "node",
    "partition",
    "state",
    "cpus_alloc",
    "cpus_total",
    "memory_alloc",
    "memory_total",
    "gpus_alloc",
    "gpus_total",
    "gpu_model",
    "gpu_memory_mib",
    "gpu_sharing",
    "pods",
    "ready",
    "schedulable",
)
NODE_SORT_KEYS = tuple(sorted(NODE_CSV_KEYS))


SUMMARY_CSV_KEYS = (
    "partition",
    "avail",
    "state",
    "nodes",
    "nodelist",
    "cpus_alloc",
    "cpus_total",
    "memory_alloc",
    "memory_total",
    "gpus_alloc",
    "gpus_total",
    "gpu_models",
)
SUMMARY_SORT_KEYS = tuple(sorted(SUMMARY_CSV_KEYS))


GPU_CSV_KEYS = (
    "partition",
    "model",
    "nodes",
    "total",
    "allocated",
    "free",
    "unavailable",
    "memory_mib",
    "sharing",
)
GPU_SORT_KEYS = tuple(sorted(GPU_CSV_KEYS))


NODE_STATES = ("idle", "mix", "alloc", "drain", "drng", "down")
NODE_STATE_ALIASES = {
    "mixed": "mix",
    "allocated": "alloc",
    "draining": "drng",
    "drained": "drain",
}
QUEUE_STATES = ("open", "closed")
