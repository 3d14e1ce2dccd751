"""Benchmark scripts (run them as files: `python benchmarks/latency.py`); `_report` holds their shared output helpers."""
