"""Dynamic Resource Allocation (``resource.k8s.io/v1``) and NVIDIA's DRA driver: GPUs handed out by claims.

``wire`` decodes ResourceSlice, ResourceClaim, ResourceClaimTemplate, DeviceClass, DeviceTaintRule
and NVIDIA's ComputeDomain into frozen objects; ``read`` declares what is watched and turns them
into the GPU counts of nodes and pods, so that DRA GPUs are counted exactly as device-plugin GPUs
are. Read side only: it imports :mod:`hpctop.model` and nothing above it. DRA objects are not
changed by any hpctop action (Kubernetes does not preempt DRA resources; a claim is freed by
deleting its pod).
"""
