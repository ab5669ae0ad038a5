"""Kueue (kubernetes-sigs/kueue): quota-based admission of suspended jobs (SCHEDULERS.md §5).

``read``: what hpctop watches (Workloads, ClusterQueues, LocalQueues, Cohorts, ResourceFlavors at
v1beta2 or v1beta1), how it decodes them, and how a Workload's conditions become a job's state,
reasons and queue. ``act``: the action plans (hold, release, requeue, priority, queue stop).
"""
