"""`numascope topo --hwloc-xml`: a stored run's node matrix as hwloc memory attributes,
written with hwloc's own tools and read back by lstopo."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from conftest import hwloc_fixture

from numascope.errors import UserError
from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord, topology_digest
from numascope.results.store import Store
from numascope.topology import read_topology
from numascope.topology.hwloc_xml import NodeFigure, cpuset, memattrs

HWLOC = shutil.which("hwloc-annotate") and (shutil.which("lstopo-no-graphics")
                                            or shutil.which("lstopo"))
needs_hwloc = pytest.mark.skipif(not HWLOC, reason="hwloc tools (lstopo, hwloc-annotate) "
                                 "are not installed")
MIB = 2**20


def _matrix(src: int, dst: int, lat: float, gbs: float) -> BenchResult:
    return BenchResult("matrix", f"N{src}->N{dst}", {"src": src, "dst": dst},
                       {"latency": Metric("latency", "ns", False, [lat - 1, lat, lat + 1]),
                        "bandwidth": Metric("bandwidth", "GB/s", True, [gbs] * 3)})


def _store(path, topo, results, digest=True) -> str:
    rec = RunRecord.new()
    rec.host = {"topology_digest": topology_digest(topo)} if digest else {}
    rec.results = results
    rec.status = "complete"
    with Store.open(path, write=True) as st:
        st.save_run(rec)
    return rec.run_id


def _topo(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "numascope", "topo", *args],
                          capture_output=True, text=True, timeout=300, check=False, env=env)


def _memattrs(xml) -> str:
    lstopo = shutil.which("lstopo-no-graphics") or shutil.which("lstopo")
    return subprocess.run([lstopo, "--input", str(xml), "--memattrs"], capture_output=True,
                          text=True, check=True, timeout=60).stdout


def test_cpuset_strings():
    assert cpuset([0, 1]) == "0x00000003"
    assert cpuset([4, 5, 6, 7]) == "0x000000f0"
    assert cpuset([0, 32]) == "0x00000001,0x00000001"
    assert cpuset([40]) == "0x00000100,0x00000000"


def test_cpuset_round_trip():
    from numascope.topology.hwloc_xml import _mask
    for cpus in ([0, 1], [0, 32], [40], [3, 63, 64, 100]):
        assert _mask(cpuset(cpus)) == sum(1 << c for c in cpus)
    assert _mask("0x1,0x3") == (1 << 32) | 3


def test_attrs_in_hwloc_units():
    attrs = memattrs([NodeFigure(0, 1, "latency", 123.4), NodeFigure(0, 1, "bandwidth", 10.0)])
    got = {a.name: a.value for a in attrs}
    assert got == {"Latency": 123, "ReadLatency": 123,
                   "Bandwidth": round(10e9 / MIB), "ReadBandwidth": round(10e9 / MIB)}
    assert {(a.initiator, a.target) for a in attrs} == {(0, 1)}
    with pytest.raises(UserError, match="run result N0->N1: latency 0.2 is not a figure"):
        memattrs([NodeFigure(0, 1, "latency", 0.2, "run result N0->N1")])


def test_a_run_becomes_plain_figures():
    """The topo command turns stored results into the topology layer's figures: validated
    matrix results only, latency then bandwidth, each metric's median."""
    from numascope.results.hwloc import matrix_figures
    bad = _matrix(0, 0, 1.0, 1.0)
    bad.validated = False
    empty = BenchResult("matrix", "N1->N0", {"src": 1, "dst": 0},
                        {"latency": Metric("latency", "ns", False, [])})
    figures = matrix_figures([_matrix(0, 1, 123.4, 10.0), bad, empty,
                              BenchResult("bandwidth", "x", {}, {})])
    assert figures == [NodeFigure(0, 1, "latency", 123.4, "run result N0->N1"),
                       NodeFigure(0, 1, "bandwidth", 10.0, "run result N0->N1")]
    assert matrix_figures([bad]) == []


