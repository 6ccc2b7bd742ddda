"""numascope net against an independent program written from OSU's published method
(benchmarks/net_osu_method.c: osu_latency's ping-pong and osu_bw's window of 64 into one
buffer per rank, OSU's iteration and warm-up counts), and osu_latency / osu_bw themselves
when on PATH: 2 ranks on this host through shared memory, same CPUs, same memory node, same
page kind, same sizes, launches alternating in one run.

    .venv/bin/python benchmarks/net_peers.py [--cpus 0,1] [--small 8] [--large 4M] \
        [--iters 10000,100] [--reps 3] [--pages system|none|thp] [--buffers same|distinct] \
        [--mpi4py] [--quick]

--quick: one rep with a tenth / a fifth of OSU's counts (1000 ping-pongs, 20 windows), under
30 s. --buffers distinct sets `numascope net --buffers distinct` against
benchmarks/net_pingpong.c (a buffer per window slot) instead. --mpi4py adds the mpi4py peer
(its per-call overhead is larger than a shared-memory latency: bandwidth only).

Prints every command line, each side's latency at the small size (us, half round trip) and
bandwidth at the large size (MB/s = 10^6 B/s), medians over the reps, and numascope / peer
(target: within 5 %), both the ratio of the medians and the median of the per-rep
ratios."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OSU_METHOD = HERE / "net_osu_method.c"
DISTINCT_PEER = HERE / "net_pingpong.c"
PY_PEER = HERE / "net_pingpong_mpi4py.py"


def run(cmd: list[str]) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    if r.returncode != 0:
        sys.exit(f"{shlex.join(cmd)} failed ({r.returncode}): {r.stderr.strip()[-300:]}")
    return r.stdout


def table(text: str) -> dict[int, float]:
    """An OSU-style table ("# …" header, then "SIZE VALUE" rows) as {size: value}."""
    out = {}
    for ln in text.splitlines():
        parts = ln.split()
        if len(parts) >= 2 and parts[0].isdigit():
            out[int(parts[0])] = float(parts[1])
    return out


def osu_counts(lat_it: int, bw_it: int) -> dict[str, list[str]]:
    """LOOP SKIP LOOP_LARGE SKIP_LARGE in OSU's ratios (none at OSU's own counts: the
    program's defaults are OSU's constants)."""
    if (lat_it, bw_it) == (10000, 100):
        return {"lat": [], "bw": []}
    return {"lat": [str(x) for x in (lat_it, max(1, lat_it // 100), max(1, lat_it // 10),
                                     max(1, lat_it // 1000))],
            "bw": [str(x) for x in (bw_it, max(1, bw_it // 10), max(1, bw_it // 5),
                                    max(1, bw_it // 50))]}


def main() -> None:
    from numascope.topology import read_topology
    from numascope.units import parse_size
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpus", default=None, help="A,B (default: numascope's first path)")
    ap.add_argument("--small", default="8", help="latency size (default 8)")
    ap.add_argument("--large", default="4M", help="bandwidth size (default 4M)")
    ap.add_argument("--iters", default="10000,100",
                    help="ping-pongs,windows at the small sizes (default OSU's 10000,100)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true",
                    help="1 rep, 1000 ping-pongs and 20 windows (under 30 s)")
    ap.add_argument("--pages", default="system", choices=["system", "none", "thp"],
                    help="system (the default of both): no madvise, the host's THP setting")
    ap.add_argument("--buffers", default="same", choices=["same", "distinct"])
    ap.add_argument("--mpi4py", action="store_true", help="add the mpi4py peer")
    a = ap.parse_args()
    if a.quick:
        a.reps, a.iters = 1, "1000,20"
    topo = read_topology("/")
    if a.cpus:
        ca, cb = (int(x) for x in a.cpus.split(","))
    else:
        from numascope.families.interconnect.bench import paths
        places, _ = paths(topo)
        ca, cb = places[0]["cpu_a"], places[0]["cpu_b"]
    na, nb = topo.cpu(ca).node or 0, topo.cpu(cb).node or 0
    small, large = parse_size(a.small), parse_size(a.large)
    lat_it, bw_it = (int(x) for x in (a.iters.split(",") * 2)[:2])
    sizes = f"{small},{large}"
    mpirun, mpicc, numactl = (shutil.which(x) for x in ("mpirun", "mpicc", "numactl"))
    missing = [n for n, x in (("mpirun", mpirun), ("mpicc", mpicc), ("numactl", numactl))
               if not x]
    if missing:
        print(f"skipped: {', '.join(missing)} not installed")
        return
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    thp = "1" if a.pages == "thp" else "0"      # the C distinct and mpi4py peers' switch

    def launch_line(prog: list[str], extra: list[str] = ()) -> list[str]:
        ctx = [["-np", "1", numactl, f"--physcpubind={c}", f"--membind={n}", *prog]
               for c, n in ((ca, na), (cb, nb))]
        return [mpirun, *root, "--bind-to", "none", *extra, *ctx[0], ":", *ctx[1]]

    ns_cmd = [sys.executable, "-m", "numascope", "net", "--json", "--engine", "numascope",
              "--cpus", f"{ca},{cb}", "--sizes", sizes, "--tests", "lat,bw",
              "--iters", f"{lat_it},{bw_it}", "--pages", a.pages, "--buffers", a.buffers]
    build = Path(tempfile.mkdtemp(prefix="net_peers."))
    peers: dict[str, dict[str, list[str]]] = {}     # name -> test -> command line
    if a.buffers == "same":
        exe = build / "net_osu_method"
        run([mpicc, "-O2", "-o", str(exe), str(OSU_METHOD)])
        counts = osu_counts(lat_it, bw_it)
        peers["OSU method"] = {t: launch_line([str(exe), t, sizes, a.pages, *counts[t]])
                               for t in ("lat", "bw")}
        tun = ["-x", "GLIBC_TUNABLES=glibc.malloc.hugetlb=1"] if a.pages == "thp" else []
        osu = {t: shutil.which(p) for t, p in (("lat", "osu_latency"), ("bw", "osu_bw"))}
        if all(osu.values()):
            # OMB's -i / -x set every size's counts (osu_util.c): left out at OSU's own
            # counts; otherwise every size gets the small count (not OSU's ratio above 8 KiB)
            its = {"lat": [] if lat_it == 10000 else ["-i", str(lat_it)],
                   "bw": [] if bw_it == 100 else ["-i", str(bw_it)]}
            peers["osu"] = {t: launch_line([osu[t], "-m", f"{small}:{large}", *its[t]], tun)
                            for t in ("lat", "bw")}
    else:
        exe = build / "net_pingpong"
        run([mpicc, "-O2", "-o", str(exe), str(DISTINCT_PEER)])
        c_lat = lat_it if small <= 8192 else max(1, lat_it // 10)
        c_bw = bw_it if large <= 8192 else max(1, bw_it // 5)
        peers["C distinct"] = {"both": launch_line([str(exe), str(small), str(large),
                                                    str(c_lat), str(c_bw), thp])}
    if a.mpi4py:
        py = [sys.executable, str(PY_PEER), "--sizes", sizes, "--lat-iters", str(lat_it),
              "--bw-iters", str(bw_it)]
        peers["mpi4py"] = {"both": launch_line(py, ["-x", f"NUMPY_MADVISE_HUGEPAGE={thp}"])}

    from numascope.families.interconnect.bench import _size
    print(f"CPUs {ca} (node {na}) and {cb} (node {nb}); latency at {_size(small)}, bandwidth "
          f"at {_size(large)}; {lat_it} ping-pongs, {bw_it} windows of 64 below 8 KiB (OSU's ratios "
          f"above); {a.reps} reps alternating; pages {a.pages}; buffers {a.buffers}")
    print("numascope:  ", shlex.join(ns_cmd))
    for name, cmds in peers.items():
        for t, c in cmds.items():
            print(f"{name} {t}:".ljust(13), shlex.join(c))
    got: dict[str, dict[str, list[float]]] = {k: {"lat": [], "bw": []}
                                              for k in ["numascope", *peers]}

    def numascope() -> None:
        m = json.loads(run(ns_cmd))["results"][0]["metrics"]
        got["numascope"]["lat"].append(m[f"lat_{small}"]["median"])
        got["numascope"]["bw"].append(m[f"bw_{large}"]["median"])

    def peer(name: str) -> None:
        for t, c in peers[name].items():
            out = run(c)
            if t in ("lat", "bw"):
                got[name][t].append(table(out)[small if t == "lat" else large])
            elif name == "mpi4py":
                for d in (json.loads(x) for x in out.splitlines() if x.startswith("{")):
                    if d.get("test") == "lat" and d["size"] == small:
                        got[name]["lat"].append(d["usec"])
                    if d.get("test") == "bw" and d["size"] == large:
                        got[name]["bw"].append(d["mbps"])
            else:                                   # net_pingpong.c: "lat SIZE v", "bw …"
                for ln in out.splitlines():
                    t2, _, v = ln.split()
                    got[name][t2].append(float(v))

    for i in range(a.reps):             # alternate who goes first
        order = [numascope, *[lambda n=n: peer(n) for n in peers]]
        for f in (order if i % 2 == 0 else order[::-1]):
            f()
        print(f"rep {i + 1}: " + "; ".join(f"{k} {d['lat'][-1]:.3f} us {d['bw'][-1]:,.0f} MB/s"
                                           for k, d in got.items()), flush=True)
    med = {k: {t: statistics.median(v) if v else float("nan") for t, v in d.items()}
           for k, d in got.items()}
    print(f"\n{'':12} {'lat us':>9} {'bw MB/s':>10}   (medians; every rep after)")
    for k, d in med.items():
        print(f"{k:12} {d['lat']:9.3f} {d['bw']:10.1f}   lat {got[k]['lat']} "
              f"bw {[round(x) for x in got[k]['bw']]}")
    for name in peers:
        r_lat = med["numascope"]["lat"] / med[name]["lat"]
        r_bw = med["numascope"]["bw"] / med[name]["bw"]
        ok = all(0.95 <= r <= 1.05 for r in (r_lat, r_bw))
        print(f"numascope / {name}: latency {_size(small)} {r_lat:.3f}, bandwidth "
              f"{_size(large)} {r_bw:.3f}  ({'within' if ok else 'outside'} ±5 %)")
        # each rep's two sides ran back to back: their ratio cancels slower load changes
        pl, pb = (statistics.median(x / y for x, y in zip(got["numascope"][t], got[name][t]))
                  for t in ("lat", "bw"))
        print(f"  median of the per-rep ratios: latency {pl:.3f}, bandwidth {pb:.3f}")


if __name__ == "__main__":
    main()
