"""The matrix family's options, declared once (its chase options are latency's own)."""

from __future__ import annotations

from dataclasses import replace

from numascope.errors import UserError
from numascope.families.latency.options import DRAM_SIZE, MODES, STRIDE
from numascope.options import Option, Table, placement

METRICS = ("latency", "bandwidth")
LATENCY, BANDWIDTH = "what=both|latency", "what=both|bandwidth"   # the matrix each option is of
MIN_BW_BYTES = 512


def _bw_size(nbytes: int, flag: str) -> None:
    if nbytes < MIN_BW_BYTES:
        raise UserError(f"{flag}: a read-bandwidth array of {nbytes} B is too small (at least "
                        f"{MIN_BW_BYTES} B)")


TABLE = Table("matrix", (
    Option("--what", "which matrix to measure", kind="choice", choices=("both", *METRICS),
           default="both"),
    *placement("cpunodebind", "membind", "pages",
               cpunodebind={"help": "rows: the nodes whose CPUs read, each in turn, e.g. 0-3",
                            "default_text": "every node with a usable CPU",
                            "hidden": ("--from",)},
               membind={"help": "columns: the nodes the memory is bound to, each in turn, "
                                "e.g. 0,2", "default_text": "every node with memory",
                        "hidden": ("--to",), "exclusive": ""},
               pages={"help": "page kind for both matrices", "default": None,
                      "default_text": "base pages for latency, THP for bandwidth, as lat "
                                      "and bw"}),
    Option("--size", "latency buffer", kind="size", metavar="BYTES", default_text=DRAM_SIZE,
           only_with=LATENCY),
    Option("--bw-size", "read-bandwidth array per pair", kind="size", metavar="BYTES",
           rule=_bw_size, rule_text=f"at least {MIN_BW_BYTES} B",
           default_text="4x the LLC of the source node's CPUs, >= 64 MiB", only_with=BANDWIDTH),
    replace(STRIDE, help="latency chase: " + STRIDE.help, only_with=LATENCY),
    Option("--mode", "chase mode for the latency matrix", kind="choice", choices=MODES,
           default="tlb", only_with=LATENCY),
    Option("--samples", "latency samples per pair", kind="int", default=9, low=1, metavar="N",
           only_with=LATENCY, high=100_000),
    Option("--chains", "also walk N independent chains from each pair's CPU: one core's "
           "misses in flight (Little's law, with the pair's 1-chain latency) and bandwidth, "
           "local against remote; 0: off", kind="int", default=0, low=0, high=64,
           metavar="N", only_with=LATENCY),
    Option("--dry-run", "list the pairs that would be measured, measure nothing",
           kind="switch"),
))
