"""`numascope fleet`: screen every node of a cluster (run under srun or mpirun), gather,
find the outliers, keep baselines, export to Prometheus. The command lives in
numascope.fleet (command.py: its flags; run_command, show_command, check_command); here,
its dispatch. See docs/fleet.md."""

from __future__ import annotations

import argparse

from numascope.errors import UserError
from numascope.fleet.check_command import check as _check
from numascope.fleet.check_command import labels as _labels
from numascope.fleet.check_command import prom as _prom
from numascope.fleet.command import HELP, NAME, check_values, register  # noqa: F401
from numascope.fleet.run_command import run as _run
from numascope.fleet.show_command import baseline as _baseline
from numascope.fleet.show_command import gather as _gather
from numascope.fleet.show_command import report as _report
from numascope.fleet.show_command import show as _show

ORDER = 60


def main(args: argparse.Namespace) -> int:
    cmd = args.fleet_cmd
    if cmd is None:
        raise UserError("give a subcommand: run, gather, show, report, baseline, check, "
                        "prom or labels")
    if cmd == "baseline" and args.baseline_cmd is None:
        raise UserError("give an action: fleet baseline save NAME, fleet baseline list, or "
                        "fleet baseline copy NAME --to DB")
    check_values(args)
    return {"run": _run, "gather": _gather, "show": _show, "report": _report,
            "baseline": _baseline,
            "check": _check, "prom": _prom, "labels": _labels}[cmd](args)
