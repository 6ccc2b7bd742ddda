"""Rich rendering of a Topology: the machine tree, the distance matrix, the facts."""

from __future__ import annotations

import json

from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree as RichTree

from numascope.topology.lists import format_list
from numascope.topology.model import Cpu, Topology
from numascope.topology.render_tiers import tiers_section

_STATUS_STYLE = {"known": "green", "ambiguous": "yellow", "unknown": "red"}


def _bytes(n: int | None) -> str:
    if n is None:
        return "unknown"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            v = n / size
            return f"{v:.1f} {unit}" if v < 100 and v != int(v) else f"{round(v)} {unit}"
    return f"{n} B"


def _thread(c: Cpu) -> str:
    if not c.online:
        return f"[dim]{c.id} offline[/dim]"
    if not c.allowed:
        return f"[dim]{c.id}✗[/dim]"
    return str(c.id)


def _n(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _dev(d) -> str:
    return f"[green]{escape(str(d.kind))}[/green] {escape(str(d.name))} ({escape(str(d.address))})"


def machine_tree(topo: Topology) -> RichTree:
    vm = " · virtual machine" if topo.hypervisor else ""
    title = (f"[bold]Machine[/bold] {escape(topo.cpu_model or 'unknown CPU')}{vm}  "
             f"[dim]({escape(str(topo.source))})[/dim]")
    root = RichTree(title)
    by_id = {c.id: c for c in topo.cpus}
    dev_by_node: dict[int | None, list] = {}
    for d in topo.devices:
        dev_by_node.setdefault(d.numa_node, []).append(d)
    packages = topo.packages or []
    for p in packages:
        pn = root.add(f"[bold cyan]Package S{p.id}[/bold cyan]  {_n(len(p.cpus), 'CPU')} "
                      f"({format_list(p.cpus)})")
        for nid in p.nodes:
            node = topo.node(nid)
            span = f"  [yellow](spans S{',S'.join(map(str, node.packages))})[/yellow]" \
                if len(node.packages) > 1 else ""
            nn = pn.add(f"[bold magenta]Node N{nid}[/bold magenta]  memory "
                        f"{_bytes(node.memory_bytes)} (free {_bytes(node.free_bytes)}){span}"
                        + ("" if node.allowed else "  [dim]not allowed[/dim]"))
            here = [c for c in topo.cores if c.package == p.id and by_id[c.cpus[0]].node == nid]
            groups: dict[int | None, list] = {}
            for core in here:
                groups.setdefault(by_id[core.cpus[0]].l3, []).append(core)
            for l3, cores in groups.items():
                if l3 is None:
                    label = "[dim]no L3 reported[/dim]"
                else:
                    d = topo.l3s[l3]
                    part = "" if set(d.cpus) <= {c for k in cores for c in k.cpus} else \
                        f"  [yellow](shared with N{',N'.join(str(x) for x in d.nodes if x != nid)})" \
                        "[/yellow]"
                    label = f"[bold]L3 #{l3}[/bold] {_bytes(d.size_bytes)}{part}"
                ln = nn.add(f"{label}  {_n(len(cores), 'core')}")
                ln.add(" ".join("[" + ",".join(_thread(by_id[c]) for c in k.cpus) + "]"
                                for k in cores))
            for d in dev_by_node.get(nid, []):
                nn.add(_dev(d))
    for node in topo.nodes:
        if node.cpuless:
            nn = root.add(f"[bold magenta]Node N{node.id}[/bold magenta]  memory only: "
                          f"{_bytes(node.memory_bytes)}")
            for d in dev_by_node.get(node.id, []):
                nn.add(_dev(d))
    off = [c.id for c in topo.cpus if not c.online]
    if off:
        root.add(f"[dim]offline CPUs: {format_list(off)}[/dim]")
    if dev_by_node.get(None):
        un = root.add("[yellow]devices with unknown NUMA node[/yellow]")
        for d in dev_by_node[None]:
            un.add(f"{_dev(d)}  [dim]numa_node says -1 or "
                   "nothing[/dim]")
    return root


def distance_table(topo: Topology) -> Table | None:
    ids = topo.node_ids()
    if not any(n.distances for n in topo.nodes):
        return None
    t = Table(title="Node distances (SLIT)", show_edge=False)
    t.add_column("node")
    for b in ids:
        t.add_column(str(b), justify="right")
    for a in ids:
        t.add_row(str(a), *[str(topo.node(a).distances.get(b, "-")) for b in ids])
    return t


def _family_model(v: list) -> str:
    """[family, model] in that order (a cpu list would sort them): "family 26, model 2"."""
    return ", ".join(f"{what} {'unknown' if x is None else x}"
                     for what, x in zip(("family", "model"), v, strict=False))


def facts_table(topo: Topology) -> Table:
    t = Table(title="Inferred facts", show_edge=False, expand=False)
    t.add_column("fact", overflow="fold")
    t.add_column("value", overflow="fold")
    t.add_column("status", no_wrap=True)
    t.add_column("evidence", overflow="fold")
    for name, f in topo.facts.items():
        v = f.value
        if v is None:
            text = "unknown"
        elif isinstance(v, bool):
            text = "yes" if v else "no"
        elif v == [] or v == {}:
            text = "none"
        elif name == "cpu_family_model":
            text = _family_model(v)
        elif isinstance(v, list) and all(isinstance(x, int) for x in v):
            text = format_list(v)
        elif isinstance(v, (dict, list)):
            text = json.dumps(v)
        else:
            text = str(v)
        st = _STATUS_STYLE.get(f.status, "")
        t.add_row(escape(name), escape(text), f"[{st}]{escape(f.status)}[/{st}]",
                  escape(str(f.evidence)))
    return t


def render(topo: Topology, console: Console) -> None:
    parts: list = [machine_tree(topo)]
    dt = distance_table(topo)
    if dt is not None:
        parts.append(dt)
    parts.extend(tiers_section(topo))
    parts.append(facts_table(topo))
    for n in topo.notes:
        parts.append(f"[yellow]note:[/yellow] {escape(str(n))}")
    console.print(Group(*parts))
