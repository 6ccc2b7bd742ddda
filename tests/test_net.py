"""numascope net: the MPI program built with mpicc and run under mpirun -np 2 here, the
bindings it is launched with, a rank that dies or hangs, MPI missing, and the two-host
table (HCA distance, best node) on replayed topologies."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, hwloc_fixture

from numascope.benchmark import Case
from numascope.errors import MeasurementError, UserError
from numascope.families.interconnect import bench as net
from numascope.families.interconnect import launch as L
from numascope.results.record import BenchResult, Metric
from numascope.topology import read_topology

MPI = shutil.which("mpirun") and shutil.which("mpicc")
needs_mpi = pytest.mark.skipif(not MPI, reason="Open MPI (mpirun, mpicc) not installed")
PY = [sys.executable, "-m", "numascope"]
SIZES = "1,8,4096"
# the program's fault hooks act only under the test switch (as fleet's do)
HOOKS = {L.HOOKS_SWITCH: L.HOOKS_ON}


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 90):
    return subprocess.run([*PY, "net", *args], capture_output=True, text=True, check=False,
                          timeout=timeout, env=env, cwd=REPO)


def leftovers(var: str) -> list[int]:
    """Processes of ours still carrying `var` in their environment (ranks left behind)."""
    pids = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit() and int(p.name) != os.getpid():
            try:
                env = (p / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(e.startswith(var.encode() + b"=") for e in env):
                pids.append(int(p.name))
    return pids


# -- a real run here --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def doc():
    if not MPI:
        pytest.skip("Open MPI (mpirun, mpicc) not installed")
    r = cli("--json", "--cpus", "0,1", "--sizes", SIZES, "--iters", "20", "--pairs", "2",
            "--engine", "numascope")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@needs_mpi
def test_runs_under_mpirun_positive_finite_per_size(doc):
    assert doc["command"] == "net" and doc["errors"] == []
    [res] = doc["results"]
    assert res["family"] == "interconnect" and res["params"]["engine"] == "numascope"
    m = res["metrics"]
    for test in ("lat", "bw", "bibw", "mbw"):
        for size in (1, 8, 4096):
            vals = m[f"{test}_{size}"]["values"]
            assert len(vals) == 1 and all(math.isfinite(v) and v > 0 for v in vals), test
    assert m["latency"]["unit"] == "us" and m["bandwidth"]["unit"] == "MB/s"
    assert res["params"]["buffers"] == "same" and res["params"]["net"]["buffers"] == "same"
    assert all("--buffers same" in c for c in res["params"]["commands"].values())
    assert m["latency"]["values"] == m["lat_1"]["values"]
    assert m["bandwidth"]["values"] == m["bw_4096"]["values"]
    assert m["msg_rate"]["values"][0] > 0


@needs_mpi
def test_ranks_ran_where_the_launcher_line_put_them(doc):
    [res] = doc["results"]
    p = res["params"]
    lat = p["commands"]["lat"].split()
    assert "--bind-to" in lat and lat[lat.index("--bind-to") + 1] == "none"
    # the default: no madvise, the host's THP setting (what stock OSU gets)
    assert lat[lat.index("--pages") + 1] == "system" and p["net"]["pages"] == "system"
    assert "THP" not in res["case"] and "pages" not in res["case"]
    bound = L.ranks_of_command([x.strip("'") for x in lat])
    assert [r.cpus for r in bound] == [(0,), (1,)]
    seen = {d["rank"]: d for d in p["ranks_seen"]}
    assert seen[0]["cpu"] == 0 and seen[1]["cpu"] == 1
    assert seen[0]["pages"] == "system" and seen[0]["thp"] == 0 and seen[0]["anon_huge_kb"] >= 0
    assert set(p["pages_seen"]) == {"lat", "bw", "bibw", "mbw"} and len(p["pages_seen"]["mbw"]) == 4
    node = read_topology("/").cpu(0).node
    if node is not None:
        assert seen[0]["send_node"] == node and seen[0]["policy"] == 2   # MPOL_BIND
    mbw = L.ranks_of_command([x.strip("'") for x in p["commands"]["mbw"].split()])
    assert len(mbw) == 4 and "-np 4" in p["commands"]["mbw"]


@needs_mpi
def test_two_hosts_rehearsed_on_this_one():
    r = cli("--json", "--hosts", "localhost,localhost", "--sizes", "8", "--iters", "20",
            "--tests", "lat,bw", "--engine", "numascope")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    topo = read_topology("/")
    nodes = [n for n in topo.node_ids() if any(c.node == n and c.usable for c in topo.cpus)]
    assert len(d["results"]) == len(d["peer"]["rows"]) == len(nodes) ** 2
    assert d["peer"]["best_node"] in nodes and d["peer"]["best"].startswith("best node")
    for res in d["results"]:
        cmd = res["params"]["commands"]["lat"]
        assert cmd.count("-H localhost:1") == 2 and " : " in cmd
        seen = {x["rank"]: x for x in res["params"]["ranks_seen"]}
        for i, node in enumerate((res["params"]["node_a"], res["params"]["node_b"])):
            assert seen[i]["bind_node"] == node and topo.cpu(seen[i]["cpu"]).node == node
        assert res["metrics"]["latency"]["median"] > 0


@needs_mpi
def test_under_the_users_own_mpirun_rank_0_prints_the_node_pair_table():
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    cmd = ["mpirun", *root, "--oversubscribe", "--bind-to", "none", "-np", "2", *PY, "net",
           "--json", "--sizes", "8,4096", "--iters", "20"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=90, check=False,
                       cwd=REPO)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)            # one envelope: the other rank printed nothing
    topo = read_topology("/")
    nodes = [n for n in topo.node_ids() if any(c.node == n and c.usable for c in topo.cpus)]
    assert len(d["peer"]["rows"]) == len(d["results"]) == len(nodes) ** 2
    res = d["results"][0]
    assert res["params"]["mode"] == "peer" and "--sweep" in res["params"]["commands"]["sweep"]
    seen = res["params"]["ranks_seen"]
    assert seen[0]["cpu"] != seen[1]["cpu"] or len(topo.usable_cpus()) == 1
    assert all(res["metrics"][f"{t}_{s}"]["median"] > 0 for t in ("lat", "bw")
               for s in (8, 4096))
    assert any("rehearsal" in n for n in res["notes"])
    bad = subprocess.run(["mpirun", *root, "--oversubscribe", "-np", "3", *PY, "net"],
                         capture_output=True, text=True, timeout=90, check=False, cwd=REPO)
    assert bad.returncode != 0 and "needs exactly 2 ranks" in bad.stderr


def test_check_rejects_short_bytes_and_a_wrong_cpu():
    plan = net.NetParams(sizes=(8,)).plan("bw", [L.Rank((0,), 0), L.Rank((1,), 0)])
    rank = {"type": "rank", "rank": 0, "cpu": 0, "send_node": 0, "recv_node": 0}
    good = {"type": "result", "size": 8, "mbps": 5.0}
    checked = {"type": "check", "test": "bw", "size": 8, "messages": 128, "bytes": 1024,
               "reused": 2, "bad": 0, "offset": -1}
    done = {"type": "done", "cpu_end": [0, 1]}

    def run(*lines, check=checked):
        return L.Launched([], [*lines, check], "", "", 0.1)
    L.check(plan, run(rank, {**rank, "rank": 1, "cpu": 1}, good, done), "t")
    with pytest.raises(MeasurementError, match="checked 127 of 128 messages"):
        L.check(plan, run(rank, {**rank, "rank": 1, "cpu": 1}, good, done,
                          check={**checked, "bytes": 1023, "messages": 127}), "t")
    with pytest.raises(MeasurementError, match="1 of 2 windows into the one receive buffer"):
        L.check(plan, run(rank, {**rank, "rank": 1, "cpu": 1}, good, done,
                          check={**checked, "reused": 1}), "t")
    with pytest.raises(MeasurementError, match="rank 1 ran on CPU 0"):
        L.check(plan, run(rank, {**rank, "rank": 1}, good, done), "t")
    with pytest.raises(MeasurementError, match="not a positive number"):
        L.check(plan, run(rank, {**rank, "rank": 1, "cpu": 1}, {**good, "mbps": float("inf")},
                          done), "t")
    with pytest.raises(MeasurementError, match="2 of 128 messages and 0 of 2 windows into "
                                               "the one receive buffer"):
        L.check(plan, run(rank, {**rank, "rank": 1, "cpu": 1}, good, done,
                          check={**checked, "bad": 2, "offset": 4}), "t")
    # a stale one buffer: every slot message right, the reused window's last message wrong
    with pytest.raises(MeasurementError, match="0 of 128 messages and 1 of 2 windows"):
        L.check(plan, run(rank, {**rank, "rank": 1, "cpu": 1}, good, done,
                          check={**checked, "bad_reused": 1, "offset": 0}), "t")


@needs_mpi
def test_a_rank_that_dies_fails_the_run_without_hanging():
    env = {**os.environ, **HOOKS, "NUMASCOPE_NET_DIE_RANK": "1"}
    t0 = time.monotonic()
    r = cli("--json", "--cpus", "0,1", "--sizes", "8", "--iters", "5", "--tests", "lat",
            "--timeout", "60", env=env)
    assert r.returncode == 3, r.stderr
    d = json.loads(r.stdout)
    assert d["results"] == [] and d["errors"][0]["kind"] == "validation"
    assert "rank 1 failed" in d["errors"][0]["message"]
    assert time.monotonic() - t0 < 60
    assert leftovers("NUMASCOPE_NET_DIE_RANK") == []


@needs_mpi
def test_a_rank_that_hangs_is_killed_at_the_timeout():
    env = {**os.environ, **HOOKS, "NUMASCOPE_NET_HANG_RANK": "1"}
    r = cli("--cpus", "0,1", "--sizes", "8", "--iters", "5", "--tests", "lat",
            "--timeout", "3", env=env)
    assert r.returncode == 3
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "timed out after 3 s" in lines[0] and "Traceback" not in r.stderr
    assert leftovers("NUMASCOPE_NET_HANG_RANK") == []


@needs_mpi
def test_the_fault_hooks_do_nothing_without_the_test_switch():
    """A hook variable left in a normal environment (or the switch merely truthy) neither
    kills, hangs nor corrupts a rank: the run measures, and says the hooks were ignored."""
    env = {k: v for k, v in os.environ.items() if k != L.HOOKS_SWITCH}
    env.update({"NUMASCOPE_NET_DIE_RANK": "1", "NUMASCOPE_NET_HANG_RANK": "0",
                "NUMASCOPE_NET_CORRUPT": "8"})
    for switch in (None, "1"):
        e = env if switch is None else {**env, L.HOOKS_SWITCH: switch}
        r = cli("--json", "--cpus", "0,1", "--sizes", "8", "--iters", "5", "--tests", "lat",
                "--timeout", "20", env=e)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["results"][0]["metrics"]["latency"]["values"]
        assert "NUMASCOPE_NET_CORRUPT is a test hook and is ignored (NUMASCOPE_TEST_HOOKS " \
            "is not set)" in r.stderr
    assert L.ignored_hooks(env) == ["NUMASCOPE_NET_CORRUPT", "NUMASCOPE_NET_DIE_RANK",
                                    "NUMASCOPE_NET_HANG_RANK"]
    assert L.ignored_hooks({**env, **HOOKS}) == []


def test_mpi_missing_is_exit_4_with_one_line(tmp_path):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for f in Path("/usr/bin").iterdir():
        if not f.name.startswith(("mpi", "orte", "ompi")):
            (bin_ / f.name).symlink_to(f)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{bin_}"}
    r = cli("--quick", env=env)
    assert r.returncode == 4
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "MPI is not installed" in lines[0] and "mpirun" in lines[0]


@needs_mpi
def test_build_is_cached_by_source_and_wrapper(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    src = tmp_path / "pt2pt.c"
    src.write_text(L.SOURCE.read_text())
    exe = L.build(shutil.which("mpicc"), src)
    assert exe.is_file() and os.access(exe, os.X_OK)
    assert exe.parent.parent == tmp_path / "numascope" / "net"
    assert L.build(shutil.which("mpicc"), src) == exe                 # cached
    src.write_text(L.SOURCE.read_text() + "\n/* changed */\n")
    assert L.build(shutil.which("mpicc"), src) != exe                 # rebuilt
    assert not [p for p in exe.parent.iterdir() if p.name.startswith(".pt2pt")]


# -- bindings on replayed and synthetic topologies --------------------------------------------

def _check_paths(topo):
    places, absent = net.paths(topo)
    kinds = {p["path"] for p in places}
    for pl in places:
        a, b = topo.cpu(pl["cpu_a"]), topo.cpu(pl["cpu_b"])
        assert a.core != b.core
        if pl["path"] == "same L3":
            assert a.l3 is not None and a.l3 == b.l3
        elif pl["path"] == "same node":
            assert a.node == b.node and a.package == b.package
            assert a.l3 is None or a.l3 != b.l3
        elif pl["path"] == "other node":
            assert a.node != b.node and a.package == b.package
        else:
            assert a.package != b.package
        assert pl["distance"] == topo.distance(a.node, b.node)
        ranks, _ = net.pair_ranks(topo, pl, 1)
        p = net.NetParams(sizes=(8,))
        for test in ("lat", "bw"):
            plan = p.plan(test, ranks)
            osu = [c for _, c in L.osu_commands("mpirun", "osu_bw", plan, "/usr/bin/numactl")]
            for cmd in (L.command("mpirun", "pt2pt", plan), *osu):
                back = L.ranks_of_command(cmd)
                assert [r.cpus for r in back] == [(a.id,), (b.id,)], cmd
                assert [r.node for r in back] == [a.node, b.node]
        multi, shared = net.pair_ranks(topo, pl, 2)
        send, recv = multi[:2], multi[2:]
        assert send[0].cpus == (a.id,) and recv[0].cpus == (b.id,)
        if not shared:
            ids = [r.cpus[0] for r in multi]
            assert len(set(ids)) == 4
            assert all(topo.cpu(r.cpus[0]).node == a.node for r in send)
            assert all(topo.cpu(r.cpus[0]).node == b.node for r in recv)
    return kinds, absent


@pytest.mark.parametrize("name, want", [
    ("8em64t-2s2ca2c", {"same node", "other socket"}),
    ("16amd64-8n2c", {"same node", "other socket"}),
    ("16em64t-4s2c2t", {"same L3", "other socket"}),
])
def test_bindings_expand_back_on_replayed_topologies(name, want):
    topo = read_topology(hwloc_fixture(name))
    kinds, absent = _check_paths(topo)
    assert want <= kinds
    assert len(kinds) + len(absent) == 4


def test_bindings_on_a_synthetic_two_socket_tree(tmp_path):
    from synth_sysfs import machine
    topo = read_topology(machine(tmp_path, sockets=2, l3_per_socket=2, cores_per_l3=2,
                                 smt=2, nodes_per_socket=2))
    kinds, absent = _check_paths(topo)
    assert kinds == {"same L3", "other node", "other socket"}
    assert absent == ["same node: one L3 per node: no same-node, other-L3 path"]
    topo = read_topology(machine(tmp_path / "b", sockets=1, l3_per_socket=2, cores_per_l3=2,
                                 smt=1, nodes_per_socket=1))
    kinds, absent = _check_paths(topo)
    assert kinds == {"same L3", "same node"}
    assert "other node: one node: no remote path here" in absent


# -- two hosts: the HCA table and the best node -----------------------------------------------

def _fake(case: Case, lat: float, bw: float) -> BenchResult:
    return BenchResult("interconnect", case.label, dict(case.params),
                       {"latency": Metric("latency", "us", False, [lat]),
                        "bandwidth": Metric("bandwidth", "MB/s", True, [bw])})


def test_hca_distance_table_and_best_node_on_a_replayed_topology():
    # the only PCI fixture read here (reading one costs seconds): bindings checked on it too
    topo = read_topology(hwloc_fixture("40intel64-2g2n4c+pci"))
    kinds, absent = _check_paths(topo)
    assert kinds == {"same L3", "other socket"} and len(absent) == 2
    rows = {r["node"]: r for r in net.hca_table(topo)}
    assert set(rows) == set(topo.node_ids())
    assert all(r["hca_node"] == 2 and "qib0" in r["device"] for r in rows.values())
    assert rows[2]["distance"] == topo.distance(2, 2) == 10
    assert all(rows[n]["distance"] == topo.distance(n, 2) > 10 for n in rows if n != 2)
    cases = net.Interconnect().cases(topo, hosts=("a", "b"))
    n = len(topo.node_ids())
    assert len(cases) == n * n
    for c in cases:
        ranks = [L.Rank(tuple(r["cpus"]), r["node"]) for r in c.params["ranks"]]
        plan = net.NetParams(sizes=(8,)).plan("lat", ranks, ("a", "b"))
        cmd = L.command("mpirun", "pt2pt", plan)
        assert [cmd[i + 1] for i, x in enumerate(cmd) if x == "-H"] == ["a:1", "b:1"]
        back = L.ranks_of_command(cmd)
        assert topo.cpu(back[0].cpus[0]).node == c.params["node_a"] == back[0].node
        assert back[1].node == c.params["node_b"]
    # bandwidth falls with the distance to the HCA: node 2 is best
    res = [_fake(c, 1.0 + topo.distance(c.params["node_a"], 2) / 10,
                 10000 / topo.distance(c.params["node_a"], 2)) for c in cases]
    t = net.peer_table(res)
    assert t["best_node"] == 2 and len(t["rows"]) == n * n
    assert "best node for MPI traffic: 2" in t["best"] and "HCA/NIC is on node 2" in t["best"]
    assert {r["node"]: r["hca_distance"] for r in t["nodes"]} == \
        {m: topo.distance(m, 2) for m in topo.node_ids()}


def test_hca_unknown_and_peer_flags():
    topo = read_topology(hwloc_fixture("8em64t-2s2ca2c"))
    assert all(r["distance"] is None for r in net.hca_table(topo))
    with pytest.raises(UserError, match="two host names"):
        net.Interconnect().cases(topo, hosts=("a",))
    with pytest.raises(UserError, match="--pairs"):
        net.Interconnect().cases(topo, params=net.NetParams(pairs=2), hosts=("a", "b"))


# -- OSU output and parameters ----------------------------------------------------------------

OSU_BW = """# OSU MPI Bandwidth Test v7.3
# Size      Bandwidth (MB/s)
# Datatype: MPI_CHAR.
1                       3.10
8                      25.00
4096                 2900.55
"""


def test_osu_output_is_parsed_and_checked():
    t = L.parse_osu(OSU_BW)
    assert t == {1: (3.10, None), 8: (25.0, None), 4096: (2900.55, None)}
    plan = net.NetParams(sizes=(1, 8, 4096)).plan("bw", [L.Rank((0,), 0), L.Rank((1,), 0)])
    rows = L.check_osu(plan, t, "t")
    assert rows[4096]["mbps"] == 2900.55
    mr = L.parse_osu("# Size MB/s Messages/s\n8  12.5  1562500.0\n")
    assert mr == {8: (12.5, 1562500.0)}
    with pytest.raises(MeasurementError, match="no row for 16 B"):
        L.check_osu(net.NetParams(sizes=(16,)).plan("bw", plan.ranks), t, "t")


def test_params_and_sizes():
    from numascope.families.interconnect.command import _sizes
    assert _sizes("1:4M", False) == net.FULL_SIZES and len(net.FULL_SIZES) == 23
    assert _sizes("8,1K,8", False) == (8, 1024)
    assert _sizes(None, True) == net.QUICK_SIZES
    p = net.NetParams(sizes=(1, 65536), lat_iters=100, bw_iters=50)
    lat, bw = p.plan("lat", [L.Rank((0,), 0)] * 2), p.plan("bw", [L.Rank((0,), 0)] * 2)
    assert (lat.iters, lat.large_iters, lat.window) == (100, 10, 1)
    assert (bw.iters, bw.large_iters, bw.window) == (50, 10, 64)
    assert net.NetParams.from_dict(p.to_dict()) == p
    for bad in ({"sizes": ()}, {"sizes": (0,)}, {"lat_iters": 0}, {"window": 0},
                {"tests": ("xx",)}, {"timeout": float("nan")}, {"engine": "mpich"}):
        with pytest.raises(UserError):
            net.NetParams(**bad)


def test_report_heat_map_by_node_pair():
    from numascope.families.interconnect import figures as fig
    cases = [Case(f"a N{a} - b N{b}", {"mode": "peer", "node_a": a, "node_b": b,
                                        "hosts": ["a", "b"], "path": "between hosts"})
             for a in (0, 1) for b in (0, 1, 2)]
    res = [_fake(c, 1.0, 1000.0 * (1 + c.params["node_a"]) + c.params["node_b"])
           for c in cases]
    res[0].metrics["bw_1048576"] = Metric("bw_1048576", "MB/s", True, [1000.0])
    rows, cols, m = fig.node_pair_matrix(res)
    assert rows == [0, 1] and cols == [0, 1, 2]
    assert m[1][2] == 2002.0 and m[0][0] == 1000.0
    figs = fig.figures(res)
    assert [t for t, _ in figs] == ["Interconnect bandwidth by node pair",
                                    "Interconnect latency and bandwidth by message size"]
    ax = figs[0][1].axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["N0", "N1"]
    assert "1 MiB" in ax.get_title()
    assert fig.figures([]) == []


def test_suite_stage_without_mpi_is_skipped_with_the_reason(monkeypatch, tmp_path):
    from numascope.errors import Unavailable
    from numascope.profile import QUICK
    from numascope.suite import all_stages
    st = next(s for s in all_stages() if s.name == "interconnect")
    topo = read_topology(hwloc_fixture("8em64t-2s2ca2c"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(Unavailable, match="MPI is not installed"):
        st.load(topo, QUICK)
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")
    _, cases = st.load(topo, QUICK)
    assert [c.params["path"] for c in cases] == ["same node", "other socket"]
    assert cases[0].params["net"]["sizes"] == list(net.QUICK_SIZES)
    from numascope.profile import FULL
    _, cases = st.load(topo, FULL)
    assert cases[0].params["net"]["pairs"] == 4 and len(cases[0].params["multi_ranks"]) == 8


def test_mpi_world_from_the_launchers_environment():
    assert L.mpi_world({}) is None
    assert L.mpi_world({"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2"}) == (1, 2)
    assert L.mpi_world({"PMIX_RANK": "0", "SLURM_STEP_NUM_TASKS": "2"}) == (0, 2)
    assert L.mpi_world({"PMI_RANK": "1", "PMI_SIZE": "2"}) == (1, 2)
    # an sbatch script is not a rank
    assert L.mpi_world({"SLURM_PROCID": "0", "SLURM_NTASKS": "2"}) is None


# -- OSU's method: one buffer per rank, OSU's counts, the validation pass ---------------------

def test_osu_counts_and_buffers_follow_the_mode():
    p = net.NetParams(sizes=(8, 4 * net.MIB), lat_iters=10000, bw_iters=100)
    ranks = [L.Rank((0,), 0), L.Rank((1,), 0)]
    lat, bw = p.plan("lat", ranks), p.plan("bw", ranks)
    # osu_util.h: LAT_LOOP_SMALL/SKIP 10000/100, LARGE 1000/10; BW 100/10, LARGE 20/2
    assert (lat.iters, lat.warmup, lat.large_iters, lat.large_warmup) == (10000, 100, 1000, 10)
    assert (bw.iters, bw.warmup, bw.large_iters, bw.large_warmup) == (100, 10, 20, 2)
    assert p.buffers == "same" and bw.buffers == "same"
    cmd = L.command("mpirun", "pt2pt", bw)
    assert cmd[cmd.index("--buffers") + 1] == "same"
    assert cmd[cmd.index("--check-iters") + 1] == str(L.CHECK_ITERS)
    # one send and one receive buffer of the largest message per rank, and the validation
    # pass's window of slots (a message each: bw sends or receives one window, bibw both)
    big = 4 * net.MIB
    assert net.buffer_bytes(p) == 2 * big + 2 * 64 * big
    assert net.buffer_bytes(net.NetParams(sizes=(big,), tests=("lat",))) == 2 * big
    assert net.buffer_bytes(net.NetParams(sizes=(big,), tests=("lat", "bw"))) == 2 * big + 64 * big
    assert net.buffer_bytes(net.NetParams(sizes=(big,), tests=("bw",), window=8)) == 10 * big
    d = net.NetParams(sizes=(4 * net.MIB,), buffers="distinct")
    assert net.buffer_bytes(d) == 64 * 8 * net.MIB
    assert net.NetParams.from_dict(d.to_dict()) == d
    old = p.to_dict()
    del old["buffers"]                 # a record from before --buffers: per-slot buffers
    assert net.NetParams.from_dict(old).buffers == "distinct"
    with pytest.raises(UserError, match="OSU's programs reuse one buffer"):
        net.NetParams(buffers="distinct", engine="osu")
    with pytest.raises(UserError, match="same or distinct"):
        net.NetParams(buffers="fresh")
    topo = read_topology(hwloc_fixture("8em64t-2s2ca2c"))
    same = net.Interconnect().cases(topo, params=p)
    dist = net.Interconnect().cases(topo, params=net.NetParams(sizes=(8,), buffers="distinct"))
    assert all(c.params["buffers"] == "same" and "distinct" not in c.label for c in same)
    assert all(c.params["buffers"] == "distinct" and c.label.endswith("distinct buffers)")
               for c in dist)


def test_osu_gets_its_own_counts_at_every_size():
    """OMB 7.x (osu_util.c): -i and -x set the small and the large messages' counts alike,
    so OSU's defaults are one launch without them, and other counts two launches."""
    ranks = [L.Rank((0,), 0), L.Rank((1,), 0)]
    sizes = (8, 8192, 16384, 4 * net.MIB)
    for test, it in (("lat", 10000), ("bw", 100), ("bibw", 100)):
        plan = net.NetParams(sizes=sizes, lat_iters=10000, bw_iters=100).plan(test, ranks)
        [(got, cmd)] = L.osu_commands("mpirun", L.OSU[test], plan, None)
        assert got == sizes and "-i" not in cmd and "-x" not in cmd, cmd
        assert cmd[cmd.index("-m") + 1] == f"8:{4 * net.MIB}"
        assert ("-W" in cmd) == (test != "lat")
    plan = net.NetParams(sizes=sizes, lat_iters=1000, bw_iters=20).plan("lat", ranks)
    (s1, c1), (s2, c2) = L.osu_commands("mpirun", "osu_latency", plan, None)
    assert s1 == (8, 8192) and s2 == (16384, 4 * net.MIB)      # 8 KiB is small (> 8192)
    assert c1[c1.index("-i") + 1:c1.index("-i") + 4] == ["1000", "-x", "10"]
    assert c2[c2.index("-i") + 1:c2.index("-i") + 4] == ["100", "-x", "1"]
    assert c1[c1.index("-m") + 1] == "8:8192" and c2[c2.index("-m") + 1] == f"16384:{4 * net.MIB}"
    small = net.NetParams(sizes=(8, 64), lat_iters=20, bw_iters=20).plan("bw", ranks)
    [(s, c)] = L.osu_commands("mpirun", "osu_bw", small, None)
    assert s == (8, 64) and c[c.index("-i") + 1] == "20"
    rows = L.check_osu(plan, {16384: (3.0, None), 4 * net.MIB: (900.0, None)}, "t", s2)
    assert sorted(rows) == [16384, 4 * net.MIB] and rows[16384]["iters"] == 100


