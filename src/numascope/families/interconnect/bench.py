"""Interconnect: MPI point-to-point latency, bandwidth and message rate by NUMA placement.

One host (through shared memory): the intra-node paths the topology has — two cores sharing
an L3, the same node on another L3, another node of the same socket, another socket — each a
case with (cpu_a, cpu_b, node_a, node_b, distance); each rank's buffers on its own CPU's
node. Two hosts (--hosts A,B): rank 0 on A and rank 1 on B, each moved through every NUMA
node of its host, and the table by (A's node, B's node) with each node's distance to the
HCA/NIC and the best node for MPI traffic.

The programs are numascope's own (net/pt2pt.c, built with mpicc) or the OSU micro-benchmarks
when they are on PATH; see net/launch.py for the launcher line and the validation. By default
both follow OSU's method: one send and one receive buffer per rank, reused by every message
of a window, and OSU's iteration and warm-up counts; --buffers distinct gives every window
slot its own buffer (numascope's program only)."""

from __future__ import annotations

import math
import shlex
import shutil
from dataclasses import asdict, dataclass
from typing import Any

from numascope.benchmark import Case
from numascope.errors import MeasurementError, Unavailable, UserError
from numascope.families.interconnect import launch as L
from numascope.families.interconnect.options import (  # noqa: F401 - re-exported
    BUFFERS,
    FULL_ITERS,
    FULL_SIZES,
    KIB,
    MAX_SIZE,
    MIB,
    NO_PAIRS,
    PAGE_TEXT,
    QUICK_ITERS,
    QUICK_SIZES,
    SMOKE_ITERS,
    SMOKE_SIZES,
    TABLE,
    TESTS,
    one_of,
)
from numascope.families.interconnect.options import size_text as _size
from numascope.profile import Profile
from numascope.results.record import BenchResult, Metric
from numascope.topology.model import Topology

FAMILY = "interconnect"
PATHS = ("same L3", "same node", "other node", "other socket")
PAGE_LABEL = {"thp": "THP madvised", "none": "base pages"}
UNIT = {"lat": "us", "bw": "MB/s", "bibw": "MB/s", "mbw": "MB/s"}
WHAT = {"lat": "latency (half round trip)", "bw": "uni-directional bandwidth",
        "bibw": "bidirectional bandwidth", "mbw": "multi-pair bandwidth"}


# floors no machine beats, for the timeout check (NetParams.least_launch_s): a one-way
# MPI message in shared memory takes >= 0.1 us (0.2-0.25 us measured on this project's
# 2-core EPYC Zen 4 VM with Open MPI, quiet; OSU's published intra-node latencies are of
# that order), and no single-pair copy moves 1 TB/s (a core's L1 reads 64 B per cycle)
# and no MPI posts and matches a message in under 20 ns (50 M messages/s; OSU's published
# intra-node message rates are a few to ~20 M/s per pair)
LATENCY_FLOOR_S = 0.1e-6
MESSAGE_FLOOR_S = 20e-9
COPY_CEIL = 1e12


