"""The hpcc summary parser on recorded outputs (Debian hpcc 1.5.0f on this VM, reference
BLAS), the residual check, grid and N sizing, and a missing tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from numascope.errors import MeasurementError, Unavailable
from numascope.peaks import hpcc

DATA = Path(__file__).parent / "data"


def test_summary_one_process():
    s = hpcc.parse_summary((DATA / "hpccoutf_1proc_n2000.txt").read_text())
    assert s["HPL_N"] == "2000" and s["CommWorldProcs"] == "1"
    r = hpcc.hpl_from_summary(s)
    assert r.gflops == pytest.approx(5.22263)
    assert (r.n, r.nb, r.p, r.q, r.procs) == (2000, 128, 1, 1, 1)
    # hpcc's own line: ||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)= 0.0067378 PASSED
    assert r.residual == pytest.approx(0.0067378, rel=1e-4)
    assert r.passed and r.seconds == pytest.approx(1.02235)


def test_summary_two_processes():
    r = hpcc.hpl_from_summary(hpcc.parse_summary(
        (DATA / "hpccoutf_2proc_n2000.txt").read_text()))
    assert (r.procs, r.p, r.q) == (2, 1, 2) and r.passed
    assert r.gflops == pytest.approx(9.05658)


def test_failed_residual_is_not_passed():
    text = (DATA / "hpccoutf_1proc_n2000.txt").read_text()
    text = text.replace("HPL_RnormI=3.16949e-12", "HPL_RnormI=3.16949e-06")
    r = hpcc.hpl_from_summary(hpcc.parse_summary(text))
    assert r.residual > 16 and not r.passed


def test_missing_summary_or_fields():
    with pytest.raises(MeasurementError, match="no summary"):
        hpcc.parse_summary("HPLinpack 2.0 ... killed\n")
    with pytest.raises(MeasurementError, match="lacks the HPL"):
        hpcc.hpl_from_summary({"Success": "1"})


@pytest.mark.parametrize("procs,grid", [(1, (1, 1)), (2, (1, 2)), (4, (2, 2)), (6, (2, 3)),
                                        (7, (1, 7)), (64, (8, 8)), (96, (8, 12))])
def test_grid(procs, grid):
    assert hpcc.grid(procs) == grid


def test_size_n():
    n = hpcc.size_n(16 * 2**30, 0.8, 192)
    assert n % 192 == 0 and 8 * n * n <= 0.8 * 16 * 2**30
    assert 8 * (n + 192) ** 2 > 0.8 * 16 * 2**30


def test_input_file_layout():
    lines = hpcc.input_file(4000, 192, 2, 4).splitlines()
    assert lines[5].split()[0] == "4000" and lines[7].split()[0] == "192"
    assert lines[10].split()[0] == "2" and lines[11].split()[0] == "4"
    assert lines[31].startswith("#####")  # line 32 is HPL's separator


def test_missing_hpcc(monkeypatch):
    monkeypatch.setattr(hpcc.shutil, "which", lambda name: None)
    with pytest.raises(Unavailable, match="hpcc is not installed"):
        hpcc.run_hpl(1, n=200)


def test_missing_mpirun(monkeypatch):
    monkeypatch.setattr(hpcc.shutil, "which",
                        lambda name: "/usr/bin/hpcc" if name == "hpcc" else None)
    assert hpcc.command(1) == ["/usr/bin/hpcc"]
    with pytest.raises(Unavailable, match="mpirun"):
        hpcc.command(2)
