"""Idle memory latency: `numascope lat` side by side with chase_peer, a pointer chase written
from multichase's documented method (benchmarks/chase_peer.c; Debian packages neither
multichase nor lmbench). Same CPU, buffer size, stride, page kind and TLB locality; the two
alternate run by run so that drift hits both.

    .venv/bin/python benchmarks/latency_peers.py [--size 1G] [--modes tlb,random]
        [--pages thp|none] [--stride 256] [--runs 5] [--samples 9] [--sample-ms 500]
        [--cpu N] [--quick]

Why multichase's method and not lat_mem_rd's: lat_mem_rd walks a ring that points back one
stride, which its own manual says stride-sensitive prefetchers can serve; numascope's modes
are random chases, and multichase's are the random chases they are meant to equal:
  numascope --mode tlb     <->  chase_peer -T 256K (multichase's default TLB locality: 64
                                 base pages, groups in random order, random inside each)
  numascope --mode random  <->  chase_peer -T SIZE (one random cycle over the whole buffer)
Statistics: numascope reports the median of its samples and the best beside it; multichase
reports its best 0.5 s sample. Both are printed, medians over --runs, and the ratios
numascope / peer of each (target: within 0.95-1.05 on an idle machine).

Parallel chases (--chains 1,8,16): `numascope lat --chains N` (its default layout, the arena,
and with --layouts arena,regions its labelled variant too) against `chase_peer -p N`,
multichase's parallelN method: N non-dependent chases in one thread over one shared arena,
each at its own word of every element, each in its own order. Loads per ns (N / ns per
step), best sample of each (multichase reports its best; numascope's knee uses its best
too); target: within 10 % of the peer.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _numascope import first_result

HERE = Path(__file__).resolve().parent
WINDOW = 256 * 1024          # multichase's default TLB locality (64 x 4 KiB) = numascope's tlb
UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_size(text: str) -> int:
    t = text.strip().lower().removesuffix("ib").removesuffix("b")
    mult = UNITS.get(t[-1:], 1)
    try:
        return int(float(t[:-1] if t[-1:] in UNITS else t) * mult)
    except ValueError:
        raise SystemExit(f"latency_peers: not a size: {text!r}") from None


def build_peer(outdir: str) -> str:
    exe = str(Path(outdir, "chase_peer"))
    subprocess.run(["gcc", "-O2", "-o", exe, str(HERE / "chase_peer.c")], check=True)
    return exe


def ours_cmd(size: int, mode: str, pages: str, cpu: int, stride: int,
             samples: int) -> list[str]:
    return ["numascope", "lat", "--size", str(size), "--mode", mode, "--pages", pages,
            "--cpus", str(cpu), "--stride", str(stride), "--samples", str(samples), "--json"]


def peer_cmd(exe: str, size: int, mode: str, pages: str, cpu: int, stride: int,
             samples: int, sample_ms: float) -> list[str]:
    locality = WINDOW if mode == "tlb" else size
    cmd = [exe, "-m", str(size), "-s", str(stride), "-T", str(locality), "-n", str(samples),
           "-d", f"{sample_ms:g}", "-c", str(cpu)]
    return cmd + (["-H"] if pages == "thp" else [])


def run_ours(cmd: list[str]) -> dict:
    """numascope's median and best ns per load and its huge-page share, from its JSON."""
    r = first_result(cmd, "latency_peers")
    lat = r["metrics"]["latency"]
    return {"median": lat["median"], "best": lat["best"],
            "huge": r["placement"].get("huge_fraction"), "bytes": r["params"]["bytes"]}


def chains_cmd(size: int, pages: str, cpu: int, stride: int, samples: int, n: int,
               layout: str) -> list[str]:
    return ["numascope", "lat", "--chains", str(n), "--chain-layout", layout, "--size",
            str(size), "--pages", pages, "--cpus", str(cpu), "--stride", str(stride),
            "--samples", str(samples), "--json"]


def run_chains(cmd: list[str]) -> dict:
    r = first_result(cmd, "latency_peers")
    m = r["metrics"]
    return {"median": m["loads_per_ns"]["median"], "best": m["loads_per_ns"]["best"],
            "ns": m["latency"]["median"], "huge": r["placement"].get("huge_fraction"),
            "bytes": r["params"]["bytes"]}


def compare_chains(exe: str, a: argparse.Namespace, size: int, cpu: int) -> None:
    """Loads per ns of N parallel chases: numascope's layouts against chase_peer -p N."""
    counts = [int(c) for c in a.chains.split(",") if c.strip()]
    layouts = [x.strip() for x in a.layouts.split(",") if x.strip()]
    print(f"\n[chains] {size / 2**20:g} MiB, stride {a.stride} B, pages {a.pages}, CPU {cpu}, "
          "tlb mode; loads per ns (N / ns per step), best sample, median over runs")
    for n in counts:
        ours = {lay: chains_cmd(size, a.pages, cpu, a.stride, a.samples, n, lay)
                for lay in layouts}
        peer = peer_cmd(exe, size, "tlb", a.pages, cpu, a.stride, a.samples, a.sample_ms) + \
            ["-p", str(n)]
        if n == counts[0]:
            for lay, cmd in ours.items():
                print(f"  numascope ({lay}): {shlex.join(cmd)}")
            print(f"  peer:      {shlex.join(['chase_peer', *peer[1:]])}")
        got: dict[str, list[float]] = {lay: [] for lay in layouts}
        theirs: list[float] = []
        for _ in range(a.runs):
            for lay, cmd in ours.items():
                got[lay].append(run_chains(cmd)["best"])
            pr = run_peer(peer)
            theirs.append(n / pr["best"])
        pb = statistics.median(theirs)
        line = f"  {n:2d} chains: peer {pb:.4f} loads/ns"
        for lay in layouts:
            ob = statistics.median(got[lay])
            line += f"; numascope {lay} {ob:.4f} (ratio {ob / pb:.3f})"
        print(line, flush=True)


