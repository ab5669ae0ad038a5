"""The native gang API of sig-scheduling (KEP-4671: ``scheduling.k8s.io`` Workload and PodGroup).

Upstream: kubernetes/kubernetes (types in kubernetes/api ``scheduling/v1beta1/types.go``, beta in
1.37; ``v1alpha3`` and, before it, ``v1alpha2`` alpha). ``read`` holds the PodGroup gang (its
``schedulingPolicy.gang.minCount``, its ``PodGroupInitiallyScheduled`` condition) and the pods'
link through ``spec.schedulingGroup.podGroupName``; there is no ``act`` (read-only, see read).
"""
