"""The machine drawn as nested HTML boxes: packages → NUMA nodes → L3 domains → cores (with
their hardware threads), PCI devices on their node. Works from the plain (JSON) form of a
Topology as stored in a run record, so old runs draw without the machine."""

from __future__ import annotations

from html import escape
from typing import Any

CSS = """
.topo{display:flex;flex-wrap:wrap;gap:8px}
.pkg,.node,.l3{border:1px solid #888;border-radius:6px;padding:4px 6px;margin:3px}
.pkg{background:#f4f6fb}.node{background:#eef7ee}.l3{background:#fff8e6}
.boxes{display:flex;flex-wrap:wrap;gap:3px}
.core{border:1px solid #bbb;border-radius:3px;background:#fff;padding:1px 4px;font-size:11px}
.dev{display:inline-block;border:1px solid #a66;border-radius:3px;background:#fdeeee;
 padding:1px 4px;margin:2px;font-size:11px}
.lbl{font-size:12px;font-weight:600;color:#333}
"""


def _gib(b: Any) -> str:
    return f"{b / 2**30:.1f} GiB" if isinstance(b, (int, float)) and b else "memory unknown"


def _mib(b: Any) -> str:
    return f"{b / 2**20:.0f} MiB" if isinstance(b, (int, float)) and b else "size unknown"


def _cores_html(cores: list[dict], cpu_ids: set[int]) -> str:
    parts = []
    for c in cores:
        cpus = [x for x in c.get("cpus", []) if x in cpu_ids]
        if cpus:
            parts.append(f'<span class="core" title="core {escape(str(c.get("index")))}">'
                         f'{escape(",".join(map(str, cpus)))}</span>')
    return '<div class="boxes">' + "".join(parts) + "</div>"


def _devices_html(devs: list[dict]) -> str:
    return "".join(
        f'<span class="dev" title="{escape(str(d.get("address", "")))}">'
        f'{escape(str(d.get("kind", "")))}: {escape(str(d.get("name", "")))}</span>'
        for d in devs)


def _node_html(n: dict, topo: dict, cpu_set: set[int] | None = None) -> str:
    ncpus = set(n.get("cpus", []))
    if cpu_set is not None:
        ncpus &= cpu_set
    inner = []
    l3s = [d for d in topo.get("l3s", []) if ncpus & set(d.get("cpus", []))]
    cores = topo.get("cores", [])
    for d in l3s:
        ids = ncpus & set(d.get("cpus", []))
        inner.append(f'<div class="l3"><div class="lbl">L3 #{escape(str(d.get("index")))} '
                     f'({_mib(d.get("size_bytes"))})</div>{_cores_html(cores, ids)}</div>')
    rest = ncpus - {c for d in l3s for c in d.get("cpus", [])}
    if rest:
        inner.append(_cores_html(cores, rest))
    devs = [d for d in topo.get("devices", []) if d.get("numa_node") == n.get("id")]
    label = (f'NUMA node {escape(str(n.get("id")))} · {_gib(n.get("memory_bytes"))}'
             + (" · no CPUs" if not n.get("cpus") else ""))
    return (f'<div class="node"><div class="lbl">{label}</div>'
            f'<div class="boxes">{"".join(inner)}</div>{_devices_html(devs)}</div>')


def topology_html(topo: dict[str, Any]) -> str:
    """Nested boxes for a plain topology dict; empty string when there is none."""
    if not topo or not topo.get("cpus"):
        return ""
    nodes = {n.get("id"): n for n in topo.get("nodes", [])}
    drawn: set = set()
    parts = []
    for p in topo.get("packages", []):
        pcpus = set(p.get("cpus", []))
        inner = []
        for nid in p.get("nodes", []):
            if nid in nodes:
                inner.append(_node_html(nodes[nid], topo, pcpus))
                if set(nodes[nid].get("cpus", [])) <= pcpus:
                    drawn.add(nid)
        parts.append(f'<div class="pkg"><div class="lbl">Package {escape(str(p.get("id")))} '
                     f'· {len(pcpus)} CPU{"s" if len(pcpus) != 1 else ""}</div><div class="boxes">{"".join(inner)}</div></div>')
    for nid, n in nodes.items():   # CPU-less nodes (CXL, HBM) and nodes outside packages
        if nid not in drawn and not any(nid in p.get("nodes", [])
                                        for p in topo.get("packages", [])):
            parts.append(_node_html(n, topo))
    unplaced = [d for d in topo.get("devices", []) if d.get("numa_node") is None]
    if unplaced:
        parts.append('<div class="node"><div class="lbl">devices with unknown NUMA node</div>'
                     f'{_devices_html(unplaced)}</div>')
    return f'<div class="topo">{"".join(parts)}</div>'
