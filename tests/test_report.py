import os
import re
import shutil
import subprocess
import types
from html.parser import HTMLParser
from pathlib import Path

import pytest
from test_store_helpers import make_result, make_run, make_topo

from numascope.cli import main as cli
from numascope.console import to_plain
from numascope.report import html as report_html
from numascope.results.store import Store

EVIL = "<script>alert(1)</script>"
# the summary first, the studies' sections (those with results), the appendix last; the
# efficiency and compression tables keep their ids inside compute and compress
SECTIONS = {"summary", "topology", "bandwidth", "compute", "efficiency", "compress",
            "compression", "comparison", "appendix", "runs", "host", "noise", "stages",
            "results"}


class Dom(HTMLParser):
    """Elements, attributes and text of a document, as a browser-free check."""

    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def ids(self) -> set[str]:
        return {a["id"] for _, a in self.tags if "id" in a}

    def count(self, tag: str) -> int:
        return sum(1 for t, _ in self.tags if t == tag)

    def external(self) -> list[str]:
        """src/href values that would need the network (only data: URIs and #anchors allowed)."""
        return [v for _, a in self.tags for k, v in a.items()
                if k in ("src", "href") and v and not v.startswith(("data:", "#"))]


def _runs():
    a = make_run({"nps": "1", "note": EVIL},
                 [make_result(values=[100.0, 101.0, 99.0], params={"peak": {"bandwidth": 204.8}}),
                  make_result("compress", "blosc2 lz4 shuffle 2T", [5.0, 6.0, 5.5])])
    a.topology = to_plain(make_topo(device_name="<img src=x onerror=alert(2)>"))
    a.results[0].notes.append("pages on <i>node 1</i>")
    a.host["hostname"] = "<b>host</b>"
    a.host["peaks"] = {"dram": {"value": 200.0, "unit": "GB/s"},
                       "flops": {"value": None, "reason": "unknown CPU"}}
    b = make_run({"nps": "4"}, [make_result(values=[80.0, 81.0, 79.0])], memory_mode="NPS4")
    return [a, b]


def test_report_sections_escaping_and_self_contained(tmp_path):
    path = report_html.write_report(_runs(), tmp_path / "r.html")
    text = path.read_text()
    dom = Dom(text)
    assert SECTIONS <= dom.ids()
    assert dom.count("script") == 0 and dom.count("img") == 0   # no plots for these results
    assert dom.external() == []
    joined = "".join(dom.text)
    assert EVIL in joined                      # shown as text …
    assert "<img src=x onerror=alert(2)>" in joined
    assert "<b>host</b>" in joined and dom.count("b") == 0   # … never as markup
    assert "pages on <i>node 1</i>" in joined and dom.count("i") == 0
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    # one efficiency table, from the peak summary stored with the run (host["peaks"]):
    # a result's own params["peak"] is not a second table
    eff = text.split('id="efficiency"')[1].split("</section>")[0]
    assert eff.count("<table>") == 1 and "48.8%" not in eff
    assert "DRAM bandwidth" in eff and "50.0%" in eff   # median 100 of a 200 peak
    assert ": median of 3 repetitions" in eff
    assert eff.count("no peak summary stored with this run") == 1    # the second run
    # every result, collapsed
    res = text.split('id="results"')[1].split("</section>")[0]
    assert res.count("<details>") == 1 and "<summary>3 results in 2 families" in res
    assert "True" not in joined.split() and "False" not in joined.split()
    assert "blosc2 lz4 shuffle 2T" in joined  # compression section
    assert "NPS4" in joined and "tag:nps" in joined   # comparison names the difference
    assert "NUMA node 1" in joined and "Package 0" in joined   # topology drawn


def test_figures_embedded_and_broken_module_reported(tmp_path, monkeypatch):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def good(results):
        fig, ax = plt.subplots()
        ax.plot([r.metrics["bandwidth"].median for r in results])
        return [("median " + EVIL, fig)]

    def bad(results):
        raise ValueError("boom <x>")

    mods = [types.SimpleNamespace(__name__="good", figures=good),
            types.SimpleNamespace(__name__="bad", figures=bad)]
    monkeypatch.setattr(report_html, "figure_modules", lambda: mods)
    text = report_html.render(_runs()[:1])
    dom = Dom(text)
    # inline SVG (report.figures.render.embed): its accessible name is the escaped title
    svgs = [a for t, a in dom.tags if t == "svg"]
    assert len(svgs) == 1 and dom.count("img") == 0
    assert svgs[0]["aria-label"] == "median " + EVIL and dom.count("script") == 0
    assert "boom <x>" in "".join(dom.text)
    assert "comparison" not in dom.ids()       # one run: no comparison section


