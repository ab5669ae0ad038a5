"""Sources of Kubernetes-shaped watch events: the simulator (embedded cluster), live clusters, replays."""
