"""Kubeflow's read side: the training-job owner kinds, each with its replica specs.

Why: a Kubeflow job is what the user submitted; its pods (launcher, workers, ...) are its members,
and per-role replica specs say what it requests (:mod:`hpctop.model.projection`). Its wait is
explained by whoever schedules its pods (kube-scheduler, Kueue, Volcano), so it declares no
reasons of its own. MPIJob: mpi-operator's v2beta1 is preferred over training-operator's v1.
"""

from __future__ import annotations

from hpctop.backends.contract import Backend, ResourceSpec
from hpctop.model.backends.wire import workload_decoder

KUBEFLOW_GROUP = "kubeflow.org"
TRAINER_GROUP = "trainer.kubeflow.org"
#: the training-operator kinds (replica specs, ``runPolicy``); TrainJob groups a JobSet instead
KUBEFLOW_KINDS = frozenset({"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob"})

PYTORCHJOBS = ResourceSpec("PyTorchJob", KUBEFLOW_GROUP, "v1", "pytorchjobs", namespaced=True)
TFJOBS = ResourceSpec("TFJob", KUBEFLOW_GROUP, "v1", "tfjobs", namespaced=True)
MPIJOBS = ResourceSpec("MPIJob", KUBEFLOW_GROUP, "v1", "mpijobs", namespaced=True)
MPIJOBS_V2 = ResourceSpec("MPIJob", KUBEFLOW_GROUP, "v2beta1", "mpijobs", namespaced=True)
XGBOOSTJOBS = ResourceSpec("XGBoostJob", KUBEFLOW_GROUP, "v1", "xgboostjobs", namespaced=True)
PADDLEJOBS = ResourceSpec("PaddleJob", KUBEFLOW_GROUP, "v1", "paddlejobs", namespaced=True)
JAXJOBS = ResourceSpec("JAXJob", KUBEFLOW_GROUP, "v1", "jaxjobs", namespaced=True)
TRAINJOBS = ResourceSpec("TrainJob", TRAINER_GROUP, "v1alpha1", "trainjobs", namespaced=True)

WATCHES: tuple[tuple[ResourceSpec, ...], ...] = (
    (PYTORCHJOBS,),
    (TFJOBS,),
    (MPIJOBS_V2, MPIJOBS),
    (XGBOOSTJOBS,),
    (PADDLEJOBS,),
    (JAXJOBS,),
    (TRAINJOBS,),
)

BACKEND = Backend(
    name="kubeflow",
    title="Kubeflow training jobs",
    upstream="https://github.com/kubeflow/trainer",
    watches=WATCHES,
    fixtures=("tests/fixtures/live_truth/60_workloads.yaml", "tests/fixtures/live_truth/70_more.yaml"),
    reasons=frozenset(),
    actions="hpctop.backends.kubeflow.act",
    labels=("training.kubeflow.org/",),
    detects={KUBEFLOW_GROUP: "kubeflow", TRAINER_GROUP: "kubeflow-trainer"},
    decoders={kind: workload_decoder(kind) for kind in dict.fromkeys(a[0].kind for a in WATCHES)},
)
