"""The matrix family's headline lines: the farthest remote node's latency, remote over local
latency, and remote over local bandwidth for the nearest remote node of the same socket and
the farthest of another (the labs' "remote triad N % slower"), where measured."""

from __future__ import annotations

from typing import Any

from numascope.results.headline import Headline, known, node_packages, ok, stat
from numascope.results.record import BenchResult
from numascope.results.run import RunRecord

SECTION = "latency"       # the latency family's section holds the matrices


def _matrix(run: RunRecord) -> list[BenchResult]:
    return [r for r in run.results if r.family == "matrix" and ok(r, "latency")]


def lines(run: RunRecord) -> list[Headline]:
    out: list[Headline] = []
    mat = _matrix(run)
    local = {r.params.get("src"): r for r in mat if r.params.get("src") == r.params.get("dst")}
    remote = [r for r in mat if r.params.get("src") != r.params.get("dst")
              and not r.params.get("dst_cpuless") and r.params.get("src") in local]
    if remote:
        far = max(remote, key=lambda r: (r.params.get("distance") or 0,
                                         r.metrics["latency"].median))
        loc = local[far.params["src"]]
        out.append(stat(far, "latency", "remote_latency",
                        f"remote memory latency, farthest node ({far.case}, distance "
                        f"{far.params.get('distance')})", SECTION, how=_how("latency", far)))
        out.append(_ratio("remote_local_latency", "remote/local latency", far, loc, "latency",
                          False))
        out += _bandwidth_ratios(run, remote, local)
    return out


def _ratio(key: str, what: str, far: BenchResult, loc: BenchResult, metric: str,
           higher: bool) -> Headline:
    a, b = far.metrics[metric], loc.metrics[metric]
    return Headline(key, f"{what} ({far.case} over {loc.case})", a.median / b.median, "x",
                    SECTION, n=min(len(a.values), len(b.values)),
                    source=f"{far.case}, {loc.case}", higher_is_better=higher,
                    spread="ratio of medians", how=_how(metric, far))


def _how(metric: str, r: BenchResult) -> dict[str, Any]:
    """The matrix's kernels: one chaser for latency (its mode is not in the pair's record:
    the chase alone, which no published mode equals), the read kernel on every CPU of the
    source node for bandwidth (matrix.bench)."""
    if metric == "latency":
        return {"kernel": "pointer chase", "threads": 1}
    return known({"kernel": "read", "threads": len(r.placement.get("cpus") or []) or None})


def _bandwidth_ratios(run: RunRecord, remote: list[BenchResult],
                      local: dict[Any, BenchResult]) -> list[Headline]:
    """Remote over local bandwidth for the nearest remote node of the same socket and the
    farthest of another, where measured."""
    pkg = node_packages(run)
    out = []
    for same, scope in ((True, "remote node, same socket"),
                        (False, "remote node, other socket")):
        rs = [r for r in remote if ok(r, "bandwidth") and pkg.get(r.params["src"])
              and (pkg.get(r.params["src"]) == pkg.get(r.params["dst"])) == same]
        if not rs:
            continue
        pick = (min if same else max)(rs, key=lambda r: r.params.get("distance") or 0)
        h = _ratio("remote_local_ratio", f"remote/local bandwidth, {scope.split(', ')[1]}",
                   pick, local[pick.params["src"]], "bandwidth", True)
        h.scope = scope
        out.append(h)
    return out
