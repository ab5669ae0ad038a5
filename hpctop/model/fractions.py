"""Fractional GPUs that schedulers state in pod annotations, not in ``resources``.

Why here: a GPU-sharing scheduler lets a pod ask for part of a GPU without any
``nvidia.com/gpu`` request, so a console that reads only ``resources`` shows such a pod holding 0
GPUs (and, for KAI, the reservation pod that holds the physical GPU as one whole GPU job). The
pod decoder calls :func:`annotated_gpu_milli` once per pod; the amount becomes the pod's
``requests.gpu`` in milli-GPU, the unit every table, the GPU pane and the core already use, so a
half GPU is 500 everywhere: never a whole GPU, never 0 (a positive fraction rounds up to at least
1 milli-GPU).

Schemes read (upstream semantics, checked in the sources named):

- NVIDIA KAI-Scheduler (``kai-scheduler/KAI-Scheduler`` ``pkg/common/constants/constants.go``,
  ``pkg/binder/plugins/gpusharing/gpu-request/gpu_request_validator.go``): ``gpu-fraction``, a
  decimal in (0, 1), times ``gpu-fraction-num-devices`` (default 1). ``gpu-memory`` (MiB) is a
  share whose fraction KAI computes on the chosen node (its ``nvidia.com/gpu.memory`` label,
  ``pkg/podgroupcontroller/controllers/resources/fraction.go``): the decoder does not know the
  node, so it is kept as the extended resource :data:`KAI_GPU_MEMORY` (MiB, what KAI's own
  PodGroup status reports as ``requested``) and, once the pod is bound, turned into a GPU share
  of its node's GPU by :func:`with_memory_share` (the store does it, as it knows the node).
- The Alibaba cluster trace (``alibabacloud.com/gpu-milli`` x ``gpu-count``) is handled beside it
  in :mod:`hpctop.model.projection` (it predates this module).

KAI's reservation pods (namespace :data:`KAI_RESERVATION_NAMESPACE`, label
:data:`KAI_GPU_GROUP`) hold the physical GPU that the shares split; :func:`is_kai_reservation`
names them so the GPU is counted once, through the shares (see ``hpctop/backends/kai/read.py``).
"""

from __future__ import annotations

import math

from hpctop.errors import QuantityError
from hpctop.model.quantity import LIMITS, bounded, to_int
from hpctop.model.resources import Resources

KAI_FRACTION = "gpu-fraction"
KAI_FRACTION_DEVICES = "gpu-fraction-num-devices"
KAI_GPU_MEMORY_ANNOTATION = "gpu-memory"
#: the extended resource a ``gpu-memory`` pod's request is kept as (MiB), until a node is known
KAI_GPU_MEMORY = "kai.scheduler/gpu-memory-mib"
KAI_RESERVATION_NAMESPACE = "kai-resource-reservation"
KAI_GPU_GROUP = "runai-gpu-group"
#: annotation keys this module reads (the pod decoder keeps them)
ANNOTATION_KEYS = (KAI_FRACTION, KAI_FRACTION_DEVICES, KAI_GPU_MEMORY_ANNOTATION)


def _fraction_milli(text: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise QuantityError(f"{KAI_FRACTION}={text!r}: not a decimal") from None
    if not 0 < value < 1 or math.isnan(value):
        # KAI's binder refuses the pod (gpu_request_validator.go: 0 < fraction < 1)
        raise QuantityError(f"{KAI_FRACTION}={text!r}: a fraction must lie strictly between 0 and 1")
    return max(math.ceil(round(value * 1000, 6)), 1)  # 0.29 * 1000 is 290.00000000000006


def _devices(annotations: dict[str, str]) -> int:
    raw = annotations.get(KAI_FRACTION_DEVICES)
    if raw is None:
        return 1
    if not raw.isdigit() or int(raw) < 1:
        raise QuantityError(f"{KAI_FRACTION_DEVICES}={raw!r}: not a positive integer")
    return bounded(KAI_FRACTION_DEVICES, int(raw), LIMITS["gpu"])


def annotated_gpu_milli(annotations: dict[str, str]) -> int | None:
    """The GPU share a pod's annotations state, in milli-GPU; None when they state none.

    Raises :class:`~hpctop.errors.QuantityError` for a value KAI itself refuses (the pod is then
    skipped, counted and noted by the decoder).
    """
    fraction = annotations.get(KAI_FRACTION)
    if fraction is None:
        return None
    return _fraction_milli(fraction) * _devices(annotations)


def annotated_gpu_memory(annotations: dict[str, str]) -> int | None:
    """A ``gpu-memory`` request in MiB (times the device count); None when absent."""
    raw = annotations.get(KAI_GPU_MEMORY_ANNOTATION)
    if raw is None:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise QuantityError(f"{KAI_GPU_MEMORY_ANNOTATION}={raw!r}: not a positive integer (MiB)")
    return bounded(KAI_GPU_MEMORY_ANNOTATION, to_int(raw), LIMITS["memory"]) * _devices(annotations)


def memory_share_milli(memory_mib: int, gpu_memory_mib: int | None) -> int | None:
    """The share a ``gpu-memory`` request is of one GPU of ``gpu_memory_mib`` (KAI's rule), or None."""
    if not gpu_memory_mib or memory_mib <= 0:
        return None
    return max(math.ceil(memory_mib * 1000 / gpu_memory_mib), 1)


def with_memory_share(requests: Resources, gpu_memory_mib: int | None) -> Resources | None:
    """A ``gpu-memory`` request (kept as :data:`KAI_GPU_MEMORY`) as a GPU share of the node's GPU.

    None when the request holds no such amount or the node's GPU memory is unknown (the request
    then stays in MiB, as KAI's own PodGroup status reports it).
    """
    mib = requests.get(KAI_GPU_MEMORY)
    share = memory_share_milli(mib, gpu_memory_mib) if mib else None
    if share is None:
        return None
    extended = tuple((k, v) for k, v in requests.extended if k != KAI_GPU_MEMORY)
    return Resources(requests.cpu, requests.memory, requests.gpu + share, extended)


def is_kai_reservation(namespace: str, labels: dict[str, str]) -> bool:
    """A KAI reservation pod: it holds the physical GPU for the shares of its GPU group."""
    return namespace == KAI_RESERVATION_NAMESPACE and KAI_GPU_GROUP in labels


#: the job kind a reservation pod's key carries: KAI's bookkeeping, never a job row
RESERVATION_KIND = "GpuReservation.scheduling.run.ai"


def reservation_job_key(namespace: str, labels: dict[str, str]) -> tuple[str, str, str] | None:
    """The key a KAI reservation pod is filed under (no job row), or None for any other pod."""
    group = labels.get(KAI_GPU_GROUP) if namespace == KAI_RESERVATION_NAMESPACE else None
    return (namespace, RESERVATION_KIND, group) if group else None