def test_pages_default_to_the_hosts_setting_and_thp_is_named():
    ranks = [L.Rank((0,), 0), L.Rank((1,), 0)]
    p = net.NetParams(sizes=(8,))
    assert p.pages == "system"
    for pages, env in (("system", False), ("none", False), ("thp", True)):
        plan = net.NetParams(sizes=(8,), pages=pages).plan("bw", ranks)
        cmd = L.command("mpirun", "pt2pt", plan)
        assert cmd[cmd.index("--pages") + 1] == pages
        [(_, osu)] = L.osu_commands("mpirun", "osu_bw", plan, None)
        assert ("GLIBC_TUNABLES=glibc.malloc.hugetlb=1" in osu) == env
    topo = read_topology(hwloc_fixture("8em64t-2s2ca2c"))
    plain = net.Interconnect().cases(topo, params=p)
    thp = net.Interconnect().cases(topo, params=net.NetParams(sizes=(8,), pages="thp"))
    none = net.Interconnect().cases(topo, params=net.NetParams(sizes=(8,), pages="none"))
    assert all(c.label.endswith(")") and "THP" not in c.label for c in plain)
    assert all(c.label.endswith(", THP madvised)") for c in thp)
    assert all(c.label.endswith(", base pages)") for c in none)
    old = p.to_dict()
    del old["pages"]                   # a record from before --pages: measured with THP
    assert net.NetParams.from_dict(old).pages == "thp"
    with pytest.raises(UserError):
        net.NetParams(pages="hugetlb")


