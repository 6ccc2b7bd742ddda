"""The advice rules over stored runs (RULES, in order; the package's docstring says what
counts as evidence): each reads measured results or recorded host facts and gives advice
only with its evidence."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from numascope.advice.kinds import (
    ALPHA,
    BIMODAL,
    L3_SATURATION,
    MIN_REPS,
    PAIRED,
    PRACTICAL,
    QUIET,
    WITHIN,
    Advice,
    rounded,
)
from numascope.analysis.stats import holm, one_sample, welch
from numascope.families.bandwidth.outliers import bimodal_cases, bimodal_warning
from numascope.profile import readable
from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord, noise_warnings


def _ev(rec: RunRecord, res: BenchResult, metric: str) -> dict[str, Any]:
    m = res.metrics[metric]
    return {"run_id": rec.run_id, "case": res.case, "family": res.family, "metric": metric,
            "median": rounded(m.median), "unit": m.unit, "n": len(m.values)}


def _logs(m: Metric) -> list[float]:
    return [math.log(v) for v in m.values if v > 0 and math.isfinite(v)]


def log_ratio_test(a: Metric, b: Metric) -> tuple[float, float, float, float] | None:
    """(ratio of geometric means b/a, two-sided p, 95 % interval of the ratio) by Welch's
    test on the logs of the repetitions; None with fewer than MIN_REPS positive values a
    side or without spread (constants are not tested)."""
    la, lb = _logs(a), _logs(b)
    if len(la) < MIN_REPS or len(lb) < MIN_REPS:
        return None
    w = welch(la, lb)
    if not w.tested:
        return None
    lo, hi = w.interval(0.95)
    return math.exp(w.diff), w.p, math.exp(lo), math.exp(hi)


def paired_log_test(ratios: list[float]) -> tuple[float, float] | None:
    """(geometric mean of paired ratios, two-sided p that it is 1) by a one-sample t-test
    on their logs; None with fewer than MIN_REPS or without spread."""
    ls = [math.log(x) for x in ratios if x > 0 and math.isfinite(x)]
    if len(ls) < MIN_REPS:
        return None
    t = one_sample(ls)
    return (math.exp(t.diff), t.p) if t.tested else None


def _valid(rec: RunRecord, family: str) -> list[BenchResult]:
    """The run's validated results of `family`; none from a smoke run (its numbers measure
    caches: no rule may read an effect into them)."""
    if not readable(rec.profile):
        return []
    return [r for r in rec.results if r.family == family and r.validated]


# -- rules ----------------------------------------------------------------------------------

DISTORTING = {"governor", "numa_balancing", "busy", "thp", "cgroup_cpus", "vm", "cmdline",
              "memory_balance"}


def _noisy(rec: RunRecord) -> list[str]:
    """The noise check's warnings for this run: as recorded, or for a record without them,
    from its noise figures."""
    w = rec.noise.get("warnings")
    return [str(x) for x in w] if isinstance(w, list) else noise_warnings(rec.noise)


def disturbed(rec: RunRecord) -> list[str]:
    """What marks this run disturbed (empty: quiet): the noise check's warnings, and each
    bandwidth case whose repetitions fell in two modes (params["bimodal"]: the rule for
    implausibly fast repetitions would have cut a mode, so it cut nothing; bw_outliers)."""
    return _noisy(rec) + [bimodal_warning(b) for b in bimodal_cases(rec.results)]


def _pct_of(x: Any) -> float | None:
    return rounded(100 * x, 3) if isinstance(x, (int, float)) else None


def rerun_quietly(rec: RunRecord) -> Advice:
    """The one item of a disturbed run: what the noise check saw, and what to fix."""
    n = rec.noise
    figs = {"busy_percent": _pct_of(n.get("other_busy_fraction")),
            "steal_percent": _pct_of(n.get("steal_fraction")),
            "clock_drop_percent": _pct_of(n.get("clock_drop_fraction")),
            "loadavg_start": n.get("loadavg_start"), "loadavg_end": n.get("loadavg_end")}
    said = [f"{k.replace('_percent', '').replace('_', ' ')} {v:g} %"
            for k, v in figs.items() if k.endswith("_percent") and v is not None]
    found = _recorded_conditions(rec)
    fixes = [f["fix"] for f in found if f["fix"] and f["check"] != "busy"]
    noisy, split = _noisy(rec), bimodal_cases(rec.results)
    ev = [{"run_id": rec.run_id, "check": "noise", "value": w} for w in noisy]
    ev += [{"run_id": rec.run_id, "check": "bimodal", "case": b["case"],
            "variant": b.get("variant"), "value": bimodal_warning(b),
            "modes": b.get("modes")} for b in split]
    said_noise = (
        f"the noise check marked it disturbed: {'; '.join(noisy)} "
        f"({', '.join(said) or 'no figures recorded'}"
        + (f"; load {n['loadavg_start']:g} -> {n['loadavg_end']:g}"
           if isinstance(n.get("loadavg_start"), (int, float))
           and isinstance(n.get("loadavg_end"), (int, float)) else "")
        + ")") if noisy else ""
    said_split = (f"the repetitions of {len(split)} bandwidth case"
                  f"{'s' if len(split) != 1 else ''} fell in two modes: "
                  + "; ".join(bimodal_warning(b) for b in split)) if split else ""
    figs = {k: v for k, v in figs.items() if v is not None}
    if split:
        figs["bimodal_cases"] = len(split)
    return Advice(
        "disturbed", f"run {rec.run_id}: re-run on a quiet machine",
        "; ".join(x for x in (said_noise, said_split) if x)
        + ". No rule reads its numbers: any difference in them may be the disturbance's."
        + (" Recorded when it started: " + ", ".join(f"{f['check']} ({f['value']})"
                                                     for f in found) + "." if found else ""),
        ev + found, figs, "; ".join(dict.fromkeys(fixes)), [rec.run_id],
        QUIET if noisy else BIMODAL,
        " and ".join(x for x in ("the run's noise check" if noisy else "",
                                 "its bandwidth repetitions (two modes)" if split else "")
                     if x))


def _recorded_conditions(rec: RunRecord) -> list[dict[str, Any]]:
    """The readiness checks that warned when the run started (host["readiness"]; for older
    records the governor and NUMA-balancing host facts)."""
    found: list[dict[str, Any]] = []
    checks = rec.host.get("readiness")
    if isinstance(checks, list):
        for c in checks:
            if isinstance(c, dict) and c.get("status") == "warn" \
                    and c.get("id") in DISTORTING:
                found.append({"run_id": rec.run_id, "check": c["id"],
                              "value": c.get("value", ""), "effect": c.get("effect", ""),
                              "fix": c.get("fix", "")})
    else:
        gov = rec.host.get("governor")
        if gov and set(str(gov).split(",")) != {"performance"}:
            found.append({"run_id": rec.run_id, "check": "governor", "value": gov,
                          "effect": "the clock followed the load",
                          "fix": "cpupower frequency-set -g performance"})
        if rec.host.get("numa_balancing") is True:
            found.append({"run_id": rec.run_id, "check": "numa_balancing", "value": "on",
                          "effect": "pages migrated during the measurement",
                          "fix": "echo 0 > /proc/sys/kernel/numa_balancing"})
    return found


def rule_readiness(runs: list[RunRecord]) -> list[Advice]:
    """Per run: the readiness checks that warned when it started."""
    out = []
    for rec in runs:
        found = _recorded_conditions(rec)
        if not found:
            continue
        names = ", ".join(f"{f['check']} ({f['value']})" for f in found)
        # a process id from then means nothing now: no kill line for an old busy check
        fixes = [f["fix"] for f in found if f["fix"] and f["check"] != "busy"]
        out.append(Advice(
            "readiness", f"run {rec.run_id}: {len(found)} condition"
            f"{'s' if len(found) != 1 else ''} distorted its numbers",
            f"recorded when it ran: {names}. Treat its figures with care and measure again "
            "after fixing them.", found, {"conditions": len(found)},
            "; ".join(dict.fromkeys(fixes)), [rec.run_id]))
    return out


def _policies(res: BenchResult) -> set[str]:
    return set(res.params.get("policies") or []) | {res.params.get("policy") or ""}


def rule_l3_saturation(runs: list[RunRecord]) -> list[Advice]:
    """Bandwidth thread scaling within one quiet run: the one-thread-per-L3 point (policy
    per-l3, as many threads as L3 domains) against the largest thread count measured of the
    same kernel; fires when the machine has more cores than L3s and the 95 % interval of
    per-L3 / all-core lies above L3_SATURATION."""
    out = []
    for rec in runs:
        l3s = rec.host.get("l3s")
        if not isinstance(l3s, int) or l3s < 1:
            continue
        scaling = [r for r in _valid(rec, "bandwidth") if r.params.get("sweep") == "scaling"
                   and "bandwidth" in r.metrics]
        for kernel in sorted({r.params.get("kernel") for r in scaling if r.params.get("kernel")}):
            of = [r for r in scaling if r.params.get("kernel") == kernel]
            per = [r for r in of if "per-l3" in _policies(r) and r.params.get("threads") == l3s]
            if not per:
                continue
            top = max(of, key=lambda r: (r.params.get("threads") or 0,
                                         r.metrics["bandwidth"].median))
            nt = top.params.get("threads") or 0
            if nt <= l3s:
                continue            # no more cores than L3s measured: nothing to compare
            p, a = per[0].metrics["bandwidth"], top.metrics["bandwidth"]
            t = log_ratio_test(a, p)
            if t is None or not a.median > 0:
                continue
            _ratio, pv, lo, hi = t
            if lo < L3_SATURATION.value:
                continue        # not shown to reach it (too low, or too noisy to say)
            share = p.median / a.median
            if lo > 1 + PRACTICAL.value and pv < ALPHA:
                title = (f"one thread per L3 gives {share - 1:.0%} more {kernel} bandwidth "
                         f"than {nt} threads: more threads only contend")
            else:
                title = (f"one thread per L3 already reaches all-core {kernel} bandwidth "
                         f"(within {PRACTICAL.value:.0%})")
            out.append(Advice(
                "l3_saturation", title,
                f"{WITHIN}. {kernel}: {l3s} thread{'s' if l3s != 1 else ''}, one per L3, "
                f"{p.median:.4g} {p.unit} against {a.median:.4g} {a.unit} with {nt} threads "
                f"(run {rec.run_id}; ratio 95 % interval {lo:.2f}-{hi:.2f}, above "
                f"{L3_SATURATION.value:.2f}). For bandwidth-bound codes, one rank or thread "
                "per L3 gets the bandwidth and leaves the other cores free (OpenMP: one "
                "thread per L3 cache; MPI: one rank per L3).",
                [_ev(rec, per[0], "bandwidth"), _ev(rec, top, "bandwidth")],
                {"percent": rounded(100 * share, 3), "l3_threads": l3s, "all_threads": nt,
                 "ratio_low": rounded(lo, 3), "ratio_high": rounded(hi, 3),
                 "p_value": rounded(pv, 3)},
                f"OMP_NUM_THREADS={l3s} OMP_PLACES=ll_caches OMP_PROC_BIND=spread APP; "
                "mpirun --map-by ppr:1:l3cache --bind-to core APP",
                [rec.run_id], L3_SATURATION, WITHIN))
    return out


def rule_remote_memory(runs: list[RunRecord]) -> list[Advice]:
    """Matrix results within one quiet run: every remote pair (source node's CPUs, memory
    on another node with CPUs) against the source's local pair, latency and bandwidth, Welch
    on logs, Holm over all pairs of the run; fires when some pair is significantly and at
    least PRACTICAL worse (remote same-socket triad about 30 % and other-socket about 65 %
    slower on Naples: Dell HPC and AI Innovation Lab, September 2018; numascope.sources)."""
    out = []
    for rec in runs:
        res = _valid(rec, "matrix")
        local = {r.params.get("src"): r for r in res if r.params.get("src") == r.params.get("dst")}
        tests = []      # (metric, remote result, local result, ratio, p)
        for r in res:
            src, dst = r.params.get("src"), r.params.get("dst")
            if src == dst or src not in local or r.params.get("dst_cpuless"):
                continue
            for metric in ("latency", "bandwidth"):
                if metric in r.metrics and metric in local[src].metrics:
                    t = log_ratio_test(local[src].metrics[metric], r.metrics[metric])
                    if t:
                        tests.append((metric, r, local[src], t[0], t[1]))
        if not tests:
            continue
        adj = holm([t[4] for t in tests])
        worse = {}
        for (metric, r, loc, ratio, _p), q in zip(tests, adj):
            penalty = ratio - 1 if metric == "latency" else 1 - ratio
            if q < ALPHA and penalty >= PRACTICAL.value and \
                    (metric not in worse or penalty > worse[metric][0]):
                worse[metric] = (penalty, r, loc, q)
        if not worse:
            continue
        parts, ev, figs = [], [], {}
        for metric in ("bandwidth", "latency"):
            if metric not in worse:
                continue
            pen, r, loc, q = worse[metric]
            word = "lower" if metric == "bandwidth" else "higher"
            parts.append(f"{metric} {pen:.0%} {word} ({r.case} against {loc.case}, "
                         f"Holm-adjusted p = {q:.2g})")
            ev += [_ev(rec, loc, metric), _ev(rec, r, metric)]
            figs[f"{metric}_percent_worse"] = rounded(100 * pen, 3)
            figs[f"{metric}_p_adjusted"] = rounded(q, 3)
        src = next(iter(worse.values()))[2].params.get("src")
        out.append(Advice(
            "remote_memory",
            "bind memory to the threads' node: remote "
            + ", ".join(f"{m} is {worse[m][0]:.0%} "
                        f"{'lower' if m == 'bandwidth' else 'higher'}"
                        for m in ("bandwidth", "latency") if m in worse),
            f"{WITHIN}. Run {rec.run_id}, worst remote pair: " + "; ".join(parts)
            + f" ({len(tests)} remote comparisons tested). Bind each process's memory to "
            "its CPUs' node, or first-touch the data from the threads that use it.",
            ev, figs, f"numactl --cpunodebind={src} --membind={src} APP", [rec.run_id],
            PRACTICAL, WITHIN))
    return out


def rule_compress_threads(runs: list[RunRecord]) -> list[Advice]:
    """Compress results of one data set and codec setting at several thread counts: the
    paired speedups (plain time / compressed time) per count, a one-sample t-test on their
    logs, Holm over the counts, within one quiet run; fires when some count pays off
    (significant, at least 1 + PRACTICAL) and every larger count does too: "pays off from N
    threads"."""
    out = []
    for rec in runs:
        groups: dict[tuple, list[BenchResult]] = defaultdict(list)
        for r in _valid(rec, "compress"):
            if "speedup" in r.metrics and isinstance(r.params.get("threads"), int):
                p = r.params
                groups[(p.get("dataset"), p.get("codec"), p.get("clevel"), p.get("filter"),
                        p.get("read"), p.get("where"), p.get("policy"))].append(r)
        for key, rs in sorted(groups.items(), key=lambda kv: str(kv[0])):
            rs.sort(key=lambda r: r.params["threads"])
            tests = [(r, paired_log_test(r.metrics["speedup"].values)) for r in rs]
            tests = [(r, t) for r, t in tests if t]
            if not tests:
                continue
            adj = holm([t[1] for _, t in tests])
            pays = [t[0] >= 1 + PRACTICAL.value and q < ALPHA for (_, t), q in zip(tests, adj)]
            if not pays[-1]:
                continue
            k = len(pays)
            while k > 0 and pays[k - 1]:
                k -= 1
            first = tests[k][0]
            n_from = first.params["threads"]
            below = tests[k - 1][0] if k else None
            ds, codec, clevel, filt = key[:4]
            name = f"{codec}-{clevel}-{filt}"
            data = (f"--synthetic {ds}" if rs[0].params.get("kind") == "synthetic"
                    else f"--data {ds}")
            sp = {r.params["threads"]: t[0] for r, t in tests}
            detail = (f"{PAIRED}. Run {rec.run_id}, data {ds}, {name}: decompress+sum is "
                      f"{sp[n_from]:.2f}x the plain sum at {n_from} threads"
                      + (f", {sp[rs[-1].params['threads']]:.2f}x at "
                         f"{rs[-1].params['threads']}" if rs[-1] is not first else ""))
            if below is not None:
                detail += (f"; at {below.params['threads']} threads it does not pay "
                           f"({sp[below.params['threads']]:.2f}x, not a significant gain "
                           f"of {PRACTICAL.value:.0%})")
            else:
                detail += " (from the fewest threads measured)"
            ratio = rs[0].metrics.get("ratio")
            out.append(Advice(
                "compress_threads",
                f"compression ({name}) pays off from {n_from} threads for {ds}",
                detail + (f"; compression ratio {ratio.median:.3g}" if ratio else "") + ".",
                [_ev(rec, r, "speedup") | {"threads": r.params["threads"],
                                           "p_adjusted": rounded(q, 3)}
                 for (r, _), q in zip(tests, adj)],
                {"threads_from": n_from, "speedup_at_from": rounded(sp[n_from], 3)},
                f"numascope compress {data} --codecs {codec} --clevels {clevel} "
                f"--filters {filt} --threads {n_from}", [rec.run_id], PRACTICAL, PAIRED))
    return out


