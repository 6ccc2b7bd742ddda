"""`numascope fleet`: its flags (one table: FLAGS, help and defaults from the constants
they state) and what its subcommands share: selecting runs, refusing hooked or smoke runs,
the 80-column paragraphs, a node's row and the confirmation. The subcommands:
numascope.fleet.run_command (run: MPI, watchdog, --confirm), show_command (gather, show,
report, baseline), check_command (check, labels, prom); numascope.cli.fleet dispatches.
See docs/fleet.md."""

from __future__ import annotations

import argparse
import math
import textwrap
from typing import Any

from numascope.command.flags import add_json, add_store
from numascope.console import err, out, plural
from numascope.errors import UserError

NAME = "fleet"
HELP = ("run on every node of a cluster (srun / mpirun), gather, find outlier nodes, keep "
        "baselines, export to Prometheus")

WIDTH = 80
NAME_MAX = 200             # the longest fleet id, baseline name, run spec, stage or rule taken
NODE_TIMEOUT_MAX = 7 * 86400.0   # --node-timeout: at most a week
Z_MAX = 100.0              # --z: a robust z-score limit beyond which nothing is ever flagged
GAP_MAX = 1000.0           # --gap: percent

# an empty value is the command line's rule for every option (numascope.cli); here the
# positionals' (RUN, fleet gather DIR, baseline save NAME), and the longest name taken
POSITIONALS = {"dir": ("fleet gather", "the shared folder (or, with --full, a node)"),
               "node": ("fleet show", "a node (its host name)"),
               "runs": ("RUN", "a run id, latest or KEY=VALUE"),
               "name": ("baseline save", "a baseline name")}
NAMES = {"node": "fleet show", "stage": "--stage", "fleet_id": "--fleet-id", "fleet": "--fleet", "runs": "RUN",
         "floor": "--floor", "name": "baseline save", "baseline": "--baseline",
         "tolerance": "--tolerance"}


# -- the flags: one table ------------------------------------------------------------------
# Every flag of every fleet subcommand, once: (its spellings, argparse's keywords). A help
# that states a default is built from the constant the code uses (GAP_PCT, FLOOR, the
# baseline's tolerances, the expiry and the age limit), so the two cannot drift; a flag
# that several subcommands take means the same in each. docs/fleet.md describes them.
NODE_TIMEOUT_S = 3600.0    # --node-timeout's default


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:g}h"


def _f(*flags: str, **kw: Any) -> tuple[tuple[str, ...], dict[str, Any]]:
    return flags, kw