def test_the_validation_pass_is_required_and_names_size_and_offset():
    plan = net.NetParams(sizes=(8, 4096), window=4).plan("bibw", [L.Rank((0,), 0),
                                                               L.Rank((1,), 0)])
    # bibw: both ways, every message of the window, CHECK_ITERS times
    n = L.check_messages("bibw", 4, 1, L.CHECK_ITERS)
    assert n == 2 * 4 * L.CHECK_ITERS and L.check_messages("lat", 1, 1, 2) == 4
    ranks = [{"type": "rank", "rank": i, "cpu": i, "send_node": 0, "recv_node": 0}
             for i in (0, 1)]
    res = [{"type": "result", "size": s, "mbps": 5.0} for s in (8, 4096)]
    # one buffer per rank: a window into each receiver's one buffer per iteration, each way
    assert L.reused_windows("bibw", "same", 1, L.CHECK_ITERS) == 2 * L.CHECK_ITERS
    assert L.reused_windows("lat", "same", 1, 2) == L.reused_windows("bw", "distinct", 4, 2) == 0
    ok = [{"type": "check", "test": "bibw", "size": s, "messages": n, "bytes": n * s,
           "reused": 2 * L.CHECK_ITERS, "bad": 0, "offset": -1} for s in (8, 4096)]
    done = {"type": "done", "cpu_end": [0, 1]}

    def run(checks):
        return L.Launched([], [*ranks, *res, *checks, done], "", "", 0.1)
    L.check(plan, run(ok), "t")
    with pytest.raises(MeasurementError, match="bibw 4096 B: no validation pass"):
        L.check(plan, run(ok[:1]), "t")
    with pytest.raises(MeasurementError, match=f"checked {n - 1} of {n} messages"):
        L.check(plan, run([ok[0], {**ok[1], "messages": n - 1}]), "t")
    with pytest.raises(MeasurementError, match=r"4096 B: validation pass: 1 of .* offset 2048"):
        L.check(plan, run([ok[0], {**ok[1], "bad": 1, "offset": 2048}]), "t")