def rule_storage_node(runs: list[RunRecord]) -> list[Advice]:
    """Storage placement rows of one drive and one fio job: the fastest node's IOPS against
    every other node's within one quiet run (Welch on logs, Holm); fires when the best node
    beats every other significantly by at least PRACTICAL."""
    out = []
    for rec in runs:
        groups: dict[tuple, dict[int, BenchResult]] = defaultdict(dict)
        for r in _valid(rec, "storage"):
            tg, pl = r.params.get("targets") or [], r.params.get("placement") or []
            if len(tg) != 1 or len(pl) != 1 or pl[0].get("cpu_node") is None \
                    or "iops" not in r.metrics:
                continue
            io = r.params.get("io") or {}
            key = (tg[0].get("path"), tg[0].get("disk"), io.get("rw"), io.get("bs"),
                   io.get("iodepth"), io.get("numjobs"))
            groups[key].setdefault(int(pl[0]["cpu_node"]), r)
        for key, by_node in groups.items():
            if len(by_node) < 2:
                continue
            best = max(by_node, key=lambda n: by_node[n].metrics["iops"].median)
            tests = [(n, log_ratio_test(by_node[n].metrics["iops"],
                                        by_node[best].metrics["iops"]))
                     for n in by_node if n != best]
            if any(t is None for _, t in tests):
                continue
            adj = holm([t[1] for _, t in tests])
            if not all(t[0] >= 1 + PRACTICAL.value and q < ALPHA
                       for (_, t), q in zip(tests, adj)):
                continue
            second, (gain, _p, glo, ghi) = min(tests, key=lambda x: x[1][0])
            path, disk, rw, bs = key[:4]
            drive = disk or path
            b, s = by_node[best].metrics["iops"], by_node[second].metrics["iops"]
            out.append(Advice(
                "storage_node",
                f"{drive} is fastest from node {best}: keep its I/O jobs there",
                f"{WITHIN}. Run {rec.run_id}, {rw} {bs} B: {b.median:.4g} IO/s from node "
                f"{best}, {gain - 1:.0%} above the next best (node {second}, {s.median:.4g} "
                f"IO/s; ratio 95 % interval {glo:.2f}-{ghi:.2f}; Holm-adjusted p = "
                f"{max(adj):.2g} against every other node)",
                [_ev(rec, by_node[n], "iops") | {"node": n} for n in sorted(by_node)],
                {"node": best, "percent_faster": rounded(100 * (gain - 1), 3),
                 "ratio_low": rounded(glo, 3), "ratio_high": rounded(ghi, 3)},
                f"numactl --cpunodebind={best} --membind={best} APP", [rec.run_id],
                PRACTICAL, WITHIN))
    return out


def rule_configuration(runs: list[RunRecord]) -> list[Advice]:
    from numascope.advice.configuration import compare_configurations
    return compare_configurations(runs)


RULES: dict[str, Callable[[list[RunRecord]], list[Advice]]] = {
    "readiness": rule_readiness, "configuration": rule_configuration,
    "l3_saturation": rule_l3_saturation, "remote_memory": rule_remote_memory,
    "compress_threads": rule_compress_threads, "storage_node": rule_storage_node,
}


def advise(runs: list[RunRecord], rules: list[str] | None = None) -> list[Advice]:
    """A disturbed run's one item ("re-run on a quiet machine"), then every rule's advice
    over the quiet runs, in RULES order. The disturbed item comes whatever rules are chosen:
    it is why no rule reads that run."""
    loud = [r for r in runs if disturbed(r)]
    quiet = [r for r in runs if not disturbed(r)]
    out: list[Advice] = [rerun_quietly(r) for r in loud]
    for name, fn in RULES.items():
        if rules is None or name in rules:
            out += fn(quiet)
    return out
