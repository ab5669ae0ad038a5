"""The wire schema of the core kinds: msgspec Structs of only the fields hpctop reads.

Why msgspec (a dependency since PERFORMANCE.md P1/P3/P4 missed with pydantic): a real pod is
4-20 KB of JSON of which hpctop reads a few hundred bytes (names, labels, requests, a condition
or two). pydantic-core and ``orjson.loads`` both build every field as Python objects first (env
lists, volumes, probes, managedFields) only for them to be dropped. ``msgspec.json.Decoder``
validates straight from the bytes into ``Struct`` instances and skips the fields a Struct does
not declare in C, without building them.

This is the one declaration of each kind's schema (Pods, Nodes, the owner kinds: batch Jobs,
JobSets, Kubeflow jobs, LeaderWorkerSets, Volcano Jobs, Deployments; PriorityClasses). Decoding
is strict (a str field takes only a JSON string, an int only a JSON integer); what the strict
decode refuses is re-read by :mod:`hpctop.model.tolerant`, which follows the rule of each field:

- a field hpctop does not need to show an object truthfully (a condition's message, a label, a
  toleration, a restart count, Volcano's conditions that have no ``type``) is *tolerated*: an odd
  value is dropped and its default stands, an odd list item or map entry is dropped;
- a field it needs (identity, resource amounts, placement, phase, counts; named in each Struct's
  ``needed``) that is malformed makes the whole object malformed: it is skipped, counted and
  noted (kind, namespace/name, field). ``needed`` fields hang only under needed or required
  fields, so a needed field is never inside something tolerated.

The Structs are ``gc=False``: they live only while an object is projected and hold no cycles.
"""

from __future__ import annotations

from typing import ClassVar

import msgspec

Quantity = str | int | float
_NONE: frozenset[str] = frozenset()


class WireStruct(msgspec.Struct, gc=False, frozen=True):
    """Base of the wire Structs: unknown fields are skipped (msgspec's default), never built.

    ``needed`` names the fields whose malformed value makes the object malformed; every other
    field is tolerated (see the module docstring).
    """

    needed: ClassVar[frozenset[str]] = _NONE


# -- shared parts ---------------------------------------------------------------------------------


class OwnerRefS(WireStruct, frozen=True):
    apiVersion: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool = False


class MetaS(WireStruct, frozen=True):
    needed = frozenset({"name", "namespace", "creationTimestamp", "deletionTimestamp"})

    name: str = ""
    namespace: str = ""
    uid: str = ""
    resourceVersion: str = ""
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    ownerReferences: list[OwnerRefS] | None = None
    creationTimestamp: str | None = None
    deletionTimestamp: str | None = None


class ConditionS(WireStruct, frozen=True):
    # ``type`` may be absent: Volcano Job conditions carry only ``status`` (the phase) and a time
    type: str = ""
    status: str = "Unknown"
    reason: str | None = None
    message: str | None = None


class ListMetaS(WireStruct, frozen=True):
    resourceVersion: str = ""
    continue_: str | None = msgspec.field(default=None, name="continue")


NO_LIST_META = ListMetaS()


# -- Pod --------------------------------------------------------------------------------------------


class ResourcesS(WireStruct, frozen=True):
    needed = frozenset({"requests", "limits"})

    requests: dict[str, Quantity] | None = None
    limits: dict[str, Quantity] | None = None


class ContainerS(WireStruct, frozen=True):
    """A container's image (the pause-pod test) and resources; its name is read by nothing, so
    it is not declared (one string fewer built and freed per container: P1)."""

    needed = frozenset({"resources"})

    image: str = ""
    resources: ResourcesS | None = None


class TolerationS(WireStruct, frozen=True):
    key: str | None = None
    operator: str = "Equal"
    value: str | None = None
    effect: str | None = None


class GateS(WireStruct, frozen=True):
    name: str


class LabelSelectorS(WireStruct, frozen=True):
    matchLabels: dict[str, str] | None = None


class PodAffinityTermS(WireStruct, frozen=True):
    topologyKey: str = ""
    labelSelector: LabelSelectorS | None = None


class PodAntiAffinityS(WireStruct, frozen=True):
    requiredDuringSchedulingIgnoredDuringExecution: list[PodAffinityTermS] | None = None


class AffinityS(WireStruct, frozen=True):
    podAntiAffinity: PodAntiAffinityS | None = None


class PodResourceClaimS(WireStruct, frozen=True):
    """``spec.resourceClaims[]``: a DRA claim by name, or a template a claim is generated from."""

    name: str = ""
    resourceClaimName: str | None = None
    resourceClaimTemplateName: str | None = None


class PodResourceClaimStatusS(WireStruct, frozen=True):
    """``status.resourceClaimStatuses[]``: the name of the claim generated from a template."""

    name: str = ""
    resourceClaimName: str | None = None


