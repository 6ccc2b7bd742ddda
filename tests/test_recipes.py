"""Placement recipes (numascope.recipes): every generated launcher line expanded back into
CPU sets agrees with the layout and keeps its promises; the expanders against hand-worked
cases; the generated mpirun lines run for real here (--report-bindings and each rank's own
Cpus_allowed_list), and against Open MPI's own mapper on replayed topologies (hwloc XML of
the dump given to mpirun as its topology)."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess

import pytest
from test_layouts import SYNTH, replay, synth

from numascope.errors import UserError
from numascope.recipes import (
    add_job_args,
    expand_numactl,
    expand_omp,
    expand_openmpi,
    expand_srun,
    expand_taskset,
    for_job,
    job_recipe,
    parse_report_bindings,
    places_text,
    report_cpus,
    section,
)
from numascope.topology import read_topology
from numascope.topology.lists import parse_list

FIXTURES = ["16amd64-8n2c", "8em64t-2s2ca2c", "64amd64-4s2n4ca2co", "16em64t-4s2c2t",
            "16amd64-8n2c-cpusets"]


def shapes_for(topo):
    n = len(topo.usable_cpus())
    out = [{}, {"threads": 2}, {"ranks": 2}, {"ranks": len(topo.nodes)}, {"ranks": 3},
           {"ranks": n}, {"ranks": 2, "threads": 2, "unit": "node"}]
    if topo.l3s:
        out.append({"ranks": len(topo.l3s)})
    return out


def assert_promises(topo, recipe):
    """From the expanded lines alone: each rank inside its unit, no CPU twice, only usable
    CPUs, and the same sets from every launcher."""
    lay = recipe.layout
    usable = set(topo.usable_cpus())
    assert recipe.agrees() == [], recipe.agrees()
    for la in (recipe.openmpi, recipe.slurm, recipe.numactl, recipe.taskset):
        seen = [c for cpus in la.yields for c in cpus]
        assert len(seen) == len(set(seen)), f"{la.tool}: a CPU twice"
        assert set(seen) <= usable
        assert len(la.yields) == lay.ranks
        if lay.unit in ("l3", "node", "socket"):
            key = {"l3": "l3", "node": "node", "socket": "package"}[lay.unit]
            for cpus in la.yields:
                assert len({getattr(topo.cpu(c), key) for c in cpus}) == 1, (la.line, cpus)
    # OpenMP inside rank 0: one place per thread, inside the binding
    places = recipe.omp.yields
    assert len(places) == lay.threads
    assert {c for p in places for c in p} <= set(lay.slots[0].cpus)
    json.dumps(recipe.to_dict())


@pytest.mark.parametrize("name", FIXTURES)
def test_replayed_recipes_keep_their_promises(name):
    topo = replay(name)
    for shape in shapes_for(topo):
        try:
            r = for_job(topo, **shape)
        except UserError as e:     # only a shape its domains cannot hold may be refused
            assert "domains have" in str(e) and "unit" in shape, str(e)
            continue
        assert_promises(topo, r)


@pytest.mark.parametrize("tree", sorted(SYNTH))
def test_synthetic_recipes_keep_their_promises(tree):
    topo = synth(**SYNTH[tree])
    for shape in [*shapes_for(topo), {"threads": 64 if len(topo.cpus) >= 64 else 4},
                  {"ranks": 4, "threads": 3, "smt": True}]:
        assert_promises(topo, for_job(topo, **shape))


def test_two_sockets_worked_by_hand():
    """Core 2 Quad pair: package 0 holds the even CPUs, package 1 the odd ones."""
    topo = replay("8em64t-2s2ca2c")
    r = for_job(topo, ranks=2)
    assert "--map-by ppr:1:socket:pe=4 --bind-to core" in r.openmpi.line
    assert r.openmpi.yields == ((0, 2, 4, 6), (1, 3, 5, 7))
    assert r.slurm.argv[:7] == ("srun", "-n", "2", "-c", "4", "--cpu-bind=cores",
                                "--distribution=block:block")
    assert expand_srun(r.slurm.argv, topo) == [[0, 2, 4, 6], [1, 3, 5, 7]]
    assert [a[1] for a in r.numactl.per_rank] == ["--physcpubind=0,2,4,6",
                                                  "--physcpubind=1,3,5,7"]


def test_eight_nodes_worked_by_hand():
    topo = replay("16amd64-8n2c")
    r = for_job(topo, ranks=8)
    assert "--map-by ppr:1:numa:pe=2" in r.openmpi.line
    assert r.numactl.per_rank[3][1:3] == ("--cpunodebind=3", "--membind=3")
    assert r.taskset.per_rank[3] == ("taskset", "-c", "6-7", "./app")
    # fewer ranks than nodes: spread, so no --map-by can say it: a rankfile
    three = for_job(topo, ranks=3)
    assert "--rankfile" in three.openmpi.argv
    text = three.openmpi.files["numascope.rankfile"]
    assert text.splitlines() == ["rank 0=localhost slot=0-1", "rank 1=localhost slot=4-5",
                                 "rank 2=localhost slot=10-11"]


def test_smt_machine_lines():
    topo = replay("16em64t-4s2c2t")               # 4 packages × 2 cores × 2 threads
    r = for_job(topo, ranks=4)
    assert "--hint=nomultithread" in r.slurm.argv
    assert r.openmpi.yields[0] == (0, 4, 8, 12)    # whole cores: both threads bound
    smt = for_job(topo, ranks=16)
    assert "--use-hwthread-cpus" in smt.openmpi.argv and smt.layout.smt
    assert any("SMT" in n for n in smt.layout.notes)


def test_expanders_by_hand():
    topo = synth(packages=2, l3_per_pkg=2, cores_per_l3=4, smt=2)   # 16 cores, 32 threads
    assert expand_srun(["srun", "-n", "3", "--cpu-bind=mask_cpu:0x3,0xc"], topo) == \
        [[0, 1], [2, 3], [0, 1]]
    assert expand_srun(["srun", "-n", "2", "--cpu-bind=verbose,map_cpu:5,9"], topo) == [[5], [9]]
    # -c 2 counted in hardware threads without --hint: the first task takes core 0 whole
    assert expand_srun(["srun", "-n", "2", "-c", "2", "--cpu-bind=cores"], topo) == \
        [[0, 16], [1, 17]]
    assert expand_srun(["srun", "-n", "2", "-c", "2", "--hint=nomultithread",
                        "--cpu-bind=cores"], topo) == [[0, 1, 16, 17], [2, 3, 18, 19]]
    assert expand_openmpi(["mpirun", "-np", "3", "--map-by", "ppr:2:l3cache:pe=2",
                           "--bind-to", "core", "./a"], topo) == \
        [[0, 1, 16, 17], [2, 3, 18, 19], [4, 5, 20, 21]]
    assert expand_openmpi(["mpirun", "-np", "2", "--map-by", "ppr:1:socket:pe=4",
                           "--use-hwthread-cpus", "--bind-to", "hwthread", "./a"], topo) == \
        [[0, 1, 16, 17], [8, 9, 24, 25]]
    assert expand_numactl(["numactl", "--cpunodebind=1", "--membind=1", "x"], topo) == \
        list(range(8, 16)) + list(range(24, 32))
    assert expand_taskset(["taskset", "-c", "0-2,7", "x"]) == [0, 1, 2, 7]
    env = {"OMP_NUM_THREADS": "4", "OMP_PLACES": "{0}:4:8", "OMP_PROC_BIND": "close"}
    assert expand_omp(env, list(range(32)), topo) == [[0], [8], [16], [24]]
    spread = {"OMP_NUM_THREADS": "2", "OMP_PLACES": "cores", "OMP_PROC_BIND": "spread"}
    assert expand_omp(spread, [0, 1, 2, 3, 16, 17, 18, 19], topo) == [[0, 16], [2, 18]]


@pytest.mark.parametrize("argv,says", [
    (["mpirun", "-np", "2", "--map-by", "ppr:1:l2cache", "x"], "not one numascope expands"),
    (["mpirun", "-np", "2", "--frobnicate", "x"], "--frobnicate"),
    (["mpirun", "-np", "9", "--map-by", "ppr:1:socket:pe=1", "x"], "places only 2"),
    (["mpirun", "-np", "2", "--rankfile", "rf", "x"], "physical"),
])
def test_expand_openmpi_refuses_what_it_cannot_read(argv, says):
    with pytest.raises(UserError, match=says):
        expand_openmpi(argv, synth(), files={"rf": "rank 0=h slot=0\n"})


def test_places_text_round_trip():
    for cpus in [(0, 8, 16, 24), (0, 2, 4, 6, 1, 3, 5, 7), (5,), (3, 4, 9, 10, 11, 40)]:
        text = places_text(cpus)
        env = {"OMP_NUM_THREADS": str(len(cpus)), "OMP_PLACES": text}
        assert [p[0] for p in expand_omp(env, cpus, synth())] == list(cpus), text
    assert places_text((0, 8, 16, 24)) == "{0}:4:8"


REPORT = """\
[n1:01234] MCW rank 0 bound to socket 0[core 0[hwt 0-1]], socket 0[core 1[hwt 0-1]]: [BB/BB/../..][../../../..]
[n1:01234] MCW rank 1 bound to socket 1[core 4[hwt 0]]: [../../../..][B./../../..]
[n1:01234] MCW rank 2 is not bound (or bound to all available processors)
"""


def test_parse_report_bindings():
    got = parse_report_bindings(REPORT)
    assert got[0] == [(0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1)]
    assert got[1] == [(1, 4, 0)] and got[2] is None
    topo = synth(packages=2, l3_per_pkg=1, cores_per_l3=4, smt=2)
    assert report_cpus(got, topo) == {0: [0, 1, 8, 9], 1: [4], 2: list(range(16))}


def test_lines_fit_and_brief_has_three():
    topo = synth(**SYNTH["2s-8l3-8c-smt"])
    for shape in [{"ranks": 16, "threads": 8}, {"threads": 64}, {"ranks": 5}]:
        r = for_job(topo, **shape)
        for line in r.lines():     # 80 columns, but a long CPU list or mask is one word
            words = line.rstrip(" \\").split()
            assert len(line) <= 80 or (len(words) <= 3 and max(map(len, words)) > 60), line
        assert len(r.lines(brief=True)) == 3 and r.lines(brief=True)[1] == r.openmpi.line


def test_job_args_and_recipe():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int)          # a command's own --threads is reused
    add_job_args(p)
    topo = synth()
    assert job_recipe(p.parse_args([]), topo) is None
    r = job_recipe(p.parse_args(["--ranks", "4", "--threads", "2"]), topo)
    assert (r.layout.ranks, r.layout.threads) == (4, 2)
    assert job_recipe(p.parse_args(["--threads", "3"]), topo).layout.ranks == 1
    with pytest.raises(SystemExit):
        p.parse_args(["--unit", "rack"])
    sec = section(r)
    assert sec["section"] == "recipe" and [i["tool"] for i in sec["items"]] == \
        ["Open MPI", "Slurm", "OpenMP", "numactl", "taskset"]
    json.dumps(sec)


# -- Open MPI itself ----------------------------------------------------------------------------

MPIRUN = shutil.which("mpirun")
ROOT = ["--allow-run-as-root"] if os.geteuid() == 0 else []
needs_mpirun = pytest.mark.skipif(MPIRUN is None, reason="Open MPI's mpirun is not installed")
SHOW = "sh -c 'echo RANK=$OMPI_COMM_WORLD_RANK $(grep Cpus_allowed_list /proc/self/status)'"


def live_shapes(topo):
    cores = len({(c.package, c.core) for c in topo.cpus if c.usable})
    last = str(max(topo.usable_cpus()))
    out = [{"ranks": 1}, {"ranks": min(cores, 4), "threads": 1},
           {"ranks": 1, "threads": 1, "within": last}]          # a rankfile
    if topo.l3s and cores >= 2:
        out.append({"ranks": 2, "threads": 1, "unit": "l3"})    # ppr:2:l3cache
    return out


@needs_mpirun
def test_generated_mpirun_lines_run_here(tmp_path):
    """The real thing: Open MPI binds each rank where expand_openmpi says, by the ranks' own
    Cpus_allowed_list and by --report-bindings."""
    topo = read_topology("/")
    for shape in live_shapes(topo):
        r = for_job(topo, program=SHOW, **shape)
        for name, text in r.openmpi.files.items():
            (tmp_path / name).write_text(text)
        argv = [MPIRUN, *ROOT, "--report-bindings", *r.openmpi.argv[1:]]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         check=False)
        assert out.returncode == 0, out.stderr[-2000:]
        own = {int(m[0]): parse_list(m[1]) for m in
               re.findall(r"RANK=(\d+) Cpus_allowed_list: (\S+)", out.stdout)}
        want = {i: sorted(c) for i, c in enumerate(r.openmpi.yields)}
        assert own == want, (r.openmpi.line, own)
        assert want == {i: list(s.cpus) for i, s in enumerate(r.layout.slots)}
        reported = report_cpus(parse_report_bindings(out.stderr + out.stdout), topo)
        assert reported == want, (r.openmpi.line, out.stderr[-1000:])


LSTOPO = shutil.which("lstopo-no-graphics")
ORACLE = [("16em64t-4s2c2t", {"ranks": 4}), ("16em64t-4s2c2t", {"ranks": 16}),
          ("8em64t-2s2ca2c", {"ranks": 4, "threads": 2}), ("16amd64-8n2c", {"ranks": 8}),
          ("16amd64-8n2c", {"ranks": 3}), ("64amd64-4s2n4ca2co", {"ranks": 16, "threads": 4}),
          ("64amd64-4s2n4ca2co", {"ranks": 4, "threads": 4})]


@pytest.fixture(scope="module")
def hwloc_xml(tmp_path_factory):
    """name → hwloc XML of the replayed dump (lstopo with HWLOC_FSROOT)."""
    from conftest import hwloc_fixture

    from numascope.topology.archive import extract_dump
    d = tmp_path_factory.mktemp("xml")
    out = {}
    for name in sorted({n for n, _ in ORACLE}):
        (d / name).mkdir()
        root = extract_dump(hwloc_fixture(name), d / name)
        xml = d / f"{name}.xml"
        subprocess.run([LSTOPO, "--of", "xml", str(xml)], env={**os.environ,
                       "HWLOC_FSROOT": str(root)}, capture_output=True, check=True, timeout=60)
        out[name] = xml
    return out


@needs_mpirun
@pytest.mark.skipif(LSTOPO is None, reason="hwloc's lstopo-no-graphics is not installed")
@pytest.mark.parametrize("name,shape", ORACLE, ids=[f"{n}-{s}" for n, s in ORACLE])
def test_open_mpi_maps_replayed_machines_the_same(hwloc_xml, tmp_path, name, shape):
    """Open MPI's own mapper on the dump's topology (hwloc_base_topo_file): binding a rank to
    CPUs this machine lacks fails with the bitmap it computed, one message per rank; every
    rank whose CPUs miss this machine's must show exactly the set the recipe expands to."""
    topo = replay(name)
    r = for_job(topo, program="/bin/true", **shape)
    for fname, text in r.openmpi.files.items():
        (tmp_path / fname).write_text(text)
    argv = [MPIRUN, *ROOT, "--oversubscribe", "--mca", "orte_base_help_aggregate", "0",
            "--mca", "hwloc_base_topo_file", str(hwloc_xml[name]), *r.openmpi.argv[1:]]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         check=False)
    text = out.stdout + out.stderr
    assert "unrecognized" not in text and "not enough" not in text.lower(), text[:800]
    here = set(read_topology("/").usable_cpus())
    got = sorted(tuple(parse_list(m)) for m in re.findall(r'for bitmap "([^"]+)"', text))
    want = sorted(c for c in r.openmpi.yields if not set(c) & here)
    assert want, "a case where every rank lands on this machine's CPUs checks nothing"
    assert got == want, (r.openmpi.line, text[:600])


def test_rankfile_written_by_recipe_names_every_rank():
    topo = replay("16amd64-8n2c")
    r = for_job(topo, ranks=5, unit="node")
    if r.openmpi.files:
        lines = next(iter(r.openmpi.files.values())).splitlines()
        assert [int(x.split()[1].split("=")[0]) for x in lines] == list(range(5))
    assert len(r.openmpi.yields) == 5
