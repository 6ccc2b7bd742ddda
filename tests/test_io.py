"""The storage family and `numascope io`: the placement matrix on a replayed machine with NVMe
drives on known nodes (which node each job is bound to), drive scaling and its knee, real
short fio runs on files in a temp folder (files removed, also after Ctrl-C/SIGTERM), and the
command's refusals."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from interrupting import SIGNALS, finish, start
from test_io_targets import majmin_of, nvme_machine

from numascope.cli import main
from numascope.errors import Unavailable, UserError
from numascope.families.storage import bench as io
from numascope.families.storage.bench import (
    Storage,
    job_groups,
    knee_text,
    placement_rows,
    scaling_rows,
)
from numascope.families.storage.fio import IoParams, job_text
from numascope.families.storage.targets import locate
from numascope.profile import FULL, QUICK
from numascope.results.record import BenchResult, Metric
from numascope.topology import read_topology

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="fio is not installed")
SMALL = IoParams(runtime=1, ramp=0, size=8 << 20)


def _ours(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("numascope-io-"))


# -- the placement matrix on a replayed machine ------------------------------------------------

@pytest.fixture
def nvme_on_node1(tmp_path):
    """A 4-node machine (2 per socket) whose nvme0 (on node 1) holds tmp_path/data's
    filesystem, and a second drive nvme1 on node 3."""
    data = tmp_path / "data"
    data.mkdir()
    root = nvme_machine(tmp_path / "m", drives={"nvme0": "1", "nvme1": "3"},
                        fs_majmin=majmin_of(data))
    return root, read_topology(root), data


def test_placement_study_binds_jobs_and_buffers_to_each_node(nvme_on_node1):
    root, topo, data = nvme_on_node1
    cases = Storage(root=str(root)).cases(topo, params=SMALL, dirs=[str(data)],
                                          mode="placement")
    rows = [(c.params["placement"][0]["where"], c.params["placement"][0]["role"],
             c.params["distance"]) for c in cases]
    # local first, then the other node of its socket, then the far socket, then unpinned
    assert rows == [("N1", "local", 10), ("N0", "remote", 12), ("N2", "remote", 32),
                    ("N3", "remote", 32), ("unpinned", "unpinned", None)]
    assert {c.params["target_node"] for c in cases} == {1}
    for c in cases:
        (g,) = job_groups(c, [str(data / "f")])
        node = c.params["placement"][0]["cpu_node"]
        text = job_text(SMALL, [g], "io_uring")
        if node is None:
            assert g.cpus is None and "cpus_allowed" not in text and "numa_mem" not in text
            continue
        cpus = tuple(x.id for x in topo.cpus if x.node == node)
        assert g.cpus == cpus and g.mem_nodes == (node,)
        assert f"numa_mem_policy=bind:{node}" in text
        from numascope.placement import format_cpulist
        assert f"cpus_allowed={format_cpulist(cpus)}" in text


def test_run_is_local_to_the_drive_by_default_and_as_asked_otherwise(nvme_on_node1):
    root, topo, data = nvme_on_node1
    bench = Storage(root=str(root))
    (c,) = bench.cases(topo, params=SMALL, dirs=[str(data)])
    assert c.params["placement"][0]["where"] == "N1" and "N1" in c.label
    from numascope.memspec import MemorySpec
    (c2,) = bench.cases(topo, params=SMALL, dirs=[str(data)], cpus=[0, 1],
                        memory=MemorySpec("bind", (2,)), where="0-1")
    (g,) = job_groups(c2, ["f"])
    assert g.cpus == (0, 1) and g.mem_nodes == (2,) and "0-1, bind N2" in c2.label


def test_scaling_places_each_drive_local_to_it(nvme_on_node1):
    root, topo, data = nvme_on_node1
    ts = [locate(topo, str(data), "dir", str(root), majmin=m) for m in ("259:1", "259:3")]
    assert [t.node for t in ts] == [1, 3]
    cases = Storage(root=str(root)).cases(topo, params=SMALL, targets=ts, mode="scaling")
    assert [c.params["drives"] for c in cases] == [1, 2]
    g0, g1 = job_groups(cases[1], ["a", "b"])
    assert g0.mem_nodes == (1,) and g1.mem_nodes == (3,)
    assert set(g0.cpus) == {x.id for x in topo.cpus if x.node == 1}
    assert set(g1.cpus) == {x.id for x in topo.cpus if x.node == 3}


def test_unknown_node_measures_every_node_and_unpinned(tmp_path):
    root = nvme_machine(tmp_path / "m", drives={"nvme0": "-1"}, fs_majmin=majmin_of(tmp_path))
    topo = read_topology(root)
    cases = Storage(root=str(root)).cases(topo, params=SMALL, dirs=[str(tmp_path)],
                                          mode="placement")
    assert [c.params["placement"][0]["role"] for c in cases] == ["node unknown"] * 4 + \
        ["unpinned"]
    assert all(c.params["distance"] is None for c in cases)
    (run,) = Storage(root=str(root)).cases(topo, params=SMALL, dirs=[str(tmp_path)])
    assert run.params["placement"][0]["cpus"] is None     # unpinned, and said
    assert "node unknown" in run.label


def test_sweep_is_queue_depth_times_jobs(nvme_on_node1):
    root, topo, data = nvme_on_node1
    cases = Storage(root=str(root)).cases(topo, params=SMALL, dirs=[str(data)],
                                          sweep=[(1, 1), (1, 2), (32, 1), (32, 2)])
    assert [(c.params["io"]["iodepth"], c.params["io"]["numjobs"]) for c in cases] == \
        [(1, 1), (1, 2), (32, 1), (32, 2)]
    assert len({c.label for c in cases}) == 4


def test_study_refusals(nvme_on_node1):
    root, topo, data = nvme_on_node1
    bench = Storage(root=str(root))
    with pytest.raises(UserError, match="at least two --dir"):
        bench.cases(topo, params=SMALL, dirs=[str(data)], mode="scaling")
    with pytest.raises(UserError, match="chooses the placement itself"):
        bench.cases(topo, params=SMALL, dirs=[str(data)], mode="placement", cpus=[0])
    with pytest.raises(UserError, match="no target"):
        bench.cases(topo, params=SMALL)


def test_suite_needs_an_io_dir_and_reads_the_profile(nvme_on_node1):
    root, topo, data = nvme_on_node1
    with pytest.raises(Unavailable, match="no --io-dir given"):
        Storage().suite_cases(topo, QUICK)
    s = Storage(str(data), root=str(root))
    (q,) = s.suite_cases(topo, QUICK)
    assert q.params["mode"] == "run" and q.params["placement"][0]["role"] == "local"
    assert q.params["io"]["rw"] == "randread" and q.params["io"]["bs"] == 4096
    assert q.params["io"]["size"] == QUICK.max_bytes and q.params["reps"] == QUICK.reps
    full = s.suite_cases(topo, FULL)
    assert {c.params["mode"] for c in full} == {"placement"} and len(full) == 5
    assert full[0].params["io"]["runtime"] > q.params["io"]["runtime"]


def test_suite_with_several_dirs_measures_each_drive_and_the_drive_count(nvme_on_node1):
    """`run --io-dir A --io-dir B`: each drive alone, then 1..N at once (io --scaling's
    cases); full: each drive's placement study instead of the lone run."""
    root, topo, data = nvme_on_node1
    other = data / "second"
    other.mkdir()
    s = Storage([str(data), str(other)], root=str(root))
    quick = s.suite_cases(topo, QUICK)
    assert [(c.params["mode"], c.params.get("drives")) for c in quick] == [
        ("run", None), ("run", None), ("scaling", 1), ("scaling", 2)]
    assert [c.params["targets"][0]["path"] for c in quick[:2]] == [str(data), str(other)]
    assert [c.label.split(" job ")[1] for c in quick] == [
        "t0 alone, N1", "t1 alone, N1", "1 drive", "2 drives"]
    assert len({c.label for c in quick}) == len(quick)          # every case its own name
    assert all(pl["role"] == "local" for c in quick for pl in c.params["placement"])
    full = s.suite_cases(topo, FULL)
    modes = [c.params["mode"] for c in full]
    assert modes == ["placement"] * 10 + ["scaling"] * 2
    assert {c.label.split(" job ")[1][:3] for c in full[:10]} == {"t0 ", "t1 "}
    assert len({c.label for c in full}) == len(full)
    # one directory: as before, no sweep
    assert [c.params["mode"] for c in Storage(str(data), root=str(root)).suite_cases(
        topo, QUICK)] == ["run"]


