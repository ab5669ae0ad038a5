"""The Kubernetes resources hpctop lists and watches, and where they live on the API server.

A resource is named by its group, version and plural, as in the URL; ``kind`` is the model's
name for it (what :func:`hpctop.model.decode.decode_event` is keyed by). Items of a list response
carry no ``kind``/``apiVersion`` (the API server sets them only on the list itself), so the
reflector stamps them from here before decoding: workload decoding needs the kind.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    kind: str
    group: str
    version: str
    plural: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None) -> str:
        """The collection URL path, cluster-wide or in one namespace (for namespaced kinds)."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{base}/namespaces/{namespace}/{self.plural}"
        return f"{base}/{self.plural}"


PODS = ResourceSpec("Pod", "", "v1", "pods", namespaced=True)
NODES = ResourceSpec("Node", "", "v1", "nodes", namespaced=False)
JOBS = ResourceSpec("Job", "batch", "v1", "jobs", namespaced=True)
DEPLOYMENTS = ResourceSpec("Deployment", "apps", "v1", "deployments", namespaced=True)
PRIORITY_CLASSES = ResourceSpec(
    "PriorityClass", "scheduling.k8s.io", "v1", "priorityclasses", namespaced=False
)

#: What a live session watches by default, in the order their status is shown.
DEFAULT_RESOURCES: tuple[ResourceSpec, ...] = (PODS, NODES, JOBS, PRIORITY_CLASSES, DEPLOYMENTS)

# -- workload controllers and scheduler backends (watched only when discovery finds them) --------
#
# Scheduler CRDs are named ``Kind.group`` in the model (Volcano and coscheduling both define
# PodGroup; Volcano's Job shares its kind with batch/v1): see hpctop.model.backends.wire.

KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_VERSIONS = ("v1beta2", "v1beta1")  # preferred first (SCHEDULERS.md §5.1)


def kueue_resources(version: str = "v1beta2", cohort_version: str | None = None) -> tuple[ResourceSpec, ...]:
    """Kueue's objects at one served version (Cohort may be served at another: v1alpha1 before)."""
    g = KUEUE_GROUP
    return (
        ResourceSpec("Workload.kueue.x-k8s.io", g, version, "workloads", namespaced=True),
        ResourceSpec("ClusterQueue.kueue.x-k8s.io", g, version, "clusterqueues", namespaced=False),
        ResourceSpec("LocalQueue.kueue.x-k8s.io", g, version, "localqueues", namespaced=True),
        ResourceSpec("Cohort.kueue.x-k8s.io", g, cohort_version or version, "cohorts", namespaced=False),
        ResourceSpec("ResourceFlavor.kueue.x-k8s.io", g, version, "resourceflavors", namespaced=False),
    )