class ExtendedResourceClaimStatusS(WireStruct, frozen=True):
    """``status.extendedResourceClaimStatus``: the claim the scheduler made for ``nvidia.com/gpu``."""

    resourceClaimName: str = ""


class ResourceHealthS(WireStruct, frozen=True):
    resourceID: str = ""
    health: str = "Unknown"


class ResourceStatusS(WireStruct, frozen=True):
    """``containerStatuses[].allocatedResourcesStatus[]`` (KEP-4680): device health per claim."""

    name: str = ""
    resources: list[ResourceHealthS] | None = None


class SchedulingGroupS(WireStruct, frozen=True):
    """``spec.schedulingGroup``: the native gang API's PodGroup of this pod (KEP-4671)."""

    podGroupName: str | None = None


class PodSpecS(WireStruct, frozen=True):
    needed = frozenset(
        {
            "nodeName",
            "containers",
            "initContainers",
            "overhead",
            "schedulingGates",
            "priority",
            "resourceClaims",
        }
    )

    nodeName: str | None = None
    schedulerName: str = "default-scheduler"
    containers: list[ContainerS] = []  # msgspec copies a mutable default per instance
    initContainers: list[ContainerS] | None = None
    overhead: dict[str, Quantity] | None = None
    nodeSelector: dict[str, str] | None = None
    tolerations: list[TolerationS] | None = None
    priority: int | None = None
    priorityClassName: str | None = None
    schedulingGates: list[GateS] | None = None
    activeDeadlineSeconds: int | None = None
    affinity: AffinityS | None = None
    resourceClaims: list[PodResourceClaimS] | None = None
    schedulingGroup: SchedulingGroupS | None = None


class TerminatedS(WireStruct, frozen=True):
    reason: str | None = None
    finishedAt: str | None = None


class ContainerStateS(WireStruct, frozen=True):
    terminated: TerminatedS | None = None


class ContainerStatusS(WireStruct, frozen=True):
    restartCount: int = 0
    state: ContainerStateS | None = None
    lastState: ContainerStateS | None = None
    allocatedResourcesStatus: list[ResourceStatusS] | None = None


class PodStatusS(WireStruct, frozen=True):
    needed = frozenset({"phase", "startTime", "resourceClaimStatuses", "extendedResourceClaimStatus"})

    phase: str = "Pending"
    reason: str | None = None
    nominatedNodeName: str | None = None
    startTime: str | None = None
    conditions: list[ConditionS] | None = None
    containerStatuses: list[ContainerStatusS] | None = None
    resourceClaimStatuses: list[PodResourceClaimStatusS] | None = None
    extendedResourceClaimStatus: ExtendedResourceClaimStatusS | None = None


NO_SPEC = PodSpecS()
NO_STATUS = PodStatusS()


class PodS(WireStruct, frozen=True):
    needed = frozenset({"spec", "status"})

    metadata: MetaS
    # absent → the shared empty spec/status
    spec: PodSpecS = NO_SPEC
    status: PodStatusS = NO_STATUS


# -- Node -------------------------------------------------------------------------------------------


class TaintS(WireStruct, frozen=True):
    key: str
    value: str = ""
    effect: str = "NoSchedule"


class NodeSpecS(WireStruct, frozen=True):
    needed = frozenset({"unschedulable", "taints"})

    unschedulable: bool = False
    taints: list[TaintS] | None = None


class NodeStatusS(WireStruct, frozen=True):
    needed = frozenset({"capacity", "allocatable", "conditions"})

    capacity: dict[str, Quantity] | None = None
    allocatable: dict[str, Quantity] | None = None
    conditions: list[ConditionS] | None = None


class NodeS(WireStruct, frozen=True):
    needed = frozenset({"spec", "status"})

    metadata: MetaS
    spec: NodeSpecS = NodeSpecS()
    status: NodeStatusS = NodeStatusS()


# -- owner kinds (batch Job, JobSet, Kubeflow, LeaderWorkerSet, Volcano Job, Deployment, ...) --------


class TemplateS(WireStruct, frozen=True):
    needed = frozenset({"spec"})

    metadata: MetaS | None = None
    spec: PodSpecS | None = None


class SchedulingPolicyS(WireStruct, frozen=True):
    needed = frozenset({"minAvailable"})

    minAvailable: int | None = None
    queue: str | None = None
    priorityClass: str | None = None


class RunPolicyS(WireStruct, frozen=True):
    needed = frozenset({"suspend", "schedulingPolicy"})

    suspend: bool | None = None
    schedulingPolicy: SchedulingPolicyS | None = None


class ReplicaSpecS(WireStruct, frozen=True):
    """A Kubeflow replica type (``Master``, ``Worker``, ``Launcher``, ...)."""

    needed = frozenset({"replicas", "template"})

    replicas: int | None = None
    template: TemplateS | None = None