@needs_mpi
def test_a_corrupted_byte_fails_the_run_with_the_size_and_offset():
    # the program's test-only knob flips byte SIZE/2 of one message of that size
    env = {**os.environ, **HOOKS, "NUMASCOPE_NET_CORRUPT": "4096"}
    r = cli("--json", "--cpus", "0,1", "--sizes", "8,4096", "--iters", "5", "--tests", "bw",
            env=env)
    assert r.returncode == 3, r.stderr
    msg = json.loads(r.stdout)["errors"][0]["message"]
    assert "bw 4096 B: validation pass: 1 of 128 messages and 1 of 2 windows into the one " \
        "receive buffer" in msg and "offset 2048" in msg, msg
    r = cli("--cpus", "0,1", "--sizes", "8,4096", "--iters", "5", "--tests", "lat",
            env={**os.environ, **HOOKS, "NUMASCOPE_NET_CORRUPT": "8"})
    assert r.returncode == 3 and "lat 8 B: validation pass" in r.stderr, r.stderr
    assert "offset 4" in r.stderr and "Traceback" not in r.stderr


@needs_mpi
def test_distinct_buffers_run_and_are_labelled():
    r = cli("--json", "--cpus", "0,1", "--sizes", "8,4096", "--iters", "5", "--tests",
            "bw,bibw", "--buffers", "distinct")
    assert r.returncode == 0, r.stderr
    [res] = json.loads(r.stdout)["results"]
    assert res["params"]["buffers"] == "distinct" and res["case"].endswith("distinct buffers)")
    assert "--buffers distinct" in res["params"]["commands"]["bw"]
    assert "distinct buffers" in res["metrics"]["bandwidth"]["note"]
    assert res["metrics"]["bibw_4096"]["median"] > 0


