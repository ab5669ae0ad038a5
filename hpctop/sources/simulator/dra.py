"""The simulated cluster's GPUs handed out by Dynamic Resource Allocation (``--demo --gpu-api dra``).

Why: on a DRA cluster a node advertises no ``nvidia.com/gpu``; its GPUs are the devices of its
ResourceSlice, and a pod holds GPUs through a ResourceClaim. The demo plays that cluster so that
the DRA read path (:mod:`hpctop.backends.dra`) does real work in front of the user, as the
device-plugin path does in the default demo. What is emitted follows NVIDIA's DRA driver
(kubernetes-sigs/dra-driver-nvidia-gpu at 95932046683719c43b6a0dd9613c2e5aad5d6703): the
``gpu.nvidia.com`` and ``mig.nvidia.com`` DeviceClasses of its Helm chart, one pool per node named
after the node with devices ``gpu-<index>`` of ``type: gpu``, and claims generated from a
ResourceClaimTemplate per namespace and GPU count, as the resourceclaim controller generates them
(``<pod>-gpus-<suffix>``, owned by the pod, named in ``status.resourceClaimStatuses``). When a pod
is bound the claim is allocated (``status.allocation.devices.results``, the node in its node
selector) and reserved for the pod; when the pod ends it is deallocated; deleted with the pod.

Only whole-GPU requests go through claims: the trace's fractional GPUs (``gpu-milli``) keep their
annotations, as DRA has no fractional count (consumable capacity is another story). The default
demo never builds this: its bytes are unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hpctop.sources.scenario import JobSpec

DRIVER = "gpu.nvidia.com"
API_VERSION = "resource.k8s.io/v1"
SLICE = "ResourceSlice.resource.k8s.io"
CLAIM = "ResourceClaim.resource.k8s.io"
TEMPLATE = "ResourceClaimTemplate.resource.k8s.io"
CLASS = "DeviceClass.resource.k8s.io"
#: the pod's name for its GPU claim
POD_CLAIM = "gpus"
#: the GPU APIs ``--gpu-api`` offers
GPU_APIS = ("device-plugin", "dra")

Emit = Callable[[str, str, dict[str, Any]], None]


def _class(name: str, kind: str) -> dict[str, Any]:
    expression = f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == '{kind}'"
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": expression}}]}
    if kind == "gpu":
        spec["extendedResourceName"] = "nvidia.com/gpu"
    return {"apiVersion": API_VERSION, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def _uuid(node_uid: str, index: int) -> str:
    h = hashlib.sha256(f"{node_uid}/{index}".encode()).hexdigest()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def whole_gpus(spec: JobSpec) -> int:
    """GPUs a member asks for as whole devices (through a claim); 0 for CPU or fractional requests."""
    return spec.gpu_count if spec.gpu_count and spec.gpu_milli >= 1000 else 0


class DraPublisher:
    """The DRA objects of a simulated cluster: DeviceClasses, slices, templates and each pod's claim."""

    def __init__(self, emit: Emit, timestamp: Callable[[float], str]) -> None:
        self._emit = emit
        self._ts = timestamp
        self._templates: set[tuple[str, int]] = set()
        self._claims: dict[tuple[str, str], dict[str, Any]] = {}

    # -- the inventory -------------------------------------------------------------------------

    def initial(self, nodes: list[tuple[str, str, int, str | None, int | None]], created: float) -> None:
        """The DeviceClasses and one ResourceSlice per GPU node (name, uid, GPUs, model, MiB)."""
        self._emit(CLASS, "ADDED", _class("gpu.nvidia.com", "gpu"))
        self._emit(CLASS, "ADDED", _class("mig.nvidia.com", "mig"))
        for name, uid, gpus, model, memory in nodes:
            if gpus <= 0:
                continue
            devices = []
            for i in range(gpus):
                attributes: dict[str, Any] = {
                    "type": {"string": "gpu"},
                    "uuid": {"string": _uuid(uid, i)},
                    "productName": {"string": model or "GPU"},
                    "brand": {"string": "Nvidia"},
                }
                device: dict[str, Any] = {"name": f"gpu-{i}", "attributes": attributes}
                if memory:
                    device["capacity"] = {"memory": {"value": f"{memory}Mi"}}
                devices.append(device)
            self._emit(
                SLICE,
                "ADDED",
                {
                    "apiVersion": API_VERSION,
                    "kind": "ResourceSlice",
                    "metadata": {
                        "name": f"{name}-{DRIVER}-{uid[:5]}",
                        "creationTimestamp": self._ts(created),
                        "ownerReferences": [
                            {"apiVersion": "v1", "kind": "Node", "name": name, "uid": uid, "controller": True}
                        ],
                    },
                    "spec": {
                        "driver": DRIVER,
                        "nodeName": name,
                        "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                        "devices": devices,
                    },
                },
            )

    # -- pods ----------------------------------------------------------------------------------

    @staticmethod
    def template_name(count: int) -> str:
        return f"gpu-{count}"

    def pod_spec(self, body: dict[str, Any], spec: JobSpec) -> dict[str, Any]:
        """A pod spec asking its whole GPUs through a claim from a template, not ``nvidia.com/gpu``."""
        count = whole_gpus(spec)
        if not count:
            return body
        for container in body["containers"]:
            resources = container["resources"]
            resources["requests"].pop("nvidia.com/gpu", None)
            resources["limits"].pop("nvidia.com/gpu", None)
            resources["claims"] = [{"name": POD_CLAIM}]
        body["resourceClaims"] = [{"name": POD_CLAIM, "resourceClaimTemplateName": self.template_name(count)}]
        return body

    @staticmethod
    def claim_name(pod: str, uid: str) -> str:
        return f"{pod}-{POD_CLAIM}-{uid[:5]}"

    def pod_status(self, namespace: str, pod: str, uid: str, status: dict[str, Any]) -> None:
        if (namespace, pod) in self._claims:
            status["resourceClaimStatuses"] = [
                {"name": POD_CLAIM, "resourceClaimName": self.claim_name(pod, uid)}
            ]

    def _requests(self, count: int) -> list[dict[str, Any]]:
        exactly = {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": count}
        return [{"name": "gpu", "exactly": exactly}]

    def created(self, namespace: str, pod: str, uid: str, spec: JobSpec, now: float) -> None:
        """A pending pod asking whole GPUs: its namespace's template (once), then its generated claim."""
        count = whole_gpus(spec)
        if not count:
            return
        if (namespace, count) not in self._templates:
            self._templates.add((namespace, count))
            self._emit(
                TEMPLATE,
                "ADDED",
                {
                    "apiVersion": API_VERSION,
                    "kind": "ResourceClaimTemplate",
                    "metadata": {
                        "name": self.template_name(count),
                        "namespace": namespace,
                        "creationTimestamp": self._ts(now),
                    },
                    "spec": {"spec": {"devices": {"requests": self._requests(count)}}},
                },
            )
        claim = {
            "apiVersion": API_VERSION,
            "kind": "ResourceClaim",
            "metadata": {
                "name": self.claim_name(pod, uid),
                "namespace": namespace,
                "creationTimestamp": self._ts(now),
                "annotations": {"resource.kubernetes.io/pod-claim-name": POD_CLAIM},
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": uid, "controller": True}
                ],
            },
            "spec": {"devices": {"requests": self._requests(count)}},
            "status": {},
        }
        self._claims[(namespace, pod)] = claim
        self._emit(CLAIM, "ADDED", claim)

    def bound(
        self, namespace: str, pod: str, uid: str, node: str, indices: tuple[int, ...], now: float
    ) -> None:
        """The scheduler allocated the claim: the chosen GPUs of ``node``, reserved for the pod."""
        claim = self._claims.get((namespace, pod))
        if claim is None:
            return
        claim["status"] = {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": DRIVER, "pool": node, "device": f"gpu-{i}"}
                        for i in indices
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    ]
                },
                "allocationTimestamp": self._ts(now),
            },
            "reservedFor": [{"resource": "pods", "name": pod, "uid": uid}],
        }
        self._emit(CLAIM, "MODIFIED", claim)

    def released(self, namespace: str, pod: str) -> None:
        """The pod ended: its claim is no longer reserved, and deallocated."""
        claim = self._claims.get((namespace, pod))
        if claim is not None and claim["status"]:
            claim["status"] = {}
            self._emit(CLAIM, "MODIFIED", claim)

    def deleted(self, namespace: str, pod: str) -> None:
        """The pod is gone: so is the claim generated for it (owner reference)."""
        claim = self._claims.pop((namespace, pod), None)
        if claim is not None:
            self._emit(CLAIM, "DELETED", claim)
