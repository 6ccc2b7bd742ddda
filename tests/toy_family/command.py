"""`numascope toy`: the toy family's command: its table, and what is its own (the table
it prints). Everything else is the command kit's."""

import argparse

from numascope.command.flags import add_json, add_options
from numascope.options import check
from toy_family.options import TABLE

NAME = "toy"
HELP = "a toy family: Python sums"
ORDER = 99


def register(p: argparse.ArgumentParser) -> None:
    add_options(p, TABLE)
    add_json(p)


def main(args: argparse.Namespace) -> int:
    from numascope.command.runner import finish, measure
    from numascope.topology import read_topology
    from toy_family.bench import Toy
    v = check(TABLE, vars(args))                       # before anything is measured
    topo = read_topology("/")
    bench = Toy()
    outcome = measure(bench, topo, bench.cases(topo, sizes=(v["n"],), reps=v["reps"]),
                      label="toy", quiet=args.json)
    return finish(args, "toy", outcome, _print)


def _print(results, console) -> None:
    for r in results:
        console.print(f"{r.case}: {r.metrics['rate'].median:.1f} Melem/s", markup=False)
