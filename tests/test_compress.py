"""`numascope compress`: plain vs Blosc2 compressed sums on pinned threads."""

from __future__ import annotations

import json
import subprocess
import sys

import blosc2
import numpy as np
import pytest
from conftest import RAINFALL

from numascope.errors import MeasurementError, UserError
from numascope.families.compress import bench as cz
from numascope.families.compress.datasets import load
from numascope.memspec import MemorySpec
from numascope.profile import FULL, QUICK, SMOKE
from numascope.steady import Steady
from numascope.topology import read_topology

RAIN = RAINFALL / "rainfall-grid-150x150.bin"
CHUNK = 64 * 1024


@pytest.fixture(scope="module")
def topo():
    return read_topology("/")


def _threads(topo) -> list[int]:
    return sorted({1, min(2, len(topo.usable_cpus()))})


@pytest.mark.parametrize("codec", cz.CODECS)
def test_plain_and_compressed_sums_agree_on_every_filter(topo, codec):
    bench = cz.Compress()
    spec = cz.DataSpec("noisy", size=1 << 20)
    cases = bench.cases(topo, spec, [codec], [5], cz.FILTERS, _threads(topo), chunk_bytes=CHUNK,
                        reps=1)
    ref = float(np.sum(spec.build().data, dtype=np.float64))
    for c in cases:
        r = bench.measure(topo, c)
        assert r.validated
        assert r.params["sum"] == pytest.approx(ref, rel=1e-9)
        assert "bit for bit" not in " ".join(r.notes)   # same kernel, same blocks
        assert r.metric("ratio").values == [r.params["nbytes"] / r.params["compressed_bytes"]]
        assert r.metric("decompress_sum").median > 0 and r.metric("plain_sum").median > 0
        assert len(r.placement["cpus"]) == r.params["threads"]


def test_integer_sums_are_exact(topo):
    bench = cz.Compress()
    spec = cz.DataSpec("precip", dtype="int16", size=1 << 20)
    data = spec.build().data
    for c in bench.cases(topo, spec, ["lz4", "zstd"], [1], ["shuffle", "bytedelta"],
                         _threads(topo), chunk_bytes=CHUNK, reps=2):
        r = bench.measure(topo, c)
        assert r.params["sum"] == int(data.astype(np.int64).sum())


def test_validation_failure_is_a_measurement_error(topo):
    bench = cz.Compress()
    spec = cz.DataSpec("smooth", size=1 << 20)
    case = bench.cases(topo, spec, ["lz4"], [5], ["shuffle"], [1], chunk_bytes=CHUNK,
                       reps=1)[0]
    bench.measure(topo, case)
    ref, abs_sum = bench._c.ref
    bench._c.ref = (ref * 1.001, abs_sum)   # a wrong reference must not pass
    with pytest.raises(MeasurementError):
        bench.measure(topo, case)


def test_store_is_replaced_for_other_thread_counts(topo):
    if len(topo.usable_cpus()) < 2:
        pytest.skip("needs 2 CPUs")
    bench = cz.Compress()
    spec = cz.DataSpec("precip", size=2 << 20)
    cases = bench.cases(topo, spec, ["blosclz"], [5], ["shuffle"], [1, 2], chunk_bytes=CHUNK,
                        reps=1)
    assert [c.params.threads for c in cases] == [2, 1]   # compressed by the larger team
    a, b = (bench.measure(topo, c) for c in cases)
    assert a.params["compress_threads"] == b.params["compress_threads"] == 2
    assert a.params["compressed_bytes"] == b.params["compressed_bytes"]
    assert a.params["sum"] == b.params["sum"]
    assert b.placement["cpus"] == [a.placement["cpus"][0]]


