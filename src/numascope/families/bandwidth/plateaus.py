"""The plateaus of a bandwidth-by-working-set curve, and how they line up with the caches.
Pure functions on (working set bytes, GB/s) points, so that planted curves test them.

The rule, in three steps:

1. Flat stretches: the curve (log GB/s, points in working-set order) is cut into the
   piecewise-constant segments that minimise the squared deviations plus a penalty per
   segment (optimal partitioning: B. Jackson et al., "An algorithm for optimal
   partitioning of data on an interval", IEEE Signal Processing Letters 12(2), 2005),
   the penalty BIC's for a change in mean, 2 sigma^2 ln n (R. Killick, P. Fearnhead,
   I. A. Eckley, "Optimal detection of changepoints with a linear computational cost",
   JASA 107, 2012, section 2); sigma, the point-to-point noise, is 1.4826 x the median
   absolute difference of neighbouring points / sqrt(2) (steps are few, so the median
   ignores them), at least NOISE_FLOOR. A segment of at least MIN_POINTS points is a
   plateau, shorter ones are the transitions between them; two neighbouring plateaus are
   then joined (with the transition between them) while the same criterion prefers one
   level to two, so that a lone disturbed point does not split a plateau.
2. Names: a plateau is named by the cache level (for the threads measured:
   sweep.capacities) whose edge its end lines up with (step 3): the bandwidth falls where
   the data leaves the cache that held it, so a plateau over the L2 and L3 sizes without a
   step between them is L3's, and L2 has none; a plateau whose end lines up with no edge
   is named by the level holding most of its points. The last plateau is DRAM when some of its points lie beyond
   the last cache by more than EDGE. Per level the plateau with most points (ties: the
   larger working sets) is that level's, the others are steps inside it (noted). A plateau
   before DRAM's that lies beyond the last reported cache is a cache the topology does not
   report (named the next level).
3. Edges: a cache plateau lines up when its last point is at most EDGE x the level's
   capacity and the point after it at least capacity / EDGE (the rule `lat --sweep`
   applies to latency plateaus); DRAM lines up when it starts no lower than LLC / EDGE.

NOISE_FLOOR, 2 %, is the least noise the rule assumes, below what separate calls showed on
the 2-core development VM (Nov 2026, shared with other builds, load ~9; `bw --kernel triad
--threads 1 --size S --reps 10`, six calls each): the median's median absolute deviation
between calls was 2.7 % at S = 256 KiB (L2) and 5.5 % at 64 MiB (DRAM). So it never hides
noise that is there; it matters where the curve shows less than it (quantised or repeated
values, where a flat plateau has zero differences and every rounding step would otherwise
be a level). With it, a step of 3 % between two stretches of 8 points is still told apart
(8 x 0.03^2 / 2 > 2 x 0.02^2 x ln 60)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from numascope.units import format_bytes

MIN_POINTS = 3
NOISE_FLOOR = 0.02        # relative (in log GB/s)
EDGE = 1.5
DRAM = "DRAM"
RULE = ("flat stretches of the log GB/s curve (optimal partitioning with a BIC penalty "
        "2 sigma^2 ln n, sigma from neighbouring points, at least 2 %), "
        f"at least {MIN_POINTS} points; named by the cache level whose size their end lines "
        "up with, else the one holding most of their points; an edge lines up within a "
        f"factor {EDGE} of the cache size")


@dataclass
class Plateau:
    name: str                          # L1, L2, L3, DRAM (L4 … for an unreported cache)
    first: int                         # working set of its first point (bytes)
    last: int                          # working set of its last point
    values: list[float]                # the points' GB/s (their medians)
    expected: int | None               # the level's capacity for these threads; None: DRAM
    verdict: str = ""
    lines_up: bool = True
    spans: list[str] = field(default_factory=list)   # levels some point is clearly inside
    notes: list[str] = field(default_factory=list)
    rule: str = RULE

    @property
    def gbs(self) -> float:
        return statistics.median(self.values)


# -- step 1: flat stretches -----------------------------------------------------------------


def noise(y: Sequence[float]) -> float:
    """Point-to-point noise of a curve (its log values), at least NOISE_FLOOR."""
    d = [abs(b - a) for a, b in pairwise(y)]
    est = 1.4826 * statistics.median(d) / math.sqrt(2) if d else 0.0
    return max(est, NOISE_FLOOR)


def segments(y: Sequence[float], sigma: float) -> list[tuple[int, int]]:
    """[start, end) index ranges of the optimal piecewise-constant fit of `y` with a
    penalty 2 sigma^2 ln n per segment (O(n^2), n is a few dozen points)."""
    n = len(y)
    if n == 0:
        return []
    beta = 2 * sigma * sigma * math.log(max(n, 2))
    s1, s2 = [0.0], [0.0]
    for v in y:
        s1.append(s1[-1] + v)
        s2.append(s2[-1] + v * v)

    def sse(i: int, j: int) -> float:
        m = j - i
        return max(0.0, s2[j] - s2[i] - (s1[j] - s1[i]) ** 2 / m)

    best = [0.0] + [math.inf] * n
    start = [0] * (n + 1)
    for j in range(1, n + 1):
        for i in range(j):
            c = best[i] + sse(i, j) + beta
            if c < best[j] - 1e-15:
                best[j], start[j] = c, i
    out = []
    j = n
    while j > 0:
        out.append((start[j], j))
        j = start[j]
    return out[::-1]


def _sse(y: Sequence[float]) -> float:
    m = statistics.fmean(y)
    return sum((v - m) ** 2 for v in y)


def _merged(segs: list[tuple[int, int]], y: Sequence[float], sigma: float
            ) -> list[tuple[int, int]]:
    """Neighbouring plateaus joined (with the short segments between them) while the same
    criterion prefers one level to two: a lone disturbed point splits no plateau, and two
    levels closer than the noise are one."""
    beta = 2 * sigma * sigma * math.log(max(len(y), 2))
    segs = list(segs)
    while len(segs) > 1:
        gains = []
        for k in range(len(segs) - 1):
            (a, b), (c, d) = segs[k], segs[k + 1]
            two = _sse(y[a:b]) + _sse(y[c:d]) + 2 * beta
            gains.append((two - (_sse(y[a:b] + y[c:d]) + beta), k))
        gain, k = max(gains)
        if gain <= 0:
            break
        segs[k:k + 2] = [(segs[k][0], segs[k + 1][1])]
    return segs


# -- steps 2 and 3: names and edges ---------------------------------------------------------
def _level(ws: float, caps: list[tuple[str, int]]) -> str:
    return next((name for name, cap in caps if ws <= cap), DRAM)


def _clearly_in(ws: int, name: str, caps: list[tuple[str, int]]) -> bool:
    """Whether the working set is inside level `name` by more than EDGE from both of its
    edges (a point near an edge may be on either side's plateau)."""
    lo, hi = 0.0, math.inf
    for n, cap in caps:
        if n == name:
            hi = cap
            break
        lo = max(lo, cap)    # private L2s may hold more in all than a shared L3
    return lo * EDGE <= ws <= hi / EDGE


def _lines_up(last: int, nxt: int | None, cap: int) -> bool:
    return nxt is not None and last <= cap * EDGE and nxt >= cap / EDGE


def _name(pts: Sequence[tuple[int, float]], i: int, j: int, caps: list[tuple[str, int]]
          ) -> str:
    """The level whose edge the plateau's end lines up with, else the level holding most
    of its points (ties: the larger)."""
    nxt = pts[j][0] if j < len(pts) else None
    for name, cap in caps:
        if _lines_up(pts[j - 1][0], nxt, cap):
            return name
    names = [_level(ws, caps) for ws, _ in pts[i:j]]
    return max(reversed(list(dict.fromkeys(names))), key=names.count)


def find(points: Sequence[tuple[int, float]], caps: list[tuple[str, int]]) -> list[Plateau]:
    """The plateaus of a curve given as (working set bytes, GB/s) points, any order, named
    and checked against `caps`, the (level, capacity) pairs of sweep.capacities."""
    pts = sorted(p for p in points if p[1] > 0 and math.isfinite(p[1]))
    if len(pts) < MIN_POINTS:
        return []
    y = [math.log(v) for _, v in pts]
    sigma = noise(y)
    segs = _merged([(i, j) for i, j in segments(y, sigma) if j - i >= MIN_POINTS], y, sigma)
    order = [n for n, _ in caps] + [DRAM]
    cands = []
    for i, j in segs:
        clear = [n for n in order if any(_clearly_in(ws, n, caps) for ws, _ in pts[i:j])]
        cands.append((i, j, _name(pts, i, j, caps), clear))
    llc = max(caps, key=lambda c: c[1]) if caps else None    # the largest, for these threads
    top = int(caps[-1][0][1:]) if caps else 0                 # the last level reported
    out: list[Plateau] = []
    # DRAM: the last plateau, when it reaches clearly past the last cache (a plateau
    # starting inside the LLC and going on past it: the effective LLC is smaller)
    dram = cands.pop() if cands and DRAM in cands[-1][3] else None
    for i, j, name, spans in cands:
        if name == DRAM:     # beyond the last reported cache yet above DRAM: a hidden cache
            top += 1
            name = f"L{top}"
        out.append(_plateau(pts, i, j, name, spans, dict(caps).get(name)))
    out = _one_per_level(out)
    if dram is not None:
        i, j, _, spans = dram
        out.append(_plateau(pts, i, j, DRAM, spans, None))
    for k, pl in enumerate(out):
        nxt = next((ws for ws, _ in pts if ws > pl.last), None)
        _judge(pl, nxt, llc, out[k + 1:])
    return out


def _plateau(pts, i: int, j: int, name: str, spans: list[str], expected: int | None
             ) -> Plateau:
    return Plateau(name, pts[i][0], pts[j - 1][0], [v for _, v in pts[i:j]], expected,
                   spans=spans)


def _one_per_level(cands: list[Plateau]) -> list[Plateau]:
    """Per level name the plateau with most points (ties: the later one); the others
    become notes on it."""
    keep: dict[str, Plateau] = {}
    for pl in cands:
        had = keep.get(pl.name)
        if had is None or len(pl.values) >= len(had.values):
            keep[pl.name] = pl
    for pl in cands:
        chosen = keep[pl.name]
        if pl is not chosen:
            chosen.notes.append(
                f"a second flat stretch inside {pl.name}'s range: {format_bytes(pl.first)} to "
                f"{format_bytes(pl.last)} at {pl.gbs:.1f} GB/s ({len(pl.values)} points), "
                f"against {chosen.gbs:.1f} GB/s on the {pl.name} plateau")
    return sorted(keep.values(), key=lambda p: p.first)


def _judge(pl: Plateau, nxt: int | None, llc: tuple[str, int] | None,
           later: list[Plateau]) -> None:
    span = ""
    if len(pl.spans) > 1:
        span = (f"; it spans the {', '.join(pl.spans)} sizes: no step between them that the "
                "noise lets through")
    if pl.name == DRAM:
        if llc and pl.first < llc[1] / EDGE:
            pl.lines_up = False
            pl.verdict = (f"DRAM bandwidth from {format_bytes(pl.first)} on, below the "
                          f"{format_bytes(llc[1])} {llc[0]}: the effective last-level cache "
                          "is smaller (shared with other work, or a VM's view?)")
        else:
            pl.verdict = "beyond the last cache level" + (
                f" ({llc[0]}, {format_bytes(llc[1])})" if llc else " (no cache reported)")
        return
    cap = pl.expected
    if cap is None:
        pl.lines_up = False
        below = f" and above DRAM's {later[-1].gbs:.1f} GB/s" if later and \
            later[-1].name == DRAM else ""
        pl.verdict = (f"beyond the last reported cache"
                      f"{f' ({llc[0]}, {format_bytes(llc[1])})' if llc else ''}{below}: "
                      "a level the topology does not report (a cache it does not list; "
                      "on a VM, possibly the host's)")
        return
    edge = f"{format_bytes(pl.last)} and {format_bytes(nxt)}" if nxt else ""
    if nxt is None:
        pl.verdict = f"no larger working set measured to find the {pl.name} edge" + span
    elif _lines_up(pl.last, nxt, cap):
        pl.verdict = (f"edge between {edge}, consistent with {pl.name} = "
                      f"{format_bytes(cap)}") + span
    elif nxt < cap / EDGE:
        pl.lines_up = False
        pl.verdict = (f"bandwidth falls between {edge}, before the {format_bytes(cap)} "
                      f"{pl.name} is full (shared with other work, or a smaller effective "
                      "cache?)") + span
    else:
        pl.lines_up = False
        pl.verdict = (f"plateau lasts to {format_bytes(pl.last)}, beyond the "
                      f"{format_bytes(cap)} {pl.name}") + span


def levels_without_plateau(found: list[Plateau], points: Sequence[tuple[int, float]],
                           caps: list[tuple[str, int]]) -> list[str]:
    """Each reported cache level (and DRAM) the curve reached but found no plateau for, in
    words: why there is none."""
    named = {p.name for p in found}
    sizes = sorted(ws for ws, _ in points)
    out = []
    lo = 0
    for name, cap in [*caps, (DRAM, math.inf)]:
        inside = [ws for ws in sizes if lo < ws <= cap]
        lo = max(lo, cap)
        if name in named or not inside:
            continue
        holder = next((p for p in found if name in p.spans), None)
        what = f"{name}" + (f" ({format_bytes(cap)})" if cap != math.inf else "")
        if holder is not None:
            out.append(f"{what}: no plateau of its own; its working sets lie on the "
                       f"{holder.name} plateau ({holder.gbs:.1f} GB/s): no step at its edge")
        else:
            out.append(f"{what}: no plateau ({len(inside)} point"
                       f"{'s' if len(inside) != 1 else ''} from {format_bytes(inside[0])} to "
                       f"{format_bytes(inside[-1])}, no {MIN_POINTS} of them flat together)")
    return out
