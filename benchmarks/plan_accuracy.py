"""How close `numascope run`'s plan comes to what each stage then takes, here: runs of one
profile into a fresh store, one after the other, each planned with the calibration the
earlier ones give (docs/plan.md); per run and stage the planned and the measured seconds
and their ratio (and what the steady pools spent of their seconds), then per stage the
ratios of the calibrated runs (target: within 25 %).

    .venv/bin/python benchmarks/plan_accuracy.py [--runs 4] [--profile quick]
        [--stage NAME ...] [--quick]

`--quick`: two smoke runs of the c2c stage (checks that it runs). Timings need a quiet
machine: a neighbour's burst in one run moves that run's stages, not the model."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def run_once(store: Path, profile: str, stages: list[str]) -> dict:
    argv = [sys.executable, "-m", "numascope", "run", f"--{profile}", "--store", str(store),
            "--no-report", "--json", *[x for s in stages for x in ("--stage", s)]]
    p = subprocess.run(argv, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"plan_accuracy: {' '.join(argv[2:])} exited {p.returncode}: "
                         f"{p.stderr.strip()[-300:]}")
    return json.loads(p.stdout)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--profile", default="quick", choices=["quick", "full", "smoke"])
    ap.add_argument("--stage", action="append", default=[])
    ap.add_argument("--quick", action="store_true", help="2 smoke runs of c2c")
    a = ap.parse_args(argv)
    if a.quick:
        a.runs, a.profile, a.stage = 2, "smoke", a.stage or ["c2c"]
    ratios: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="numascope-plan-") as d:
        store = Path(d) / "runs.db"
        for i in range(a.runs):
            doc = run_once(store, a.profile, a.stage)
            print(f"run {i + 1} ({doc['run_id']}):")
            for s in doc["stages"]:
                plan = s.get("plan")
                if not plan or s["status"] != "done":
                    continue
                ratio = s["seconds"] / plan["seconds"] if plan["seconds"] > 0 else float("nan")
                cal = (f"calibrated by {plan['calibrated_by']} run(s), x{plan['factor']:.2f}"
                       if plan["calibrated_by"] else "the nominal model")
                pool = plan.get("modelled_pool", plan.get("modelled_seconds", 0)
                                - plan.get("modelled_fixed", plan.get("modelled_seconds", 0)))
                spent = (f"  pools spent {plan.get('pool_spent', 0):.2f} of {pool:.2f} s"
                         if pool > 0 else "")
                print(f"  {s['name']:12} planned {plan['seconds']:7.2f} s  measured "
                      f"{s['seconds']:7.2f} s  ratio {ratio:5.2f}  ({cal}){spent}")
                if plan["calibrated_by"]:
                    ratios.setdefault(s["name"], []).append(ratio)
    print("\nmeasured / planned, calibrated runs (target 0.75-1.25):")
    for name, r in ratios.items():
        inside = sum(0.75 <= x <= 1.25 for x in r)
        print(f"  {name:12} median {statistics.median(r):.2f}  range {min(r):.2f}-"
              f"{max(r):.2f}  within 25 %: {inside} of {len(r)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
