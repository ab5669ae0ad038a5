"""NVIDIA KAI-Scheduler (``kai-scheduler/KAI-Scheduler``): its Queues, PodGroups and GPU sharing.

The read side is :mod:`hpctop.backends.kai.read` (wire Structs, projections, the queue fold and
the evidence rules). The fractional-GPU annotations KAI reads on pods (``gpu-fraction``,
``gpu-memory``) are decoded with the pod itself, in :mod:`hpctop.model.fractions`, because every
pod passes through that decoder whichever scheduler owns it. Nothing is imported here, so that
importing one module of the package never pulls in the others.
"""
