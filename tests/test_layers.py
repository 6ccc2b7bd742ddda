"""Layers import downward only: every module under src/numascope is read with `ast`, its
numascope imports collected (module level, inside functions, under TYPE_CHECKING, relative
ones, importlib.import_module("numascope…")), and each checked against the rule of its layer.

To add a layer, add one line to LAYERS: its name and the lower modules it may import."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = SRC / "numascope"

# layer -> the numascope modules/packages it may import besides itself, lowest layer first.
# A module is ruled by the longest layer name that is it or a package above it; modules
# under no layer are not checked (yet).
LAYERS: dict[str, tuple[str, ...]] = {
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
    # what a DRAM bandwidth figure is: read by fleet, peaks, report and predict, so it
    # imports nothing (no bench, no C core)
    "numascope.families.bandwidth.resident": (),
    # published figures and the rule matching them to a host: data and plain dicts only
    "numascope.references": ("numascope.errors",),
    "numascope.benchmark": ("numascope.errors", "numascope.results.record",
                            "numascope.signals", "numascope.topology"),
    # the command kit: below the command line, beside the families (it runs their cases)
    "numascope.command": ("numascope.benchmark", "numascope.console", "numascope.errors",
                          "numascope.families", "numascope.memspec", "numascope.options",
                          "numascope.paths", "numascope.plan", "numascope.cost",
                          "numascope.report.figures", "numascope.results.record",
                          "numascope.signals", "numascope.steady"),
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


def layer_of(module: str) -> str | None:
    ruling = [layer for layer in LAYERS if _within(module, layer)]
    return max(ruling, key=len) if ruling else None


def violations(module: str, source: str, is_package: bool = False) -> list[str]:
    layer = layer_of(module)
    if layer is None:
        return []
    allowed = (layer, *LAYERS[layer])
    return [f"{module}:{line} imports {name} (layer {layer} may import only "
            f"{', '.join(allowed)})"
            for line, name in imports(source, module, is_package)
            if not any(_within(name, a) for a in allowed)]


@pytest.mark.parametrize("layer", list(LAYERS))
def test_layer_imports_only_lower_layers(layer):
    found = [v for name, f in modules().items() if layer_of(name) == layer
             for v in violations(name, f.read_text(), f.name == "__init__.py")]
    assert not found, "upward imports:\n" + "\n".join(found)


def test_every_layer_names_existing_modules():
    """A rule for a module that moved away would check nothing."""
    names = list(modules())
    for layer, allowed in LAYERS.items():
        for name in (layer, *allowed):
            assert any(_within(m, name) for m in names), f"{name}: no such module"


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
