"""Peak calculators against hand-computed figures, the user's spec syntax, the efficiency
table and the summary's handling of what is unknown."""

from __future__ import annotations

import pytest

from numascope import peaks
from numascope.analysis.efficiency import efficiency_table
from numascope.errors import UserError
from numascope.peaks import dram, links
from numascope.peaks.flops import flops_peak_gflops
from numascope.topology.model import Core, Cpu, Node, Package, Topology


def two_socket(cores_per_socket: int = 4, smt: int = 2) -> Topology:
    cpus, cores = [], []
    for s in range(2):
        for c in range(cores_per_socket):
            idx = s * cores_per_socket + c
            ids = tuple(idx + t * 2 * cores_per_socket for t in range(smt))
            cores.append(Core(idx, s, c, ids))
            cpus += [Cpu(i, s, s, None, idx, t) for t, i in enumerate(ids)]
    cpus.sort(key=lambda c: c.id)
    nodes = [Node(s, tuple(c.id for c in cpus if c.package == s), 2**34, 2**33) for s in (0, 1)]
    pk = [Package(s, tuple(c.id for c in cpus if c.package == s), (s,), ()) for s in (0, 1)]
    return Topology("test", cpus, cores, [], nodes, pk)


# -- the three textbook figures ---------------------------------------------------------------
def test_dram_textbook_genoa_socket():
    assert dram.dram_peak_gbs(12, 4800) == 460.8


def test_link_textbook_xgmi():
    assert links.link_peak_gbs(4, 16, 32) == 512.0


def test_flops_textbook():
    assert flops_peak_gflops(32, 8, 2.2, sockets=2) == 1126.4
    assert flops_peak_gflops(64, 8, 2.2) == 1126.4


# -- more hand-computed figures ---------------------------------------------------------------
@pytest.mark.parametrize("channels,mts,sockets,expected", [
    (8, 3200, 2, 409.6),      # Rome/Milan 2S, DDR4-3200: 2 × 8 × 3200 × 8 B
    (6, 2933, 1, 140.784),    # Cascade Lake socket
    (8, 2666, 1, 170.624),    # Naples socket
    (12, 6000, 2, 1152.0),    # Turin 2S, DDR5-6000
])
def test_dram_more(channels, mts, sockets, expected):
    assert dram.dram_peak_gbs(channels, mts, sockets) == pytest.approx(expected, abs=1e-9)


def test_upi_and_mixed_links():
    assert links.link_peak_gbs(3, 20, 16) == 240.0   # 3 UPI × 20 lanes × 16 GT/s × 2 / 8
    p = links.from_spec("xgmi:3x16@25, xgmi:1x16@16")
    assert p.gbs == 3 * 16 * 25 * 2 / 8 + 16 * 16 * 2 / 8 == 364.0
    assert "364 GB/s" in p.formula


@pytest.mark.parametrize("spec,expected", [
    ("12x DDR5-4800", (12, "DDR5", 4800)), ("8xDDR4-3200", (8, "DDR4", 3200)),
    ("6 x ddr4 2933", (6, "DDR4", 2933)), ("8x3200", (8, None, 3200)),
    ("12×DDR5-6000 MT/s", (12, "DDR5", 6000)),
])
def test_memory_spec(spec, expected):
    assert dram.parse_memory_spec(spec) == expected


@pytest.mark.parametrize("spec", ["", "DDR5-4800", "12x", "0x DDR5-4800", "12x DDR5-48",
                                  "twelve x DDR5-4800", "12x DDR5-4800 + 2"])
def test_bad_memory_spec(spec):
    with pytest.raises(UserError, match="--memory"):
        dram.parse_memory_spec(spec)


@pytest.mark.parametrize(("spec", "example"), [
    ("12xDDR5", "12xDDR5-4800"), ("12x DDR4", "12x DDR4-3200"), ("8xHBM3", "8xHBM3-6400"),
    ("16x lpddr5x MT/s", "16x lpddr5x-8533"), ("12×DDR5", "12×DDR5-4800"),
])
def test_a_memory_type_without_its_speed_asks_for_the_speed(spec, example):
    """'12xDDR5' read as DDR at 5 MT/s ("5 MT/s is not plausible"): the type's digits are
    its generation; the speed is what is missing, said with an example."""
    with pytest.raises(UserError) as e:
        dram.parse_memory_spec(spec)
    assert str(e.value) == (f"bad --memory {spec!r}: the speed is missing: give it in MT/s, "
                            f"e.g. '{example}'")
    assert dram.parse_memory_spec(example)[2] > 100


