"""The scheduling core: pure functions of a snapshot and a policy (no I/O, no Textual)."""