def test_rainfall_grid_true_ratio(topo):
    if not RAIN.exists():
        pytest.skip(f"{RAIN} not found")
    raw = RAIN.read_bytes()
    grid = np.frombuffer(blosc2.decompress(raw), dtype=np.float32)   # Blosc1-compatible API
    assert grid.size == 150 * 150
    ds = load(RAIN)
    assert np.array_equal(ds.data, grid)
    bench = cz.Compress()
    spec = cz.DataSpec("file", path=str(RAIN))
    results = [bench.measure(topo, c) for c in bench.cases(
        topo, spec, ["lz4", "zstd"], [5], ["shuffle"], [1], reps=2)]
    for r in results:
        assert r.params["nbytes"] == grid.nbytes          # nothing tiled
        chunk = r.params["chunk_bytes"]
        codec = {"lz4": blosc2.Codec.LZ4, "zstd": blosc2.Codec.ZSTD}[r.params["codec"]]
        buf = grid.tobytes()
        cbytes = sum(len(blosc2.compress2(buf[o:o + chunk], typesize=4, codec=codec, clevel=5,
                                          filters=[blosc2.Filter.SHUFFLE]))
                     for o in range(0, len(buf), chunk))
        assert r.metric("ratio").median == pytest.approx(grid.nbytes / cbytes, rel=1e-12)
        assert r.params["sum"] == pytest.approx(float(grid.sum(dtype=np.float64)), rel=1e-9)
        assert any("memory wall" in n for n in r.notes)   # 88 KiB: reported as too small
    summary = cz.summarize(results)[0]
    assert summary.nbytes == grid.nbytes and set(summary.best) == {1}
    with pytest.raises(UserError, match="never tiles"):
        cz.DataSpec("file", path=str(RAIN), size=1 << 20).build()


def test_summary_best_and_crossover():
    from numascope.results.record import BenchResult, Metric

    def res(codec, t, plain, comp):
        m = {"plain_sum": Metric("plain_sum", "GB/s", True, [plain]),
             "decompress_sum": Metric("decompress_sum", "GB/s", True, [comp]),
             "speedup": Metric("speedup", "x", True, [comp / plain]),
             "ratio": Metric("ratio", "x", True, [10.0]),
             "compress_speed": Metric("compress_speed", "GB/s", True, [1.0])}
        return BenchResult("compress", f"{codec} {t}", {
            "dataset": "d", "source": "s", "nbytes": 1, "dtype": "f4", "chunk_bytes": 1,
            "codec": codec, "clevel": 5, "filter": "shuffle", "threads": t}, m)
    rs = [res("lz4", 1, 10, 4), res("lz4", 2, 15, 9), res("lz4", 4, 16, 17), res("lz4", 8, 16, 30),
          res("zstd", 1, 10, 2), res("zstd", 2, 15, 16), res("zstd", 4, 16, 12),
          res("zstd", 8, 16, 20)]
    s = cz.summarize(rs)[0]
    assert s.best[2][0] == "zstd-5-shuffle" and s.best[8][0] == "lz4-5-shuffle"
    assert s.crossover == 2 and s.plain[4] == 16
    s = cz.summarize([r for r in rs if r.params["codec"] == "lz4"])[0]
    assert s.crossover == 4
    assert cz.summarize([res("lz4", 1, 10, 4)])[0].crossover is None


def test_bad_options(topo):
    bench = cz.Compress()
    with pytest.raises(UserError, match="codec"):
        bench.cases(topo, None, ["snappy"], [5], ["shuffle"])
    with pytest.raises(UserError, match="filter"):
        bench.cases(topo, None, ["lz4"], [5], ["delta"])
    with pytest.raises(UserError, match="threads"):
        bench.cases(topo, None, ["lz4"], [5], ["shuffle"], [999])
    assert cz.thread_counts(6) == [1, 2, 4, 6] and cz.thread_counts(1) == [1]
    with pytest.raises(UserError, match="smaller --size"):
        bench.cases(topo, cz.DataSpec("smooth", size=1 << 50), ["lz4"], [5], ["shuffle"])


def test_suite_cases_quick(topo):
    cases = cz.Compress().suite_cases(topo, QUICK)
    assert len(cases) == len(cz.QUICK_COMBOS) * len(cz.thread_counts(
        len(topo.usable_cpus())))
    assert all(c.params.data.name == "smooth" for c in cases)
    assert {c.params.reps for c in cases} == {Steady(max_reps=QUICK.steady_max)}
    assert cases[0].params.reps.pool.cases == len(cases)
    assert {c.params.data.size for c in cases} == {cz.default_size(topo, QUICK)}
    assert {c.params.reps for c in cz.Compress().suite_cases(topo, SMOKE)} == \
        {cz.DEFAULT_REPS}


