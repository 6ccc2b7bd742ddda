"""The latency family's options, declared once: `numascope lat`'s flags, LatencyParams'
defaults, the matrix's chase options and docs/lat.md's option table all come from TABLE."""

from __future__ import annotations

from numascope.errors import UserError
from numascope.families.latency.mixes import DEFAULT as DEFAULT_MIX
from numascope.families.latency.mixes import MAX_BURSTS, check_mixes
from numascope.options import Option, Table, placement
from numascope.steady import reps_option

LINE = 64                     # a cache line: the smallest stride
MAX_STRIDE = 4096             # beyond a page every load is a page walk as well
MODES = ("tlb", "random")
CHAIN_LAYOUTS = ("arena", "regions")   # lat --chains: families/latency/chains.c
# the tlb mode's window, TLB-friendly (multichase's default: 64 x 4 KiB pages); no flag
WINDOW = 256 << 10
LOADED_DELAYS = (0, 50, 100, 200, 400, 800, 1600, 3200, 10000)
DRAM_SIZE = "4x the LLC, >= 256 MiB"


def check_stride(stride: int, name: str = "stride") -> int:
    """The stride as given, or UserError: a power of two from 64 B (a cache line) to 4 KiB."""
    if not isinstance(stride, int) or stride < LINE or stride > MAX_STRIDE \
            or stride & (stride - 1):
        raise UserError(f"{name} must be a power of two from {LINE} to {MAX_STRIDE} bytes "
                        f"(got {stride})")
    return stride


MIN_LOADS = 1024


def _once(values: list[int], flag: str, what: str) -> None:
    """A list option's values each once (as --mix's mixes): a repeat is a typo."""
    seen = set()
    for v in values:
        if v in seen:
            raise UserError(f"{flag} {','.join(map(str, values))}: the {what} {v} is given "
                            "twice")
        seen.add(v)


def _chains(values: list[int], flag: str) -> list[int]:
    """The chain counts in rising order, each given once."""
    _once(values, flag, "count")
    return sorted(values)


def _delays(values: list[int], flag: str) -> None:
    if any(d < 0 for d in values):
        raise UserError(f"{flag} {','.join(map(str, values))}: delays must be >= 0")
    _once(values, flag, "delay")


# the chase, as lat and matrix both take it
# (256 B: the prefetchers cannot serve the chase; 64 B reads low, see bench.py)
STRIDE = Option("--stride", "bytes between two pointers of the chase", kind="int", default=256, unit="B",
                metavar="BYTES", rule=check_stride,
                rule_text=f"a power of two from {LINE} to {MAX_STRIDE}")
MODE = Option("--mode", f"tlb: random in {WINDOW >> 10} KiB windows, windows shuffled "
              "(MLC/multichase); random: one random cycle over the whole buffer", kind="choice",
              choices=(*MODES, "both"), default="tlb")
SAMPLES = reps_option("--samples", "timed samples per working set or delay (auto: idle "
                      "chases only)", default=15, high=100_000, noun="")

TABLE = Table("latency", (
    Option("--size", "working set, e.g. 64K, 256M, 1G", kind="size", metavar="BYTES",
           default_text=DRAM_SIZE),
    Option("--sweep", "walk working sets from --min to --max (log steps), detect cache levels",
           kind="switch"),
    Option("--min", "sweep start", kind="size", default=4 << 10, metavar="BYTES",
           only_with="sweep"),
    Option("--max", "sweep end", kind="size", metavar="BYTES", default_text=DRAM_SIZE,
           only_with="sweep"),
    Option("--per-octave", "sweep points per doubling", kind="int", default=2, low=1,
           metavar="N", only_with="sweep", high=64),
    Option("--loaded", "loaded latency: chaser on --cpus, the other CPUs read with a delay "
           "sweep", kind="switch"),
    Option("--delays", "loaded: injected delays, e.g. 0,100,1000 (empty-loop iterations)",
           kind="ints", default=LOADED_DELAYS, metavar="LIST", rule=_delays,
           only_with="loaded", high=10_000_000),
    Option("--load-cpus", "loaded: CPUs generating bandwidth, 0-3 or S1, N1 …",
           metavar="CPUS", default_text="all others", only_with="loaded"),
    Option("--mix", "loaded: the loaders' read:write mixes, one curve each: read, R:W "
           "(ordinary stores, e.g. 3:1,2:1,1:1), nt (streaming stores), R:Wnt",
           default=DEFAULT_MIX, metavar="LIST", rule=check_mixes, only_with="loaded",
           rule_text=f"R and W up to {MAX_BURSTS} KiB per step, each mix once"),
    Option("--chains", "memory-level parallelism: walk this many independent chains at once, "
           "e.g. 1,2,4,8,16,32; per count ns per load, loads per ns, GB/s, and the knee "
           "(misses in flight per core)", kind="ints", low=1, high=64, metavar="LIST",
           rule=_chains, rule_text="counts, each 1 to 64"),
    Option("--chain-layout", "chains: arena (multichase's parallel chases: one buffer, "
           "every chain through every element, each at a slot of its own; at most stride/8 "
           "chains) or regions (each chain in its own part of the buffer, its pointer at "
           "the start of each element: numascope's first layout, whose untouched "
           "neighbour lines an adjacent-line prefetcher fetches, capping the misses in "
           "flight below the core's)", kind="choice", choices=CHAIN_LAYOUTS,
           default="arena", only_with="chains"),
    *placement("cpus", "membind", "pages",
               cpus={"help": "the chaser's CPU: one, e.g. 2, or the first usable CPU of S0 "
                             "(package), N1 (node), L3:5", "hidden": ("--cpu",),
                     "default_text": "the first usable CPU"},
               membind={"help": "bind the buffer to this NUMA node (default: first touch, "
                                "local)", "hidden": ("--node",)},
               pages={"default": "none"}),
    MODE,
    STRIDE,
    SAMPLES,
    # low: a sample must dwarf its timer read (rdtscp + lfence, ~40 cycles: G. Paoloni,
    # "How to Benchmark Code Execution Times on Intel IA-32 and IA-64 Instruction Set
    # Architectures", Intel, 2010); 1024 loads of even an L1 hit (4-5 cycles) keep it under
    # 1 %. With --loads 1 a median of 311 ns stood beside a best of 161: the timer's, not
    # the memory's
    Option("--loads", "dependent loads per sample", kind="int", low=MIN_LOADS, metavar="N",
           noun="loads per sample", high=1 << 30,
           default_text="65536 up to 64 MiB or loaded, else 262144"),
))
