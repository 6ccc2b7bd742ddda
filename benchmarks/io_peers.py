"""Storage: `numascope io` side by side with fio run directly on a job file written from fio's
own documentation, read through fio's own JSON field names (nothing of numascope's fio code is
used on the peer side).

    .venv/bin/python benchmarks/io_peers.py [--dir PARENT] [--rw randread] [--bs 4k]
        [--iodepth 32] [--numjobs 1] [--runtime 5] [--ramp 1] [--size 1G] [--reps 3]
        [--ioengine same|libaio|io_uring] [--quick]

Both tools work on files in one temporary folder the script creates under PARENT (default
/var/tmp) and removes at the end; never on a device. The runs alternate (numascope, fio,
numascope, fio …) so that drift of the drive hits both. Printed: both command lines, the
peer's job file, every run, then the medians of IOPS, bandwidth and completion-latency
percentiles with the ratios numascope / fio. --ioengine same (default) gives fio the engine
numascope's record says it used, so the two differ only in who drives fio.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _numascope import first_result

UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
# fio's JSON: clat_ns.percentile is keyed by the percentile written with six decimals
PERCENTILES = (("p50", "50.000000"), ("p99", "99.000000"))


def parse_size(text: str) -> int:
    t = text.strip().lower().removesuffix("ib").removesuffix("b")
    try:
        return int(float(t[:-1]) * UNITS[t[-1]]) if t[-1:] in UNITS else int(t)
    except ValueError:
        raise SystemExit(f"io_peers: not a size: {text!r}") from None


def ours_cmd(a: argparse.Namespace, where: Path) -> list[str]:
    return ["numascope", "io", "--dir", str(where), "--rw", a.rw, "--bs", str(a.bs),
            "--iodepth", str(a.iodepth), "--threads", str(a.numjobs), "--runtime",
            f"{a.runtime:g}", "--ramp", f"{a.ramp:g}", "--size", str(a.size), "--reps", "1",
            "--json"]


def job_file(a: argparse.Namespace, engine: str, where: Path) -> str:
    """A job in fio's documented options (fio(1), "JOB PARAMETERS"); time_based with ramp_time
    so the measured span is `runtime` seconds after `ramp_time`, as numascope's."""
    return "\n".join([
        "[global]",
        f"ioengine={engine}",
        "direct=1",
        f"rw={a.rw}",
        f"bs={a.bs}",
        f"iodepth={a.iodepth}",
        f"numjobs={a.numjobs}",
        f"size={a.size}",
        f"runtime={a.runtime:g}",
        f"ramp_time={a.ramp:g}",
        "time_based",
        "group_reporting",
        f"directory={where}",
        "",
        "[peer]",
        "",
    ])


def run_ours(cmd: list[str]) -> dict:
    r = first_result(cmd, "io_peers")
    m = r["metrics"]
    return {"iops": m["iops"]["median"], "bw": m["bandwidth"]["median"],
            "p50": m["clat_p50"]["median"], "p99": m["clat_p99"]["median"],
            "engine": r["params"]["engine"]}


def run_fio(cmd: list[str]) -> dict:
    """fio's own JSON: jobs[0] (one, group_reporting) .read/.write .iops, .bw_bytes,
    .clat_ns.percentile; reads and writes summed for IOPS and bandwidth, latency from reads
    (or writes when nothing was read)."""
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"io_peers: fio exited {p.returncode}: {p.stderr.strip()[-300:]}")
    job = json.loads(p.stdout[p.stdout.index("{"):])["jobs"][0]
    sides = [job[d] for d in ("read", "write") if job[d]["total_ios"] > 0]
    if not sides:
        raise SystemExit("io_peers: fio completed no I/O")
    pct = sides[0]["clat_ns"]["percentile"]
    return {"iops": sum(s["iops"] for s in sides),
            "bw": sum(s["bw_bytes"] for s in sides) / 1e6,
            **{name: pct[key] / 1e3 for name, key in PERCENTILES}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/var/tmp",
                    help="parent folder on the drive: the script makes its temp folder here")
    ap.add_argument("--rw", default="randread",
                    choices=["randread", "randwrite", "randrw", "read"])
    ap.add_argument("--bs", default="4k")
    ap.add_argument("--iodepth", type=int, default=32)
    ap.add_argument("--numjobs", type=int, default=1)
    ap.add_argument("--runtime", type=float, default=5.0)
    ap.add_argument("--ramp", type=float, default=1.0)
    ap.add_argument("--size", default="1G")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--ioengine", default="same", choices=["same", "libaio", "io_uring"])
    ap.add_argument("--quick", action="store_true",
                    help="16 MiB file, 1 run of 1 s without ramp: checks that it runs")
    a = ap.parse_args(argv)
    if a.quick:
        a.size, a.runtime, a.ramp, a.reps = "16M", 1.0, 0.0, 1
    if a.reps < 1:
        print("io_peers: --reps must be >= 1", file=sys.stderr)
        return 2
    a.bs, a.size = parse_size(a.bs), parse_size(a.size)
    fio = shutil.which("fio")
    if not fio:
        print("skipped: fio not installed")
        return 0
    if not Path(a.dir).is_dir():
        print(f"io_peers: --dir {a.dir}: not a folder", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="numascope-io-peers-", dir=a.dir))
    try:
        return compare(a, fio, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def compare(a: argparse.Namespace, fio: str, tmp: Path) -> int:
    ours_dir, peer_dir = tmp / "numascope", tmp / "fio"
    ours_dir.mkdir()
    peer_dir.mkdir()
    ours = ours_cmd(a, ours_dir)
    o_runs, f_runs = [], []
    peer: list[str] = []
    for i in range(a.reps):
        o = run_ours(ours)
        if not peer:
            engine = o["engine"] if a.ioengine == "same" else a.ioengine
            job = peer_dir / "peer.fio"
            job.write_text(job_file(a, engine, peer_dir))
            peer = [fio, "--output-format=json", str(job)]
            print(f"numascope: {shlex.join(ours)}   (its fio engine: {o['engine']})")
            print(f"fio:       {shlex.join(peer)}")
            print("  " + job.read_text().strip().replace("\n", "\n  "))
        f = run_fio(peer)
        o_runs.append(o)
        f_runs.append(f)
        print(f"run {i + 1}: numascope {o['iops']:,.0f} IO/s {o['bw']:.1f} MB/s p99 "
              f"{o['p99']:.0f} us   fio {f['iops']:,.0f} IO/s {f['bw']:.1f} MB/s p99 "
              f"{f['p99']:.0f} us")
    print(f"\nmedians of {a.reps} alternating run(s); MB = 10^6 B; completion latency in us")
    for key, label in (("iops", "IOPS"), ("bw", "MB/s"), ("p50", "clat p50"),
                       ("p99", "clat p99")):
        om = statistics.median(r[key] for r in o_runs)
        fm = statistics.median(r[key] for r in f_runs)
        ratio = om / fm if fm else float("nan")
        print(f"  {label:9s} numascope {om:12,.1f}  fio {fm:12,.1f}  ratio {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
