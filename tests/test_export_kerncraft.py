"""`numascope export RUN --format kerncraft`: the machine file kerncraft (RRZE-HPC, from
PyPI) loads, and its Roofline (RooflineFLOP) and ECMData models run a STREAM triad on.

Constructed runs have the shapes numascope's records have (bandwidth scaling points, bw
--sweep plateaus "plateau L1 triad 1T"); one run holds real measurements of this machine."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import pytest
from synth_sysfs import machine

from numascope.cli import main as cli
from numascope.results.kerncraft import text
from numascope.results.plain import to_plain
from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord
from numascope.results.store import Store
from numascope.topology import read_topology

kc = pytest.importorskip("kerncraft.machinemodel")

TRIAD = "double a[N], b[N], c[N];\ndouble s;\n\nfor (int i = 0; i < N; ++i)\n" \
        "    a[i] = b[i] + s * c[i];\n"
SKX = {"vendor": "GenuineIntel", "family": 6, "model_number": 0x55,
       "model": "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz"}
LLC = 16 << 20


def topology(tmp_path: Path, smt: int = 1, sockets: int = 1, **cpu) -> dict:
    """Per socket 2 L3 domains of 4 cores, one node (NUMA domain) per L3."""
    root = machine(tmp_path / "sys", sockets=sockets, l3_per_socket=2, cores_per_l3=4, smt=smt,
                   nodes_per_socket=2, l3_kb=LLC >> 10, **(cpu or SKX))
    return to_plain(read_topology(str(root)))


def cores(topo: dict, n: int, smt: bool = False) -> list[int]:
    """The first n CPUs compact (one per core), or n CPUs as SMT pairs."""
    firsts = sorted((c for c in topo["cpus"] if c["smt"] == 0), key=lambda c: c["core"])
    if not smt:
        return [c["id"] for c in firsts[:n]]
    pairs = [c["id"] for f in firsts for c in topo["cpus"] if c["core"] == f["core"]]
    return pairs[:n]


def mem(topo: dict, kernel: str, n: int, gbs: list[float], stores: str = "ordinary",
        policy: str = "compact", memory: str = "first-touch", ws: int = 4 * LLC,
        cpus: list[int] | None = None, nt_gbs: list[float] | None = None) -> BenchResult:
    """A bandwidth result shaped like bench._result's (a --scaling point)."""
    metrics = {"bandwidth": Metric("bandwidth", "GB/s", True, list(gbs))}
    if nt_gbs is not None:   # nt=auto: both store kinds kept, the faster reported
        metrics["bandwidth"] = Metric("bandwidth", "GB/s", True, list(nt_gbs))
        metrics["bandwidth[avx512]"] = Metric("bandwidth[avx512]", "GB/s", True, list(gbs))
        metrics["bandwidth[avx512-nt]"] = Metric("bandwidth[avx512-nt]", "GB/s", True,
                                                 list(nt_gbs))
    arrays = {"read": 1, "copy": 2}.get(kernel, 3)
    cpus = cpus if cpus is not None else cores(topo, n)
    return BenchResult("bandwidth", f"{kernel} {policy} {n}T", {
        "kernel": kernel, "threads": len(cpus), "stores": "n/a" if kernel == "read" else stores,
        "policy": policy, "sweep": "scaling", "array_bytes": ws // arrays, "arrays": arrays,
        "llc_bytes": LLC}, metrics,
        {"cpus": cpus, "memory": {"policy": memory, "nodes": [], "pages": "thp"}})


def plateau(level: str, kernel: str, threads: int, gbs: list[float],
            topo: dict) -> BenchResult:
    """A bw --sweep plateau record (case "plateau L1 triad 1T")."""
    return BenchResult("bandwidth", f"plateau {level} {kernel} {threads}T", {
        "sweep": True, "plateau": level, "kernel": kernel, "threads": threads,
        "working_set_range": [4096, 16384]},
        {"bandwidth": Metric("bandwidth", "GB/s", True, list(gbs))},
        {"cpus": cores(topo, threads)})


