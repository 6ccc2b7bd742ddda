"""numascope's bandwidth kernels side by side with likwid-bench and hpcc's STREAM.

    .venv/bin/python benchmarks/bandwidth_peers.py [--threads T] [--size 1G] [--reps 5]
                                                   [--hpcc-n 4000] [--no-hpcc] [--no-likwid]

Same run, same CPUs (the first T of numascope's compact order; likwid places T threads on
its node domain N, physical cores first, and the script checks from likwid's output that it
ran on exactly those CPUs; hpcc runs T MPI processes bound to cores), same byte convention:
STREAM bytes without write-allocate (read/fill 8 B/element, copy/scale 16, add/triad 24),
GB = 10^9 B, medians (not the best repetition).

Each peer runs as its users run it: likwid-bench with -W (every thread allocates and first
touches its own chunk; -w would let one thread touch every page) and its default run time,
with 4 KiB pages (its default when THP is "madvise") and then with THP through glibc's
malloc tunable (its best setting); numascope with the same two page kinds. The share of
huge pages is printed for both, read from the kernel while they run.

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
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from numascope import placement
from numascope.errors import MeasurementError, Unavailable, UserError
from numascope.families.bandwidth import bench as bw
from numascope.families.bandwidth.sizes import default_array_bytes, format_bytes, parse_size
from numascope.memspec import MemorySpec
from numascope.topology import read_topology

LIKWID_FAMILIES = {"triad": "stream", "copy": "copy", "read": "load", "fill": "store"}
# likwid's size is the total of all streams of a kernel family
LIKWID_STREAMS = {"stream": 3, "copy": 2, "load": 1, "store": 1}
HPCC_KERNELS = {"copy": "Copy", "scale": "Scale", "add": "Add", "triad": "Triad"}


# -- numascope ----------------------------------------------------------------------------------
def numascope_cmd(kernel: str, cpus: list[int], size: int, reps: int, pages: str) -> str:
    return (f"numascope bw --kernel {kernel} --cpus {placement.format_cpulist(cpus)} "
            f"--size {size} --reps {reps} --pages {pages}")


def run_numascope(topo, kernel: str, cpus: list[int], size: int, reps: int,
                  pages: str = "thp") -> tuple[float, str, float | None]:
    """Median of `reps` repetitions of numascope's fastest variant: (GB/s, variant, share of
    the arrays on huge pages as the kernel reports it)."""
    r = bw.measure(topo, kernel=kernel, cpus=cpus, size_bytes=size, reps=reps,
                   memory=MemorySpec(pages=pages))
    variant = r.params["isa"] + ("-nt" if r.params["stores"] == "streaming" else "")
    share = r.placement.get("huge_fraction")
    return r.metrics["bandwidth"].median, variant, share if share is None or share >= 0 else None


# -- likwid-bench -------------------------------------------------------------------------------
# likwid-bench allocates its streams with posix_memalign and no madvise: with THP in "madvise"
# mode it gets 4 KiB pages. glibc's own tunable makes malloc ask for THP (madvise) on large
# allocations, which is likwid's best setting on such a machine without changing the system.
THP_TUNABLE = {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}


def thp_mode() -> str:
    try:
        txt = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
        return re.search(r"\[(\w+)\]", txt).group(1)  # type: ignore[union-attr]
    except (OSError, AttributeError):
        return "unknown"


def likwid_runnable(family: str) -> list[str]:
    """likwid-bench's double-precision tests of a family (plain, _mem, SSE/AVX/AVX-512,
    FMA) that this CPU can run."""
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
        out.append(n)
    return out


def likwid_kernels(family: str, every: bool = False) -> list[str]:
    """The AVX and AVX-512 kernels of a family with ordinary and streaming stores, or every
    variant this CPU runs."""
    return [n for n in likwid_runnable(family)
            if every or re.fullmatch(rf"{family}(_mem)?_avx(512)?", n)]


def likwid_cmd(test: str, total_bytes: int, threads: int,
               seconds: float | None = None) -> list[str]:
    """likwid-bench as its users run it for a bandwidth figure: -W, so each thread allocates
    and initialises its own chunk (first touch on its own node; -w would have one thread
    touch every page), default run time (-s 1 s) unless `seconds` is given."""
    run = ["-s", f"{seconds:g}"] if seconds else []
    return ["likwid-bench", "-t", test, *run, "-W",
            f"N:{max(1, total_bytes // 1000)}kB:{threads}"]


def _anon_kb(pid: int) -> tuple[int, int] | None:
    """(Anonymous, AnonHugePages) of a running process in kB (None when unreadable)."""
    try:
        txt = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return None
    kb = {k: int(v) for k, v in re.findall(r"^(\w+):\s+(\d+) kB", txt, re.MULTILINE)}
    return kb.get("Anonymous", 0), kb.get("AnonHugePages", 0)


def _watch_huge_share(proc: subprocess.Popen) -> float | None:
    """Poll the process while it runs; the huge-page share when its memory was largest
    (its streams fully allocated), or None when never readable."""
    best = None
    while proc.poll() is None:
        got = _anon_kb(proc.pid)
        if got and got[0] and (best is None or got[0] > best[0]):
            best = got
        time.sleep(0.05)
    return best[1] / best[0] if best else None


def run_likwid(test: str, total_bytes: int, cpus: list[int], reps: int,
               thp: bool, seconds: float | None = None) -> tuple[float, float | None]:
    """Median over `reps` runs of likwid-bench; GB/s (10^9) from its MByte/s (10^6 B/s,
    loads + stores, no write-allocate), and the share of its memory on huge pages (sampled
    from /proc while it runs). Raises RuntimeError when it fails or runs on other CPUs."""
    env = dict(os.environ, **(THP_TUNABLE if thp else {}))
    rates: list[float] = []
    share = None
    for _ in range(reps):
        proc = subprocess.Popen(likwid_cmd(test, total_bytes, len(cpus), seconds), env=env,
                                text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # read the pipes in the background while /proc is polled (likwid prints little)
        with ThreadPoolExecutor(1) as ex:
            comm = ex.submit(proc.communicate, timeout=600)
            share = _watch_huge_share(proc)
            out, err = comm.result()
        m = re.search(r"MByte/s:\s+([\d.]+)", out)
        if proc.returncode != 0 or not m:
            tail = (err or out).strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"likwid-bench {test} failed: {tail[0]}")
        ran = sorted({int(c) for c in re.findall(r"running on hwthread (\d+)", out)})
        if ran != sorted(cpus):
            raise RuntimeError(f"likwid-bench ran on CPUs {ran}, numascope on {sorted(cpus)}")
        rates.append(float(m.group(1)) / 1000)
    return statistics.median(rates), share


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
def _pages(share: float | None) -> str:
    return "pages ?" if share is None else f"{share:4.0%} huge"


def _line(tool: str, setting: str, gbs: float | None, extra: str) -> None:
    val = f"{gbs:8.2f}" if gbs is not None else "  failed"
    print(f"    {tool:10s} {setting:26s} {val}  {extra}")


def block(topo, kernels: list[str], cpus: list[int], size: int, reps: int,
          likwid: bool, hpcc: dict[str, float] | None, every: bool = False,
          likwid_seconds: float | None = None) -> None:
    """One kernel after the other: numascope and likwid-bench each with 4 KiB pages (likwid's
    default here) and with THP (numascope's default, likwid through glibc's tunable), medians;
    then the ratios on equal pages and of each tool's best setting."""
    t = len(cpus)
    for k in kernels:
        print(f"  {k}")
        ours: dict[str, float] = {}
        for pages in ("none", "thp"):
            try:
                gbs, variant, share = run_numascope(topo, k, cpus, size, reps, pages)
                ours[pages] = gbs
                _line("numascope", f"{variant}, --huge {pages}", gbs, _pages(share))
            except (MeasurementError, UserError) as e:
                _line("numascope", f"--huge {pages}", None, str(e))
        theirs: dict[str, tuple[float, str]] = {}
        fam = LIKWID_FAMILIES.get(k)
        if fam and likwid:
            streams = LIKWID_STREAMS[fam]
            for test in likwid_kernels(fam, every):
                for thp in (False, True):
                    pages = "thp" if thp else "none"
                    setting = f"{test}" + (" +THP tunable" if thp else "")
                    try:
                        gbs, share = run_likwid(test, streams * size, cpus, reps, thp,
                                                likwid_seconds)
                    except (RuntimeError, subprocess.TimeoutExpired) as e:
                        _line("likwid", setting, None, str(e))
                        continue
                    _line("likwid", setting, gbs, _pages(share))
                    if gbs > theirs.get(pages, (0.0, ""))[0]:
                        theirs[pages] = (gbs, test)
        elif fam:
            print("    likwid     skipped: likwid-bench not installed")
        if hpcc is not None and k in HPCC_KERNELS:
            theirs["hpcc"] = (hpcc[f"Star_{HPCC_KERNELS[k]}"], f"Star{HPCC_KERNELS[k]}")
            _line("hpcc", f"Star{HPCC_KERNELS[k]} (x{t} procs)", theirs["hpcc"][0], "")
            if t == 1:
                _line("hpcc", f"Single{HPCC_KERNELS[k]}", hpcc[f"Single_{HPCC_KERNELS[k]}"], "")
        ratios = []
        for pages in ("none", "thp"):
            if pages in ours and pages in theirs:
                ratios.append(f"--huge {pages}: {ours[pages] / theirs[pages][0]:.3f} "
                              f"(vs likwid {theirs[pages][1]})")
        best_ours = max(ours.values(), default=None)
        best_theirs = max(theirs.values(), default=None)
        if best_ours and best_theirs:
            ratios.append(f"best vs best: {best_ours / best_theirs[0]:.3f} "
                          f"(vs {best_theirs[1]})")
        print("    ratio numascope / peer, " + ("; ".join(ratios) or "no peer"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default=None,
                    help="thread counts, e.g. 1,2 (default: 1 and all usable)")
    ap.add_argument("--size", default=None, help="bytes per array (default 4 x LLC)")
    ap.add_argument("--reps", type=int, default=5,
                    help="numascope repetitions and likwid-bench runs (medians are compared)")
    ap.add_argument("--kernels", default="read,fill,copy,scale,add,triad")
    ap.add_argument("--hpcc-n", type=int, default=4000,
                    help="hpcc's HPL N, which sets its STREAM arrays (default 4000)")
    ap.add_argument("--hpcc-timeout", type=float, default=900)
    ap.add_argument("--no-hpcc", action="store_true")
    ap.add_argument("--no-likwid", action="store_true")
    ap.add_argument("--likwid-all", action="store_true",
                    help="every likwid variant (scalar, SSE, FMA …), not only AVX/AVX-512")
    ap.add_argument("--likwid-seconds", type=float, default=None,
                    help="likwid-bench's minimal run time -s (default: its own, 1 s)")
    ap.add_argument("--quick", action="store_true",
                    help="1 thread, triad, 4 MiB, 1 rep, likwid -s 0.2, hpcc N=300: checks "
                         "that it runs")
    a = ap.parse_args(argv)
    if a.quick:
        a.threads, a.size, a.reps, a.kernels = "1", "4M", 1, "triad"
        a.hpcc_n, a.likwid_seconds = 300, 0.2
    try:
        topo = read_topology("/")
        every = placement.select_cpus(topo, "all", "compact")
        counts = ([int(x) for x in a.threads.split(",")] if a.threads
                  else sorted({1, len(every)}))
        teams = [placement.select_cpus(topo, "all", "compact", c) for c in counts]
        size = parse_size(a.size) if a.size else default_array_bytes(topo.llc_bytes(every))
        kernels = [k.strip() for k in a.kernels.split(",") if k.strip()]
        for k in kernels:
            if k not in bw.KERNELS:
                raise UserError(f"unknown kernel {k!r}")
    except (UserError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    likwid = bool(shutil.which("likwid-bench")) and not a.no_likwid
    print(f"GB/s, GB = 10^9 B, STREAM bytes (no write-allocate), median of {a.reps} "
          f"(numascope: repetitions in one call; likwid-bench: separate runs, each its own "
          f"average over >= 1 s); THP mode here: {thp_mode()}")
    if not likwid:
        print("likwid-bench: skipped" if a.no_likwid else "skipped: likwid-bench not installed")
    k0 = kernels[0]
    print("command lines (first kernel, last team):")
    print(f"  {numascope_cmd(k0, teams[-1], size, a.reps, 'none|thp')}")
    if likwid and k0 in LIKWID_FAMILIES:
        streams = LIKWID_STREAMS[LIKWID_FAMILIES[k0]]
        cmd = " ".join(likwid_cmd(f"{LIKWID_FAMILIES[k0]}_avx", streams * size,
                                  len(teams[-1]), a.likwid_seconds))
        print(f"  {cmd}   (and with {THP_TUNABLE['GLIBC_TUNABLES']} in GLIBC_TUNABLES)")

    for cpus in teams:
        print(f"\n[1] {len(cpus)} thread(s) on CPUs {placement.format_cpulist(cpus)}, arrays "
              f"of {format_bytes(size)} each (numascope vs likwid-bench)")
        block(topo, kernels, cpus, size, a.reps, likwid, None, a.likwid_all, a.likwid_seconds)

    if a.no_hpcc:
        print("\nhpcc: skipped")
        return 0
    cpus = teams[-1]
    t = len(cpus)
    if not shutil.which("hpcc"):
        print("\nskipped: hpcc not installed")
        return 0
    if t > 1 and not shutil.which("mpirun"):
        print("\nskipped: mpirun not installed (hpcc runs T processes through it)")
        return 0
    print(f"\n[2] hpcc STREAM at N={a.hpcc_n} with {t} process(es), as hpcc's users run it "
          f"(HPL first, ~N^3) …", flush=True)
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
    block(topo, hk, cpus, total, a.reps, likwid, h, a.likwid_all, a.likwid_seconds)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