VOLCANO_QUEUES = ResourceSpec(
    "Queue.scheduling.volcano.sh", "scheduling.volcano.sh", "v1beta1", "queues", namespaced=False
)
VOLCANO_PODGROUPS = ResourceSpec(
    "PodGroup.scheduling.volcano.sh", "scheduling.volcano.sh", "v1beta1", "podgroups", namespaced=True
)
VOLCANO_JOBS = ResourceSpec("Job.batch.volcano.sh", "batch.volcano.sh", "v1alpha1", "jobs", namespaced=True)
COSCHEDULING_PODGROUPS = ResourceSpec(
    "PodGroup.scheduling.x-k8s.io", "scheduling.x-k8s.io", "v1alpha1", "podgroups", namespaced=True
)
#: NVIDIA KAI-Scheduler (hpctop/backends/kai): Queues v2, PodGroups v2alpha2 (the versions its CRDs serve)
KAI_QUEUES = ResourceSpec("Queue.scheduling.run.ai", "scheduling.run.ai", "v2", "queues", namespaced=False)
KAI_PODGROUPS = ResourceSpec(
    "PodGroup.scheduling.run.ai", "scheduling.run.ai", "v2alpha2", "podgroups", namespaced=True
)
JOBSETS = ResourceSpec("JobSet", "jobset.x-k8s.io", "v1alpha2", "jobsets", namespaced=True)
LEADERWORKERSETS = ResourceSpec(
    "LeaderWorkerSet", "leaderworkerset.x-k8s.io", "v1", "leaderworkersets", namespaced=True
)
PYTORCHJOBS = ResourceSpec("PyTorchJob", "kubeflow.org", "v1", "pytorchjobs", namespaced=True)
TFJOBS = ResourceSpec("TFJob", "kubeflow.org", "v1", "tfjobs", namespaced=True)
MPIJOBS = ResourceSpec("MPIJob", "kubeflow.org", "v1", "mpijobs", namespaced=True)
MPIJOBS_V2 = ResourceSpec("MPIJob", "kubeflow.org", "v2beta1", "mpijobs", namespaced=True)
XGBOOSTJOBS = ResourceSpec("XGBoostJob", "kubeflow.org", "v1", "xgboostjobs", namespaced=True)
PADDLEJOBS = ResourceSpec("PaddleJob", "kubeflow.org", "v1", "paddlejobs", namespaced=True)
JAXJOBS = ResourceSpec("JAXJob", "kubeflow.org", "v1", "jaxjobs", namespaced=True)
TRAINJOBS = ResourceSpec("TrainJob", "trainer.kubeflow.org", "v1alpha1", "trainjobs", namespaced=True)

#: one-version resources hpctop watches when discovery lists them: each kind's versions hpctop
#: understands, in order of preference (mpi-operator's MPIJob v2beta1 over training-operator's v1)
OPTIONAL_RESOURCES: tuple[tuple[ResourceSpec, ...], ...] = (
    (VOLCANO_QUEUES,),
    (VOLCANO_PODGROUPS,),
    (VOLCANO_JOBS,),
    (COSCHEDULING_PODGROUPS,),
    (KAI_QUEUES,),
    (KAI_PODGROUPS,),
    (JOBSETS,),
    (LEADERWORKERSETS,),
    (PYTORCHJOBS,),
    (TFJOBS,),
    (MPIJOBS_V2, MPIJOBS),
    (XGBOOSTJOBS,),
    (PADDLEJOBS,),
    (JAXJOBS,),
    (TRAINJOBS,),
)

# -- written, never watched --------------------------------------------------------------------

#: Volcano's bus Commands (what vcctl creates to abort/resume/restart a vcjob, SCHEDULERS.md §6.4)
VOLCANO_COMMANDS = ResourceSpec(
    "Command.bus.volcano.sh", "bus.volcano.sh", "v1alpha1", "commands", namespaced=True
)
#: YuniKorn's queues.yaml lives in a ConfigMap (core, served everywhere)
CONFIGMAPS = ResourceSpec("ConfigMap", "", "v1", "configmaps", namespaced=True)
#: resources hpctop only writes, requested only where discovery lists them (core ones always)
WRITE_ONLY_RESOURCES: tuple[ResourceSpec, ...] = (VOLCANO_COMMANDS,)
#: the core API's resources, served by every API server: never looked up in discovery
BUILTIN_RESOURCES: tuple[ResourceSpec, ...] = (*DEFAULT_RESOURCES, CONFIGMAPS)


def understood_versions() -> dict[str, tuple[str, ...]]:
    """group → the versions hpctop can read or write there (whose resource lists are worth a request)."""
    out: dict[str, list[str]] = {KUEUE_GROUP: [*KUEUE_VERSIONS, "v1alpha1"]}
    for spec in (*(s for alts in OPTIONAL_RESOURCES for s in alts), *WRITE_ONLY_RESOURCES):
        versions = out.setdefault(spec.group, [])
        if spec.version not in versions:
            versions.append(spec.version)
    return {group: tuple(versions) for group, versions in out.items()}
