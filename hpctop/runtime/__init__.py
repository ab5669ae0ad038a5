"""Runtime: wires a source, the store, the scheduling core and an actuator into a running session."""