def _table() -> dict[str, tuple[tuple[str, ...], dict[str, Any]]]:
    from numascope.fleet.judged import DEFAULT_MAX_AGE_S
    from numascope.fleet.kubernetes import DEFAULT_EXPIRY_S
    from numascope.fleet.outliers import FLOOR, GAP_PCT
    expiry, age = _hours(DEFAULT_EXPIRY_S), _hours(DEFAULT_MAX_AGE_S)
    fleet = "the fleet run (id or unique prefix; default: the latest)"
    tuned = "the check's tolerances, as `fleet check` takes them (repeatable)"
    return {
        # fleet run
        "stage": _f("--stage", action="append", metavar="NAME", help=(
            "run only these stages (repeatable; `numascope run --list-stages`)")),
        "tag": _f("--tag", action="append", metavar="KEY=VALUE",
            help="label every node's run (repeatable)"),
        "node-timeout": _f("--node-timeout", type=float, default=NODE_TIMEOUT_S,
            metavar="S", help=(
            "a node with no record after S seconds is recorded as failed "
            f"(default {NODE_TIMEOUT_S:g})")),
        "budget": _f("--budget", metavar="DURATION", help=(
            "each node's run ends within this time, e.g. 30s (headline cases first; the rest "
            "recorded as not measured: docs/plan.md); default the profile's (quick 120 s); a "
            "prolog gate gives its own")),
        "shared-dir": _f("--shared-dir", metavar="DIR", help=(
            "write each node's record file here (atomically); without MPI this is how "
            "several tasks report: merge with `fleet gather DIR`")),
        "node-dir": _f("--node-dir", metavar="DIR", help=(
            "where each node keeps its full record file (every repetition, its topology); the "
            "store gets its brief and figures (docs/fleet.md). Default: --shared-dir when "
            "given, else $NUMASCOPE_NODE_DIR, else the folder fleet beside the node's default "
            "store")),
        "prom-dir": _f("--prom-dir", metavar="DIR", help=(
            "also write this node's results to DIR/numascope.prom for node_exporter's "
            "textfile collector")),
        "nfd-file": _f("--nfd-file", metavar="FILE", help=(
            "also write this node's labels (memory mode, NUMA nodes, SMT, its check against "
            "--baseline) as node-feature-discovery's local feature file FILE, atomically, "
            "e.g. /etc/kubernetes/node-feature-discovery/features.d/numascope (one task per "
            "node, no MPI; docs/kubernetes.md)")),
        "run-baseline": _f("--baseline", metavar="NAME", help=(
            "with --nfd-file: check this node's run against baseline NAME of --store (label "
            "baseline-check: pass, fail or inconclusive)")),
        "tuned": _f("--tolerance", action="append", metavar="METRIC=PCT%", help=tuned),
        "nfd-expiry": _f("--nfd-expiry", metavar="AGE", help=(
            f"the labels expire AGE after the run: 12h, 7d (default {expiry})")),
        "fleet-id": _f("--fleet-id", metavar="ID", help=(
            "the fleet run id (default: slurm-JOB.STEP under Slurm, else new)")),
        "no-mpi": _f("--no-mpi", action="store_true",
            help="do not use MPI even when launched by mpirun"),
        "confirm": _f("--confirm", action="store_true", help=(
            "after the screen, the flagged nodes measure their failing stages again (the "
            "others end); an outlier only when the second agrees (needs MPI)")),
        # fleet gather, show
        "dir": _f("dir", nargs="+", metavar="DIR | NODE",
            help="the shared folder; with --full, the nodes (host names)"),
        "full": _f("--full", action="store_true", help=(
            "copy these nodes' full records (every repetition, the topology) from where they "
            "live into the store, in place of their briefs")),
        "full-fleet": _f("--fleet", metavar="ID", help=f"with --full: {fleet}"),
        "node": _f("node", metavar="NODE", help="the node (its host name)"),
        "fleet": _f("--fleet", metavar="ID", help=fleet),
        "runs": _f("runs", nargs="*", metavar="RUN", help=(
            "runs instead of a fleet (ids, latest, KEY=VALUE tags)")),
        "all-metrics": _f("--all-metrics", action="store_true", help=(
            "every metric of every result, not only the primary one")),
        # fleet report
        "z": _f("--z", type=float, default=None, metavar="Z", help=(
            "a fixed limit on every test's t, as given (under 3.5 too; no false-discovery "
            "control; default: the false-discovery rule of docs/fleet.md)")),
        "gap": _f("--gap", type=float, default=None, metavar="PCT", help=(
            "practical gap: flag only nodes worse than the median by more "
            f"(default {GAP_PCT:g})")),
        "floor": _f("--floor", action="append", metavar="[MODEL=]FRACTION", help=(
            f"STREAM floor as a fraction of the DRAM peak (default {FLOOR:g}); "
            "MODEL=FRACTION for one CPU model (repeatable)")),
        "plot": _f("--plot", metavar="FILE",
            help="every node's value and the median band"),
        # fleet baseline
        "name": _f("name", metavar="NAME"),
        "replace": _f("--replace", action="store_true",
            help="overwrite a baseline of this name"),
        "allow-small": _f("--allow-small", action="store_true", help=(
            "save groups of fewer than 3 nodes too, marked (a check against them is "
            "inconclusive, exit 5)")),
        "to": _f("--to", required=True, metavar="DB", help=(
            "the store to copy into (created when its folder exists)")),
        "replace-there": _f("--replace", action="store_true", help=(
            "overwrite a baseline of this name there")),
        # fleet check
        "baseline": _f("--baseline", required=True, metavar="NAME"),
        "host": _f("--host", metavar="NAME", help=(
            "judge this host's latest run (default with RUN latest: the local host; a "
            "--confirm second measurement of it is judged instead)")),
        "max-age": _f("--max-age", metavar="AGE", help=(
            "a host's run older than this cannot be judged (exit 5): 30m, 24h, 7d or none "
            f"(default {age}; with --fleet or runs named: none)")),
        "tolerance": _f("--tolerance", action="append", metavar="METRIC=PCT%", help=(
            "allowed loss for a family, metric name, family/case/metric or * (repeatable; "
            f"defaults: {tolerance_defaults()})")),
        # fleet labels
        "output": _f("--output", "-o", required=True, metavar="FILE", help=(
            "the feature file, written atomically (- for standard output), e.g. "
            "/etc/kubernetes/node-feature-discovery/features.d/numascope")),
        "label-host": _f("--host", metavar="NAME", help=(
            "label from this host's latest run (default the local host, as fleet run "
            "records it)")),
        "label-baseline": _f("--baseline", metavar="NAME", help=(
            "also the run's check against this baseline (label baseline-check: pass, fail or "
            "inconclusive)")),
        "label-max-age": _f("--max-age", metavar="AGE", help=(
            f"the check judges no run older: 30m, 24h, 7d or none (default {age})")),
        "expiry": _f("--expiry", metavar="AGE", help=(
            f"the labels expire AGE after the run: 12h, 7d (default {expiry})")),
        # fleet prom
        "out": _f("--out", required=True, metavar="FILE",
            help="the .prom file (written atomically)"),
        "prom-baseline": _f("--baseline", metavar="NAME", help=(
            "also each node's check against this baseline (numascope_baseline_out, "
            "numascope_baseline_inconclusive)")),
    }


