"""Benchmarks: one module per family, each with the shape of bench.base.Benchmark."""
