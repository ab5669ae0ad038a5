"""Settings (placeholder until the CLI/config work lands)."""
