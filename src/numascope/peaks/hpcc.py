"""Real HPL through the HPC Challenge suite (`hpcc`, Debian package hpcc + openmpi).

hpcc reads hpccinf.txt from its working directory and writes hpccoutf.txt there; we run it
in a temporary directory, alone or under `mpirun -np P`, and parse the summary section
("Begin of Summary section." … "End of Summary section."). The result counts only when the
HPL scaled residual ||Ax-b||_oo / (eps (||A||_oo ||x||_oo + ||b||_oo) N) is below 16 (HPL's
own threshold), recomputed from the summary, and hpcc reported Success=1."""

from __future__ import annotations

import math
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from numascope.errors import MeasurementError, Unavailable, UserError
from numascope.host import host
from numascope.procs import which

THRESHOLD = 16.0      # HPL 2.3's scaled-residual check (HPL.dat default; numascope.sources)
SHORT_N = 4000        # the default: a few seconds with an optimized BLAS, ~10 s without


def parse_summary(text: str) -> dict[str, str]:
    """key=value lines between the summary markers (raises MeasurementError if absent)."""
    if "Begin of Summary section." not in text:
        raise MeasurementError("hpcc output has no summary section (did hpcc finish?)")
    body = text.split("Begin of Summary section.", 1)[1].split("End of Summary section.", 1)[0]
    out = {}
    for line in body.splitlines():
        k, sep, v = line.strip().partition("=")
        if sep:
            out[k.strip()] = v.strip()
    return out


@dataclass
class HplResult:
    gflops: float
    n: int
    nb: int
    p: int
    q: int
    procs: int
    seconds: float
    residual: float           # scaled residual, HPL's definition
    passed: bool
    summary: dict[str, str] = field(repr=False, default_factory=dict)
    launcher: str = ""        # the exact command line hpcc ran under
    bound: list[list[int]] | None = field(default=None, repr=False)  # --report-bindings

    def to_dict(self) -> dict[str, Any]:
        d = dict(vars(self))
        d.pop("summary")
        if d["bound"] is None:
            d.pop("bound")
        return d


def hpl_from_summary(s: dict[str, str]) -> HplResult:
    """The HPL figures of a parsed summary, with the residual check recomputed."""
    try:
        tflops = float(s["HPL_Tflops"])
        n = int(s["HPL_N"])
        eps = float(s["HPL_eps"])
        r = float(s["HPL_RnormI"]) / (eps * (float(s["HPL_AnormI"]) * float(s["HPL_XnormI"])
                                             + float(s["HPL_BnormI"])) * n)
    except (KeyError, ValueError, ZeroDivisionError) as e:
        raise MeasurementError(f"hpcc summary lacks the HPL figures ({e})") from None
    passed = s.get("Success", "1") == "1" and math.isfinite(r) and r < THRESHOLD and tflops > 0
    return HplResult(gflops=tflops * 1000, n=n, nb=int(s.get("HPL_NB", 0)),
                     p=int(s.get("HPL_nprow", 1)), q=int(s.get("HPL_npcol", 1)),
                     procs=int(s.get("CommWorldProcs", 1)), seconds=float(s.get("HPL_time", 0)),
                     residual=r, passed=passed, summary=s)


def grid(procs: int) -> tuple[int, int]:
    """P × Q = procs with P ≤ Q and as square as possible (HPL's advice)."""
    p = math.isqrt(procs)
    while procs % p:
        p -= 1
    return p, procs // p


def size_n(available_bytes: int, fraction: float = 0.8, nb: int = 192) -> int:
    """The largest N (multiple of NB) whose N² doubles fit in `fraction` of the memory."""
    n = int(math.sqrt(fraction * available_bytes / 8))
    return max(nb, n - n % nb)


MIN_N = 100


def check_procs(procs: int) -> None:
    if procs < 1:
        raise UserError(f"--hpl-np must be at least 1 (got {procs})")


def check_n(n: int) -> None:
    if n < MIN_N:
        raise UserError(f"--hpl-n {n}: HPL N is too small (at least {MIN_N})")


def input_file(n: int, nb: int, p: int, q: int) -> str:
    """hpccinf.txt (HPL.dat layout plus the PTRANS lines hpcc adds)."""
    return f"""HPLinpack benchmark input file
numascope
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
{n}         Ns
1            # of NBs
{nb}          NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
{p}            Ps
{q}            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      		Number of additional problem sizes for PTRANS
1200 10000 30000        	values of N
0                       	number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       	values of NB
"""


