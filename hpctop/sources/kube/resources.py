"""The Kubernetes resources hpctop lists and watches, as the live sources and actions name them.

Why this module is now a view: each backend declares what it watches in its own folder
(``hpctop/backends/<name>/read.py``), and :mod:`hpctop.backends.registry` lists the backends;
this module gives the reflector, the one-shot tables and the actions the familiar names
(``PODS``, ``DEFAULT_RESOURCES``, ``OPTIONAL_RESOURCES``, ``kueue_resources`` ...) derived from
there, so the resource table exists once. A resource is named by its group, version and plural,
as in the URL; ``kind`` is the model's name for it (what :func:`hpctop.model.decode.decode_event`
is keyed by). Items of a list response carry no ``kind``/``apiVersion`` (the API server sets them
only on the list itself), so the reflector stamps them from here before decoding.
"""

from __future__ import annotations

from hpctop.backends import registry
from hpctop.backends.contract import ResourceSpec
from hpctop.backends.coscheduling.read import COSCHEDULING_PODGROUPS
from hpctop.backends.jobset.read import JOBSETS
from hpctop.backends.kube_scheduler.read import (
    CONFIGMAPS,
    DEPLOYMENTS,
    JOBS,
    NODES,
    PODS,
    PRIORITY_CLASSES,
)
from hpctop.backends.kubeflow.read import (
    JAXJOBS,
    MPIJOBS,
    MPIJOBS_V2,
    PADDLEJOBS,
    PYTORCHJOBS,
    TFJOBS,
    TRAINJOBS,
    XGBOOSTJOBS,
)
from hpctop.backends.kueue.read import KUEUE_GROUP, KUEUE_VERSIONS, kueue_resources
from hpctop.backends.lws.read import LEADERWORKERSETS
from hpctop.backends.volcano.read import VOLCANO_COMMANDS, VOLCANO_JOBS, VOLCANO_PODGROUPS, VOLCANO_QUEUES

#: What a live session watches by default, in the order their status is shown.
DEFAULT_RESOURCES: tuple[ResourceSpec, ...] = registry.CORE_RESOURCES

#: one-version resources hpctop watches when discovery lists them: each kind's versions hpctop
#: understands, in order of preference (Kueue's, chosen for the group as a whole, excluded)
OPTIONAL_RESOURCES: tuple[tuple[ResourceSpec, ...], ...] = tuple(
    alternatives
    for b in registry.BACKENDS
    if not b.builtin and b.select is None
    for alternatives in b.watches
)

#: resources hpctop only writes, requested only where discovery lists them (core ones always)
WRITE_ONLY_RESOURCES: tuple[ResourceSpec, ...] = tuple(
    spec for b in registry.BACKENDS for spec in b.writes if spec not in registry.CORE_WRITES
)
#: the core API's resources, served by every API server: never looked up in discovery
BUILTIN_RESOURCES: tuple[ResourceSpec, ...] = (*DEFAULT_RESOURCES, *registry.CORE_WRITES)

understood_versions = registry.understood_versions

__all__ = [
    "BUILTIN_RESOURCES",
    "CONFIGMAPS",
    "COSCHEDULING_PODGROUPS",
    "DEFAULT_RESOURCES",
    "DEPLOYMENTS",
    "JAXJOBS",
    "JOBS",
    "JOBSETS",
    "KUEUE_GROUP",
    "KUEUE_VERSIONS",
    "LEADERWORKERSETS",
    "MPIJOBS",
    "MPIJOBS_V2",
    "NODES",
    "OPTIONAL_RESOURCES",
    "PADDLEJOBS",
    "PODS",
    "PRIORITY_CLASSES",
    "PYTORCHJOBS",
    "TFJOBS",
    "TRAINJOBS",
    "VOLCANO_COMMANDS",
    "VOLCANO_JOBS",
    "VOLCANO_PODGROUPS",
    "VOLCANO_QUEUES",
    "WRITE_ONLY_RESOURCES",
    "XGBOOSTJOBS",
    "ResourceSpec",
    "kueue_resources",
    "understood_versions",
]
