"""The compress family's options, declared once: `numascope compress`'s flags, the rules
CompressParams checks a case with, its defaults and docs/compress.md's option table all
come from TABLE (and the names below: the codecs, filters, data sets the rules accept).

What depends on the machine or the data (thread counts against the CPUs, a block against
its chunk, a size against free memory, a file's contents) is checked when the cases are
built (bench.CompressParams.checked, datasets.load)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from numascope.errors import UserError
from numascope.options import Option, Table, placement, thread_counts
from numascope.placement import POLICIES
from numascope.steady import reps_option
from numascope.units import parse_size

CODECS = ("blosclz", "lz4", "lz4hc", "zstd", "zlib")
FILTERS = ("shuffle", "bitshuffle", "bytedelta", "none")
CLEVELS = (1, 5, 9)           # the sweep's compression levels when --clevels is not given
CLEVEL_MIN, CLEVEL_MAX = 1, 9
READS = ("buffer", "fused")
SYNTHETIC = ("smooth", "noisy", "precip")
DEFAULT_SET = "smooth"        # the synthetic data set when neither --data nor --synthetic
SYNTHETIC_DTYPE = "float32"   # a synthetic data set's item type when --dtype is not given
FORMATS = ("auto", "npy", "raw", "csv", "parquet", "hdf5", "netcdf", "blosc")
MAX_CHUNK = (2 << 30) - 64    # Blosc2's largest buffer (BLOSC2_MAX_BUFFERSIZE, rounded down)


# -- one value -------------------------------------------------------------------------------

def check_codec(codec: str) -> str:
    if codec not in CODECS:
        raise UserError(f"unknown codec {codec!r} (choose from {', '.join(CODECS)})")
    return codec


def check_filter(filt: str) -> str:
    if filt not in FILTERS:
        raise UserError(f"unknown filter {filt!r} (choose from {', '.join(FILTERS)})")
    return filt


def check_clevel(level: int) -> int:
    if not CLEVEL_MIN <= level <= CLEVEL_MAX:
        raise UserError(f"clevel {level} outside {CLEVEL_MIN}..{CLEVEL_MAX}")
    return level


def check_synthetic(name: str) -> str:
    if name not in SYNTHETIC:
        raise UserError(f"unknown synthetic data set {name!r} (choose from "
                        f"{', '.join(SYNTHETIC)} or all)")
    return name


# -- the options' rules: (value as typed, or as a caller passed it; the flag) -> value --------

def _items(value: Any, what: str, conv: Any = str) -> list:
    """A comma list as typed ("lz4,zstd"), or a list a caller passed, as a list."""
    if not isinstance(value, str):
        return list(value)
    try:
        items = [conv(x.strip()) for x in value.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"bad {what} list {value!r}") from None
    if not items:
        raise UserError(f"empty {what} list")
    return items


def _codecs(value: Any, flag: str) -> list[str]:
    return [check_codec(c) for c in _items(value, "codec")]


def _clevels(value: Any, flag: str) -> list[int]:
    return [check_clevel(lv) for lv in _items(value, "clevel", int)]


def _filters(value: Any, flag: str) -> list[str]:
    return [check_filter(f) for f in _items(value, "filter")]


def _synthetic(value: Any, flag: str) -> list[str]:
    names = _items(value, "synthetic data set")
    return list(SYNTHETIC) if names == ["all"] else [check_synthetic(n) for n in names]


def _dtype(value: str, flag: str) -> str:
    from numascope.families.compress.dtypes import parse_dtype  # numpy: when checked
    parse_dtype(value)
    return value


def _policy(value: str, flag: str) -> str:
    if value not in POLICIES:
        raise UserError(f"unknown policy {value!r} (choose from {', '.join(POLICIES)})")
    return value


def _bytes(value: Any, flag: str) -> int:
    """A size as typed (64K, 1M …; the flag named in the message) or as a caller passed it."""
    if not isinstance(value, str):
        return value
    try:
        return parse_size(value)
    except UserError as e:
        raise UserError(f"{flag}: {e}") from None


def _chunk(value: Any, flag: str) -> int:
    n = _bytes(value, flag)
    if not 0 < n <= MAX_CHUNK:
        raise UserError(f"a chunk of {n} B is outside 1 B..2 GiB ({flag})")
    return n


def _block(value: Any, flag: str) -> int:
    if isinstance(value, str) and value.strip() == "0":
        return 0                                  # Blosc's own choice
    return _bytes(value, flag)


def _threads(value: Any, flag: str) -> list[int]:
    return thread_counts(value, flag, many=True)


def _one_of(names: tuple[str, ...]) -> str:
    return f"{', '.join(names[:-1])} or {names[-1]}"


TABLE = Table("compress", (
    # the data
    Option("--data", "your data: .npy, raw binary (--dtype), .csv/.tsv (--column), .parquet "
           "(--column), .h5/.nc (--variable), a Blosc chunk", metavar="FILE", group="data",
           default_text="synthetic data"),
    Option("--format", "file format; auto: from the name", kind="choice", choices=FORMATS,
           default="auto", group="data", only_with="data"),
    Option("--dtype", "item type (raw data needs it)", metavar="TYPE", group="data",
           rule=_dtype, rule_text="float32/64 or 8- to 64-bit integers, e.g. f4, int16",
           default_text=f"the file's; synthetic: {SYNTHETIC_DTYPE}"),
    Option("--column", "CSV/Parquet column (name or index) or .npy field", metavar="NAME",
           group="data", only_with="data"),
    Option("--variable", "HDF5/netCDF variable", metavar="NAME", group="data",
           only_with="data"),
    Option("--synthetic", "synthetic data sets to run", metavar="LIST", group="data",
           rule=_synthetic, rule_text=f"a list of {', '.join(SYNTHETIC)}, or all",
           default_text=DEFAULT_SET),
    Option("--size", "synthetic: the size generated; a file: a prefix of it, never "
           "enlarged",
           metavar="BYTES", unit="B", group="data", rule=_bytes,
           default_text="synthetic: 4x the LLC within the profile's bounds; file: all of it"),
    # the sweep
    Option("--profile", "quick: 4 fast codec settings; full: every codec x clevel x "
           "filter; --codecs, --clevels or --filters replace the profile's settings",
           kind="choice", choices=("quick", "full"), default="quick", group="sweep"),
    Option("--codecs", "codecs to sweep", metavar="LIST", group="sweep", rule=_codecs,
           rule_text=f"a list of {', '.join(CODECS)}", default_text="every codec"),
    Option("--clevels", "compression levels to sweep", metavar="LIST", group="sweep",
           rule=_clevels, rule_text=f"a list, each {CLEVEL_MIN} … {CLEVEL_MAX}",
           default_text=",".join(map(str, CLEVELS))),
    Option("--filters", "filters to sweep", metavar="LIST", group="sweep", rule=_filters,
           rule_text=f"a list of {', '.join(FILTERS)}", default_text="every filter"),
    Option("--policy", "thread placement: the order threads take the CPUs in",
           default="compact", group="sweep", rule=_policy, rule_text=_one_of(POLICIES),
           metavar="POLICY"),
    Option("--chunk", "chunk size", metavar="BYTES", unit="B", group="sweep", rule=_chunk,
           rule_text="1 B … 2 GiB", default_text="half the L2"),
    Option("--block", "Blosc block size (0: Blosc's choice)", metavar="BYTES", unit="B",
           group="sweep", rule=_block, rule_text="never larger than the chunk",
           default_text="half the chunk"),
    Option("--read", "buffer: decompress each chunk, then sum it; fused: sum each block in "
           "a Blosc2 postfilter as it is decompressed", kind="choice", choices=READS,
           default="buffer", group="sweep"),
    replace(reps_option(help="timed repetitions per case", default=5, high=1000, noun=""),
            group="sweep"),
    # where: without --membind/--interleave the data is first-touched by the thread that
    # owns each chunk (plain copy and compressed store), on 4 KiB pages as Blosc's users
    # allocate it (--membind N on a CPU-less tier: does compression pay more there?)
    *placement("cpus", "cpunodebind", "membind", "interleave", "pages", "threads",
               cpus={"help": "run the threads on these CPUs", "hidden": ("--where",)},
               membind={"help": "put the plain copy and the compressed store on these NUMA "
                                "nodes (every sampled page checked)",
                        "default_text": "first touch by the thread that owns each chunk"},
               interleave={"help": "interleave the plain copy and the compressed store "
                                   "over these NUMA nodes (every sampled page checked)"},
               pages={"help": "page kind of the copy and the store: none (4 KiB, as "
                              "Blosc's users allocate), thp, hugetlb (the reserved pool)",
                      "default": "none"},
               threads={"help": "thread counts to sweep, e.g. 1,2,4", "metavar": "LIST",
                        "rule": _threads, "default_text": "1,2,4,... and all"}),
))
