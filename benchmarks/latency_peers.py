"""Idle DRAM latency: numascope's chase against an independent chaser (benchmarks/chase_peer.c,
multichase's method), same buffer size, page kind, mode and stride, interleaved runs.

    python benchmarks/latency_peers.py [--size 1G] [--modes tlb,random] [--pages thp]
                                       [--stride 256] [--runs 5] [--cpu 0]

Prints both command lines, every run with both sides' stride, the medians, the ratio
numascope/peer and each side's coefficient of variation. Target: ratio within 0.95-1.05 and
CV < 2 % on an idle machine (TLB-friendly mode, 1 GiB, THP, 256 B stride). Both sides must
chase at the same stride: at 64 B the prefetchers serve part of the misses of both, so they
agreed on a number that read low. For reference, multichase on the development VM (its
default 256 B stride): ~131-135 ns TLB-friendly, ~190 ns full random over 1 GiB."""

from __future__ import annotations

import argparse
import os
import re
import shlex
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


def peer_cmd(exe: str, size: int, mode: str, pages: str, cpu: int, samples: int,
             stride: int) -> list[str]:
    return [exe, str(size), mode, pages, str(cpu), str(samples), str(stride)]


def peer_run(cmd: list[str]) -> tuple[float, int]:
    """(median ns per load, the stride the peer says it chased at)."""
    p = subprocess.run(cmd, capture_output=True, text=True, check=True)
    m = re.search(r"ns_per_load ([0-9.]+) stride ([0-9]+)", p.stdout)
    if not m:
        raise SystemExit(f"peer printed nothing usable: {p.stdout!r} {p.stderr!r}")
    return float(m.group(1)), int(m.group(2))


def ours_cmd(size: int, mode: str, pages: str, cpu: int, samples: int, stride: int,
             loads: int) -> str:
    """The `numascope lat` command line equivalent to the lat.chase() call made here."""
    return (f"numascope lat --size {size} --mode {mode} --pages {pages} --cpu {cpu} "
            f"--samples {samples} --loads {loads} --stride {stride}")


def cv(v: list[float]) -> float:
    return statistics.stdev(v) / statistics.fmean(v) if len(v) > 1 else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1G")
    ap.add_argument("--modes", default="tlb,random")
    ap.add_argument("--pages", default="thp", choices=["none", "thp"])
    ap.add_argument("--stride", type=int, default=lat.STRIDE,
                    help="bytes between pointers, both tools (default 256)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--samples", type=int, default=9)
    ap.add_argument("--cpu", type=int, default=None)
    a = ap.parse_args()
    topo = read_topology("/")
    cpu = topo.usable_cpus()[0] if a.cpu is None else a.cpu
    size = lat.parse_size(a.size)
    stride = lat.check_stride(a.stride, "--stride")
    loads = 1 << 20
    with tempfile.TemporaryDirectory() as d:
        exe = build_peer(d)
        for mode in a.modes.split(","):
            cmd = peer_cmd(exe, size, mode, a.pages, cpu, a.samples, stride)
            print(f"numascope: {ours_cmd(size, mode, a.pages, cpu, a.samples, stride, loads)}")
            print(f"peer:      {shlex.join(['chase_peer', *cmd[1:]])}")
            ours, peer = [], []
            for i in range(a.runs):
                r = lat.chase(topo, size, cpu, mode=mode, pages=a.pages, samples=a.samples,
                              loads=loads, clock=False, stride=stride)
                ours.append(r.metrics["latency"].median)
                ns, peer_stride = peer_run(cmd)
                peer.append(ns)
                print(f"{mode:6s} run {i + 1}: numascope {ours[-1]:7.1f} ns "
                      f"(stride {r.params['stride']} B, {r.placement['pages']})   "
                      f"peer {peer[-1]:7.1f} ns (stride {peer_stride} B)")
            mo, mp = statistics.median(ours), statistics.median(peer)
            print(f"{mode:6s} {lat.format_bytes(size)} pages={a.pages} stride={stride} B: "
                  f"numascope {mo:.1f} ns (CV {cv(ours):.1%}), peer {mp:.1f} ns "
                  f"(CV {cv(peer):.1%}), ratio {mo / mp:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