def test_replayed_topology_is_not_checked_against_this_hosts_memory(monkeypatch):
    """The fresh-clone failure: a replayed 2-socket machine's suite cases were refused by
    this host's free memory. With almost nothing free here, they still load; the live
    topology's check still refuses."""
    from numascope.host import Host
    from numascope.profile import FULL
    from numascope.suite import all_stages
    monkeypatch.setattr(Host, "node_free", lambda self, node, _read=None: 1 << 20)
    monkeypatch.setattr(Host, "mem_available", lambda self: 1 << 20)
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")
    st = next(s for s in all_stages() if s.name == "interconnect")
    topo = read_topology(hwloc_fixture("8em64t-2s2ca2c"))
    _, cases = st.load(topo, FULL)
    assert [c.params["path"] for c in cases] == ["same node", "other socket"]
    assert cases[0].params["net"]["sizes"][-1] == 4 * net.MIB
    net.check_memory(net.NetParams(sizes=(64 * net.MIB,), window=1024, buffers="distinct",
                                   pairs=256), [cases[0].params], topo)
    with pytest.raises(UserError, match="is free .*use smaller --sizes or --pairs"):
        net.Interconnect().cases(read_topology("/"), params=net.NetParams(sizes=(4 * net.MIB,)))


def _res(path: str, lat: list[float], bw: list[float]) -> BenchResult:
    return BenchResult("interconnect", f"{path} (CPU 0 - CPU 1)",
                       {"path": path, "cpu_a": 0, "cpu_b": 1, "node_a": 0, "node_b": 0,
                        "distance": 10, "mpi": "Open MPI", "engine": "numascope",
                        "buffers": "same", "net": {"pairs": 0}},
                       {"latency": Metric("latency", "us", False, lat),
                        "bandwidth": Metric("bandwidth", "MB/s", True, bw),
                        "lat_8": Metric("lat_8", "us", False, lat)})