def _add(p: argparse.ArgumentParser, table: dict[str, Any], *keys: str) -> None:
    """The flags `keys` of the table, then --store and --json (every subcommand takes them)."""
    for key in keys:
        flags, kw = table[key]
        p.add_argument(*flags, **kw)
    add_store(p)
    add_json(p)


def register(p: argparse.ArgumentParser) -> None:
    from numascope.command.flags import add_options, add_profile
    from numascope.families import run_options
    t = _table()
    add_json(p)
    sub = p.add_subparsers(dest="fleet_cmd", metavar="SUBCOMMAND")
    r = sub.add_parser("run", help="measure this node (every rank its own); launch with srun "
                                   "or mpirun --map-by ppr:1:node",
                       description="Measure this node with the suite of `numascope run`; "
                                   "under MPI rank 0 stores every node's record.")
    add_profile(r, "the quick profile (the default)", "every sweep, more repetitions")
    for key in ("stage", "tag", "node-timeout", "budget", "shared-dir", "node-dir",
                "prom-dir", "nfd-file", "run-baseline", "tuned", "nfd-expiry", "fleet-id"):
        r.add_argument(*t[key][0], **t[key][1])
    add_options(r, run_options())          # what a family's stage takes (--io-dir …)
    _add(r, t, "no-mpi", "confirm")
    _add(sub.add_parser("gather", help="merge the record files of a shared folder into the "
                                       "store (idempotent); --full NODE…: copy nodes' full "
                                       "records into the store"), t, "dir", "full", "full-fleet")
    _add(sub.add_parser("show", help="one node's full results (read from where its full "
                                     "record lives; where that is when it cannot be read)"),
         t, "node", "fleet", "all-metrics")
    _add(sub.add_parser("report", help="outlier nodes of a fleet run, by configuration group"),
         t, "fleet", "runs", "z", "gap", "floor", "plot")
    b = sub.add_parser("baseline", help="save, list or copy baselines (group medians)")
    add_json(b)
    bsub = b.add_subparsers(dest="baseline_cmd", metavar="ACTION")
    _add(bsub.add_parser("save", help="store a fleet run's medians as a named baseline"), t,
         "name", "fleet", "runs", "replace", "allow-small")
    _add(bsub.add_parser("list", help="the stored baselines"), t)
    _add(bsub.add_parser("copy", help="copy a baseline alone into another store (a "
                                      "node-local one, for a health check or prolog)"), t,
         "name", "to", "replace-there")
    _add(sub.add_parser("check", help="check runs against a baseline; exit 1 when a node "
                                      "falls out, 5 when one cannot be judged (for NHC, a "
                                      "Slurm prolog or cron)"), t,
         "baseline", "host", "max-age", "fleet", "runs", "tolerance")
    _add(sub.add_parser("labels", help="write this node's labels as node-feature-discovery's "
                                       "local feature file (Kubernetes)",
                        description="Label this node from its latest run in the store: "
                                    "node-feature-discovery's local feature file "
                                    "(docs/kubernetes.md). Exit 0 written, 5 nothing written "
                                    "(nothing measured: no run of the host, a run from before "
                                    "this boot or past --expiry; a file of ours is removed)."),
         t, "output", "label-host", "label-baseline", "tuned", "label-max-age", "expiry")
    _add(sub.add_parser("prom", help="write results as node_exporter textfile exposition"), t,
         "out", "prom-baseline", "tuned", "fleet", "runs")