class JobTemplateSpecS(WireStruct, frozen=True):
    needed = frozenset({"parallelism", "completions", "template"})

    parallelism: int | None = None
    completions: int | None = None
    template: TemplateS | None = None


class JobTemplateS(WireStruct, frozen=True):
    needed = frozenset({"spec"})

    spec: JobTemplateSpecS | None = None


NO_JOB_TEMPLATE_SPEC = JobTemplateSpecS()


class ReplicatedJobS(WireStruct, frozen=True):
    """A JobSet replicated job: ``replicas`` child Jobs of one template."""

    needed = frozenset({"replicas", "template"})

    name: str = ""
    replicas: int | None = None
    template: JobTemplateS | None = None


class LeaderWorkerTemplateS(WireStruct, frozen=True):
    needed = frozenset({"size", "leaderTemplate", "workerTemplate"})

    size: int | None = None
    leaderTemplate: TemplateS | None = None
    workerTemplate: TemplateS | None = None


class TrainerS(WireStruct, frozen=True):
    """A Trainer v2 TrainJob's ``spec.trainer``: its nodes and what each asks for (the runtime's
    template fills in the rest, which hpctop does not read)."""

    needed = frozenset({"numNodes", "resourcesPerNode"})

    numNodes: int | None = None
    resourcesPerNode: ResourcesS | None = None


class VolcanoTaskS(WireStruct, frozen=True):
    needed = frozenset({"replicas", "minAvailable", "template"})

    name: str = ""
    replicas: int | None = None
    minAvailable: int | None = None
    template: TemplateS | None = None


class WorkloadSpecS(WireStruct, frozen=True):
    needed = frozenset(
        {
            "suspend",
            "parallelism",
            "completions",
            "replicas",
            "template",
            "runPolicy",
            "pytorchReplicaSpecs",
            "tfReplicaSpecs",
            "mpiReplicaSpecs",
            "xgbReplicaSpecs",
            "paddleReplicaSpecs",
            "jaxReplicaSpecs",
            "replicatedJobs",
            "leaderWorkerTemplate",
            "tasks",
            "minAvailable",
            "trainer",
        }
    )

    suspend: bool | None = None
    parallelism: int | None = None
    completions: int | None = None
    replicas: int | None = None
    activeDeadlineSeconds: int | None = None
    template: TemplateS | None = None
    runPolicy: RunPolicyS | None = None
    # Kubeflow training-operator (kubeflow.org/v1) and mpi-operator (v2beta1)
    pytorchReplicaSpecs: dict[str, ReplicaSpecS] | None = None
    tfReplicaSpecs: dict[str, ReplicaSpecS] | None = None
    mpiReplicaSpecs: dict[str, ReplicaSpecS] | None = None
    xgbReplicaSpecs: dict[str, ReplicaSpecS] | None = None
    paddleReplicaSpecs: dict[str, ReplicaSpecS] | None = None
    jaxReplicaSpecs: dict[str, ReplicaSpecS] | None = None
    # JobSet, LeaderWorkerSet, Volcano vcjob
    replicatedJobs: list[ReplicatedJobS] | None = None
    leaderWorkerTemplate: LeaderWorkerTemplateS | None = None
    tasks: list[VolcanoTaskS] | None = None
    minAvailable: int | None = None
    queue: str | None = None
    # Kubeflow Trainer v2 TrainJob
    trainer: TrainerS | None = None


class VolcanoJobStateS(WireStruct, frozen=True):
    needed = frozenset({"phase"})

    phase: str | None = None
    reason: str | None = None
    message: str | None = None


class WorkloadStatusS(WireStruct, frozen=True):
    needed = frozenset({"startTime", "completionTime", "succeeded", "failed", "state"})

    conditions: list[ConditionS] | None = None
    startTime: str | None = None
    completionTime: str | None = None
    succeeded: int | None = None
    failed: int | None = None
    state: VolcanoJobStateS | None = None


class WorkloadS(WireStruct, frozen=True):
    needed = frozenset({"spec", "status"})

    metadata: MetaS
    apiVersion: str = ""
    kind: str = ""
    spec: WorkloadSpecS = WorkloadSpecS()
    status: WorkloadStatusS = WorkloadStatusS()


class PriorityClassS(WireStruct, frozen=True):
    needed = frozenset({"value"})

    metadata: MetaS
    value: int = 0
    globalDefault: bool = False


__all__ = [
    "NO_JOB_TEMPLATE_SPEC",
    "NO_LIST_META",
    "NO_SPEC",
    "NO_STATUS",
    "ConditionS",
    "ContainerS",
    "ListMetaS",
    "MetaS",
    "NodeS",
    "OwnerRefS",
    "PodS",
    "PodSpecS",
    "PriorityClassS",
    "Quantity",
    "TemplateS",
    "WireStruct",
    "WorkloadS",
    "WorkloadSpecS",
]
