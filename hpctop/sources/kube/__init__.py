"""Live Kubernetes clusters: kubeconfig loading, hpctop's own HTTP transport, and the reflector.

The official ``kubernetes`` package is used for what it is best at (kubeconfig, contexts,
exec/OIDC credentials, in-cluster config); the list/watch loop and the HTTP are hpctop's, so that
raw bytes go straight to the model's decoder and every failure mode of RELIABILITY.md §1 has a
rule. Nothing in this package sends anything but GET.
"""