def test_table_shows_the_median_first_and_the_best_beside_it():
    from rich.console import Console

    from numascope.families.interconnect.command import render
    con = Console(record=True, width=200)
    render([_res("same L3", [1.5, 2.5, 9.0], [900.0, 1000.0, 4000.0])], con, [], (), None)
    text = con.export_text()
    head = next(ln for ln in text.splitlines() if "lat us" in ln).split()
    assert head[head.index("us") + 1] == "best" and head[head.index("MB/s") + 1] == "best"
    lines = text.splitlines()
    at = next(i for i, ln in enumerate(lines) if "same L3" in ln)
    assert "CPU 0 → CPU 1" in lines[at + 1] and "node 0 → node 0" in lines[at + 2]
    row = lines[at].split()
    i = row.index("10")                       # the distance column, then lat, best, bw, best
    assert row[i + 1:i + 5] == ["2.5", "1.5", "1,000", "4,000"], row
    assert "median of 3 launches, best beside it" in " ".join(text.split())
    assert "buffers same: one send and one receive buffer per rank" in text
    # a record without the word was measured with THP madvised (before --pages system)
    assert "pages thp: THP madvised" in text
    r = _res("same L3", [1.0], [1.0])
    r.params["net"]["pages"] = "system"
    con = Console(record=True, width=200)
    render([r], con, [], (), None)
    assert "pages system: no madvise, the host's THP setting" in con.export_text()


