"""The benchmark families, one folder each, registered once. `numascope run`'s stages, the
report's sections and figures, compare's primary metrics and the command line all find a
family here — adding a family is its folder plus one line in BUILTIN (or `register(cls)`
from outside, as the tests' toy family does).

A family's folder holds everything that is only its own:

    families/<name>/bench.py     the family class: cases, measure (the kernel), suite_cases
    families/<name>/command.py   its command (NAME, HELP, ORDER, register, main), if it has one
    families/<name>/figures.py   its plots: figures(results) -> [(name, Figure)]
    families/<name>/*.c          its C kernel, built into the one `_core` extension (meson.build)

A family class has `family` (its one name: in records, as the stage of `numascope run`, for
`compare --family`), `title`, `primary` (the metrics compare tests by default), and the
Benchmark methods: `cases(...)`, `measure(topo, case)` and `suite_cases(topo, profile)`."""

from __future__ import annotations

import importlib
from types import ModuleType

# folder -> its family class in folder/bench.py, in the order `numascope run` measures them
BUILTIN = {
    "compute": "Compute",
    "bandwidth": "Bandwidth",
    "latency": "Latency",
    "matrix": "Matrix",
    "c2c": "C2C",
    "compress": "Compress",
    "storage": "Storage",
    "interconnect": "Interconnect",
}
_folders: dict[str, str] = {}   # folders outside this package: package name -> class name
_extra: list[type] = []
ALIASES = {"peaks": "compute"}   # the compute family's stage name before they were one


def _packages() -> dict[str, str]:
    """Every family folder (as an importable package) and its class's name, in order."""
    return {f"{__name__}.{folder}": cls for folder, cls in BUILTIN.items()} | _folders


def families() -> list[type]:
    """Every family class, in the order `numascope run` measures them."""
    return [getattr(importlib.import_module(f"{pkg}.bench"), cls)
            for pkg, cls in _packages().items()] + _extra


def _names(suffix: str) -> list[str]:
    """The families' modules whose names end in `suffix`, folder by folder (found without
    importing them)."""
    import pkgutil
    out = []
    for name in _packages():
        pkg = importlib.import_module(name)
        out += [f"{name}.{m.name}" for m in pkgutil.iter_modules(pkg.__path__)
                if f".{m.name}".endswith(suffix)]
    return out


def run_options(family: str | None = None) -> list:
    """The options families take as stages of `numascope run` (RUN_OPTIONS of a folder's
    options.py: rows whose names are keyword arguments of its family class), of one family
    or of all. Read from the options modules, so building the parser imports no bench."""
    from importlib.util import find_spec
    out = []
    for pkg in _packages():
        if family not in (None, pkg.rsplit(".", 1)[-1]) or find_spec(f"{pkg}.options") is None:
            continue
        out += getattr(importlib.import_module(f"{pkg}.options"), "RUN_OPTIONS", ())
    return out


def command_modules() -> list[ModuleType]:
    """The families' commands (bw, lat …; each folder's command.py, with NAME, HELP, ORDER,
    FLAGS and main; its flags are its options.py's TABLE): the command line finds them
    beside its own."""
    return [importlib.import_module(n) for n in _names(".command")]


def figure_names() -> list[str]:
    """The families' figure modules (figures.py, and e.g. bandwidth's tier_figures.py)."""
    return _names("figures")


def register(cls: type) -> type:
    """Add a family (usable as a class decorator); its stage runs after the built-in ones."""
    for attr in ("family", "title", "measure", "suite_cases"):
        if not hasattr(cls, attr):
            raise TypeError(f"{cls.__name__} is not a family: it has no {attr}")
    if cls not in _extra:
        _extra.append(cls)
    return cls


def unregister(cls: type) -> None:
    if cls in _extra:
        _extra.remove(cls)


def add_folder(package: str, cls: str) -> None:
    """Add a family folder that lives outside numascope (an importable package with the
    same files as a built-in one: bench.py holding class `cls`, command.py, figures.py …):
    the run line for a folder of one's own, as BUILTIN's line is for numascope's."""
    _folders[package] = cls


def remove_folder(package: str) -> None:
    _folders.pop(package, None)


def by_name(name: str) -> type | None:
    """The family class called `name` (or an old alias of it)."""
    name = ALIASES.get(name, name)
    return next((c for c in families() if c.family == name), None)
