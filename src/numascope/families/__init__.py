"""The benchmark families, one folder each, registered once. `numascope run`'s stages, the
report's sections and figures, compare's primary metrics and the command line all find a
family here — adding a family is its folder plus one line in BUILTIN (or `register(cls)`
from outside, as the tests' toy family does).

A family's folder holds everything that is only its own:

    families/<name>/bench.py     the measurement: its Params, the kernel's call, its checks,
                                 and the family class (cases, measure, suite_cases), or
    families/<name>/family.py    the family class, where it stands on modules that import
                                 bench.py (bandwidth: the sweep; latency: the chains)
    families/<name>/__init__.py  ORDER, SECTION, TOLERANCE_PCT: its place in the report,
                                 its section, its fleet tolerance
    families/<name>/headline.py  its headline lines: lines(run) -> [Headline]
    families/<name>/command.py   its command (NAME, HELP, ORDER, register, main), if it has one
    families/<name>/figures.py   its plots: figures(results) -> [(name, Figure)]
    families/<name>/*.c          its C kernel, built into the one `_core` extension (meson.build)

A family class has `family` (its one name: in records, as the stage of `numascope run`, for
`compare --family`), `title`, `primary` (the metrics compare tests by default), and the
Benchmark methods: `cases(...)`, `measure(topo, case)` and `suite_cases(topo, profile)`."""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

# folder -> its family class (in folder/family.py, else folder/bench.py), in the order
# `numascope run` measures them
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


@functools.cache
def family_module(pkg: str) -> str:
    """The module holding a folder's family class: family.py where the folder has one (a
    class that stands on modules importing bench.py), else bench.py. Looked up once per
    folder (find_spec of a module that is not there searches every path entry again; under
    the editable install each search re-runs its build check: 2 s a call here)."""
    from importlib.util import find_spec
    return f"{pkg}.family" if find_spec(f"{pkg}.family") is not None else f"{pkg}.bench"


def families() -> list[type]:
    """Every family class, in the order `numascope run` measures them."""
    return [getattr(importlib.import_module(family_module(pkg)), cls)
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


def _about(pkg: str) -> ModuleType:
    return importlib.import_module(pkg)


def ordered() -> list[tuple[str, type]]:
    """(folder package, family class) in the studies' order (each folder's ORDER: the
    report's sections, the headline lines); a family without one comes after, in the
    order it was added. A class added by `register` has no folder: ("", cls)."""
    pairs = [(pkg, getattr(importlib.import_module(family_module(pkg)), cls))
             for pkg, cls in _packages().items()] + [("", c) for c in _extra]
    return sorted(pairs, key=lambda pc: getattr(_about(pc[0]), "ORDER", 1 << 30)
                  if pc[0] else 1 << 30)


def sections() -> list[tuple[str, str, tuple[str, ...]]]:
    """The report's study sections in order: (id, title, the families it holds), from each
    folder's SECTION; a family that declares none has none (its figures go to "Other
    figures")."""
    out: dict[str, tuple[str, list[str]]] = {}
    for pkg, cls in ordered():
        sid, title = getattr(_about(pkg), "SECTION", (None, "")) if pkg else (None, "")
        if sid:
            out.setdefault(sid, (title, []))[1].append(cls.family)
    return [(sid, title, tuple(fams)) for sid, (title, fams) in out.items()]


def headline_modules() -> list[ModuleType]:
    """Each folder's headline.py (`lines(run) -> [Headline]`), in the studies' order."""
    from importlib.util import find_spec
    return [importlib.import_module(f"{pkg}.headline") for pkg, _ in ordered()
            if pkg and find_spec(f"{pkg}.headline") is not None]


def tolerance_pct(family: str) -> float | None:
    """A family's default tolerance in a fleet check (its folder's TOLERANCE_PCT), None
    when it states none."""
    name = ALIASES.get(family, family)
    pkg = f"{__name__}.{name}"
    if name in BUILTIN:                  # the folder is the family's name: no bench import
        return getattr(_about(pkg), "TOLERANCE_PCT", None)
    for pkg, cls in ordered():
        if pkg and cls.family == name:
            return getattr(_about(pkg), "TOLERANCE_PCT", None)
    return None


def names_with_folders() -> list[str]:
    """The families that have a folder, by family name: the built-in ones without
    importing a bench (their folder is their name), then those added by `add_folder`."""
    return list(BUILTIN) + [getattr(importlib.import_module(family_module(pkg)), cls).family
                            for pkg, cls in _folders.items()]


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