def command(procs: int) -> list[str]:
    """hpcc alone (one process) or under mpirun; raises Unavailable when missing."""
    exe = shutil.which("hpcc")
    if not exe:
        raise Unavailable("hpcc is not installed (Debian/Ubuntu: apt install hpcc)")
    if procs == 1:
        return [exe]
    mpirun = which("mpirun")
    if not mpirun:
        raise Unavailable("mpirun is not installed (needed for hpcc with more than 1 process)")
    cmd = [mpirun]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")  # Open MPI refuses root without it
    return cmd + ["-np", str(procs), exe]


BLAS_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "BLIS_NUM_THREADS")


def layout_command(lay: Any, topo: Any = None) -> tuple[list[str], dict[str, str]]:
    """hpcc under mpirun with a layout's generated Open MPI line (numascope.recipes): ranks
    bound as the layout says, BLAS/OpenMP threads inside each rank, --report-bindings so
    the run shows where the ranks really went. Returns (argv, files to write: a rankfile
    for an irregular layout). Unavailable when hpcc or mpirun is missing."""
    from numascope.recipes import openmpi_argv
    exe = shutil.which("hpcc")
    if not exe:
        raise Unavailable("hpcc is not installed (Debian/Ubuntu: apt install hpcc)")
    mpirun = which("mpirun")
    if not mpirun:
        raise Unavailable("mpirun is not installed (needed for hpcc with a rank layout)")
    argv, files = openmpi_argv(lay, [exe], mpirun=mpirun, topo=topo)
    head = [mpirun] + (["--allow-run-as-root"] if os.geteuid() == 0 else []) + \
        ["--report-bindings"]
    blas = [x for k in BLAS_THREADS[1:] for x in ("-x", f"{k}={lay.threads}")]
    prog = argv.index(exe)
    return head + argv[1:prog] + blas + argv[prog:], files


def run_hpl(procs: int = 1, n: int | None = None, nb: int = 192, big: bool = False,
            timeout: float = 3600, root: str | Path = "/", layout: Any = None,
            topo: Any = None) -> HplResult:
    """Run hpcc in a temporary directory and return its checked HPL result.

    N: given, or SHORT_N (a short run), or with big=True the largest that fits in 80 % of
    MemAvailable. With a `layout` (numascope.layouts.Layout) the processes are its ranks,
    launched by its generated mpirun line (layout_command); `topo` turns the
    --report-bindings output into CPU ids (HplResult.bound). Raises Unavailable (no
    hpcc/mpirun, timed out), MeasurementError (failed residual, no summary), UserError (bad
    sizes)."""
    if layout is not None:
        procs = layout.ranks
    check_procs(procs)
    h = host(root)
    avail = h.mem_available()
    if n is None:
        n = size_n(avail, 0.8, nb) if big and avail else SHORT_N
    check_n(n)
    try:
        h.check_fits(8 * n * n, f"HPL N={n}")
    except UserError as e:    # the flag that sizes HPL is --hpl-n, not --size
        raise UserError(str(e).replace("--size", "--hpl-n")) from None
    p, q = grid(procs)
    files: dict[str, str] = {}
    if layout is not None:
        cmd, files = layout_command(layout, topo)
    else:
        cmd = command(procs)
    with tempfile.TemporaryDirectory(prefix="numascope-hpcc-") as d:
        Path(d, "hpccinf.txt").write_text(input_file(n, nb, p, q))
        for name, text in files.items():
            Path(d, name).write_text(text)
        t0 = time.monotonic()
        try:
            proc = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=timeout,
                                  check=False)
        except subprocess.TimeoutExpired:
            raise Unavailable(f"hpcc did not finish within {timeout:.0f} s (N={n})") from None
        out = Path(d, "hpccoutf.txt")
        if not out.exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise MeasurementError(f"hpcc wrote no hpccoutf.txt (exit {proc.returncode}): "
                                   f"{tail[0]}")
        res = hpl_from_summary(parse_summary(out.read_text()))
        res.summary["wall_seconds"] = f"{time.monotonic() - t0:.3f}"
        res.launcher = shlex.join(cmd)
        if layout is not None and topo is not None:
            from numascope.recipes import parse_report_bindings, report_cpus
            seen = report_cpus(parse_report_bindings(f"{proc.stdout}\n{proc.stderr}"), topo)
            res.bound = [seen[r] for r in sorted(seen)] if seen else None
    if not res.passed:
        raise MeasurementError(f"HPL residual check failed: scaled residual {res.residual:.3g} "
                               f"(must be < {THRESHOLD:g})")
    return res
