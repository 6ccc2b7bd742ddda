"""Kubernetes, node side, run for real: node-feature-discovery's local feature file written
by `fleet run --nfd-file` and `fleet labels` from real runs on this machine and from
replayed ones (synthetic sysfs trees and hwloc's dumps: every memory mode they give), read
back by a reader that follows NFD's documented rules; the node-problem-detector plugin
(scripts/integrations/numascope-npd) under `env -i` with each verdict and with numascope
missing or failing; the manifests of deploy/kubernetes validated against Kubernetes'
schemas (kubernetes-validate) and their pods' scripts run here as the pods run them."""

from __future__ import annotations

import copy
import os
import re
import shutil
import signal
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import HWLOC_FIXTURES, REPO
from synth_sysfs import machine
from test_fleet_integrations import NUMASCOPE, SLURMD_PATH, _conf, stores  # noqa: F401

from numascope import __version__, suite
from numascope.cli import main
from numascope.fleet import kubernetes as k8s
from numascope.fleet.node import failed_record
from numascope.results.run import RunRecord, new_run_id
from numascope.results.store import Store
from numascope.topology import read_topology

PREFIX = "numascope.feature.node.kubernetes.io"   # spelt out: what schedulers select on
DEPLOY = REPO / "deploy" / "kubernetes"
NPD = REPO / "scripts" / "integrations" / "numascope-npd"
NODE = "node7"


# -- a reader that follows NFD's rules ------------------------------------------------------
# nfd-worker's local source (docs/usage/customization-guide.md, "Local feature source";
# source/local/local.go): dot files are skipped, a file over 64 kB is ignored, each line is
# trimmed, "#" lines are comments, "# +expiry-time=<RFC 3339>" a directive that holds for
# the lines after it (until the next one), past which they are dropped; "key=value", a bare
# key meaning "true". nfd-master then publishes a label only when its name is a qualified
# name (an optional DNS-1123 subdomain prefix, "/", at most 63 characters), its value a
# label value (at most 63, alphanumeric at both ends, [-_.A-Za-z0-9] between) and its
# namespace not kubernetes.io's (feature.node.kubernetes.io and its sub-namespaces excepted).

_SUBDOMAIN = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*")
_NAME = re.compile(r"[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?")
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)")


def nfd_read(path: Path, now: datetime | None = None) -> dict[str, str]:
    """The labels NFD makes of feature file `path`; AssertionError on anything it would
    reject or that numascope never writes (an unknown directive)."""
    now = now or datetime.now(UTC)
    if path.name.startswith("."):
        return {}
    data = path.read_bytes()
    if len(data) > 65536:
        return {}
    labels: dict[str, str] = {}
    expiry = now
    for raw in data.split(b"\n"):
        line = raw.decode("utf-8").strip()
        if not line:
            continue
        if line.startswith("#"):
            if line.startswith("# +"):
                key, sep, value = line[3:].partition("=")
                assert key == "expiry-time" and sep, f"not a directive numascope writes: {line}"
                assert _RFC3339.fullmatch(value.strip()), f"not RFC 3339: {value}"
                expiry = datetime.fromisoformat(value.strip())
            continue
        if expiry < now:
            continue
        key, sep, value = line.partition("=")
        labels[key] = value if sep else "true"
    for key, value in labels.items():
        prefix, _, name = key.rpartition("/")
        assert prefix and len(prefix) <= 253 and _SUBDOMAIN.fullmatch(prefix), key
        assert len(name) <= 63 and _NAME.fullmatch(name), key
        assert value == "" or (len(value) <= 63 and _NAME.fullmatch(value)), (key, value)
        assert not (prefix == "kubernetes.io" or prefix.endswith(".kubernetes.io")) or \
            prefix.endswith("feature.node.kubernetes.io"), f"NFD denies namespace {prefix}"
    return labels


def named(labels: dict[str, str]) -> dict[str, str]:
    """The labels under numascope's prefix, by their short name (and nothing outside it)."""
    assert all(k.startswith(PREFIX + "/") for k in labels), labels
    return {k.removeprefix(PREFIX + "/"): v for k, v in labels.items()}


def expiry_of(path: Path) -> datetime:
    (line,) = [x for x in path.read_text().splitlines() if x.startswith("# +expiry-time=")]
    return datetime.fromisoformat(line.partition("=")[2])


def test_the_reader_follows_nfds_documented_example(tmp_path):
    """NFD's own example (customization guide): features 2 and 3 stay, 1 and 4 expired;
    a bare key is "true"; a dot file and a file over 64 kB give nothing."""
    f = tmp_path / "features"
    f.write_text("# +expiry-time=2012-07-28T11:22:33Z\nvendor.io/feature1=featureValue\n\n"
                 "# +expiry-time=2080-07-28T11:22:33Z\nvendor.io/feature2=featureValue2\n\n"
                 "# +expiry-time=2070-07-28T11:22:33Z\nvendor.io/feature3=featureValue3\n\n"
                 "# +expiry-time=2002-07-28T11:22:33Z\nvendor.io/feature4=featureValue4\n")
    assert nfd_read(f) == {"vendor.io/feature2": "featureValue2",
                           "vendor.io/feature3": "featureValue3"}
    f.write_text("# a comment\nvendor.io/flag\n  vendor.io/x=1  \n")
    assert nfd_read(f) == {"vendor.io/flag": "true", "vendor.io/x": "1"}
    dot = tmp_path / ".hidden"
    dot.write_text("vendor.io/x=1\n")
    big = tmp_path / "big"
    big.write_text("vendor.io/x=1\n" + "#" * 70000 + "\n")
    assert nfd_read(dot) == {} and nfd_read(big) == {}
    for bad in ("vendor.io/x=a b", "vendor.io/" + "n" * 64 + "=1", "kubernetes.io/x=1",
                "Vendor.io/x=1", "vendor.io/x=-a"):
        f.write_text(bad + "\n")
        with pytest.raises(AssertionError):
            nfd_read(f)


