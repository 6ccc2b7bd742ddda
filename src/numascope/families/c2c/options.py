"""The c2c family's options, declared once: `numascope c2c`'s flags, C2CParams' defaults and
docs/c2c.md's option table all come from TABLE. What depends on the machine (the CPUs to
pair, the nodes the line may live on) is checked against the topology when the cases are
built (command.py, bench.home_nodes)."""

from __future__ import annotations

from numascope.options import Option, Table, placement

MAX_SAMPLES = 100_000          # the C side's sample buffer bound (c2c.c asserts it)

TABLE = Table("c2c", (
    *placement("cpus", "cpunodebind", "membind",
               cpus={"help": "CPUs to pair", "default_text": "every usable CPU"},
               membind={"help": "put the shared line on this node (verified with "
                                "move_pages), a list, or all: one sweep per node with memory",
                        "metavar": "NODE", "hidden": ("--home",), "exclusive": "",
                        "default_text": "first touch by each pair's first CPU, node "
                                        "recorded"}),
    Option("--max-pairs", "beyond this many pairs, measure a sample of this many that "
           "keeps one pair of each relation", kind="int", default=256, low=1, metavar="N",
           high=1 << 20),
    Option("--samples", "timed samples per pair", kind="int", default=15, low=1,
           high=MAX_SAMPLES, metavar="N"),
    Option("--trips", "round trips per sample", kind="int", default=2000, low=1, metavar="N",
           high=10_000_000),
))