def run_of(topo: dict, results: list[BenchResult], clock: float | None = 2.4) -> RunRecord:
    rec = RunRecord.new(tags={"t": "kerncraft"})
    rec.topology, rec.status = topo, "complete"
    rec.host = {"hostname": "skx", "clock_ghz": clock, "thp": "always"}
    rec.results = results
    return rec


def full_run(topo: dict) -> RunRecord:
    """Memory scaling 1..4 cores (read, triad), cache plateaus at 1 and 2 cores; the
    figures are 1/3 of each level's bandwidth times the cores (made distinct per level)."""
    res = []
    for k, f in (("read", 1.0), ("triad", 0.8)):
        res += [mem(topo, k, n, [f * 10 * min(n, 3), f * 10 * min(n, 3) + 1]) for n in (1, 2, 3, 4)]
        for lv, bw in (("L1", 200.0), ("L2", 90.0), ("L3", 40.0)):
            res += [plateau(lv, k, n, [f * bw * n], topo) for n in (1, 2)]
    return run_of(topo, res)


def kerncraft(machine_file: Path, *args: str) -> str:
    kernel = machine_file.parent / "triad.c"
    kernel.write_text(TRIAD)
    exe = Path(sys.executable).parent / "kerncraft"
    out = subprocess.run([str(exe), "-m", str(machine_file), str(kernel), *args],
                         check=False, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def load(path: Path):
    with contextlib.redirect_stdout(io.StringIO()):
        return kc.MachineModel(str(path))


def write(tmp_path: Path, rec: RunRecord, name: str = "m.yml", *extra: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        st.save_run(rec)
    out = tmp_path / name
    assert cli(["export", rec.run_id, "-o", str(out), "--store", str(db), *extra]) == 0
    return out


# -- the file kerncraft loads --------------------------------------------------------------
def test_skylake_file_loads_and_holds_the_runs_figures(tmp_path):
    topo = topology(tmp_path)
    m = load(write(tmp_path, full_run(topo)))
    assert float(m["clock"]) == 2.4e9 and m["cores per socket"] == 8
    assert m["NUMA domains per socket"] == 2 and m["cores per NUMA domain"] == 4
    assert m["threads per core"] == 1 and int(m["cacheline size"]) == 64
    levels = [lv["level"] for lv in m["memory hierarchy"]]
    assert levels == ["L1", "L2", "L3", "MEM"]
    l3 = m["memory hierarchy"][2]
    assert int(l3["size per group"]) == LLC and l3["cores per group"] == 4 and l3["groups"] == 2
    c = l3["cache per group"]
    assert c["sets"] * c["ways"] * c["cl_size"] <= LLC < (c["sets"] + 1) * c["ways"] * 64
    meas = m["benchmarks"]["measurements"]
    assert meas["MEM"][1]["cores"] == [1, 2, 3, 4]
    # the median of the two repetitions, per core count; numascope's read is kerncraft's load
    assert [float(x) / 1e9 for x in meas["MEM"][1]["results"]["load"]] == [10.5, 20.5, 30.5, 30.5]
    assert [float(x) / 1e9 for x in meas["L2"][1]["results"]["triad"]] == [72.0, 144.0]
    assert len(meas["MEM"][1]["stats"]["triad"][0]) == 2
    k = m["benchmarks"]["kernels"]["triad"]
    assert (k["read streams"]["streams"], k["write streams"]["streams"]) == (2, 1)


def test_roofline_and_ecm_run_on_it(tmp_path):
    """kerncraft's own arithmetic on the file's figures. Its write-allocate factor for the
    triad kernel (2 read streams, 1 write) is (16 + 2 * 8) / (16 + 8): the file's figures
    count STREAM bytes, kerncraft adds the read of the written line."""
    f = write(tmp_path, full_run(topology(tmp_path)))
    wa = 32 / 24
    # 3 arrays of 10^7 doubles: 240 MB, far beyond the 32 MB of L3. Roofline at 2 cores:
    # the MEM triad figure at 2 cores (16.5 GB/s median), 32 B and 2 FLOP per iteration
    roof = kerncraft(f, "-p", "RooflineFLOP", "-D", "N", "10000000", "--cores", "2")
    gflops = 16.5e9 * wa / 32 * 2 / 1e9
    assert f"{gflops:.2f} GFLOP/s due to MEM transfer bottleneck (with bw from triad " \
        "benchmark)" in roof
    # ECM: the fastest triad figure of up to cores-per-NUMA-domain (4) cores, 24.5 GB/s;
    # per cache line of work 3 lines loaded (one the write-allocate) and 1 stored, at the
    # measured 2.4 GHz
    ecm = kerncraft(f, "-p", "ECMData", "-D", "N", "10000000")
    assert f"MEM = {4 * 64 * 2.4e9 / (24.5e9 * wa):.2f} cy/CL" in ecm
    # the cache levels' transfer rates are kerncraft's Skylake-SP ones (64 and 16 B/cy)
    assert "L2 = 4.00 cy/CL" in ecm and "L3 = 12.00 cy/CL" in ecm


def test_one_kernel_per_streams_so_kerncraft_takes_the_triad(tmp_path):
    """add moves what triad moves (2 reads, 1 write); kerncraft would take whichever name
    sorts first, add: only the triad is written, and add is listed as left out."""
    topo = topology(tmp_path)
    rec = full_run(topo)
    rec.results += [mem(topo, "add", n, [50.0 * n]) for n in (1, 2, 3, 4)]
    rec.results += [plateau(lv, "add", n, [500.0], topo) for lv in ("L1", "L2", "L3")
                    for n in (1, 2)]
    rec.results += [mem(topo, "copy", n, [5.0 * n]) for n in (1, 2)]   # memory only
    f = write(tmp_path, rec)
    m = load(f)
    assert "add" not in m["benchmarks"]["kernels"]
    not_used = m["numascope"]["not used"]
    assert any(w.startswith("add: the streams of triad") for w in not_used)
    assert "copy: not measured at L1, L2, L3 (kerncraft reads a kernel's figure at every " \
        "level)" in not_used
    ecm = kerncraft(f, "-p", "ECMData", "-D", "N", "10000000")
    assert f"MEM = {4 * 64 * 2.4e9 / (24.5e9 * 32 / 24):.2f} cy/CL" in ecm


def test_every_value_says_where_it_comes_from(tmp_path):
    out = text(full_run(topology(tmp_path)))
    lines = {ln.split(":")[0].strip(): ln for ln in out.splitlines() if not ln.startswith("#")}
    assert "# measured" in lines["clock"]
    for key in ("sockets", "cores per socket", "cacheline size", "model type"):
        assert "# topology" in lines[key], key
    for key in ("in-core model", "FLOPs per cycle", "overlapping model", "compiler"):
        assert "# uarch: https://github.com/RRZE-HPC/kerncraft/blob/" in lines[key], key
    assert "SkylakeSP_Gold-6148.yml" in lines["FLOPs per cycle"]
    assert "# default" in lines["penalty cycles per cacheline load"]


def test_zen2_takes_kerncrafts_zen2_file(tmp_path):
    topo = topology(tmp_path, vendor="AuthenticAMD", family=0x17, model_number=0x31,
                    model="AMD EPYC 7452 32-Core Processor")
    m = load(write(tmp_path, full_run(topo)))
    assert next(iter(m["in-core model"])) == "OSACA"
    assert m["in-core model"]["OSACA"] == "ZEN2" and m["FLOPs per cycle"]["DP"]["total"] == 16
    assert m["memory hierarchy"][1]["cache per group"]["ways"] == 8


def test_a_sapphire_rapids_guest_shown_as_rocket_lake_takes_the_spr_file(tmp_path):
    """The core known by what it does (topology.uarch): a KVM guest presenting family 6
    model 0xa7 (Rocket Lake, which kerncraft has no file for) with AMX and AVX512-FP16 and
    Golden Cove's caches is Sapphire Rapids, and kerncraft's SPR file supplies the rest;
    ECM runs on the file."""
    from test_uarch import SPR_GUEST
    root = machine(tmp_path / "sys", sockets=1, l3_per_socket=2, cores_per_l3=4, smt=1,
                   nodes_per_socket=2, l3_kb=LLC >> 10, vendor="GenuineIntel", family=6,
                   model_number=0xA7, model="Intel(R) Xeon(R) Processor", hypervisor=True,
                   flags=SPR_GUEST, l1d_kb=48, l2_kb=2048)
    topo = to_plain(read_topology(str(root)))
    f = write(tmp_path, full_run(topo))
    m = load(f)
    assert m["in-core model"]["OSACA"] == "SPR" and m["FLOPs per cycle"]["DP"]["total"] == 32
    assert "SapphireRapids_Platinum-8470.yml" in f.read_text()
    ecm = kerncraft(f, "-p", "ECMData", "-D", "N", "10000000")
    assert "L2 = 4.00 cy/CL" in ecm and "L3 = 12.00 cy/CL" in ecm   # 64 and 16 B/cy


def test_only_levels_with_the_read_kernel_and_absent_ones_are_said(tmp_path, capsys):
    topo = topology(tmp_path)
    rec = full_run(topo)
    rec.results = [r for r in rec.results
                   if not (r.params.get("plateau") == "L3" and r.params["kernel"] == "read")
                   and r.params.get("plateau") != "L1"]
    f = write(tmp_path, rec)
    err = " ".join(capsys.readouterr().err.split())   # the console wraps long lines
    assert "no L1 bandwidth (no bw --sweep plateau in the run): kerncraft's Roofline " \
        "needs it, ECMData does not" in err
    assert "no L3 bandwidth (no read kernel" in err and "no L2" not in err
    m = load(f)
    assert sorted(m["benchmarks"]["measurements"]) == ["L2", "MEM"]
    why = m["numascope"]["absent because"]
    assert "no read kernel" in why["L3"] and "bw --sweep" in why["L1"]
    # ECMData needs only memory: it runs
    assert "MEM" in kerncraft(f, "-p", "ECMData", "-D", "N", "10000000")


def test_skipped_core_counts_are_said_where_ecm_would_misread_them(tmp_path, capsys):
    """kerncraft's ECM reads a level's first N figures as 1..N cores (N = 4 here, a NUMA
    domain): with counts 1, 2, 4, 8 it would take the 8-core figure as a 4-core one."""
    topo = topology(tmp_path)
    sparse = [mem(topo, k, n, [10.0 * n]) for k in ("read", "triad") for n in (1, 2, 4, 8)]
    f = write(tmp_path, run_of(topo, sparse))
    err = " ".join(capsys.readouterr().err.split())
    assert "MEM: core counts [1, 2, 4, 8] skip some" in err and "the 8-core figures" in err
    assert any("skip some" in w for w in load(f)["numascope"]["warnings"])
    dense = [mem(topo, k, n, [10.0 * n]) for k in ("read", "triad") for n in (1, 2, 3, 4, 8)]
    write(tmp_path / "d", run_of(topo, dense))
    assert "skip some" not in capsys.readouterr().err


def test_what_kerncraft_cannot_use_is_left_out_and_listed(tmp_path):
    topo = topology(tmp_path, smt=2)
    ok = [mem(topo, k, n, [10.0 * n]) for k in ("read", "triad") for n in (1, 2)]
    bad = [mem(topo, "triad", 3, [99.0], policy="spread"),
           mem(topo, "triad", 4, [99.0], memory="interleave"),
           mem(topo, "triad", 5, [99.0], cpus=cores(topo, 2, smt=True) + [9, 10, 11]),
           mem(topo, "triad", 6, [99.0], ws=LLC // 2),
           mem(topo, "triad", 7, [5.0], stores="streaming", nt_gbs=[99.0]),
           mem(topo, "copy", 2, [99.0], stores="streaming")]
    bad[4].params["stores"] = "streaming"
    m = load(write(tmp_path, run_of(topo, ok + bad)))
    meas = m["benchmarks"]["measurements"]["MEM"][1]
    # the streaming-store point keeps its ordinary variant (5.0); the rest are out
    assert meas["cores"] == [1, 2] and "copy" not in meas["results"]
    not_used = "\n".join(m["numascope"]["not used"])
    for why in ("policy spread", "memory policy interleave", "SMT siblings",
                "within the last-level cache", "streaming stores only"):
        assert why in not_used, why
    assert m["threads per core"] == 2


def test_two_sockets_per_socket_figures_and_odd_plateaus(tmp_path):
    """kerncraft's figures are per socket: 10 compact cores span both sockets and are
    left out; a plateau of a cache the topology does not report (L4) is too; one that does
    not line up with its cache is used and said."""
    topo = topology(tmp_path, sockets=2)
    res = [mem(topo, k, n, [10.0 * n]) for k in ("read", "triad") for n in (1, 2, 10)]
    l4 = plateau("L4", "triad", 1, [50.0], topo)
    odd = plateau("L2", "triad", 1, [70.0], topo)
    odd.params.update(lines_up=False, verdict="ends at 3 MiB, L2 holds 1 MiB")
    res += [l4, odd, plateau("L2", "read", 1, [80.0], topo)]
    m = load(write(tmp_path, run_of(topo, res)))
    assert m["sockets"] == 2 and m["cores per socket"] == 8
    assert m["benchmarks"]["measurements"]["MEM"][1]["cores"] == [1, 2]
    not_used = "\n".join(m["numascope"]["not used"])
    assert "triad compact 10T: threads on more than one socket" in not_used
    assert "plateau L4 triad 1T: a cache level the topology does not report" in not_used
    assert any("plateau L2 triad 1T used, though ends at 3 MiB" in w
               for w in m["numascope"]["warnings"])
    assert float(m["benchmarks"]["measurements"]["L2"][1]["results"]["triad"][0]) == 70e9


def test_streaming_variant_never_stands_for_ordinary(tmp_path):
    topo = topology(tmp_path)
    r = mem(topo, "triad", 1, [7.0, 9.0], nt_gbs=[20.0, 21.0])
    r.params["stores"] = "streaming"
    rec = run_of(topo, [mem(topo, "read", 1, [10.0]), r])
    m = load(write(tmp_path, rec))
    assert float(m["benchmarks"]["measurements"]["MEM"][1]["results"]["triad"][0]) == 8e9


# -- refusals: one line, non-zero exit -----------------------------------------------------
def _refused(capsys, argv) -> str:
    assert cli(argv) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_unknown_cpu_needs_a_base_file_and_takes_it(tmp_path, capsys):
    topo = topology(tmp_path / "z4", vendor="AuthenticAMD", family=25, model_number=17,
                    model="AMD EPYC 9654")
    rec = full_run(topo)
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        st.save_run(rec)
    out = tmp_path / "zen4.yml"
    err = _refused(capsys, ["export", rec.run_id, "-o", str(out), "--store", str(db)])
    assert "Zen 4" in err and "--base FILE" in err and not out.exists()
    base = write(tmp_path / "skx", full_run(topology(tmp_path / "skx")))
    assert cli(["export", rec.run_id, "-o", str(out), "--store", str(db),
                "--base", str(base)]) == 0
    m = load(out)
    assert m["in-core model"]["OSACA"] == "SKX" and "Zen 4" in m["model type"]
    assert str(base) in m["numascope"]["uarch source"]


def test_bad_input_is_one_line(tmp_path, capsys):
    topo = topology(tmp_path)
    db = tmp_path / "runs.db"
    no_bw = run_of(topo, [])
    no_read = run_of(topo, [mem(topo, "triad", 1, [10.0])])
    no_clock = run_of(topo, full_run(topo).results, clock=None)
    with Store.open(db, write=True) as st:
        for r in (no_bw, no_read, no_clock):
            st.save_run(r)
    out = str(tmp_path / "m.yml")
    base = ["--store", str(db)]
    assert "no memory bandwidth" in _refused(capsys, ["export", no_bw.run_id, "-o", out, *base])
    assert "read kernel" in _refused(capsys, ["export", no_read.run_id, "-o", out, *base])
    assert "clock" in _refused(capsys, ["export", no_clock.run_id, "-o", out, *base])
    _refused(capsys, ["export", "20990101-000000-000000000000", "-o", out, *base])
    assert "does not exist" in _refused(capsys, ["export", no_bw.run_id, "-o",
                                                 str(tmp_path / "no" / "m.yml"), *base])
    assert "one run" in _refused(capsys, ["export", no_bw.run_id, no_read.run_id, "-o", out,
                                          *base])
    assert "--base" in _refused(capsys, ["export", no_bw.run_id, "-o", str(tmp_path / "a.json"),
                                         "--base", out, *base])
    garbage = tmp_path / "garbage.yml"
    garbage.write_text("just: [text\n")
    assert "--base" in _refused(capsys, ["export", no_read.run_id, "-o", out, "--base",
                                         str(garbage), *base])
    assert not Path(out).exists()


def test_a_fifo_or_an_empty_file_as_base_is_one_line(tmp_path, capsys):
    """--base a pipe would block kerncraft's open for good (a subprocess with a timeout: a
    hang fails the test); an empty or comments-only file is no machine file, said so rather
    than kerncraft's "argument of type 'NoneType' is not iterable"."""
    import os
    topo = topology(tmp_path)
    rec = full_run(topo)
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        st.save_run(rec)
    out = tmp_path / "m.yml"
    fifo = tmp_path / "base.yml"
    os.mkfifo(fifo)
    p = subprocess.run([sys.executable, "-m", "numascope", "export", rec.run_id, "-o",
                        str(out), "--store", str(db), "--base", str(fifo)],
                       capture_output=True, text=True, timeout=60, check=False)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert f"--base {fifo}: is not a plain file" in p.stderr and not out.exists()
    for content in ("", "\n  \n", "# nothing but a comment\n---\n"):
        empty = tmp_path / "empty.yml"
        empty.write_text(content)
        err = _refused(capsys, ["export", rec.run_id, "-o", str(out), "--store", str(db),
                                "--base", str(empty)])
        assert f"--base {empty}: the file is empty" in err and "NoneType" not in err, err
        assert not out.exists()


# -- real measurements of this machine -------------------------------------------------------
def test_real_measurements_of_this_machine(tmp_path):
    """read and triad on 1 and 2 cores of this machine, arrays past its LLC: the file
    carries the measured figures, and kerncraft's ECMData runs on it (the CPU's in-core
    keys from a base file, as for any CPU kerncraft has no file of)."""
    from numascope.clock import measured_ghz
    from numascope.families.bandwidth import bench
    topo = read_topology("/")
    cpus = [c for c in topo.usable_cpus() if topo.cpu(c).smt == 0][:2]
    llc = topo.llc_bytes(cpus) or 32 << 20
    results = []
    for kernel, arrays in (("read", 1), ("triad", 3)):
        for n in range(1, len(cpus) + 1):
            results.append(bench.measure(topo, kernel=kernel, cpus=cpus[:n],
                                         size_bytes=2 * llc // arrays, reps=5))
    rec = run_of(to_plain(topo), results, clock=measured_ghz())
    base = write(tmp_path / "skx", full_run(topology(tmp_path / "skx")))
    f = write(tmp_path, rec, "real.yml", "--base", str(base))
    m = load(f)
    got = [float(x) / 1e9 for x in m["benchmarks"]["measurements"]["MEM"][1]["results"]["load"]]
    assert got == [pytest.approx(r.metrics["bandwidth"].median, abs=0.006)
                   for r in results if r.params["kernel"] == "read"]
    assert "MEM" in kerncraft(f, "-p", "ECMData", "-D", "N", "100000000")
