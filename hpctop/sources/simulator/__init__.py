"""The embedded cluster (the demo and scenario files): a Kubernetes API in memory on a virtual clock.

See :mod:`hpctop.sources.simulator.cluster` for what it simulates and why, and
:mod:`hpctop.sources.simulator.trace` for the demo built from the Alibaba openb GPU trace.
"""

from hpctop.sources.simulator.cluster import EPOCH, SimulatedCluster, SimulatorError

__all__ = ["EPOCH", "SimulatedCluster", "SimulatorError"]