def test_real_figure_modules_do_not_break_the_report():
    # Whatever plot modules exist now must accept foreign results without raising.
    # (this test split the page at the nav's "Figures" link before, so it read only the nav:
    # compress's figures do raise KeyError on a compress result without the sweep's
    # parameters, as _runs() has; the report shows that failure and goes on)
    text = report_html.render(_runs())
    failed = re.findall(r"plots of ([\w.]+) failed", text)
    assert set(failed) <= {"numascope.families.compress.figures"}, failed
    assert 'id="appendix"' in text and text.rstrip().endswith("</html>")


def _artifacts() -> Path:
    d = Path(os.environ.get("NUMASCOPE_ARTIFACTS",
                            Path(__file__).resolve().parent.parent / "build" / "artifacts"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        exe = shutil.which(name)
        if exe:
            return exe
    pytest.skip("headless Chromium not installed")


def test_report_in_headless_chromium(tmp_path):
    exe = _chromium()
    page = report_html.write_report(_runs(), tmp_path / "report.html")
    base = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--enable-logging=stderr", "--v=0", f"--user-data-dir={tmp_path / 'profile'}"]
    p = subprocess.run(base + ["--dump-dom", page.as_uri()], capture_output=True, text=True,
                       check=False,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    console = [ln for ln in p.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    assert console == []
    dom = Dom(p.stdout)
    assert SECTIONS <= dom.ids()
    assert dom.count("script") == 0            # the tag did not become a script element
    assert EVIL in "".join(dom.text)
    shot = _artifacts() / "report.png"
    if shot.exists():
        shot.unlink()
    p = subprocess.run(base + [f"--screenshot={shot}", "--window-size=1400,2400",
                               page.as_uri()], capture_output=True, text=True, timeout=120, check=False,
                       cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_report_default_name_and_several_runs(tmp_path, monkeypatch, capsys):
    db = tmp_path / "runs.db"
    runs = _runs()
    with Store.open(db, write=True) as st:
        for r in runs:
            st.save_run(r)
    monkeypatch.chdir(tmp_path)
    assert cli(["report", runs[0].run_id, runs[1].run_id, "--store", str(db)]) == 0
    out = tmp_path / f"numascope-report-{runs[0].run_id}.html"
    assert out.exists() and "comparison" in Dom(out.read_text()).ids()
    assert cli(["report", "--store", str(db), "--output", str(tmp_path / "x" / "y.html")]) == 2
    assert "folder" in capsys.readouterr().err and not (tmp_path / "x").exists()


def _cz_result(codec: str, threads: int, gbs: float, plain: float, ratio: float):
    from numascope.results.record import BenchResult, Metric

    def m(name, v, unit="GB/s"):
        return Metric(name, unit, True, [v * 0.99, v, v * 1.01])
    return BenchResult(
        "compress", f"smooth {codec} {threads}T",
        {"dataset": "smooth <script>", "source": "synthetic", "nbytes": 1 << 30,
         "dtype": "float32", "chunk_bytes": 1 << 20, "threads": threads, "codec": codec,
         "clevel": 5, "filter": "shuffle"},
        {"decompress_sum": m("decompress_sum", gbs), "plain_sum": m("plain_sum", plain),
         "speedup": m("speedup", gbs / plain, "x"), "ratio": m("ratio", ratio, "x"),
         "compress_speed": m("compress_speed", 5.0)})


def test_compression_section_is_the_codec_by_threads_table():
    run = make_run(results=[_cz_result("lz4", 1, 10.0, 12.0, 35.0),
                            _cz_result("lz4", 2, 26.0, 24.0, 35.0),
                            _cz_result("zstd", 1, 5.0, 12.0, 90.0),
                            _cz_result("zstd", 2, 9.0, 24.0, 90.0)])
    text = report_html.render([run])
    dom = Dom(text)
    joined = "".join(dom.text)
    assert "plain sum" in joined and "lz4-5-shuffle" in joined and "zstd-5-shuffle" in joined
    assert "26 (1.1×)" in joined                         # GB/s and speed-up at 2 threads
    assert "compressed beats plain from 2 threads on" in joined
    assert "smooth <script>" in joined and dom.count("script") == 0


def test_cli_report_json_and_paths_checked_first(tmp_path, capsys):
    import json
    db = tmp_path / "runs.db"
    runs = _runs()
    with Store.open(db, write=True) as st:
        for r in runs:
            st.save_run(r)
    out = tmp_path / "r.html"
    assert cli(["report", "nps=1", "-o", str(out), "--store", str(db), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "report" and doc["errors"] == []
    assert doc["results"] == [{"path": str(out), "runs": [runs[0].run_id]}]
    assert "<details>" in out.read_text()
    # a bad name is said before the store is opened (this store does not exist)
    for bad, says in ((tmp_path / "r.pdf", "must end in .html"),
                      (tmp_path / "no" / "r.html", "does not exist"), (tmp_path, "is a folder")):
        assert cli(["report", "-o", str(bad), "--store", str(tmp_path / "none.db")]) == 2
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1