def test_label_values_keep_kubernetes_syntax():
    assert k8s.label_value("SNC off") == "SNC-off"
    assert k8s.label_value("1 node per socket") == "1-node-per-socket"
    assert k8s.label_value("NPS4") == "NPS4"
    assert k8s.label_value("  -x- ") == "x"
    assert k8s.label_value("é|ü") == "unknown"
    long = k8s.label_value("a" * 62 + "-b" * 10)
    assert len(long) <= 63 and k8s.is_value(long)
    assert k8s.is_name(f"{PREFIX}/memory-mode") and not k8s.is_name(f"{PREFIX}/-x")


# -- real runs on this machine --------------------------------------------------------------

def _numascope(*args: str, env: dict[str, str] | None = None, timeout: float = 300,
               cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(NUMASCOPE), *args], capture_output=True, text=True,
                          timeout=timeout, check=False, cwd=cwd,
                          env={**os.environ, "NUMASCOPE_HOSTNAME": NODE, **(env or {})})


def _this_machine() -> dict[str, str]:
    """What the labels of this machine must say, read here from sysfs and the facts."""
    f = read_topology("/").facts
    mode = f["memory_mode"]
    want = {"memory-mode": mode.value.replace(" ", "-") if mode.status == "known" else
            mode.status, "sockets": str(f["sockets"].value),
            "numa-nodes": str(len(list(Path("/sys/devices/system/node").glob("node[0-9]*")))),
            "run-status": "complete", "version": __version__}
    siblings = Path("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list").read_text()
    threads = sum(len(range(int(a), int(b or a) + 1)) for a, _, b in
                  (p.partition("-") for p in siblings.strip().split(",")))
    want["threads-per-core"] = str(threads)
    return want


def _scaled(rec: RunRecord, factor: float, host: str, fleet: str) -> RunRecord:
    """A copy of `rec` as another host's run of fleet `fleet`, every metric `factor` times
    better (factor < 1: worse)."""
    r = copy.deepcopy(rec)
    r.run_id = new_run_id()
    r.tags = {**r.tags, "fleet": fleet, "host": host}
    r.host["hostname"] = host
    for res in r.results:
        for m in res.metrics.values():
            m.values = [v * (factor if m.higher_is_better else 1 / factor) for v in m.values]
    return r


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> dict[str, Path]:
    """One real `fleet run --quick --stage bandwidth` of host node7 into a node-local store,
    and baselines made from copies of that very run (so that a check of it has a known
    answer whatever this machine measures): gold (the run itself: pass), slow (the node 4x
    better: pass), fast (4x worse: fail), small (2 nodes: inconclusive), each also alone
    in a baseline store of its own (what the numascope-baseline ConfigMap holds). The tests
    that measure again judge their new run against slow or fast: 4x, as two runs of this
    shared 2-CPU machine were seen more than 2x apart under other work."""
    if not NUMASCOPE.exists():
        pytest.skip(f"no numascope executable at {NUMASCOPE}")
    d = tmp_path_factory.mktemp("real")
    node_db, ref = d / "node.db", d / "ref.db"
    p = _numascope("fleet", "run", "--no-mpi", "--quick", "--stage", "bandwidth", "--store",
                   str(node_db))
    assert p.returncode == 0, p.stdout + p.stderr
    with Store.open(node_db) as st:
        (run,) = st.list_runs()
        rec = st.get_run(run.run_id)
    with Store.open(ref, write=True) as st:
        for name, factor, n in (("gold", 1.0, 3), ("slow", 0.25, 3), ("fast", 4.0, 3),
                                ("small", 1.0, 2)):
            for i in range(n):
                st.save_run(_scaled(rec, factor, f"{name}{i}", f"ref-{name}"))
    out = {"node": node_db, "ref": ref}
    for name in ("gold", "slow", "fast", "small"):
        assert main(["fleet", "baseline", "save", name, "--fleet", f"ref-{name}", "--store",
                     str(ref), *(["--allow-small"] if name == "small" else [])]) == 0
        assert main(["fleet", "baseline", "copy", name, "--store", str(ref), "--to",
                     str(node_db)]) == 0
        out[name] = d / f"{name}-baseline.db"
        assert main(["fleet", "baseline", "copy", name, "--store", str(ref), "--to",
                     str(out[name])]) == 0
    return out


def test_a_real_smoke_run_writes_this_machines_labels(tmp_path):
    features = tmp_path / "features.d"
    features.mkdir()
    f = features / "numascope"
    start = datetime.now(UTC)
    p = _numascope("fleet", "run", "--no-mpi", "--smoke", "--stage", "bandwidth", "--store",
                   str(tmp_path / "node.db"), "--nfd-file", str(f))
    assert p.returncode == 0, p.stderr
    assert f"labels: {f}" in " ".join(p.stdout.split()).replace("- ", "-")
    assert [x.name for x in features.iterdir()] == ["numascope"]   # no temporary file left
    labels = named(nfd_read(f))
    want = _this_machine()
    assert {k: labels[k] for k in want} == want
    assert labels["smt"] == ("true" if want["threads-per-core"] != "1" else "false")
    assert "baseline-check" not in labels and "baseline" not in labels
    assert (labels["memory-mode"] == "ambiguous") == ("memory-mode-candidates" in labels)
    expiry = expiry_of(f)
    assert timedelta(hours=23) < expiry - start < timedelta(hours=24, minutes=5)
    # NFD drops them all once they expire
    assert nfd_read(f, now=expiry + timedelta(seconds=1)) == {}
    assert f.read_text().startswith(f"# numascope {__version__}: ")


