"""The Kubeflow training operator's actions: PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob.

Why: each keeps its suspend flag in ``spec.runPolicy.suspend`` (training-operator >= 1.7), which
deletes the job's pods; releasing recreates them. An MPIJob is served at v2beta1 (mpi-operator) or
v1; the registry's served version decides the path, and a job read at the other version is acted
on at the version it was read from.
"""

from __future__ import annotations

from hpctop.actions.engine.plan import ActionTable
from hpctop.actions.engine.shapes import SuspendPlan

KUBEFLOW_PLURALS = {
    "PyTorchJob": "pytorchjobs",
    "TFJob": "tfjobs",
    "MPIJob": "mpijobs",
    "XGBoostJob": "xgboostjobs",
    "PaddleJob": "paddlejobs",
    "JAXJob": "jaxjobs",
}


class KubeflowPlan(SuspendPlan):
    suspend_path = ("spec", "runPolicy", "suspend")
    on_cancel = "its pods and services are deleted by the garbage collector"
    on_hold = "the training operator deletes its pods (needs training-operator >= 1.7 for suspend)"
    on_release = "the training operator creates its pods again"
    requeue_again = False

    def __init__(self, kind: str) -> None:
        self.kind = kind


TABLE = ActionTable(
    "kubeflow",
    plans=tuple(KubeflowPlan(kind) for kind in KUBEFLOW_PLURALS),
    acted=(("spec", "runPolicy", "suspend"),),
)

__all__ = ["KUBEFLOW_PLURALS", "TABLE", "KubeflowPlan"]
