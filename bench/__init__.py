"""Benchmark of the external agent API over real HTTP (not a test; see README.md)."""
