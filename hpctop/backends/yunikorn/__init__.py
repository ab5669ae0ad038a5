"""Apache YuniKorn (apache/yunikorn-k8shim, yunikorn-core): applications, gangs, queues (SCHEDULERS.md §4).

``read``: no CRDs; pods name their application and queue by labels, gangs by the task-groups
annotation, and the queue tree comes from YuniKorn's REST API. ``act``: the plans (queues.yaml in
its ConfigMap, pod-level actions).
"""
