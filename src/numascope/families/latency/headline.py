"""The latency family's headline lines: the idle chase on local memory (the largest working
set of the default mode) and the misses in flight where a parallel-chase series found its
knee (chains.knee_of)."""

from __future__ import annotations

from numascope.results.headline import Headline, ok, stat
from numascope.results.record import BenchResult
from numascope.results.run import RunRecord

SECTION = "latency"

# the latency modes as the publications name their chases
CHASE = {"random": "pointer chase, full random",
         "tlb": "pointer chase, random in 256 KiB windows"}


def _how(res: BenchResult) -> dict[str, object]:
    mode = str(res.params.get("mode"))
    return {"kernel": CHASE.get(mode, f"pointer chase, {mode}"), "threads": 1}


def lines(run: RunRecord) -> list[Headline]:
    out = []
    idle = [r for r in run.results if r.family == "latency" and ok(r, "latency")
            and r.params.get("kind") == "idle" and not r.case.startswith("sweep")]
    if idle:
        default = [r for r in idle if r.params.get("mode") == "tlb"] or idle
        big = max(default, key=lambda r: (r.params.get("bytes") or 0))
        out.append(stat(big, "latency", "idle_latency",
                        f"idle memory latency, local ({big.case})", SECTION, how=_how(big)))
    return out + _mlp_lines(run)


def _mlp_lines(run: RunRecord) -> list[Headline]:
    from numascope.families.latency import chains
    out = []
    for rs in chains.series(run.results):
        rs = [r for r in rs if ok(r, "latency")]
        knee = chains.knee_of(rs) if len(rs) > 1 else None
        if knee is None:
            continue
        where = rs[0].params.get("cpu")
        top = next((r for r in rs if r.params.get("chains") == knee.plateau.chains), rs[-1])
        h = Headline("mlp", f"misses in flight (memory-level parallelism), CPU {where}",
                     knee.outstanding, "lines", SECTION,
                     n=len(top.metrics["latency"].values),
                     source=f"{rs[0].case} … {rs[-1].case}",
                     spread="Little's law, best samples")
        h.detail = (f"throughput {'stops rising' if knee.reached else 'still rising'} at "
                    f"{knee.knee} chain{'s' if knee.knee != 1 else ''}")
        out.append(h)
    return out
