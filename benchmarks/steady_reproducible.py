"""Is "steady" reproducible? `--reps auto` / `--samples auto` checked the hard way: N separate
invocations of the same command, and for every invocation that says converged, how often
each other invocation's figure falls inside its reported 95 % interval.

An honest interval over independent units catches another run's estimate in about 83 to
91 % of pairs (numascope.steady's doc); the target is 75 %, or runs that say "not
converged". An interval over repetitions inside one allocation (numascope before issue 30)
caught 30 % (lat) and 12 % (bw) of pairs on a 2-vCPU guest.

    .venv/bin/python benchmarks/steady_reproducible.py            # 8 x lat 1G, 8 x bw triad
    .venv/bin/python benchmarks/steady_reproducible.py --runs 4 --which lat
    .venv/bin/python benchmarks/steady_reproducible.py --python /other/.venv/bin/python
    .venv/bin/python benchmarks/steady_reproducible.py --simulate    # the rule, planted data
    .venv/bin/python benchmarks/steady_reproducible.py --quick       # small sizes, 3 runs

A pair (i, j), i converged, j any other run, is inside when j's figure lies in i's interval.
j's figure is its reported median (what tables and `compare` show); the line "estimates"
uses j's interval centre (params.steady.estimate, the mean of its units' medians) instead.
Older records without an estimate use their median for both."""

from __future__ import annotations

import argparse
import json
import random
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass

COMMANDS = {
    "lat": ["numascope", "lat", "--size", "1G", "--samples", "auto"],
    "bw": ["numascope", "bw", "--kernel", "triad", "--reps", "auto"],
}
QUICK = {
    "lat": ["numascope", "lat", "--size", "16M", "--loads", "8192", "--samples", "auto"],
    "bw": ["numascope", "bw", "--kernel", "triad", "--size", "8M", "--threads", "1",
           "--reps", "auto"],
}
TARGET = 0.75


@dataclass
class Run:
    converged: bool
    median: float           # the reported figure (the metric's median)
    estimate: float         # the interval's centre (older records: the median)
    low: float
    high: float
    units: int | None       # None: a record from before units
    per_unit: list[int]
    seconds: float


def invoke(python: str, cmd: list[str]) -> Run:
    """One separate invocation (its own process, allocations and placement)."""
    t0 = time.monotonic()
    p = subprocess.run([python, "-m", "numascope", *cmd[1:], "--json"], capture_output=True,
                       text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"{shlex.join(cmd)} exited {p.returncode}: {p.stderr.strip()[-300:]}")
    r = json.loads(p.stdout)["results"][0]
    s = r["params"]["steady"]
    median = r["metrics"][s["metric"]]["median"]
    lo, hi = s["interval"]
    return Run(bool(s["converged"]), median, s.get("estimate", median),
               float("nan") if lo is None else lo, float("nan") if hi is None else hi,
               s.get("units"), s.get("values_per_unit", []), time.monotonic() - t0)


def coverage(runs: list[Run], figure: str, every: bool = False) -> tuple[int, int]:
    """(pairs inside, pairs) over converged runs i (every run: `every`) and every other
    run j."""
    inside = pairs = 0
    for i, a in enumerate(runs):
        if not (a.converged or every):
            continue
        for j, b in enumerate(runs):
            if i != j:
                pairs += 1
                inside += a.low <= getattr(b, figure) <= a.high
    return inside, pairs


def pct(inside: int, pairs: int) -> str:
    return f"{inside} of {pairs} ({inside / pairs:.0%})" if pairs else "no pairs"


