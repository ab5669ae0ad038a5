"""JobSet's read side: one owner kind, no scheduler evidence of its own.

Why: a JobSet is what the user submitted; its replicated Jobs and their pods are parts of it
(:mod:`hpctop.model.jobs` folds them by the ``jobset.sigs.k8s.io/jobset-name`` label), and its
``spec.suspend`` is what Kueue or a person toggles. Its wait is explained by whoever schedules
its pods (kube-scheduler, Kueue, ...), so it declares no reasons of its own.
"""

from __future__ import annotations

from hpctop.backends.contract import Backend, ResourceSpec
from hpctop.model.backends.wire import workload_decoder

#: the label JobSet stamps on every pod of its child Jobs (pkg/constants): the pods' row
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"

JOBSETS = ResourceSpec("JobSet", "jobset.x-k8s.io", "v1alpha2", "jobsets", namespaced=True)

BACKEND = Backend(
    name="jobset",
    title="JobSet",
    upstream="https://github.com/kubernetes-sigs/jobset",
    watches=((JOBSETS,),),
    fixtures=("tests/fixtures/live_truth/60_workloads.yaml",),
    reasons=frozenset(),
    actions="hpctop.backends.jobset.act",
    labels=("jobset.sigs.k8s.io/",),
    detects={"jobset.x-k8s.io": "jobset"},
    decoders={"JobSet": workload_decoder("JobSet")},
)
