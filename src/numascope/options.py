"""Options declared once, fio-style: each option of a family is one `Option` in its table —
flag, kind, default, unit, bounds, rule and help — and everything else comes from there:

    the argparse flag         numascope.command.flags.add_options(parser, TABLE)
    the checks                check(TABLE, values): one set of rules, messages that name the
                              flag the user typed; the C side gets checked values and asserts
    the defaults              TABLE["stride"].default (a Params dataclass reads it, never a copy)
    the docs' option table    markdown(TABLE), kept current by tests/test_options_docs.py

Placement (--cpus, --cpunodebind, --membind, --interleave, --weighted-interleave, --pages,
--threads) is the one shared table PLACEMENT; a family picks the flags it takes with
`placement(...)` and may give a flag its own help or default, never its own spelling.

This module sits low: it imports nothing of numascope but errors and units."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from numascope.errors import UserError

KINDS = ("str", "int", "float", "size", "ints", "choice", "switch")


@dataclass(frozen=True)
class Option:
    """One option. `default` None means "decided at run time" (say how in `default_text`);
    `rule` is the family's own check (e.g. a power of two), called with the converted value
    and the flag, raising UserError; `low`/`high` bound numbers and sizes (inclusive)."""

    flag: str                                 # "--stride"
    help: str
    kind: str = "str"                         # one of KINDS
    default: Any = None
    unit: str = ""                            # "B", "ns", "s", "iterations" …
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    rule: Callable[[Any, str], Any] | None = None
    rule_text: str = ""                       # the rule in words, for the docs
    default_text: str = ""                    # how a None default is decided
    metavar: str | None = None
    dest: str | None = None                   # argparse dest; default from the flag
    hidden: tuple[str, ...] = ()              # older spellings, still accepted, not listed
    group: str = ""                           # "placement": argparse group and docs section
    exclusive: str = ""                       # options sharing a name exclude each other
    meaning: str = ""                         # numactl's words, where the flag is numactl's
    noun: str = ""                            # what a bound's message calls the value
    repeat: bool = False                      # may be given several times: a list of values
    const: Any = None                         # the value of the flag given without one
    only_with: str = ""                       # its mode: "loaded", "what=both|latency",
                                              # "hpl|hpl_n" (any), "!no_compute" (not that)

    def __post_init__(self) -> None:
        assert self.flag.startswith("--"), self.flag
        assert self.kind in KINDS, self.kind
        assert self.kind != "choice" or self.choices, self.flag

    @property
    def name(self) -> str:
        return self.dest or self.flag[2:].replace("-", "_")

    def convert(self, text: Any, flag: str | None = None) -> Any:
        """The value `text` (as typed) means, checked against the kind, bounds and rule;
        UserError naming `flag` (the spelling the user typed) otherwise. A repeated option
        (a list) has each value checked by its kind, then the rule sees them all."""
        flag = flag or self.flag
        if self.repeat and isinstance(text, (list, tuple)):
            value: Any = [self._one(v, flag) for v in text]
        else:
            value = self._one(text, flag)
        if value is None:
            return None
        if self.rule is not None:
            out = self.rule(value, flag)
            value = value if out is None else out
        if self.kind == "float":     # NaN passes every bound; the family's rule speaks first
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, float) and not math.isfinite(v):
                    raise UserError(f"{flag} {v}: {self._expect()} (a finite one)")
        return value

    def _one(self, text: Any, flag: str) -> Any:
        if self.kind == "switch" or not isinstance(text, str):
            value = text
        else:
            if not text.strip():
                raise UserError(f"{flag} is empty: {self._expect()}")
            value = self._parse(text.strip(), flag)
        if value is None:
            return None
        if self.kind in ("int", "float", "size"):
            self._bounds(value, flag)
        elif self.kind == "ints":
            for v in value:
                self._bounds(v, flag)
        elif self.kind == "choice" and value not in self.choices:
            raise UserError(f"{flag} {value!r}: choose one of {', '.join(self.choices)}")
        return value

    def _parse(self, text: str, flag: str) -> Any:
        from numascope.units import parse_size
        if self.kind == "size":            # its message ("bad size …", "larger than zero")
            try:                           # after the flag the user typed
                return parse_size(text)
            except UserError as e:
                raise UserError(f"{flag}: {e}") from None
        try:
            if self.kind == "int":
                return int(text)
            if self.kind == "float":
                return float(text)
            if self.kind == "ints":     # as every list option: no empty item ("1,,2", "1,")
                items = text.split(",")
                if any(not x.strip() for x in items):
                    raise UserError(f"{flag} {text!r}: an empty item in the list")
                return [int(x) for x in items]
        except ValueError:
            raise UserError(f"{flag} {text!r}: {self._expect()}") from None
        return text

    def _bounds(self, v: float, flag: str) -> None:
        unit = f" {self.unit}" if self.unit and self.kind != "size" else ""
        what = f"{flag}: {self.noun}" if self.noun else flag
        if self.low is not None and v < self.low:
            raise UserError(f"{what} must be at least {_num(self.low)}{unit} (got {v})")
        if self.high is not None and v > self.high:
            raise UserError(f"{what} must be at most {_num(self.high)}{unit} (got {v})")

    def _expect(self) -> str:
        return {"int": "expected a whole number", "float": "expected a number",
                "size": "expected a size such as 64K, 256M or 1G",
                "ints": "expected numbers such as 0,100,1000",
                "choice": f"choose one of {', '.join(self.choices)}"}.get(
                    self.kind, f"give a value{f' such as {self.metavar}' if self.metavar else ''}")

    def default_words(self) -> str:
        """The default as the docs and --help say it."""
        if self.kind == "switch":
            return "on" if self.default else "off"
        if self.default is None:
            return self.default_text or "none"
        if self.kind == "size":
            from numascope.units import format_bytes
            return format_bytes(self.default)
        if self.kind == "ints":
            return ",".join(str(v) for v in self.default)
        return f"{self.default}{f' {self.unit}' if self.unit and self.unit != 'B' else ''}"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


@dataclass(frozen=True)
class Table:
    """A family's options, in the order --help and the docs list them."""

    family: str
    options: tuple[Option, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        names = [o.name for o in self.options]
        assert len(names) == len(set(names)), f"{self.family}: an option declared twice"

    def __getitem__(self, name: str) -> Option:
        for o in self.options:
            if o.name == name or o.flag == name:
                return o
        raise KeyError(name)

    def __iter__(self) -> Iterator[Option]:
        return iter(self.options)

    def __add__(self, more: Iterable[Option]) -> Table:
        return Table(self.family, self.options + tuple(more))

    def defaults(self) -> dict[str, Any]:
        return {o.name: o.default for o in self.options}


def check(table: Table, values: dict[str, Any]) -> dict[str, Any]:
    """Each option's value (as typed, or its default when not given) converted and checked;
    the names are the options' dests. UserError on the first bad one."""
    typed = values.get("_typed") or {}       # the spelling the user typed, where known
    out: dict[str, Any] = {}
    for o in table:
        given = values.get(o.name, o.default)
        out[o.name] = None if given is None else o.convert(given, typed.get(o.name))
    for o in table:                          # an option given outside its mode is an error
        if o.only_with and o.name in typed and not _in_mode(o.only_with, out):
            raise UserError(f"{typed[o.name]} {_mode_words(table, o.only_with)}")
    return out


def _flag_of(table: Table, name: str) -> str:
    try:
        return table[name].flag
    except KeyError:
        return f"--{name.replace('_', '-')}"


def _mode_words(table: Table, only_with: str) -> str:
    """What an option outside its mode is told: "applies only with --loaded: …"."""
    if only_with.startswith("!"):
        return f"does not apply with {_flag_of(table, only_with[1:])}"
    name, eq, want = only_with.partition("=")
    mode = (f"{_flag_of(table, name)} {want.replace('|', ' or ')}" if eq else
            " or ".join(_flag_of(table, n) for n in name.split("|")))
    return f"applies only with {mode}: leave it out, or add {mode}"


def _in_mode(only_with: str, values: dict[str, Any]) -> bool:
    """Whether `values` are in the mode: "sweep" (a switch on), "hpl|hpl_n" (any of them
    given), "what=both|latency" (one of these values), "!no_compute" (that switch off)."""
    if only_with.startswith("!"):
        return not values.get(only_with[1:])
    name, eq, want = only_with.partition("=")
    if eq:
        return values.get(name) in want.split("|")
    return any(values.get(n) for n in name.split("|"))


def thread_counts(value: Any, flag: str = "--threads", *, many: bool = False) -> Any:
    """--threads as one count (or, with `many`, a list such as 1,2,4): the rule every
    family's --threads row uses."""
    parts = [s.strip() for s in str(value).split(",")]
    try:
        counts = [int(s) for s in parts]
    except ValueError:
        raise UserError(f"{flag} {value!r}: expected a count such as 4"
                        + (" or a list such as 1,2,4" if many else "")) from None
    if any(c < 1 for c in counts):
        raise UserError(f"{flag} must be at least 1 (got {value})")
    if not many:
        if len(counts) != 1:
            raise UserError(f"{flag} {value!r}: one count here")
        return counts[0]
    return counts


# -- placement: one table every family picks from ------------------------------------------

PAGE_KINDS = ("none", "thp", "hugetlb")
DEFAULT_PAGES = "thp"         # a family's own default (lat: base pages) is in its table
WHERE = "0-3,8-11, S0 (package), N1 (node), L3:5, all"

PLACEMENT = Table("placement", (
    Option("--cpus", "run on these CPUs", metavar="LIST", group="placement",
           meaning="numactl --physcpubind, plus numascope's domains", default_text="all"),
    Option("--cpunodebind", "run on the CPUs of these NUMA nodes (same as --cpus N0,N1)",
           metavar="NODES", group="placement", meaning="numactl --cpunodebind"),
    Option("--membind", "allocate memory on these NUMA nodes only (default: first touch)",
           metavar="NODES", group="placement", exclusive="memory",
           meaning="numactl --membind", default_text="first touch"),
    Option("--interleave", "interleave memory page by page over these NUMA nodes",
           metavar="NODES", group="placement", exclusive="memory",
           meaning="numactl --interleave"),
    Option("--weighted-interleave",
           "N0:3,N1:1: pages in this ratio, placed by numascope; 0,1: the kernel's weighted "
           "interleave with the system weights (Linux >= 6.9)", metavar="SPEC",
           group="placement", exclusive="memory", meaning="numactl --weighted-interleave"),
    Option("--pages", "page kind: none (base pages), thp (transparent huge pages), hugetlb "
           "(the reserved pool)", kind="choice", choices=PAGE_KINDS, default=DEFAULT_PAGES,
           group="placement"),
    Option("--threads", "number of threads", metavar="N", group="placement",
           default_text="one per CPU"),
))


def placement(*names: str, **changes: dict[str, Any]) -> tuple[Option, ...]:
    """The placement options `names` (flags or dests), each with the family's `changes`
    (e.g. cpus={"help": "the chaser's CPU"}, pages={"default": "none"})."""
    out = []
    for n in names:
        o = PLACEMENT[n if n.startswith("--") else f"--{n.replace('_', '-')}"]
        out.append(replace(o, **changes.get(o.name, {})))
    return tuple(out)


# -- the docs' option table -----------------------------------------------------------------

def markdown(table: Table) -> str:
    """The option table of a family's doc page (between its `<!-- options -->` markers)."""
    rows = ["| option | default | unit | accepted | meaning |", "|---|---|---|---|---|"]
    for o in table:
        if o.kind == "choice":
            accepted = " \\| ".join(o.choices)
        elif o.low is not None or o.high is not None:
            lo = "" if o.low is None else _num(o.low)
            hi = "" if o.high is None else _num(o.high)
            accepted = f"{lo} … {hi}".strip()
        else:
            accepted = o.metavar or o.kind
        if o.rule_text:
            accepted += f"; {o.rule_text}"
        if o.repeat:
            accepted += "; repeatable"
        if o.only_with:
            words = _mode_words(table, o.only_with).split(":")[0]
            accepted += f"; {words.replace('applies ', '')}"
        meaning = o.help + (f" ({o.meaning})" if o.meaning else "")
        unit = o.unit or ("B" if o.kind == "size" else "")
        rows.append(f"| `{o.flag}` | {o.default_words()} | {unit} | {accepted} | "
                    f"{meaning.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


MARK = re.compile(r"(<!-- options: (?P<mod>[\w.]+) -->\n)(?P<body>.*?)(<!-- /options -->)", re.DOTALL)


def render_docs(text: str) -> str:
    """`text` (a doc page) with each generated option table made current: the lines between
    `<!-- options: numascope.families.X.options -->` and `<!-- /options -->` are that
    module's TABLE as markdown(). scripts/option-docs.py writes them; a test checks them."""
    import importlib

    def table(m: re.Match[str]) -> str:
        mod = importlib.import_module(m.group("mod"))
        return m.group(1) + markdown(mod.TABLE) + m.group(4)
    return MARK.sub(table, text)
