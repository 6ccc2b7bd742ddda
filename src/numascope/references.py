"""Published reference figures, shipped as data (data/references.csv) with their citations,
and the one rule that says when a figure may be set beside this host's.

    load(path=None) -> [Reference]        the table, every row checked (UserError naming it)
    matches(host) -> [Match]              the rows this host may be compared with
    mismatches(host, ref) -> [str]        why a row is not one of them (empty: it matches)
    measured_otherwise(match, how) -> [str]  why a figure measured `how` is not the match's
                                          quantity measured the same way (empty: it is)
    percent_of(match, measured) -> float  measured as % of the (normalised) published figure
    select(rows, cpu, quantity) -> [Reference]   the rows of a CPU text and a quantity
    for_host(host, rows) -> (matches, same CPU, [(row, why)])   what `references --run` says

A row matches only when the CPU model, the memory mode and the DIMM population (channels
populated per socket and MT/s) all match, each read from the run record's host dict: never on
the model name alone (a virtual machine says "AMD EPYC Processor"). The model must appear in
the host's model name as whole words: "EPYC 7601" is not "EPYC 7601P" (another part number,
single-socket only; a row must name the part it measured). The memory mode must be known, not
ambiguous ("NPS1|L3-as-NUMA", a guest's virtual layout). The DIMMs must be known: read from
SMBIOS or given with --memory; unknown DIMMs match nothing, because a reference measured on 8
channels says nothing of a host that may have 4. A row that names several models or gives a
range, or lacks its own memory mode or DIMMs, is listed (`numascope references`) but never
matched.

Normalisations, each said in Match.notes: a figure for the whole host ("scope" host) of an
additive quantity (bandwidth, FLOP/s) is scaled by this host's sockets over the reference's;
an HPL efficiency published against a base-clock peak is re-expressed against a peak at this
host's measured clock (numascope's FLOP/s peak uses the clock it measures). Units were
normalised in the table itself (its note column says where: "the text writes Gbit/s").

A row that matches the host is set beside a figure only when that figure is the same
quantity measured the same way: each of the row's `reach` (between hosts or within a
host), `path` (where the ranks or threads sat), `kernel` (triad, read, osu_latency …) and
`threads` (threads or ranks of the whole figure) that the publication states must be the
figure's own (its `how`), and the match names them; a field the figure does not know, or
holds otherwise, is no match ("a figure is what its label says"). A Naples OSU latency of
two hosts over InfiniBand is never set beside a same-L3 pair's shared-memory latency, nor
a triad's remote/local ratio beside the matrix's read kernel's.

What was kept of the studies' figures (the 62 rows of the project's shared table of
published figures), and what was left out and why, is in docs/references.md."""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from numascope.errors import UserError

TABLE = Path(__file__).parent / "data" / "references.csv"

