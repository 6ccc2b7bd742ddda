"""Measured latency and bandwidth back into hwloc: this machine's hwloc XML with the stored
node matrix added as memory attributes, by hwloc's own tools.

ACPI HMAT is often missing or describes only the best initiator, so placement tools that
ask hwloc (hwloc_memattr_get_best_target, Open MPI, Slurm …) lack real figures. Here

    lstopo-no-graphics --of xml [--input DUMP] > tmp.xml
    hwloc-annotate tmp.xml tmp.xml NUMANode:<L> memattr Latency <cpuset of node i> <ns>
    hwloc-annotate tmp.xml tmp.xml NUMANode:<L> memattr Bandwidth <cpuset of node i> <MiB/s>

for every measured (CPU node i, memory node j), also as ReadLatency / ReadBandwidth (the
matrix measures loads and a read kernel, so the generic attributes carry read figures).
Units are hwloc's: nanoseconds and MiB/s (2^20 B/s). The result is written atomically and
reads back with `lstopo --input out.xml --memattrs`.

hwloc files a value under an existing initiator whose cpuset includes the one given (so a
firmware figure "from package 0" would absorb, and mix up, the figures measured from each
of its nodes): such firmware values of a measured target are removed first; values of other
initiators stay.

This module takes plain figures (`NodeFigure`: CPU node, memory node, metric, value), not
stored runs: the layers above turn their records into figures (topology imports nothing
above it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from numascope.errors import MeasurementError, Unavailable, UserError
from numascope.topology.model import Topology

LSTOPO = ("lstopo-no-graphics", "lstopo")
ANNOTATE = "hwloc-annotate"
# (our metric, hwloc attribute names, conversion from our unit to hwloc's)
ATTRS = (("latency", ("Latency", "ReadLatency"), 1.0),
         ("bandwidth", ("Bandwidth", "ReadBandwidth"), 1e9 / 2**20))
METRICS = tuple(metric for metric, _, _ in ATTRS)   # the metrics a NodeFigure may carry
_NODE_LINE = re.compile(r"NUMANode(?:\([^)]*\))? L#(\d+) \(P#(\d+)")
_NODE_TAG = re.compile(r'<object type="NUMANode"[^>]*>')
_MEMATTR = re.compile(r'(<memattr name="(\w+)"[^>]*>)(.*?)(</memattr>)', re.DOTALL)
_VALUE = re.compile(r'\s*<memattr_value [^>]*/>')


@dataclass(frozen=True)
class NodeFigure:
    """One measured figure between two NUMA nodes, in numascope's units."""
    initiator: int     # OS index of the CPU node whose CPUs measured it
    target: int        # OS index of the memory node
    metric: str        # one of METRICS: "latency" (ns) or "bandwidth" (GB/s, 10^9 B/s)
    value: float       # the figure (a median)
    source: str = ""   # how an error names where it came from ("run result N0->N1")


@dataclass(frozen=True)
class MemAttr:
    name: str          # hwloc attribute: Latency, ReadLatency, Bandwidth, ReadBandwidth
    target: int        # OS index of the memory node
    initiator: int     # OS index of the CPU node whose CPUs measured it
    value: int         # ns or MiB/s


def tools() -> tuple[str, str]:
    """(lstopo, hwloc-annotate) paths; Unavailable naming what is missing."""
    lstopo = next((p for name in LSTOPO if (p := shutil.which(name))), None)
    annotate = shutil.which(ANNOTATE)
    missing = [n for n, p in (("lstopo-no-graphics", lstopo), (ANNOTATE, annotate)) if not p]
    if missing:
        raise Unavailable(f"hwloc tools missing ({', '.join(missing)}): install hwloc "
                          "(Debian: apt-get install hwloc)")
    return lstopo, annotate   # type: ignore[return-value]


def memattrs(figures: Iterable[NodeFigure]) -> list[MemAttr]:
    """The hwloc memory attributes `figures` give, in their order (each metric under all
    its hwloc names, in hwloc's units)."""
    scales = {metric: (names, scale) for metric, names, scale in ATTRS}
    out = []
    for f in figures:
        if f.metric not in scales:
            raise ValueError(f"{f.metric!r} is not a metric hwloc can hold ({METRICS})")
        names, scale = scales[f.metric]
        v = round(f.value * scale)
        if v <= 0:
            raise UserError(f"{f.source or 'a figure'}: {f.metric} {f.value} is not a figure "
                            "hwloc can hold")
        out += [MemAttr(n, f.target, f.initiator, v) for n in names]
    return out


