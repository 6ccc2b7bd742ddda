"""numascope: characterize NUMA and multi-chiplet servers."""

__version__ = "0.1.0"