def test_suite_cases_full_covers_every_data_set_and_codec(topo):
    cases = cz.Compress().suite_cases(topo, FULL)
    assert {c.params.data.name for c in cases} == set(cz.SYNTHETIC)
    assert {c.params.codec for c in cases} == set(cz.CODECS)
    assert {c.params.clevel for c in cases} == set(cz.SUITE_CLEVELS)
    assert {c.params.filter for c in cases} == set(cz.SUITE_FILTERS)
    assert {c.params.reps for c in cases} == {Steady(max_reps=FULL.steady_max)}


def test_default_size_reads_the_profile_bounds():
    from numascope.profile import Profile
    from numascope.topology.model import Topology

    class T(Topology):
        def __init__(self, llc):
            self._llc = llc

        def llc_bytes(self, cpus=None):
            return self._llc

    tiny = Profile("tiny", reps=1, samples=1, dense=False, min_bytes=1 << 20,
                   max_bytes=8 << 20)
    assert cz.default_size(T(1 << 10), tiny) == 1 << 20        # floor
    assert cz.default_size(T(1 << 20), tiny) == 4 << 20        # 4x the LLC
    assert cz.default_size(T(1 << 30), tiny) == 8 << 20        # ceiling
    assert cz.default_size(T(1 << 30), "quick") == QUICK.max_bytes


def test_params_are_checked_once_when_cases_are_built(topo):
    bench = cz.Compress()
    (case,) = bench.cases(topo, cz.DataSpec("smooth", size=1 << 20), ["lz4"], [5],
                          ["shuffle"], [1], chunk_bytes=CHUNK, reps=2)
    p = case.params
    assert isinstance(p, cz.CompressParams) and p.threads == 1 and p.chunk_bytes == CHUNK
    assert p.to_params()["data"] == {"name": "smooth", "fmt": "auto", "size": 1 << 20,
                                     "seed": 0}
    assert cz.CompressParams.from_params(p.to_params()) == p
    # the defaults, resolved: every CPU of "all", half the L2
    d = cz.CompressParams().checked(topo)
    assert d.threads == len(topo.usable_cpus()) and d.chunk_bytes == cz.chunk_for(topo)
    assert (d.codec, d.clevel, d.filter, d.read, d.reps) == ("lz4", 5, "shuffle", "buffer",
                                                             cz.DEFAULT_REPS)
    for bad, needle in [({"reps": 0}, "--reps"), ({"clevel": 10}, "clevel 10"),
                        ({"codec": "snappy"}, "codec"), ({"filter": "delta"}, "filter"),
                        ({"read": "getitem"}, "read mode"), ({"threads": 0}, "threads"),
                        ({"chunk_bytes": 0}, "chunk"), ({"chunk_bytes": 4 << 30}, "chunk"),
                        ({"chunk_bytes": 4096, "block_bytes": 8192}, "larger than its chunk"),
                        ({"data": cz.DataSpec("waves")}, "synthetic"),
                        ({"data": cz.DataSpec(dtype="complex64")}, "not supported"),
                        ({"where": "99"}, "99")]:
        with pytest.raises(UserError, match=needle):
            cz.CompressParams(**bad).checked(topo)


def test_nan_or_inf_in_the_data_is_bad_input_exit_2(tmp_path):
    a = np.arange(1000, dtype=np.float32)
    a[7], a[9] = np.nan, np.inf
    np.save(tmp_path / "a.npy", a)
    with pytest.raises(UserError, match="2 of 1000 values are NaN or infinite.*index 7"):
        cz.DataSpec("file", path=str(tmp_path / "a.npy")).build()
    # a prefix without them is fine
    assert cz.DataSpec("file", path=str(tmp_path / "a.npy"), size=28).build().data.size == 7
    p = _cli("--data", str(tmp_path / "a.npy"))
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip().splitlines() == [
        ("numascope: error: a.npy: 2 of 1000 values are NaN or infinite (the first, nan, at "
        "index 7): the sums cannot be validated; clean the data or choose another "
        "--column/--variable")]


def test_a_sum_that_overflows_is_bad_input(topo, tmp_path):
    np.save(tmp_path / "big.npy", np.full(4096, 1e308))
    bench = cz.Compress()
    (case,) = bench.cases(topo, cz.DataSpec("file", path=str(tmp_path / "big.npy")),
                          ["lz4"], [5], ["shuffle"], [1], chunk_bytes=CHUNK, reps=1)
    with pytest.raises(UserError, match="overflows"):
        bench.measure(topo, case)


