"""numascope on kernels that really have several NUMA nodes (QEMU guests, see guest.py).

Every placement assertion uses the kernel's answer as the placement witness logged it
(witness.c: move_pages on every page of each buffer just before numascope's C core unmaps
it, get_mempolicy for its policy, sched_getcpu for each thread), never numascope's own
page report. Topology assertions compare numascope's JSON with the layout QEMU was given.

One boot per guest shape runs all of that guest's commands (module-scoped fixtures)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from guest import (
    WEIGHTED_KERNEL,
    GuestRun,
    Shape,
    StepResult,
    boot,
    kernel_version,
    missing,
    missing_newer,
    newer_kernel,
)
from shapes import (
    COMPRESS_SIZE,
    CPULESS,
    ERRORS_CPULESS,
    ERRORS_ROUND_ROBIN,
    ERRORS_TWO_SOCKETS,
    LAT_BYTES,
    MATRIX_BW_BYTES,
    ROUND_ROBIN,
    RUN_FILES,
    SMOKE_STORE,
    SYS_RATIOS,
    SYSTEM_WEIGHTS,
    TIER_RATIOS,
    TWO_SOCKETS,
    WEIGHTED_BYTES,
    io_setup,
    steps_cpuless,
    steps_cpuless_weighted,
    steps_round_robin,
    steps_two_sockets,
    weights_setup,
)

_WHY = missing()
pytestmark = [pytest.mark.numa,
              pytest.mark.skipif(_WHY is not None, reason=f"multi-node guests: {_WHY}")]

MPOL_DEFAULT, MPOL_BIND, MPOL_INTERLEAVE, MPOL_WEIGHTED_INTERLEAVE = 0, 2, 3, 6
MIB = 1 << 20
GRANULE = 2 * MIB      # a huge page: the unit both the kernel and numascope interleave by


def _boot(tmp_path_factory, shape: Shape, steps, collect: tuple[str, ...] = (),
          **kw) -> GuestRun:
    run = boot(shape, steps, tmp_path_factory.mktemp(shape.name), collect=collect, **kw)
    print(f"\nguest {shape.name} ({run.kernel}): boot {run.boot_seconds:.0f} s, total {run.total_seconds:.0f} s; "
          + ", ".join(f"{s.name} {s.seconds:.1f} s" for s in run.steps.values()))
    return run


@pytest.fixture(scope="module")
def two_sockets(tmp_path_factory) -> GuestRun:
    return _boot(tmp_path_factory, TWO_SOCKETS, steps_two_sockets())


@pytest.fixture(scope="module")
def cpuless(tmp_path_factory) -> GuestRun:
    """The CPU-less shape, on a kernel >= 6.9 where there is one: then its system weights are
    set to SYSTEM_WEIGHTS first, and the kernel's weighted interleave measured too (one boot
    for both: a boot and its imports are a minute of TCG)."""
    newer = newer_kernel()
    steps, setup = steps_cpuless(), io_setup()
    if newer:
        steps, setup = steps + steps_cpuless_weighted(), f"{setup}\n{weights_setup()}"
    return _boot(tmp_path_factory, CPULESS, steps, (SMOKE_STORE,), kernel=newer, setup=setup)


@pytest.fixture(scope="module")
def cpuless_weighted(cpuless) -> GuestRun:
    """The CPU-less guest where its kernel has weighted interleave (>= 6.9)."""
    if kernel_version(cpuless.kernel) < WEIGHTED_KERNEL:
        pytest.skip(f"kernel weighted interleave: {missing_newer()}")
    return cpuless


@pytest.fixture(scope="module")
def round_robin(tmp_path_factory) -> GuestRun:
    return _boot(tmp_path_factory, ROUND_ROBIN, steps_round_robin(), RUN_FILES)


# -- what the witness saw ---------------------------------------------------------------------

def ok(step: StepResult) -> StepResult:
    assert step.rc == 0, f"{step.argv} exited {step.rc}: {step.stderr[-2000:]}"
    assert "Traceback" not in step.stderr
    assert not [e for e in step.events if e["ev"] == "error"], step.events
    return step


def placed(buf: dict) -> dict[int, int]:
    """Pages per node, as move_pages answered."""
    return {int(k): v for k, v in buf["nodes"].items()}


def present_bytes(buf: dict) -> int:
    return sum(buf["nodes"].values()) * buf["page"]


def team_cpus(buf: dict) -> list[int]:
    """The CPUs the threads of the last team ran on; each where it was asked to be."""
    for asked, ran in buf["team"]:
        assert asked == ran, f"thread asked for CPU {asked} ran on {ran}"
    return [ran for _, ran in buf["team"]]


def team_nodes(shape: Shape, buf: dict) -> set[int]:
    return {shape.cpu_nodes[c] for c in team_cpus(buf)}


def assert_policy(buf: dict, mode: int, nodes: list[int]) -> None:
    assert (buf["policy"], sorted(buf["policy_nodes"])) == (mode, sorted(nodes)), buf


def assert_all_on(buf: dict, nodes: set[int], at_least: int) -> None:
    where = placed(buf)
    assert set(where) <= nodes, f"pages on {where}, expected only on nodes {sorted(nodes)}"
    assert buf["other"] == 0
    assert present_bytes(buf) >= at_least, f"only {present_bytes(buf)} B present: {buf}"


def assert_first_touch(shape: Shape, buf: dict, size: int) -> None:
    """Each thread's share of the pages sits on that thread's node (first touch)."""
    assert_policy(buf, MPOL_DEFAULT, [])
    cpus = team_cpus(buf)
    assert_all_on(buf, {shape.cpu_nodes[c] for c in cpus}, size)
    total = sum(placed(buf).values())
    share = Counter(shape.cpu_nodes[c] for c in cpus)
    slack = max(total // 16, 2 * MIB // buf["page"])   # chunk edges, one huge page each side
    for node, n in placed(buf).items():
        want = total * share[node] / len(cpus)
        assert abs(n - want) <= slack, f"node {node}: {n} pages, expected ~{want:.0f} ({buf})"


def assert_one_line_error(step: StepResult, says: str) -> None:
    lines = step.stderr.strip().splitlines()
    assert step.rc == 2, f"{step.argv}: exit {step.rc}, stderr {step.stderr!r}"
    assert len(lines) == 1 and lines[0].startswith("numascope: error: "), step.stderr
    assert says in lines[0], lines[0]
    assert not step.buffers(), "bad input must be refused before any memory is placed"


# -- topology -----------------------------------------------------------------------------------

def topo_json(step: StepResult) -> dict:
    """The topology document of `topo --json`: the envelope's one result (a bare document
    before the envelope)."""
    doc = ok(step).json()
    if "schema_version" in doc and "results" in doc and "nodes" not in doc:
        [doc] = doc["results"]
    return doc


def assert_topology(shape: Shape, topo: dict) -> None:
    nodes = {n["id"]: n for n in topo["nodes"]}
    assert sorted(nodes) == list(range(len(shape.node_mib)))
    for nid, n in nodes.items():
        assert n["cpus"] == shape.node_cpus(nid), f"node {nid}"
        assert n["cpuless"] == (not shape.node_cpus(nid))
        assert 0.7 * shape.node_mib[nid] * MIB <= n["memory_bytes"] <= shape.node_mib[nid] * MIB
        assert {int(k): v for k, v in n["distances"].items()} == \
            {b: shape.distance(nid, b) for b in nodes}, f"node {nid} distances"
    cpus = {c["id"]: c for c in topo["cpus"]}
    assert sorted(cpus) == list(range(shape.cpus))
    for cid, c in cpus.items():
        assert (c["node"], c["package"]) == (shape.cpu_nodes[cid], shape.cpu_socket(cid))
    assert len(topo["packages"]) == shape.sockets
    assert topo["facts"]["cpuless_nodes"]["value"] == \
        [n for n in nodes if not shape.node_cpus(n)]


def test_topology_two_sockets(two_sockets):
    topo = topo_json(two_sockets.step("topo"))
    assert_topology(TWO_SOCKETS, topo)
    assert {p["id"]: p["nodes"] for p in topo["packages"]} == {0: [0, 1], 1: [2, 3]}
    assert topo["facts"]["nodes_per_socket"]["value"] == 2


def test_topology_cpuless(cpuless):
    topo = topo_json(cpuless.step("topo"))
    assert_topology(CPULESS, topo)


def test_topology_round_robin(round_robin):
    topo = topo_json(round_robin.step("topo"))
    assert_topology(ROUND_ROBIN, topo)
    assert topo["facts"]["core_numbering"]["value"] == "round-robin across nodes"


# -- bandwidth: bind, interleave, first touch, per domain ---------------------------------------

def test_membind_puts_every_page_on_the_node(two_sockets):
    step = ok(two_sockets.step("bw-membind"))
    bufs = step.buffers()
    assert len(bufs) == 3                       # triad: a, b, c
    for b in bufs:
        assert_policy(b, MPOL_BIND, [2])
        assert_all_on(b, {2}, 16 * MIB)
        assert team_cpus(b) == [0, 1, 2, 3]


def test_membind_to_cpuless_node(cpuless):
    step = ok(cpuless.step("bw-membind-cpuless"))
    [b] = step.buffers()
    assert_policy(b, MPOL_BIND, [1])
    assert_all_on(b, {1}, 16 * MIB)
    assert team_nodes(CPULESS, b) == {0}       # the CPUs are elsewhere: all remote


@pytest.mark.parametrize("guest,nodes,arrays", [("two_sockets", [1, 2, 3], 2),
                                                ("cpuless", [0, 1], 3)])
def test_interleave_spreads_pages_evenly(request, guest, nodes, arrays):
    step = ok(request.getfixturevalue(guest).step("bw-interleave"))
    bufs = step.buffers()
    assert len(bufs) == arrays
    for b in bufs:
        assert_policy(b, MPOL_INTERLEAVE, nodes)
        assert_all_on(b, set(nodes), 16 * MIB)
        counts = placed(b)
        even = sum(counts.values()) / len(nodes)
        assert all(0.5 * even <= counts.get(n, 0) <= 1.5 * even for n in nodes), counts


def test_tier_sweep_places_each_ratio(cpuless):
    """bw --tier-sweep: each ratio's array has that share of its pages on the DRAM node and
    the rest on the CPU-less tier, as move_pages answers (16 MiB of 2 MiB granules: within
    one granule of exact)."""
    bufs = ok(cpuless.step("bw-tier-sweep")).buffers()
    assert len(bufs) == len(TIER_RATIOS)        # read: one array per ratio
    for b, ratio in zip(bufs, TIER_RATIOS):
        a, t = (int(x) for x in ratio.split(":"))
        assert_all_on(b, {0, 1}, 16 * MIB)
        counts = placed(b)
        share = counts.get(0, 0) / sum(counts.values())
        assert abs(share - a / (a + t)) <= 0.125 + 1e-9, (ratio, counts)
        assert team_nodes(CPULESS, b) == {0}


def assert_share(buf: dict, node: int, share: float) -> None:
    """`node` holds `share` of the buffer's pages, within one granule (move_pages)."""
    counts = placed(buf)
    total = sum(counts.values())
    slack = GRANULE // buf["page"]
    assert abs(counts.get(node, 0) - share * total) <= slack, \
        f"N{node}: {counts.get(node, 0)} of {total} pages, expected {share:.3f} " \
        f"+- {slack} ({counts})"