def test_ranks_read_as_rank_0_to_rank_1_not_as_ranges():
    from rich.console import Console

    from numascope.families.interconnect.command import render
    con = Console(record=True, width=80)
    render([_res("same L3", [1.5], [900.0])], con, [], (), None)
    text = con.export_text()
    assert "rank 0's CPU and node → rank 1's" in " ".join(text.split())
    assert "CPU 0 → CPU 1" in text and "node 0 → node 0" in text
    assert "0-1" not in text and "0-0" not in text


def test_an_interrupted_sweep_says_how_many_of_the_planned_cases_finished():
    from rich.console import Console

    from numascope.families.interconnect.command import cases_text, render
    assert cases_text(1) == "1 case" and cases_text(3, 3) == "3 cases"
    assert cases_text(2, 5) == "2 of 5 cases finished"
    con = Console(record=True, width=200)
    render([_res("same L3", [1.5], [900.0])], con, [], (), None, planned=4)
    assert "1 of 4 cases finished" in con.export_text()


def test_pairs_is_left_out_for_none_and_counts_have_upper_bounds():
    from numascope.families.interconnect.options import MAX_ITERS, TABLE
    assert net.NetParams().pairs == net.NO_PAIRS and "mbw" not in net.NetParams().all_tests()
    assert net.NetParams(pairs=2).all_tests()[-1] == "mbw"
    with pytest.raises(UserError, match="leave it out for no multi-pair test"):
        TABLE["pairs"].convert("0")
    with pytest.raises(UserError, match="at most 1,000,000 per size"):
        TABLE["iters"].convert(str(MAX_ITERS + 1))
    assert TABLE["iters"].convert(f"{MAX_ITERS},1") == (MAX_ITERS, 1)
    with pytest.raises(UserError):
        net.NetParams(lat_iters=MAX_ITERS + 1)
    for name in ("pairs", "iters", "reps", "window", "timeout"):   # bounds in the docs
        o = TABLE[name]
        assert o.high is not None or "…" in o.rule_text or "at most" in o.rule_text, name


