"""HPL under MPI with rank layouts (`peak --layout per-l3|per-node|per-core`): the cases,
the generated hpcc launcher on replayed topologies (expanded back: each rank where the
layout promises), bad flags, and one real tiny run per layout here when hpcc is installed."""

from __future__ import annotations

import os
import shutil

import pytest
from test_layouts import replay

from numascope.cli import main as cli_main
from numascope.errors import UserError
from numascope.families.compute.bench import Compute, ComputeParams
from numascope.layouts import named
from numascope.peaks import hpcc
from numascope.recipes import expand_openmpi
from numascope.topology import read_topology

ONLY_HPL = {"clock": False, "dgemm": (), "lu": (), "clock_ghz": 2.0}


def test_one_case_per_layout():
    topo = replay("64amd64-4s2n4ca2co")
    cases = Compute().cases(topo, ComputeParams(**ONLY_HPL, hpl_n=500,
                                                hpl_layouts=("per-l3", "per-node", "per-core")))
    assert [c.label for c in cases] == ["hpl per-l3 np=8", "hpl per-node np=8",
                                        "hpl per-core np=64"]
    assert [c.params["threads"] for c in cases] == [8, 8, 1]
    assert all(c.params["n"] == 500 for c in cases)


def test_plain_hpl_np_path_unchanged():
    topo = replay("16amd64-8n2c")
    cases = Compute().cases(topo, ComputeParams(**ONLY_HPL, hpl=True, hpl_np=4))
    assert [c.label for c in cases] == ["hpl np=4"] and "layout" not in cases[0].params


@pytest.mark.parametrize("kw,says", [
    ({"hpl_layouts": ("per-rack",)}, "unknown layout"),
    ({"hpl_layouts": ("per-l3", "per-l3")}, "twice"),
    ({"hpl_layouts": ("per-l3",), "hpl_np": 4}, "give one"),
])
def test_bad_layout_params(kw, says):
    with pytest.raises(UserError, match=says):
        ComputeParams(**kw)


def test_layout_without_l3_is_refused_before_measuring():
    with pytest.raises(UserError, match="no L3"):
        Compute().cases(replay("16amd64-8n2c"), ComputeParams(**ONLY_HPL,
                                                              hpl_layouts=("per-l3",)))


@pytest.mark.parametrize("name,layout,ranks,threads", [
    ("64amd64-4s2n4ca2co", "per-l3", 8, 8), ("16amd64-8n2c", "per-node", 8, 2),
    ("16em64t-4s2c2t", "per-l3", 4, 2), ("8em64t-2s2ca2c", "per-socket", 2, 4),
    ("16em64t-4s2c2t", "per-core", 8, 1),
])
def test_hpcc_launcher_on_replayed_machines(monkeypatch, name, layout, ranks, threads):
    topo = replay(name)
    monkeypatch.setattr(hpcc.shutil, "which", lambda tool: f"/usr/bin/{tool}")
    monkeypatch.setattr(hpcc.os, "geteuid", lambda: 0)
    lay = named(topo, layout)
    argv, files = hpcc.layout_command(lay, topo)
    assert argv[:3] == ["/usr/bin/mpirun", "--allow-run-as-root", "--report-bindings"]
    assert argv[-1] == "/usr/bin/hpcc" and f"OPENBLAS_NUM_THREADS={threads}" in argv
    assert f"OMP_NUM_THREADS={threads}" in argv
    got = expand_openmpi(argv, topo, files=files)
    assert len(got) == ranks
    key = {"per-l3": "l3", "per-node": "node", "per-socket": "package", "per-core": "core"}
    for cpus in got:             # each rank inside one domain of its kind, no CPU twice
        assert len({getattr(topo.cpu(c), key[layout]) for c in cpus}) == 1
    flat = [c for cpus in got for c in cpus]
    assert len(flat) == len(set(flat)) and set(flat) <= set(topo.usable_cpus())


@pytest.mark.parametrize("argv,says", [
    (["peak", "--layout", "per-rack", "--hpl-n", "500"], "unknown layout"),
    (["peak", "--layout", "per-core", "--hpl-np", "2"], "give one"),
    (["peak", "--layout", "per-core,", "--hpl-n", "500"], "empty layout name"),
    (["peak", "--layout", "per-core", "--hpl-n", "10"], "too small"),
])
def test_bad_flags_exit_2(argv, says, capsys):
    assert cli_main(argv) == 2
    assert says in capsys.readouterr().err


# -- a real tiny run ---------------------------------------------------------------------------

HAVE = shutil.which("hpcc") and shutil.which("mpirun")


@pytest.mark.skipif(not HAVE, reason="hpcc and Open MPI's mpirun are needed")
def test_hpl_per_layout_runs_here():
    """One command, one result per layout, each with its exact launcher line and where Open
    MPI really bound the ranks (--report-bindings) matching the layout."""
    topo = read_topology("/")
    names = ["per-core"] + (["per-l3"] if topo.l3s else [])
    bench = Compute(ComputeParams(**ONLY_HPL, hpl_n=400, hpl_layouts=tuple(names)))
    cases = bench.cases(topo, bench.params)
    assert len(cases) == len(names)
    for case, name in zip(cases, names):
        r = bench.measure(topo, case)
        lay = named(topo, name)
        assert r.params["layout"] == name and r.params["passed"]
        assert r.params["residual"] < 16 and r.metrics["gflops"].best > 0
        line = r.params["launcher"]
        assert "--report-bindings" in line and line.endswith("hpcc")
        assert ("--map-by" in line) or ("--rankfile" in line)
        assert r.params["procs"] == lay.ranks and r.placement["threads_per_rank"] == lay.threads
        assert r.params["bindings_agree"] is True, (r.params.get("bound"), line)
        assert any(n.startswith("launcher: ") for n in r.notes)
        assert os.path.basename(line.split()[0]) == "mpirun"
