"""`numascope advise --predict / --verify` from the command line: bad inputs (one line,
non-zero exit), a replayed machine predicted from its own stored run and refused --verify,
and the verify flow end to end here with 1 and 2 threads (stored as runs tagged with the
recipe, the figure drawn from them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import hwloc_fixture

from numascope.results.plain import to_plain
from numascope.results.record import BenchResult, Metric
from numascope.results.run import RunRecord
from numascope.results.store import Store
from numascope.topology import read_topology

FIXTURE = "16amd64-8n2c"          # 8 nodes of 2 cores, one L3 each


def cli(*args: str, store: Path, host: str = "testhost") -> subprocess.CompletedProcess:
    env = dict(os.environ, NUMASCOPE_STORE=str(store), NUMASCOPE_HOSTNAME=host,
               COLUMNS="80")
    return subprocess.run([sys.executable, "-m", "numascope", "advise", *args], env=env, check=False,
                          capture_output=True, text=True, timeout=300)


def one_line(p: subprocess.CompletedProcess) -> str:
    assert p.returncode != 0, p.stdout
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    return lines[0]


def bw(case: str, cpus: list[int], node: int, gbs: float) -> BenchResult:
    return BenchResult("bandwidth", case, {"kernel": "triad", "threads": len(cpus),
                                           "sweep": "scaling", "array_bytes": 8 << 20},
                       {"bandwidth": Metric("bandwidth", "GB/s", True,
                                            [gbs * 0.99, gbs, gbs * 1.01])},
                       {"cpus": cpus, "memory": {"policy": "first-touch", "nodes": []},
                        "pages_per_node": {str(node): 100}})


def replayed_run(store: Path) -> str:
    """A run of the replayed 8-node machine: node 0 measured with 1 and 2 threads."""
    topo = read_topology(hwloc_fixture(FIXTURE))
    rec = RunRecord.new(profile="quick")
    rec.topology = to_plain(topo)
    rec.host["hostname"] = "othermachine"
    n0 = sorted(topo.node(0).cpus)
    rec.results = [bw("triad compact 1T", n0[:1], 0, 5.0), bw("triad compact 2T", n0, 0, 8.0)]
    rec.status = "complete"
    with Store.open(store, write=True) as st:
        st.save_run(rec)
    return rec.run_id


def test_no_run_stored_names_the_command(tmp_path):
    line = one_line(cli("--predict", "--threads", "1", store=tmp_path / "none.db"))
    assert "numascope run --stage bandwidth" in line


def test_no_run_of_this_host(tmp_path):
    store = tmp_path / "runs.db"
    replayed_run(store)
    line = one_line(cli("--predict", "--threads", "1", store=store))
    assert "no run of host testhost" in line and "numascope run --stage bandwidth" in line


def test_unknown_run_id(tmp_path):
    store = tmp_path / "runs.db"
    replayed_run(store)
    line = one_line(cli("--predict", "--threads", "1", "--run", "19990101-000000-abc",
                        store=store))
    assert "no run matches '19990101-000000-abc'" in line


def test_predict_needs_a_shape_and_run_needs_predict(tmp_path):
    assert "job shape" in one_line(cli("--predict", store=tmp_path / "x.db"))
    assert "add --predict" in one_line(cli("--run", "x", "--threads", "1",
                                           store=tmp_path / "x.db"))


def test_a_run_without_bandwidth_results_names_the_command(tmp_path):
    store = tmp_path / "runs.db"
    rec = RunRecord.new(profile="quick")
    rec.status = "complete"
    with Store.open(store, write=True) as st:
        st.save_run(rec)
    line = one_line(cli("--predict", "--threads", "1", "--run", rec.run_id, store=store))
    assert "no triad bandwidth results" in line and "numascope run --stage" in line


def test_a_replayed_machine_predicts_from_its_run_and_refuses_verify(tmp_path):
    store = tmp_path / "runs.db"
    rid = replayed_run(store)
    root = str(hwloc_fixture(FIXTURE))
    p = cli("--sysfs-root", root, "--predict", "--run", rid, "--ranks", "2", "--threads", "1",
            "--json", store=store)
    assert p.returncode == 0, p.stderr
    sec = json.loads(p.stdout)["results"][0]
    assert sec["section"] == "predict" and sec["run"] == rid
    got = {it["unit"]: it["prediction"] for it in sec["items"]}
    # two ranks on two nodes each get node 0's 1-thread point (node 1 borrows node 0's);
    # two ranks on two cores of node 0 share its 2-thread point
    spread = got["core"]
    assert spread["total_gbs"] == pytest.approx(10.0, rel=1e-3)
    assert any("never measured alone" in x for x in spread["extrapolated"])
    packed = got["core inside N0"]
    assert [r["gbs"] for r in packed["ranks"]] == pytest.approx([4.0, 4.0], rel=1e-3)
    assert [it["unit"] for it in sec["items"]] == ["core", "core inside N0"]
    assert sec["why"].startswith(sec["items"][0]["label"] + " wins with 10 GB/s")
    assert "on 2 memory nodes against 1:" not in sec["why"]
    assert "draw on 2 memory nodes against 1" in sec["why"]
    # both are the model's: two ranks on a node borrowed from its twin, two sharing a point
    assert (spread["total_kind"], packed["total_kind"]) == ("model", "model")
    line = one_line(cli("--sysfs-root", root, "--verify", "--run", rid, "--ranks", "2",
                        store=store))
    assert "--verify" in line and "replayed" in line
    line = one_line(cli("--sysfs-root", root, "--predict", "--ranks", "2", store=store))
    assert "--run ID" in line


def test_predict_says_what_each_figure_is(tmp_path):
    """In the text and the JSON: one rank on node 0's two cores is its stored 2-thread
    point (a lookup); two ranks there are that point split (the model), though their total
    is the same number."""
    store = tmp_path / "runs.db"
    rid = replayed_run(store)
    root = str(hwloc_fixture(FIXTURE))
    args = ("--sysfs-root", root, "--predict", "--run", rid, "--unit", "node")
    one = cli(*args, "--threads", "2", "--json", store=store)
    assert one.returncode == 0, one.stderr
    p = json.loads(one.stdout)["results"][0]["items"][0]["prediction"]
    assert p["total_gbs"] == pytest.approx(8.0, rel=1e-3) and p["total_kind"] == "lookup"
    assert p["ranks"][0]["gbs_basis"] == "node 0: the stored point triad compact 2T"
    text = cli(*args, "--threads", "2", store=store).stdout
    assert "total 8 GB/s (lookup), per rank 8 (lookup)" in " ".join(text.split())
    assert "lookup: node 0: the stored point triad compact 2T" in " ".join(text.split())
    two = cli(*args, "--ranks", "2", "--threads", "1", "--json", store=store)
    assert two.returncode == 0, two.stderr
    items = json.loads(two.stdout)["results"][0]["items"]
    p = next(it["prediction"] for it in items if it["unit"] == "node inside N0")
    assert p["total_gbs"] == pytest.approx(8.0, rel=1e-3) and p["total_kind"] == "model"
    text = " ".join(cli(*args, "--ranks", "2", "--threads", "1", store=store).stdout.split())
    assert "total 8 GB/s (model), per rank 4, 4 (model)" in text
    assert "model (ranks 0, 1): node 0: the stored point triad compact 2T, split among " \
           "ranks 0, 1 by threads" in text


def planted_run_here(store: Path, topo, cpus: list[int]) -> RunRecord:
    """A stored run of this machine (host "testhost") with planted 1- and 2-thread triad
    points on its first node: what --predict reads and --verify measures against."""
    rec = RunRecord.new(profile="quick")
    rec.topology = to_plain(topo)
    rec.host["hostname"] = "testhost"
    node = topo.cpus[0].node or 0
    rec.results = [bw("triad compact 1T", cpus[:1], node, 10.0),
                   bw("triad compact 2T", cpus[:2], node, 15.0)]
    rec.status = "complete"
    with Store.open(store, write=True) as st:
        st.save_run(rec)
    return rec


@pytest.mark.parametrize("threads", [1, 2])
def test_verify_here_end_to_end(tmp_path, threads):
    """Predict from a planted run of this machine, run the layout for real (small arrays,
    3 repetitions), and find the verification stored, tagged, with its error."""
    topo = read_topology("/")
    cpus = sorted(topo.usable_cpus())
    if len(cpus) < threads:
        pytest.skip(f"needs {threads} CPUs")
    store = tmp_path / "runs.db"
    rec = planted_run_here(store, topo, cpus)
    p = cli("--verify", "--threads", str(threads), "--reps", "3", "--json", store=store)
    assert p.returncode == 0, p.stderr
    sec = json.loads(p.stdout)["results"][0]
    it = sec["items"][0]
    v = it["verified"]
    # progress on standard error as the layout starts and once it is measured and stored
    said = [ln.strip() for ln in p.stderr.splitlines() if ln.strip().startswith("verify ")]
    assert said[0] == f"verify 1/1: {it['label']} …", p.stderr
    assert said[1].startswith(f"verify 1/1: {it['label']}: ") and " GB/s measured, " in said[1]
    assert f"run {v['run_id']}" in said[1] and len(said) == 2, p.stderr
    assert v["launcher"] == "process" and v["total_gbs"] > 0
    pred = it["prediction"]["total_gbs"]
    # error = (predicted - measured) / measured (the JSON's prediction has 4 digits)
    assert pred == pytest.approx(v["total_gbs"] * (1 + v["error_percent"] / 100), rel=1e-3)
    # the planted point of this shape read back: a lookup, and its error tallied as one
    assert it["prediction"]["total_kind"] == v["predicted_kind"] == "lookup"
    assert list(sec["accuracy"]) == ["lookup"] and sec["accuracy"]["lookup"]["figures"] == 1
    with Store.open(store) as st:
        runs = st.list_runs()
        assert [r.tags.get("verify") for r in runs] == [None, f"1x{threads}"]
        assert runs[-1].tags["recipe"] == it["label"]
        got = st.get_run(runs[-1].run_id)
    cases = sorted(r.case for r in got.results)
    assert cases == ["triad verify rank 0", "triad verify total"]
    r0 = next(r for r in got.results if r.case == "triad verify rank 0")
    assert r0.placement["cpus"] == list(it["prediction"]["ranks"][0]["cpus"])
    # --reps 3: 4 fresh allocations (verify.UNITS) of at least 3 repetitions each (the
    # screen may set an implausibly fast one aside: its span is kept)
    assert r0.params["array_bytes"] == 8 << 20 and r0.params["steady"]["batches"] == 4
    assert len(r0.params["rep_spans"]) == 12
    # (excluded_reps lists every variant's; the reported variant's are the ones missing)
    from numascope.families.bandwidth.bench import variant_name
    mine = variant_name(r0.params["isa"], r0.params["stores"] == "streaming")
    out = [e for e in r0.params["excluded_reps"] if e["variant"] == mine]
    assert len(r0.metrics["bandwidth"].values) + len(out) == 12
    # the next prediction by default is from the measured run, not the verification
    p = cli("--predict", "--threads", str(threads), "--json", store=store)
    assert json.loads(p.stdout)["results"][0]["run"] == rec.run_id
    from numascope.families.bandwidth.verify_figures import figures
    (title, _fig), = figures(got.results)
    assert "predicted" in title.lower()


@pytest.mark.parametrize("launch", ["mpirun", "numactl"])
def test_verify_two_ranks_here(tmp_path, launch, monkeypatch):
    """Two ranks of one thread, under mpirun (Open MPI forwards both ranks' output through
    one pipe, where long lines can be spliced: results come back in files) and under the
    per-rank numactl lines; both ranks' results stored with their own CPU."""
    import shutil
    topo = read_topology("/")
    cpus = sorted(topo.usable_cpus())
    if len(cpus) < 2 or not shutil.which(launch):
        pytest.skip(f"needs 2 CPUs and {launch}")
    store = tmp_path / "runs.db"
    planted_run_here(store, topo, cpus)
    env_path = os.environ["PATH"]
    if launch == "numactl":     # a PATH without mpirun: the recipe's numactl lines launch
        hidden = tmp_path / "bin"
        hidden.mkdir()
        for d in env_path.split(os.pathsep):
            for f in Path(d).glob("*") if Path(d).is_dir() else ():
                if not f.name.startswith(("mpirun", "mpiexec", "orterun", "srun")) \
                        and not (hidden / f.name).exists():
                    os.symlink(f, hidden / f.name)
        env_path = str(hidden)
    monkeypatch.setenv("PATH", env_path)
    p = cli("--verify", "--ranks", "2", "--threads", "1", "--reps", "4", "--json", store=store)
    assert p.returncode == 0, p.stderr
    sec = json.loads(p.stdout)["results"][0]
    it = sec["items"][0]
    assert it["verified"]["launcher"] == launch and it["verified"]["total_gbs"] > 0
    # the 2-thread point split between two ranks: the model's, its ranks and total tallied
    # apart from any lookup
    assert it["verified"]["predicted_kind"] == "model"
    assert [r["predicted_kind"] for r in it["verified"]["ranks"]] == ["model", "model"]
    assert list(sec["accuracy"]) == ["model"] and sec["accuracy"]["model"]["figures"] == 3
    with Store.open(store) as st:
        got = st.get_run(st.list_runs()[-1].run_id)
    ranks = sorted((r for r in got.results if "rank" in r.case), key=lambda r: r.case)
    assert [r.case for r in ranks] == ["triad verify rank 0", "triad verify rank 1"]
    assert sorted(c for r in ranks for c in r.placement["cpus"]) == cpus[:2]


def test_verify_refuses_a_read_only_store_before_measuring(tmp_path, monkeypatch):
    """--verify stores each layout as a run: a store it cannot write is one line, exit 2,
    before the first layout is measured (no progress line, the store's bytes unchanged; the
    layout asked for would take minutes, past the child's 120 s limit, were it measured)."""
    from test_store import _cli as ro_cli
    topo = read_topology("/")
    folder = tmp_path / "store"
    folder.mkdir()
    store = folder / "runs.db"
    planted_run_here(store, topo, sorted(topo.usable_cpus()))
    before = store.read_bytes()
    monkeypatch.setenv("NUMASCOPE_HOSTNAME", "testhost")
    p = ro_cli("advise", "--verify", "--threads", "1", "--reps", "200000", "--store",
               str(store), ro=folder)
    assert p.returncode == 2, (p.returncode, p.stderr)
    line = one_line(p)
    assert line.startswith("numascope: error:") and "read-only" in line, line
    assert "verify 1/" not in p.stderr and store.read_bytes() == before
