"""Figures agree with the tables: every family's figure draws a metric's median (read back
from the Axes' artists and the SVG's text), writes it in the tables' rounding, has its axes
labelled with units and a caption; the interval of a median; the renderer's HTML."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from numascope.analysis.primary import primary_metrics
from numascope.console import show
from numascope.plotting import marks
from numascope.report.figures import render
from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord

DATA = Path(__file__).parent / "data"
FAMILY_MODULES = ("bandwidth", "latency", "matrix", "c2c", "compress", "compute", "storage")


def _quick_run() -> RunRecord:
    """A real quick run of a 2-CPU machine (tests/data/advise_quick_run.json)."""
    return RunRecord.from_dict(json.loads((DATA / "advise_quick_run.json").read_text()))


def _figures(family: str, results: list[BenchResult]) -> list:
    import importlib
    return importlib.import_module(f"numascope.families.{family}.figures").figures(results)


def _texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def _svg_texts(fig) -> str:
    return " ".join(re.findall(r"<text[^>]*>([^<]*)</text>", render.svg_text(fig)))


UNITS = ("GB/s", "MB/s", "ns", "us", "GHz", "GFLOP/s", "IOPS", "loads per ns",
         "ratio, x", "misses in flight", "share of loads")


def _check_labels_and_caption(title: str, fig) -> None:
    assert marks.caption_of(fig), f"{title}: no caption"
    for ax in fig.axes:
        if not (ax.lines or ax.patches or ax.images or ax.collections) \
                and ax.get_label() != "<colorbar>":
            continue
        if ax.images:                     # a heat map: its unit is the colour bar's
            assert ax.get_xlabel() and ax.get_ylabel(), title
            continue
        assert any(u in ax.get_ylabel() for u in UNITS), \
            f"{title}: y label without a unit: {ax.get_ylabel()!r}"


def test_every_family_figure_of_a_real_run_writes_the_tables_medians():
    run = _quick_run()
    drawn = 0
    for family in FAMILY_MODULES:
        mine = [r for r in run.results if r.family == family]
        figs = _figures(family, run.results)
        if not mine:
            continue
        svg = " ".join(_svg_texts(f) for _, f in figs)
        for title, fig in figs:
            _check_labels_and_caption(title, fig)
            assert "<script" not in render.svg_text(fig)
            drawn += 1
        for r in mine:
            if family == "latency":
                continue        # one idle point is no sweep: no figure
            for name in primary_metrics(family, list(r.metrics)):
                want = show(r.metrics[name].median)
                assert want in svg, f"{family} {r.case} {name}: {want} not written"
    assert drawn >= 6
    import matplotlib.pyplot as plt
    plt.close("all")


def test_bandwidth_bars_are_medians_with_the_order_statistics_interval():
    from numascope.families.bandwidth import figures
    vals = [40.0, 47.0, 47.2, 47.23, 47.3, 47.5, 48.5, 30.0]   # one disturbed repetition
    r = BenchResult("bandwidth", "triad N0 2T", {"sweep": "per-domain", "kernel": "triad",
                                                 "threads": 2, "domain": "N0"},
                    {"bandwidth": Metric("bandwidth", "GB/s", True, vals)})
    (_title, fig), = figures.figures([r])
    ax = fig.axes[0]
    med = Metric("b", "GB/s", True, vals).median
    assert [p.get_height() for p in ax.patches] == [med]       # the median, not 48.5
    assert show(med) in _texts(fig) and show(48.5) not in _texts(fig)
    lo, hi = marks.order_interval(vals)
    segs = [s for c in ax.collections for s in c.get_segments()]
    assert any(math.isclose(s[0][1], lo) and math.isclose(s[1][1], hi) for s in segs)
    assert "order-statistics" in marks.caption_of(fig)
    assert "GB/s" in ax.get_ylabel()


def test_steady_interval_is_used_and_few_repetitions_draw_none():
    from numascope.families.bandwidth import figures
    steady = {"metric": "bandwidth", "interval": [45.0, 49.0], "converged": True}
    rs = [BenchResult("bandwidth", f"triad N{i} 2T",
                      {"sweep": "per-domain", "kernel": "triad", "threads": 2,
                       "domain": f"N{i}", **({"steady": steady} if i == 0 else {})},
                      {"bandwidth": Metric("bandwidth", "GB/s", True, v)})
          for i, v in enumerate(([46.0, 47.0, 48.0], [50.0, 51.0, 52.0]))]
    (_, fig), = figures.figures(rs)
    segs = [s for c in fig.axes[0].collections for s in c.get_segments()]
    ys = {(round(s[0][1], 6), round(s[1][1], 6)) for s in segs}
    assert (45.0, 49.0) in ys                        # the stored steady interval
    assert not any(s[0][0] == 1 and s[0][1] != s[1][1] for s in segs)   # n = 3: none
    cap = marks.caption_of(fig)
    assert "separate allocations" in cap and "n = 3" in cap


def test_a_zero_width_steady_interval_is_a_zero_spread_in_the_caption():
    from numascope.families.bandwidth import figures
    steady = {"metric": "bandwidth", "interval": [47.0, 47.0], "converged": True}
    rs = [BenchResult("bandwidth", "triad N0 2T",
                      {"sweep": "per-domain", "kernel": "triad", "threads": 2,
                       "domain": "N0", "steady": steady},
                      {"bandwidth": Metric("bandwidth", "GB/s", True, [47.0] * 8)})]
    (_, fig), = figures.figures(rs)
    cap = marks.caption_of(fig)
    assert "agree exactly" in cap and "Student t" not in cap
    assert marks.interval(rs[0].metrics["bandwidth"], rs[0].params).kind == marks.ZERO


@pytest.mark.parametrize("n", range(1, 41))
def test_order_interval_ranks_agree_with_scipy_binomial(n):
    from scipy.stats import binom
    vals = [float(i) for i in range(1, n + 1)]
    iv = marks.order_interval(vals)
    if n < marks.MIN_ORDER_N:
        assert iv is None
        return
    k = max(j for j in range(1, n) if binom.cdf(j - 1, n, 0.5) <= 0.025)
    assert iv == (vals[k - 1], vals[n - k])
    assert 1 - 2 * binom.cdf(k - 1, n, 0.5) >= 0.95           # its coverage


def test_zero_spread_and_quantised_values_draw_no_false_bar():
    from numascope.families.compute import figures
    rs = [BenchResult("compute", name, {"kind": name, "peak_gflops": 100.0},
                      {"gflops": Metric("gflops", "GFLOP/s", True, vals)})
          for name, vals in (("dgemm", [50.0] * 8), ("lu", [40.0, 40.0, 40.0, 41.0] * 2))]
    (_title, fig), = figures.figures(rs)
    ax = fig.axes[0]
    assert [p.get_height() for p in ax.patches] == [50.0, 40.0]
    assert "50" in _texts(fig) and "40" in _texts(fig) and "50 % of peak" in _texts(fig)
    segs = [s for c in ax.collections for s in c.get_segments()]
    assert all(s[0][1] == s[1][1] for s in segs if s[0][0] == 0)   # constant: no extent
    assert "not the HPL" in marks.caption_of(fig) and "HPCC" not in marks.caption_of(fig)


def test_matrix_ratio_per_distance_and_heat_map_cells():
    from numascope.families.matrix import figures
    lat = {(0, 0): 100.0, (1, 1): 110.0, (0, 1): 150.0, (1, 0): 165.0}
    rs = [BenchResult("matrix", f"N{s}->N{d}",
                      {"src": s, "dst": d, "distance": 10 if s == d else 21},
                      {"latency": Metric("latency", "ns", False, [v, v + 1, v - 1])})
          for (s, d), v in lat.items()]
    figs = dict(figures.figures(rs))
    heat = figs["NUMA matrix: latency"]
    assert sorted(_texts(heat)) == sorted(show(v) for v in lat.values())
    ratio = figs["NUMA matrix: remote / local by distance"]
    assert [p.get_height() for p in ratio.axes[0].patches] == \
        pytest.approx([1.0, (1.5 + 1.5) / 2])
    assert "1.5x" in _texts(ratio)
    assert "x" in ratio.axes[0].get_ylabel()


def test_one_per_l3_against_all_cores():
    from numascope.families.bandwidth import figures

    def pt(policies, threads, v):
        return BenchResult("bandwidth", f"triad {policies[0]} {threads}T",
                           {"sweep": "scaling", "kernel": "triad", "threads": threads,
                            "policies": policies},
                           {"bandwidth": Metric("bandwidth", "GB/s", True, [v, v, v])})
    rs = [pt(["compact", "per-l3"], 1, 10.0), pt(["per-l3"], 4, 30.0),
          pt(["compact"], 4, 20.0), pt(["compact"], 16, 40.0)]
    figs = dict(figures.figures(rs))
    fig = figs["Bandwidth: one thread per L3 vs all cores"]
    assert [p.get_height() for p in fig.axes[0].patches] == [30.0, 40.0]
    assert "75 % of all cores" in _texts(fig)


def test_storage_per_drive_iops_by_drive_count():
    from numascope.families.storage import figures

    def sc(k, iops):
        return BenchResult("storage", f"scaling {k}", {"mode": "scaling", "drives": k},
                           {m: Metric(m, "", True, [v] * 3) for m, v in
                            (("iops", iops), ("clat_p99", 100.0), ("cpu_sys", 5.0),
                             ("kernel_cpus", 1.0))})
    rs = [sc(1, 100_000.0), sc(2, 200_000.0), sc(4, 300_000.0)]
    figs = dict(figures.figures(rs))
    fig = figs["Storage drive scaling"]
    per = fig.axes[1]
    assert [p.get_height() for p in per.patches] == [100_000.0, 100_000.0, 75_000.0]
    assert any("75,000" in t and "75 %" in t for t in _texts(fig))
    assert marks.caption_of(fig)


def test_memory_level_parallelism_is_drawn_once_in_the_report():
    from numascope.report import html as report_html
    mods = [m.__name__ for m in report_html.figure_modules()]
    assert "numascope.families.latency.figures" in mods
    assert "numascope.families.latency.chains_figures" not in mods
    from tests.test_latency_chains import _planted
    rs = [_planted(n, max(100.0, n / 0.08)) for n in (1, 2, 4, 8, 16)]
    titles = [t for m in report_html.figure_modules() if hasattr(m, "figures")
              for t, _ in m.figures(rs)]
    assert titles.count("Memory-level parallelism") == 1


def test_mpi_heat_map_title_fits_its_figure():
    from numascope.families.interconnect import figures
    fig = None
    for title, f in figures.figures(_mpi_results()):
        if title == "Interconnect bandwidth by node pair":
            fig = f
    assert fig is not None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    r = canvas.get_renderer()
    box = fig.axes[0].title.get_window_extent(r)
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width and box.y1 <= fig.bbox.height
    assert marks.caption_of(fig) and "MB/s" in marks.caption_of(fig)


def _mpi_results() -> list[BenchResult]:
    from numascope.families.interconnect import bench as net
    rs = []
    for a in (0, 1):
        p = {"mode": "placement", "node_a": a, "node_b": 0, "hosts": ["h0", "h1"],
             "buffers": "same"}
        m = {f"bw_{s}": Metric(f"bw_{s}", "MB/s", True, [1000.0 * s ** 0.3 + a] * 3)
             for s in (1, 4096, 4194304)}
        m["bandwidth"] = Metric("bandwidth", "MB/s", True, [12345.0 + a] * 3)
        m.update({f"lat_{s}": Metric(f"lat_{s}", "us", False, [1.5 + a] * 3)
                  for s in (1, 4096)})
        rs.append(BenchResult(net.FAMILY, f"N{a}-N0", p, m))
    return rs


def test_embed_inline_svg_numbers_ids_and_escaping(monkeypatch):
    from numascope.families.bandwidth import figures
    rs = [BenchResult("bandwidth", f"triad N{i} 2T",
                      {"sweep": "per-domain", "kernel": "triad", "threads": 2,
                       "domain": f"N{i}"},
                      {"bandwidth": Metric("bandwidth", "GB/s", True, [47.23 + i] * 3)})
          for i in range(2)]
    (title, fig), = figures.figures(rs)
    a = render.embed(title, fig, "caption <b>&")
    b = render.embed(title, fig, marks.caption_of(fig))
    for h in (a, b):
        assert h.startswith('<figure class="fig-svg"><svg') and "<script" not in h
        assert "47.23" in h and "48.23" in h                      # text, searchable
        assert "<?xml" not in h and "<metadata" not in h
        assert "<style" not in h           # an inline SVG's style sheet styles the page
    assert "caption &lt;b&gt;&amp;" in a
    ids_a, ids_b = (set(re.findall(r'\bid="([^"]+)"', h)) for h in (a, b))
    assert ids_a and not ids_a & ids_b                             # two figures, no clash
    for h, ids in ((a, ids_a), (b, ids_b)):
        refs = set(re.findall(r'url\(#([^)]+)\)', h)) | \
            set(re.findall(r'href="#([^"]+)"', h))
        assert refs <= ids                                         # references follow
    monkeypatch.setattr(render, "MAX_SVG_BYTES", 10)
    p = render.embed(title, fig, "")
    assert p.startswith('<figure class="fig-png"><img alt=') and "data:image/png;base64," in p


def test_report_figures_each_once_per_run_with_caption_unique_ids_and_across_runs():
    """The report's figures (report.sections.figures_html, as each study's section calls
    it) and its across-runs figures (report.studies, the comparison section): each figure
    drawn once per run, each with a caption naming its run, no id shared on the page."""
    from numascope.report import html as report_html
    from numascope.report import sections as sec
    from numascope.report.studies import _comparison_figures
    from tests.test_store_helpers import make_result, make_run
    quick = _quick_run()
    other = _quick_run()
    other.run_id, other.tags = other.run_id + "-b", {"nps": "4"}
    quick.tags = {"nps": "1"}
    figures = sec.figures_html(report_html.figure_modules(), [quick, other])
    across = _comparison_figures([quick, other])
    page = figures + across
    assert "failed" not in page and "<script" not in page.lower()
    figs = re.findall(r"<figure .*?</figure>", figures, flags=re.DOTALL)
    titles = re.findall(r"<figcaption><strong>([^<]*)</strong>", figures)
    assert len(figs) == len(titles) > 10
    assert all(re.search(r"</strong> \S", f) for f in figs)   # each with a caption
    for r in (quick, other):                              # no figure drawn twice per run
        here = [t for f, t in zip(figs, titles, strict=True)
                if f" · run {r.run_id} ({_tags_of(r)})" in f]
        assert here and len(set(here)) == len(here), here
    assert len(titles) == 2 * len(set(titles))           # every figure for both runs
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    cross = re.findall(r"<figcaption><strong>([^<]*)</strong>", across)
    assert cross and all(t.startswith("Across runs: ") for t in cross)
    assert "nps=4" in figures
    one = make_run({}, [make_result()])
    assert '<section id="comparison">' not in report_html.render([one])   # one run: none


def _tags_of(run: RunRecord) -> str:
    return " ".join(f"{k}={v}" for k, v in run.tags.items())


def test_curves_draw_medians_with_intervals_in_their_colour():
    """Scaling curves and the latency sweep: each line's points are the medians, each
    point's bar the order-statistics interval (8 repetitions), in the line's colour."""
    from numascope.families.bandwidth import figures as bw
    from numascope.families.latency import figures as lat
    sc = [BenchResult("bandwidth", f"triad {pol} {t}T",
                      {"sweep": "scaling", "kernel": "triad", "threads": t, "policies": [pol]},
                      {"bandwidth": Metric("bandwidth", "GB/s", True,
                                           [10.0 * t + k + (pol == "spread") for k in range(8)])})
          for pol in ("compact", "spread") for t in (1, 2, 4)]
    sweep = [BenchResult("latency", f"idle {b}", {"kind": "idle", "bytes": b, "mode": "tlb",
                                                  "pages": "none", "stride": 64},
                         {"latency": Metric("latency", "ns", False,
                                            [b / 1000 + k for k in range(8)])})
             for b in (4096, 65536, 1 << 20, 1 << 24)]
    for figs, metric in ((bw.figures(sc)[:1], "bandwidth"), (lat.figures(sweep), "latency")):
        (_, fig), = figs
        ax = fig.axes[0]
        rs = sc if metric == "bandwidth" else sweep
        meds = sorted(r.metrics[metric].median for r in rs)
        assert sorted(y for ln in ax.lines if not ln.get_label().startswith("_")
                      for y in ln.get_ydata()) == pytest.approx(meds)
        segs = [s for c in ax.collections for s in c.get_segments()]
        ivs = sorted(marks.order_interval(r.metrics[metric].values) for r in rs)
        got = sorted((s[0][1], s[1][1]) for s in segs)
        assert [v for p in got for v in p] == pytest.approx([v for p in ivs for v in p])
        assert all(show(m) in _texts(fig) for m in meds)
        assert "order-statistics" in marks.caption_of(fig)


def test_latency_distribution_writes_its_tail_and_has_a_caption():
    from numascope.families.latency import figures as lat
    edges = [0.0, 100.0, 200.0, 400.0, 800.0, 1600.0]
    r = BenchResult("latency", "idle 1 GiB", {"kind": "idle", "bytes": 1 << 30, "mode": "tlb"},
                    {"latency": Metric("latency", "ns", False, [130.0] * 3)},
                    distributions={"latency": {
                        "edges": edges, "counts": [0, 9000, 900, 90, 10],
                        "quantiles": {"latency_p99": 382.5, "latency_p999": 791.2}}})
    (title, fig), = lat.figures([r])
    assert title == "Latency distribution"
    assert {"382.5", "791.2"} <= set(_texts(fig))
    _check_labels_and_caption(title, fig)


def test_figures_in_headless_chromium_keep_their_numbers_as_text(tmp_path):
    """The browser's DOM of the figures holds every figure as an <svg> and the tables'
    medians as text (searchable), with no script."""
    import subprocess

    from numascope.report import html as report_html
    from tests.test_report import Dom, _chromium
    exe = _chromium()
    run = _quick_run()
    from numascope.report import sections as sec
    body = sec.figures_html(report_html.figure_modules(), [run])
    page = tmp_path / "figures.html"
    page.write_text(f"<!doctype html><meta charset=utf-8><body>{body}</body>")
    p = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu",
                        "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}",
                        "--dump-dom", page.as_uri()], capture_output=True, text=True,
                       check=False, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    dom = Dom(p.stdout)
    assert dom.count("script") == 0
    assert dom.count("svg") == dom.count("figure") == body.count("<figure ")
    text = " ".join(dom.text)
    for r in run.results:
        if r.family in ("bandwidth", "matrix", "c2c", "storage"):
            for name in primary_metrics(r.family, list(r.metrics)):
                assert show(r.metrics[name].median) in text, (r.case, name)


def test_embed_escapes_a_hostile_title():
    import html as htmllib
    from html.parser import HTMLParser

    import matplotlib.pyplot as plt
    evil = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
    fig, ax = plt.subplots()
    ax.bar([0], [1.0])
    h = render.embed(evil, fig, evil)
    plt.close(fig)
    tags: list[tuple[str, dict]] = []

    class P(HTMLParser):
        def handle_starttag(self, tag, attrs):
            tags.append((tag, dict(attrs)))
    P().feed(h)
    assert not any(t in ("script", "img") for t, _ in tags)
    assert not any(k.startswith("on") for _, a in tags for k in a)
    svg = next(a for t, a in tags if t == "svg")
    assert svg["aria-label"] == evil and htmllib.escape(evil) in h


def test_every_family_figure_draws_intervals_from_six_repetitions():
    """The quick run's results with 8 repetitions each (its own values, repeated with a
    small spread): every module still draws, and says which interval its bars are."""
    run = _quick_run()
    for r in run.results:
        for m in r.metrics.values():
            if m.values and all(isinstance(v, float) for v in m.values):
                m.values = [v * (1 + 0.01 * (k % 4 - 1.5)) for k in range(8)
                            for v in m.values[:1]]
    order = 0
    for family in FAMILY_MODULES:
        for title, fig in _figures(family, run.results):
            _check_labels_and_caption(title, fig)
            order += "order-statistics" in marks.caption_of(fig)
    assert order >= 6
    import matplotlib.pyplot as plt
    plt.close("all")