# -- the kernel's weighted interleave (a guest kernel >= 6.9) ---------------------------------

def read_weights(path: Path) -> dict[int, int]:
    """"node0 3" lines -> {0: 3}."""
    return {int(name[len("node"):]): int(w)
            for name, w in (line.split() for line in path.read_text().splitlines())}


def test_weighted_guest_system_weights(cpuless_weighted):
    """The guest kernel has mempolicy/weighted_interleave: its default weights (1 per node)
    were read, the non-default ones written; numascope topo reports what was written."""
    run = cpuless_weighted
    assert kernel_version(run.kernel) >= WEIGHTED_KERNEL, run.kernel
    before = read_weights(run.workdir / "weights-before")
    after = read_weights(run.workdir / "weights-after")
    assert before == {0: 1, 1: 1}, f"the kernel's default weights: {before}"
    assert after == SYSTEM_WEIGHTS, (run.workdir / "setup.log").read_text()
    wi = topo_json(run.step("topo"))["memory_tiers"]["weighted_interleave"]
    assert wi["available"] is True
    assert {int(k): v for k, v in wi["weights"].items()} == SYSTEM_WEIGHTS


def test_kernel_weighted_interleave_places_by_system_weights(cpuless_weighted):
    """bw --weighted-interleave 0,1 (no ratio: the kernel's MPOL_WEIGHTED_INTERLEAVE with the
    system weights 3:1): get_mempolicy says mode 6 over nodes 0,1, and move_pages finds 3/4
    of every array's pages on node 0, within one 2 MiB granule."""
    step = ok(cpuless_weighted.step("bw-weighted-sys"))
    results = step.json()["results"]
    [mem] = [r["placement"]["memory"] for r in results]     # what numascope recorded
    assert (mem["policy"], mem["nodes"]) == ("weighted-interleave", [0, 1]), mem
    assert mem.get("system_weights") == [SYSTEM_WEIGHTS[0], SYSTEM_WEIGHTS[1]], mem
    bufs = step.buffers()
    assert len(bufs) == 3                       # triad: a, b, c
    w0 = SYSTEM_WEIGHTS[0] / sum(SYSTEM_WEIGHTS.values())
    for b in bufs:
        assert_policy(b, MPOL_WEIGHTED_INTERLEAVE, [0, 1])
        assert_all_on(b, {0, 1}, WEIGHTED_BYTES)
        assert_share(b, 0, w0)
        assert team_nodes(CPULESS, b) == {0}


