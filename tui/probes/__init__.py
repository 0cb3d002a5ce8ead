"""Probes the benchmarks read (enabled by environment variables; idle otherwise)."""