def test_a_launch_that_starts_no_rank_is_its_own_exit_naming_the_hosts():
    """Unknown hosts: mpirun starts no rank. That is not a corrupted payload (3) but a
    launch failure, exit 6, naming the hosts, with mpirun's cause in whole sentences."""
    import shutil
    import subprocess
    import sys
    if not shutil.which("mpirun"):
        pytest.skip("no mpirun")
    p = subprocess.run([sys.executable, "-m", "numascope", "net", "--hosts",
                        "nosuchhost-a.invalid,nosuchhost-b.invalid", "--sizes", "8",
                        "--iters", "5", "--timeout", "60"], capture_output=True, text=True,
                       timeout=120, check=False)
    assert p.returncode == 6, (p.returncode, p.stderr)
    line = p.stderr.strip()
    assert len(line.splitlines()) == 1 and "could not start the ranks on" in line
    assert "nosuchhost-a.invalid" in line and not line.endswith("…)")


def test_the_timeout_floor_refuses_only_what_no_machine_could_do():
    from numascope.families.interconnect import bench as net
    p = net.NetParams(sizes=(8,), lat_iters=1000, bw_iters=100)
    assert 0 < p.least_launch_s("lat") < 0.01 and p.least_launch_s("bw") < 0.01
    with pytest.raises(UserError, match="takes at least"):
        net.NetParams(sizes=(1 << 20,), lat_iters=1_000_000, bw_iters=1_000_000, timeout=1)
    for prof in ("quick", "full", "smoke"):       # the presets always fit their timeout
        from numascope.profile import profile
        net.profile_params(profile(prof), 8)