@pytest.mark.parametrize("spec", ["4x16", "4x16@", "x16@32", "4x16@32,", "0x16@32", "4x16@9999"])
def test_bad_links_spec(spec):
    with pytest.raises(UserError, match="--links"):
        links.parse_links_spec(spec)


def test_links_spec_forms():
    g = links.parse_links_spec("UPI: 3 x x20 @ 16 GT/s")[0]
    assert (g.name, g.links, g.lanes, g.gbps) == ("upi", 3, 20, 16.0)


def test_memory_spec_times_sockets_from_topology():
    topo = two_socket()
    d = peaks.dram_peak(topo, "12x DDR5-4800")
    assert d["value"] == 921.6 and d["channels"] == 24
    assert "2 sockets × 12 channels × 4800 MT/s × 8 B = 921.6 GB/s" == d["formula"]


# -- FLOP/s peak through the topology --------------------------------------------------------
def test_physical_cores_ignore_smt():
    topo = two_socket(cores_per_socket=4, smt=2)
    assert len(topo.usable_cpus()) == 16
    assert peaks.physical_cores(topo) == 8


def test_flops_peak_from_cpuinfo_root(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/cpuinfo").write_text(
        "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 23\nmodel\t\t: 49\n"
        "model name\t: AMD EPYC 7452 32-Core Processor\nflags\t\t: fpu sse2 avx avx2 fma\n\n")
    p = peaks.flops_peak(two_socket(4, 2), 2.35, root=tmp_path)
    assert p["status"] == "known" and p["source"] == "Zen 2"
    assert p["value"] == pytest.approx(8 * 16 * 2.35)
    assert p["fp32"] == pytest.approx(8 * 32 * 2.35)
    assert "8 cores × 16 FP64 FLOP/cycle" in p["formula"]


def test_flops_peak_unknown_without_clock(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/cpuinfo").write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\n"
                                           "cpu family\t: 25\nmodel\t\t: 17\nflags\t\t: avx2\n\n")
    p = peaks.flops_peak(two_socket(), None, root=tmp_path)
    assert p["value"] is None and "clock" in p["reason"]


def test_summary_unknowns_carry_reasons(tmp_path):
    s = peaks.summary(two_socket(), clock={"all_busy_ghz": 2.0}, root=tmp_path)
    assert s["dram"]["value"] is None and "--memory" in s["dram"]["reason"]
    assert "dmi/entries" in s["dram"]["reason"]
    assert s["links"]["value"] is None and "--links" in s["links"]["reason"]
    assert s["flops"]["value"] is None and "cpuinfo" in s["flops"]["reason"]


# -- efficiency -------------------------------------------------------------------------------
def test_efficiency_table():
    summary = {"dram": {"value": 460.8}, "flops": {"value": 1126.4},
               "links": {"value": None, "reason": "link layout not given"}}
    rows = efficiency_table(summary, {
        "dram_gbs": 368.64, "dram_by": "triad",
        "gflops": [(901.12, "HPL"), (1200.0, "LU")], "link_gbs": 100.0})
    by = {(r.what, r.measured_by): r for r in rows}
    assert by[("DRAM bandwidth", "triad")].percent == pytest.approx(80.0)
    assert by[("FP64 FLOP/s", "HPL")].percent == pytest.approx(80.0)
    assert "above 100 %" in by[("FP64 FLOP/s", "LU")].note
    link = next(r for r in rows if r.what == "inter-socket links")
    assert link.percent is None and "peak unknown" in link.note


def test_efficiency_skips_rows_with_nothing():
    rows = efficiency_table({"dram": {"value": None}, "flops": {"value": 10.0}, "links": {}}, {})
    assert [r.what for r in rows] == ["FP64 FLOP/s"]
    assert rows[0].note == "not measured"


# -- one efficiency rule, one summary per run --------------------------------------------------
def _res(family, case, name, unit, values, **params):
    from numascope.results.record import BenchResult, Metric
    return BenchResult(family, case, params, {name: Metric(name, unit, True, values)})