def check_values(args: argparse.Namespace) -> None:
    """Every value given: not empty (an empty string is never "not given") and, for names,
    at most NAME_MAX characters. UserError naming the flag as the user typed it."""
    from numascope.errors import escape_text
    def given(dest: str) -> list[str]:
        v = getattr(args, dest, None)
        return [i for i in (v if isinstance(v, list) else [] if v is None else [v])
                if isinstance(i, str)]
    for dest, (flag, what) in POSITIONALS.items():
        if any(not item.strip() for item in given(dest)):
            raise UserError(f"{flag} is empty: give {what}")
    for dest, flag in NAMES.items():
        for item in given(dest):
            if len(item) > NAME_MAX:
                raise UserError(f"{flag} '{escape_text(item, 60)}': at most {NAME_MAX} "
                                f"characters (got {len(item):,})")


# -- selecting runs ------------------------------------------------------------------------

def fleets(store: Any) -> dict[str, list[str]]:
    """fleet id → its run ids, in the store's order (oldest fleet first)."""
    out: dict[str, list[str]] = {}
    # the fleet tag alone (list_runs parses every record for its stages: seconds at 10,000;
    # json.loads of every run's tags, a second at 100,000)
    for run_id, f in store._q("SELECT run_id, json_extract(tags, '$.fleet') FROM runs "
                              "ORDER BY started, rowid"):
        if f:
            out.setdefault(f, []).append(run_id)
    return out


def select(store: Any, fleet: str | None, specs: list[str], whole: bool = False,
           second: dict[str, Any] | None = None) -> tuple[str | None, list]:
    """(the fleet id or None, the nodes' records): the runs given, else the fleet named (id
    or unique prefix), else the latest fleet in the store. Records carry only what the
    outlier analysis reads (numascope.fleet.load: 10,000 whole records took ~25 s to
    decode) unless `whole`. A second measurement (--confirm) is not a node: it goes into
    `second` (first run id -> record) when given, else is left out."""
    from numascope.fleet import confirm
    from numascope.fleet.load import analysis_runs

    def read(ids: list[str]) -> list:
        recs = [store.get_run(i) for i in ids] if whole else analysis_runs(store, ids)
        firsts, pairs = confirm.split(recs)
        if second is not None:
            second.update(pairs)
        return firsts
    if fleet is not None and specs:
        raise UserError("give --fleet or runs, not both")
    if specs:
        seen: list[str] = []
        for sp in specs:
            seen += [i for i in store.resolve(sp) if i not in seen]
        return None, read(seen)
    fid, ids = fleet_of(store, fleet, ", or name runs")
    return fid, read(ids)


