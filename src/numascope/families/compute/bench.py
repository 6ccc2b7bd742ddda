"""Measured compute: the core clock, DGEMM and an LU solve through the BLAS/LAPACK numpy
loads, and real HPL through hpcc — each as GFLOP/s and as a share of the FLOP/s peak.

FLOP counts: DGEMM 2n³; LU solve (2/3)n³ + 2n² (HPL's convention). Every result is checked:
DGEMM with Freivalds' test (C·x against A·(B·x)), the solve with HPL's scaled residual
||Ax-b||_oo / (eps (||A||_oo ||x||_oo + ||b||_oo) n) < 16. The BLAS call itself is the hot
loop; it runs in the library's own threads, so it is timed around the call (each call is
tens of milliseconds or more, far above the timer's resolution)."""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, replace
from typing import Any

from numascope import clock as _clock
from numascope import peaks as _peaks
from numascope.benchmark import Case
from numascope.errors import MeasurementError, UserError
from numascope.families.compute.options import PRESETS, TABLE, orders
from numascope.host import host
from numascope.peaks import blas, hpcc
from numascope.profile import Profile
from numascope.results.record import BenchResult, Metric
from numascope.topology.model import Topology

THRESHOLD = 16.0      # HPL 2.3's scaled-residual limit, for LU and Freivalds' DGEMM check


def dgemm_flop(n: int) -> float:
    return 2.0 * n**3


def lu_flop(n: int) -> float:
    return 2.0 / 3.0 * n**3 + 2.0 * n**2


def _np():
    import numpy as np
    return np


def _check_size(n: int) -> None:
    TABLE["size"].convert(n)
    host().check_fits(4 * 8 * n * n, f"matrix size {n} (4 matrices of doubles)")


@dataclass(frozen=True)
class ComputeParams:
    """What one compute sweep measures; the defaults are the options' (families/compute/
    options.py), every value checked by its option's rule when made (the flag names are
    `numascope peak`'s). `clock_ghz` is a stated all-core clock used instead of measuring
    one; `memory` and `links` describe the machine for the DRAM and link peaks."""

    dgemm: tuple[int, ...] = (PRESETS["quick"].dgemm,)   # DGEMM matrix sizes
    lu: tuple[int, ...] = (PRESETS["quick"].lu,)         # LU solve sizes
    reps: int = TABLE["reps"].default     # timed repetitions per case (and clock passes)
    clock: bool = True                    # measure the clock first (one case)
    clock_ghz: float | None = TABLE["clock_ghz"].default   # a given all-core clock (GHz)
    hpl: bool = TABLE["hpl"].default      # also HPL through hpcc
    hpl_np: int | None = TABLE["hpl_np"].default   # MPI processes (None: physical cores)
    hpl_n: int | None = TABLE["hpl_n"].default     # HPL N (None: short run, or sized)
    hpl_big: bool = TABLE["hpl_big"].default       # N from 80 % of available memory
    hpl_layouts: tuple[str, ...] = ()     # rank layouts (per-l3, per-node, per-core, …):
    #                                       one HPL run each under its generated mpirun line
    memory: str | None = TABLE["memory"].default   # '12x DDR5-4800' per socket (None: SMBIOS)
    links: str | None = TABLE["links"].default     # 'xgmi:4x16@32' (None: unknown)

    def __post_init__(self) -> None:
        if not isinstance(self.reps, int):
            raise UserError(f"--reps must be a whole number (got {self.reps!r})")
        for name in ("reps", "clock_ghz", "hpl_np", "hpl_n", "hpl_layouts", "memory",
                     "links"):                   # the options' own rules
            TABLE[name].convert(getattr(self, name))
        for n in (*self.dgemm, *self.lu):
            TABLE["size"].convert(n)
        if self.hpl_layouts and self.hpl_np is not None:
            raise UserError("--hpl-np and --layout both set the HPL processes: give one")

    @property
    def runs_hpl(self) -> bool:
        return self.hpl or self.hpl_big or self.hpl_n is not None or bool(self.hpl_layouts)


