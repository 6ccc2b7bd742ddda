"""`advise --verify`: a candidate layout run for real, measured against its prediction.

The STREAM triad on exactly the recipe's CPU sets (one thread per CPU of Slot.threads)
over memory bound to each rank's nodes (first touch on a one-node machine), as the recipe
launches it: one process for one rank; for several ranks, one process each started by
`mpirun` with the recipe's own --map-by/rankfile line when Open MPI is installed (by `srun`
inside a Slurm allocation), else by the recipe's per-rank numactl lines (taskset without
numactl). One rank is measured over UNITS fresh allocations (units), as the run's points
were (numascope.steady: repetitions inside one allocation agree far more closely than
allocations do); its figure is the median of its repetitions over the units, the
convention of the run's points. Several ranks are measured over one allocation each:
their arrays are set up at each rank's own speed, so only a long run of repetitions
overlaps (units of a few repetitions each overlapped for a fraction of their time in the
test guests, and measured up to 1.5x the one-allocation figure). The ranks wait at a
file barrier and time their repetitions together: each repetition
is placed in time by the C core's own stamps (its first thread's start and last thread's
end on CLOCK_MONOTONIC_RAW, one clock for every process; params["rep_spans"]); a
repetition outside the window common to all ranks (array set-up differs between ranks,
so one starts timing before another) measured fewer ranks and is left out of the metric,
kept in params["alone"] with why. Several ranks repeat enough to time about
OVERLAP_S together. A rank's figure is then what it moved inside that common
window divided by the window (its throughput while the job ran: on a busy machine a rank
descheduled for a while moves less, and the repetitions' median would hide it). The job's
figure is the sum over ranks.

Stored as one run per layout, tagged verify=RxT and recipe=<label>, its results family
"bandwidth", sweep "verify": one per rank ("triad verify rank R") and the total ("triad
verify total"), each with the predicted figure, its kind (predicted_kind: lookup,
interpolated or model, numascope.predict.model.KINDS), the error in % and the prediction's
run. accuracy() tallies the errors by kind, never across kinds: checking a lookup measures
how the machine reproduces the run's own point, not the model."""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from numascope import steady
from numascope.errors import MeasurementError
from numascope.predict.model import INTERPOLATED, KINDS, LOOKUP, MODEL, Prediction
from numascope.predict.plan import Candidate
from numascope.recipes import openmpi_argv
from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord
from numascope.topology.model import Topology

TIMEOUT_S = 600.0
OVERLAP_S = 2.0          # seconds of timed repetitions per rank when several run together
MAX_REPS = 400
REPS = 12                # a layout's repetitions (advise --reps changes it)
UNITS = steady.MIN_UNITS  # fresh allocations one rank is measured over, as the run's points
UNIT_REPS = 3            # the fewest repetitions a unit holds
UNLABELLED = "unlabelled"  # a check stored before predictions said their kind
MEANING = {
    LOOKUP: "a stored point measured again: the machine's reproducibility, not the model",
    INTERPOLATED: "between two stored points of one series",
    MODEL: "what the model adds: past the points, ranks together, caps, borrowed curves",
    UNLABELLED: "checked before predictions said their kind",
}
WORKER = [sys.executable, str(Path(__file__).with_name("worker.py"))]


def worker_env() -> dict[str, str]:
    """The environment of a rank: this process's, and the numascope it runs (worker.py)."""
    import numascope
    from numascope import _core
    return {**os.environ, "NUMASCOPE_WORKER_SRC": str(Path(numascope.__file__).parent.parent),
            "NUMASCOPE_WORKER_CORE": str(Path(_core.__file__).resolve())}


def error_percent(measured: float | None, predicted: float | None) -> float | None:
    """(predicted - measured) / measured in %: how far the model is from the machine."""
    if measured is None or predicted is None or not measured > 0:
        return None
    return 100.0 * (predicted - measured) / measured


def launcher(cand: Candidate) -> str:
    """Which launcher runs the ranks: "process" (one rank), "mpirun", "srun", "numactl",
    "taskset"."""
    if cand.recipe.layout.ranks == 1:
        return "process"
    if shutil.which("mpirun"):
        return "mpirun"
    if shutil.which("srun") and os.environ.get("SLURM_JOB_ID"):
        return "srun"
    return "numactl" if shutil.which("numactl") else "taskset"


