"""Wire helpers every backend's decoders share: aggregate quantities, store kinds, owner kinds.

Why neutral: quotas and queue capacities (Kueue ClusterQueues, Volcano Queues) are summed over
many nodes, so they are bounded as aggregates (never negative, at most 2^60), not per node, the
same way for every backend; decoder keys are ``Kind.group`` (``PodGroup.scheduling.volcano.sh``)
wherever two groups define one kind, split back into the store's (group, kind) here; and every
owner kind (a Job, a JobSet, a PyTorchJob, a vcjob) decodes through one shared Struct.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from hpctop.model.projection import workload_from_struct
from hpctop.model.quantity import AGGREGATE_LIMITS, bounded, to_int, to_milli
from hpctop.model.resources import GPU_RESOURCE, IGNORED_RESOURCES, Resources
from hpctop.model.structs import WireStruct, WorkloadS

Quantity = str | int | float


def split_kind(store_kind: str) -> tuple[str, str]:
    """``PodGroup.scheduling.volcano.sh`` → (``scheduling.volcano.sh``, ``PodGroup``)."""
    kind, _, group = store_kind.partition(".")
    return group, kind


# -- quantities ----------------------------------------------------------------------------------


def amount(resource: str, value: Quantity) -> int:
    """One quantity in canonical units (§1.6): cpu millicores, memory bytes, GPUs in milli-GPU.

    Bounded as an aggregate (never negative, at most 2^60): a quota spans many nodes.
    """
    if resource == "cpu":
        milli = to_milli(value)
    elif resource == GPU_RESOURCE:
        milli = to_int(value) * 1000
    else:
        milli = to_int(value)
    return bounded(resource, milli, AGGREGATE_LIMITS["other"], value)


def resources_of(cells: Iterable[tuple[str, int]]) -> Resources:
    """Sum canonical (resource, amount) cells into a vector (bookkeeping resources dropped)."""
    cpu = memory = gpu = 0
    extended: dict[str, int] = {}
    for name, value in cells:
        if name == "cpu":
            cpu += value
        elif name == "memory":
            memory += value
        elif name == GPU_RESOURCE:
            gpu += value
        elif name not in IGNORED_RESOURCES:
            extended[name] = extended.get(name, 0) + value
    return Resources(cpu, memory, gpu, tuple(sorted((k, v) for k, v in extended.items() if v)))


def resource_map(values: dict[str, Quantity] | None) -> Resources | None:
    if values is None:
        return None
    return Resources.from_k8s(values, aggregate=True)


# -- owner kinds -----------------------------------------------------------------------------


def workload_decoder(kind: str) -> tuple[type[WireStruct], Callable[[Any, str], Any]]:
    """The decoder of an owner kind (a Job, a JobSet, a PyTorchJob...): the shared owner Struct,
    projected as a :class:`hpctop.model.objects.Workload` of ``kind``."""

    def project(w: WorkloadS, api_version: str) -> Any:
        return workload_from_struct(w, kind, api_version)

    return WorkloadS, project