def test_unreadable_file_is_one_line(tmp_path, monkeypatch):
    import errno
    f = tmp_path / "x.bin"
    f.write_bytes(b"\0" * 64)

    def denied(*a, **k):   # as for a file without read permission (root reads anything)
        raise PermissionError(errno.EACCES, "Permission denied")
    monkeypatch.setattr(np, "fromfile", denied)
    with pytest.raises(UserError, match="x.bin: cannot read the file .Permission denied."):
        load(f, dtype="float32")
    (tmp_path / "y").write_bytes(b"1")
    monkeypatch.setattr(type(f), "read_bytes", denied)   # sniffing the format reads it
    with pytest.raises(UserError, match="y: cannot read the file"):
        load(tmp_path / "y")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "numascope", "compress", *args],
                          check=False, capture_output=True, text=True, timeout=120)


def test_cli_json_and_plot(tmp_path):
    png = tmp_path / "cz.png"
    p = _cli("--synthetic", "precip", "--size", "2M", "--codecs", "lz4", "--clevels", "1",
             "--filters", "shuffle", "--reps", "2", "--chunk", "64K", "--block", "16K",
             "--read", "fused", "--json", "--plot", str(png))
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert list(doc)[:5] == ["schema_version", "command", "results", "errors", "summary"]
    assert doc["command"] == "compress" and doc["errors"] == []
    assert doc["results"] and doc["summary"][0]["dataset"] == "precip"
    assert all(r["validated"] for r in doc["results"])
    assert {(r["params"]["read"], r["params"]["block_bytes"]) for r in doc["results"]} == {
        ("fused", 16384)}
    assert png.stat().st_size > 1000


@pytest.mark.parametrize("args,needle", [
    (("--data", "/nonexistent/x.npy"), "does not exist"),
    (("--codecs", "snappy"), "codec"),
    (("--synthetic", "waves"), "synthetic"),
    (("--size", "huge"), "size"),
])
def test_cli_bad_input_is_one_line_exit_2(args, needle):
    p = _cli(*args)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0]


def test_cli_refuses_to_enlarge_real_data(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(1000, dtype=np.float32))
    p = _cli("--data", str(tmp_path / "a.npy"), "--size", "1M")
    assert p.returncode == 2 and "never tiles" in p.stderr


