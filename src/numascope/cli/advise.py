"""`numascope advise`: is this machine ready to be measured, and what do the stored
measurements advise — each piece of advice with its evidence and the exact command.

Sections (SECTIONS, in order; --section picks some): readiness (the checks of
numascope.readiness on this machine or a replayed --sysfs-root), advice (the rules of
numascope.advice on the selected stored runs), and recipe when a job shape is given
(--ranks/--threads/--near/--unit: numascope.recipes' launcher lines, each with the CPU sets
it yields, on this machine or the replayed one); --json gives one envelope whose results are the sections, each
{"section": NAME, …, "items": [...]}. --predict (and --verify) add the predict section:
every layout of the shape with the bandwidth and latency numascope.predict's model gives it
from a stored run, ranked, and with --verify each measured for real and stored as a run.
The sections are built by numascope.advice.sections and numascope.predict.section, printed
by numascope.report.advise_terminal; here, which sections the flags ask for."""

from __future__ import annotations

import argparse
import math
from typing import Any

from numascope.command.flags import add_json, add_store, add_sysfs_root
from numascope.command.output import emit

NAME = "advise"
HELP = ("readiness checks of this machine (governor, NUMA balancing, THP, SMT, …) with the "
        "commands that change them, advice from stored runs with its evidence, and for a "
        "job shape its launcher lines and (--predict, --verify) the bandwidth each layout "
        "gets")
ORDER = 84
VERIFY_REPS = 12        # numascope.predict.verify.REPS (the CLI loads without it)
VERIFY_UNITS = 4        # numascope.predict.verify.UNITS
SECTIONS = ("readiness", "recipe", "predict", "advice")


def register(p: argparse.ArgumentParser) -> None:
    from numascope.advice import RULES
    p.add_argument("runs", nargs="*", metavar="RUN",
                   help="stored runs to advise from: run id (or unique prefix), 'latest' (the "
                        "latest complete run), KEY=VALUE tags, or id,id,… (default: latest; "
                        "with --sysfs-root, none unless named: the store holds this "
                        "machine's runs, not the replayed one's)")
    p.add_argument("--section", action="append", choices=SECTIONS, metavar="NAME",
                   help=f"only these sections (repeatable): {', '.join(SECTIONS)}")
    p.add_argument("--rule", action="append", choices=list(RULES), metavar="NAME",
                   help=f"only these advice rules (repeatable): {', '.join(RULES)}")
    p.add_argument("--all-checks", action="store_true",
                   help="show the effect of every readiness check, not only of those that "
                        "warn or inform")
    add_sysfs_root(p)
    add_store(p)
    add_json(p)
    from numascope.recipes import add_job_args
    add_job_args(p)
    g = p.add_argument_group("predict, then verify (numascope.predict)")
    g.add_argument("--predict", action="store_true",
                   help="every layout of the job shape with its predicted bandwidth per rank "
                        "and in total (and latency), from a stored run, ranked")
    g.add_argument("--verify", action="store_true",
                   help="also run each layout for real (STREAM triad on its CPU sets and "
                        "memory, launched as its recipe launches it), measured against the "
                        "prediction, each stored as a run tagged with its recipe")
    g.add_argument("--run", metavar="ID",
                   help="the stored run to predict from (default: this host's latest run)")
    g.add_argument("--demand", type=float, metavar="GB/S",
                   help="the most one thread of the code asks (GB/s): ranks are held to it")
    g.add_argument("--reps", type=int, metavar="N",
                   help=f"--verify: timed repetitions per layout (default: {VERIFY_REPS}, "
                        f"one rank's over {VERIFY_UNITS} fresh allocations; several ranks: "
                        "enough to time about 2 s together)")


def main(args: argparse.Namespace) -> int:
    from numascope.errors import UserError
    shape = any(getattr(args, k, None) is not None for k in ("ranks", "threads", "near", "unit"))
    predicting = args.predict or args.verify
    if predicting and not shape:
        raise UserError("--predict and --verify need a job shape: --ranks R and/or "
                        "--threads T")
    if args.run is not None and not predicting:
        raise UserError("--run chooses the run to predict from: add --predict")
    if args.reps is not None and args.reps < 1:
        raise UserError(f"--reps must be at least 1 (got {args.reps})")
    if args.demand is not None and not (math.isfinite(args.demand) and args.demand > 0):
        raise UserError(f"--demand must be a positive, finite GB/s figure (got "
                        f"{args.demand:g})")
    if args.reps is not None and not args.verify:
        raise UserError("--reps sets the repetitions of --verify: add --verify")
    if predicting and args.section and "predict" not in args.section:
        raise UserError("--predict/--verify give the predict section: add --section predict")
    # a replayed machine (--sysfs-root) is advised from its own runs only: named ones, never
    # this machine's latest from the store
    replayed = str(args.sysfs_root).strip() not in ("/", "") and not args.runs
    sections = list(dict.fromkeys(args.section or (["predict"] if predicting else
                                  [s for s in SECTIONS if (s != "recipe" or shape)
                                   and s != "predict"
                                   and (s != "advice" or not replayed)])))
    if "predict" in sections and not predicting:
        raise UserError("the predict section needs --predict (or --verify)")
    if "recipe" in sections and not shape:
        raise UserError("the recipe section needs a job shape: --ranks R, --threads T, "
                        "--near DEVICE or --unit")
    if args.runs and "advice" not in sections:
        raise UserError("runs were given but --section leaves out advice; add "
                        "--section advice")
    if args.rule and "advice" not in sections:
        raise UserError("--rule chooses advice rules; add --section advice"
                        + (" and name the replayed machine's runs" if replayed else ""))
    if replayed and "advice" in sections:
        raise UserError("--section advice with --sysfs-root needs the replayed machine's "
                        "runs named (RUN…): the store's latest run is this machine's")
    from numascope.advice import sections as S
    done: list[dict[str, Any]] = []
    lines: list[str] = []
    # the store first: a bad selection is reported before any machine is read
    if "advice" in sections:
        done.append(S.advice(args.runs, args.store, args.rule))
    if "predict" in sections:
        from numascope.predict.section import predict_section
        job = {k: getattr(args, k) for k in ("ranks", "threads", "near", "unit")}
        done.append(predict_section(args.store, run=args.run, sysfs_root=args.sysfs_root,
                                    shape=job, demand=args.demand, verify=args.verify,
                                    reps=args.reps))
    if "recipe" in sections:
        sec, lines = S.recipe(args)
        done.insert(0, sec)
    if "readiness" in sections:
        done.insert(0, S.readiness(str(args.sysfs_root)))
    if replayed and not args.section and not predicting:   # why no advice, as a fresh store says
        done.append({"section": "advice", "runs": [], "rules": None, "items": [],
                     "note": "no advice for a replayed machine unless its runs are named "
                             "(advise RUN): the store's latest run is this machine's"})
    done.sort(key=lambda s: SECTIONS.index(s["section"]))
    if args.json:
        emit(NAME, done)
    else:
        from numascope.report.advise_terminal import print_sections
        print_sections(done, all_checks=args.all_checks, recipe_lines=lines)
    return 0