def fleet_of(store: Any, fleet: str | None, hint: str = "") -> tuple[str, list[str]]:
    """(the fleet id, its run ids): the fleet named (id or unique prefix), else the latest;
    `hint` ends the line said when the store has no fleet."""
    have = fleets(store)
    if not have:
        raise UserError(f"no fleet runs in {store.path} (run `numascope fleet run` under "
                        f"srun or mpirun{hint})")
    if fleet is None:
        fid = list(have)[-1]
        return fid, have[fid]
    hits = [f for f in have if f == fleet] or [f for f in have if f.startswith(fleet)]
    if not hits:
        raise UserError(f"--fleet {fleet!r}: no such fleet in {store.path}; fleets: "
                        f"{', '.join(list(have)[-5:])}")
    if len(hits) > 1:
        raise UserError(f"--fleet {fleet!r} matches {len(hits)} fleets; give more of the id")
    return hits[0], have[hits[0]]


def refuse_hooked(runs: list, what: str) -> None:
    """Runs made with a test hook are never a reference, nor exported."""
    hooked = hooked_hosts(runs)
    if hooked:
        h, hooks = next(iter(hooked.items()))
        more = f" (and {plural(len(hooked) - 1, 'other node')})" if len(hooked) > 1 else ""
        raise UserError(f"{h}{more}: its run was made with test hook {', '.join(hooks)}, its "
                        f"figures falsified on purpose: not used for {what}")


def refuse_smoke(runs: list, what: str, all_smoke_too: bool = False) -> None:
    """One line, exit 2, for smoke runs (numbers that measure caches) set among measured
    ones (as compare refuses them); with all_smoke_too, for any smoke run at all."""
    from numascope.fleet.outliers import all_smoke, smoke_among_measured
    first = smoke_among_measured(runs)
    if first:
        raise UserError(f"run {first} is a smoke run among measured ones: its numbers "
                        f"measure caches, so {what} would set the profiles against each "
                        "other; select the smoke runs or the measured runs alone")
    if all_smoke_too and all_smoke(runs):
        first = next(r.run_id for r in runs if r.status != "failed")
        raise UserError(f"run {first} is a smoke run: its numbers measure caches and are "
                        f"not for {what}; use a fleet run with --quick or --full")


def open_store(args: argparse.Namespace, write: bool = False):
    from numascope.results.store import Store
    return Store.open(args.store, write=write)


NBSP = "\u00a0"


def para(text: str, indent: str = "", keep: tuple[str, ...] = ()) -> None:
    """`text` wrapped to WIDTH columns; the names in `keep` (metric keys, case names) are
    not broken inside (a line too short for one breaks it as a last resort)."""
    for name in keep:
        if name:
            text = text.replace(name, name.replace(" ", NBSP))
    lines = []
    for line in textwrap.wrap(text, WIDTH - 1, initial_indent=indent,
                              subsequent_indent=indent + "  ", break_long_words=False,
                              break_on_hyphens=False) or [""]:
        lines += [line] if len(line) <= WIDTH - 1 else textwrap.wrap(
            line, WIDTH - 1, subsequent_indent=indent + "  ", break_long_words=True)
    for line in lines:
        out.print(line.replace(NBSP, " "), markup=False, soft_wrap=True)


def warn(text: str) -> None:
    """One warning on standard error, escaped and wrapped to WIDTH columns."""
    from numascope.errors import escape_text
    for line in textwrap.wrap(escape_text(text), WIDTH - 1, subsequent_indent="  ",
                              break_long_words=True, break_on_hyphens=False):
        err.print(line, markup=False, soft_wrap=True)


def from_fleet(fid: str | None) -> str:
    """Where a baseline's medians came from: its fleet, or the runs named (no fleet)."""
    return f"fleet {fid}" if fid else "from runs named"


