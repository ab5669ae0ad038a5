"""LeaderWorkerSet's read side: one owner kind (a service), no scheduler evidence of its own.

Why: an LWS is an inference service whose groups are StatefulSets; the row is the LWS, its
pods fold into it by the ``leaderworkerset.sigs.k8s.io/name`` label (:mod:`hpctop.model.jobs`),
and whoever schedules the pods explains a wait, so it declares no reasons of its own.
"""

from __future__ import annotations

from hpctop.backends.contract import Backend, ResourceSpec
from hpctop.model.backends.wire import workload_decoder

#: the label LWS stamps on every pod of its groups (api/leaderworkerset/v1): the pods' row
LWS_NAME = "leaderworkerset.sigs.k8s.io/name"

LEADERWORKERSETS = ResourceSpec(
    "LeaderWorkerSet", "leaderworkerset.x-k8s.io", "v1", "leaderworkersets", namespaced=True
)

BACKEND = Backend(
    name="lws",
    title="LeaderWorkerSet",
    upstream="https://github.com/kubernetes-sigs/lws",
    watches=((LEADERWORKERSETS,),),
    fixtures=("tests/fixtures/live_truth/60_workloads.yaml",),
    reasons=frozenset(),
    actions="hpctop.backends.lws.act",
    labels=("leaderworkerset.sigs.k8s.io/",),
    detects={"leaderworkerset.x-k8s.io": "leaderworkerset"},
    decoders={"LeaderWorkerSet": workload_decoder("LeaderWorkerSet")},
)