# quantity id -> (unit, what it is). The report summary uses these ids.
QUANTITIES: dict[str, tuple[str, str]] = {
    "triad_all_cores": ("GB/s", "STREAM triad, every core"),
    "triad_half_cores": ("GB/s", "STREAM triad, half the cores"),
    "triad_one_per_l3": ("GB/s", "STREAM triad, one core per L3 domain (CCX)"),
    "triad_l3": ("GB/s", "STREAM triad, every core of one L3 domain, local memory"),
    "triad_one_core": ("GB/s", "STREAM triad, one core, local memory"),
    "triad_node": ("GB/s", "STREAM triad, every core of one NUMA node, local memory"),
    "remote_local_ratio": ("x", ("triad bandwidth from a remote node / from the local "
                                 "node, below 1; the hop is the scope")),
    "idle_latency": ("ns", "idle load-to-use latency, local memory"),
    "remote_latency": ("ns", "idle latency to a remote node's memory"),
    "hpl_efficiency": ("%", "HPL as % of the FP64 peak (peak_clock_ghz: the peak's clock)"),
    "hpl_gflops": ("GFLOP/s", "HPL, FP64"),
    "iops_per_drive": ("IOPS", "4 KiB random reads per drive"),
    "mpi_latency": ("µs", ("MPI ping-pong latency, small messages, one pair (reach and path: "
                           "between two hosts or inside one, and where)")),
    "mpi_bandwidth": ("GB/s", ("MPI bandwidth, one pair, one direction, large messages "
                               "(reach and path as for the latency)")),
    "mpi_bibandwidth": ("GB/s", "MPI bandwidth, one pair, both directions together"),
    "mpi_multi_bandwidth": ("GB/s", "MPI aggregate bandwidth of many pairs (osu_mbw_mr)"),
    "compress_sum_peak": ("GB/s", "decompress + sum, best over thread counts"),
    "compress_sum": ("GB/s", "decompress + sum at the thread count the method names"),
    "compress_ratio": ("x", "compression ratio of the data the method names"),
    "plain_sum": ("GB/s", "sum of uncompressed data, best over thread counts"),
    "dram_peak": ("GB/s", "theoretical DRAM bandwidth: channels x MT/s x 8 B"),
    "xgmi_peak": ("GB/s", "theoretical inter-socket link bandwidth, both directions"),
}
# quantities that add up across sockets: a whole-host figure scales with the socket count
ADDITIVE = frozenset({"triad_all_cores", "triad_half_cores", "triad_one_per_l3",
                      "hpl_gflops", "dram_peak", "plain_sum", "compress_sum",
                      "compress_sum_peak"})
SCOPES = ("host", "socket", "node", "L3", "core", "drive", "remote node, same socket",
          "remote node, other socket", "rank pair")
SMT = ("on", "off", "unknown")
REACHES = ("between hosts", "within a host")
# how a figure was measured, beyond its quantity and scope: a row's stated fields must be
# the figure's own (measured_otherwise); "" / None: the publication does not say
HOW = ("reach", "path", "kernel", "threads")
COLUMNS = ("id", "cpu_family", "cpu_model", "cpu_name", "sockets", "memory_mode", "channels",
           "dimms_per_channel", "mts", "smt", "links", "quantity", "value", "value_high",
           "unit", "scope", *HOW, "method", "peak_clock_ghz", "title", "lab_authors", "date",
           "url", "note")
REQUIRED = ("id", "cpu_family", "sockets", "quantity", "value", "unit", "scope", "method",
            "title", "lab_authors", "date")
MODELS_SEP = ";"   # a row measured across several models names them all, separated by ";"


@dataclass(frozen=True)
class Reference:
    """One published figure, with the settings it was measured under and its citation.
    Empty text is "" and an unstated number None: "not stated by the publication"."""

    id: str
    cpu_family: str          # "AMD EPYC 7001"
    cpu_model: str           # as /proc/cpuinfo's model name holds it: "EPYC 7601"
    cpu_name: str            # "Naples"
    sockets: int
    memory_mode: str         # numascope's names: NPS1/2/4, SNC2, "SNC off", L3-as-NUMA …
    channels: int | None     # populated memory channels per socket
    dimms_per_channel: int | None
    mts: int | None          # the speed the DIMMs ran at
    smt: str                 # on / off / unknown
    links: str               # inter-socket links in --links syntax ("xgmi:4x16@32"), or ""
    quantity: str            # an id of QUANTITIES
    value: float
    value_high: float | None  # the top of a range the publication gives, else None
    unit: str
    scope: str               # one of SCOPES
    reach: str               # "between hosts" | "within a host" | "" (not an MPI figure)
    path: str                # where the ranks sat: "same L3", "HCA's node" …; "" unstated
    kernel: str              # triad, read, osu_latency, pointer chase, full random …
    threads: int | None      # threads or ranks of the whole figure (every socket's)
    method: str
    peak_clock_ghz: float | None  # the clock of the peak a % of peak was computed against
    title: str
    lab_authors: str
    date: str                # YYYY, YYYY-MM or YYYY-MM-DD
    url: str
    note: str

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(m.strip() for m in self.cpu_model.split(MODELS_SEP) if m.strip())

    @property
    def citation(self) -> str:
        return f"{self.lab_authors}, '{self.title}', {self.date}"

    @property
    def how(self) -> dict[str, Any]:
        """The fields of HOW the publication states."""
        return {k: getattr(self, k) for k in HOW if getattr(self, k) not in ("", None)}

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)} | {
            "citation": self.citation}