@needs_hwloc
def test_this_host_1x1_matrix_into_hwloc(tmp_path):
    topo = read_topology("/")
    n0 = topo.node_ids()[0]
    run_id = _store(tmp_path / "s.db", topo, [_matrix(n0, n0, 87.0, 12.5)])
    out = tmp_path / "topo.xml"
    p = _topo("--hwloc-xml", str(out), "--store", str(tmp_path / "s.db"))
    assert p.returncode == 0, p.stderr
    assert run_id in p.stdout
    text = _memattrs(out)
    mib = round(12.5e9 / MIB)
    init = cpuset(list(topo.node(n0).cpus))
    for name, v in (("Latency", 87), ("ReadLatency", 87), ("Bandwidth", mib),
                    ("ReadBandwidth", mib)):
        block = text.split(f"name `{name}'")[1].split("Memory attribute")[0]
        assert f"= {v} from cpuset {init}" in block, (name, block)
    assert not list(tmp_path.glob(".topo.xml.*"))       # no temporary left behind


@needs_hwloc
def test_replayed_machine_from_a_named_run(tmp_path):
    """hwloc's fake HMAT machine: CPU nodes 0-3 without memory, CPU-less nodes 5-10."""
    dump = hwloc_fixture("fakememinitiators-1np2c+1npp+gi")
    topo = read_topology(dump)
    first = _store(tmp_path / "s.db", topo, [_matrix(0, 5, 111.0, 40.0),
                                            _matrix(0, 7, 333.0, 2.0)])
    _store(tmp_path / "s.db", topo, [_matrix(0, 5, 999.0, 1.0)])   # a later run
    out = tmp_path / "fake.xml"
    p = _topo("--sysfs-root", str(dump), "--hwloc-xml", str(out), "--from-run", first,
              "--store", str(tmp_path / "s.db"), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["run"] == first and len(doc["results"]) == 8
    # HMAT's values for nodes 5 (from CPUs 0-1) and 7 (from package 0, CPUs 0-1 and 4-5)
    # would absorb ours: they are replaced, 4 attributes each
    assert doc["firmware_values_replaced"] == 8
    text = _memattrs(out)
    lat = text.split("name `ReadLatency'")[1].split("Memory attribute")[0]
    # node 5 is hwloc's NUMANode L#0, node 7 L#2 (lstopo's order); initiator: CPUs 0-1
    assert "NUMANode L#0 = 111 from cpuset 0x00000003" in lat
    assert "NUMANode L#2 = 333 from cpuset 0x00000003" in lat
    assert "NUMANode L#1 = 26 from cpuset 0x00000030" in lat     # untouched firmware value
    assert "999" not in text and "0x00000033" not in lat


@needs_hwloc
def test_refuses_a_run_from_another_machine(tmp_path):
    other = read_topology(hwloc_fixture("16amd64-8n2c"))
    _store(tmp_path / "s.db", other, [_matrix(0, 0, 80.0, 10.0)])
    p = _topo("--hwloc-xml", str(tmp_path / "x.xml"), "--store", str(tmp_path / "s.db"))
    assert p.returncode == 2 and "another machine" in p.stderr
    assert p.stderr.count("\n") == 1 and not (tmp_path / "x.xml").exists()


@needs_hwloc
def test_no_matrix_run_and_bad_options(tmp_path):
    topo = read_topology("/")
    _store(tmp_path / "s.db", topo, [BenchResult("bandwidth", "x", {}, {})])
    db = str(tmp_path / "s.db")
    p = _topo("--hwloc-xml", str(tmp_path / "x.xml"), "--store", db)
    assert p.returncode == 2 and "no stored run holds a node matrix" in p.stderr
    p = _topo("--from-run", "latest", "--store", db)
    assert p.returncode == 2 and "--hwloc-xml" in p.stderr
    p = _topo("--hwloc-xml", str(tmp_path), "--store", db)
    assert p.returncode == 2


def test_missing_hwloc_tools_exit_4(tmp_path, monkeypatch, capsys):
    from numascope.cli import main
    monkeypatch.setenv("PATH", str(tmp_path))            # no lstopo, no hwloc-annotate
    assert main(["topo", "--hwloc-xml", str(tmp_path / "x.xml")]) == 4
    err = capsys.readouterr().err
    assert "hwloc tools missing" in err and err.count("\n") == 1