def test_registered_as_the_storage_family():
    from numascope.families import by_name, families
    assert Storage in families() and by_name("storage") is Storage
    assert Storage.family == "storage" and Storage.title


# -- reading results -------------------------------------------------------------------------

def _res(k: int, iops: float, sys_cpu: float) -> BenchResult:
    m = {"iops": Metric("iops", "IO/s", True, [iops]),
         "clat_p99": Metric("clat_p99", "us", False, [100.0 * k]),
         "cpu_sys": Metric("cpu_sys", "%", False, [sys_cpu]),
         "kernel_cpus": Metric("kernel_cpus", "CPUs", False, [sys_cpu * k / 100])}
    return BenchResult("storage", f"{k} drives", {"mode": "scaling", "drives": k}, m)


def test_knee_is_the_first_count_below_90_percent_per_drive():
    rs = [_res(1, 500e3, 30), _res(2, 990e3, 35), _res(3, 1.2e6, 80), _res(4, 1.3e6, 95)]
    rows = scaling_rows(rs)
    assert [r["knee"] for r in rows] == [False, False, True, False]
    assert rows[1]["efficiency"] == pytest.approx(0.99)
    text = knee_text(rows)
    assert text.startswith("knee at 3 drives: 400,000 IO/s per drive, 80% of one drive")
    assert "kernel time 2.40 CPUs (80% sys per job) vs 0.30 (30%) with one" in text
    assert knee_text(scaling_rows(rs[:2])) is None