def fmt(x: Any) -> str:
    if isinstance(x, float):
        return "-" if not math.isfinite(x) else f"{x:.4g}"
    return "-" if x is None else str(x)


def node_row(rec) -> dict[str, Any]:
    """What fleet run prints of a node's record (and all rank 0 keeps of it): its status is
    its verdict (numascope.fleet.verdict), the reason the first thing that failed."""
    from numascope.fleet.node import hooks_of
    from numascope.fleet.verdict import verdict
    fl = rec.host.get("fleet", {})
    v = verdict(rec)
    return {"host": rec.host.get("hostname"), "rank": fl.get("rank"), "run_id": rec.run_id,
            "status": v.status, "results": len(rec.results), "reason": v.reason,
            "stages": v.stages, "slurm": fl.get("slurm", {}), "fleet": rec.tags.get("fleet"),
            "test_hooks": hooks_of(rec)}


def node_counts(statuses: list[str]) -> str:
    """"3 complete, 1 failed, 1 missing": every status present, complete first."""
    from collections import Counter
    c = Counter(statuses)
    order = ["complete", "failed", "interrupted", "incomplete", "missing"]
    keys = [k for k in order if c[k] or k in ("complete", "failed")] + \
        sorted(k for k in c if k not in order)
    return ", ".join(f"{c[k]} {k}" for k in keys)


def hooked_note(hooks: list[str] | None) -> str:
    """What a row of a run made with a test hook says (its figures are falsified)."""
    return f"  [TEST HOOK {', '.join(hooks)}: not a measurement]" if hooks else ""


def hooked_hosts(runs: list) -> dict[str, list[str]]:
    """host -> the test hooks its run was made with, for the runs made with any."""
    from numascope.fleet.node import hooks_of
    return {str(r.host.get("hostname") or r.tags.get("host")): hooks_of(r)
            for r in runs if hooks_of(r)}


def print_hooked(hooked: dict[str, list[str]]) -> None:
    if hooked:
        para("made with test hooks, their figures falsified on purpose (not for use): "
              + ", ".join(f"{h} ({', '.join(v)})" for h, v in hooked.items()))


def worse(pct: float) -> str:
    """A family's % from the group median, said as the report says it."""
    if pct is None or not math.isfinite(pct):
        return "– %"
    return f"{fmt(pct)} % worse" if pct >= 0 else f"{fmt(-pct)} % better"


def print_verdicts(verdicts) -> None:
    """The confirmation of the flagged nodes: both measurements of each."""
    if not verdicts:
        para("confirmation: no node flagged, nothing measured again")
        return
    n = sum(v.status == "confirmed" for v in verdicts)
    para(f"confirmation: {plural(len(verdicts), 'flagged node')}, {n} confirmed by a second "
          f"measurement, {len(verdicts) - n} not")
    for v in verdicts:
        para(f"{v.host}  {v.status}  (measured again: {', '.join(v.stages) or '-'})", "  ")
        seconds = {s["metric"]: s for s in v.second}
        for f in v.first:
            s2 = seconds.get(f["metric"])
            first = (worse(f["value"]) if f["metric"].endswith(" metrics)")
                     else f"{fmt(f['value'])} {f['unit']}")
            if s2 is None:
                then = "not measured again"
            elif "worse_pct" in s2:     # as the report says it: never "-280 % worse"
                then = f"{worse(s2['worse_pct'])}, t {fmt(s2['z'])}"
            else:
                then = (f"{fmt(s2['value'])} {f['unit']}"
                        + (f", t {fmt(s2['z'])}" if "z" in s2 else ""))
            para(f"{f['metric']}: first {first}; second {then}"
                  f"{' (flagged)' if s2 and s2['flagged'] else ''}", "      ",
                  keep=(f["metric"],))


def tolerance_defaults() -> str:
    from numascope.fleet.baseline import defaults_text
    return defaults_text().replace("%", "%%")
