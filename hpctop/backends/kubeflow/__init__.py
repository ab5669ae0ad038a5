"""Kubeflow training jobs (kubeflow/training-operator, mpi-operator, trainer) (SCHEDULERS.md §2.3).

``read``: PyTorchJob, TFJob, MPIJob (v2beta1 over v1), XGBoostJob, PaddleJob, JAXJob (kubeflow.org)
and TrainJob (trainer.kubeflow.org) as owner kinds. ``act``: suspend/resume (``runPolicy.suspend``).
"""