def test_tier_sweep_with_the_kernel_weights(cpuless_weighted):
    """bw --tier-sweep --ratios 1:0,1:1,sys: "sys" is the kernel's policy (mode 6) and lands
    3:1 by the system weights; 1:0 is bound to the DRAM node; 1:1 (placed by numascope) is
    half and half."""
    step = ok(cpuless_weighted.step("bw-tier-sweep-sys"))
    assert [r["ratio"] for r in step.json()["tier_sweep"]] == list(SYS_RATIOS)
    bufs = step.buffers()
    assert len(bufs) == len(SYS_RATIOS)         # read: one array per ratio
    for b, ratio in zip(bufs, SYS_RATIOS):
        assert_all_on(b, {0, 1}, 16 * MIB)
        assert team_nodes(CPULESS, b) == {0}
        if ratio == "sys":
            assert_policy(b, MPOL_WEIGHTED_INTERLEAVE, [0, 1])
            assert_share(b, 0, SYSTEM_WEIGHTS[0] / sum(SYSTEM_WEIGHTS.values()))
        elif ratio == "1:0":
            assert_policy(b, MPOL_BIND, [0])
            assert set(placed(b)) == {0}
        else:
            assert_share(b, 0, 0.5)


def test_weighted_interleave_absent_on_older_kernel(two_sockets):
    """On the distribution's kernel (< 6.9) the kernel's weighted interleave is refused before
    any memory is placed: exit 4 (cannot run here), one line."""
    if kernel_version(two_sockets.kernel) >= WEIGHTED_KERNEL:
        pytest.skip(f"the default guest kernel {two_sockets.kernel} has weighted interleave")
    step = two_sockets.step("bw-weighted-sys-absent")
    lines = step.stderr.strip().splitlines()
    assert step.rc == 4, f"exit {step.rc}: {step.stderr!r}"
    assert len(lines) == 1 and "weighted interleave" in lines[0], step.stderr
    assert step.json()["results"] == []
    assert not step.buffers()


