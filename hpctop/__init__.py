"""hpctop: a terminal console for GPU and HPC work on Kubernetes.

The package is layered so that data flows one way (ARCHITECTURE.md): ``sources`` produce raw
Kubernetes-shaped events, ``model`` decodes them into a store of slim objects and publishes frozen
snapshots, ``scheduling`` is a pure core over a snapshot, ``actions`` carry requests back to a
cluster, and only ``tui`` knows about Textual.
"""

__version__ = "0.1.0"
