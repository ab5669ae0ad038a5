"""LeaderWorkerSet (kubernetes-sigs/lws): groups of a leader and workers, served (SCHEDULERS.md §2.3).

``read``: LeaderWorkerSets (leaderworkerset.x-k8s.io/v1) as owner kinds; their StatefulSets' pods
fold into the row by the ``leaderworkerset.sigs.k8s.io/name`` label. ``act``: scale to zero/back.
"""
