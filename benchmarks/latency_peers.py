"""Idle DRAM latency: numascope's chase against an independent chaser (benchmarks/chase_peer.c,
multichase's method), same buffer size, page kind and mode, interleaved runs.

    python benchmarks/latency_peers.py [--size 1G] [--modes tlb,random] [--pages none]
                                       [--runs 5] [--cpu 0]

Prints every run, the medians, the ratio numascope/peer and each side's coefficient of
variation. Target (issue 4): ratio within 0.95-1.05 and CV < 2 % on an idle machine. For
reference, multichase on the development VM: ~131-135 ns TLB-friendly, ~190 ns full random
over 1 GiB."""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from numascope.bench import latency as lat
from numascope.topology import read_topology

HERE = Path(__file__).resolve().parent


def build_peer(outdir: str) -> str:
    exe = os.path.join(outdir, "chase_peer")
    subprocess.run(["gcc", "-O2", "-o", exe, str(HERE / "chase_peer.c")], check=True)
    return exe


def peer_run(exe: str, size: int, mode: str, pages: str, cpu: int, samples: int) -> float:
    p = subprocess.run([exe, str(size), mode, pages, str(cpu), str(samples)],
                       capture_output=True, text=True, check=True)
    m = re.search(r"ns_per_load ([0-9.]+)", p.stdout)
    if not m:
        raise SystemExit(f"peer printed nothing usable: {p.stdout!r} {p.stderr!r}")
    return float(m.group(1))


def cv(v: list[float]) -> float:
    return statistics.stdev(v) / statistics.fmean(v) if len(v) > 1 else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1G")
    ap.add_argument("--modes", default="tlb,random")
    ap.add_argument("--pages", default="none", choices=["none", "thp"])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--samples", type=int, default=9)
    ap.add_argument("--cpu", type=int, default=None)
    a = ap.parse_args()
    topo = read_topology("/")
    cpu = topo.usable_cpus()[0] if a.cpu is None else a.cpu
    size = lat.parse_size(a.size)
    with tempfile.TemporaryDirectory() as d:
        exe = build_peer(d)
        for mode in a.modes.split(","):
            ours, peer = [], []
            for i in range(a.runs):
                r = lat.chase(topo, size, cpu, mode=mode, pages=a.pages, samples=a.samples,
                              loads=1 << 20, clock=False)
                ours.append(r.metrics["latency"].median)
                peer.append(peer_run(exe, size, mode, a.pages, cpu, a.samples))
                print(f"{mode:6s} run {i + 1}: numascope {ours[-1]:7.1f} ns   "
                      f"peer {peer[-1]:7.1f} ns")
            mo, mp = statistics.median(ours), statistics.median(peer)
            print(f"{mode:6s} {lat.format_bytes(size)} pages={a.pages}: numascope {mo:.1f} ns "
                  f"(CV {cv(ours):.1%}), peer {mp:.1f} ns (CV {cv(peer):.1%}), "
                  f"ratio {mo / mp:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