@dataclass(frozen=True)
class Match:
    ref: Reference
    quantity: str
    value: float             # the published figure, normalised to this host (see notes)
    unit: str
    matched: tuple[str, ...]  # the fields that matched: "CPU model", "memory mode", …
    notes: tuple[str, ...]   # the normalisations applied, and what could not be checked
    # how it was measured (the row's stated HOW fields; threads scaled to this host's
    # sockets for a whole-host figure): what a figure must have been measured as
    how: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.ref.id, "quantity": self.quantity, "value": self.value,
                "unit": self.unit, "matched": list(self.matched), "notes": list(self.notes),
                "how": dict(self.how), "published": self.ref.value, "scope": self.ref.scope,
                "method": self.ref.method, "citation": self.ref.citation,
                "url": self.ref.url}


# -- loading -------------------------------------------------------------------------------

def _int(text: str, name: str) -> int | None:
    if not text:
        return None
    try:
        v = int(text)
    except ValueError:
        raise ValueError(f"{name} {text!r} is not a whole number") from None
    if v <= 0:
        raise ValueError(f"{name} {v} is not positive")
    return v


def _float(text: str, name: str) -> float | None:
    if not text:
        return None
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"{name} {text!r} is not a number") from None
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} {text!r} is not a positive number")
    return v


def _row(d: dict[str, str]) -> Reference:
    d = {k: (v or "").strip() for k, v in d.items()}
    missing = [c for c in REQUIRED if not d[c]]
    if missing:
        raise ValueError(f"empty {', '.join(missing)}")
    q = d["quantity"]
    if q not in QUANTITIES:
        raise ValueError(f"quantity {q!r} is not one of the vocabulary "
                         f"({', '.join(QUANTITIES)})")
    if d["unit"] != QUANTITIES[q][0]:
        raise ValueError(f"unit {d['unit']!r} is not the unit of {q} ({QUANTITIES[q][0]})")
    if d["scope"] not in SCOPES:
        raise ValueError(f"scope {d['scope']!r} is not one of {', '.join(SCOPES)}")
    if d["reach"] and d["reach"] not in REACHES:
        raise ValueError(f"reach {d['reach']!r} is not one of {', '.join(REACHES)}")
    if q.startswith("mpi_") and not d["reach"]:
        raise ValueError(f"an MPI figure ({q}) must say its reach: {' or '.join(REACHES)}")
    smt = d["smt"] or "unknown"
    if smt not in SMT:
        raise ValueError(f"smt {smt!r} is not on, off or unknown")
    if not re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", d["date"]):
        raise ValueError(f"date {d['date']!r} is not YYYY, YYYY-MM or YYYY-MM-DD")
    if d["url"] and not re.fullmatch(r"https?://\S+", d["url"]):
        raise ValueError(f"url {d['url']!r} is not an http(s) address")
    value = _float(d["value"], "value")
    high = _float(d["value_high"], "value_high")
    if high is not None and value is not None and high <= value:
        raise ValueError(f"value_high {high:g} is not above value {value:g}")
    return Reference(
        id=d["id"], cpu_family=d["cpu_family"], cpu_model=d["cpu_model"],
        cpu_name=d["cpu_name"], sockets=_int(d["sockets"], "sockets") or 0,
        memory_mode=d["memory_mode"], channels=_int(d["channels"], "channels"),
        dimms_per_channel=_int(d["dimms_per_channel"], "dimms_per_channel"),
        mts=_int(d["mts"], "mts"), smt=smt, links=d["links"], quantity=q,
        value=value or 0.0, value_high=high, unit=d["unit"], scope=d["scope"],
        reach=d["reach"], path=d["path"], kernel=d["kernel"],
        threads=_int(d["threads"], "threads"), method=d["method"], peak_clock_ghz=_float(d["peak_clock_ghz"], "peak_clock_ghz"),
        title=d["title"], lab_authors=d["lab_authors"], date=d["date"], url=d["url"],
        note=d["note"])


