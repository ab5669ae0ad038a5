"""Discovery honoured on the live read path (issue 11, class 8): only what the cluster lists is read.

Why: ``GET /apis`` names groups and versions, not resources. A cluster whose Kubeflow operator
serves ``kubeflow.org/v1`` with PyTorchJobs only (no TFJob, XGBoostJob, ...) was asked for every
Kubeflow kind hpctop knows; each answered 404 and every command printed a note about a CRD that is
simply not installed. The per-version resource lists (``GET /apis/kubeflow.org/v1``) say what is
there; the tables read only that, and an absent optional CRD prints nothing.
"""

from __future__ import annotations

from pathlib import Path

from hpctop.runtime.live import list_once
from tests.kube.fakeserver import (
    DEPLOYMENTS,
    JOBS,
    NODES,
    PODS,
    PRIORITY_CLASSES,
    PYTORCHJOBS,
    WORKLOADS_V1BETA1,
    FakeApiServer,
)

CORE = (PODS, NODES, JOBS, DEPLOYMENTS, PRIORITY_CLASSES)


async def test_only_listed_kinds_are_requested_and_nothing_is_noted(
    fake: FakeApiServer, kubeconfig: Path
) -> None:
    fake.served = (*CORE, PYTORCHJOBS, WORKLOADS_V1BETA1)
    fake.upsert(PYTORCHJOBS, {"metadata": {"name": "bert", "namespace": "ml"}, "spec": {}})
    notes: list[str] = []
    await list_once(str(kubeconfig), None, None, notes=notes)
    assert notes == []
    listed = {r.url.path for _, r in fake.log if r.resource is not None and r.resource.plural}
    assert "/apis/kubeflow.org/v1/pytorchjobs" in listed
    assert "/apis/kueue.x-k8s.io/v1beta1/workloads" in listed  # the served version, not v1beta2
    assert not any(p.endswith(("/tfjobs", "/mpijobs", "/xgboostjobs", "/clusterqueues")) for p in listed)
    assert not any("v1beta2" in p for p in listed)