@pytest.mark.parametrize("filt", cz.FILTERS)
def test_fused_and_buffer_reads_agree_bit_for_bit(topo, filt):
    """The postfilter path sums every block Blosc decompresses; it must give the same sum as
    decompress-then-sum and the plain sum (same kernel, same block boundaries)."""
    bench = cz.Compress()
    spec = cz.DataSpec("precip", size=1 << 20)
    sums = {}
    for read in cz.READS:
        for block in (None, 0, 8192):
            case = bench.cases(topo, spec, ["lz4"], [5], [filt], [1], chunk_bytes=CHUNK,
                               reps=2, block_bytes=block, read=read)[0]
            r = bench.measure(topo, case)
            assert r.params["read"] == read
            assert "bit for bit" not in " ".join(r.notes)
            sums[read, r.params["block_bytes"]] = r.params["sum"]
    assert sums["buffer", CHUNK // 2] == sums["fused", CHUNK // 2]
    assert sums["buffer", 8192] == sums["fused", 8192]


def test_special_chunks_are_summed_by_the_postfilter():
    """All-zero chunks (stored by Blosc as runs), constant data and incompressible data
    (stored memcpyed) still pass every byte through the fused path's postfilter."""
    from numascope import _core as core
    rng = np.random.default_rng(1)
    for data, filt in ((np.zeros(300_000, np.float32), "shuffle"),
                       (np.full(300_000, 3.0, np.float32), "shuffle"),
                       (rng.random(300_000, dtype=np.float32), "none")):
        store, _, _, block = core.cz_store_new(data, CHUNK, 4, "lz4", 5, filt, [0], 0)
        plain = core.cz_plain_new(data, CHUNK, [0])
        r = core.cz_measure(plain, store, [0], "f4", 1, "fused")
        assert r["postfilter_bytes"] == 2 * data.nbytes      # warm-up + 1 repetition
        assert r["comp_sums"] == r["plain_sums"]
        assert r["comp_sums"][0] == pytest.approx(float(data.sum(dtype=np.float64)), rel=1e-9)
        assert 0 < block <= CHUNK


def test_block_and_read_options(topo):
    bench = cz.Compress()
    with pytest.raises(UserError, match="read mode"):
        bench.cases(topo, None, ["lz4"], [5], ["shuffle"], read="getitem")
    assert cz.block_for(1 << 20, 4) == 1 << 19 and cz.block_for(6, 4) == 4
    from numascope import _core as core
    with pytest.raises(ValueError, match="block size"):
        core.cz_store_new(np.zeros(1024, np.float32), 4096, 4, "lz4", 5, "shuffle", [0], 6)
    with pytest.raises(ValueError, match="mode"):
        store, *_ = core.cz_store_new(np.zeros(1024, np.float32), 4096, 4, "lz4", 5,
                                      "shuffle", [0], 0)
        core.cz_measure(core.cz_plain_new(np.zeros(1024, np.float32), 4096, [0]), store, [0],
                        "f4", 1, "block")


def test_bad_plot_path_costs_no_measurement(monkeypatch, capsys):
    from numascope.cli import main

    def never(self, topo, case):
        raise AssertionError("measured before --plot was checked")
    monkeypatch.setattr(cz.Compress, "measure", never)
    assert main(["compress", "--size", "4M", "--plot", "/nonexistent/x.png"]) == 2
    assert "folder /nonexistent does not exist" in capsys.readouterr().err


def test_cpus_and_the_old_where_spelling(monkeypatch, capsys):
    from numascope.cli import main
    from numascope.command import runner as _runner
    seen = []

    def record(bench, topo, cases, **kw):     # the cases the command built, not measured
        seen.append({(c.params.where, c.params.threads) for c in cases})
        return _runner.Outcome()
    monkeypatch.setattr(_runner, "measure", record)
    for flags in (["--cpus", "0"], ["--where", "0"], ["--cpunodebind", "0"]):
        assert main(["compress", "--size", "4M", "--codecs", "lz4", *flags,
                     "--threads", "1"]) == 0
    assert seen == [{("0", 1)}, {("0", 1)}, {("N0", 1)}]
    assert main(["compress", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert "--cpus" in help_text and "--cpunodebind" in help_text
    assert "--where" not in help_text and "--membind" in help_text and "--pages" in help_text


def _summary(threads, label="blosclz-9-bitshuffle", name="rain.npy"):
    row = cz.ComboRow(label, 1234.56, 12.3, {t: 123.45 for t in threads},
                      {t: 12.34 for t in threads})
    return cz.DataSummary(name, "a file", 1 << 30, "f4", 1 << 18, threads,
                          {t: 99.99 for t in threads}, [row],
                          {t: (label, 123.45, 12.34) for t in threads}, 2, ["a note"])


@pytest.mark.parametrize("width", [80, 120])
def test_many_thread_counts_spill_into_more_tables_not_past_the_width(width):
    from rich.console import Console

    from numascope.families.compress.command import _print
    threads = [1, 2, 4, 8, 16, 32, 64, 128, 192]
    con = Console(width=width, record=True, force_terminal=False)
    _print(_summary(threads, name="rain [bold]x[/bold].npy"), con)
    text = con.export_text()
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    assert "…" not in text
    assert all(f"{t} thread{'s' if t > 1 else ''} " in text for t in threads)
    assert text.count("blosclz-9-bitshuffle │") > 1          # the label repeats per table
    assert "rain [bold]x[/bold].npy" in text                  # a name is not markup
    assert "best at 1 thread:" in text and "from 2 threads" in text
    tables = text.count("┏")
    assert tables == (4 if width == 80 else 3), text


def test_json_envelope_carries_an_interruption(monkeypatch, capsys):
    from numascope.benchmark import Interrupted
    from numascope.cli import main

    def stop(self, topo, case):
        raise KeyboardInterrupt
    monkeypatch.setattr(cz.Compress, "measure", stop)
    rc = main(["compress", "--size", "4M", "--codecs", "lz4", "--clevels", "1",
               "--filters", "shuffle", "--threads", "1", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 130 and doc["results"] == [] and doc["summary"] == []
    assert doc["errors"][0]["kind"] == "interrupted"
    assert Interrupted  # the runner turned the KeyboardInterrupt into one


# -- memory placement -------------------------------------------------------------------

def test_bound_data_is_where_it_was_bound(topo):
    """--membind: the plain copy and the compressed store on the node, as move_pages saw
    every sampled page; the case says so in its label, params and placement."""
    node = topo.node_ids()[0]
    mem = MemorySpec("bind", (node,), "none")
    bench = cz.Compress()
    [case] = bench.cases(topo, cz.DataSpec("smooth", size=4 << 20), ["lz4"], [1], ["shuffle"],
                         threads=[1], reps=2, memory=mem)
    assert case.label == f"smooth lz4-1-shuffle 1T mem bind N{node}"
    r = bench.measure(topo, case)
    assert r.placement["memory"] == {"policy": "bind", "nodes": [node], "pages": "none"}
    for what in ("plain_pages", "compressed_pages"):
        assert set(map(int, r.placement[what])) == {node}, r.placement
    assert cz.CompressParams.from_params(case.params.to_params()).memory == mem


def test_a_page_off_the_bound_nodes_fails_validation():
    bind = MemorySpec("bind", (1,), "none")
    cz.check_placed(bind, {"plain_pages": {"1": 10}, "compressed_pages": {1: 3}})
    with pytest.raises(MeasurementError, match=r"compressed pages: memory bind to node\(s\) 1 "
                                               r"but 1 of 4 sampled pages are elsewhere"):
        cz.check_placed(bind, {"plain_pages": {"1": 10}, "compressed_pages": {0: 1, 1: 3}})
    # first touch and preferred claim no node; pages the kernel could not place say nothing
    cz.check_placed(MemorySpec("preferred", (1,), "none"), {"plain_pages": {"0": 4}})
    cz.check_placed(bind, {"plain_pages": None, "compressed_pages": {"0": 0, "1": 2}})


def test_default_label_and_params_unchanged(topo):
    [case] = cz.Compress().cases(topo, cz.DataSpec("smooth", size=4 << 20), ["lz4"], [1],
                                 ["shuffle"], threads=[1], reps=2)
    assert case.label == "smooth lz4-1-shuffle 1T"        # older records compare with it
    assert case.params.memory == MemorySpec("first-touch", (), "none")


def test_reps_auto_units_are_called_what_they_are_everywhere(topo):
    """--reps auto times calls over the one store built for the setting (no fresh
    allocation per unit): the verdict's unit and method, steady's summary line and mark
    note, the headline's spread, the tables' spread and the figures' caption all say calls
    over one allocation, never separate allocations."""
    from test_store_helpers import make_run

    from numascope import steady
    from numascope.plotting.marks import Medians
    from numascope.report.headline import headlines
    from numascope.report.sections import _spread
    bench = cz.Compress()
    spec = cz.DataSpec("smooth", size=1 << 20)
    rule = Steady(precision=0.2, max_reps=8, budget_s=30)
    (case,) = bench.cases(topo, spec, ["lz4"], [5], ["shuffle"], [1], chunk_bytes=CHUNK,
                          reps=rule)
    res = bench.measure(topo, case)
    s = res.params["steady"]
    assert s["unit"] == cz.SAME_STORE and s["units"] >= 4
    assert "own allocation" not in s["method"] and cz.SAME_STORE in s["method"]
    assert s["fresh"] is False
    line = steady.summary([res.params])
    assert steady.CALLS in line and steady.ALLOCATIONS not in line
    shaky = {**res.params, "steady": {**s, "converged": False}}
    note = steady.mark_note([shaky])
    assert steady.CALLS in note and "separate allocations" not in note
    # beside a latency figure of fresh allocations, both are named
    lat = {"steady": {"converged": False, "unit": steady.UNIT, "fresh": True}}
    assert steady.ALLOCATIONS in steady.mark_note([shaky, lat])
    (h,) = [h for h in headlines(make_run({}, [res])) if h.key == "compress_sum_peak"]
    assert h.spread == f"95 % CI, {s['units']} calls" and "alloc" not in h.spread
    m = res.metrics["decompress_sum"]
    assert _spread(m, res.params).endswith(f"(95 %, {s['units']} calls over one allocation)")
    med = Medians()
    med.of(m, res.params)
    assert "separate calls on one allocation" in med.text()
    assert "separate allocations" not in med.text()
    # an older record without "fresh" reads its unit
    assert steady.fresh({"unit": cz.SAME_STORE}) is False and steady.fresh({}) is True
