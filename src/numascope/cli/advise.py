"""`numascope advise`: is this machine ready to be measured, and what do the stored
measurements advise — each piece of advice with its evidence and the exact command.

Sections (SECTIONS, in order; --section picks some): readiness (the checks of
numascope.readiness on this machine or a replayed --sysfs-root), advice (the rules of
numascope.advice on the selected stored runs), and recipe when a job shape is given
(--ranks/--threads/--near/--unit: numascope.recipes' launcher lines, each with the CPU sets
it yields, on this machine or the replayed one); --json gives one envelope whose results are the sections, each
{"section": NAME, …, "items": [...]}. --predict (and --verify) add the predict section:
every layout of the shape with the bandwidth and latency numascope.predict's model gives it
from a stored run, ranked, and with --verify each measured for real and stored as a run."""

from __future__ import annotations

import argparse
import math
import textwrap
from typing import Any

from numascope.command.flags import add_json, add_store, add_sysfs_root
from numascope.command.output import emit
from numascope.console import out

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
    done: list[dict[str, Any]] = []
    # the store first: a bad selection is reported before any machine is read
    if "advice" in sections:
        done.append(_advice(args))
    if "predict" in sections:
        from numascope.cli.advise_predict import predict_section
        done.append(predict_section(args))
    if "recipe" in sections:
        done.insert(0, _recipe(args))
    if "readiness" in sections:
        done.insert(0, _readiness(args))
    if replayed and not args.section and not predicting:   # why no advice, as a fresh store says
        done.append({"section": "advice", "runs": [], "rules": None, "items": [],
                     "note": "no advice for a replayed machine unless its runs are named "
                             "(advise RUN): the store's latest run is this machine's"})
    done.sort(key=lambda s: SECTIONS.index(s["section"]))
    if args.json:
        emit(NAME, done)
        return 0
    for i, sec in enumerate(done):
        if i:
            out.print()
        RENDER[sec["section"]](sec, args)
    return 0


def _readiness(args: argparse.Namespace) -> dict[str, Any]:
    from numascope.families.compute.command import machine
    from numascope.readiness import run_checks
    root = str(args.sysfs_root)
    with machine(root) as (topo, tree):
        live = tree.live
        checks = run_checks(tree, topo, live=live)
    return {"section": "readiness", "source": "this machine" if live else root,
            "live": live, "changes_nothing": True,
            "counts": {s: sum(c.status == s for c in checks)
                       for s in ("warn", "info", "ok", "unknown")},
            "items": [c.to_dict() for c in checks]}


def _recipe(args: argparse.Namespace) -> dict[str, Any]:
    from numascope.families.compute.command import machine
    from numascope.recipes import job_recipe, section
    with machine(str(args.sysfs_root)) as (topo, _tree):
        recipe = job_recipe(args, topo)
    args.recipe_lines = recipe.lines()   # the text rendering needs the Recipe, not the JSON
    return section(recipe)


def _render_recipe(sec: dict[str, Any], args: argparse.Namespace) -> None:
    for line in args.recipe_lines:
        out.print(line, markup=False, highlight=False, soft_wrap=True)


def _advice(args: argparse.Namespace) -> dict[str, Any]:
    from numascope.advice import advise
    from numascope.results.store import Store, default_path
    specs = args.runs or ["latest"]
    sec: dict[str, Any] = {"section": "advice", "runs": [], "rules": args.rule or None,
                           "note": "", "items": []}
    path = default_path() if args.store is None else args.store
    if not args.runs and args.store is None and not default_path().exists():
        sec["note"] = f"no runs stored ({path} does not exist): run `numascope run` first"
        return sec
    with Store.open(args.store) as st:
        if not args.runs and not st.list_runs():
            sec["note"] = f"no runs stored in {st.path}"
            return sec
        runs = st.load(specs)
    sec["runs"] = [r.run_id for r in runs]
    items = advise(runs, args.rule)
    sec["items"] = [a.to_dict() for a in items]
    from numascope.profile import readable
    smoke = [r.run_id for r in runs if not readable(r.profile)]
    if smoke:
        sec["note"] = (f"{', '.join(smoke)}: smoke run{'s' if len(smoke) > 1 else ''} "
                       "(numbers measure caches): advice from readiness checks only")
    elif items and all(a.rule == "disturbed" for a in items):
        sec["note"] = ("no advice from the numbers: every run was disturbed while it "
                       "measured")
    elif not items:
        sec["note"] = ("no advice: no rule found an effect in these runs (every rule "
                       "needs a measurement that shows one)")
    return sec