def cpuset(cpus: list[int]) -> str:
    """hwloc's cpuset string: 32-bit words in hex, most significant first, comma separated
    (CPUs 0,1 → 0x00000003; CPU 32 → 0x00000001,0x00000000)."""
    if not cpus:
        raise UserError("an initiator without CPUs")
    words = [0] * (max(cpus) // 32 + 1)
    for c in cpus:
        words[c // 32] |= 1 << (c % 32)
    return ",".join(f"0x{w:08x}" for w in reversed(words))


def _run(cmd: list[str]) -> str:
    try:
        p = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Unavailable(f"{Path(cmd[0]).name} failed: {e}") from None
    if p.returncode != 0:
        line = (p.stderr.strip() or p.stdout.strip()).splitlines()
        raise MeasurementError(f"{Path(cmd[0]).name} {' '.join(cmd[1:4])} … failed "
                               f"(exit {p.returncode}): {line[-1] if line else 'no message'}")
    return p.stdout


def node_logical(lstopo: str, xml: Path) -> dict[int, int]:
    """OS index → hwloc logical index of every NUMA node in `xml`, as lstopo names them."""
    text = _run([lstopo, "--input", str(xml), "--only", "NUMANode"])
    return {int(os_i): int(log) for log, os_i in _NODE_LINE.findall(text)}


def _attr(tag: str, name: str) -> str | None:
    m = re.search(rf'\b{name}="([^"]*)"', tag)
    return m.group(1) if m else None


def _mask(s: str) -> int:
    """hwloc cpuset string → int ("0x00000001,0x00000003" → CPUs 0, 1, 32)."""
    v = 0
    for w in s.split(","):   # 32-bit words, most significant first
        v = (v << 32) | int(w.strip().removeprefix("0x") or "0", 16)
    return v


def drop_covering(xml: str, topo: Topology, attrs: list[MemAttr]) -> tuple[str, int]:
    """`xml` without the values of our attributes, for our targets, whose initiator cpuset
    includes one of our initiators' CPUs (hwloc would file our figures under them).
    Returns (xml, values removed)."""
    gp = {}
    for tag in _NODE_TAG.findall(xml):
        os_i, g = _attr(tag, "os_index"), _attr(tag, "gp_index")
        if os_i is not None and g is not None:
            gp[g] = int(os_i)
    ours: dict[tuple[str, int], list[int]] = {}
    for a in attrs:
        ours.setdefault((a.name, a.target), []).append(
            _mask(cpuset(list(topo.node(a.initiator).cpus))))
    removed = 0

    def block(m: re.Match) -> str:
        nonlocal removed
        name = m.group(2)

        def value(v: re.Match) -> str:
            nonlocal removed
            target = gp.get(_attr(v.group(0), "target_obj_gp_index") or "")
            init = _attr(v.group(0), "initiator_cpuset")
            mine = ours.get((name, target)) if target is not None else None
            if mine and init and any(_mask(init) & c == c for c in mine):
                removed += 1
                return ""
            return v.group(0)
        return m.group(1) + _VALUE.sub(value, m.group(3)) + m.group(4)

    return _MEMATTR.sub(block, xml), removed


@contextmanager
def _input(root: str | Path) -> Iterator[list[str]]:
    """lstopo's --input for a replayed sysfs root (a dump directory or tarball)."""
    if str(root) == "/":
        yield []
        return
    from numascope.topology.archive import extracted, find_root, is_archive
    p = Path(root)
    if p.is_file() and is_archive(p):
        with extracted(p) as d:
            yield ["--input", str(find_root(d, root))]
        return
    yield ["--input", str(find_root(p, root))]


def write_xml(topo: Topology, figures: Iterable[NodeFigure], out: str | Path,
              root: str | Path = "/") -> tuple[list[MemAttr], int]:
    """Write hwloc's XML of the machine at `root` with the measured `figures` as memory
    attributes to `out` (atomically); returns the attributes written and the number of
    firmware values they replaced."""
    lstopo, annotate = tools()
    attrs = memattrs(figures)
    if not attrs:
        raise UserError("the run holds no node-matrix latency or bandwidth to export")
    for a in attrs:
        if a.initiator not in topo.node_ids() or not topo.node(a.initiator).cpus:
            raise UserError(f"node {a.initiator} of the run has no CPUs on this machine: the "
                            "run does not belong to it")
    out = Path(out)
    if out.is_dir():
        raise UserError(f"{out} is a directory: give a file name such as topo.xml")
    if not out.parent.is_dir():
        raise UserError(f"{out.parent}: no such directory")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".xml", dir=out.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        with _input(root) as inp:
            xml = _run([lstopo, *inp, "--of", "xml", "-"])
        xml, replaced = drop_covering(xml, topo, attrs)
        tmp.write_text(xml)
        logical = node_logical(lstopo, tmp)
        for a in attrs:
            if a.target not in logical:
                raise UserError(f"hwloc shows no NUMA node with OS index {a.target} on this "
                                "machine: the run does not belong to it")
            init = cpuset(list(topo.node(a.initiator).cpus))
            _run([annotate, str(tmp), str(tmp), f"NUMANode:{logical[a.target]}", "memattr",
                  a.name, init, str(a.value)])
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return attrs, replaced


def read_memattrs(xml: str | Path) -> str:
    """`lstopo --input xml --memattrs`: what hwloc reads back."""
    lstopo, _ = tools()
    return _run([lstopo, "--input", str(xml), "--memattrs"])
