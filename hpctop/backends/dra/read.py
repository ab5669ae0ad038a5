"""DRA's read side: what hpctop watches of ``resource.k8s.io`` and NVIDIA's ComputeDomain, for the registry.

Why this is thin: DRA is not a scheduler with evidence about a job (no state, queue or placement
hooks); it is an inventory of devices and the record of who holds them, and hpctop uses it to
count GPUs on nodes and pods (:mod:`hpctop.backends.dra.accounting`, which the store calls). The
descriptor tells the registry what to discover and decode: ``resource.k8s.io`` ``v1`` (GA in
1.34) before ``v1beta2`` (1.33, the same shape for what is read), DeviceTaintRule from ``v1``
(1.37) back to ``v1alpha3``, and ``resource.nvidia.com/v1beta1`` ComputeDomains.
"""

from __future__ import annotations

from hpctop.backends.contract import Backend, ResourceSpec
from hpctop.backends.dra.objects import NVIDIA_RESOURCE_GROUP, RESOURCE_GROUP
from hpctop.backends.dra.wire import DRA_DECODERS
from hpctop.model.states import ReasonCode

_G = RESOURCE_GROUP
COMPUTE_DOMAINS = ResourceSpec(
    "ComputeDomain.resource.nvidia.com", NVIDIA_RESOURCE_GROUP, "v1beta1", "computedomains", namespaced=True
)
#: each kind with the versions hpctop understands, preferred first
DRA_RESOURCES: tuple[tuple[ResourceSpec, ...], ...] = (
    *(
        tuple(ResourceSpec(f"{kind}.{_G}", _G, v, plural, namespaced) for v in versions)
        for kind, plural, namespaced, versions in (
            ("ResourceSlice", "resourceslices", False, ("v1", "v1beta2")),
            ("ResourceClaim", "resourceclaims", True, ("v1", "v1beta2")),
            ("ResourceClaimTemplate", "resourceclaimtemplates", True, ("v1", "v1beta2")),
            ("DeviceClass", "deviceclasses", False, ("v1", "v1beta2")),
            ("DeviceTaintRule", "devicetaintrules", False, ("v1", "v1beta2", "v1alpha3")),
        )
    ),
    (COMPUTE_DOMAINS,),
)

BACKEND = Backend(
    name="dra",
    title="Dynamic Resource Allocation (NVIDIA DRA driver)",
    upstream="https://github.com/kubernetes/api (resource/v1); https://github.com/kubernetes-sigs/dra-driver-nvidia-gpu",
    watches=DRA_RESOURCES,
    fixtures=("tests/fixtures/live_truth/90_dra.yaml",),
    # a NotReady ComputeDomain is a gang's Dependency (hpctop.backends.dra.accounting.with_domain)
    reasons=frozenset({ReasonCode.DEPENDENCY}),
    actions=None,
    read_only="Kubernetes does not preempt DRA resources; a claim is freed with its pod (cancel the job)",
    detects={_G: "dra", NVIDIA_RESOURCE_GROUP: "dra"},
    decoders=DRA_DECODERS,
)