def load(path: str | Path | None = None) -> list[Reference]:
    """The table (the shipped one unless `path`), every row checked: a malformed row is a
    UserError naming the file, its line and its id."""
    p = Path(path) if path is not None else TABLE
    try:
        with open(p, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = tuple(reader.fieldnames or ())
            if header != COLUMNS:
                lack = [c for c in COLUMNS if c not in header]
                extra = [c for c in header if c not in COLUMNS]
                raise UserError(f"{p}: the header is not the references table's columns"
                                + (f"; missing {', '.join(lack)}" if lack else "")
                                + (f"; unknown {', '.join(extra)}" if extra else "")
                                + ("" if lack or extra else "; columns out of order"))
            refs, seen = [], set()
            for d in reader:
                where = f"{p} line {reader.line_num}"
                if None in d or any(v is None for v in d.values()):
                    n = sum(v is not None for k, v in d.items() if k is not None)
                    raise UserError(f"{where}: {len(header)} columns expected, the row has "
                                    f"{n + len(d.get(None) or [])}")
                try:
                    ref = _row(d)
                except ValueError as e:
                    raise UserError(f"{where} ({d.get('id') or 'no id'}): {e}") from None
                if ref.id in seen:
                    raise UserError(f"{where}: id {ref.id!r} repeats an earlier row's")
                seen.add(ref.id)
                refs.append(ref)
    except OSError as e:
        raise UserError(f"cannot read the references table {p}: {e.strerror or e}") from None
    except (UnicodeDecodeError, csv.Error) as e:
        raise UserError(f"{p}: not a readable CSV table ({e})") from None
    return refs


# -- matching ------------------------------------------------------------------------------

def _words(text: str) -> str:
    """Case, spacing and trademark signs aside: Intel writes "Xeon(R) Platinum 8380"."""
    return " ".join(re.sub(r"\((r|tm)\)", " ", text.casefold()).split())


def model_matches(ref_model: str, host_model: str | None) -> bool:
    """The reference's model as whole words of the host's model name, case, spacing and
    (R)/(TM) aside: "EPYC 7601" is in "AMD EPYC 7601 32-Core Processor", not in
    "…7601P…"; "Xeon Platinum 8380" is in "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz"."""
    if not ref_model or not host_model:
        return False
    pat = r"(?<![0-9a-z])" + re.escape(_words(ref_model)) + r"(?![0-9a-z])"
    return re.search(pat, _words(host_model)) is not None


def _mode(host: dict[str, Any]) -> tuple[str | None, str]:
    """(memory mode, its status) as the record's topology facts give it."""
    fact = (host.get("facts") or {}).get("memory_mode") or {}
    value = fact.get("value", host.get("memory_mode"))
    return (str(value) if value is not None else None), fact.get("status", "not recorded")


def _dram(host: dict[str, Any]) -> dict[str, Any]:
    return ((host.get("peaks") or {}).get("dram")) or {}


def mismatches(host: dict[str, Any], ref: Reference) -> list[str]:
    """Why `ref` cannot be set beside this host (a run record's host dict); empty when it
    can. Every reason is given, not only the first."""
    why = []
    if len(ref.models) != 1:
        why.append("the figure is across several models" if ref.models else
                   "the publication names no CPU model, only the family")
    elif not model_matches(ref.models[0], host.get("cpu_model")):
        why.append(f"CPU model: the reference is {ref.models[0]}, this host is "
                   f"{host.get('cpu_model') or 'unknown'}")
    if ref.value_high is not None:
        why.append(f"the publication gives a range ({ref.value:g}-{ref.value_high:g} "
                   f"{ref.unit}), not one figure")
    mode, status = _mode(host)
    if not ref.memory_mode:
        why.append("the publication does not state its memory mode")
    elif status != "known":
        why.append(f"memory mode: this host's is {status} ({mode or 'not read'}), so it "
                   f"cannot be matched to {ref.memory_mode}")
    elif _words(mode or "") != _words(ref.memory_mode):
        why.append(f"memory mode: the reference ran {ref.memory_mode}, this host {mode}")
    why += _dimm_mismatch(host, ref)
    packages = host.get("packages")
    if ref.scope == "remote node, other socket" and not (isinstance(packages, int)
                                                         and packages >= 2):
        why.append("the figure is across sockets and this host has one")
    elif ref.quantity.startswith("mpi_") and packages != ref.sockets:
        why.append(f"sockets: an MPI figure depends on where ranks sit against the network "
                   f"card's socket; the reference had {ref.sockets}, this host {packages}")
    return why


def _dimm_mismatch(host: dict[str, Any], ref: Reference) -> list[str]:
    if ref.channels is None or ref.mts is None:
        return ["the publication does not state its DIMM population"]
    d = _dram(host)
    if d.get("status") != "known" or not d.get("channels") or not d.get("mts"):
        return [(f"DIMM population: not known on this host (SMBIOS not read, no --memory "
                 f"given); the reference ran {ref.channels} channels per socket at "
                 f"{ref.mts} MT/s")]
    packages = host.get("packages") or 1
    per, rest = divmod(int(d["channels"]), int(packages))
    why = []
    if rest or per != ref.channels:
        why.append(f"DIMM population: the reference ran {ref.channels} channels per socket, "
                   f"this host has {d['channels']} on {_sockets(packages)}")
    if int(d["mts"]) != ref.mts:
        why.append(f"DIMM speed: the reference ran {ref.mts} MT/s, this host {d['mts']} MT/s")
    dpc = d.get("dimms_per_channel")
    if dpc is not None and ref.dimms_per_channel is not None and dpc != ref.dimms_per_channel:
        why.append(f"DIMMs per channel: the reference had {ref.dimms_per_channel}, "
                   f"this host {dpc}")
    return why


def _sockets(n: int) -> str:
    return f"{n} socket{'s' if n != 1 else ''}"


def _normalise(host: dict[str, Any], ref: Reference) -> tuple[float, list[str]]:
    value, notes = ref.value, []
    packages = host.get("packages")
    if (ref.scope == "host" and ref.quantity in ADDITIVE and isinstance(packages, int)
            and packages > 0 and packages != ref.sockets):
        value = ref.value * packages / ref.sockets
        notes.append(f"the published {ref.value:g} {ref.unit} is a {ref.sockets}-socket "
                     f"total; scaled to this host's {_sockets(packages)}: {value:.4g} "
                     f"{ref.unit} (assumes it adds across sockets)")
    if ref.peak_clock_ghz is not None:
        ghz = ((host.get("peaks") or {}).get("flops") or {}).get("ghz")
        if ghz:
            value = value * ref.peak_clock_ghz / ghz
            notes.append(f"the published {ref.value:g} % is of a peak at the "
                         f"{ref.peak_clock_ghz:g} GHz base clock; against a peak at this "
                         f"host's {ghz:.3g} GHz clock (numascope's) it is {value:.4g} %")
        else:
            notes.append(f"the published {ref.value:g} % is of a peak at the "
                         f"{ref.peak_clock_ghz:g} GHz base clock; this host's clock is not "
                         "known, so it is not re-expressed")
    return value, notes


def matches(host: dict[str, Any], refs: list[Reference] | None = None) -> list[Match]:
    """The rows of the table (or `refs`) that match this host, normalised to it."""
    out = []
    for ref in load() if refs is None else refs:
        if mismatches(host, ref):
            continue
        matched = ["CPU model", "memory mode", "DIMM population"]
        value, notes = _normalise(host, ref)
        d = _dram(host)
        if d.get("source") == "--memory":
            notes.append("this host's DIMM population is as given with --memory, not read "
                         "from SMBIOS")
        if ref.dimms_per_channel is not None:
            if d.get("dimms_per_channel") is not None:
                matched.append("DIMMs per channel")
            else:
                notes.append(f"DIMMs per channel not recorded for this host (the reference "
                             f"had {ref.dimms_per_channel})")
        if host.get("packages") == ref.sockets:
            matched.append("sockets")
        smt = host.get("smt")
        if ref.smt != "unknown" and isinstance(smt, bool):
            if smt == (ref.smt == "on"):
                matched.append("SMT")
            else:
                notes.append(f"the reference ran with SMT {ref.smt}; this host has SMT "
                             f"{'on' if smt else 'off'}")
        how = ref.how
        packages = host.get("packages")
        if (ref.threads and ref.scope == "host" and isinstance(packages, int)
                and packages > 0 and packages != ref.sockets):
            how["threads"] = max(1, round(ref.threads * packages / ref.sockets))
            notes.append(f"the published {ref.threads} threads are of {_sockets(ref.sockets)}; "
                         f"for this host's {_sockets(packages)}: {how['threads']}")
        out.append(Match(ref, ref.quantity, value, ref.unit, tuple(matched), tuple(notes),
                         how))
    return out


def select(rows: list[Reference], cpu: str | None = None,
           quantity: str | None = None) -> list[Reference]:
    """The rows whose CPU model, name or family contains `cpu` (case-insensitive) and whose
    quantity is `quantity`; None: any."""
    if cpu is not None:
        want = cpu.strip().casefold()
        rows = [r for r in rows
                if want in f"{r.cpu_model} {r.cpu_name} {r.cpu_family}".casefold()]
    return rows if quantity is None else [r for r in rows if r.quantity == quantity]


def for_host(host: dict[str, Any], rows: list[Reference]
             ) -> tuple[list[Match], list[Reference], list[tuple[Reference, list[str]]]]:
    """The rows of `rows` matching this host, the rows naming its CPU model, and each of
    those that does not match with its reasons (mismatches)."""
    got = matches(host, rows)
    same_cpu = [r for r in rows if any(model_matches(m, host.get("cpu_model"))
                                       for m in r.models)]
    matched = {m.ref.id for m in got}
    return got, same_cpu, [(r, mismatches(host, r)) for r in same_cpu if r.id not in matched]


def measured_otherwise(match: Any, how: dict[str, Any]) -> list[str]:
    """Why a figure measured `how` (reach, path, kernel, threads: what it knows of each) is
    not `match`'s quantity measured the same way, every reason; empty when each field the
    publication states is the figure's own. `match`: a Match (or alike: its `how`; none,
    nothing stated)."""
    why = []
    for k, want in (getattr(match, "how", None) or {}).items():
        got = how.get(k)
        if got in ("", None):
            why.append(f"{k}: the publication's is {_how_text(k, want)}, this figure's is not "
                       "known")
        elif str(got).casefold() != str(want).casefold():
            why.append(f"{k}: the publication's is {_how_text(k, want)}, this figure's "
                       f"{_how_text(k, got)}")
    return why


def how_text(how: dict[str, Any]) -> str:
    """The HOW fields in words, in HOW's order: "between hosts, HCA's node, osu_latency,
    2 ranks" (an MPI figure's threads are its ranks), "triad, 64 threads"."""
    unit = "ranks" if how.get("reach") else "threads"
    return ", ".join(f"{how[k]} {unit}" if k == "threads" else str(how[k])
                     for k in HOW if how.get(k) not in ("", None))


def _how_text(k: str, v: Any) -> str:
    return repr(v) if isinstance(v, str) else str(v)


def percent_of(match: Match, measured: float) -> float:
    """`measured` as a percentage of the match's (normalised) published figure; for a
    latency, over 100 % is slower than published."""
    if not match.value:
        raise ValueError(f"reference {match.ref.id} has no figure to compare with")
    return 100.0 * measured / match.value
