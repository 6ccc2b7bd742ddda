"""The latency family: its measurement (bench), its command, its figures."""