def check(python: str, cmd: list[str], n: int) -> bool:
    print(f"$ {shlex.join(cmd)}   ({n} separate invocations)")
    runs = []
    for k in range(n):
        r = invoke(python, cmd)
        runs.append(r)
        units = "" if r.units is None else f" units {r.units} x {r.per_unit}"
        print(f"  run {k + 1}: median {r.median:.4g}  interval [{r.low:.4g}, {r.high:.4g}]  "
              f"{'converged' if r.converged else 'not converged'}{units}  "
              f"({r.seconds:.1f} s)", flush=True)
    conv = sum(r.converged for r in runs)
    inside, pairs = coverage(runs, "median")
    ei, ep = coverage(runs, "estimate")
    ok = not pairs or inside / pairs >= TARGET
    print(f"  {conv} of {n} converged; other runs' medians inside a converged run's "
          f"interval: {pct(inside, pairs)}; estimates: {pct(ei, ep)} -> "
          f"{'ok' if ok else 'NOT reproducible'} (target >= {TARGET:.0%} of pairs, or not "
          "converged)")
    ai, ap = coverage(runs, "median", every=True)
    print(f"  (every run's interval, converged or not: other runs' medians inside "
          f"{pct(ai, ap)})")
    return ok


# -- the rule on planted allocations ------------------------------------------------------

class Allocations:
    """Planted units: each allocation off by a random share (normal with sd `off`, or
    `off` for 30 % of allocations: huge pages granted or not), 0.1 % noise inside one, and
    a fake clock (0.1 s a repetition)."""

    def __init__(self, rng: random.Random, off: float, kind: str) -> None:
        self.rng, self.off, self.kind = rng, off, kind
        self.units: list[list[float]] = []
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def __call__(self, n: int) -> list[list[float]]:
        g = self.rng
        shift = g.gauss(0, self.off) if self.kind == "normal" else \
            (self.off if g.random() < 0.3 else 0.0)
        self.units.append([100 * (1 + shift + g.gauss(0, 0.001)) for _ in range(n)])
        self.now += 0.1 * n
        return self.units


def simulate(runs: int = 300, seed: int = 1) -> None:
    """numascope.steady.repeat on planted allocations (Allocations): the pair coverage of
    converged runs per number of first units."""
    from numascope.steady import Steady, repeat
    cases = [("normal, sd 2 %", 0.02, "normal", 0.01),
             ("30 % of allocations +5 %", 0.05, "minority", 0.05),
             ("30 % of allocations +2 %", 0.02, "minority", 0.05)]
    print(f"simulated: {runs} runs a case, 0.1 % noise inside an allocation")
    for units in (3, 4, 6):
        for name, off, kind, precision in cases:
            rng = random.Random(seed)
            got = []
            for _ in range(runs):
                fake = Allocations(rng, off, kind)
                rule = Steady(precision=precision, min_units=units, min_reps=2 * units,
                              max_reps=60)
                v = repeat(fake, rule, fake.clock)
                got.append(Run(v.converged, v.median, v.estimate, v.low, v.high, v.units,
                               v.values_per_unit, v.seconds))
            inside, pairs = coverage(got, "estimate")
            print(f"  {units} first units, {name}, precision {precision:.0%}: "
                  f"{sum(r.converged for r in got)} of {runs} converged, estimates inside "
                  f"{pct(inside, pairs)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=8, help="separate invocations per command")
    ap.add_argument("--which", default="lat,bw", help="commands: lat, bw or both")
    ap.add_argument("--python", default=sys.executable,
                    help="the Python whose numascope runs (compare two checkouts)")
    ap.add_argument("--quick", action="store_true", help="small sizes, 3 runs")
    ap.add_argument("--simulate", action="store_true", help="the rule on planted data")
    a = ap.parse_args(argv)
    if a.simulate:
        simulate(60 if a.quick else 300)
        return 0
    which = [w.strip() for w in a.which.split(",") if w.strip()]
    bad = [w for w in which if w not in COMMANDS]
    if bad or a.runs < 2:
        print(f"steady_reproducible: --which takes lat, bw; --runs at least 2 (got "
              f"{a.which!r}, {a.runs})", file=sys.stderr)
        return 2
    table = QUICK if a.quick else COMMANDS
    n = 3 if a.quick else a.runs
    print("timings move with other processes: on a busy machine few runs converge")
    ok = [check(a.python, table[w], n) for w in which]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
