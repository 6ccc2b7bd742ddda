"""The smoke profile (`run --smoke`): every family sized from it, its runs kept apart from
measured ones (compare, advise, report), and a real smoke run of every stage here."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import hwloc_fixture
from test_store_helpers import make_result, make_run

from numascope.cli import main as cli
from numascope.families.bandwidth import bench as bandwidth
from numascope.families.compress import bench as compress
from numascope.families.compute import bench as compute
from numascope.families.interconnect import bench as net
from numascope.families.latency import family as latency
from numascope.families.matrix import bench as matrix
from numascope.families.storage import bench as io
from numascope.families.storage.targets import takes_direct_io
from numascope.profile import QUICK, SMOKE, SMOKE_NOTE, readable
from numascope.report import html as report_html
from numascope.results.store import Store
from numascope.topology import read_topology

WS = SMOKE.working_set


@pytest.fixture(scope="module")
def eight():
    return read_topology(hwloc_fixture("16amd64-8n2c"))


def test_every_memory_family_uses_the_fixed_working_set(eight):
    for c in bandwidth.suite_cases(eight, SMOKE):
        assert c.params.size_bytes == WS, c.label
    for c in latency.suite_cases(eight, SMOKE):
        assert c.params.bytes == WS
    for c in matrix.suite_cases(eight, SMOKE):
        assert (c.params.params.bytes, c.params.params.bw_bytes) == (WS, WS)
    for c in compress.suite_cases(eight, SMOKE):
        assert c.params.data.size == WS
    # quick keeps its rules: arrays 4 x the LLC, latency over at least 256 MiB
    assert all(c.params.size_bytes >= 64 << 20 for c in bandwidth.suite_cases(eight, QUICK))
    assert latency.suite_cases(eight, QUICK)[0].params.bytes >= 256 << 20


def test_compute_net_and_storage_are_small():
    topo = read_topology("/")
    sizes = {(c.params["kind"], c.params.get("n")) for c in compute.suite_cases(topo, SMOKE)}
    assert sizes == {("clock", None), ("dgemm", 128), ("lu", 128)}
    p = net.profile_params(SMOKE)
    assert (p.sizes, p.lat_iters, p.bw_iters) == (net.SMOKE_SIZES, 100, 4)
    assert net.profile_params(QUICK).sizes == net.QUICK_SIZES


def test_storage_smoke_job_is_short(tmp_path):
    cases = io.Storage(str(tmp_path)).suite_cases(read_topology("/"), SMOKE)
    assert [(c.params["io"]["runtime"], c.params["io"]["ramp"]) for c in cases] == \
        [(1.0, 0.0)] * len(cases)


def test_profile_names():
    assert not readable("smoke") and readable("quick") and readable("full")
    assert readable("tiny")       # a name an older version wrote: its numbers stand


def _store(tmp_path, profiles: list[str]):
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        for i, prof in enumerate(profiles):
            rec = make_run({"cfg": prof + str(i % 2)}, [make_result(values=[10.0 + i] * 5)])
            rec.profile = prof
            st.save_run(rec)
    return db


def test_compare_keeps_smoke_runs_apart(tmp_path, capsys):
    db = _store(tmp_path, ["smoke", "quick", "smoke", "quick"])
    assert cli(["compare", "cfg=smoke0", "cfg=quick1", "--store", str(db)]) == 2
    err = capsys.readouterr().err
    assert "is a smoke run" in err and "compare smoke runs only with smoke runs" in err
    assert err.count("\n") == 1
    # smoke with smoke: allowed; quick with full: allowed, the profile a configuration
    assert cli(["compare", "cfg=smoke0", "cfg=smoke0", "--store", str(db)]) == 2   # same runs
    capsys.readouterr()


def test_compare_names_the_profile_as_a_difference(tmp_path, capsys):
    db = _store(tmp_path, ["quick", "full"])
    assert cli(["compare", "cfg=quick0", "cfg=full1", "--store", str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config_differences"]["profile"] == {"a": ["quick"], "b": ["full"]}


def test_report_and_terminal_say_smoke(tmp_path, capsys):
    rec = make_run()
    rec.profile = "smoke"
    assert SMOKE_NOTE in report_html.render([rec]).replace("&#x27;", "'")
    measured = make_run()
    both = report_html.render([measured, rec])
    assert f"{rec.run_id} not compared with {measured.run_id}: one is a smoke run" in both
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        st.save_run(rec)
    assert cli(["show", rec.run_id, "--store", str(db)]) == 0
    assert "smoke profile" in capsys.readouterr().out


def test_run_smoke_every_stage_on_this_machine(tmp_path, capsys):
    """The real thing: every stage runs; storage when fio is here and the temporary
    directory takes direct I/O, interconnect when Open MPI is here."""
    io_dir = tmp_path / "io"
    io_dir.mkdir()
    args = ["run", "--smoke", "--store", str(tmp_path / "runs.db"), "--no-report", "--json"]
    storage = shutil.which("fio") is not None and takes_direct_io(io_dir)
    if storage:
        args += ["--io-dir", str(io_dir)]
    assert cli(args) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert SMOKE_NOTE in " ".join(captured.err.split())
    assert doc["profile"] == "smoke" and doc["status"] == "complete"
    status = {s["name"]: s["status"] for s in doc["stages"]}
    want_skipped = {n for n, here in (("storage", storage),
                                      ("interconnect", shutil.which("mpirun") is not None))
                    if not here}
    assert {n for n, s in status.items() if s != "done"} == want_skipped, doc["stages"]
    assert list(io_dir.iterdir()) == []          # fio's file removed
