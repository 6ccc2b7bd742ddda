"""numascope net against an independent ping-pong (mpi4py) and OSU (when on PATH): 2 ranks on
this host through shared memory, same CPUs, same memory node, same sizes and iterations.

    .venv/bin/python benchmarks/net_peers.py [--cpus 0,1] [--small 8] [--large 1M] \
        [--iters 10000,100] [--reps 3] [--no-osu]

Prints every command line first, then each side's small-message latency (us, half round
trip) and large-message bandwidth (MB/s = 10^6 B/s, window of 64), medians over --reps
alternating launches, and numascope / peer (target: within 10 %)."""

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

HERE = Path(__file__).resolve().parent
PEER = HERE / "net_pingpong_mpi4py.py"
CPEER = HERE / "net_pingpong.c"


def run(cmd: list[str]) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    if r.returncode != 0:
        sys.exit(f"{shlex.join(cmd)} failed ({r.returncode}): {r.stderr.strip()[-300:]}")
    return r.stdout


def main() -> None:
    from numascope.topology import read_topology
    from numascope.units import parse_size
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpus", default=None, help="A,B (default: numascope's first path)")
    ap.add_argument("--small", default="8")
    ap.add_argument("--large", default="1M")
    ap.add_argument("--iters", default="10000,100", help="ping-pongs,windows per size")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-osu", action="store_true")
    ap.add_argument("--pages", default="thp", choices=["thp", "none"],
                    help="both sides' buffers: transparent huge pages (numpy's madvise, "
                         "numascope --pages thp, glibc's tunable for OSU) or base pages")
    a = ap.parse_args()
    topo = read_topology("/")
    if a.cpus:
        ca, cb = (int(x) for x in a.cpus.split(","))
    else:
        from numascope.bench.net import paths
        places, _ = paths(topo)
        ca, cb = places[0]["cpu_a"], places[0]["cpu_b"]
    na, nb = topo.cpu(ca).node, topo.cpu(cb).node
    small, large = parse_size(a.small), parse_size(a.large)
    lat_it, bw_it = (int(x) for x in (a.iters.split(",") * 2)[:2])
    sizes = f"{small},{large}"
    mpirun = shutil.which("mpirun")
    numactl = shutil.which("numactl")
    if not mpirun or not numactl:
        sys.exit("needs mpirun and numactl on PATH")
    root = ["--allow-run-as-root"] if __import__("os").geteuid() == 0 else []

    ns_cmd = [sys.executable, "-m", "numascope", "net", "--json", "--engine", "numascope",
              "--cpus", f"{ca},{cb}", "--sizes", sizes, "--tests", "lat,bw",
              "--iters", f"{lat_it},{bw_it}", "--pages", a.pages]
    thp = "1" if a.pages == "thp" else "0"
    env_x = ["-x", f"NUMPY_MADVISE_HUGEPAGE={thp}"]   # numpy madvises large arrays itself

    def ctx(cpu, node, prog):
        return ["-np", "1", numactl, f"--physcpubind={cpu}", f"--membind={node}", *prog]
    py = [sys.executable, str(PEER), "--sizes", sizes, "--lat-iters", str(lat_it),
          "--bw-iters", str(bw_it)]
    peer_cmd = [mpirun, *root, "--bind-to", "none", *env_x, *ctx(ca, na, py), ":",
                *ctx(cb, nb, py)]
    build = Path(tempfile.mkdtemp(prefix="net_peers."))
    cexe = build / "net_pingpong"
    run([shutil.which("mpicc") or "mpicc", "-O2", "-o", str(cexe), str(CPEER)])
    c_lat_it = lat_it if small <= 8192 else max(1, lat_it // 10)   # numascope's rule
    c_bw_it = bw_it if large <= 8192 else max(1, bw_it // 5)
    cprog = [str(cexe), str(small), str(large), str(c_lat_it), str(c_bw_it),
             "1" if a.pages == "thp" else "0"]
    c_cmd = [mpirun, *root, "--bind-to", "none", *ctx(ca, na, cprog), ":", *ctx(cb, nb, cprog)]
    osu = {} if a.no_osu else {t: shutil.which(p) for t, p in
                                (("lat", "osu_latency"), ("bw", "osu_bw"))}
    osu = {t: p for t, p in osu.items() if p}
    osu_cmds = {}
    for t, p in osu.items():
        size = small if t == "lat" else large
        prog = [p, "-m", f"{size}:{size}", "-i", str(lat_it if t == "lat" else bw_it)]
        tun = ["-x", "GLIBC_TUNABLES=glibc.malloc.hugetlb=1"] if a.pages == "thp" else []
        osu_cmds[t] = [mpirun, *root, "--bind-to", "none", *tun, *ctx(ca, na, prog), ":",
                       *ctx(cb, nb, prog)]

    print(f"CPUs {ca} (node {na}) and {cb} (node {nb}); sizes {small} B and {large} B; "
          f"{lat_it} ping-pongs, {bw_it} windows of 64 per size; {a.reps} reps; "
          f"pages {a.pages}")
    print("numascope:", shlex.join(ns_cmd))
    print("mpi4py:   ", shlex.join(peer_cmd))
    print("C peer:   ", shlex.join(c_cmd))
    for t, c in osu_cmds.items():
        print(f"osu {t}:   ", shlex.join(c))
    got: dict[str, dict[str, list[float]]] = {"numascope": {}, "mpi4py": {}, "C peer": {},
                                              "osu": {}}
    for _ in range(a.reps):
        doc = json.loads(run(ns_cmd))
        m = doc["results"][0]["metrics"]
        got["numascope"].setdefault("lat", []).append(m[f"lat_{small}"]["median"])
        got["numascope"].setdefault("bw", []).append(m[f"bw_{large}"]["median"])
        ns_huge = doc["results"][0]["params"]["pages_seen"]["bw"]
        lines = [json.loads(x) for x in run(peer_cmd).splitlines() if x.startswith("{")]
        py_huge = next((d for d in lines if d.get("type") == "ranks"), {}).get("ranks", [])
        got.setdefault("huge", {}).setdefault("numascope", []).append(ns_huge)
        got["huge"].setdefault("mpi4py", []).append([d["anon_huge_kb"] for d in py_huge])
        for d in lines:
            if d.get("test") == "lat" and d["size"] == small:
                got["mpi4py"].setdefault("lat", []).append(d["usec"])
            if d.get("test") == "bw" and d["size"] == large:
                got["mpi4py"].setdefault("bw", []).append(d["mbps"])
        for ln in run(c_cmd).splitlines():
            t, _, v = ln.split()
            got["C peer"].setdefault(t, []).append(float(v))
        for t, c in osu_cmds.items():
            from numascope.net.launch import parse_osu
            size = small if t == "lat" else large
            got["osu"].setdefault(t, []).append(parse_osu(run(c))[size][0])
    huge = got.pop("huge")
    print(f"THP in the ranks (AnonHugePages kB, per rep): numascope {huge['numascope']}, "
          f"mpi4py {huge['mpi4py']}")
    med = {k: {t: statistics.median(v) for t, v in d.items()} for k, d in got.items()}
    print(f"\n{'':10} {'lat us':>10} {'bw MB/s':>10}   (medians; all reps below)")
    for k, d in med.items():
        if d:
            print(f"{k:10} {d.get('lat', float('nan')):10.3f} {d.get('bw', float('nan')):10.1f}"
                  f"   lat {got[k].get('lat')} bw {[round(x) for x in got[k].get('bw', [])]}")
    for peer in ("mpi4py", "C peer", "osu"):
        if med[peer]:
            r_lat = med["numascope"]["lat"] / med[peer]["lat"] if "lat" in med[peer] else None
            r_bw = med["numascope"]["bw"] / med[peer]["bw"] if "bw" in med[peer] else None
            ok = all(r is None or 0.9 <= r <= 1.1 for r in (r_lat, r_bw))
            print(f"numascope / {peer}: latency {r_lat and f'{r_lat:.3f}'}, bandwidth "
                  f"{r_bw and f'{r_bw:.3f}'}  ({'within' if ok else 'outside'} ±10 %)")
            # best of the reps (least disturbed: lowest latency, highest bandwidth)
            b_lat = min(got["numascope"]["lat"]) / min(got[peer]["lat"]) \
                if "lat" in got[peer] else None
            b_bw = max(got["numascope"]["bw"]) / max(got[peer]["bw"]) \
                if "bw" in got[peer] else None
            print(f"  best vs best: latency {b_lat and f'{b_lat:.3f}'}, bandwidth "
                  f"{b_bw and f'{b_bw:.3f}'}")


if __name__ == "__main__":
    main()
