"""`numascope run --memory / --links / --io-dir …`, for real: smoke runs of a stage or two
on this machine, the peaks they store (given by the user), the efficiency table they
give, the drive-count sweep, and every bad value refused before anything is measured."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from numascope.analysis.efficiency import efficiency_table
from numascope.cli import main as cli
from numascope.families.storage import bench as io
from numascope.families.storage.targets import takes_direct_io
from numascope.results.store import Store

MEMORY, LINKS = "1x DDR4-3200", "xgmi:4x16@32"      # 25.6 GB/s per socket; 512 GB/s


def _run(tmp_path, capsys, *args: str):
    db, html = tmp_path / "runs.db", tmp_path / "r.html"
    rc = cli(["run", "--smoke", *args, "--store", str(db), "--report", str(html), "--json"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    doc = json.loads(cap.out)
    with Store.open(db) as st:
        rec = st.get_run(doc["run_id"])
    return doc, rec, html.read_text(), cap.err


def test_memory_and_links_give_the_run_its_peaks_and_percent_of_peak(tmp_path, capsys):
    """Without the compute stage: the run's own peak summary takes them."""
    doc, rec, html, _ = _run(tmp_path, capsys, "--stage", "bandwidth", "--memory", MEMORY,
                             "--links", LINKS)
    sockets = max(1, doc["host"]["packages"])
    peaks = rec.host["peaks"]
    assert peaks == doc["host"]["peaks"]                     # stored as reported
    assert peaks["dram"]["origin"] == "user" and peaks["dram"]["source"] == "--memory"
    assert peaks["dram"]["value"] == pytest.approx(25.6 * sockets)
    assert peaks["links"]["origin"] == "user" and peaks["links"]["value"] == 512.0
    rows = efficiency_table(peaks, results=rec.results)
    dram = next(r for r in rows if r.what == "DRAM bandwidth")
    assert dram.peak == peaks["dram"]["value"] and dram.measured > 0
    assert dram.percent == pytest.approx(100 * dram.measured / dram.peak)
    links = next(r for r in rows if r.what.startswith("inter-socket links"))
    assert links.peak == 512.0 or links.peak == 256.0      # 256: one direction, measured
    # the report shows the same percentage (wherever its efficiency table sits)
    assert re.search(rf">\s*{dram.percent:.1f}\s*%", html), dram.percent


def test_the_compute_stage_computes_its_peaks_with_them(tmp_path, capsys):
    """With the compute stage: the peaks its clock result carries use them, and each
    FLOP/s row says what measured it."""
    _, rec, _, _ = _run(tmp_path, capsys, "--stage", "compute", "--memory", MEMORY,
                        "--links", LINKS)
    (clock,) = [r for r in rec.results if r.params.get("kind") == "clock"]
    assert clock.params["peaks"]["dram"]["origin"] == "user"
    assert clock.params["peaks"]["links"]["origin"] == "user"
    assert rec.host["peaks"]["dram"]["value"] == clock.params["peaks"]["dram"]["value"]
    assert rec.host["peaks"]["flops"]["origin"] == "measured"
    names = {r.what for r in efficiency_table(rec.host["peaks"], results=rec.results)
             if r.unit == "GFLOP/s"}
    assert names == {"FP64 FLOP/s (DGEMM, BLAS)", "FP64 FLOP/s (LU solve, LAPACK dgesv)"}


def test_smbios_disagreeing_with_memory_is_said_and_recorded(tmp_path, capsys, monkeypatch):
    """SMBIOS (a recorded Genoa socket: 12 channels of DDR5-4800) says more than the user's
    --memory: the user's figure is used, a note quotes SMBIOS's, the run warns."""
    from pathlib import Path

    from numascope import peaks as peaks_mod
    from numascope.peaks import smbios
    text = (Path(__file__).parent / "data" / "dmidecode_t17_ddr5_genoa_1s.txt").read_text()
    monkeypatch.setattr(peaks_mod, "read_slots",
                        lambda root="/": (smbios.parse_dmidecode(text), "dmidecode -t 17"))
    doc, rec, _, err = _run(tmp_path, capsys, "--stage", "bandwidth", "--memory", MEMORY)
    dram = rec.host["peaks"]["dram"]
    assert dram["origin"] == "user" and dram["value"] == pytest.approx(
        25.6 * max(1, doc["host"]["packages"]))
    (note,) = peaks_mod.disagreements(rec.host["peaks"])
    assert "12 populated channels × 4800 MT/s" in note and "--memory figure is used" in note
    assert "warning: --memory: SMBIOS (dmidecode -t 17) says otherwise" in " ".join(err.split())