@pytest.mark.parametrize(("baseline", "extra", "check"), [
    ("gold", [], "pass"), ("slow", [], "pass"), ("fast", [], "fail"),
    ("small", [], "inconclusive"), ("gold", ["--max-age", "1s"], "inconclusive")])
def test_fleet_labels_carry_the_check_of_a_real_run(real, tmp_path, capsys, monkeypatch,
                                                   baseline, extra, check):
    monkeypatch.setenv("NUMASCOPE_HOSTNAME", NODE)
    f = tmp_path / "numascope"       # (the fixture's run is older than --max-age 1s)
    assert main(["fleet", "labels", "--output", str(f), "--baseline", baseline,
                 "--store", str(real["node"]), *extra]) == 0
    # (a path wider than the line is broken as a last resort: compared without the breaks)
    assert f"wrote {f}: host {NODE}".replace(" ", "") in _said(capsys).replace(" ", "")
    labels = named(nfd_read(f))
    assert labels["baseline"] == baseline and labels["baseline-check"] == check
    assert labels["run-status"] == "complete"
    assert f"# baseline {baseline}: {check} (" in f.read_text()


def test_fleet_labels_to_standard_output(real, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("NUMASCOPE_HOSTNAME", NODE)
    assert main(["fleet", "labels", "-o", "-", "--store", str(real["node"])]) == 0
    f = tmp_path / "numascope"
    f.write_text(capsys.readouterr().out)
    assert f.read_text().startswith("# numascope ") and named(nfd_read(f))["memory-mode"]


def test_fleet_labels_json(real, capsys, monkeypatch, tmp_path):
    import json
    monkeypatch.setenv("NUMASCOPE_HOSTNAME", NODE)
    f = tmp_path / "numascope"
    assert main(["fleet", "labels", "-o", str(f), "--baseline", "fast", "--store",
                 str(real["node"]), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    got = {r["name"]: r["value"] for r in doc["results"]}
    assert got == nfd_read(f)
    assert doc["check"]["status"] == "fail" and doc["host"] == NODE
    assert doc["expiry"] == expiry_of(f).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- replayed machines ----------------------------------------------------------------------

GENOA = {"family": 25, "model_number": 17, "model": "AMD EPYC 9654 96-Core Processor"}
TURIN = {"family": 26, "model_number": 2, "model": "AMD EPYC 9124-class (synthetic)"}
SPR = {"vendor": "GenuineIntel", "family": 6, "model_number": 143,
       "model": "Intel(R) Xeon(R) Platinum 8480+", "l3_per_socket": 1, "cores_per_l3": 12}
HSX = {**SPR, "model_number": 63, "model": "Intel(R) Xeon(R) CPU E5-2680 v3 @ 2.50GHz",
       "l3_per_socket": 2, "cores_per_l3": 6}


def _mode(mode: str, per: str, nodes: str, l3: str, **more: str) -> dict[str, str]:
    return {"memory-mode": mode, "nodes-per-socket": per, "numa-nodes": nodes,
            "l3-per-numa-node": l3, **more}


# (id, synth_sysfs.machine arguments, the labels expected), 2 sockets each
SYNTH = [
    ("epyc-nps1", GENOA, _mode("NPS1", "1", "2", "8", smt="true", **{"threads-per-core": "2"})),
    ("epyc-nps2", {**GENOA, "nodes_per_socket": 2}, _mode("NPS2", "2", "4", "4")),
    ("epyc-nps4", {**GENOA, "nodes_per_socket": 4}, _mode("NPS4", "4", "8", "2")),
    ("epyc-nps0", {**GENOA, "nodes_per_socket": 0}, _mode("NPS0", "0.5", "1", "16")),
    # 16 NUMA nodes: past the Topology Manager's default limit of 8
    ("epyc-l3-as-numa", {**GENOA, "nodes_per_socket": 8},
     _mode("L3-as-NUMA", "8", "16", "1")),
    ("epyc-4l3-nps4-or-l3-as-numa", {**TURIN, "l3_per_socket": 4, "nodes_per_socket": 4},
     _mode("ambiguous", "4", "8", "1", **{"memory-mode-candidates": "NPS4_L3-as-NUMA"})),
    ("epyc-1l3-nps1-or-l3-as-numa", {**TURIN, "l3_per_socket": 1},
     _mode("ambiguous", "1", "2", "1", **{"memory-mode-candidates": "NPS1_L3-as-NUMA"})),
    ("xeon-snc-off", SPR, _mode("SNC-off", "1", "2", "1")),
    ("xeon-snc2", {**SPR, "nodes_per_socket": 2}, _mode("SNC2", "2", "4", "1")),
    ("xeon-snc3", {**SPR, "nodes_per_socket": 3}, _mode("SNC3", "3", "6", "1")),
    ("xeon-snc4", {**SPR, "nodes_per_socket": 4}, _mode("SNC4", "4", "8", "1")),
    ("xeon-interleaved", {**SPR, "nodes_per_socket": 0},
     _mode("node-interleaving", "0.5", "1", "2")),
    ("haswell-cod", {**HSX, "nodes_per_socket": 2}, _mode("COD", "2", "4", "1")),
    # a guest's nodes are its hypervisor's: the mode is a candidate, not a fact
    ("vm-epyc-nps4", {**GENOA, "nodes_per_socket": 4, "hypervisor": True},
     _mode("ambiguous", "4", "8", "2", **{"memory-mode-candidates": "NPS4"})),
    ("epyc-smt-off", {**GENOA, "smt": 1},
     _mode("NPS1", "1", "2", "8", smt="false", **{"threads-per-core": "1"})),
    # nodes splitting an L3 on EPYC: no BIOS setting does that
    ("epyc-split-l3", {**GENOA, "l3_per_socket": 1, "cores_per_l3": 8, "nodes_per_socket": 2},
     _mode("unknown", "2", "4", "1")),
]

# (hwloc dump, the labels expected)
HWLOC = [
    ("memorysidecaches", _mode("SNC2", "2", "4", "1")),
    # Xeon Phi: no L3; 4 MCDRAM nodes without CPUs besides the 4 with them
    ("64intel64-fakeKNL-SNC4-hybrid",
     _mode("SNC4", "4", "8", "unknown", **{"numa-nodes-with-cpus": "4"})),
    ("64intel64-fakeKNL-A2A-cache",
     {"memory-mode": "ambiguous",
      "memory-mode-candidates": "quadrant_hemisphere_all-to-all"}),
    ("8em64t-2s2ca2c-buggynuma",
     {"memory-mode": "ambiguous", "memory-mode-candidates": "one-node-across-sockets",
      "numa-nodes": "8", "numa-nodes-with-cpus": "1"}),
    ("offline-cpu0-node0", {"memory-mode": "unknown", "nodes-per-socket": "ambiguous"}),
    ("16amd64-8n2c", _mode("1-node-per-socket", "1", "8", "unknown", sockets="8")),
    ("96em64t-4n4d3ca2co", _mode("4-sockets-per-node", "0.25", "4", "4")),
    # Bulldozer: the kernel's thread siblings are CMT cores, each with its L1d, not SMT
    ("64amd64-4s2n4ca2co", {"memory-mode": "2-nodes-per-socket", "smt": "false",
                            "threads-per-core": "2"}),
    ("256ia64-64n2s2c", {"memory-mode": "2-sockets-per-node", "numa-nodes": "64"}),
]


def _replay(monkeypatch, tmp_path, topo, *extra: str) -> dict[str, str]:
    """`fleet run --stage topology --nfd-file` with `topo` as this machine's topology: the
    labels it writes, as NFD reads them."""
    monkeypatch.setattr(suite, "load_topology", lambda: topo)
    monkeypatch.setattr(suite, "clock_probe", lambda: (lambda: 3.0))
    monkeypatch.setenv("NUMASCOPE_HOSTNAME", NODE)
    f = tmp_path / "features.d" / "numascope"
    f.parent.mkdir(exist_ok=True)
    assert main(["fleet", "run", "--no-mpi", "--stage", "topology", "--store",
                 str(tmp_path / "node.db"), "--nfd-file", str(f), *extra]) == 0
    return named(nfd_read(f))


@pytest.mark.parametrize(("kw", "want"), [m[1:] for m in SYNTH], ids=[m[0] for m in SYNTH])
def test_replayed_synthetic_machines_get_their_memory_mode_label(monkeypatch, tmp_path,
                                                                 capsys, kw, want):
    topo = read_topology(machine(tmp_path / "sysfs", **kw))
    labels = _replay(monkeypatch, tmp_path, topo)
    capsys.readouterr()
    assert {k: labels.get(k) for k in want} == want
    assert labels["sockets"] == "2" and labels["run-status"] == "complete"
    assert (labels["memory-mode"] == "ambiguous") == ("memory-mode-candidates" in labels)


@pytest.mark.parametrize(("name", "want"), HWLOC, ids=[h[0] for h in HWLOC])
def test_replayed_hwloc_dumps_get_their_memory_mode_label(monkeypatch, tmp_path, capsys,
                                                          name, want):
    dump = HWLOC_FIXTURES / f"{name}.tar.bz2"
    if not dump.exists():
        pytest.skip(f"fixture {dump} not found")
    labels = _replay(monkeypatch, tmp_path, read_topology(dump))
    capsys.readouterr()
    assert {k: labels.get(k) for k in want} == want


# -- nothing measured: nothing written -------------------------------------------------------

def _store_with(tmp_path: Path, *runs: RunRecord) -> Path:
    db = tmp_path / "node.db"
    with Store.open(db, write=True) as st:
        for r in runs:
            st.save_run(r)
    return db


def _said(capsys) -> str:
    """What the command printed, its wrapping undone."""
    return " ".join(capsys.readouterr().out.split())


def _ours(path: Path) -> None:
    path.write_text(f"# numascope {__version__}: an earlier run\n{PREFIX}/baseline-check=pass\n")


def test_no_run_of_the_host_writes_nothing_and_removes_our_old_file(tmp_path, capsys,
                                                                   monkeypatch):
    monkeypatch.setenv("NUMASCOPE_HOSTNAME", NODE)
    other = failed_record({"id": "f", "host": "elsewhere", "rank": 0, "ranks": 1,
                           "launcher": "none", "slurm": {}}, "quick", {}, "error: x")
    db = _store_with(tmp_path, other)
    f = tmp_path / "numascope"
    _ours(f)
    assert main(["fleet", "labels", "-o", str(f), "--store", str(db)]) == 5
    out = _said(capsys)
    assert f"no labels for host {NODE}: no run of host {NODE}" in out and "removed" in out
    assert not f.exists()
    # another program's file of that name is never removed
    f.write_text("vendor.io/x=1\n")
    assert main(["fleet", "labels", "-o", str(f), "--store", str(db)]) == 5
    assert "nothing written" in _said(capsys) and f.exists()


def test_a_run_that_never_read_the_machine_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("NUMASCOPE_HOSTNAME", NODE)
    rec = failed_record({"id": "f", "host": NODE, "rank": 0, "ranks": 1, "launcher": "none",
                         "slurm": {}}, "quick", {}, "error: OSError: no sysfs")
    db = _store_with(tmp_path, rec)
    f = tmp_path / "numascope"
    _ours(f)
    assert main(["fleet", "labels", "-o", str(f), "--store", str(db), "--json"]) == 5
    import json
    doc = json.loads(capsys.readouterr().out)
    assert doc["errors"][0]["kind"] == "not-measured" and doc["removed"] is True
    assert "never read the machine (failed: error: OSError: no sysfs)" in \
        doc["errors"][0]["message"]
    assert not f.exists()


def _labelled_run(tmp_path: Path, when: datetime) -> RunRecord:
    """A complete run of NODE, made at `when`, with a replayed machine's topology facts."""
    from numascope.results.plain import to_plain
    from numascope.results.run import host_facts
    root = machine(tmp_path / "sysfs", **GENOA)
    topo = read_topology(root)
    rec = RunRecord.new(profile="quick", tags={"host": NODE})
    rec.started = rec.finished = when.isoformat(timespec="seconds")
    rec.status = "complete"
    rec.topology = to_plain(topo)
    rec.host = {**host_facts(topo, root), "hostname": NODE}
    return rec


def test_runs_from_before_this_boot_or_past_the_expiry_write_nothing(tmp_path, capsys,
                                                                    monkeypatch):
    monkeypatch.setenv("NUMASCOPE_HOSTNAME", NODE)
    boot = k8s.boot_time()
    when = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=10)
    if boot is None or when < boot:
        pytest.skip("this machine booted seconds ago, or /proc/stat has no btime")
    f = tmp_path / "numascope"
    db = _store_with(tmp_path, _labelled_run(tmp_path, boot - timedelta(minutes=5)))
    _ours(f)
    assert main(["fleet", "labels", "-o", str(f), "--store", str(db)]) == 5
    assert "was made before this boot" in _said(capsys) and not f.exists()
    db.unlink()
    db = _store_with(tmp_path, _labelled_run(tmp_path, when))
    _ours(f)
    assert main(["fleet", "labels", "-o", str(f), "--store", str(db), "--expiry",
                 "5s"]) == 5
    assert "its labels would have expired" in _said(capsys) and not f.exists()
    assert main(["fleet", "labels", "-o", str(f), "--store", str(db)]) == 0   # within 24 h
    capsys.readouterr()
    labels = named(nfd_read(f))
    assert labels["memory-mode"] == "NPS1" and labels["numa-nodes"] == "2"
    # the expiry counts from the run, not from when the file was written
    assert expiry_of(f) == when + timedelta(hours=24)


def test_a_file_from_an_earlier_boot_is_gone_while_the_node_is_measured(tmp_path, capsys,
                                                                       monkeypatch):
    """The BIOS may have changed across the reboot: NFD must not advertise the old mode
    for the minutes the new run takes."""
    from numascope.fleet import node
    f = tmp_path / "features.d" / "numascope"
    f.parent.mkdir()
    _ours(f)
    os.utime(f, (1000, 1000))                      # written long before this boot
    seen = []
    real_run = node.run_node

    def run_node(*a, **k):
        seen.append(f.exists())
        return real_run(*a, **k)
    monkeypatch.setattr(node, "run_node", run_node)
    topo = read_topology(machine(tmp_path / "sysfs", **GENOA))
    labels = _replay(monkeypatch, tmp_path, topo)
    assert seen == [False]
    err = " ".join(capsys.readouterr().err.split())
    assert "written before this boot, removed until this run ends" in err
    assert labels["memory-mode"] == "NPS1"


def test_the_file_is_replaced_atomically_through_a_dot_file(tmp_path, monkeypatch, capsys):
    """NFD skips dot files: the new content is written to one beside the file, then
    renamed over it."""
    renamed = []
    real_replace = os.replace

    def replace(src, dst):
        renamed.append((Path(src).name, Path(dst).name, Path(src).parent == Path(dst).parent))
        return real_replace(src, dst)
    monkeypatch.setattr(os, "replace", replace)
    topo = read_topology(machine(tmp_path / "sysfs", **GENOA))
    _replay(monkeypatch, tmp_path, topo)
    capsys.readouterr()
    (src, _dst, same) = next(r for r in renamed if r[1] == "numascope")
    assert src.startswith(".") and same
    assert [p.name for p in (tmp_path / "features.d").iterdir()] == ["numascope"]


def test_a_run_made_with_a_test_hook_labels_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NUMASCOPE_TEST_HOOKS", "falsify-results")
    monkeypatch.setenv("NUMASCOPE_FLEET_TEST_SLOW", NODE)
    monkeypatch.setattr(suite, "load_topology",
                        lambda: read_topology(machine(tmp_path / "sysfs", **GENOA)))
    monkeypatch.setattr(suite, "clock_probe", lambda: (lambda: 3.0))
    monkeypatch.setenv("NUMASCOPE_HOSTNAME", NODE)
    f = tmp_path / "numascope"
    _ours(f)
    assert main(["fleet", "run", "--no-mpi", "--stage", "topology", "--store",
                 str(tmp_path / "n.db"), "--nfd-file", str(f)]) == 0
    err = capsys.readouterr().err
    assert "no labels written: its run was made with test hook NUMASCOPE_FLEET_TEST_SLOW" \
        in " ".join(err.split())
    assert not f.exists()


# -- the node-problem-detector plugin --------------------------------------------------------

def _npd(tmp_path: Path, store: Path, env: dict[str, str] | None = None, **settings: str):
    """numascope-npd as NPD runs it here: `env -i` with a bare PATH, the settings file;
    (exit, stdout lines, stderr)."""
    conf = _conf(tmp_path, store, **settings)
    p = subprocess.run(["env", "-i", f"PATH={SLURMD_PATH}", f"NUMASCOPE_CONF={conf}",
                        *(f"{k}={v}" for k, v in (env or {}).items()), str(NPD)],
                       capture_output=True, text=True, timeout=120, check=False)
    return p.returncode, p.stdout.splitlines(), p.stderr


@pytest.mark.parametrize(("store", "unknown", "rc", "says"), [
    ("ok", None, 0, "numascope: baseline gold: within tolerance"),
    ("out", None, 1, "numascope: out of baseline gold: vm1 bandwidth/triad"),
    ("unsure", None, 1, ("numascope: inconclusive against baseline gold: baseline gold: "
                        "medians of at most 2 nodes")),
    ("unsure", "drain", 1, "numascope: inconclusive against baseline gold"),
    ("unsure", "ok", 0, "numascope: inconclusive against baseline gold (NUMASCOPE_UNKNOWN=ok)"),
    ("unsure", "unknown", 2, "numascope: inconclusive against baseline gold"),
    # no run of this host in its store: never a pass on nothing
    ("empty", None, 1, "numascope: inconclusive against baseline gold"),
])
def test_npd_plugin_reports_each_verdict(stores, tmp_path, store, unknown, rc, says):  # noqa: F811
    more = {"NUMASCOPE_UNKNOWN": unknown} if unknown else {}
    got, lines, err = _npd(tmp_path, stores[store], **more)
    assert got == rc, lines
    assert len(lines) == 1 and lines[0].startswith(says), lines
    assert len(lines[0]) <= 200 and err == ""


def test_npd_plugin_fails_closed(stores, tmp_path):  # noqa: F811
    def one(**settings) -> str:
        rc, lines, _ = _npd(tmp_path, settings.pop("store", stores["ok"]), **settings)
        assert rc == 1 and len(lines) == 1, (rc, lines)
        return lines[0]
    assert one(store=tmp_path / "none.db").startswith(
        "numascope: fleet check failed (exit 2): no store at")
    assert one(NUMASCOPE_BIN="/nonexistent/numascope") == \
        "numascope: cannot run /nonexistent/numascope (exit 127)"
    assert one(NUMASCOPE_BIN="numascope") == \
        "numascope: NUMASCOPE_BIN=numascope is not an absolute path"
    assert "give problem, ok or unknown" in one(NUMASCOPE_UNKNOWN="maybe")
    crash = tmp_path / "crash"
    crash.write_text("#!/bin/sh\necho 'Traceback (most recent call last):' >&2\nexit 3\n")
    crash.chmod(0o755)
    assert one(NUMASCOPE_BIN=str(crash)) == \
        "numascope: fleet check failed (exit 3): Traceback (most recent call last):"
    noexec = tmp_path / "noexec"
    noexec.write_text("#!/bin/sh\nexit 0\n")
    noexec.chmod(0o644)
    assert one(NUMASCOPE_BIN=str(noexec)) == f"numascope: cannot run {noexec} (exit 126)"
    hang = tmp_path / "hang"
    hang.write_text("#!/bin/sh\nexec sleep 60\n")
    hang.chmod(0o755)
    assert one(NUMASCOPE_BIN=str(hang), NUMASCOPE_TIMEOUT="1") == \
        "numascope: fleet check took over 1 s"
    broken = tmp_path / "broken.conf"
    broken.write_text("NUMASCOPE_BIN='unterminated\n")
    p = subprocess.run(["env", "-i", f"PATH={SLURMD_PATH}", f"NUMASCOPE_CONF={broken}",
                        str(NPD)], capture_output=True, text=True, timeout=60, check=False)
    assert p.returncode == 1 and \
        p.stdout == f"numascope: {broken} cannot be read as a shell file\n"


def test_npd_plugin_judges_a_real_run_with_the_manifests_settings(real, tmp_path):
    """The plugin with the settings file of node-problem-detector.yaml (paths moved here),
    the host from NUMASCOPE_HOSTNAME as the manifest sets it: the real run within baseline
    gold, out of baseline fast."""
    conf_text = _configmap("numascope-npd")["numascope.conf"]
    for baseline, rc in (("gold", 0), ("fast", 1)):
        conf = tmp_path / f"{baseline}.conf"
        conf.write_text(conf_text.replace("/opt/numascope/.venv/bin/numascope", str(NUMASCOPE))
                        .replace("/var/lib/numascope/node.db", str(real["node"]))
                        .replace("NUMASCOPE_BASELINE=gold", f"NUMASCOPE_BASELINE={baseline}"))
        p = subprocess.run(["env", "-i", f"PATH={SLURMD_PATH}", f"NUMASCOPE_CONF={conf}",
                            f"NUMASCOPE_HOSTNAME={NODE}", str(NPD)], capture_output=True,
                           text=True, timeout=120, check=False)
        assert p.returncode == rc, p.stdout
        assert f"(host {NODE})" in p.stdout or f"{NODE} bandwidth" in p.stdout, p.stdout


# -- the manifests ---------------------------------------------------------------------------

def _docs() -> list[dict]:
    yaml = pytest.importorskip("yaml")     # kubernetes-validate's (the test extra)
    return [d for f in sorted(DEPLOY.glob("*.yaml")) for d in yaml.safe_load_all(f.read_text())
            if d]


def _doc(kind: str, name: str) -> dict:
    (d,) = [d for d in _docs() if d["kind"] == kind and d["metadata"]["name"] == name]
    return d


def _configmap(name: str) -> dict[str, str]:
    return _doc("ConfigMap", name)["data"]


PODS = [("DaemonSet", "numascope"), ("Job", "numascope-preflight-replace-with-node-name")]


def test_manifests_validate_against_kubernetes_schemas():
    kv = pytest.importorskip("kubernetes_validate")
    docs = _docs()
    assert {d["kind"] for d in docs} >= {"DaemonSet", "Job", "ConfigMap", "Namespace",
                                        "ClusterRole", "ClusterRoleBinding", "ServiceAccount"}
    for version in ("1.29", "1.33", kv.latest_version()):
        for d in docs:       # strict: an unknown or misspelt field is an error
            kv.validate(d, version, strict=True)


@pytest.mark.parametrize(("kind", "name"), PODS)
def test_measuring_pods_have_the_node_settings_they_need(kind, name):
    spec = _doc(kind, name)["spec"]["template"]["spec"]
    (c,) = spec["containers"]
    assert spec["hostPID"] is True
    res = c["resources"]
    assert "cpu" not in res.get("limits", {}), "a CFS quota would be what is measured"
    assert {"cpu", "memory"} <= set(res["requests"]) and "memory" in res["limits"]
    assert "SYS_NICE" in c["securityContext"]["capabilities"]["add"]
    vols = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    assert vols[mounts["/sys"]["name"]]["hostPath"]["path"] == "/sys"
    assert mounts["/sys"]["readOnly"] is True
    env = {e["name"]: e for e in c["env"]}
    assert env["NUMASCOPE_HOSTNAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
    # the feature file lies in NFD's folder on the host, the store in a host folder
    nfd = Path(env["NUMASCOPE_NFD_FILE"]["value"])
    assert vols[mounts[str(nfd.parent)]["name"]]["hostPath"]["path"] == k8s.FEATURES_D
    store = Path(env["NUMASCOPE_STORE"]["value"])
    assert vols[mounts[str(store.parent)]["name"]]["hostPath"]["path"] == str(store.parent)
    base = Path(env["NUMASCOPE_BASELINE_DB"]["value"])
    assert vols[mounts[str(base.parent)]["name"]]["configMap"]["name"] == "numascope-baseline"
    assert env["NUMASCOPE_BIN"]["value"] == "/opt/numascope/.venv/bin/numascope"
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "/opt/numascope/.venv/bin/pip install" in dockerfile
    assert "COPY scripts/integrations /opt/numascope/integrations" in dockerfile


def test_npd_configuration_is_consistent():
    import json
    data = _configmap("numascope-npd")
    cfg = json.loads(data["numascope-plugin-monitor.json"])
    secs = {"s": 1, "m": 60, "h": 3600}

    def seconds(text: str) -> float:
        m = re.fullmatch(r"(\d+)([smh])", text)
        assert m, text
        return int(m.group(1)) * secs[m.group(2)]
    pc = cfg["pluginConfig"]
    assert cfg["plugin"] == "custom" and pc["skip_initial_status"] is True
    assert pc["max_output_length"] >= 200          # the plugin's line is at most 200
    types = {c["type"] for c in cfg["conditions"]}
    (rule,) = cfg["rules"]
    assert rule["type"] == "permanent" and rule["condition"] in types
    assert seconds(rule["timeout"]) <= seconds(pc["timeout"])
    assert rule["path"] == "/opt/numascope/integrations/" + NPD.name
    conf = dict(line.split("=", 1) for line in data["numascope.conf"].split())
    # the plugin's own timeout (and the 5 s after SIGTERM) ends before NPD's
    assert int(conf["NUMASCOPE_TIMEOUT"]) + 5 < seconds(rule["timeout"])
    assert conf["NUMASCOPE_UNKNOWN"] == "problem"
    spec = _doc("DaemonSet", "numascope-npd")["spec"]["template"]["spec"]
    (c,) = spec["containers"]
    (flag,) = [a for a in c["command"] if a.startswith("--config.custom-plugin-monitor=")]
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    assert flag.partition("=")[2] == mounts["config"]["mountPath"] + \
        "/numascope-plugin-monitor.json"
    env = {e["name"]: e for e in c["env"]}
    assert env["NUMASCOPE_CONF"]["value"] == mounts["config"]["mountPath"] + "/numascope.conf"
    assert env["NUMASCOPE_HOSTNAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
    assert mounts["store"]["mountPath"] == str(Path(conf["NUMASCOPE_STORE"]).parent)
    assert mounts["store"]["readOnly"] is True
    assert c["command"][0].startswith(spec["initContainers"][0]["volumeMounts"][0]["mountPath"])


def _pod(kind: str, name: str, tmp_path: Path, **override: str) -> subprocess.Popen:
    """The pod's script run here as its container runs it: its command, the ConfigMap's and
    its own environment, the paths moved under tmp_path; started, not waited for."""
    (c,) = _doc(kind, name)["spec"]["template"]["spec"]["containers"]
    env = {"PATH": SLURMD_PATH, "TMPDIR": str(tmp_path), **_configmap("numascope")}
    for e in c["env"]:
        env[e["name"]] = e.get("value", NODE)      # the one valueFrom: the node's name
    moved = {"NUMASCOPE_BIN": str(NUMASCOPE),
             "NUMASCOPE_STORE": str(tmp_path / "var/lib/numascope/node.db"),
             "NUMASCOPE_NFD_FILE": str(tmp_path / "features.d/numascope"),
             "NUMASCOPE_BASELINE_DB": str(tmp_path / "baseline/baseline.db")}
    for k in ("NUMASCOPE_STORE", "NUMASCOPE_NFD_FILE", "NUMASCOPE_BASELINE_DB"):
        Path(moved[k]).parent.mkdir(parents=True, exist_ok=True)
    env.update(moved, **override)
    return subprocess.Popen(["env", "-i", *(f"{k}={v}" for k, v in env.items()),
                             *c["command"], *c["args"]], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _placeholder(store: Path) -> bool:
    """Whether the node's run is under way: its placeholder is in the store."""
    if not store.exists():
        return False
    try:
        with Store.open(store) as st:
            return any(r.hostname == NODE for r in st.list_runs())
    except Exception:  # noqa: BLE001 — being created
        return False


def _done(p: subprocess.Popen) -> tuple[int, str]:
    out, err = p.communicate(timeout=300)
    return p.returncode, out + err


def test_the_daemonsets_script_labels_the_node_without_a_baseline(tmp_path):
    rc, said = _done(_pod("DaemonSet", "numascope", tmp_path, NUMASCOPE_ONCE="1",
                          NUMASCOPE_RUN_ARGS="--smoke --stage bandwidth"))
    assert rc == 0, said
    labels = named(nfd_read(tmp_path / "features.d/numascope"))
    assert labels["run-status"] == "complete" and "baseline-check" not in labels
    with Store.open(tmp_path / "var/lib/numascope/node.db") as st:
        assert [r.hostname for r in st.list_runs()] == [NODE]


def test_the_daemonsets_script_checks_against_the_configmaps_baseline(real, tmp_path):
    """The numascope-baseline ConfigMap's file (here: baseline slow, the real run's numbers
    divided by 4) is copied into the node's store; the run is judged against it, in the labels
    and by the NPD plugin on the same store."""
    (tmp_path / "baseline").mkdir()
    shutil.copy(real["slow"], tmp_path / "baseline/baseline.db")
    rc, said = _done(_pod("DaemonSet", "numascope", tmp_path, NUMASCOPE_ONCE="1",
                          NUMASCOPE_BASELINE="slow",
                          NUMASCOPE_RUN_ARGS="--quick --stage bandwidth"))
    assert rc == 0, said
    labels = named(nfd_read(tmp_path / "features.d/numascope"))
    assert labels["baseline"] == "slow" and labels["baseline-check"] == "pass"
    got, lines, _ = _npd(tmp_path, tmp_path / "var/lib/numascope/node.db", NUMASCOPE_HOST=NODE,
                         NUMASCOPE_BASELINE="slow")
    assert got == 0 and lines[0].startswith("numascope: baseline slow: within tolerance")


def test_the_daemonsets_script_passes_sigterm_on_and_the_run_is_kept(real, tmp_path):
    """The pod's end (SIGTERM to the container's shell) reaches numascope, which stores
    the run as interrupted; its labels say so and pass nothing (a run stopped before any
    result is a failed check, one stopped after some inconclusive)."""
    (tmp_path / "baseline").mkdir()
    shutil.copy(real["slow"], tmp_path / "baseline/baseline.db")
    p = _pod("DaemonSet", "numascope", tmp_path, NUMASCOPE_BASELINE="slow",
             NUMASCOPE_RUN_ARGS="--quick", NUMASCOPE_INTERVAL="1h")
    store = tmp_path / "var/lib/numascope/node.db"
    deadline = time.monotonic() + 60
    while not _placeholder(store) and time.monotonic() < deadline:
        time.sleep(0.3)
    time.sleep(2)                      # measuring by now
    p.send_signal(signal.SIGTERM)
    rc, said = _done(p)
    assert rc == 143, said
    with Store.open(store) as st:
        (run,) = [r for r in st.list_runs() if r.hostname == NODE]
        assert run.status == "interrupted"
        measured = bool(st.get_run(run.run_id).results)
    labels = named(nfd_read(tmp_path / "features.d/numascope"))
    assert labels["run-status"] == "interrupted"
    assert labels["baseline-check"] == ("inconclusive" if measured else "fail")


def test_the_preflight_jobs_script_fails_a_node_out_of_its_baseline(real, tmp_path):
    (tmp_path / "baseline").mkdir()
    shutil.copy(real["fast"], tmp_path / "baseline/baseline.db")
    name = PODS[1][1]
    rc, said = _done(_pod("Job", name, tmp_path, NUMASCOPE_BASELINE="fast",
                          NUMASCOPE_RUN_ARGS="--quick --stage bandwidth"))
    assert rc == 1, said
    assert f"baseline fast: out of baseline (host {NODE})" in said
    labels = named(nfd_read(tmp_path / "features.d/numascope"))
    assert labels["baseline-check"] == "fail"
    with Store.open(tmp_path / "var/lib/numascope/node.db") as st:
        assert [r.tags.get("source") for r in st.list_runs()] == ["preflight"]


def test_the_preflight_jobs_script_without_a_baseline_measures_only(tmp_path):
    name = PODS[1][1]
    rc, said = _done(_pod("Job", name, tmp_path, NUMASCOPE_BASELINE="",
                          NUMASCOPE_FLEET_ID="ref-1", NUMASCOPE_RUN_ARGS="--smoke --stage "
                                                                         "bandwidth"))
    assert rc == 0, said
    assert "baseline-check" not in named(nfd_read(tmp_path / "features.d/numascope"))
    with Store.open(tmp_path / "var/lib/numascope/node.db") as st:   # a baseline's fleet
        assert [r.tags.get("fleet") for r in st.list_runs()] == ["ref-1"]
    rc, said = _done(_pod("Job", name, tmp_path, NUMASCOPE_BASELINE="gold",
                          NUMASCOPE_RUN_ARGS="--smoke --stage bandwidth"))
    assert rc == 2 and "numascope: no baseline file" in said