def test_c2c_line_homed_on_every_node(two_sockets):
    """c2c --home all: the shared line of the pair (CPU 0 on node 0, CPU 3 on node 3) is
    bound to each node in turn, and the kernel has its page there; the threads ran on the
    pair's CPUs."""
    step = ok(two_sockets.step("c2c-home-all"))
    homes = []
    for b in step.buffers():
        assert_policy(b, MPOL_BIND, list(placed(b)))
        [node] = placed(b)
        homes.append(node)
        assert sorted(team_cpus(b)) == [0, 3]
    assert sorted(set(homes)) == [0, 1, 2, 3], homes
    assert sorted(step.json()["by_home"]) == ["0", "1", "2", "3"]


def test_first_touch_all_cpus(two_sockets):
    [b] = ok(two_sockets.step("bw-first-touch")).buffers()
    assert sorted(team_cpus(b)) == [0, 1, 2, 3]
    assert_first_touch(TWO_SOCKETS, b, 16 * MIB)
    assert set(placed(b)) == {0, 1, 2, 3}


def test_first_touch_one_package(two_sockets):
    [b] = ok(two_sockets.step("bw-first-touch-S1")).buffers()
    assert sorted(team_cpus(b)) == [2, 3]
    assert_first_touch(TWO_SOCKETS, b, 16 * MIB)


