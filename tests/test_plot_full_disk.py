"""--plot onto a disk that fills (or turns read-only) after the path was checked: the
measurements are still printed, then one line naming --plot and why, exit 2, and no
partial figure is left where the plot was to be (an old file of that name stays whole)."""

from __future__ import annotations

import errno
import json

import pytest


def _disk_fills(monkeypatch, err: int = errno.ENOSPC) -> None:
    """Every figure write gets some bytes out, then the file system refuses the rest."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    def full(self, fname, *a, **kw):
        if hasattr(fname, "write"):
            fname.write(b"\x89PNG partial")
        else:
            with open(fname, "wb") as f:
                f.write(b"\x89PNG partial")
        raise OSError(err, __import__("os").strerror(err))
    monkeypatch.setattr(Figure, "savefig", full)


def test_save_figures_leaves_no_partial_file_and_keeps_the_old_one(monkeypatch, tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from numascope.plotting import save_figures
    old = tmp_path / "p.png"
    old.write_bytes(b"the old figure")
    fig, _ = plt.subplots()
    _disk_fills(monkeypatch)
    with pytest.raises(OSError) as e:
        save_figures([("a", fig)], old)
    assert e.value.errno == errno.ENOSPC
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.png"]
    assert old.read_bytes() == b"the old figure"


CASES = {
    "bw": ["bw", "--scaling", "--kernel", "triad", "--size", "8M", "--reps", "1"],
    "matrix": ["matrix", "--what", "latency", "--size", "1M", "--samples", "2"],
    "c2c": ["c2c", "--samples", "3", "--trips", "200"],
    "lat": ["lat", "--size", "256K", "--samples", "3", "--loads", "4096"],
}


@pytest.mark.parametrize("command", sorted(CASES))
def test_plot_onto_a_full_disk_keeps_the_results_and_exits_2(monkeypatch, capsys, tmp_path,
                                                              command):
    from numascope.cli import main
    _disk_fills(monkeypatch)
    plot = tmp_path / "fig.png"
    assert main([*CASES[command], "--plot", str(plot)]) == 2
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err and "internal error" not in cap.err, cap.err
    lines = [ln for ln in cap.err.splitlines() if ln.startswith("numascope: error:")]
    assert len(lines) == 1, cap.err
    assert "--plot" in lines[0] and "no space left on device" in lines[0], lines[0]
    assert cap.out.strip(), "the measurements were not printed"
    assert list(tmp_path.iterdir()) == [], "a partial figure was left behind"


def test_plot_onto_a_read_only_disk_with_json_keeps_the_results_in_the_envelope(
        monkeypatch, capsys, tmp_path):
    from numascope.cli import main
    _disk_fills(monkeypatch, errno.EROFS)
    plot = tmp_path / "fig.png"
    assert main([*CASES["lat"], "--json", "--plot", str(plot)]) == 2
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert doc["results"], "the measurements were lost"
    (e,) = doc["errors"]
    assert e["kind"] == "bad-input" and e["exit_code"] == 2
    assert "read-only" in e["message"] and "--plot" in e["message"]
    assert list(tmp_path.iterdir()) == []