def test_efficiency_from_results_is_the_one_rule():
    summary = {"dram": {"value": 200.0}, "flops": {"value": 100.0}, "links": {"value": None}}
    rs = [_res("bandwidth", "triad 2T", "bandwidth", "GB/s", [90.0, 100.0, 110.0],
               excluded_reps=[4]),
          _res("bandwidth", "copy 1T", "bandwidth", "GB/s", [50.0]),
          _res("compute", "lu n=128", "gflops", "GFLOP/s", [40.0, 60.0]),
          _res("latency", "chase", "latency", "ns", [80.0])]
    bad = _res("compute", "dgemm n=128", "gflops", "GFLOP/s", [99.0])
    bad.validated = False
    rows = efficiency_table(summary, results=[*rs, bad])
    assert [(r.what, r.percent) for r in rows] == [
        ("DRAM bandwidth", 50.0), ("FP64 FLOP/s (LU solve, LAPACK dgesv)", 50.0)]
    assert rows[0].measured_by == "triad 2T: median of 3 repetitions, 1 implausible excluded"
    # a figure the user gives wins over the results'
    given = efficiency_table(summary, {"dram_gbs": 150.0, "dram_by": "--dram-gbs"}, rs)
    assert given[0].percent == 75.0 and given[0].measured_by == "--dram-gbs"
    # no summary (an old record, a failed one): no rows, never an exception
    assert efficiency_table(None, results=rs) == efficiency_table({"error": "x"}) == []


def test_summary_never_measures_a_clock(tmp_path):
    s = peaks.summary(two_socket(), root=tmp_path)
    assert s["flops"]["value"] is None and s["clock"] is None


def test_run_summary_reuses_the_one_the_peaks_stage_made(tmp_path):
    stored = {"flops": {"value": 123.0}, "dram": {"value": None}, "links": {"value": None}}
    clock = _res("compute", "clock", "all_busy_ghz", "GHz", [2.0], kind="clock", peaks=stored)
    s = peaks.run_summary(two_socket(), [clock], clock_ghz=3.0)
    assert s["flops"]["value"] == 123.0 and s["clock"]["all_busy_ghz"] == 2.0


