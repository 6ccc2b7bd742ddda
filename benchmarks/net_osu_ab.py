"""numascope's MPI program against benchmarks/net_osu_method.c, launch by launch: one test at
one size, the two programs alternating (who goes first alternates too), each launch a pair
member, so that a noisy machine's drift cancels in the per-pair ratio. numascope's side is
its own launcher line (the one `numascope net` runs, launch.command); the OSU-method side is
bound with numactl per app context. Same CPUs, memory node, page kind, counts and window.

    .venv/bin/python benchmarks/net_osu_ab.py [--test lat|bw] [--size 8] [--pairs 21] \
        [--iters N] [--warmup W] [--cpus 0,1] [--pages system|none|thp]

Defaults: OSU's counts for the size (lat 10000 / 100 up to 8 KiB, 1000 / 10 above; bw 100 /
10 and 20 / 2). Prints both sides' values, their medians, the ratio of the medians and the
median of the per-pair ratios (target: within 5 %), and both command lines."""

from __future__ import annotations

import argparse
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    from numascope.families.interconnect import launch as L
    from numascope.topology import read_topology
    from numascope.units import parse_size
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--test", default="lat", choices=["lat", "bw"])
    ap.add_argument("--size", default="8")
    ap.add_argument("--pairs", type=int, default=21, help="launch pairs (default 21)")
    ap.add_argument("--iters", type=int, help="timed iterations (default OSU's)")
    ap.add_argument("--warmup", type=int, help="warm-up iterations (default OSU's)")
    ap.add_argument("--cpus", default="0,1")
    ap.add_argument("--pages", default="system", choices=["system", "none", "thp"])
    a = ap.parse_args()
    mpirun, mpicc, numactl = (shutil.which(x) for x in ("mpirun", "mpicc", "numactl"))
    if not (mpirun and mpicc and numactl):
        print("skipped: mpirun, mpicc and numactl are needed")
        return
    size = parse_size(a.size)
    big = size > L.LARGE
    osu = L.OSU_DEFAULTS[a.test]
    it = a.iters or (osu[2] if big else osu[0])
    warm = a.warmup if a.warmup is not None else (osu[3] if big else osu[1])
    ca, cb = (int(x) for x in a.cpus.split(","))
    topo = read_topology("/")
    na, nb = topo.cpu(ca).node or 0, topo.cpu(cb).node or 0
    plan = L.Plan(a.test, (size,), it, warm, it, warm, window=1 if a.test == "lat" else 64,
                  pairs=1, ranks=(L.Rank((ca,), na), L.Rank((cb,), nb)), hosts=(),
                  pages=a.pages, buffers="same")
    ns_cmd = L.command(mpirun, str(L.build(mpicc)), plan)
    exe = Path(tempfile.mkdtemp(prefix="net_osu_ab.")) / "net_osu_method"
    subprocess.run([mpicc, "-O2", "-o", str(exe), str(HERE / "net_osu_method.c")], check=True)
    prog = [str(exe), a.test, str(size), a.pages, str(it), str(warm), str(it), str(warm)]
    peer_cmd = [mpirun, *L.launcher_flags(2, (), 1)]
    for i, (c, n) in enumerate(((ca, na), (cb, nb))):
        peer_cmd += ([":"] if i else []) + ["-np", "1", numactl, f"--physcpubind={c}",
                                            f"--membind={n}", *prog]

    def numascope() -> float:
        run = L.launch(ns_cmd, 600, "numascope")
        return float(L.check(plan, run, "numascope")["results"][size][L.VALUE[a.test]])

    def peer() -> float:
        out = subprocess.run(peer_cmd, capture_output=True, text=True, timeout=600,
                             check=False)
        if out.returncode != 0:
            sys.exit(f"OSU method failed: {out.stderr.strip()[-300:]}")
        return next(float(ln.split()[1]) for ln in out.stdout.splitlines()
                    if ln.split() and ln.split()[0] == str(size))

    print(f"{a.test} at {size} B, {it} timed / {warm} warm-up, CPUs {ca},{cb}, pages "
          f"{a.pages}, {a.pairs} launch pairs alternating")
    print("numascope: ", shlex.join(ns_cmd))
    print("OSU method:", shlex.join(peer_cmd))
    ns, peers = [], []
    for k in range(a.pairs):
        for f in ((numascope, peer) if k % 2 == 0 else (peer, numascope)):
            (ns if f is numascope else peers).append(f())
    unit = "us" if a.test == "lat" else "MB/s"
    print(f"numascope  ({unit}):", " ".join(f"{x:.4g}" for x in ns))
    print(f"OSU method ({unit}):", " ".join(f"{x:.4g}" for x in peers))
    mn, mp = statistics.median(ns), statistics.median(peers)
    pr = statistics.median(x / y for x, y in zip(ns, peers))
    ok = all(0.95 <= r <= 1.05 for r in (mn / mp, pr))
    print(f"medians: numascope {mn:.4g}, OSU method {mp:.4g} {unit}; ratio of the medians "
          f"{mn / mp:.3f}, median of the per-pair ratios {pr:.3f} "
          f"({'within' if ok else 'outside'} ±5 %)")


if __name__ == "__main__":
    main()
