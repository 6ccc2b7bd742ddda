"""Imports flow one way: every module under src/numascope is read with `ast`, its numascope
imports collected (module level, inside functions, under TYPE_CHECKING, relative ones,
importlib.import_module("numascope…")), and each checked against its band (BANDS: every
module is in one; none imports a band above its own), the finer rules of the lower bands
(NARROW), the families' own rule (a family imports its folder and the families its
__init__ says it STANDS_ON), and for circles (none, anywhere). docs/architecture.md draws
the bands."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = SRC / "numascope"

# The bands, lowest first: a module may import its own band and the ones below, never one
# above. A module is in the band of the longest prefix naming it (dotted, below
# "numascope."); every module of the package is in one (test_every_module_is_in_a_band).
BANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # what everything uses: exit codes and errors, sizes, what an option is, output paths,
    # atomic files, signals, subprocesses, the console and its JSON text, the publications
    ("basics", ("", "errors", "units", "options", "paths", "atomic", "signals", "procs",
                "console", "jsontext", "sources", "results.plain")),
    # the machine: its topology, host facts, placement, memory specs, clock, state and
    # readiness, layouts and launcher lines, its theoretical peaks, where pages landed and
    # the DRAM traffic of a kernel on its cores
    ("machine", ("topology", "host", "placement", "memspec", "clock", "sysstate", "layouts",
                 "readiness", "recipes", "peaks", "pages", "traffic")),
    # what a family is made of (besides the C core, numascope._core): the Benchmark shape,
    # results, runs and their headline lines, steady repetitions, the profiles, the cost
    # model, the plotting kit
    ("kit", ("benchmark", "results.record", "results.run", "results.headline", "steady",
             "profile", "cost", "plotting")),
    ("families", ("families",)),
    # over runs: the suite, its plan and the progress of `numascope run`, the store and
    # exports, analysis, advice, predictions, the published reference figures
    ("runs", ("suite", "plan", "run_progress", "results", "analysis", "advice", "predict",
              "references")),
    ("fleet", ("fleet",)),
    ("report", ("report",)),
    # the command kit and the commands: each family's command module (families/*/command.py,
    # *_command.py) and the fleet command's (fleet/command.py, fleet/*_command.py) stand
    # here, on the kit, as cli/ does
    ("commands", ("command",)),
    ("cli", ("cli", "__main__")),
)
BAND_INDEX = {name: i for i, (name, _) in enumerate(BANDS)}

# Within the lower bands, a module -> the modules it may import besides itself (the
# longest name that is it or a package above it rules it).
NARROW: dict[str, tuple[str, ...]] = {
    "numascope.errors": (),
    "numascope.units": ("numascope.errors",),
    "numascope.topology": ("numascope.errors",),
    "numascope.host": ("numascope.errors", "numascope.units", "numascope.topology"),
    "numascope.options": ("numascope.errors", "numascope.units"),
    "numascope.paths": ("numascope.errors",),
    # the stopping rule of --reps auto: below the families, the profiles and the report
    "numascope.steady": ("numascope.errors", "numascope.options",
                         "numascope.results.record"),
    "numascope.profile": ("numascope.errors", "numascope.steady"),
    "numascope.placement": ("numascope.errors", "numascope.topology"),
    "numascope.memspec": ("numascope.errors", "numascope.options", "numascope.placement",
                          "numascope.topology"),
    # what a DRAM bandwidth figure is: read by fleet, analysis, report and predict, so it
    # imports nothing (no bench, no C core)
    "numascope.families.bandwidth.resident": (),
    # published figures and the rule matching them to a host: data and plain dicts only
    "numascope.references": ("numascope.errors",),
    "numascope.benchmark": ("numascope.errors", "numascope.results.record",
                            "numascope.signals", "numascope.topology"),
    # the plotting kit: below the families, it knows results and their steady intervals
    "numascope.plotting": ("numascope.atomic", "numascope.console",
                           "numascope.results.record", "numascope.steady"),
}


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _is_module(name: str) -> bool:
    p = SRC.joinpath(*name.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def modules() -> dict[str, Path]:
    """Dotted name -> file of every module under src/numascope."""
    out = {}
    for f in sorted(PKG.rglob("*.py")):
        parts = f.relative_to(SRC).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def imports(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, imported module) for every numascope import in `source` of `module`.
    `from pkg import name` counts as pkg.name when that is a module, else as pkg."""
    found = []
    here = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = here[:len(here) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                found.append((node.lineno, sub if _is_module(sub) else base))
        elif (isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"):
            found.append((node.lineno, node.args[0].value))
    return sorted((line, name) for line, name in found if _within(name, "numascope"))


def _is_family_command(module: str) -> bool:
    """A family's command module (families/*/command.py, *_command.py), or the fleet
    command's (fleet/command.py, fleet/*_command.py): they stand on the command kit."""
    return (_within(module, "numascope.families") or _within(module, "numascope.fleet")) \
        and module.rsplit(".", 1)[-1].endswith("command")


def band_of(module: str) -> str | None:
    """The band of a module: the band of the longest prefix naming it; a family's command
    module is in "commands"."""
    if _is_family_command(module):
        return "commands"
    rest = module.removeprefix("numascope").removeprefix(".")
    best: tuple[int, str | None] = (-1, None)
    for name, prefixes in BANDS:
        for pre in prefixes:
            if (rest == pre or (pre and rest.startswith(pre + ".")) or
                    (pre == "" and rest == "")) and len(pre) > best[0]:
                best = (len(pre), name)
    return best[1]


def _family(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[:2] == ["numascope", "families"] and len(parts) > 2 else None


def stands_on(family: str) -> tuple[str, ...]:
    """The families a family's folder declares it stands on (its __init__'s STANDS_ON)."""
    tree = ast.parse(PKG.joinpath("families", family, "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "STANDS_ON"
                                                for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    return ()


def narrow_of(module: str) -> str | None:
    ruling = [name for name in NARROW if _within(module, name)]
    return max(ruling, key=len) if ruling else None


def violations(module: str, source: str, is_package: bool = False) -> list[str]:
    band = band_of(module)
    if band is None:
        return [f"{module}: in no band"]
    found = []
    narrow = narrow_of(module)
    for line, name in imports(source, module, is_package):
        if narrow is not None and not any(_within(name, a)
                                          for a in (narrow, *NARROW[narrow])):
            found.append(f"{module}:{line} imports {name} ({narrow} may import only "
                         f"{', '.join(NARROW[narrow]) or 'nothing of numascope'})")
            continue
        there = band_of(name)
        if there is None or BAND_INDEX[there] > BAND_INDEX[band]:
            found.append(f"{module}:{line} imports {name} (band {band} may not import band "
                         f"{there})")
            continue
        mine, theirs = _family(module), _family(name)
        if mine and theirs and mine != theirs and theirs not in stands_on(mine):
            found.append(f"{module}:{line} imports {name} (family {mine} stands only on "
                         f"{', '.join(stands_on(mine)) or 'no other family'}: its "
                         "__init__'s STANDS_ON)")
    return found


def _graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: {imp for _, imp in imports(f.read_text(), name, f.name == "__init__.py")
                   if imp in mods and imp != name}
            for name, f in mods.items()}


@pytest.mark.parametrize("band", [name for name, _ in BANDS])
def test_a_band_imports_only_itself_and_lower_bands(band):
    found = [v for name, f in modules().items() if band_of(name) == band
             for v in violations(name, f.read_text(), f.name == "__init__.py")]
    assert not found, "imports running up:\n" + "\n".join(found)


def test_every_module_is_in_a_band():
    assert not [m for m in modules() if band_of(m) is None]


def test_every_narrow_rule_names_existing_modules():
    names = list(modules())
    for rule, allowed in NARROW.items():
        for name in (rule, *allowed):
            assert any(_within(m, name) for m in names), f"{name}: no such module"


def test_every_band_names_existing_modules():
    """A rule for a module that moved away would check nothing."""
    names = [m.removeprefix("numascope").removeprefix(".") for m in modules()]
    for band, prefixes in BANDS:
        for pre in prefixes:
            assert any(n == pre or n.startswith(pre + ".") for n in names), \
                f"{band}: {pre or 'numascope'}: no such module"


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of `graph`: Tarjan's strongly connected components of more than
    one module."""
    import sys
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_round_a_circle():
    """No import cycle, at module level or inside functions."""
    assert not circles(_graph())


def test_a_circle_is_found():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_families_stand_on_each_other_one_way():
    fams = sorted(p.name for p in PKG.joinpath("families").iterdir()
                  if p.joinpath("__init__.py").is_file())
    for f in fams:
        for g in stands_on(f):
            assert g in fams, f"{f} stands on {g}: no such family"
            assert f not in stands_on(g), f"{f} and {g} stand on each other"


def test_the_walk_sees_every_kind_of_import():
    got = {name for _, name in imports(PKG.joinpath("topology", "reader.py").read_text(),
                                       "numascope.topology.reader")}
    assert {"numascope.topology.files", "numascope.topology.pci"} <= got   # pci: in a function
    got = {name for _, name in imports(PKG.joinpath("topology", "__init__.py").read_text(),
                                       "numascope.topology", is_package=True)}
    assert "numascope.topology.reader" in got


def test_an_upward_import_is_caught():
    src = ("import json\n"
           "from . import files\n"
           "from .. import host\n"
           "def f():\n"
           "    from numascope.results.record import BenchResult\n"
           "    import importlib\n"
           "    return importlib.import_module('numascope.analysis')\n")
    found = violations("numascope.topology.x", src)
    assert [v.split(" (")[0] for v in found] == [
        "numascope.topology.x:3 imports numascope.host",
        "numascope.topology.x:5 imports numascope.results.record",
        "numascope.topology.x:7 imports numascope.analysis"]
    assert violations("numascope.host", "from numascope.results import store\n")
    assert not violations("numascope.host", "from numascope.topology.files import Tree\n")
    assert not violations("numascope.cli.topo", "from numascope.results import store\n")
    # the families: their own folder, and the families their __init__ says they stand on
    assert violations("numascope.families.c2c.bench",
                      "from numascope.families.latency.bench import LatencyParams\n")
    assert not violations("numascope.families.matrix.bench",
                          "from numascope.families.latency.bench import LatencyParams\n")
    assert violations("numascope.report.figures.x", "from numascope.command import runner\n")
    assert not violations("numascope.families.c2c.command",
                          "from numascope.command import runner\n")


def test_only_the_command_line_imports_the_command_line():
    found = [f"{name}:{line}" for name, f in modules().items()
             if not _within(name, "numascope.cli") and name != "numascope.__main__"
             for line, imp in imports(f.read_text(), name, f.name == "__init__.py")
             if _within(imp, "numascope.cli")]
    assert not found, found


def test_a_family_s_measurement_needs_no_command():
    """A family's bench, options, figures and helpers work without the command kit (a
    library caller, `numascope run`'s suite): only its command.py imports the kit."""
    found = [f"{name}:{line} imports {imp}" for name, f in modules().items()
             if _within(name, "numascope.families") and not name.endswith("command")
             for line, imp in imports(f.read_text(), name, f.name == "__init__.py")
             if _within(imp, "numascope.command") or _within(imp, "numascope.cli")]
    assert not found, found
