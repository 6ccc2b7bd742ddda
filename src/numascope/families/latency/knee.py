"""The knee of a loaded-latency curve (latency against bandwidth), by one stated rule:

    the base is the curve's point of lowest median latency (the nearest to unloaded: load
    only adds latency, so a point above it at lower bandwidth is a disturbance, which
    bench.inversions flags); going up in bandwidth from the base, the knee is where the
    median latency first reaches RISE (20 %) above the base's, interpolated linearly
    between the last point under that line and the first on or above it.

A curve that never rises that far has no knee ("under +20 % up to X GB/s"): the loaders did
not load the memory enough, which is itself the finding. Pure functions on (GB/s, ns)
pairs, so planted curves test them without any measurement."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

RISE = 0.20
RULE = (f"going up in bandwidth from the curve's lowest median latency (the base), where "
        f"the median first reaches +{RISE:.0%} of the base (interpolated between points)")


@dataclass(frozen=True)
class Knee:
    gbs: float                       # bandwidth where latency crosses the line
    line_ns: float                   # base_ns * (1 + rise)
    base: tuple[float, float]        # (GB/s, ns) of the lowest-latency point
    below: tuple[float, float]       # last point under the line
    above: tuple[float, float]       # first point on or above it
    rise: float = RISE

    def text(self) -> str:
        return (f"knee at {self.gbs:.1f} GB/s: latency reaches +{self.rise:.0%} of the base "
                f"{self.base[1]:.1f} ns ({self.line_ns:.1f} ns), between {self.below[0]:.1f} "
                f"GB/s ({self.below[1]:.1f} ns) and {self.above[0]:.1f} GB/s "
                f"({self.above[1]:.1f} ns)")


def find(points: Sequence[tuple[float, float]], rise: float = RISE) -> Knee | None:
    """The knee of a curve given as (bandwidth GB/s, median latency ns) points, any order;
    None with fewer than two points or when no point reaches the line."""
    if not rise > 0:
        raise ValueError(f"the knee's rise must be above 0 (got {rise})")
    pts = sorted(points)
    if len(pts) < 2:
        return None
    first = min(range(len(pts)), key=lambda i: (pts[i][1], pts[i][0]))
    base = pts[first]
    line = base[1] * (1 + rise)
    for (b0, l0), (b1, l1) in pairwise(pts[first:]):
        if l1 >= line:
            gbs = b0 + (line - l0) / (l1 - l0) * (b1 - b0)
            return Knee(gbs, line, base, (b0, l0), (b1, l1), rise)
    return None


def text(points: Sequence[tuple[float, float]], rise: float = RISE) -> str:
    """The knee in words, or why there is none."""
    k = find(points, rise)
    if k is not None:
        return k.text()
    if len(points) < 2:
        return "no knee: one point is not a curve"
    base = min(points, key=lambda p: (p[1], p[0]))
    return (f"no knee: latency stays under +{rise:.0%} of the base {base[1]:.1f} ns "
            f"({base[0]:.1f} GB/s) up to {max(points)[0]:.1f} GB/s")