def test_first_touch_round_robin_node(round_robin):
    [b] = ok(round_robin.step("bw-first-touch-N2")).buffers()
    assert sorted(team_cpus(b)) == [2, 6]      # node 2's CPUs under round-robin numbering
    assert_first_touch(ROUND_ROBIN, b, 16 * MIB)
    assert set(placed(b)) == {2}


@pytest.mark.parametrize("guest,shape", [("two_sockets", TWO_SOCKETS), ("cpuless", CPULESS)])
def test_per_domain_runs_each_node_local(request, guest, shape):
    step = ok(request.getfixturevalue(guest).step("bw-per-domain"))
    domains = {d for r in step.json()["results"] for d in r["params"]["domains"]}
    cpu_nodes = [n for n in range(len(shape.node_mib)) if shape.node_cpus(n)]
    assert {d for d in domains if d.startswith("N")} == {f"N{n}" for n in cpu_nodes}
    bufs = step.buffers()
    for b in bufs:                              # every domain reads memory local to it
        assert_all_on(b, team_nodes(shape, b), 16 * MIB)
    for n in cpu_nodes:                         # each node alone, its memory bound to it
        bound = [b for b in bufs if b["policy"] == MPOL_BIND and b["policy_nodes"] == [n]]
        assert len(bound) == 1, f"node {n}: {len(bound)} bound buffers"
        assert sorted(team_cpus(bound[0])) == shape.node_cpus(n)
        assert_all_on(bound[0], {n}, 16 * MIB)
    assert not [b for b in bufs if set(b["policy_nodes"]) - set(cpu_nodes)], \
        "a CPU-less node is no domain of its own"


# -- matrix, latency, compression -------------------------------------------------------------

def assert_matrix(shape: Shape, step: StepResult) -> None:
    cpu_nodes = [n for n in range(len(shape.node_mib)) if shape.node_cpus(n)]
    pairs = sorted((i, j) for i in cpu_nodes for j in range(len(shape.node_mib)))
    results = step.json()["results"]
    assert sorted((r["params"]["src"], r["params"]["dst"]) for r in results) == pairs
    for r in results:
        assert {"latency", "bandwidth"} <= set(r["metrics"]), r["case"]
    bufs = step.buffers()
    for kind, size, cpus in (("latency", LAT_BYTES, lambda n: shape.node_cpus(n)[:1]),
                             ("bandwidth", MATRIX_BW_BYTES, shape.node_cpus)):
        seen = []
        for b in (b for b in bufs if b["bytes"] == size):
            [src] = team_nodes(shape, b)
            assert sorted(team_cpus(b)) == cpus(src), f"{kind}: {b}"
            assert b["policy"] == MPOL_BIND and len(b["policy_nodes"]) == 1, b
            dst = b["policy_nodes"][0]
            assert_all_on(b, {dst}, size)
            seen.append((src, dst))
        assert sorted(seen) == pairs, f"{kind} buffers: each pair exactly once"
    assert len(bufs) == 2 * len(pairs)


def test_matrix_two_sockets(two_sockets):
    step = ok(two_sockets.step("matrix"))
    assert_matrix(TWO_SOCKETS, step)
    dist = {(r["params"]["src"], r["params"]["dst"]): r["params"]["distance"]
            for r in step.json()["results"]}
    assert dist[(0, 1)] == 12 and dist[(0, 2)] == 32 and dist[(3, 3)] == 10


def test_matrix_cpuless_node_is_a_target_only(cpuless):
    assert_matrix(CPULESS, ok(cpuless.step("matrix")))