def run_peer(cmd: list[str]) -> dict:
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    last = p.stdout.strip().splitlines()[-1:] or [""]
    words = last[0].split()
    if p.returncode != 0 or not words or words[0] != "best":
        raise SystemExit(f"latency_peers: chase_peer exited {p.returncode}: "
                         f"{(p.stdout + p.stderr).strip()[-300:]}")
    kv = dict(zip(words[::2], words[1::2]))
    return {"median": float(kv["median"]), "best": float(kv["best"]),
            "huge": float(kv["huge_fraction"]), "bytes": int(kv["bytes"])}


def _huge(x: float | None) -> str:
    return "huge ?" if x is None or x < 0 else f"{x:.0%} huge"


def compare(exe: str, a: argparse.Namespace, mode: str, size: int, cpu: int) -> None:
    ours = ours_cmd(size, mode, a.pages, cpu, a.stride, a.samples)
    peer = peer_cmd(exe, size, mode, a.pages, cpu, a.stride, a.samples, a.sample_ms)
    print(f"\n[{mode}] {size / 2**20:g} MiB, stride {a.stride} B, pages {a.pages}, CPU {cpu}")
    print(f"  numascope: {shlex.join(ours)}")
    print(f"  peer:      {shlex.join(['chase_peer', *peer[1:]])}")
    o_runs, p_runs = [], []
    for i in range(a.runs):
        o, p = run_ours(ours), run_peer(peer)
        if o["bytes"] != p["bytes"]:
            raise SystemExit(f"latency_peers: sizes differ (numascope {o['bytes']} B, "
                             f"peer {p['bytes']} B): not comparable")
        o_runs.append(o)
        p_runs.append(p)
        print(f"  run {i + 1}: numascope median {o['median']:7.1f} ns best {o['best']:7.1f} "
              f"({_huge(o['huge'])})   peer median {p['median']:7.1f} ns best "
              f"{p['best']:7.1f} ({_huge(p['huge'])})")
    om = statistics.median(r["median"] for r in o_runs)
    pm = statistics.median(r["median"] for r in p_runs)
    ob = statistics.median(r["best"] for r in o_runs)
    pb = statistics.median(r["best"] for r in p_runs)
    print(f"  {mode}: median ns numascope {om:.1f} peer {pm:.1f} ratio {om / pm:.3f}; "
          f"best ns numascope {ob:.1f} peer {pb:.1f} ratio {ob / pb:.3f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1G", help="buffer, both tools (default 1G)")
    ap.add_argument("--modes", default="tlb,random")
    ap.add_argument("--pages", default="thp", choices=["none", "thp"])
    ap.add_argument("--stride", type=int, default=256, help="bytes per element (default 256)")
    ap.add_argument("--runs", type=int, default=5, help="alternating runs of each tool")
    ap.add_argument("--samples", type=int, default=9, help="samples per run, both tools")
    ap.add_argument("--sample-ms", type=float, default=500,
                    help="peer's sample duration (multichase: 500 ms)")
    ap.add_argument("--cpu", type=int, default=None,
                    help="both tools' CPU (default: the first this process may use)")
    ap.add_argument("--chains", default="",
                    help="parallel chases to compare, e.g. 1,8,16 (default: none)")
    ap.add_argument("--layouts", default="arena",
                    help="numascope's chain layouts for --chains: arena (its default), "
                         "regions (the labelled variant), or both: arena,regions")
    ap.add_argument("--quick", action="store_true",
                    help="64 MiB, 1 run of 3 samples of 100 ms: checks that it runs")
    a = ap.parse_args(argv)
    if a.quick:
        a.size, a.runs, a.samples, a.sample_ms = "64M", 1, 3, 100
        a.chains = a.chains or "4"
    modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    if any(m not in ("tlb", "random") for m in modes) or a.runs < 1 or a.samples < 1:
        print("latency_peers: --modes takes tlb,random; --runs and --samples >= 1",
              file=sys.stderr)
        return 2
    if not shutil.which("gcc"):
        print("skipped: gcc not installed (it builds chase_peer)")
        return 0
    size = parse_size(a.size)
    if size >= WINDOW:          # the peer rounds down to whole TLB groups: give both that size
        size -= size % WINDOW
    cpu = min(os.sched_getaffinity(0)) if a.cpu is None else a.cpu
    print("ns per dependent load; numascope: median and best of its samples; peer "
          "(multichase's method): median and best of its samples, first dropped; "
          f"each the median over {a.runs} alternating run(s)")
    with tempfile.TemporaryDirectory(prefix="numascope-lat-peers-") as d:
        exe = build_peer(d)
        for mode in modes:
            compare(exe, a, mode, size, cpu)
        if a.chains:
            compare_chains(exe, a, size, cpu)
    return 0


if __name__ == "__main__":
    sys.exit(main())
