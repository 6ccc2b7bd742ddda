"""The bandwidth kernels on this machine: every kernel, ISA and store kind validates on 1 and
2 threads; a corrupted array is caught; placement and page locations are reported."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess

import pytest

from numascope import _core
from numascope.errors import MeasurementError, UserError
from numascope.families.bandwidth import bench as bw
from numascope.families.bandwidth.family import Bandwidth
from numascope.topology import read_topology

SMALL = 4 << 20          # 4 MiB per array: fast; the cache warning is expected
ISAS = _core.isa()


@pytest.fixture(scope="module")
def topo():
    return read_topology("/")


def _cpus(topo, n):
    usable = topo.usable_cpus()
    if len(usable) < n:
        pytest.skip(f"needs {n} usable CPUs")
    return usable[:n]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("kernel", bw.KERNELS)
def test_kernel_validates(topo, kernel, threads):
    cpus = _cpus(topo, threads)
    r = bw.measure(topo, kernel=kernel, cpus=cpus, size_bytes=SMALL, reps=2)
    assert r.validated and r.family == "bandwidth"
    assert r.placement["cpus"] == cpus
    assert r.params["threads"] == threads
    bwm = r.metrics["bandwidth"]
    assert len(bwm.values) == 2 and all(v > 0 for v in bwm.values)
    # the two byte conventions differ exactly by the write-allocate factor; no DRAM figure
    # where this CPU's write-allocate is unknown
    if r.params["write_allocate"] == "unknown":
        assert "dram_bandwidth" not in r.metrics and r.params["dram_bytes_per_element"] is None
    else:
        ratio = r.metrics["dram_bandwidth"].best / bwm.best
        assert ratio == pytest.approx(r.params["dram_bytes_per_element"] /
                                      bw.STREAM_BYTES[kernel])
    # nt auto: the store kind where the arrays live (both where cache sizes are unknown)
    fits, _ = bw.store_choice(topo, bw.BandwidthParams(kernel=kernel, cpus=tuple(cpus),
                                                       size_bytes=SMALL))
    expect = {f"bandwidth[{bw.variant_name(i, nt)}]"
              for i, nt in bw.variants(kernel, "auto", "auto", fits)}
    if len(expect) > 1:
        assert expect == {k for k in r.metrics if k.startswith("bandwidth[")}
        nt = "-nt" if r.params["stores"] == "streaming" else ""
        chosen = f"bandwidth[{r.params['isa']}{nt}]"
        assert r.metrics[chosen].values == bwm.values
    if bw.STORES[kernel]:
        assert r.params["stores"] in ("ordinary", "streaming")
    else:
        assert r.params["stores"] == "n/a"


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("nt", ["on", "off"])
@pytest.mark.parametrize("kernel", ["fill", "copy", "scale", "add", "triad"])
def test_every_isa_and_store_kind_validates(topo, kernel, isa, nt):
    # an odd element count exercises the scalar tails of the vector loops
    r = bw.measure(topo, kernel=kernel, cpus=_cpus(topo, 1), size_bytes=SMALL + 8 * 13,
                   reps=1, isa=isa, nt=nt, warmup=0)
    assert r.params["isa"] == isa
    assert r.params["stores"] == ("streaming" if nt == "on" else "ordinary")


@pytest.mark.parametrize("isa", ISAS)
def test_read_every_isa(topo, isa):
    r = bw.measure(topo, kernel="read", cpus=_cpus(topo, 1), size_bytes=SMALL + 8 * 5,
                   reps=1, isa=isa)
    assert r.validated


@pytest.mark.parametrize("kernel", bw.KERNELS)
@pytest.mark.parametrize("index", [0, 123457])
def test_corruption_is_caught(topo, kernel, index):
    with pytest.raises(MeasurementError, match="failed validation"):
        bw.measure(topo, kernel=kernel, cpus=_cpus(topo, 1), size_bytes=SMALL, reps=2,
                   corrupt_index=index)


def test_corruption_reports_the_element(topo):
    with pytest.raises(MeasurementError, match="first at element 4242"):
        bw.measure(topo, kernel="triad", cpus=_cpus(topo, 1), size_bytes=SMALL, reps=1,
                   corrupt_index=4242)


def test_pages_reported_and_local(topo):
    cpus = _cpus(topo, 2)
    r = bw.measure(topo, kernel="copy", cpus=cpus, size_bytes=SMALL, reps=1)
    pages = r.placement["pages_per_node"]
    if r.placement["sampled_pages"] < 0:
        pytest.skip("move_pages unavailable here")
    assert sum(pages.values()) > 0
    assert len(r.placement["pages_by_thread"]) == 2
    for cpu, tp in zip(cpus, r.placement["pages_by_thread"]):
        assert set(tp) == {topo.cpu(cpu).node}
    assert r.placement["ok"]


def test_bind_and_interleave(topo):
    node = topo.cpu(_cpus(topo, 1)[0]).node
    for policy in ("bind", "interleave"):
        r = bw.measure(topo, kernel="triad", cpus=_cpus(topo, 1), size_bytes=SMALL, reps=1,
                       memory={"policy": policy, "nodes": [node]})
        assert r.placement["memory"] == {"policy": policy, "nodes": [node], "pages": "thp"}
        if r.placement["sampled_pages"] >= 0:
            assert set(r.placement["pages_per_node"]) == {node}


def test_bad_input(topo):
    with pytest.raises(UserError):
        bw.measure(topo, kernel="nope", size_bytes=SMALL)
    with pytest.raises(UserError):
        bw.measure(topo, cpus=[], size_bytes=SMALL)
    with pytest.raises(UserError):
        bw.measure(topo, cpus=[max(c.id for c in topo.cpus) + 1], size_bytes=SMALL)
    with pytest.raises(UserError):
        bw.measure(topo, memory={"policy": "bind", "nodes": [max(topo.node_ids()) + 1]},
                   size_bytes=SMALL)
    with pytest.raises(UserError, match="free"):
        bw.measure(topo, size_bytes=1 << 50)
    with pytest.raises(UserError):
        bw.measure(topo, size_bytes=SMALL, reps=0)
    with pytest.raises(UserError):
        bw.measure(topo, size_bytes=SMALL, nt="maybe")


def test_cpu_outside_affinity_mask_is_user_error():
    # the C team refuses CPUs outside the mask; measure() turns that into a UserError
    allowed = sorted(os.sched_getaffinity(0))
    with pytest.raises(ValueError, match="affinity"):
        _core.bw_run("triad", [max(allowed) + 1000], 4096, 1, [("scalar", False)], warmup=1)


def test_small_arrays_are_flagged(topo):
    r = bw.measure(topo, kernel="read", cpus=_cpus(topo, 1), size_bytes=SMALL, reps=1)
    if topo.llc_bytes(r.placement["cpus"]):
        assert any("smaller than 4" in n for n in r.notes)


def test_benchmark_protocol(topo):
    bench = Bandwidth()
    cases = bench.cases(topo, kernels=["scale"], threads=1, size_bytes=SMALL, reps=1)
    res = bench.measure(topo, cases[0])
    assert res.case == cases[0].label and res.params["sweep"] == "single"
    again = type(res).from_dict(res.to_dict())
    assert again.metrics["bandwidth"].values == res.metrics["bandwidth"].values


def test_plot_figures(topo, tmp_path):
    from numascope.families.bandwidth.figures import figures
    cases = bw.build_cases(topo, kernels=["triad"], scaling=True, per_domain=True,
                           size_bytes=SMALL, reps=1)
    bench = Bandwidth()
    results = [bench.measure(topo, c) for c in cases]
    figs = figures(results)
    titles = [t for t, _ in figs]
    assert "Bandwidth scaling (triad)" in titles and "Bandwidth per domain" in titles
    figs[0][1].savefig(tmp_path / "s.svg")
    assert (tmp_path / "s.svg").stat().st_size > 1000


@pytest.mark.skipif(not shutil.which("objdump"), reason="objdump not installed")
def test_no_kernel_became_memcpy_or_memset():
    so = _core.__file__
    asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", so], capture_output=True,
                         check=True, text=True).stdout
    found = 0
    current = None
    for line in asm.splitlines():
        if line.endswith(">:"):
            name = line.split("<", 1)[1][:-2]
            current = name if name.split("_")[0] in bw.KERNELS and \
                name.split("_")[-1] in ("scalar", "avx2", "avx512") else None
            found += current is not None
        elif current and "call" in line:
            pytest.fail(f"kernel {current} calls out: {line.strip()}")
    if not found:
        pytest.skip("kernel symbols stripped from the extension")
    assert found == 18


def test_identical_case_reuses_measurement(topo):
    bench = Bandwidth()
    cpus = _cpus(topo, 1)
    common = bw.BandwidthParams(kernel="copy", cpus=tuple(cpus), size_bytes=SMALL, reps=1,
                                nt="off").checked(topo)
    from dataclasses import replace

    from numascope.benchmark import Case
    a = bench.measure(topo, Case("a", replace(common, sweep="scaling", policies=("compact",))))
    b = bench.measure(topo, Case("b", replace(common, sweep="per-domain", domains=("S0",))))
    assert b.case == "b" and b.params["sweep"] == "per-domain" and b.params["domains"] == ["S0"]
    assert "policies" not in b.params and a.params["policies"] == ["compact"]
    assert b.metrics["bandwidth"].values == a.metrics["bandwidth"].values
    assert any("same measurement as case 'a'" in n for n in b.notes)
    assert a.params["sweep"] == "scaling" and not any("same" in n for n in a.notes)


def test_numa_balancing_is_noted(topo, monkeypatch):
    monkeypatch.setattr(bw.sysstate, "numa_balancing", lambda root="/": True)
    r = bw.measure(topo, kernel="fill", cpus=_cpus(topo, 1), size_bytes=SMALL, reps=1)
    assert bw.NUMA_BALANCING_NOTE in r.notes


@pytest.mark.parametrize("variant", [("scalar", False), (ISAS[-1], True)])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("kernel", bw.KERNELS)
def test_a_repetition_that_did_no_work_is_caught(kernel, threads, variant):
    # every repetition's output depends on the repetition (a new scalar, or new input values
    # at the spot-checked elements), so a skipped one leaves stale values behind
    cpus = sorted(os.sched_getaffinity(0))[:threads]
    ok = _core.bw_run(kernel, cpus, (1 << 16) + 5, 3, [variant], warmup=1)
    assert ok["validated"] and ok["spot_bad"] == 0 and ok["bad_elements"] == 0
    for skip in (0, 2):
        r = _core.bw_run(kernel, cpus, (1 << 16) + 5, 3, [variant], warmup=1, skip_rep=skip)
        assert not r["validated"]
        assert (r["bad_elements"] if kernel == "read" else r["spot_bad"]) > 0


def test_read_sums_change_with_the_repetition():
    cpu = [min(os.sched_getaffinity(0))]
    r = _core.bw_run("read", cpu, 1 << 16, 4, [("scalar", False)], warmup=1)
    sums = r["read_sums"]
    assert r["validated"] and all(a != b for a, b in itertools.pairwise(sums))


@pytest.mark.parametrize("isa", ISAS)
def test_read_kernel_sums_any_alignment(isa):
    """The read kernel is also compression's plain sum, over blocks that start anywhere:
    every offset and tail length gives the sum."""
    import array
    import math
    import random

    rng = random.Random(7)
    data = array.array("d", (rng.uniform(-1, 1) for _ in range(4096)))
    raw = memoryview(data).cast("B")
    for offset in range(9):
        for n in (0, 1, 7, 31, 33, 257, 1000):
            part = raw[8 * offset:8 * (offset + n)]
            want = math.fsum(data[offset:offset + n])
            got = _core.read_sum(part, isa)
            assert got == pytest.approx(want, rel=1e-12, abs=1e-12), (offset, n)
    with pytest.raises(ValueError):
        _core.read_sum(raw[:12], isa)


def test_compress_plain_sum_is_the_read_kernel():
    """The plain sum of doubles that compression times is the read kernel at the widest
    ISA: for one block it gives the very same bits."""
    import array
    import random

    from numascope.families.compress import bench as cz
    rng = random.Random(3)
    data = array.array("d", (rng.uniform(-1, 1) for _ in range(3000)))
    cpu = [min(os.sched_getaffinity(0))]
    nbytes = len(data) * 8
    core = cz._core()
    plain = core.cz_plain_new(data, nbytes, cpu)
    store, *_ = core.cz_store_new(data, nbytes, 8, "lz4", 5, "shuffle", cpu, nbytes)
    r = core.cz_measure(plain, store, cpu, "f8", 1, "buffer")
    assert r["isa"] == ISAS[-1]
    assert r["plain_sums"][0] == _core.read_sum(memoryview(data).cast("B"), ISAS[-1])