def run_dgemm(n: int, reps: int = TABLE["reps"].default, seed: int = 1) -> dict[str, Any]:
    """C = A·B with numpy's BLAS; seconds per repetition; raises MeasurementError when the
    product is wrong."""
    _check_size(n)
    np = _np()
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    b = rng.standard_normal((n, n))
    c = np.empty((n, n))
    np.matmul(a, b, out=c)  # warm-up: thread pool start, page faults
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        np.matmul(a, b, out=c)
        times.append(time.perf_counter() - t0)
    x = rng.standard_normal(n)
    err = np.abs(c @ x - a @ (b @ x)).max()
    scale = np.abs(a).sum(1).max() * np.abs(b).sum(1).max() * np.abs(x).max()
    rel = err / (np.finfo(float).eps * n * scale)
    if not rel < THRESHOLD:
        raise MeasurementError(f"DGEMM n={n} is wrong: Freivalds check {rel:.3g} (>= 16)")
    return {"n": n, "seconds": times, "check": float(rel)}


def run_lu(n: int, reps: int = TABLE["reps"].default, seed: int = 2) -> dict[str, Any]:
    """x = A⁻¹b with LAPACK dgesv (LU with partial pivoting) via numpy.linalg.solve."""
    _check_size(n)
    np = _np()
    rng = np.random.default_rng(seed)
    a = rng.random((n, n)) - 0.5  # HPL's matrix: uniform in [-0.5, 0.5)
    b = rng.random(n) - 0.5
    np.linalg.solve(a[:64, :64], b[:64])  # warm-up of the LAPACK path
    times, resid = [], []
    eps = np.finfo(float).eps
    norm_a = np.abs(a).sum(1).max()
    for _ in range(reps):
        t0 = time.perf_counter()
        x = np.linalg.solve(a, b)
        times.append(time.perf_counter() - t0)
        r = np.abs(a @ x - b).max() / (eps * (norm_a * np.abs(x).max() + np.abs(b).max()) * n)
        resid.append(float(r))
        if not r < THRESHOLD:
            raise MeasurementError(f"LU solve n={n} failed the residual check: {r:.3g} (>= 16)")
    return {"n": n, "seconds": times, "residuals": resid}


