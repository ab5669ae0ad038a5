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
