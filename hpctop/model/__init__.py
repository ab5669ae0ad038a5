"""The in-memory model: quantities, slim objects decoded from Kubernetes JSON, the store and snapshots."""
