"""What a case costs, in the words every family's cost module uses (families/<name>/cost.py)
and numascope.plan adds up: an Estimate (seconds by what they are spent on) and the nominal
rates the families charge at. Below the families: plain arithmetic, no family imported."""

from __future__ import annotations

from dataclasses import dataclass

# Nominal rates (per thread unless said): what the model charges; calibration by this
# host's earlier runs turns them into this machine's. Rounded, of a 2020s server core.
TOUCH_GBS = 2.0          # first touch: page faults and zeroing, 10^9 B/s a thread
STREAM_GBS = 8.0         # DRAM-resident repetitions, a thread
CACHE_GBS = 60.0         # cache-resident repetitions, a thread
SOCKET_GBS = 200.0       # what a socket's memory gives all its threads together
LOAD_NS = 110.0          # a dependent load that misses to DRAM
WRITE_NS = 15.0          # a pointer written into a shuffled chase (a store that misses)
TRIP_NS = 250.0          # a cache-line round trip between two cores
FLOP_PER_NS = 16.0       # FP64 a core sustains in DGEMM (a GFLOP/s of 16)
COMPRESS_GBS = 1.0       # Blosc compression, a thread
DECOMPRESS_GBS = 3.0     # decompress + sum, a thread
LAUNCH_S = 1.5           # starting an mpirun job (or fio) and its ranks
CASE_S = 0.03            # a case's own: the Python side, a thread team, validation
FALLBACK_S = 5.0         # a case of a family without a cost module


@dataclass(frozen=True)
class Estimate:
    """Seconds a case will take, by what they are spent on."""

    parts: tuple[tuple[str, float], ...] = ()

    @property
    def seconds(self) -> float:
        return sum(s for _, s in self.parts)

    @classmethod
    def of(cls, **parts: float) -> Estimate:
        """Parts named by keyword (underscores read as spaces), zero ones left out."""
        return cls(tuple((k.replace("_", " "), float(v)) for k, v in parts.items() if v > 0))

    def scaled(self, factor: float) -> Estimate:
        return Estimate(tuple((k, s * factor) for k, s in self.parts))

    def to_dict(self) -> dict[str, float]:
        return {k: round(s, 3) for k, s in self.parts}


POOL = "steady pool"      # the part a budget shortens: a steady case's extra units