# -- text -----------------------------------------------------------------------------------

def _width() -> int:
    return max(40, min(out.width or 80, 80))


def _say(text: str, indent: int = 0, first: str | None = None) -> None:
    pad = " " * indent
    for line in textwrap.wrap(text, _width(), initial_indent=first if first is not None
                              else pad, subsequent_indent=pad, break_on_hyphens=False,
                              break_long_words=True) or [pad]:
        out.print(line, markup=False, highlight=False, soft_wrap=True)


def _command(label: str, cmd: str, indent: int) -> None:
    """A command within the width, never cut inside a word: split first after shell
    separators ("; ", "&& ", "do ") and before a remark in parentheses, so each printed line
    pastes as a valid continuation; a piece still too long is broken between words, each
    broken line ending in " \\" (the shell's continuation)."""
    parts, cur = [], []
    for tok in cmd.split(" "):
        if tok.startswith("(") and cur:     # "(in Slurm: …)": a remark, its own piece
            parts.append(" ".join(cur))
            cur = []
        cur.append(tok)
        if tok in (";", "&&", "do", "||") or tok.endswith(";"):
            parts.append(" ".join(cur))
            cur = []
    if cur:
        parts.append(" ".join(cur))
    width = _width()
    first, pad = " " * indent + label, " " * (indent + 2)
    lines, line = [], first
    for part in parts:
        sep = "" if line == first else " "
        if len(line) + len(sep) + len(part) <= width:
            line += sep + part
            continue
        if line != first:
            lines.append(line)
            line = pad
        for word in part.split(" "):
            fresh = line in (first, pad)
            if not fresh and len(line) + 1 + len(word) + 2 > width:
                lines.append(line + " \\")
                line = pad + word
            else:
                line += ("" if fresh else " ") + word
    lines.append(line)
    for x in lines:
        out.print(x, markup=False, highlight=False, soft_wrap=True)


def _render_readiness(sec: dict[str, Any], args: argparse.Namespace) -> None:
    c = sec["counts"]
    _say(f"readiness of {sec['source']}: {c['warn']} warn, {c['info']} info, {c['ok']} ok, "
         f"{c['unknown']} unknown (numascope changes none of these itself)")
    for ch in sec["items"]:
        _say(f"{ch['title']}: {ch['value']}", 10, f"  {ch['status']:<8}")
        if ch["status"] in ("warn", "info") or args.all_checks:
            if ch["effect"]:
                _say("effect: " + ch["effect"], 12, " " * 10)
            if ch["fix"]:
                _command("change: ", ch["fix"], 10)


def _render_advice(sec: dict[str, Any], args: argparse.Namespace) -> None:
    runs = sec["runs"]
    if runs:
        _say(f"advice from {len(runs)} run{'s' if len(runs) != 1 else ''}: "
             + ", ".join(runs))
    if sec["note"]:
        _say(sec["note"], 2, "  " if runs else "")
    for i, a in enumerate(sec["items"], 1):
        _say(a["title"], 6, f"  {i:>2}. ")
        _say(a["detail"], 6)
        if a["command"]:
            _command("command: ", a["command"], 6)
        _say(f"rule {a['rule']}; evidence: " + "; ".join(_evidence(e) for e in a["evidence"]),
             8, " " * 6)
        if a.get("threshold"):
            t = a["threshold"]
            _say(f"threshold {t['value']:g}: {t['source']}", 8, " " * 6)


def _evidence(e: dict[str, Any]) -> str:
    if "side" in e:
        med = e.get("median")
        return (f"{e['side']} {e['case']} {e['metric']} median of {e['n']} runs "
                + (f"{med:.4g} {e['unit']}" if isinstance(med, (int, float)) else "-"))
    if "case" in e:
        med = e.get("median")
        return (f"{e['run_id']} {e['case']} {e['metric']} median {med:.4g} {e['unit']} "
                f"(n={e['n']})" if isinstance(med, (int, float)) else
                f"{e['run_id']} {e['case']} {e['metric']}")
    if "check" in e:
        return f"{e['run_id']} {e['check']}={e['value']}"
    return f"{e.get('run_id', '')} " + ", ".join(f"{k} {v}" for k, v in e.items()
                                                 if k != "run_id")


def _render_predict(sec: dict[str, Any], args: argparse.Namespace) -> None:
    from numascope.cli.advise_predict import render
    render(sec, _say, _command)


RENDER = {"readiness": _render_readiness, "recipe": _render_recipe,
          "predict": _render_predict, "advice": _render_advice}
