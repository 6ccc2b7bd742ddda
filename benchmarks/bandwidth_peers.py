"""numascope's bandwidth kernels side by side with likwid-bench and hpcc's STREAM.

    .venv/bin/python benchmarks/bandwidth_peers.py [--threads T] [--size 1G] [--reps 5]
                                                   [--hpcc-n 4000] [--no-hpcc] [--no-likwid]

Same run, same CPUs (the first T of numascope's compact order; likwid places T threads on
its node domain N, physical cores first, which is the same set; hpcc runs T MPI processes
bound to cores), same byte convention: STREAM bytes without write-allocate
(read/fill 8 B/element, copy/scale 16, add/triad 24), GB = 10^9 B, best of the repetitions.

Kernel matching:
  numascope triad  A = B + s*C   <-> likwid stream*    (24 B/el)  <-> hpcc STREAM Triad
  numascope copy   C = A         <-> likwid copy*      (16 B/el)  <-> hpcc STREAM Copy
  numascope scale, add                                            <-> hpcc STREAM Scale, Add
  numascope read   sum A         <-> likwid load*      ( 8 B/el)
  numascope fill   A = s         <-> likwid store*     ( 8 B/el)
likwid's triad* (A = B + C*D, 32 B/el) is a different kernel and is not compared; its *_mem*
variants use streaming stores, as numascope's -nt variants do.

Array sizes: block 1 uses --size per array (default numascope's 4 x LLC) for numascope and
likwid. hpcc ties its STREAM arrays to its HPL problem size N (each of T processes gets
N^2/(3T) doubles per array) and always runs HPL first (time ~ N^3), so block 2 compares
hpcc with numascope and likwid at hpcc's total array size, which may be cache-sized unless
--hpcc-n is large. A peer that is not installed prints "not installed"; the rest still runs.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from numascope import placement
from numascope.bench import bandwidth as bw
from numascope.bench.bw_sizes import default_array_bytes, format_bytes, parse_size
from numascope.errors import MeasurementError, Unavailable, UserError
from numascope.topology import read_topology

LIKWID_FAMILIES = {"triad": "stream", "copy": "copy", "read": "load", "fill": "store"}
HPCC_KERNELS = {"copy": "Copy", "scale": "Scale", "add": "Add", "triad": "Triad"}


# -- numascope ----------------------------------------------------------------------------------
def run_numascope(topo, kernel: str, cpus: list[int], size: int, reps: int) -> tuple[float, str]:
    r = bw.measure(topo, kernel=kernel, cpus=cpus, size_bytes=size, reps=reps)
    return r.metrics["bandwidth"].best, f"{r.params['isa']}" + \
        ("-nt" if r.params["stores"] == "streaming" else "")


# -- likwid-bench -------------------------------------------------------------------------------
def likwid_kernels(family: str, every: bool = False) -> list[str]:
    """likwid-bench's double-precision kernels of a family that this CPU can run: the AVX
    and AVX-512 ones with ordinary and streaming stores, or every variant."""
    p = subprocess.run(["likwid-bench", "-a"], capture_output=True, text=True, check=False)
    names = [ln.split()[0] for ln in p.stdout.splitlines() if ln.strip()]
    flags = Path("/proc/cpuinfo").read_text()
    out = []
    for n in names:
        if not re.fullmatch(rf"{family}(_mem)?(_sse|_avx|_avx512)?(_fma)?", n):
            continue
        if "avx512" in n and "avx512f" not in flags:
            continue
        if "_avx" in n and "avx512" not in n and " avx " not in flags:
            continue
        if every or re.fullmatch(rf"{family}(_mem)?_avx(512)?", n):
            out.append(n)
    return out


def run_likwid(test: str, total_bytes: int, threads: int, reps: int) -> tuple[float, str]:
    """Best of `reps` runs of `likwid-bench -t test -w N:<total>:T`; GB/s (10^9) from its
    MByte/s (10^6 B/s, loads + stores, no write-allocate). Returns (GB/s, hwthreads used)."""
    best, cpus = 0.0, ""
    kb = max(1, total_bytes // 1000)
    for _ in range(reps):
        p = subprocess.run(["likwid-bench", "-t", test, "-w", f"N:{kb}kB:{threads}", "-i", "5"],
                           capture_output=True, text=True, check=False, timeout=600)
        m = re.search(r"MByte/s:\s+([\d.]+)", p.stdout)
        if p.returncode != 0 or not m:
            tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"likwid-bench {test} failed: {tail[0]}")
        best = max(best, float(m.group(1)) / 1000)
        cpus = ",".join(re.findall(r"running on hwthread (\d+)", p.stdout))
    return best, cpus


# -- hpcc ---------------------------------------------------------------------------------------
def run_hpcc(threads: int, n: int, timeout: float) -> dict[str, float]:
    """hpcc's STREAM with T processes: StarSTREAM (all processes at once; per-process GB/s,
    summed here) and SingleSTREAM (one process alone). Keys like 'Star_Triad', 'vector'."""
    from numascope.peaks.hpcc import command, grid, input_file, parse_summary
    p, q = grid(threads)
    cmd = command(threads)
    with tempfile.TemporaryDirectory(prefix="numascope-hpcc-") as d:
        Path(d, "hpccinf.txt").write_text(input_file(n, 192, p, q))
        try:
            subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=timeout,
                           check=False)
        except subprocess.TimeoutExpired:
            raise Unavailable(f"hpcc did not finish in {timeout:.0f} s (N={n})") from None
        out = Path(d, "hpccoutf.txt")
        if not out.exists():
            raise MeasurementError("hpcc wrote no hpccoutf.txt")
        s = parse_summary(out.read_text())
    res = {"vector": float(s["STREAM_VectorSize"]), "procs": float(s["CommWorldProcs"])}
    for k in HPCC_KERNELS.values():
        res[f"Star_{k}"] = float(s[f"StarSTREAM_{k}"]) * res["procs"]
        res[f"Single_{k}"] = float(s[f"SingleSTREAM_{k}"])
    return res


# -- report -------------------------------------------------------------------------------------
def row(kernel: str, ours: tuple[float, str] | None, peers: dict[str, float | str]) -> None:
    nums = {k: v for k, v in peers.items() if isinstance(v, float) and v > 0}
    peer_txt = "  ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k}: {v}"
                         for k, v in peers.items())
    if ours is None:
        print(f"  {kernel:6s} numascope: failed  |  {peer_txt}")
        return
    best_peer = max(nums.items(), key=lambda kv: kv[1]) if nums else None
    ratio = f"ratio {ours[0] / best_peer[1]:.3f} vs {best_peer[0]}" if best_peer else "no peer"
    print(f"  {kernel:6s} numascope {ours[0]:.2f} ({ours[1]})  |  {peer_txt}  |  {ratio}")


def block(topo, kernels: list[str], cpus: list[int], size: int, reps: int,
          likwid: bool, hpcc: dict[str, float] | None, every: bool = False) -> None:
    t = len(cpus)
    for k in kernels:
        try:
            ours = run_numascope(topo, k, cpus, size, reps)
        except (MeasurementError, UserError) as e:
            print(f"  {k}: numascope: {e}")
            ours = None
        peers: dict[str, float | str] = {}
        fam = LIKWID_FAMILIES.get(k)
        if fam and likwid:
            for test in likwid_kernels(fam, every):
                try:
                    # likwid's size is the total of all its streams
                    streams = {"stream": 3, "copy": 2, "load": 1, "store": 1}[fam]
                    peers[f"likwid:{test}"], _ = run_likwid(test, streams * size, t, reps)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    peers[f"likwid:{test}"] = f"failed ({e})"
        elif fam:
            peers["likwid"] = "not installed"
        if hpcc is not None and k in HPCC_KERNELS:
            peers[f"hpcc:Star{HPCC_KERNELS[k]}"] = hpcc[f"Star_{HPCC_KERNELS[k]}"]
            if t == 1:
                peers[f"hpcc:Single{HPCC_KERNELS[k]}"] = hpcc[f"Single_{HPCC_KERNELS[k]}"]
        row(k, ours, peers)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=None, help="threads (default: all usable)")
    ap.add_argument("--size", default=None, help="bytes per array (default 4 x LLC)")
    ap.add_argument("--reps", type=int, default=5, help="repetitions (best is reported)")
    ap.add_argument("--kernels", default="read,fill,copy,scale,add,triad")
    ap.add_argument("--hpcc-n", type=int, default=4000,
                    help="hpcc's HPL N, which sets its STREAM arrays (default 4000)")
    ap.add_argument("--hpcc-timeout", type=float, default=900)
    ap.add_argument("--no-hpcc", action="store_true")
    ap.add_argument("--no-likwid", action="store_true")
    ap.add_argument("--likwid-all", action="store_true",
                    help="every likwid variant (scalar, SSE, FMA …), not only AVX/AVX-512")
    a = ap.parse_args(argv)
    try:
        topo = read_topology("/")
        cpus = placement.select_cpus(topo, "all", "compact", a.threads)
        size = parse_size(a.size) if a.size else default_array_bytes(topo.llc_bytes(cpus))
        kernels = [k.strip() for k in a.kernels.split(",") if k.strip()]
        for k in kernels:
            if k not in bw.KERNELS:
                raise UserError(f"unknown kernel {k!r}")
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    t = len(cpus)
    likwid = bool(shutil.which("likwid-bench")) and not a.no_likwid
    print(f"CPUs {placement.format_cpulist(cpus)} ({t} threads); GB/s, GB = 10^9 B, STREAM "
          f"bytes (no write-allocate), best of {a.reps}")
    if not likwid:
        print("likwid-bench: " + ("skipped" if a.no_likwid else "not installed"))

    print(f"\n[1] arrays of {format_bytes(size)} each (numascope vs likwid-bench)")
    block(topo, kernels, cpus, size, a.reps, likwid, None, a.likwid_all)

    if a.no_hpcc:
        print("\nhpcc: skipped")
        return 0
    if not shutil.which("hpcc") or (t > 1 and not shutil.which("mpirun")):
        print("\nhpcc: not installed" + (" (or mpirun missing)" if t > 1 else ""))
        return 0
    print(f"\n[2] hpcc STREAM at N={a.hpcc_n}: running hpcc (HPL first, ~N^3) …", flush=True)
    try:
        h = run_hpcc(t, a.hpcc_n, a.hpcc_timeout)
    except (Unavailable, MeasurementError, KeyError, ValueError) as e:
        print(f"hpcc: failed ({e})")
        return 0
    per_proc = int(h["vector"]) * 8
    total = per_proc * t
    note = "" if total >= 4 * topo.llc_bytes(cpus) else \
        " - smaller than 4 x LLC: cache-inflated for every tool; raise --hpcc-n"
    print(f"    hpcc arrays: {format_bytes(per_proc)} per process x {t} = "
          f"{format_bytes(total)} per array in total{note}")
    hk = [k for k in kernels if k in HPCC_KERNELS]
    block(topo, hk, cpus, total, a.reps, likwid, h, a.likwid_all)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