def test_placement_rows_relative_to_local():
    def r(where, role, iops, d):
        m = {k: Metric(k, "", True, [v]) for k, v in
             (("iops", iops), ("clat_p99", 90.0), ("cpu_sys", 20.0))}
        return BenchResult("storage", where, {
            "mode": "placement", "distance": d, "targets": [{"path": "/d", "node": 1}],
            "placement": [{"where": where, "role": role}]}, m)
    rows = placement_rows([r("N1", "local", 500e3, 10), r("N0", "remote", 400e3, 21),
                           r("unpinned", "unpinned", 450e3, None)])
    assert [round(x["vs_local"], 2) for x in rows] == [1.0, 0.8, 0.9]
    assert rows[1]["distance"] == 21


def test_interrupts_of_a_drive_are_counted_per_cpu(tmp_path):
    f = tmp_path / "interrupts"
    f.write_text("           CPU0       CPU1\n"
                 " 40:         10          0  PCI-MSIX-0000:41:00.0   0-edge   nvme0q0\n"
                 " 41:          5        100  PCI-MSIX-0000:41:00.0   1-edge   nvme0q1\n"
                 " 42:          7          7  PCI-MSIX-0000:99:00.0   0-edge   eth0\n")
    a = io.interrupts(["0000:41:00.0"], str(f))
    f.write_text(f.read_text().replace("100", "160").replace("     10 ", "     12 "))
    b = io.interrupts(["0000:41:00.0"], str(f))
    assert io.diff_interrupts(a, b) == {"cpu0": 2, "cpu1": 60}
    assert io.interrupts([], str(f)) == {} and io.interrupts(["x"], str(tmp_path / "no")) == {}


# -- real fio runs ------------------------------------------------------------------------------

@needs_fio
def test_a_real_short_run_on_a_file_in_a_temp_folder(tmp_path):
    topo = read_topology("/")
    bench = Storage()
    (case,) = bench.cases(topo, params=SMALL, dirs=[str(tmp_path)], reps=2)
    r = bench.measure(topo, case)
    assert r.family == "storage" and len(r.metrics["iops"].values) == 2     # one per fio run
    assert all(v > 0 for v in r.metrics["iops"].values)
    assert r.metrics["bandwidth"].median == pytest.approx(r.metrics["iops"].median * 4096 / 1e6,
                                                          rel=0.05)
    p50, p99, p999 = (r.metrics[k].median for k in ("clat_p50", "clat_p99", "clat_p99.9"))
    assert 0 < p50 <= p99 <= p999
    assert r.metrics["errors"].values == [0.0, 0.0]
    assert r.params["fio_version"].startswith("fio-") and "[t0]" in r.params["job"]
    assert r.params["engine"] in ("io_uring", "libaio")
    assert _ours(tmp_path) == []


