"""Advice from stored runs: each rule reads measured results (or recorded host facts) and
gives advice only with its evidence — the run ids, cases, medians with their repetition
counts, the statistic behind a claimed difference, and the rule that fired. A rule whose
results show no effect (a difference that is not significant or too small, a mode that
already is the finest, a setting that was fine) gives nothing.

Rules (RULES, in order):
    readiness         recorded settings and observed noise that distort the stored numbers
    l3_saturation     one thread per L3 already reaches >= 80 % of all-core bandwidth
    remote_memory     remote-node bandwidth/latency significantly worse than local (matrix)
    dram_efficiency   measured DRAM bandwidth < 60 % of the peak in a coarse memory mode
    compress_threads  compressed sums pay off from N threads up (paired speedups)
    storage_node      a drive is significantly fastest from one node (fio placement rows)

Differences are tested on the logs of the repetitions (a ratio), Welch's t-test from
numascope.analysis.stats, Holm-adjusted within a rule's family of comparisons; a claim needs
adjusted p < ALPHA and a change of at least MIN_EFFECT."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from numascope.analysis.stats import holm, t_two_sided_p, variance, welch
from numascope.profile import readable
from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord

ALPHA = 0.05
MIN_EFFECT = 0.10          # a claimed difference must be at least 10 %
L3_SATURATION = 0.80       # one thread per L3 reaching 80 % of all-core bandwidth
DRAM_LOW = 60.0            # measured DRAM bandwidth below 60 % of the theoretical peak
STORAGE_EFFECT = 0.05      # a node must be 5 % faster for a drive
MIN_REPS = 3               # repetitions a side needs before any claim


@dataclass
class Advice:
    rule: str                          # the rule that fired (RULES)
    title: str                         # the advice, one line
    detail: str                        # why: the figures in words
    evidence: list[dict[str, Any]]     # run_id, case, metric, median, unit, n …
    figures: dict[str, Any] = field(default_factory=dict)   # the numbers the text cites
    command: str = ""                  # the exact command line, where there is one
    runs: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "title": self.title, "detail": self.detail,
                "command": self.command, "runs": list(self.runs),
                "figures": dict(self.figures), "evidence": list(self.evidence)}


def _ev(rec: RunRecord, res: BenchResult, metric: str) -> dict[str, Any]:
    m = res.metrics[metric]
    return {"run_id": rec.run_id, "case": res.case, "family": res.family, "metric": metric,
            "median": _r(m.median), "unit": m.unit, "n": len(m.values)}


def _r(x: float | None, digits: int = 4) -> float | None:
    if x is None or not math.isfinite(x):
        return None
    return float(f"{x:.{digits}g}")


def _logs(m: Metric) -> list[float]:
    return [math.log(v) for v in m.values if v > 0 and math.isfinite(v)]


def log_ratio_test(a: Metric, b: Metric) -> tuple[float, float] | None:
    """(ratio of geometric means b/a, two-sided p) by Welch's test on the logs; None with
    fewer than MIN_REPS positive values a side."""
    la, lb = _logs(a), _logs(b)
    if len(la) < MIN_REPS or len(lb) < MIN_REPS:
        return None
    w = welch(la, lb)
    return math.exp(w.diff), w.p


def paired_log_test(ratios: list[float]) -> tuple[float, float] | None:
    """(geometric mean of paired ratios, two-sided p that it is 1) by a one-sample t-test
    on their logs; None with fewer than MIN_REPS."""
    ls = [math.log(x) for x in ratios if x > 0 and math.isfinite(x)]
    n = len(ls)
    if n < MIN_REPS:
        return None
    mean = math.fsum(ls) / n
    sd = math.sqrt(variance(ls))
    if sd == 0:
        return math.exp(mean), (0.0 if mean else 1.0)
    return math.exp(mean), t_two_sided_p(mean / (sd / math.sqrt(n)), n - 1)


def _valid(rec: RunRecord, family: str) -> list[BenchResult]:
    """The run's validated results of `family`; none from a smoke run (its numbers measure
    caches: no rule may read an effect into them)."""
    if not readable(rec.profile):
        return []
    return [r for r in rec.results if r.family == family and r.validated]


# -- rules ----------------------------------------------------------------------------------

DISTORTING = {"governor", "numa_balancing", "busy", "thp", "cgroup_cpus", "vm", "cmdline",
              "memory_balance"}


def rule_readiness(runs: list[RunRecord]) -> list[Advice]:
    """Per run: the readiness checks that warned when it started (host["readiness"]; for
    older records the governor and NUMA-balancing host facts) and the noise measured during
    it (other processes, steal, clock drop)."""
    out = []
    for rec in runs:
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
        for w in rec.noise.get("warnings") or []:
            found.append({"run_id": rec.run_id, "check": "noise", "value": str(w),
                          "effect": "measured during the run", "fix": ""})
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
    """Bandwidth thread scaling: the one-thread-per-L3 point (policy per-l3, as many threads
    as L3 domains) against the largest thread count measured of the same kernel; fires
    when the machine has more cores than L3s and the per-L3 median reaches L3_SATURATION
    of the all-core one."""
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
            la, lp = _logs(a), _logs(p)
            if len(la) < MIN_REPS or len(lp) < MIN_REPS or not a.median > 0:
                continue
            share = p.median / a.median
            w = welch(la, lp)
            lo, hi = (math.exp(x) for x in w.interval(0.95))
            if lo < L3_SATURATION:
                continue        # not shown to reach it (too low, or too noisy to say)
            if lo > 1 + MIN_EFFECT and w.p < ALPHA:
                title = (f"one thread per L3 gives {share - 1:.0%} more {kernel} bandwidth "
                         f"than {nt} threads: more threads only contend")
            else:
                title = (f"one thread per L3 already reaches {share:.0%} of all-core "
                         f"{kernel} bandwidth" if share < 1 else
                         f"one thread per L3 already matches all-core {kernel} bandwidth")
            out.append(Advice(
                "l3_saturation", title,
                f"{kernel}: {l3s} thread{'s' if l3s != 1 else ''}, one per L3, "
                f"{p.median:.4g} {p.unit} against {a.median:.4g} {a.unit} with {nt} threads "
                f"(run {rec.run_id}; ratio 95 % interval {lo:.2f}-{hi:.2f}). For "
                "bandwidth-bound codes, one rank or thread per L3 gets most of the "
                "bandwidth and leaves the other cores free (OpenMP: one thread per L3 "
                "cache; MPI: one rank per L3).",
                [_ev(rec, per[0], "bandwidth"), _ev(rec, top, "bandwidth")],
                {"percent": _r(100 * share, 3), "l3_threads": l3s, "all_threads": nt,
                 "ratio_low": _r(lo, 3), "ratio_high": _r(hi, 3), "p_value": _r(w.p, 3)},
                f"OMP_NUM_THREADS={l3s} OMP_PLACES=ll_caches OMP_PROC_BIND=spread APP; "
                "mpirun --map-by ppr:1:l3cache --bind-to core APP",
                [rec.run_id]))
    return out


def rule_remote_memory(runs: list[RunRecord]) -> list[Advice]:
    """Matrix results: every remote pair (source node's CPUs, memory on another node with
    CPUs) against the source's local pair, latency and bandwidth, Welch on logs, Holm over
    all pairs of the run; fires when some pair is significantly and >= MIN_EFFECT worse."""
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
                        tests.append((metric, r, local[src], *t))
        if not tests:
            continue
        adj = holm([t[4] for t in tests])
        worse = {}
        for (metric, r, loc, ratio, _p), q in zip(tests, adj):
            penalty = ratio - 1 if metric == "latency" else 1 - ratio
            if q < ALPHA and penalty >= MIN_EFFECT and \
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
            figs[f"{metric}_percent_worse"] = _r(100 * pen, 3)
            figs[f"{metric}_p_adjusted"] = _r(q, 3)
        src = next(iter(worse.values()))[2].params.get("src")
        out.append(Advice(
            "remote_memory",
            "bind memory to the threads' node: remote "
            + ", ".join(f"{m} is {worse[m][0]:.0%} "
                        f"{'lower' if m == 'bandwidth' else 'higher'}"
                        for m in ("bandwidth", "latency") if m in worse),
            f"run {rec.run_id}, worst remote pair: " + "; ".join(parts)
            + f" ({len(tests)} remote comparisons tested). Bind each process's memory to "
            "its CPUs' node, or first-touch the data from the threads that use it.",
            ev, figs, f"numactl --cpunodebind={src} --membind={src} APP", [rec.run_id]))
    return out


_FINER = {"NPS0": "NPS4", "NPS1": "NPS4", "NPS2": "NPS4", "SNC off": "SNC2 or SNC4",
          "node interleaving": "NUMA on (node interleaving off)"}


def rule_dram_efficiency(runs: list[RunRecord]) -> list[Advice]:
    """Measured DRAM bandwidth (peaks.efficiency: the best validated median) below DRAM_LOW
    % of the theoretical peak the run stored, in a memory mode with a finer setting; no
    advice when the peak is unknown or the mode is already the finest."""
    from numascope.peaks.efficiency import efficiency_table
    out = []
    for rec in runs:
        mode = str(rec.host.get("memory_mode") or "")
        base = mode.split("|")[0]
        finer = _FINER.get(base)
        if not finer or "|" in mode:
            continue      # no fact, an ambiguous mode, or already the finest setting
        rows = [r for r in efficiency_table(rec.host.get("peaks"), results=rec.results)
                if r.what == "DRAM bandwidth" and r.percent is not None]
        if not rows or rows[0].percent >= DRAM_LOW:
            continue
        row = rows[0]
        out.append(Advice(
            "dram_efficiency",
            f"DRAM bandwidth reaches {row.percent:.0f} % of peak in {base}: compare "
            f"{finer} for NUMA-aware codes",
            f"run {rec.run_id}: {row.measured:.4g} {row.unit} measured ({row.measured_by}) "
            f"against a {row.peak:.4g} {row.unit} peak. In {base} every node interleaves "
            f"over more channels and dies; {finer} keeps each node's traffic on its own "
            "memory controllers, which codes that place their memory per node can use. "
            f"Measure again after the BIOS change, tagged (numascope run --tag "
            f"mode={finer.split()[0]}), and compare.",
            [{"run_id": rec.run_id, "what": row.what, "measured": _r(row.measured),
              "measured_by": row.measured_by, "peak": _r(row.peak), "unit": row.unit,
              "memory_mode": mode}],
            {"percent": _r(row.percent, 3), "memory_mode": base, "suggested": finer},
            f"numascope compare mode={base} mode={finer.split()[0]}", [rec.run_id]))
    return out


def rule_compress_threads(runs: list[RunRecord]) -> list[Advice]:
    """Compress results of one data set and codec setting at several thread counts: the
    paired speedups (plain time / compressed time) per count, a one-sample t-test on their
    logs, Holm over the counts; fires when some count pays off (significant, >= MIN_EFFECT)
    and every larger count does too: "pays off from N threads"."""
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
            pays = [t[0] >= 1 + MIN_EFFECT and q < ALPHA for (_, t), q in zip(tests, adj)]
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
            sp = {r.params["threads"]: t[0] for r, t in tests}
            detail = (f"run {rec.run_id}, data {ds}, {name}: decompress+sum is "
                      f"{sp[n_from]:.2f}x the plain sum at {n_from} threads"
                      + (f", {sp[rs[-1].params['threads']]:.2f}x at "
                         f"{rs[-1].params['threads']}" if rs[-1] is not first else ""))
            if below is not None:
                detail += (f"; at {below.params['threads']} threads it does not pay "
                           f"({sp[below.params['threads']]:.2f}x, not a significant gain "
                           f"of {MIN_EFFECT:.0%})")
            else:
                detail += " (from the fewest threads measured)"
            ratio = rs[0].metrics.get("ratio")
            out.append(Advice(
                "compress_threads",
                f"compression ({name}) pays off from {n_from} threads for {ds}",
                detail + (f"; compression ratio {ratio.median:.3g}" if ratio else "") + ".",
                [_ev(rec, r, "speedup") | {"threads": r.params["threads"],
                                           "p_adjusted": _r(q, 3)}
                 for (r, _), q in zip(tests, adj)],
                {"threads_from": n_from, "speedup_at_from": _r(sp[n_from], 3)},
                f"numascope compress --data {ds} --codec {codec} --clevel {clevel} "
                f"--filter {filt} --threads {n_from}", [rec.run_id]))
    return out


def rule_storage_node(runs: list[RunRecord]) -> list[Advice]:
    """Storage placement rows of one drive and one fio job: the fastest node's IOPS against
    every other node's (Welch on logs, Holm); fires when the best node beats every other
    significantly by >= STORAGE_EFFECT."""
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
            if not all(t[0] >= 1 + STORAGE_EFFECT and q < ALPHA
                       for (_, t), q in zip(tests, adj)):
                continue
            second, (gain, _p) = min(tests, key=lambda x: x[1][0])
            path, disk, rw, bs = key[:4]
            drive = disk or path
            b, s = by_node[best].metrics["iops"], by_node[second].metrics["iops"]
            out.append(Advice(
                "storage_node",
                f"{drive} is fastest from node {best}: keep its I/O jobs there",
                f"run {rec.run_id}, {rw} {bs} B: {b.median:.4g} IO/s from node {best}, "
                f"{gain - 1:.0%} above the next best (node {second}, {s.median:.4g} IO/s; "
                f"Holm-adjusted p = {max(adj):.2g} against every other node)",
                [_ev(rec, by_node[n], "iops") | {"node": n} for n in sorted(by_node)],
                {"node": best, "percent_faster": _r(100 * (gain - 1), 3)},
                f"numactl --cpunodebind={best} --membind={best} APP", [rec.run_id]))
    return out


RULES: dict[str, Callable[[list[RunRecord]], list[Advice]]] = {
    "readiness": rule_readiness, "l3_saturation": rule_l3_saturation,
    "remote_memory": rule_remote_memory, "dram_efficiency": rule_dram_efficiency,
    "compress_threads": rule_compress_threads, "storage_node": rule_storage_node,
}


def advise(runs: list[RunRecord], rules: list[str] | None = None) -> list[Advice]:
    """Every rule's advice for these runs, in RULES order."""
    out: list[Advice] = []
    for name, fn in RULES.items():
        if rules is None or name in rules:
            out += fn(runs)
    return out