@dataclass(frozen=True)
class NetParams:
    """What every launch of a case measures. The defaults are the options' (TABLE), the
    sizes and iterations the quick preset's; every value is checked by its option's rule."""

    sizes: tuple[int, ...] = QUICK_SIZES
    lat_iters: int = QUICK_ITERS[0]    # timed ping-pongs per size (a tenth above 8 KiB)
    bw_iters: int = QUICK_ITERS[1]     # timed windows per size (a fifth above 8 KiB)
    buffers: str = TABLE["buffers"].default    # same: OSU's one per rank; distinct: per slot
    window: int = TABLE["window"].default
    pairs: int = NO_PAIRS                      # multi-pair test with this many pairs (0: none)
    reps: int = TABLE["reps"].default          # launches per test
    timeout: float = TABLE["timeout"].default  # seconds per launch
    engine: str = TABLE["engine"].default      # auto | numascope | osu
    tests: tuple[str, ...] = TESTS             # mbw joins when pairs > 0
    pages: str = TABLE["pages"].default        # system: no madvise (as stock OSU); thp:
                                               # MADV_HUGEPAGE; none: MADV_NOHUGEPAGE

    def __post_init__(self) -> None:
        for name, value in (("sizes", self.sizes), ("iters", (self.lat_iters, self.bw_iters)),
                            ("reps", self.reps), ("window", self.window),
                            ("timeout", self.timeout), ("tests", self.tests)):
            TABLE[name].convert(value)            # the options' own rules
        if self.pairs != NO_PAIRS:
            TABLE["pairs"].convert(self.pairs)
        for name in ("pages", "engine", "buffers"):
            one_of(name, getattr(self, name))
        if self.buffers == "distinct" and self.engine == "osu":
            raise UserError("--buffers distinct: OSU's programs reuse one buffer per rank; "
                            "use --engine numascope (or auto)")
        self._fits_timeout()

    def counts(self, test: str) -> tuple[int, int, int, int]:
        """(timed, warm-up, timed above 8 KiB, warm-up above) in OSU's ratios."""
        lat = test == "lat"
        it = self.lat_iters if lat else self.bw_iters
        return (it, max(1, it // (100 if lat else 10)), max(1, it // (10 if lat else 5)),
                max(1, it // (1000 if lat else 50)))

    def least_launch_s(self, test: str) -> float:
        """A floor under one launch of `test`: its timed and warm-up iterations at every
        size at speeds no machine reaches (LATENCY_FLOOR_S per one-way message, COPY_CEIL
        bytes per second), validation and start-up left out."""
        it, warm, large, large_warm = self.counts(test)
        total = 0.0
        for size in set(self.sizes):
            n = (large + large_warm) if size > L.LARGE else (it + warm)
            if test == "lat":
                per = 2 * max(LATENCY_FLOOR_S, size / COPY_CEIL)
            else:   # a window of messages, each at least MESSAGE_FLOOR_S to post and match
                ways = 2 if test == "bibw" else 1
                per = ways * self.window * max(MESSAGE_FLOOR_S, size / COPY_CEIL)
            total += n * per
        return total

    def _fits_timeout(self) -> None:
        """A count that would outlast --timeout is refused before anything runs (not killed
        by the timeout after minutes of work)."""
        for test in self.all_tests():
            least = self.least_launch_s(test)
            if least > self.timeout:
                raise UserError(
                    f"--iters {self.lat_iters},{self.bw_iters} with --timeout "
                    f"{self.timeout:g}: one launch of {test} over the sizes asked takes at "
                    f"least {least:.3g} s on any machine; raise --timeout or lower --iters "
                    "or --sizes")

    def all_tests(self) -> list[str]:
        return [t for t in TESTS if t in self.tests] + \
            (["mbw"] if self.pairs else [])

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["sizes"] = list(self.sizes)
        d["tests"] = list(self.tests)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> NetParams:
        d = dict(d)
        d["sizes"] = tuple(d["sizes"])
        d["tests"] = tuple(d.get("tests", TESTS))
        d.setdefault("pages", "thp")       # records from before --pages: read so, as always
        # records from before --buffers were measured with a buffer per window slot
        d.setdefault("buffers", "distinct")
        return cls(**d)

    def plan(self, test: str, ranks: list[L.Rank], hosts: tuple[str, ...] = ()) -> L.Plan:
        """OSU's ratios (osu_util.h): latency 10000 timed / 100 warm-up at or below 8 KiB,
        1000 / 10 above; bandwidth 100 / 10 and 20 / 2. The defaults are OSU's counts;
        other counts keep the ratios."""
        lat = test == "lat"
        it, warm, large, large_warm = self.counts(test)
        return L.Plan(test, tuple(sorted(set(self.sizes))), it, warm, large, large_warm,
                      window=1 if lat else self.window,
                      pairs=self.pairs if test == "mbw" else 1, ranks=tuple(ranks),
                      hosts=hosts, pages=self.pages, buffers=self.buffers)


def profile_params(profile: Profile, ncpus: int = 2) -> NetParams:
    """full: 1 B … 4 MiB, OSU's counts (10000 ping-pongs / 100 windows, warm-up and large
    sizes in OSU's ratios), and the multi-pair test with up to 4 pairs when there are CPUs
    for them; quick: 8 sizes to 1 MiB and a tenth / a fifth of OSU's counts (1000 / 20);
    smoke: 4 sizes to 64 KiB, 100 / 4. Every profile: OSU's one buffer per rank."""
    if profile.dense:
        pairs = min(4, ncpus // 2) if ncpus >= 4 else 0
        return NetParams(sizes=FULL_SIZES, lat_iters=FULL_ITERS[0], bw_iters=FULL_ITERS[1],
                         reps=min(profile.reps, 3), pairs=pairs)
    if not profile.readable:        # smoke: the launch and placement, not the figures
        return NetParams(sizes=SMOKE_SIZES, lat_iters=SMOKE_ITERS[0],
                         bw_iters=SMOKE_ITERS[1], reps=1)
    return NetParams(sizes=QUICK_SIZES, lat_iters=QUICK_ITERS[0], bw_iters=QUICK_ITERS[1],
                     reps=1)


# -- the intra-node paths ---------------------------------------------------------------------

def _usable(topo: Topology) -> list[Any]:
    cpus = [c for c in topo.cpus if c.usable]
    return sorted(cpus, key=lambda c: (c.smt, c.id))     # first threads of cores first


def paths(topo: Topology) -> tuple[list[dict[str, Any]], list[str]]:
    """The intra-node paths present here, as (cases' placements, what is absent and why).
    Each path: kind, cpu_a, cpu_b, node_a, node_b, distance. CPU a is the first usable CPU;
    CPU b another core's first thread, chosen by the path's rule."""
    cpus = _usable(topo)
    if len(cpus) < 2:
        return [], ["fewer than two usable CPUs: no path to measure"]
    a = cpus[0]
    others = [c for c in cpus if c.core != a.core or c.core is None]
    others = [c for c in others if c.id != a.id]
    rules = {
        "same L3": lambda c: a.l3 is not None and c.l3 == a.l3,
        "same node": lambda c: (c.node == a.node and c.package == a.package
                                and (a.l3 is None or c.l3 != a.l3)),
        "other node": lambda c: c.node != a.node and c.package == a.package,
        "other socket": lambda c: c.package != a.package,
    }
    why = {
        "same L3": "no L3 shared by two cores here" if a.l3 is not None else
                   "no L3 reported: no same-L3 path",
        "same node": ("one L3 per node: no same-node, other-L3 path" if a.l3 is not None
                      else "one core per node: no same-node path"),
        "other node": ("one node: no remote path here" if len(topo.nodes) < 2 else
                       "one node per socket: no other-node path inside a socket"),
        "other socket": "one socket: no other-socket path here",
    }
    out, absent = [], []
    for kind in PATHS:
        b = next((c for c in others if rules[kind](c)), None)
        if b is None:
            absent.append(f"{kind}: {why[kind]}")
            continue
        d = topo.distance(a.node, b.node) if a.node is not None and b.node is not None \
            else None
        out.append({"path": kind, "cpu_a": a.id, "cpu_b": b.id, "node_a": a.node,
                    "node_b": b.node, "distance": d})
    return out, absent


def _mem(topo: Topology, node: int | None) -> int | None:
    if node is None or node not in topo.node_ids():
        return None
    n = topo.node(node)
    return node if (not n.memoryless and n.allowed) else None


def pair_ranks(topo: Topology, place: dict[str, Any], pairs: int) -> tuple[list[L.Rank], bool]:
    """Ranks for `pairs` pairs on a path: senders near CPU a (its L3, then its node), the
    receivers near CPU b, distinct CPUs while there are enough; (ranks, CPUs shared)."""
    cpus = _usable(topo)
    a, b = topo.cpu(place["cpu_a"]), topo.cpu(place["cpu_b"])

    def pool(c, taken):
        near = [x for x in cpus if x.id != c.id and x.l3 == c.l3 and c.l3 is not None]
        node = [x for x in cpus if x.id != c.id and x.node == c.node and x not in near]
        return [c] + [x for x in near + node if x.id not in taken]

    pa = pool(a, {b.id})
    pb = pool(b, {x.id for x in pa[:pairs]})
    shared = len(pa) < pairs or len(pb) < pairs
    ma, mb = _mem(topo, a.node), _mem(topo, b.node)
    send = [L.Rank((pa[i % len(pa)].id,), ma) for i in range(pairs)]
    recv = [L.Rank((pb[i % len(pb)].id,), mb) for i in range(pairs)]
    return send + recv, shared


def given_case(topo: Topology, p: NetParams, a: int, b: int) -> Case:
    """Rank 0 on CPU a, rank 1 on CPU b (--cpus A,B), buffers on each CPU's node."""
    if a == b:
        raise UserError(f"--cpus {a},{b}: two different CPUs")
    ca, cb = topo.cpu(a), topo.cpu(b)
    d = topo.distance(ca.node, cb.node) if ca.node is not None and cb.node is not None \
        else None
    pl = {"path": "given", "cpu_a": a, "cpu_b": b, "node_a": ca.node, "node_b": cb.node,
          "distance": d}
    check_memory(p, [pl], topo)
    ranks = [L.Rank((a,), _mem(topo, ca.node)), L.Rank((b,), _mem(topo, cb.node))]
    multi, shared = pair_ranks(topo, pl, p.pairs) if p.pairs else ([], False)
    return Case(_label(pl, p), {"mode": "path", **pl, "net": p.to_dict(),
                                "buffers": p.buffers,
                             "ranks": [asdict(r) for r in ranks],
                             "multi_ranks": [asdict(r) for r in multi],
                             "shared_cpus": shared, "hosts": []})


def buffer_bytes(p: NetParams) -> int:
    """What one rank allocates at most: a send and a receive buffer of a window of the
    largest messages (distinct; the validation pass reuses them), or of one largest message
    (same) plus the validation pass's window of slots, one per message (a send or a receive
    window for bw and mbw, both for bibw; none when only lat runs)."""
    big, w = max(p.sizes), p.window
    if p.buffers == "distinct":
        return 2 * big * w
    windows = [t for t in p.all_tests() if t != "lat"]
    return 2 * big + (0 if not windows else (2 if "bibw" in windows else 1) * w * big)


def check_memory(p: NetParams, places: list[dict[str, Any]], topo: Topology) -> None:
    """UserError (before anything runs) when the ranks' buffers would not fit in what is
    free on their nodes of this machine; nothing is checked for a replayed or hand-built
    topology (nothing is allocated for it, and this host's memory says nothing of it)."""
    from numascope.host import HEADROOM, live_host
    h = live_host(topo)
    if h is None or not places:
        return
    from numascope.units import format_bytes
    ranks = 2 * max(1, p.pairs)
    what = (f"a window of {p.window} x {_size(max(p.sizes))}" if p.buffers == "distinct"
            else f"a send and a receive buffer of {_size(max(p.sizes))} each and the "
                 f"validation's window of {p.window} x {_size(max(p.sizes))}")
    fix = "--window" if p.buffers == "distinct" else "--pairs, or a smaller --window"
    for pl in places:
        nodes = sorted({n for n in (pl["node_a"], pl["node_b"]) if n is not None})
        need = ranks * buffer_bytes(p)
        free, where = h.free_for(nodes)
        if free is not None and need > HEADROOM * free:
            raise UserError(f"{ranks} ranks with {what} need {format_bytes(need)} but only "
                            f"{format_bytes(free)} is free {where}: use smaller --sizes or "
                            f"{fix}")


# -- the family -------------------------------------------------------------------------------

def _tail(p: NetParams) -> str:
    """What the case's name says of a mode other than stock OSU's (distinct buffers, pages
    other than the system's), so that `compare` never sets it against OSU's method."""
    return (", distinct buffers" if p.buffers == "distinct" else "") + \
        ("" if p.pages == "system" else f", {PAGE_LABEL[p.pages]}")


def _label(place: dict[str, Any], p: NetParams) -> str:
    return f"{place['path']} (CPU {place['cpu_a']} - CPU {place['cpu_b']}{_tail(p)})"


def method_of(params: dict[str, Any]) -> str:
    """How a result's figures were measured beyond its case name (analysis.method): its
    pages and buffers. The names carry them only where they differ from stock OSU's, and
    records from before --pages system and --buffers measured THP madvised with a buffer
    per window slot under the names today's defaults give, so two of them can share a name
    and still be two methods (1 MiB windows ~1.5x faster with THP, docs/net.md)."""
    if "net" not in params:        # not a net record's params (a view without them)
        return ""
    r = BenchResult(FAMILY, "", dict(params), {})
    return f"pages {pages_of(r)}, {buffers_of(r)} buffers"



STOCK = "pages system, same buffers"     # stock OSU's method: no madvise, a buffer per rank


def kernel_of(params: dict[str, Any], test: str) -> str:
    """The OSU test a result's `test` figure is measured as (osu_latency, osu_bw …; by
    numascope's program or OSU's own), with its method after it where that is not stock
    OSU's (THP madvised, distinct buffers): what a published OSU figure must match."""
    m = method_of(params)
    return L.OSU[test] + ("" if m in (STOCK, "") else f" ({m})")


class Interconnect:
    """MPI point-to-point by NUMA placement (numascope's mpicc-built program or OSU)."""

    family = FAMILY
    title = "MPI latency and bandwidth by NUMA placement (point to point)"
    # compared by default: small-message latency and large-message bandwidth
    primary = ("latency", "bandwidth")
    # what compare and fleet check must not mix under one case name (analysis.method), and
    # the params it reads (a fleet's light records carry only these: fleet.load)
    method = staticmethod(method_of)
    method_params = ("net", "buffers", "engine")

    def __init__(self, *, env: dict[str, str] | None = None) -> None:
        self.env = env          # the launches' environment (tests inject faults here)
        self.absent: list[str] = []

    def suite_cases(self, topo: Topology, profile: Profile) -> list[Case]:
        """Every intra-node path with the profile's sizes; Unavailable without MPI (the
        stage is skipped with that reason)."""
        L.mpi_tools()
        cases = self.cases(topo, params=profile_params(profile, len(topo.usable_cpus())))
        if not cases:
            raise Unavailable("; ".join(self.absent))
        return cases

    def cases(self, topo: Topology, *, params: NetParams | None = None,
              hosts: tuple[str, ...] = (), peer_nodes: list[int] | None = None,
              only: list[str] | None = None, **_: Any) -> list[Case]:
        p = params or NetParams()
        if hosts:
            return self._peer_cases(topo, p, hosts, peer_nodes)
        places, self.absent = paths(topo)
        if only:
            unknown = [k for k in only if k not in PATHS]
            if unknown:
                raise UserError(f"--path {unknown[0]!r}: choose from {', '.join(PATHS)}")
            places = [pl for pl in places if pl["path"] in only]
            if not places:
                raise UserError(f"no {' or '.join(only)} path on this machine ("
                                + "; ".join(self.absent) + ")")
        check_memory(p, places, topo)
        out = []
        for pl in places:
            ranks, _ = pair_ranks(topo, pl, 1)
            multi, mshared = pair_ranks(topo, pl, p.pairs) if p.pairs else ([], False)
            out.append(Case(_label(pl, p), {
                "mode": "path", **pl, "net": p.to_dict(), "buffers": p.buffers,
                "ranks": [asdict(r) for r in ranks], "multi_ranks": [asdict(r) for r in multi],
                "shared_cpus": mshared, "hosts": []}))
        return out

    def _peer_cases(self, topo, p, hosts, peer_nodes) -> list[Case]:
        if len(hosts) != 2 or not all(hosts):
            raise UserError(f"--hosts takes two host names, A,B (got {','.join(hosts)})")
        if p.pairs:
            raise UserError("--pairs measures pairs on one host: leave it out with --hosts")
        mine = [n for n in topo.node_ids() if any(c.node == n for c in _usable(topo))]
        theirs = peer_nodes if peer_nodes is not None else mine
        out = []
        for na in mine:
            ca = next(c.id for c in _usable(topo) if c.node == na)
            for nb in theirs:
                cb = [c.id for c in _usable(topo) if c.node == nb]
                if hosts[0] == hosts[1] and len(cb) > 1:   # one host named twice
                    cb = [c for c in cb if c != ca]
                # B's node nb may have no CPU in this host's numbering (--peer-nodes): its
                # memory is still bound there, its CPU left to the scheduler
                ranks = [L.Rank((ca,), _mem(topo, na)), L.Rank(tuple(cb[:1]), nb)]
                out.append(Case(f"{hosts[0]} N{na} - {hosts[1]} N{nb}{_tail(p)}", {
                    "mode": "peer", "path": "between hosts", "cpu_a": ca,
                    "cpu_b": cb[0] if cb else None, "node_a": na, "node_b": nb,
                    "distance": None, "net": p.to_dict(), "buffers": p.buffers,
                    "hosts": list(hosts),
                    "ranks": [asdict(r) for r in ranks], "multi_ranks": [],
                    "shared_cpus": False, "hca": hca_distance(topo, na)}))
        return out

    # -- measuring ---------------------------------------------------------------------------
    def measure(self, topo: Topology, case: Case) -> BenchResult:
        cp = case.params
        p = NetParams.from_dict(cp["net"])
        mpirun, mpicc = L.mpi_tools()
        hosts = tuple(cp.get("hosts") or ())
        tests = [t for t in p.all_tests() if not (t == "mbw" and not cp.get("multi_ranks"))]
        # OSU's programs have one buffer per rank: distinct buffers are numascope's own
        osu = L.osu_tools(tests) if p.engine in ("auto", "osu") and p.buffers == "same" \
            else None
        if p.engine == "osu" and osu is None:
            raise Unavailable("--engine osu: " + ", ".join(L.OSU[t] for t in tests)
                              + " not all on PATH")
        exe = None if osu else L.build(mpicc)
        numactl = shutil.which("numactl")
        notes: list[str] = []
        values: dict[str, dict[int, list[float]]] = {}
        rates: dict[int, list[float]] = {}
        commands, where, huge = {}, [], {}
        for t in tests:
            key = "multi_ranks" if t == "mbw" else "ranks"
            ranks = [L.Rank(tuple(r["cpus"]), r["node"]) for r in cp[key]]
            plan = p.plan(t, ranks, hosts)
            what = f"{case.label} {t}"
            for _ in range(p.reps):
                if osu:             # one launch, or two where -i / -x must differ
                    rows, cmds = {}, []
                    for sizes, cmd in L.osu_commands(mpirun, osu[t], plan, numactl):
                        run = L.launch(cmd, p.timeout, what, self.env)
                        rows.update(L.check_osu(plan, L.parse_osu(run.stdout), what, sizes))
                        cmds.append(shlex.join(cmd))
                else:
                    cmd = L.command(mpirun, str(exe), plan)
                    cmds = [shlex.join(cmd)]
                    run = L.launch(cmd, p.timeout, what, self.env)
                    got = L.check(plan, run, what)
                    rows = got["results"]
                    notes += got["notes"]
                    if t == "lat" or not where:
                        where = got["ranks"]
                    huge[t] = [d.get("anon_huge_kb") for d in got["ranks"]]
                for s in plan.sizes:
                    values.setdefault(t, {}).setdefault(s, []).append(
                        float(rows[s][L.VALUE[t]]))
                    if t == "mbw" and "msg_rate" in rows[s]:
                        rates.setdefault(s, []).append(float(rows[s]["msg_rate"]))
            commands[t] = " ; ".join(cmds)       # OSU's small and large sizes: two lines
        if osu and not numactl:
            notes.append("numactl is missing: the OSU ranks ran unbound")
        if cp.get("shared_cpus"):
            notes.append(f"{p.pairs} pairs on too few CPUs: some ranks share a CPU")
        res = self._result(case, p, values, rates, commands, where, notes,
                           "osu" if osu else "numascope", L.mpi_version(mpirun))
        res.params["pages_seen"] = huge     # test -> AnonHugePages kB per rank (last launch)
        return res

    def _result(self, case, p, values, rates, commands, where, notes, engine, version
                ) -> BenchResult:
        cp = case.params
        m: dict[str, Metric] = {}
        small, big = min(p.sizes), max(p.sizes)
        if "lat" in values:
            m["latency"] = Metric("latency", "us", False, values["lat"][small],
                                  f"{small} B, half the round trip")
        if "bw" in values:
            m["bandwidth"] = Metric("bandwidth", "MB/s", True, values["bw"][big],
                                    f"{_size(big)}, window of {p.window}, {p.buffers} "
                                    "buffers, 10^6 B/s")
        if "bibw" in values:
            m["bibw"] = Metric("bibw", "MB/s", True, values["bibw"][big],
                               f"{_size(big)}, both ways at once, 10^6 B/s")
        if "mbw" in values:
            m["mbw"] = Metric("mbw", "MB/s", True, values["mbw"][big],
                              f"{_size(big)}, {p.pairs} pairs together, 10^6 B/s")
            if rates:
                s0 = min(rates)
                m["msg_rate"] = Metric("msg_rate", "msg/s", True, rates[s0],
                                       f"{s0} B messages, {p.pairs} pairs together")
        for t, by in values.items():
            for s, vs in sorted(by.items()):
                name = f"{t}_{s}"
                m[name] = Metric(name, UNIT[t], t != "lat", vs, f"{WHAT[t]}, {_size(s)}")
        params = {k: v for k, v in cp.items()}
        params.update({"engine": engine, "mpi": version, "commands": commands,
                       "ranks_seen": where, "tests": sorted(values), "buffers": p.buffers})
        placement = {"cpus": [cp["cpu_a"], cp["cpu_b"]],
                     "memory": [cp["node_a"], cp["node_b"]],
                     "where": [f"rank 0: CPU {cp['cpu_a']}", f"rank 1: CPU {cp['cpu_b']}"]}
        res = BenchResult(FAMILY, case.label, params, m, placement, list(dict.fromkeys(notes)))
        check_measured(res)
        return res


def under_launcher(topo: Topology, p: NetParams, world: tuple[int, int]
                   ) -> list[BenchResult]:
    """numascope started as one of 2 ranks by the user's own mpirun / srun (one per host):
    the program runs as this rank's child, once, moving both ranks through every node of
    their hosts. Rank 0 returns a result per (its node, the peer's node); the other rank
    measures and returns []."""
    rank, size = world
    if size != 2:
        raise UserError(f"under mpirun/srun, numascope net needs exactly 2 ranks, one per "
                        f"host (this job has {size})")
    if p.reps != 1 or p.pairs or p.engine == "osu":
        raise UserError("under your own mpirun/srun: one launch, lat and bw only (leave out "
                        "--reps, --pairs and --engine osu)")
    _, mpicc = L.mpi_tools()
    exe = L.build(mpicc)
    cmd = L.sweep_command(str(exe), tuple(sorted(set(p.sizes))), p.lat_iters, p.bw_iters,
                          p.window, p.pages, p.buffers)
    run = L.run_child(cmd, p.timeout, f"rank {rank}")
    if rank != 0:
        return []
    got = L.check_sweep(run, tuple(sorted(set(p.sizes))), "node sweep", p.buffers)
    ha, hb = got["hosts"][0]["host"], got["hosts"][1]["host"]
    out = []
    for (a, b), st in sorted(got["steps"].items()):
        ranks = sorted(st["ranks"], key=lambda d: d["rank"])
        params = {"mode": "peer", "path": "between hosts", "cpu_a": ranks[0]["cpu"],
                  "cpu_b": ranks[1]["cpu"], "node_a": a, "node_b": b, "distance": None,
                  "net": p.to_dict(), "buffers": p.buffers, "hosts": [ha, hb], "ranks": [],
                  "multi_ranks": [],
                  "shared_cpus": False, "hca": hca_distance(topo, a),
                  "engine": "numascope", "mpi": "the user's launcher",
                  "launcher": "the user's mpirun/srun (2 ranks)",
                  "commands": {"sweep": shlex.join(cmd)}, "ranks_seen": ranks,
                  "tests": ["bw", "lat"]}
        m: dict[str, Metric] = {}
        lat = {sz: st["lat"][sz]["usec"] for sz in st["lat"]}
        bw = {sz: st["bw"][sz]["mbps"] for sz in st["bw"]}
        small, big = min(lat), max(bw)
        m["latency"] = Metric("latency", "us", False, [lat[small]],
                              f"{small} B, half the round trip")
        m["bandwidth"] = Metric("bandwidth", "MB/s", True, [bw[big]],
                                f"{_size(big)}, window of {p.window}, {p.buffers} buffers, "
                                "10^6 B/s")
        for t, by in (("lat", lat), ("bw", bw)):
            for sz, v in sorted(by.items()):
                m[f"{t}_{sz}"] = Metric(f"{t}_{sz}", UNIT[t], t != "lat", [v],
                                        f"{WHAT[t]}, {_size(sz)}")
        notes = []
        if ha == hb:
            notes.append(f"both ranks on {ha}: a rehearsal through shared memory, not the "
                         "network")
        res = BenchResult(FAMILY, f"{ha} N{a} - {hb} N{b}{_tail(p)}", params, m,
                          {"cpus": [ranks[0]["cpu"], ranks[1]["cpu"]], "memory": [a, b],
                           "where": [f"rank 0: {ha} CPU {ranks[0]['cpu']}",
                                     f"rank 1: {hb} CPU {ranks[1]['cpu']}"]}, notes)
        check_measured(res)
        out.append(res)
    return out


def check_measured(r: BenchResult) -> None:
    for k, mt in r.metrics.items():
        if not mt.values or not all(math.isfinite(v) and v > 0 for v in mt.values):
            raise MeasurementError(f"{r.case}: {k} is not a positive number")


# -- reading results --------------------------------------------------------------------------

def of(results: list[BenchResult]) -> list[BenchResult]:
    return [r for r in results if r.family == FAMILY]


def buffers_of(r: BenchResult) -> str:
    """same | distinct: the record's own word; before --buffers existed, numascope's program
    gave each window slot its buffer and OSU's reused one."""
    b = r.params.get("buffers")
    if b in BUFFERS:
        return b
    return "same" if r.params.get("engine") == "osu" else "distinct"


def pages_of(r: BenchResult) -> str:
    """system | none | thp: the record's own word; before --pages system existed, THP."""
    return (r.params.get("net") or {}).get("pages", "thp")



def sweep(r: BenchResult, test: str) -> dict[int, float]:
    """{size: median} of one test of a result."""
    out = {}
    for k, mt in r.metrics.items():
        t, _, s = k.rpartition("_")
        if t == test and s.isdigit():
            out[int(s)] = mt.median
    return dict(sorted(out.items()))


def hca_devices(topo: Topology) -> list[Any]:
    """The InfiniBand HCAs, else the NICs, whose NUMA node is known."""
    for kinds in (("infiniband",), ("nic",)):
        devs = [d for d in topo.devices if d.kind in kinds and d.numa_node is not None]
        if devs:
            return devs
    return []


def hca_distance(topo: Topology, node: int) -> dict[str, Any] | None:
    """The nearest HCA/NIC to `node`: {device, kind, hca_node, distance}; None without one."""
    best = None
    for d in hca_devices(topo):
        dist = topo.distance(node, d.numa_node) if node in topo.node_ids() else None
        key = (dist if dist is not None else 1 << 30, d.address)
        if best is None or key < best[0]:
            best = (key, {"device": d.name, "address": d.address, "kind": d.kind,
                          "hca_node": d.numa_node, "distance": dist})
    return best[1] if best else None


def hca_table(topo: Topology) -> list[dict[str, Any]]:
    """Per node with CPUs: its nearest HCA/NIC and the SLIT distance to it."""
    rows = []
    for n in topo.node_ids():
        if not any(c.node == n and c.usable for c in topo.cpus):
            continue
        h = hca_distance(topo, n)
        rows.append({"node": n, **(h or {"device": None, "address": None, "kind": None,
                                         "hca_node": None, "distance": None})})
    return rows


def peer_table(results: list[BenchResult]) -> dict[str, Any]:
    """Between two hosts: rows of (node_a, node_b, latency, bandwidth, hca distance), the
    per-node summary of host A (mean over B's nodes) and the best node for MPI traffic:
    highest mean bandwidth, then lowest mean latency."""
    rows = []
    for r in of(results):
        if r.params.get("mode") != "peer":
            continue
        h = r.params.get("hca") or {}
        rows.append({"node_a": r.params["node_a"], "node_b": r.params["node_b"],
                     "latency_us": _med(r.metrics, "latency"),
                     "bandwidth_mbs": _med(r.metrics, "bandwidth"),
                     "hca_device": h.get("device"), "hca_node": h.get("hca_node"),
                     "hca_distance": h.get("distance"), "case": r.case})
    by: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        by.setdefault(row["node_a"], []).append(row)
    nodes = []
    for n, rs in sorted(by.items()):
        nodes.append({"node": n, "bandwidth_mbs": _mean(x["bandwidth_mbs"] for x in rs),
                      "latency_us": _mean(x["latency_us"] for x in rs),
                      "hca_distance": rs[0]["hca_distance"], "hca_node": rs[0]["hca_node"]})
    best = max(nodes, key=lambda x: (x["bandwidth_mbs"], -x["latency_us"])) if nodes else None
    text = None
    if best is not None:
        hca = ("" if best["hca_node"] is None else
               f"; the HCA/NIC is on node {best['hca_node']} (distance "
               f"{best['hca_distance']})")
        text = (f"best node for MPI traffic: {best['node']} ({best['bandwidth_mbs']:,.0f} "
                f"MB/s, {best['latency_us']:.2f} us mean to the peer's nodes){hca}")
    return {"rows": rows, "nodes": nodes, "best_node": best["node"] if best else None,
            "best": text}


def path_rows(results: list[BenchResult]) -> list[dict[str, Any]]:
    """Per case: medians over the launches (`…`) and the best launch beside them
    (`…_best`: the lowest latency, the highest bandwidth)."""
    rows = []
    for r in of(results):
        pp = r.params
        m = r.metrics
        rows.append({"path": pp.get("path"), "cpu_a": pp.get("cpu_a"), "cpu_b": pp.get("cpu_b"),
                     "node_a": pp.get("node_a"), "node_b": pp.get("node_b"),
                     "distance": pp.get("distance"), "latency_us": _med(m, "latency"),
                     "latency_us_best": _best(m, "latency"),
                     "bandwidth_mbs": _med(m, "bandwidth"),
                     "bandwidth_mbs_best": _best(m, "bandwidth"),
                     "bibw_mbs": m["bibw"].median if "bibw" in m else None,
                     "bibw_mbs_best": m["bibw"].best if "bibw" in m else None,
                     "mbw_mbs": m["mbw"].median if "mbw" in m else None,
                     "msg_rate": m["msg_rate"].median if "msg_rate" in m else None,
                     "launches": max((len(x.values) for x in m.values()), default=0),
                     "buffers": buffers_of(r), "engine": pp.get("engine"), "case": r.case})
    return rows


def _mean(xs) -> float:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else math.nan


def _med(m: dict[str, Metric], name: str) -> float:
    return m[name].median if name in m else math.nan


def _best(m: dict[str, Metric], name: str) -> float:
    return m[name].best if name in m else math.nan