def _commands(cand: Candidate, how: str, spec: Path, workdir: Path) -> list[list[str]]:
    r = cand.recipe
    worker = [*WORKER, str(spec)]
    if how == "mpirun":
        # by name: Open MPI takes an absolute path's grandparent as its --prefix, and where
        # PATH finds /bin/mpirun that is "/", which it refuses
        argv, files = openmpi_argv(r.layout, worker, mpirun="mpirun",
                                   rankfile=str(workdir / "numascope.rankfile"), topo=None)
        for name, text in files.items():
            Path(name).write_text(text)
        extra = ["--allow-run-as-root"] if os.geteuid() == 0 else []
        if sum(len(s.cpus) for s in r.layout.slots) > len(os.sched_getaffinity(0)):
            extra.append("--oversubscribe")
        return [[argv[0], *extra, *argv[1:]]]
    if how == "srun":
        return [[*r.slurm.argv[:-1], *worker]]
    per = r.numactl.per_rank if how == "numactl" else r.taskset.per_rank
    return [[*a[:-1], *worker, str(i)] for i, a in enumerate(per)]


def _run(cmds: list[list[str]], what: str, out: Path) -> list[dict[str, Any]]:
    """Run the ranks' commands; their results, read from out/result-<rank>.json."""
    env = worker_env()
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                              stdin=subprocess.DEVNULL, text=True, start_new_session=True)
             for c in cmds]
    lines: list[dict[str, Any]] = []
    try:
        for p in procs:
            _, err = p.communicate(timeout=TIMEOUT_S)
            if p.returncode != 0:
                from numascope.families.interconnect.launch import launcher_message
                said = launcher_message(err) or "no message"
                raise MeasurementError(f"{what}: {p.args[0]} exit {p.returncode}: {said}")
    except subprocess.TimeoutExpired:
        raise MeasurementError(f"{what}: no result after {TIMEOUT_S:g} s") from None
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, 9)
    for f in sorted(out.glob("result-*.json")):
        try:
            lines.append(json.loads(f.read_text()))
        except (OSError, ValueError) as e:
            raise MeasurementError(f"{what}: {f.name} unreadable: {e}") from None
    return [x for x in lines if x.get("type") == "rank"]


def code_of(rec: RunRecord) -> tuple[int | None, str, str]:
    """(array bytes, ISA, streaming stores on/off) of the run's triad results with the most
    threads: the check measures what the prediction was made from."""
    rs = [r for r in rec.results if r.family == "bandwidth" and r.params.get("kernel") == "triad"
          and r.params.get("sweep") != "verify" and isinstance(r.params.get("threads"), int)]
    if not rs:
        return None, "auto", "auto"
    top = max(rs, key=lambda r: r.params["threads"])
    nt = {"streaming": "on", "ordinary": "off"}.get(top.params.get("stores"), "auto")
    size = top.params.get("array_bytes")
    return (size if isinstance(size, int) else None), top.params.get("isa") or "auto", nt


