"""Every family table puts the median first and the best repetition beside it, with headers
saying which (bw has its own test in test_bandwidth_traffic/test_bandwidth_cli)."""

from __future__ import annotations

import io

from rich.console import Console

from numascope.families.compress import bench as cz
from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord


def _text(render, width=120) -> str:
    con = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    render(con)
    return con.export_text()


def _cols(text: str, first: str) -> list[str]:
    """The row that starts with `first`, split into its words (box rules dropped)."""
    lines = (line.replace("│", " ").replace("┃", " ") for line in text.splitlines())
    return next(line for line in lines if line.strip().startswith(first)).split()


def test_report_summary_shows_median_then_best():
    from numascope.report.terminal import results_table
    rec = RunRecord.new()
    rec.results.append(BenchResult("bandwidth", "triad 2T", {}, {
        "bandwidth": Metric("bandwidth", "GB/s", True, [10.0, 30.0, 20.0])}))
    text = _text(lambda c: c.print(results_table(rec)))
    head = _cols(text, "family")
    assert head.index("median") + 1 == head.index("best")
    row = _cols(text, "bandwidth")
    assert row[row.index("GB/s") - 1] == "20" and row[row.index("GB/s") + 1] == "30"


def test_latency_table_shows_median_then_best():
    from numascope.families.latency.command import _print
    ns = [130.0, 120.0, 150.0, 140.0, 135.0]
    r = BenchResult("latency", "idle 1G", {"bytes": 1 << 30, "mode": "tlb", "stride": 64,
                                           "pages": "none"},
                    {"latency": Metric("latency", "ns", False, ns),
                     "tsc_cycles": Metric("tsc_cycles", "TSC cycles", False, ns)},
                    {"huge_fraction": 0.0})
    text = _text(lambda c: _print([r], {}, c))
    head = _cols(text, "size")
    assert head[2:6] == ["median", "ns", "best", "ns"]
    row = _cols(text, "1")
    assert row[3:5] == ["135.0", "120.0"]        # "1 GiB tlb" first
    assert "median and best (lowest) of the timed samples" in text


def _matrix_results():
    return [BenchResult("matrix", f"N{s}->N{d}", {"src": s, "dst": d, "distance": 10},
                        {"latency": Metric("latency", "ns", False, [90.0 + s, 80.0 + d, 100.0])})
            for s in (0, 1) for d in (0, 1)]


def test_matrix_cells_are_median_then_best():
    from numascope.families.matrix import bench as mx
    from numascope.families.matrix.command import _print
    rs = _matrix_results()
    text = _text(lambda c: _print(rs, {"latency": []}, ("latency",), c), width=80)
    assert "latency (ns), median (best) of the repetitions" in text
    assert _cols(text, "N1")[1:] == ["91.0", "(80.0)", "91.0", "(81.0)"]
    assert mx.table(rs, "latency", "best")[2] == [[80.0, 81.0], [80.0, 81.0]]


def test_matrix_too_wide_for_both_prints_a_best_matrix_below():
    from numascope.families.matrix.command import _print
    rs = [BenchResult("matrix", f"N{s}->N{d}", {"src": s, "dst": d},
                      {"latency": Metric("latency", "ns", False, [1000.5, 999.5, 1001.5])})
          for s in range(8) for d in range(8)]
    text = _text(lambda c: _print(rs, {"latency": []}, ("latency",), c), width=80)
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80
    median_at = text.index("latency (ns), median of the repetitions")
    assert text.index("latency (ns), best of the repetitions") > median_at
    assert "999.5" in text and "…" not in text


def test_c2c_tables_show_median_then_best():
    from numascope.families.c2c.command import render
    rs = [BenchResult("c2c", "cpu0<->cpu1", {"a": 0, "b": 1, "relation": "smt",
                                             "home": "first-touch", "home_node": 0},
                      {"latency": Metric("latency", "ns", False, [30.0, 20.0, 25.0])})]
    text = _text(lambda c: render(rs, c, None))
    assert "one-way ns (median (best) of samples)" in text
    assert "25 (20)" in text
    head = _cols(text, "relation")
    assert head[2:6] == ["median", "ns", "best", "ns"]
    row = _cols(text, "smt")
    assert row[2:4] == ["25.0", "20.0"]


def test_compress_cells_show_median_then_best():
    from numascope.families.compress.command import _print
    row = cz.ComboRow("lz4-5-shuffle", 3.0, 1.0, {1: 12.0}, {1: 1.5}, {1: 14.0})
    s = cz.DataSummary("rain", "a file", 1 << 30, "f4", 1 << 18, [1], {1: 8.0}, [row],
                       {1: ("lz4-5-shuffle", 12.0, 1.5)}, 1, [], {1: 9.0})
    text = _text(lambda c: _print(s, c))
    assert "12.00/14.00 (1.50x)" in text and "8.00/9.00" in text
    assert "median/best of the repetitions" in " ".join(text.split())
    assert s.to_dict()["plain_best_gbs"] == {1: 9.0}


def test_tier_sweep_table_shows_median_then_best():
    from numascope.families.bandwidth.tier_command import _print
    rows = [{"kernel": "triad", "ratio": "1:1", "dram_node": 0, "tier_node": 1,
             "dram_share": 0.5, "achieved_dram_share": 0.5, "best": 30.0, "median": 20.0,
             "unit": "GB/s"}]
    text = _text(lambda c: _print(rows, 0, 1, "given", "kernel line", c))
    head = _cols(text, "kernel")
    assert head.index("median") + 1 == head.index("best")
    assert _cols(text, "triad")[-2:] == ["20.0", "30.0"]
