"""numascope io side by side with fio run directly on the identical job file.

    .venv/bin/python benchmarks/io_peers.py --dir DIR [--rw randread] [--bs 4k] [--iodepth 32]
                                            [--runtime 5] [--ramp 1] [--size 1G] [--reps 3]

numascope builds its case for DIR (placed local to the drive when its node is known,
unpinned otherwise) and measures it the way `numascope io` does (Storage.measure inside
reusing_files(): its own file, laid out by fio once, removed at the end). The job text it
ran, unchanged (same file name), is then written to a job file and given to
`fio --output-format=json` directly. The runs alternate (numascope, fio, numascope, fio …) so
that drift of the drive hits both; the medians of IOPS and their ratio are printed, with the
target of issue #13: numascope within +-5 % of fio (numascope adds orchestration, not
overhead). fio's layout of a file is outside its timed run for both.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from numascope.bench.io import Storage
from numascope.bench.io_fio import IoParams, fio_path, fio_version, parse, probe
from numascope.errors import MeasurementError, Unavailable, UserError
from numascope.topology import read_topology
from numascope.units import parse_size

TOLERANCE = 0.05


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default=None, help="folder on the drive (default: a temp folder)")
    ap.add_argument("--rw", default="randread")
    ap.add_argument("--bs", default=None)
    ap.add_argument("--iodepth", type=int, default=32)
    ap.add_argument("--numjobs", type=int, default=1)
    ap.add_argument("--runtime", type=float, default=5.0)
    ap.add_argument("--ramp", type=float, default=1.0)
    ap.add_argument("--size", default="1G")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1,
                    help="untimed numascope runs first (the freshly laid-out file settles)")
    a = ap.parse_args()
    tmp = None
    if a.dir is None:
        tmp = a.dir = tempfile.mkdtemp(prefix="numascope-io-peers-", dir="/var/tmp")
    try:
        return _compare(a)
    except (UserError, Unavailable, MeasurementError) as e:
        print(f"io_peers: {e}", file=sys.stderr)
        return getattr(e, "exit_code", 1)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def _compare(a: argparse.Namespace) -> int:
    p = IoParams(rw=a.rw, bs=parse_size(a.bs) if a.bs else None, iodepth=a.iodepth,
                 numjobs=a.numjobs, runtime=a.runtime, ramp=a.ramp, size=parse_size(a.size))
    topo = read_topology("/")
    bench = Storage()
    (case,) = bench.cases(topo, params=p, dirs=[a.dir])
    fio = fio_path()
    engine, numa = probe(fio)
    jobfile = None
    ours, theirs = [], []
    ncmd = ""
    direct: list[str] = []
    try:
        with bench.reusing_files() as files:     # numascope's file, reused by both
            for _ in range(a.warmup):
                bench.measure(topo, case)
            for i in range(a.reps):
                t0 = time.monotonic()
                r = bench.measure(topo, case)
                ours.append(r.metrics["iops"].median)
                ncmd = r.params["command"]
                t1 = time.monotonic()
                if jobfile is None:             # numascope's own job text, as is
                    fd, jobfile = tempfile.mkstemp(prefix="io-peers-", suffix=".fio")
                    with os.fdopen(fd, "w") as f:
                        f.write(r.params["job"])
                    direct = [fio, "--output-format=json", jobfile]
                    print(f"{fio_version(fio)}, engine {engine}, NUMA options in the job: "
                          f"{'yes' if numa else 'no'}")
                    print(f"target {a.dir}: {case.params['targets'][0]['evidence']}")
                    print(f"placement: {case.params['placement'][0]['where']}; file "
                          f"{files[a.dir]} (laid out once, used by both)")
                    print("job file (the same for both):")
                    print("  " + r.params["job"].strip().replace("\n", "\n  "))
                out = subprocess.run(direct, capture_output=True, text=True, check=False)
                if out.returncode != 0:
                    raise MeasurementError(f"fio direct exited {out.returncode}: "
                                           f"{out.stderr.strip()[:200]}")
                theirs.append(parse(out.stdout).iops)
                print(f"rep {i + 1}: numascope {ours[-1]:,.0f} IO/s ({t1 - t0:.1f} s wall), "
                      f"fio {theirs[-1]:,.0f} IO/s ({time.monotonic() - t1:.1f} s wall)")
    finally:
        if jobfile:
            os.unlink(jobfile)
    print()
    print("numascope:  numascope io --dir " + a.dir + f" (its fio: {ncmd})")
    print("fio direct: " + " ".join(direct))
    mo, mt = statistics.median(ours), statistics.median(theirs)
    ratio = mo / mt if mt else float("nan")
    ok = abs(ratio - 1) <= TOLERANCE
    print(f"median IOPS: numascope {mo:,.0f}, fio {mt:,.0f}; ratio {ratio:.3f} "
          f"({'within' if ok else 'OUTSIDE'} +-{TOLERANCE:.0%})")
    print(json.dumps({"numascope_iops": ours, "fio_iops": theirs, "ratio": ratio}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