def unit_rule(reps: int, units: int = UNITS) -> steady.Steady:
    """`units` fresh allocations of reps/units repetitions each (at least UNIT_REPS), no
    more and no fewer: one rank is measured as the run's points were (numascope.steady:
    one allocation against a figure taken over several would compare a page placement
    with the machine)."""
    per = max(UNIT_REPS, -(-reps // units))
    return steady.Steady(min_units=units, min_reps=units * per, max_reps=units * per)


def measure_ranks(topo: Topology, cand: Candidate, size_bytes: int | None, reps: int,
                  isa: str = "auto", nt: str = "auto") -> tuple[str, list[BenchResult]]:
    """(launcher, one result per rank, in rank order): one rank over UNITS fresh
    allocations (unit_rule), several ranks over one allocation each (module doc)."""
    how = launcher(cand)
    lay = cand.recipe.layout
    if how == "process":
        from numascope.families.bandwidth.bench import measure
        from numascope.memspec import MemorySpec
        s = lay.slots[0]
        mem = MemorySpec("bind", s.mem_nodes) if s.mem_nodes and len(topo.nodes) > 1 \
            else MemorySpec()
        return how, [measure(topo, "triad", cpus=list(s.threads), memory=mem,
                             size_bytes=size_bytes, reps=unit_rule(reps), isa=isa, nt=nt,
                             label="triad verify rank 0")]
    with tempfile.TemporaryDirectory(prefix="numascope-verify-") as tmp:
        d = Path(tmp)
        (d / "barrier").mkdir()
        spec = d / "spec.json"
        spec.write_text(json.dumps({
            "ranks": [{"threads": list(s.threads), "mem_nodes": list(s.mem_nodes)}
                      for s in lay.slots],
            "size_bytes": size_bytes, "reps": reps, "isa": isa, "nt": nt,
            "barrier": str(d / "barrier")}))
        cwd = os.getcwd()
        os.chdir(d)        # a rankfile is written next to the job, as the recipe says
        try:
            lines = _run(_commands(cand, how, spec, d), f"verify {cand.label}", d / "barrier")
        finally:
            os.chdir(cwd)
    got = {int(x["rank"]): x for x in lines}
    missing = [r for r in range(lay.ranks) if r not in got]
    if missing:
        raise MeasurementError(f"verify {cand.label}: rank {missing[0]} reported nothing")
    return how, overlap([got[r] for r in range(lay.ranks)])


def reps_for(pred: Prediction, size_bytes: int | None, reps: int | None) -> int:
    """A layout's repetitions (one rank: over all its units): `reps` when given; else
    REPS, and for several ranks enough to time about OVERLAP_S together (at the slowest
    rank's predicted speed)."""
    if reps is not None:
        return reps
    reps = REPS
    if len(pred.ranks) < 2 or not size_bytes:
        return reps
    slow = min((r.gbs for r in pred.ranks if r.gbs), default=None)
    if not slow:
        return max(reps, 50)
    one = 3 * size_bytes / (slow * 1e9)          # triad: three arrays a repetition
    return max(reps, min(MAX_REPS, math.ceil(OVERLAP_S / one)))


def _kept(params: dict[str, Any], reps: int) -> list[int]:
    """Indices (among all `reps` repetitions) of the reported variant's kept ones: all but
    its excluded_reps (implausibly fast, set aside by the bandwidth family's screen)."""
    from numascope.families.bandwidth.bench import variant_name
    name = variant_name(params.get("isa"), params.get("stores") == "streaming")
    out = {int(e["rep"]) for e in params.get("excluded_reps") or []
           if e.get("variant") == name}
    return [i for i in range(reps) if i not in out]


def overlap(lines: list[dict[str, Any]]) -> list[BenchResult]:
    """Each rank's result keeping only the repetitions inside the window every rank was
    timing (module doc); the others go to params["alone"]."""
    spans, kept = [], []
    for x in lines:
        prm = x["result"]["params"]
        got = prm.get("rep_spans")
        secs = x["result"]["metrics"]["seconds"]["values"]
        k = _kept(prm, len(got)) if isinstance(got, list) else []
        if not got or len(k) != len(secs):
            raise MeasurementError(f"rank {x.get('rank')} reported no time stamps for its "
                                   f"repetitions (params.rep_spans): its C core is older "
                                   "than this numascope")
        # the C core's own stamps, one clock for every process (CLOCK_MONOTONIC_RAW)
        spans.append([(float(a), float(b)) for a, b in got])
        kept.append(k)
    lo = max(sp[0][0] for sp in spans)
    hi = min(sp[-1][1] for sp in spans)
    out = []
    for x, sp, k in zip(lines, spans, kept):
        res = BenchResult.from_dict(x["result"])
        bw_, secs = res.metrics["bandwidth"], res.metrics["seconds"]
        inside = [j for j, i in enumerate(k) if sp[i][0] >= lo and sp[i][1] <= hi]
        if len(inside) < 3:
            res.notes.append(f"only {len(inside)} of {len(k)} repetitions ran while every "
                             "rank did: all kept, the figure mixes in fewer ranks")
            res.params["alone"] = []
        else:
            res.params["alone"] = [{"rep": k[j], "gbs": bw_.values[j],
                                    "why": "not every rank was timing"}
                                   for j in range(len(k)) if j not in inside]
            for name in list(res.metrics):
                m = res.metrics[name]
                if len(m.values) == len(k):
                    res.metrics[name] = Metric(m.name, m.unit, m.higher_is_better,
                                               [m.values[j] for j in inside], m.note)
        # what the rank moved while every rank ran, over that window: the job's view (a
        # rank descheduled for a while moves less, as it would in the job). Every
        # repetition moves the same bytes; an excluded one counts by its span too (it did
        # its work; only its time was implausible)
        if hi > lo and bw_.values:
            rep_bytes = bw_.values[0] * secs.values[0]      # GB, the same for every one
            frac = sum(max(0.0, min(b, hi) - max(a, lo)) / (b - a) for a, b in sp if b > a)
            res.params["window_gbs"] = rep_bytes * frac / (hi - lo)
            res.params["window_s"] = hi - lo
        res.params["affinity"] = x.get("affinity")
        out.append(res)
    return out


def measured(res: BenchResult) -> float:
    """A rank's figure: its throughput over the window all ranks ran (several ranks), else
    the median of its repetitions (one rank: the STREAM convention, as the run's points)."""
    w = res.params.get("window_gbs")
    return float(w) if isinstance(w, (int, float)) else res.metrics["bandwidth"].median


def results(cand: Candidate, pred: Prediction, how: str, ranks: list[BenchResult]
            ) -> list[BenchResult]:
    """The ranks' results with their predictions and errors, and the job's total (its
    metric per repetition the sum over ranks; its error compares the sum of the ranks'
    figures, `measured`)."""
    base = {"sweep": "verify", "recipe": cand.label, "unit": cand.unit, "launcher": how,
            "prediction_run": pred.run_id, "ranks": len(ranks),
            "shape": f"{len(ranks)}x{cand.recipe.layout.threads}"}
    out = []
    for res, rp in zip(ranks, pred.ranks):
        m = measured(res)
        res.params.update(base, rank=rp.rank, predicted_gbs=rp.gbs,
                          predicted_kind=rp.gbs_kind, measured_gbs=m,
                          error_percent=error_percent(m, rp.gbs))
        out.append(res)
    n = min(len(r.metrics["bandwidth"].values) for r in ranks)
    sums = [sum(r.metrics["bandwidth"].values[i] for r in ranks) for i in range(n)]
    total = BenchResult("bandwidth", "triad verify total",
                        {**base, "kernel": "triad", "threads": sum(len(r.placement["cpus"])
                                                                   for r in ranks),
                         "predicted_gbs": pred.total, "predicted_kind": pred.total_kind},
                        {"bandwidth": Metric("bandwidth", "GB/s", True, sums,
                                             "per repetition, the sum over the ranks' "
                                             "repetitions of the same index")},
                        {"cpus": [c for r in ranks for c in r.placement["cpus"]]},
                        [n for r in ranks for n in r.notes])
    got = sum(measured(r) for r in ranks)
    total.params["measured_gbs"] = got
    total.params["error_percent"] = error_percent(got, pred.total)
    return out + [total]


def accuracy(results: list[BenchResult]) -> dict[str, dict[str, Any]]:
    """Verify's errors by the predicted figure's kind (module doc), in KINDS order: each
    kind's figures (a layout's total; with several ranks its ranks too: one rank's figure
    is its total), their errors in % and the median |error|. A figure without a prediction
    (no data) has no error and is not counted; a check stored before kinds were said is
    UNLABELLED, never guessed."""
    errs: dict[str, list[float]] = {}
    for r in results:
        if r.family != "bandwidth" or r.params.get("sweep") != "verify":
            continue
        e = r.params.get("error_percent")
        if not isinstance(e, (int, float)) or not math.isfinite(e):
            continue
        if not r.case.endswith("total") and int(r.params.get("ranks") or 1) < 2:
            continue
        kind = r.params.get("predicted_kind") or UNLABELLED
        errs.setdefault(kind, []).append(float(e))
    order = [*KINDS, UNLABELLED]
    return {k: {"figures": len(v), "errors_percent": [round(x, 1) for x in v],
                "median_abs_error_percent": round(statistics.median(abs(x) for x in v), 1),
                "meaning": MEANING.get(k, "")}
            for k, v in sorted(errs.items(), key=lambda kv: (order.index(kv[0])
                                                              if kv[0] in order else 99,
                                                              kv[0]))}


def store_run(topo: Topology, cand: Candidate, pred: Prediction, source: RunRecord,
              reps: int | None, store_path: Any) -> RunRecord:
    """Measure the candidate and store it as a run of its own (module doc)."""
    from numascope.results.run import utc_now
    from numascope.results.store import VERIFY_TAG, Store
    from numascope.suite import prepare
    lay = cand.recipe.layout
    rec, mon = prepare(topo, "quick", {VERIFY_TAG: f"{lay.ranks}x{lay.threads}",
                                       "recipe": cand.label})
    info = rec.stage("bandwidth")
    size_bytes, isa, nt = code_of(source)
    how, ranks = measure_ranks(topo, cand, size_bytes, reps_for(pred, size_bytes, reps),
                               isa, nt)
    rec.results = results(cand, pred, how, ranks)
    info.status, info.results = "done", len(rec.results)
    rec.status = "complete"
    rec.noise = mon.stop()
    rec.finished = utc_now()
    with Store.open(store_path, write=True) as st:
        st.save_run(rec)
    return rec
