"""Benchmarks for the goals P1-P7 of PERFORMANCE.md: ratios measured side by side in one run."""
