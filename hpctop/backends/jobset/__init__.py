"""JobSet (kubernetes-sigs/jobset): a group of Jobs run as one (SCHEDULERS.md §2.3).

``read``: JobSets (jobset.x-k8s.io/v1alpha2) as owner kinds; their child Jobs' pods fold into the
JobSet's row by the ``jobset.sigs.k8s.io/jobset-name`` label. ``act``: suspend/resume, delete.
"""