class Compute:
    """Benchmark family "compute": clock, DGEMM, LU (numpy's BLAS) and HPL (hpcc).

    The theoretical peaks are computed once per sweep, from the clock the "clock" case
    measured (or the params' stated clock), and kept: `peaks()` hands out that one summary,
    the clock result carries it (params["peaks"]) and the FLOP/s cases use its peak."""

    family = "compute"
    # compared by default (numascope compare): DGEMM / LU / HPL: GFLOP/s; the clock case: the clock with every CPU busy
    primary = ("gflops", "all_busy_ghz")
    title = "compute peak and measured clock"

    def __init__(self, params: ComputeParams | None = None, *, memory: str | None = None,
                 links: str | None = None) -> None:
        """`memory` and `links` (`numascope run --memory / --links`) describe the machine
        for the DRAM and link peaks, replacing the params' own."""
        self.params = params or ComputeParams()
        if memory is not None or links is not None:
            self.params = replace(self.params, memory=memory or self.params.memory,
                                  links=links or self.params.links)
        self._peaks: dict[str, Any] | None = None
        self._blas: dict[str, Any] | None = None

    def suite_cases(self, topo: Topology, profile: Profile) -> list[Case]:
        """The cases `numascope run` measures under this profile (this bench's machine
        description kept: its peaks use --memory / --links)."""
        return self.cases(topo, replace(profile_params(profile), memory=self.params.memory,
                                        links=self.params.links))

    # -- cases --------------------------------------------------------------------------
    def cases(self, topo: Topology, params: ComputeParams | None = None, **options: Any
              ) -> list[Case]:
        """The clock (unless a clock is given or `clock=False`), DGEMM and LU per size,
        HPL when asked; `params` or ComputeParams fields as keywords (they become this
        bench's params)."""
        if params is None:
            params = replace(self.params, **{k: tuple(v) if k in ("dgemm", "lu") else v
                                              for k, v in options.items()})
        self.params = p = params
        out = [Case("clock", {"kind": "clock", "reps": p.reps})] \
            if p.clock and p.clock_ghz is None else []
        out += [Case(f"dgemm n={n}", {"kind": "dgemm", "n": n, "reps": p.reps}) for n in p.dgemm]
        out += [Case(f"lu n={n}", {"kind": "lu", "n": n, "reps": p.reps}) for n in p.lu]
        if p.runs_hpl and p.hpl_layouts:
            from numascope.layouts import named
            for name in p.hpl_layouts:
                lay = named(topo, name)      # a layout that does not fit: UserError now
                out.append(Case(f"hpl {name} np={lay.ranks}",
                                {"kind": "hpl", "np": lay.ranks, "layout": name,
                                 "threads": lay.threads, "n": p.hpl_n, "big": p.hpl_big}))
        elif p.runs_hpl:
            procs = p.hpl_np or _physical_cores(topo)
            out.append(Case(f"hpl np={procs}", {"kind": "hpl", "np": procs, "n": p.hpl_n,
                                                 "big": p.hpl_big}))
        return out

    # -- the peaks, once ------------------------------------------------------------------
    def peaks(self, topo: Topology, root: Any = "/") -> dict[str, Any]:
        """The peak summary of this sweep: the one the clock case computed, else one from
        the stated clock (params.clock_ghz; FLOP/s unknown without either), computed once.
        `root` is where cpuinfo and SMBIOS are read (a replayed machine's Tree)."""
        if self._peaks is None:
            given = ({"all_busy_ghz": self.params.clock_ghz, "given": True}
                     if self.params.clock_ghz else None)
            self._peaks = _peaks.summary(topo, self.params.memory, self.params.links,
                                         clock=given, root=root)
        return self._peaks

    def blas(self) -> dict[str, Any]:
        if self._blas is None:
            self._blas = blas.numpy_blas()
        return self._blas

    # -- measure ------------------------------------------------------------------------
    def measure(self, topo: Topology, case: Case) -> BenchResult:
        kind = case.params.get("kind")
        if kind == "clock":
            return self._measure_clock(topo, case)
        if kind in ("dgemm", "lu"):
            return self._measure_blas(topo, case, kind)
        if kind == "hpl":
            return self._measure_hpl(topo, case)
        raise UserError(f"unknown compute case {case.label!r}")

    def _measure_clock(self, topo: Topology, case: Case) -> BenchResult:
        c = _clock.measure(topo, reps=case.params.get("reps", self.params.reps))
        per = c["per_cpu"].values()
        metrics = {
            "single_ghz": Metric("single_ghz", "GHz", True,
                                 [v for p in per for v in p["single_samples"]],
                                 "one pinned thread alone, every CPU × repetition"),
            "all_busy_ghz": Metric("all_busy_ghz", "GHz", True,
                                   [v for p in per for v in p["all_busy_samples"]],
                                   "all CPUs running the chain at once"),
        }
        if c["tsc_ghz"]:
            metrics["tsc_ghz"] = Metric("tsc_ghz", "GHz", True, [c["tsc_ghz"]],
                                        "TSC ticks / CLOCK_MONOTONIC_RAW")
        params = dict(case.params, tsc_ghz=c["tsc_ghz"], per_cpu={
            cpu: {"single_ghz": v["single_ghz"], "all_busy_ghz": v["all_busy_ghz"]}
            for cpu, v in c["per_cpu"].items()})
        res = BenchResult(self.family, case.label, params, metrics,
                          {"cpus": c["cpus"]}, notes=[c["method"], *c["notes"]])
        # The theoretical peaks, computed once from this clock, travel with it so a stored
        # run shows its efficiency table later (DRAM/links from SMBIOS when readable).
        clock = {**c, "labels": _peaks.clock_of(res)["labels"]}
        self._peaks = _peaks.summary(topo, self.params.memory, self.params.links, clock=clock)
        res.params["peaks"] = {k: v for k, v in self._peaks.items() if k != "clock"}
        return res

    def _measure_blas(self, topo: Topology, case: Case, kind: str) -> BenchResult:
        n, reps = int(case.params["n"]), int(case.params.get("reps", TABLE["reps"].default))
        r = run_dgemm(n, reps) if kind == "dgemm" else run_lu(n, reps)
        flop = dgemm_flop(n) if kind == "dgemm" else lu_flop(n)
        gflops = [flop / t / 1e9 for t in r["seconds"]]
        info = self.blas()
        peak = self.peaks(topo)["flops"]
        notes = [(f"BLAS: {info.get('library')} {info.get('version') or ''} "
                 f"({info.get('threads')} threads, {info.get('threading') or '?'}; via "
                 f"{info.get('how')})")]
        w = blas.warning_for(info, "numpy")
        if w:
            notes.append(w)
        params = dict(case.params, flop=flop,
                      flop_formula="2n³" if kind == "dgemm" else "(2/3)n³ + 2n²",
                      blas=info, peak_gflops=peak["value"])
        metrics = {"gflops": Metric("gflops", "GFLOP/s", True, gflops, params["flop_formula"]),
                   "seconds": Metric("seconds", "s", False, r["seconds"])}
        if peak["value"]:
            metrics["pct_of_peak"] = Metric("pct_of_peak", "%", True,
                                            [100 * g / peak["value"] for g in gflops],
                                            peak["formula"])
        if kind == "lu":
            metrics["residual"] = Metric("residual", "", False, r["residuals"],
                                         "HPL scaled residual, must be < 16")
        return BenchResult(self.family, case.label, params, metrics,
                           {"cpus": topo.usable_cpus(), "threads": info.get("threads")},
                           notes=notes)

    def _measure_hpl(self, topo: Topology, case: Case) -> BenchResult:
        procs = int(case.params["np"])
        lay = None
        if case.params.get("layout"):
            from numascope.layouts import named
            lay = named(topo, case.params["layout"])
        res = hpcc.run_hpl(procs, n=case.params.get("n"), big=bool(case.params.get("big")),
                           layout=lay, topo=topo)
        lib = blas.linked_blas("hpcc")
        peak = self.peaks(topo)["flops"]
        notes = [f"hpcc BLAS: {lib.get('resolved') or 'unknown'} ({lib.get('kind')})"]
        w = blas.warning_for(lib, "hpcc")
        if w:
            notes.append(w)
        params = dict(case.params, **res.to_dict(), peak_gflops=peak["value"],
                      flop_formula="(2/3)N³ + 2N²")
        if lay is not None:
            from numascope.topology.lists import format_list
            params["placement"] = {"unit": lay.unit, "ranks": lay.ranks,
                                   "threads": lay.threads, "smt": lay.smt,
                                   "cpus": [format_list(list(s.cpus)) for s in lay.slots],
                                   "nodes": [list(s.nodes) for s in lay.slots]}
            notes.append(f"launcher: {res.launcher}")
            if res.bound is not None:
                want = [sorted(s.cpus) for s in lay.slots]
                params["bindings_agree"] = res.bound == want
                if res.bound != want:
                    notes.append("Open MPI bound the ranks elsewhere than the layout: "
                                 + "; ".join(format_list(b) for b in res.bound))
        metrics = {"gflops": Metric("gflops", "GFLOP/s", True, [res.gflops], "HPL_Tflops × 1000"),
                   "residual": Metric("residual", "", False, [res.residual],
                                      "HPL scaled residual, must be < 16")}
        if peak["value"]:
            metrics["pct_of_peak"] = Metric("pct_of_peak", "%", True,
                                            [100 * res.gflops / peak["value"]], peak["formula"])
        where = {"procs": procs, "grid": [res.p, res.q]}
        if lay is not None:
            where["cpus"] = sorted(lay.cpus())
            where["threads_per_rank"] = lay.threads
        return BenchResult(self.family, case.label, params, metrics, where, notes=notes)


def _physical_cores(topo: Topology) -> int:
    from numascope.peaks import physical_cores
    return max(1, physical_cores(topo))


def profile_params(profile: Profile) -> ComputeParams:
    """quick: clock + DGEMM and LU at the profile's orders (options.PRESETS: seconds with an
    optimized BLAS; smoke: tiny); full (dense): larger matrices + HPL through hpcc (N=10000
    or what fits) when installed. Five repetitions either way: enough for compare."""
    size = orders(profile.name)           # the profile's matrix orders (options.PRESETS)
    if not profile.dense:
        return ComputeParams(dgemm=(size.dgemm,), lu=(size.lu,), reps=5)
    avail = host().mem_available() or 0
    n = min(10000, hpcc.size_n(avail, 0.5)) if avail else hpcc.SHORT_N
    # HPL only when hpcc is there: a missing tool is not a failed stage
    return ComputeParams(dgemm=(size.dgemm,), lu=(size.lu,), reps=5,
                         hpl=shutil.which("hpcc") is not None, hpl_n=n)


def suite_cases(topo: Topology, profile: Profile) -> list[Case]:
    """The cases of `profile_params(profile)`."""
    return Compute().cases(topo, profile_params(profile))