def test_io_dirs_give_the_run_the_drive_count_sweep(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    if shutil.which("fio") is None or not takes_direct_io(a):
        pytest.skip("needs fio and a temporary folder that takes direct I/O")
    doc, rec, html, err = _run(tmp_path, capsys, "--stage", "storage", "--io-dir", str(a),
                               "--io-dir", str(b))
    (stage,) = [s for s in doc["stages"] if s["name"] == "storage"]
    assert stage["status"] == "done", stage
    alone = io.of(rec.results, "run")
    assert [r.params["targets"][0]["path"] for r in alone] == [str(a), str(b)]
    rows = io.scaling_rows(rec.results)
    assert [r["drives"] for r in rows] == [1, 2] and all(r["iops"] > 0 for r in rows)
    assert rows[1]["efficiency"] is not None
    # one file system: said before measuring, and on the 2-drive result
    assert "on the same device" in " ".join(err.split())
    (two,) = [r for r in rec.results if r.params.get("drives") == 2]
    assert any("same drive" in n for n in two.notes)
    assert "Storage drive scaling" in html
    assert list(a.iterdir()) == list(b.iterdir()) == []      # fio's files removed


@pytest.mark.parametrize(("args", "says"), [
    (["--memory", "12x DDR9-4800"], "bad --memory '12x DDR9-4800': unknown memory type"),
    (["--memory", "0x3200"], "channels per socket is not plausible"),
    (["--memory", " "], "--memory is empty"),
    (["--links", "4x16"], "bad --links '4x16': expected [NAME:]LINKSxLANES@GBPS"),
    (["--io-dir", "{tmp}/nope"], "--io-dir {tmp}/nope: no such directory"),
    (["--io-dir", "{tmp}/file"], "is not a directory"),
    (["--io-dir", "{tmp}/d", "--io-dir", "{tmp}/d/"], "--io-dir {tmp}/d is named twice"),
    (["--io-dir", "{tmp}/d", "--io-dir", ""], "--io-dir is empty"),
])
def test_bad_values_are_one_line_before_anything_is_measured(tmp_path, capsys, args, says):
    """Exit 2, one line; checked even when --stage leaves out the stage they are for (the
    store is never created: nothing ran)."""
    (tmp_path / "d").mkdir()
    (tmp_path / "file").write_text("x")
    db = tmp_path / "runs.db"
    args = [a.format(tmp=tmp_path) for a in args]
    assert cli(["run", "--smoke", "--stage", "bandwidth", *args, "--store", str(db),
                "--no-report"]) == 2
    err = capsys.readouterr().err
    assert says.format(tmp=tmp_path) in err and err.count("\n") == 1, err
    assert not db.exists()


@pytest.mark.parametrize(("args", "stage"), [
    (["--io-dir", "{tmp}/d"], "storage"),
    (["--io-dir", "{tmp}/d", "--io-dir", "{tmp}/e"], "storage"),
    (["--bw-sweep"], "bandwidth"),
])
def test_a_stages_option_with_that_stage_left_out_is_refused(tmp_path, capsys, args, stage):
    """--io-dir with --stage bandwidth would be silently ignored: exit 2, one line, nothing
    measured, no store; what is said of the machine (--memory) is every run's."""
    (tmp_path / "d").mkdir()
    (tmp_path / "e").mkdir()
    db = tmp_path / "runs.db"
    args = [a.format(tmp=tmp_path) for a in args]
    other = "latency" if stage == "bandwidth" else "bandwidth"
    assert cli(["run", "--smoke", "--stage", other, *args, "--store", str(db),
                "--no-report"]) == 2
    err = capsys.readouterr().err     # (two folders on one device: warned about first)
    errs = [ln for ln in err.splitlines() if ln.startswith("numascope: error:")]
    assert len(errs) == 1 and "Traceback" not in err, err
    assert f"{args[0]} is for the {stage} stage, which --stage leaves out: add --stage " \
           f"{stage}, or leave {args[0]} out" in err, err
    assert not db.exists()
    # the machine's options, and a stage's option with its stage chosen, plan as before
    assert cli(["run", "--smoke", "--stage", other, "--memory", MEMORY, "--plan"]) == 0
    assert cli(["run", "--smoke", "--stage", stage, *args, "--plan"]) == 0
    capsys.readouterr()
