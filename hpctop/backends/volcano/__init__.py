"""Volcano (volcano-sh/volcano): queues, PodGroups and vcjobs (SCHEDULERS.md §6).

``read``: Queues, PodGroups (scheduling.volcano.sh/v1beta1) and vcjobs (batch.volcano.sh/v1alpha1),
how a PodGroup's phase and conditions become a gang's state and reasons, and the queue tree.
``act``: the plans (bus Commands for hold/release/requeue, delete, priority).
"""