def test_matrix_round_robin(round_robin):
    assert_matrix(ROUND_ROBIN, ok(round_robin.step("matrix")))


def test_latency_bound_to_a_remote_node(two_sockets):
    [b] = ok(two_sockets.step("lat-bound")).buffers()
    assert team_cpus(b) == [3]
    assert_policy(b, MPOL_BIND, [0])
    assert_all_on(b, {0}, LAT_BYTES)


@pytest.mark.parametrize("where,node", [("local", 0), ("remote", 2)])
def test_chains_local_and_remote(two_sockets, where, node):
    step = ok(two_sockets.step(f"lat-chains-{where}"))
    doc = step.json()
    assert [r["params"]["chains"] for r in doc["results"]] == [1, 4]
    assert all(r["params"]["node"] == node for r in doc["results"])
    (series,) = doc["mlp"]
    assert series["knee"]["base_chains"] == 1 and "Little's law" in series["knee"]["text"]
    bufs = step.buffers()
    assert len(bufs) == 2                       # one buffer per count, its chains inside
    for b in bufs:
        assert team_cpus(b) == [0]
        assert_policy(b, MPOL_BIND, [node])
        assert_all_on(b, {node}, LAT_BYTES)


def test_latency_on_cpuless_node(cpuless):
    [b] = ok(cpuless.step("lat-cpuless")).buffers()
    assert team_cpus(b) == [0]
    assert_policy(b, MPOL_BIND, [1])
    assert_all_on(b, {1}, LAT_BYTES)


def test_compress_where_node(two_sockets):
    step = ok(two_sockets.step("compress-N1"))
    bufs = step.buffers()
    assert bufs, "compress placed no memory through the C core"
    for b in bufs:
        assert team_nodes(TWO_SOCKETS, b) == {1}, b
        assert set(placed(b)) <= {1}, f"pages off node 1: {b}"
    assert max(present_bytes(b) for b in bufs) >= COMPRESS_SIZE   # the plain copy


def test_compress_data_bound_to_the_cpuless_tier(cpuless):
    """compress --membind 1: the plain copy, the compressed store and the scratch buffers
    on the CPU-less node, every page, while the thread runs on node 0."""
    step = ok(cpuless.step("compress-on-tier"))
    bufs = step.buffers()
    assert bufs, "compress placed no memory through the C core"
    for b in bufs:
        assert_policy(b, MPOL_BIND, [1])
        assert set(placed(b)) <= {1} and b["other"] == 0, b
        assert team_nodes(CPULESS, b) == {0}, b
    assert max(present_bytes(b) for b in bufs) >= COMPRESS_SIZE   # the plain copy
    [r] = step.json()["results"]
    assert r["placement"]["memory"]["nodes"] == [1]
    assert set(r["placement"]["plain_pages"]) == {"1"}


# -- the whole suite ------------------------------------------------------------------------------

def row(shape: Shape) -> list[str]:
    """The quick and smoke profiles' matrix: node 0's row, to every node."""
    return [f"N0->N{j}" for j in range(len(shape.node_mib))]


def stored(workdir: Path, run_id: str, family: str) -> tuple[str, str, list]:
    """(run status, profile, [(case, result JSON)] of `family`) from the guest's store."""
    db = workdir / "runs.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        [(status, profile)] = con.execute("select status, profile from runs where run_id = ?",
                                          (run_id,))
        rows = con.execute("select \"case\", result from results where run_id = ? and "
                           "family = ?", (run_id, family)).fetchall()
    return status, profile, [(c, json.loads(r)) for c, r in rows]


def assert_matrix_row(shape: Shape, bound: list[dict]) -> None:
    """Node 0's row: each node's memory bound, every page on it, node 0's CPUs running."""
    assert bound, "the matrix stage bound no memory"
    for b in bound:
        assert len(b["policy_nodes"]) == 1, b
        assert set(placed(b)) == set(b["policy_nodes"]) and b["other"] == 0, b
        assert team_nodes(shape, b) == {0}, b
    # one latency and one bandwidth buffer per target node
    assert Counter(b["policy_nodes"][0] for b in bound) == {n: 2 for n in range(len(
        shape.node_mib))}