@needs_fio
def test_scaling_with_two_folders_through_the_command(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    rc = main(["io", "--dir", str(a), "--dir", str(b), "--scaling", "--runtime", "1",
               "--ramp", "0", "--size", "8M", "--json"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    doc = json.loads(cap.out)
    assert doc["command"] == "io" and doc["errors"] == [] and len(doc["results"]) == 2
    two = doc["results"][1]
    assert two["params"]["drives"] == 2
    assert two["metrics"]["iops"]["median"] == pytest.approx(
        two["metrics"]["iops_t0"]["median"] + two["metrics"]["iops_t1"]["median"], rel=1e-6)
    assert [r["drives"] for r in doc["scaling_rows"]] == [1, 2]
    assert doc["fio_version"].startswith("fio-")
    # the same results in a stored run's HTML report: the storage figure is drawn there
    from test_store_helpers import make_run

    from numascope.report.html import write_report
    from numascope.results.record import BenchResult
    rec = make_run(results=[BenchResult.from_dict(r) for r in doc["results"]])
    html = write_report([rec], tmp_path / "r.html").read_text()
    assert "Storage drive scaling" in html and "<svg" in html
    assert _ours(a) == [] and _ours(b) == []


@needs_fio
def test_the_table_fits_80_columns(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    from numascope import console
    monkeypatch.setattr(console.out, "_width", 80, raising=False)
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    rc = main(["io", "--dir", str(a), "--dir", str(b), "--scaling", "--runtime", "1",
               "--ramp", "0", "--size", "8M", "--iodepth", "4"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "Drive scaling" in out and "per drive" in out
    assert all(len(line.rstrip()) <= 80 for line in out.splitlines()), out
    assert "…" not in out


def test_fio_missing_is_exit_4_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("NUMASCOPE_FIO", str(tmp_path / "no-fio"))
    rc = main(["io", "--dir", str(tmp_path), "--runtime", "1", "--size", "8M"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 4 and len(err) == 1 and "fio not found" in err[0]
    assert _ours(tmp_path) == []


def test_a_write_to_a_device_is_refused_by_the_command(capsys):
    rc = main(["io", "--device", "/dev/nvme0n1", "--readonly", "--rw", "randrw"])
    err = capsys.readouterr().err
    assert rc == 2 and "never writes to a block device" in err


@needs_fio
@pytest.mark.parametrize("signum", SIGNALS)
def test_a_stop_signal_kills_fio_and_removes_the_files(tmp_path, signum):
    p = start("-m", "numascope", "io", "--dir", str(tmp_path), "--runtime", "60", "--ramp",
              "0", "--size", "8M")
    end = time.monotonic() + 120
    fio_pid = None
    while fio_pid is None or not _ours(tmp_path):     # fio started and our file exists
        if p.poll() is not None:
            pytest.fail(f"ended before fio ran: {p.communicate()}")
        if time.monotonic() > end:
            p.kill()
            pytest.fail("fio never started")
        fio_pid = _fio_of(p.pid)
        time.sleep(0.05)
    time.sleep(0.5)                                   # fio is doing I/O by now
    session = _session_members(fio_pid)
    assert session
    p.send_signal(signum)
    _, err, _ = finish(p, 60)
    assert p.returncode == 128 + signum, err
    assert "nothing finished" in err and "internal error" not in err
    assert _ours(tmp_path) == [], "numascope's file was left behind"
    assert not [m for m in session if _alive(m)], "a fio process outlived numascope"


def _fio_of(ppid: int) -> int | None:
    """The child fio running numascope's job file (not one of the short probes)."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            st = (d / "stat").read_text()
        except OSError:
            continue
        comm = st[st.index("(") + 1:st.rindex(")")]
        fields = st[st.rindex(")") + 2:].split()
        if comm == "fio" and int(fields[1]) == ppid:
            try:
                argv = (d / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(a.endswith(b".fio") for a in argv):
                return int(d.name)
    return None


def _session_members(sid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                st = (d / "stat").read_text()
            except OSError:
                continue
            if int(st[st.rindex(")") + 2:].split()[3]) == sid:
                out.append(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        st = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return st[st.rindex(")") + 2:].split()[0] != "Z"


def test_nothing_is_created_when_the_study_is_refused(tmp_path):
    with pytest.raises(UserError):
        Storage().cases(read_topology("/"), params=SMALL, dirs=[str(tmp_path)],
                        mode="scaling")
    assert os.listdir(tmp_path) == []


@needs_fio
def test_inside_reusing_files_cases_share_one_file_removed_at_the_end(tmp_path):
    topo = read_topology("/")
    bench = Storage()
    cases = bench.cases(topo, params=SMALL, dirs=[str(tmp_path)], sweep=[(1, 1), (4, 1)])
    with bench.reusing_files() as files:
        r1 = bench.measure(topo, cases[0])
        (f,) = _ours(tmp_path)
        assert files == {str(tmp_path): str(tmp_path / f)}
        r2 = bench.measure(topo, cases[1])
        assert _ours(tmp_path) == [f]
    assert f"filename={tmp_path / f}" in r1.params["job"] and \
        f"filename={tmp_path / f}" in r2.params["job"]
    assert _ours(tmp_path) == []


@needs_fio
def test_fio_without_numa_support_runs_under_the_cpus_and_says_so(tmp_path, monkeypatch):
    topo = read_topology("/")
    cpu = min(os.sched_getaffinity(0))
    monkeypatch.setattr(io, "probe", lambda path: ("io_uring", False))
    bench = Storage()
    (case,) = bench.cases(topo, params=SMALL, dirs=[str(tmp_path)], cpus=[cpu], where=str(cpu))
    r = bench.measure(topo, case)
    assert "cpus_allowed" not in r.params["job"] and r.params["fio_numa"] is False
    assert r.params["command"].startswith(f"(under CPUs {cpu}) ")
    assert any("sched_setaffinity" in n for n in r.notes)
    assert r.metrics["iops"].median > 0 and _ours(tmp_path) == []


# -- what a stopped or killed run leaves, and the header after a stop ----------------------------

def _leftover(folder: Path) -> Path:
    import subprocess
    import sys
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()                                 # a PID that no longer runs
    f = folder / f"numascope-io-{p.pid}-k1ll3d.dat"
    f.write_bytes(b"\0" * 8192)
    (folder / f"numascope-io-{p.pid}-k1ll3d.fio").write_text("[global]\n")
    return f


def _no_fio(monkeypatch):
    """Stop `numascope io` where fio would be looked for: what comes before (the checks,
    the leftovers) has run."""
    monkeypatch.setenv("NUMASCOPE_FIO", "/nonexistent/fio")


def test_a_killed_runs_leftovers_are_named_not_removed(tmp_path, capsys, monkeypatch):
    _no_fio(monkeypatch)
    f = _leftover(tmp_path)
    assert main(["io", "--dir", str(tmp_path), "--size", "8M"]) == 4
    err = " ".join(capsys.readouterr().err.split())
    assert "holds 2 files a stopped numascope io left" in err and f.name in err
    assert "--remove-leftovers removes them" in err
    assert f.exists() and f.with_suffix(".fio").exists()


def test_remove_leftovers_removes_them_and_says_so(tmp_path, capsys, monkeypatch):
    _no_fio(monkeypatch)
    f = _leftover(tmp_path)
    keep = tmp_path / "numascope-io-mine.txt"
    keep.write_text("the user's")
    assert main(["io", "--dir", str(tmp_path), "--size", "8M", "--remove-leftovers"]) == 4
    err = " ".join(capsys.readouterr().err.split())
    assert "removed 2 files a stopped numascope io left" in err and f.name in err
    assert sorted(os.listdir(tmp_path)) == [keep.name]
    # nothing left: nothing said
    assert main(["io", "--dir", str(tmp_path), "--size", "8M", "--remove-leftovers"]) == 4
    assert "left" not in capsys.readouterr().err.replace("fio not found", "")


def _io_result(label: str) -> BenchResult:
    m = {k: Metric(k, "", True, [1.0]) for k in
         ("iops", "bandwidth", "clat_p50", "clat_p99", "clat_p99.9", "cpu_usr", "cpu_sys",
          "errors")}
    m["errors"] = Metric("errors", "count", False, [0.0])
    return BenchResult("storage", label, {
        "fio_version": "fio-3.36", "engine": "io_uring", "mode": "run",
        "io": SMALL.to_dict(), "targets": [{"path": "/data", "node": 0, "disk": "nvme0n1"}]},
        m, {"where": ["N0"]}, [])


def test_after_a_stop_the_header_says_finished_of_planned():
    from rich.console import Console

    from numascope.families.storage.command import header, render
    rs = [_io_result("a"), _io_result("b")]
    assert header(rs).endswith("direct I/O; 2 cases")
    assert header(rs, 2).endswith("; 2 cases")
    assert header(rs, 5).endswith("; 2 of 5 cases finished")
    assert header(rs[:1], 1).endswith("; 1 case")
    con = Console(record=True, width=80)
    render(rs[:1], con, "run", planned=3)
    assert "1 of 3 cases finished" in con.export_text()
