"""Memory-level parallelism from `lat --chains` timings: the knee and Little's law.

N independent chains walked in lockstep take `ns` per step (one load on every chain), so
the core sustains N / ns loads per ns, 64 B each. Throughput rises with N while the core has
miss buffers to spare, then flattens. The rule (stated in docs/lat.md):

    knee      the count before the first count whose throughput is less than GAIN (10 %)
              above the previous count's (throughput has stopped rising there); when no
              count falls short, the knee is not reached: "at least" the last count.
    plateau   the highest throughput measured (loads per ns).
    in flight Little's law, outstanding = throughput x latency: the plateau throughput times
              the latency of one chain alone (the unloaded latency each miss would take),
              i.e. how many misses the core keeps outstanding to sustain the plateau.

Pure arithmetic on (chains, ns per step) points, so it is tested on planted timings."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

GAIN = 0.10          # a count adding less than 10 % throughput over the previous: flat
LINE = 64            # bytes a load brings in: one cache line


@dataclass(frozen=True)
class Point:
    chains: int
    ns: float        # median ns per lockstep step: the latency each chain sees

    @property
    def loads_per_ns(self) -> float:
        return self.chains / self.ns

    @property
    def gbs(self) -> float:
        """10^9 B/s at 64 B per load."""
        return self.loads_per_ns * LINE


@dataclass(frozen=True)
class Knee:
    knee: int                    # chains where throughput stops rising (or the last count)
    reached: bool                # False: still rising at the last count
    base: Point                  # the latency of Little's law (1 chain, or the fewest)
    plateau: Point               # the highest throughput
    gains: tuple[tuple[int, float], ...]   # (count, gain over the previous count)
    gain_rule: float = GAIN

    @property
    def outstanding(self) -> float:
        """Little's law: plateau loads per ns x the base latency (ns)."""
        return self.plateau.loads_per_ns * self.base.ns

    def headline(self) -> str:
        sign = "≈" if self.reached else "≥"
        return f"misses in flight per core {sign} {self.outstanding:.1f}"

    def arithmetic(self) -> str:
        p, b = self.plateau, self.base
        who = "1 chain" if b.chains == 1 else f"{b.chains} chains (no 1-chain figure)"
        return (f"Little's law: outstanding = throughput x latency = {p.loads_per_ns:.4f} "
                f"loads/ns ({p.gbs:.2f} GB/s at {LINE} B, {p.chains} chains) x "
                f"{b.ns:.1f} ns (latency of {who}) = {self.outstanding:.1f}")

    def rule(self) -> str:
        pct = f"{self.gain_rule:.0%}"
        if not self.reached:
            last = self.gains[-1] if self.gains else (self.knee, 0.0)
            return (f"no knee: throughput still rising at {self.knee} chains (+{last[1]:.0%} "
                    f"over the count before, the rule needs under {pct}): more chains needed")
        nxt = next((c, g) for c, g in self.gains if g < self.gain_rule)
        return (f"knee at {self.knee} chains: {nxt[0]} chains add {nxt[1]:+.0%} throughput, "
                f"under the {pct} rule")

    def to_dict(self) -> dict:
        return {"knee_chains": self.knee, "reached": self.reached,
                "outstanding": self.outstanding, "gain_rule": self.gain_rule,
                "base_chains": self.base.chains, "base_ns": self.base.ns,
                "plateau_chains": self.plateau.chains,
                "plateau_loads_per_ns": self.plateau.loads_per_ns,
                "plateau_gbs": self.plateau.gbs,
                "gains": [[c, g] for c, g in self.gains],
                "text": f"{self.headline()}; {self.rule()}; {self.arithmetic()}"}


def knee(points: list[Point], gain: float = GAIN) -> Knee | None:
    """The knee of throughput over chain counts (None with fewer than two counts)."""
    pts = sorted(points, key=lambda p: p.chains)
    if len(pts) < 2 or len({p.chains for p in pts}) != len(pts):
        return None
    gains = tuple((b.chains, b.loads_per_ns / a.loads_per_ns - 1) for a, b in pairwise(pts))
    at = next((i for i, (_, g) in enumerate(gains) if g < gain), None)
    plateau = max(pts, key=lambda p: p.loads_per_ns)
    return Knee(knee=pts[at].chains if at is not None else pts[-1].chains,
                reached=at is not None, base=pts[0], plateau=plateau, gains=gains,
                gain_rule=gain)
