"""The compress family's headline line: decompress-and-sum of the best codec at its best
thread count, against the plain sum, with the crossover (bench.summarize)."""

from __future__ import annotations

from numascope.results.headline import Headline, known, stat
from numascope.results.run import RunRecord

SECTION = "compress"


def lines(run: RunRecord) -> list[Headline]:
    from numascope.families.compress.bench import summarize
    cz = [r for r in run.results if r.family == "compress" and r.validated]
    sums = summarize(cz)
    best = max((x for x in sums if x.best), default=None,
               key=lambda x: x.best[max(x.best)][2])
    if best is None:
        return []
    t = max(best.best)
    label, gbs, speedup = best.best[t]
    res = next(r for r in cz if r.params.get("dataset") == best.dataset
               and r.params.get("threads") == t and label.startswith(str(r.params.get("codec")))
               and r.metrics["decompress_sum"].median == gbs)
    h = stat(res, "decompress_sum", "compress_sum_peak",
             f"decompress+sum, best codec at {t} threads ({best.dataset}: {label})",
             SECTION, how=known({"threads": res.params.get("threads")}))
    cross = (f"beats plain from {best.crossover} thread{'s' if best.crossover != 1 else ''}"
             if best.crossover else "no crossover")
    others = f"; the best of {len(sums)} data sets" if len(sums) > 1 else ""
    h.detail = f"{speedup:.2f}x the plain sum ({best.plain.get(t):.4g} GB/s); {cross}{others}"
    return [h]
