"""The default scheduler (kubernetes/kubernetes): plain pods, batch Jobs, Deployments (SCHEDULERS.md §2).

``read``: the core resources every API server serves, their decoders, and how kube-scheduler's
``PodScheduled=False`` messages become reasons. ``act``: the plans for Jobs, Deployments and pods.
"""