def test_replayed_cpuinfo_link_out_of_the_root_is_not_followed(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/cpuinfo").symlink_to("/proc/cpuinfo")
    p = peaks.flops_peak(two_socket(), 2.0, root=tmp_path)
    assert p["value"] is None and "proc/cpuinfo is unreadable" in p["reason"]


# -- FLOP/s rows named by what measured them (an LU solve's share is not HPL's) ----------------
def test_flops_rows_say_dgemm_lu_or_hpl():
    summary = {"dram": {"value": None}, "flops": {"value": 200.0}, "links": {}}
    rs = [_res("compute", "dgemm n=2048", "gflops", "GFLOP/s", [150.0], kind="dgemm"),
          _res("compute", "lu n=4096", "gflops", "GFLOP/s", [95.4], kind="lu"),
          _res("compute", "hpl np=8", "gflops", "GFLOP/s", [120.0], kind="hpl"),
          _res("compute", "lu n=128", "gflops", "GFLOP/s", [10.0])]   # older: no kind
    rows = efficiency_table(summary, results=rs)
    assert [(r.what, r.percent) for r in rows] == [
        ("FP64 FLOP/s (DGEMM, BLAS)", 75.0), ("FP64 FLOP/s (LU solve, LAPACK dgesv)", 47.7),
        ("FP64 FLOP/s (HPL, hpcc)", 60.0), ("FP64 FLOP/s (LU solve, LAPACK dgesv)", 5.0)]
    assert not any("HPL" in r.what for r in rows if "lu" in r.measured_by)
    # a figure the user gives says nothing of its method: the plain name
    given = efficiency_table(summary, {"gflops": 100.0, "gflops_by": "--gflops"})
    assert [(r.what, r.percent) for r in given] == [("FP64 FLOP/s", 50.0)]


# -- the links peak against a measured read across sockets ----------------------------------
def _pair(src, dst, values):
    return _res("matrix", f"N{src}->N{dst}", "bandwidth", "GB/s", values, src=src, dst=dst)


def test_cross_socket_pairs():
    assert peaks.cross_socket_pairs(two_socket()) == [[0, 1], [1, 0]]
    one = two_socket()
    one = Topology("one", [c for c in one.cpus if c.package == 0],
                   [c for c in one.cores if c.package == 0], [], one.nodes[:1], one.packages[:1])
    assert peaks.cross_socket_pairs(one) == [] == peaks.cross_socket_pairs(None)


def test_links_row_from_the_best_cross_socket_matrix_read():
    s = peaks.summary(two_socket(), links="xgmi:4x16@32")          # 512 GB/s both ways
    assert s["links"]["cross_socket_pairs"] == [[0, 1], [1, 0]]
    rs = [_pair(0, 0, [200.0]), _pair(0, 1, [90.0, 100.0, 110.0]), _pair(1, 0, [64.0]),
          _pair(1, 1, [210.0])]
    rows = [r for r in efficiency_table(s, results=rs) if r.what.startswith("inter-socket")]
    assert len(rows) == 1
    (row,) = rows
    assert row.what == "inter-socket links, one direction"
    assert row.measured == 100.0 and row.peak == 256.0               # half: one direction
    assert row.percent == pytest.approx(100 * 100 / 256)
    assert "N0->N1" in row.measured_by and "half" in row.note
    # no --links: the read is still listed, the peak unknown with its reason
    (unknown,) = [r for r in efficiency_table(peaks.summary(two_socket()), results=rs)
                  if r.what.startswith("inter-socket")]
    assert unknown.percent is None and "--links" in unknown.note
    # local reads only (one socket): the peak is listed, "not measured"
    (alone,) = [r for r in efficiency_table(s, results=rs[:1])
                if r.what.startswith("inter-socket")]
    assert alone.what == "inter-socket links" and alone.note == "not measured"
    assert alone.peak == 512.0


# -- what the user gives is recorded as theirs ------------------------------------------------
def test_user_given_peaks_say_origin_user(tmp_path):
    s = peaks.summary(two_socket(), memory="8x DDR4-3200", links="upi:3x20@16",
                      clock={"all_busy_ghz": 2.0, "given": True}, root=tmp_path)
    assert s["dram"]["origin"] == "user" and s["dram"]["value"] == 409.6
    assert s["links"]["origin"] == "user" and s["links"]["value"] == 240.0
    assert any("given by the user" in n for n in s["dram"]["notes"])
    # nothing given, SMBIOS hidden: unknown, no origin
    bare = peaks.summary(two_socket(), root=tmp_path)
    assert bare["dram"]["origin"] is None and bare["links"]["origin"] is None


def test_run_summary_takes_the_runs_memory_and_links_over_the_stored_ones(tmp_path):
    """A run's summary: the compute stage's stored peaks (DRAM unknown: SMBIOS hidden),
    then the run's --memory/--links over them; without the compute stage, the run
    monitor's clock with them. The 2-socket matrix read then has its link row."""
    from numascope.results.record import BenchResult, Metric
    topo = two_socket()
    stored = peaks.summary(topo, clock={"all_busy_ghz": 2.0, "given": True}, root=tmp_path)
    assert stored["dram"]["value"] is None
    clock = BenchResult("compute", "clock", {"kind": "clock", "peaks": stored},
                        {"all_busy_ghz": Metric("all_busy_ghz", "GHz", True, [2.0])})
    reads = [_pair(0, 1, [50.0]), _pair(1, 0, [60.0])]
    s = peaks.run_summary(topo, [clock, *reads], memory="8x3200", links="upi:3x20@16",
                          root=tmp_path)
    assert s["flops"] == stored["flops"]                       # computed once, kept
    assert (s["dram"]["origin"], s["dram"]["value"]) == ("user", 409.6)
    assert (s["links"]["origin"], s["links"]["value"]) == ("user", 240.0)
    (row,) = [r for r in efficiency_table(s, results=reads) if r.unit == "GB/s"
              and r.what.startswith("inter-socket")]
    assert row.measured == 60.0 and row.peak == 120.0 and row.percent == 50.0
    assert "N1->N0" in row.measured_by
    # no compute stage: the monitor's clock, the user's figures all the same
    alone = peaks.run_summary(topo, reads, 3.0, memory="8x3200", root=tmp_path)
    assert alone["dram"]["origin"] == "user" and alone["links"]["value"] is None
    assert alone["flops"]["ghz"] == 3.0
    # nothing given: what was stored stands
    assert peaks.run_summary(topo, [clock], root=tmp_path)["dram"]["value"] is None