def test_run_quick_stores_the_matrix(round_robin, tmp_path):
    step = ok(round_robin.step("run-quick"))
    rec = step.json()
    stages = {s["name"]: s for s in rec["stages"]}
    for name in ("c2c", "matrix"):
        assert (stages[name]["status"], stages[name]["results"] > 0) == ("done", True), \
            stages[name]
    for b in step.buffers():                    # first touch (the latency stage): local
        if b["policy"] == MPOL_DEFAULT:
            assert set(placed(b)) <= team_nodes(ROUND_ROBIN, b), b
    assert_matrix_row(ROUND_ROBIN, [b for b in step.buffers() if b["policy"] == MPOL_BIND])
    status, profile, results = stored(round_robin.workdir, rec["run_id"], "matrix")
    assert (status, profile) == ("complete", "quick")
    assert [c for c, _ in results] == row(ROUND_ROBIN)
    for _, r in results:
        assert {"latency", "bandwidth"} <= set(r["metrics"])
    # the report of the guest's run, from its store (written here: matplotlib under TCG
    # takes a minute), shows the 4-node matrix
    report = tmp_path / "report.html"
    p = subprocess.run([sys.executable, "-m", "numascope", "report", rec["run_id"], "--store",
                        str(round_robin.workdir / "runs.db"), "-o", str(report)],
                       capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 0, p.stderr
    html = report.read_text()
    assert all(f"N0-&gt;N{j}" in html for j in range(len(ROUND_ROBIN.node_mib))), html[-2000:]


def test_run_smoke_runs_every_stage(cpuless):
    """Every stage of `numascope run`, fio and MPI included, on a kernel with a CPU-less
    memory node: the stages done, the matrix row (CPU node to DRAM and to the tier) bound
    where asked, the MPI ranks where placed, the run in the store."""
    step = ok(cpuless.step("run-smoke"))
    rec = step.json()
    assert rec["profile"] == "smoke" and rec["status"] == "complete"
    stages = {s["name"]: s for s in rec["stages"]}
    assert set(stages) == {"topology", "compute", "bandwidth", "latency", "matrix", "c2c",
                           "compress", "storage", "interconnect"}
    for name, st in stages.items():
        assert st["status"] == "done" and (st["results"] > 0 or name == "topology"), st
    bound = [b for b in step.buffers() if b["policy"] == MPOL_BIND]
    for b in bound:           # the bandwidth per domain and the matrix row: where bound
        assert len(b["policy_nodes"]) == 1, b
        assert set(placed(b)) == set(b["policy_nodes"]) and b["other"] == 0, b
    assert {b["policy_nodes"][0] for b in bound} == {0, 1}     # the tier: the matrix's
    status, profile, results = stored(cpuless.workdir, rec["run_id"], "matrix")
    assert (status, profile, [c for c, _ in results]) == ("complete", "smoke", row(CPULESS))
    [net] = [r for r in rec["results"] if r["family"] == "interconnect"]
    # each rank on its CPU, its buffers on node 0 as the rank's own move_pages saw them
    seen = [(d["cpu"], d["send_node"], d["recv_node"]) for d in net["params"]["ranks_seen"]]
    assert sorted(set(seen)) == [(0, 0, 0), (1, 0, 0)], net["params"]["ranks_seen"]


# -- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name,says", [(n, s) for n, _, s in ERRORS_TWO_SOCKETS])
def test_bad_input_two_sockets(two_sockets, name, says):
    assert_one_line_error(two_sockets.step(name), says)


@pytest.mark.parametrize("name,says", [(n, s) for n, _, s in ERRORS_CPULESS])
def test_bad_input_cpuless(cpuless, name, says):
    assert_one_line_error(cpuless.step(name), says)


@pytest.mark.parametrize("name,says", [(n, s) for n, _, s in ERRORS_ROUND_ROBIN])
def test_bad_input_round_robin(round_robin, name, says):
    assert_one_line_error(round_robin.step(name), says)


def test_guest_results_are_json(two_sockets):
    """The driver keeps every step's output: a broken step shows up here, readable."""
    for s in two_sockets.steps.values():
        if s.rc == 0 and "--json" in s.argv:
            json.loads(s.stdout)
