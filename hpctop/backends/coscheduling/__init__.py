"""scheduler-plugins coscheduling (kubernetes-sigs/scheduler-plugins): PodGroup gangs (SCHEDULERS.md §7.1).

``read``: PodGroups (scheduling.x-k8s.io/v1alpha1) and how their phase explains a gang. ``act``:
the plans (act on the PodGroup's owner; cancel deletes both).
"""
