"""`numascope fleet`: screen every node of a cluster (run under srun or mpirun), gather,
find the outliers, keep baselines, export to Prometheus. See docs/fleet.md."""

from __future__ import annotations

import argparse
import math
import textwrap
import threading
from typing import Any

from numascope.command.flags import add_json, add_store
from numascope.command.output import emit
from numascope.console import err, out, plural
from numascope.errors import UserError

NAME = "fleet"
HELP = ("run on every node of a cluster (srun / mpirun), gather, find outlier nodes, keep "
        "baselines, export to Prometheus")
ORDER = 60
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


def register(p: argparse.ArgumentParser) -> None:
    add_json(p)
    sub = p.add_subparsers(dest="fleet_cmd", metavar="SUBCOMMAND")

    r = sub.add_parser("run", help="measure this node (every rank its own); launch with srun "
                                   "or mpirun --map-by ppr:1:node",
                       description="Measure this node with the suite of `numascope run`; "
                                   "under MPI rank 0 stores every node's record.")
    from numascope.command.flags import add_profile
    add_profile(r, "the quick profile (the default)", "every sweep, more repetitions")
    r.add_argument("--stage", action="append", metavar="NAME",
                   help="run only these stages (repeatable; `numascope run --list-stages`)")
    r.add_argument("--tag", action="append", metavar="KEY=VALUE",
                   help="label every node's run (repeatable)")
    r.add_argument("--node-timeout", type=float, default=3600.0, metavar="S",
                   help="a node with no record after S seconds is recorded as failed "
                        "(default 3600)")
    r.add_argument("--budget", metavar="DURATION",
                   help="each node's run ends within this time, e.g. 30s (headline cases "
                        "first; the rest recorded as not measured: docs/plan.md); default "
                        "the profile's (quick 120 s); a prolog gate gives its own")
    r.add_argument("--shared-dir", metavar="DIR",
                   help="write each node's record file here (atomically); without MPI this "
                        "is how several tasks report: merge with `fleet gather DIR`")
    r.add_argument("--node-dir", metavar="DIR",
                   help="where each node keeps its full record file (every repetition, its "
                        "topology); the store gets its brief and figures (docs/fleet.md). "
                        "Default: --shared-dir when given, else $NUMASCOPE_NODE_DIR, else "
                        "the folder fleet beside the node's default store")
    r.add_argument("--prom-dir", metavar="DIR",
                   help="also write this node's results to DIR/numascope.prom for "
                        "node_exporter's textfile collector")
    r.add_argument("--nfd-file", metavar="FILE",
                   help="also write this node's labels (memory mode, NUMA nodes, SMT, its "
                        "check against --baseline) as node-feature-discovery's local feature "
                        "file FILE, atomically, e.g. /etc/kubernetes/node-feature-discovery/"
                        "features.d/numascope (one task per node, no MPI; docs/kubernetes.md)")
    r.add_argument("--baseline", metavar="NAME",
                   help="with --nfd-file: check this node's run against baseline NAME of "
                        "--store (label baseline-check: pass, fail or inconclusive)")
    r.add_argument("--tolerance", action="append", metavar="METRIC=PCT%",
                   help="the check's tolerances, as `fleet check` takes them (repeatable)")
    r.add_argument("--nfd-expiry", metavar="AGE",
                   help="the labels expire AGE after the run: 12h, 7d (default 24h)")
    r.add_argument("--fleet-id", metavar="ID",
                   help="the fleet run id (default: slurm-JOB.STEP under Slurm, else new)")
    from numascope.command.flags import add_options
    from numascope.families import run_options
    add_options(r, run_options())          # what a family's stage takes (--io-dir …)
    r.add_argument("--no-mpi", action="store_true",
                   help="do not use MPI even when launched by mpirun")
    r.add_argument("--confirm", action="store_true",
                   help="after the screen, the flagged nodes measure their failing stages "
                        "again (the others end); an outlier only when the second agrees "
                        "(needs MPI)")
    add_store(r)
    add_json(r)

    g = sub.add_parser("gather", help="merge the record files of a shared folder into the "
                                      "store (idempotent); --full NODE…: copy nodes' full "
                                      "records into the store")
    g.add_argument("dir", nargs="+", metavar="DIR | NODE",
                   help="the shared folder; with --full, the nodes (host names)")
    g.add_argument("--full", action="store_true",
                   help="copy these nodes' full records (every repetition, the topology) "
                        "from where they live into the store, in place of their briefs")
    g.add_argument("--fleet", metavar="ID",
                   help="with --full: the fleet run (id or unique prefix; default: the latest)")
    add_store(g)
    add_json(g)

    sh = sub.add_parser("show", help="one node's full results (read from where its full "
                                     "record lives; where that is when it cannot be read)")
    sh.add_argument("node", metavar="NODE", help="the node (its host name)")
    sh.add_argument("--fleet", metavar="ID",
                    help="the fleet run (id or unique prefix; default: the latest)")
    sh.add_argument("--all-metrics", action="store_true",
                    help="every metric of every result, not only the primary one")
    add_store(sh)
    add_json(sh)

    rep = sub.add_parser("report", help="outlier nodes of a fleet run, by configuration group")
    _add_select(rep)
    rep.add_argument("--z", type=float, default=None, metavar="Z",
                     help="a fixed limit on every test's t, as given (under 3.5 too; "
                          "no false-discovery control; default: the false-discovery rule "
                          "of docs/fleet.md)")
    rep.add_argument("--gap", type=float, default=None, metavar="PCT",
                     help="practical gap: flag only nodes worse than the median by more "
                          "(default 5)")
    rep.add_argument("--floor", action="append", metavar="[MODEL=]FRACTION",
                     help="STREAM floor as a fraction of the DRAM peak (default 0.59); "
                          "MODEL=FRACTION for one CPU model (repeatable)")
    rep.add_argument("--plot", metavar="FILE", help="every node's value and the median band")
    add_store(rep)
    add_json(rep)

    b = sub.add_parser("baseline", help="save, list or copy baselines (group medians)")
    add_json(b)
    bsub = b.add_subparsers(dest="baseline_cmd", metavar="ACTION")
    bs = bsub.add_parser("save", help="store a fleet run's medians as a named baseline")
    bs.add_argument("name", metavar="NAME")
    _add_select(bs)
    bs.add_argument("--replace", action="store_true", help="overwrite a baseline of this name")
    bs.add_argument("--allow-small", action="store_true",
                    help="save groups of fewer than 3 nodes too, marked (a check against "
                         "them is inconclusive, exit 5)")
    add_store(bs)
    add_json(bs)
    bl = bsub.add_parser("list", help="the stored baselines")
    add_store(bl)
    add_json(bl)
    bc = bsub.add_parser("copy", help="copy a baseline alone into another store (a "
                                      "node-local one, for a health check or prolog)")
    bc.add_argument("name", metavar="NAME")
    bc.add_argument("--to", required=True, metavar="DB",
                    help="the store to copy into (created when its folder exists)")
    bc.add_argument("--replace", action="store_true",
                    help="overwrite a baseline of this name there")
    add_store(bc)
    add_json(bc)

    c = sub.add_parser("check", help="check runs against a baseline; exit 1 when a node "
                                     "falls out, 5 when one cannot be judged (for NHC, a "
                                     "Slurm prolog or cron)")
    c.add_argument("--baseline", required=True, metavar="NAME")
    c.add_argument("--host", metavar="NAME",
                   help="judge this host's latest run (default with RUN latest: the local "
                        "host; a --confirm second measurement of it is judged instead)")
    c.add_argument("--max-age", metavar="AGE",
                   help="a host's run older than this cannot be judged (exit 5): 30m, 24h, "
                        "7d or none (default 24h; with --fleet or runs named: none)")
    _add_select(c)
    c.add_argument("--tolerance", action="append", metavar="METRIC=PCT%",
                   help="allowed loss for a family, metric name, family/case/metric or * "
                        "(repeatable; defaults: "
                        f"{_tolerance_defaults()})")
    add_store(c)
    add_json(c)

    lb = sub.add_parser("labels", help="write this node's labels as node-feature-discovery's "
                                       "local feature file (Kubernetes)",
                        description="Label this node from its latest run in the store: "
                                    "node-feature-discovery's local feature file "
                                    "(docs/kubernetes.md). Exit 0 written, 5 nothing written "
                                    "(nothing measured: no run of the host, a run from before "
                                    "this boot or past --expiry; a file of ours is removed).")
    lb.add_argument("--output", "-o", required=True, metavar="FILE",
                    help="the feature file, written atomically (- for standard output), e.g. "
                         "/etc/kubernetes/node-feature-discovery/features.d/numascope")
    lb.add_argument("--host", metavar="NAME",
                    help="label from this host's latest run (default the local host, as "
                         "fleet run records it)")
    lb.add_argument("--baseline", metavar="NAME",
                    help="also the run's check against this baseline (label baseline-check: "
                         "pass, fail or inconclusive)")
    lb.add_argument("--tolerance", action="append", metavar="METRIC=PCT%",
                    help="the check's tolerances, as `fleet check` takes them (repeatable)")
    lb.add_argument("--max-age", metavar="AGE",
                    help="the check judges no run older: 30m, 24h, 7d or none (default 24h)")
    lb.add_argument("--expiry", metavar="AGE",
                    help="the labels expire AGE after the run: 12h, 7d (default 24h)")
    add_store(lb)
    add_json(lb)

    pr = sub.add_parser("prom", help="write results as node_exporter textfile exposition")
    pr.add_argument("--out", required=True, metavar="FILE",
                    help="the .prom file (written atomically)")
    pr.add_argument("--baseline", metavar="NAME",
                    help="also each node's check against this baseline "
                         "(numascope_baseline_out, numascope_baseline_inconclusive)")
    pr.add_argument("--tolerance", action="append", metavar="METRIC=PCT%",
                    help="the check's tolerances, as `fleet check` takes them (repeatable)")
    _add_select(pr)
    add_store(pr)
    add_json(pr)


def _add_select(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fleet", metavar="ID", help="the fleet run (id or unique prefix; "
                                                 "default: the latest)")
    p.add_argument("runs", nargs="*", metavar="RUN",
                   help="runs instead of a fleet (ids, latest, KEY=VALUE tags)")


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
    import json
    out: dict[str, list[str]] = {}
    # the tags alone (list_runs parses every record for its stages: seconds at 10,000)
    for run_id, tags in store._q("SELECT run_id, tags FROM runs ORDER BY started, rowid"):
        f = json.loads(tags).get("fleet")
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
    have = fleets(store)
    if not have:
        raise UserError(f"no fleet runs in {store.path} (run `numascope fleet run` under "
                        "srun or mpirun, or name runs)")
    if fleet is None:
        fid = list(have)[-1]
    else:
        hits = [f for f in have if f == fleet] or [f for f in have if f.startswith(fleet)]
        if not hits:
            raise UserError(f"--fleet {fleet!r}: no such fleet in {store.path}; fleets: "
                            f"{', '.join(list(have)[-5:])}")
        if len(hits) > 1:
            raise UserError(f"--fleet {fleet!r} matches {len(hits)} fleets; give more of "
                            "the id")
        fid = hits[0]
    return fid, read(have[fid])


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


def _open(args: argparse.Namespace, write: bool = False):
    from numascope.results.store import Store
    return Store.open(args.store, write=write)


NBSP = "\u00a0"


def _para(text: str, indent: str = "", keep: tuple[str, ...] = ()) -> None:
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


def _warn(text: str) -> None:
    """One warning on standard error, escaped and wrapped to WIDTH columns."""
    from numascope.errors import escape_text
    for line in textwrap.wrap(escape_text(text), WIDTH - 1, subsequent_indent="  ",
                              break_long_words=True, break_on_hyphens=False):
        err.print(line, markup=False, soft_wrap=True)


def _from_fleet(fid: str | None) -> str:
    """Where a baseline's medians came from: its fleet, or the runs named (no fleet)."""
    return f"fleet {fid}" if fid else "from runs named"


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        return "-" if not math.isfinite(x) else f"{x:.4g}"
    return "-" if x is None else str(x)


# -- run -----------------------------------------------------------------------------------

def _run(args: argparse.Namespace) -> int:

    from numascope import suite
    from numascope.fleet import files, mpi, node
    from numascope.profile import profile as get_profile
    from numascope.results.run import parse_tags

    if not (args.node_timeout > 0 and math.isfinite(args.node_timeout)):
        raise UserError(f"--node-timeout {args.node_timeout:g}: give seconds > 0")
    if args.node_timeout > NODE_TIMEOUT_MAX:
        raise UserError(f"--node-timeout {args.node_timeout:g}: at most "
                        f"{NODE_TIMEOUT_MAX:.0f} s (a week)")
    stages = node.fleet_stages(suite.with_options(suite.chosen(args.stage, suite.all_stages()),
                                                 args))
    machine = suite.machine_options(args)   # --memory / --links: every node's peaks, any stages
    if any(s.name == "storage" for s in stages) and args.stage and \
            getattr(args, "io_dir", None) is None:
        # asked for by name, it would be skipped on every node: a fleet "complete" without it
        raise UserError("--stage storage needs --io-dir DIR (a node-local folder fio may "
                        "write a test file in); without it the stage is skipped")
    tags = parse_tags(args.tag)
    for k in ("fleet", "host", "confirm_of"):
        if k in tags:
            raise UserError(f"tag {k!r} is set by fleet itself; use another key")
    # every folder written checked before anything is measured (the record is never lost
    # to a folder that could not take it)
    from numascope.command.output import check_workdir
    shared = check_workdir(args.shared_dir, "--shared-dir") \
        if args.shared_dir is not None else None
    prom_dir = check_workdir(args.prom_dir, "--prom-dir") if args.prom_dir is not None \
        else None
    node_dir = check_workdir(args.node_dir, "--node-dir") if args.node_dir is not None \
        else None
    if args.fleet_id is not None:
        args.fleet_id = node.check_fleet_id(args.fleet_id)
    profile = get_profile(args.profile or suite.DEFAULT_PROFILE)
    from numascope.plan import parse_duration
    budget = parse_duration(args.budget) if args.budget is not None else profile.budget_s
    nfd = _nfd(args, profile)
    slurm = node.slurm_env()

    kept: dict[str, Any] = {}       # run id -> the file of its full record

    def brief(rec):
        """What the store gets of a node's record: its brief, the full record staying in
        its file (numascope.fleet.full); the record itself when it has no file."""
        from numascope.fleet import full
        return full.slim(rec, kept[rec.run_id]) if rec.run_id in kept else rec

    def measure(ident: dict[str, Any], live: Any = None):
        from numascope.errors import escape_text
        rec = node.run_node(ident, profile, stages, tags, machine=machine, budget=budget,
                            live=live)
        # the folders were checked before measuring; a disk that fills meanwhile must not
        # keep the record from rank 0 or the store
        if shared is not None:
            try:
                kept[rec.run_id] = files.write_record(shared, rec).resolve()
            except OSError as e:
                if comm is None:      # the file was this task's only way to report
                    raise UserError(f"--shared-dir {escape_text(shared, 160)}: cannot write "
                                    f"the record of {escape_text(ident['host'], 60)} "
                                    f"({e.strerror or type(e).__name__})") from None
                _warn(f"{ident['host']}: --shared-dir: cannot write "
                      f"{e.filename}: {e.strerror}")
        elif comm is not None or args.store is not None:   # the full record stays here
            kept.update(_keep_full(rec, node_dir, ident["host"]))
        if prom_dir is not None and node.hooks_of(rec):
            _warn(f"{ident['host']}: --prom-dir: not written: this run was made with test "
                  f"hook {', '.join(node.hooks_of(rec))}")
        elif prom_dir is not None:
            from numascope.fleet import prom
            try:
                prom.write(prom_dir / "numascope.prom", [rec])
            except OSError as e:
                _warn(f"{ident['host']}: --prom-dir: cannot write {e.filename}: "
                      f"{e.strerror}")
        return rec

    if args.confirm and profile.name == "smoke":
        raise UserError("--confirm with --smoke: smoke numbers measure caches and flag no "
                        "node, so there is nothing to confirm; use --quick or --full")
    comm = None
    # --nfd-file labels the node each task runs on: every task works alone (as --no-mpi)
    comm = mpi.world(allow=not args.no_mpi and nfd is None)
    if comm is None:
        if args.confirm:
            raise UserError("--confirm re-measures the flagged nodes in the same job: it "
                            "needs MPI ranks (mpirun, or srun --mpi=pmix), not --no-mpi, "
                            "--nfd-file or tasks that do not talk")
        return _run_alone(args, measure, slurm, shared, profile, tags, nfd, brief)
    return _run_mpi(args, comm, lambda ident, live=None: brief(measure(ident, live)), profile,
                    tags)


def _keep_full(rec, folder, host: str) -> dict[str, Any]:
    """The node's full record written into its node folder (--node-dir, else
    numascope.fleet.full.node_dir()): {run id: its file}, or {} (said on stderr) when it
    cannot be written there: then the record goes to the store whole."""
    from numascope.fleet import files, full
    folder = folder if folder is not None else full.node_dir()
    try:
        return {rec.run_id: files.keep_full(rec, folder)}
    except OSError as e:
        _warn(f"{host}: cannot keep its full record in {folder} "
              f"({e.strerror or type(e).__name__}); the store gets it whole")
        return {}


def _run_alone(args, measure, slurm, shared, profile, tags, nfd=None,
               brief=lambda rec: rec) -> int:
    """No MPI: this task measures its node and writes its record file (--shared-dir, with
    the fleet's manifest: numascope.fleet.manifest), or its run into the store (its
    placeholder first), then its labels (--nfd-file). A watchdog records it failed after
    --node-timeout."""
    import os

    from numascope.fleet import files, keep, manifest, mpi, node
    rank, tasks, launcher = mpi.launched()
    why = None
    if tasks > 1 and shared is None:
        why = (f"{tasks} tasks without MPI: give --shared-dir DIR on a shared file system "
               "(then `numascope fleet gather DIR`), or launch with MPI")
    elif tasks > 1 and args.fleet_id is None and "SLURM_JOB_ID" not in slurm:
        why = (f"{tasks} tasks without MPI or Slurm cannot agree on a fleet id: give "
               "--fleet-id ID (the same for every task)")
    if why:
        if rank != 0:
            # one line for the job and its exit status (2), from its first task; the others
            # end quietly and at 0: a task ending non-zero first has the launcher kill the
            # first task before it can say why (mpirun does, under load)
            return 0
        raise UserError(why)
    fid = args.fleet_id or node.default_fleet_id(slurm)
    ident = node.identity(fid, rank, tasks, launcher)
    if nfd is not None:
        _clear_labels(nfd)
    keeper = None
    if shared is not None:
        try:       # every task writes the same manifest: the tasks that never report count
            manifest.write_manifest(shared, fid, tasks, launcher, profile.name, tags, slurm)
        except OSError as e:
            _warn(f"{ident['host']}: --shared-dir: cannot write the fleet's manifest "
                  f"({e.strerror or type(e).__name__}); a task that never reports will not "
                  "be listed")
    else:
        keeper = keep.Keeper(_open(args, write=True), None, profile.name, tags, launcher,
                             slurm)
        keeper.start(fid, 1)
        keeper.hellos({0: ident})
    done = threading.Event()

    def expire() -> None:    # the node hangs: say so where gather or the store finds it
        if done.is_set():
            return
        rec = node.failed_record(ident, profile.name, tags, f"exceeded --node-timeout "
                                 f"{args.node_timeout:g} s")
        try:
            if shared is not None:
                files.write_record(shared, rec)
            elif keeper is not None:
                keeper.record(rec)
                keeper.finish()
            _warn(f"{ident['host']}: {rec.stages[0].reason}")
            if nfd is not None:
                _label(args, nfd, rec, True)
        finally:
            os._exit(1)

    timer = threading.Timer(args.node_timeout, expire)
    timer.daemon = True
    timer.start()
    try:
        rec = measure(ident, keeper.live(0) if keeper is not None else None)
        done.set()
    finally:
        timer.cancel()
    note, stored = "", True
    if keeper is not None:
        try:
            keeper.record(brief(rec))
            stored, note = keeper.finish()
        finally:
            keeper.store.close()
    where = f"{shared}" if shared is not None else f"store {args.store or 'default'}"
    code = _print_nodes(args, fid, [_node_row(rec)], "shared-dir" if shared else "store",
                        where, expected=None if shared is not None else tasks, note=note,
                        kept=keeper.not_stored() if keeper is not None else None)
    if nfd is not None:
        _label(args, nfd, rec, stored)
    _say_stopped()
    return code if stored or code else 1


def _nfd(args: argparse.Namespace, profile: Any) -> Any:
    """fleet run --nfd-file: where the labels go, the baseline they are checked against
    (read from --store now) and their expiry, all checked before anything is measured; None
    without --nfd-file."""
    from numascope.fleet import baseline
    from numascope.fleet import kubernetes as k8s
    if args.nfd_file is None:
        for flag, value in (("--baseline", args.baseline), ("--tolerance", args.tolerance),
                            ("--nfd-expiry", args.nfd_expiry)):
            if value is not None:
                raise UserError(f"{flag}: give --nfd-file FILE too (the labels it is for)")
        return None
    path = k8s.output_path(args.nfd_file, "--nfd-file")
    expiry = k8s.parse_expiry(args.nfd_expiry, "--nfd-expiry")
    if args.baseline is None:
        if args.tolerance:
            raise UserError("--tolerance: give --baseline NAME too (the check it tunes)")
        return k8s.Target(path, None, {}, expiry)
    given = baseline.parse_tolerances(args.tolerance)
    name = baseline.check_name(args.baseline, "--baseline")
    if profile.name == "smoke":
        raise UserError("--baseline with --smoke: smoke numbers measure caches and are never "
                        "checked against a baseline; use --quick or --full")
    with _open(args) as store:
        base = baseline.load(store, name)
    baseline.check_tolerance_keys(base, given)
    return k8s.Target(path, base, given, expiry)


def _clear_labels(nfd: Any) -> None:
    """Before measuring: a feature file of ours from before this boot goes now, not after
    the run (the machine may be set otherwise since; NFD would advertise it meanwhile)."""
    from numascope.errors import escape_text
    from numascope.fleet import kubernetes as k8s
    try:
        if k8s.from_before_boot(nfd.path, k8s.boot_time()) and k8s.remove(nfd.path):
            _warn(f"--nfd-file {escape_text(nfd.path, 160)}: written before this boot, "
                  "removed until this run ends")
    except OSError as e:
        _warn(f"--nfd-file {escape_text(nfd.path, 160)}: cannot remove the file of an "
              f"earlier boot ({e.strerror or type(e).__name__})")


def _label(args: argparse.Namespace, nfd: Any, rec: Any, stored: bool) -> None:
    """fleet run --nfd-file: this node's labels from its record (numascope.fleet.kubernetes);
    none, and a file of ours removed, for a record that never read the machine, was not
    stored or was made with a test hook."""
    from numascope.errors import escape_text
    from numascope.fleet import kubernetes as k8s
    from numascope.fleet.node import hooks_of
    shown = escape_text(nfd.path, 160)
    hooks = hooks_of(rec)
    why = ("its record was not stored" if not stored else
           f"its run was made with test hook {', '.join(hooks)}" if hooks else
           k8s.measured(rec))
    try:
        if why:
            gone = k8s.remove(nfd.path)
            _warn(f"--nfd-file {shown}: no labels written: {why}"
                  + ("; the earlier file is removed" if gone else ""))
            return
        check = k8s.judge(nfd.base, rec, nfd.given, None) if nfd.base is not None else None
        found = k8s.labels(rec, check)
        k8s.write(nfd.path, k8s.render(rec, found, check, nfd.expiry_s))
    except OSError as e:
        _warn(f"--nfd-file {shown}: cannot write ({e.strerror or type(e).__name__})")
        return
    if not args.json:
        _para(f"labels: {shown} ({k8s.summary(found)})")


def _say_stopped() -> None:
    """The one line of a fleet job stopped by a signal (its exit code is 128 + it)."""
    from numascope import signals
    if signals.received():
        err.print(f"interrupted ({signals.name(signals.signum_of(None))}): the nodes' "
                  "finished results are stored", markup=False)


def _run_mpi(args, comm, measure, profile, tags) -> int:
    from numascope import signals
    from numascope.fleet import keep, mpi, node
    rank = comm.Get_rank()
    store = keeper = None
    if rank == 0:
        try:
            store = _open(args, write=True)   # refused before anything is measured
        except UserError as e:
            from numascope.errors import escape_text
            err.print(f"numascope: error: {escape_text(e)}", markup=False)
            mpi.abort(comm, 2)
        keeper = keep.Keeper(store, _shared(args), profile.name, tags, "mpi",
                             node.slurm_env())
    fid = args.fleet_id or (node.default_fleet_id(node.slurm_env()) if rank == 0 else None)
    me: dict[str, Any] = {}

    def measure_once(ident: dict[str, Any]):
        me.update(ident)
        rec = measure(ident, keeper.live(0) if keeper is not None else mpi.Sender(comm))
        if ident["rank"] != 0 and signals.received():
            # said before the record is sent: a launcher kills its ranks soon after the
            # signal (Open MPI's mpirun 1 s after it), rank 0 may take longer to receive it
            err.print(f"numascope: {ident['host']} (rank {ident['rank']}): stopped by "
                      f"{signals.name(signals.signum_of(None))}; its record goes to rank 0",
                      markup=False)
        return rec

    def on_record(rec) -> dict[str, Any]:
        keeper.record(rec)           # one transaction per node; rank 0 keeps only its row
        return _node_row(rec)

    def failed(ident: dict[str, Any], reason: str, status: str = "failed"):
        return node.failed_record(ident, profile.name, tags, reason, status=status)

    def before_abort() -> None:      # the job ends early: nothing received may be lost
        _, note = keeper.finish()
        if note:
            err.print(f"numascope: {note}", markup=False)

    note, stored = "", True
    try:
        rows, missing = mpi.run(
            comm, fid, args.node_timeout,
            lambda f, r, n: node.identity(f, r, n, "mpi"), measure_once,
            mpi.Rank0(on_record, failed, keeper.start if keeper else None,
                      keeper.hellos if keeper else None, before_abort if keeper else None,
                      keeper.live if keeper else None, keeper.stopped if keeper else None))
        if rank != 0:
            if args.confirm and not signals.received():
                plan = mpi.wait_plan(comm)
                if plan:
                    mpi.measure_again(comm, plan, lambda p: _measure_again(
                        args, me, profile, tags, p))
            return signals.exit_code() if signals.received() else 0
        fid = rows[0]["fleet"]
        stopped = bool(signals.received())
        if args.confirm and stopped:        # release the ranks waiting for a second word
            for r in range(1, comm.Get_size()):
                if r not in missing:
                    comm.send(None, dest=r, tag=mpi.TAG_PLAN)
        verdicts = _confirm(args, comm, store, fid, rows, set(missing), profile, tags,
                            on_record, me) if args.confirm and not stopped else None
        stored, note = keeper.finish()
    finally:
        if store is not None:
            store.close()
    code = _print_nodes(args, fid, rows, "mpi", f"store {store.path}" if store else "",
                        verdicts, expected=comm.Get_size(), note=note,
                        kept=keeper.not_stored())
    _say_stopped()
    code = code if stored or code else 1
    if missing:
        mpi.abort(comm, code or 1)
    return code


def _shared(args) -> Any:
    from pathlib import Path
    return Path(args.shared_dir) if args.shared_dir is not None else None


def _measure_again(args, ident: dict[str, Any], profile, tags, plan: dict[str, Any]):
    """This node's second measurement (--confirm): the stages of the plan, tagged with the
    first run's id."""
    from numascope import suite
    from numascope.fleet import confirm, node
    stages = node.fleet_stages(suite.with_options(suite.chosen(plan["stages"],
                                                               suite.all_stages()), args))
    return node.run_node(ident, profile, stages, {**tags, confirm.TAG: plan["confirm_of"]},
                         machine=suite.machine_options(args))


def _confirm(args, comm, store, fid, rows, silent, profile, tags, on_record, me):
    """Rank 0, --confirm: screen the stored fleet, have the flagged nodes measure their
    failing stages again, judge. Returns the verdicts (numascope.fleet.confirm)."""
    from numascope.fleet import confirm, mpi, node, outliers
    from numascope.fleet.load import analysis_runs
    runs = analysis_runs(store, [r["run_id"] for r in rows])
    a = outliers.analyze(runs, fleet=fid)
    rank_of = {r["run_id"]: r["rank"] for r in rows}
    plans = {rank_of[rid]: {"stages": st, "confirm_of": rid}
             for rid, st in confirm.plan(a).items() if rank_of.get(rid) is not None}
    by_rank = {r["rank"]: r for r in rows}

    def failed(rank: int, reason: str):
        row = by_rank[rank]
        ident = {"id": fid, "host": row["host"], "rank": rank, "ranks": len(rows),
                 "launcher": "mpi", "slurm": row.get("slurm", {})}
        return node.failed_record(ident, profile.name,
                                  {**tags, confirm.TAG: plans[rank]["confirm_of"]}, reason)

    def keep(rec):
        on_record(rec)
        return rec

    second = mpi.second_round(comm, plans, args.node_timeout,
                              lambda p: _measure_again(args, me, profile, tags, p), keep,
                              failed, silent)
    return confirm.judge(a, {r.tags[confirm.TAG]: r for r in second})


def _node_row(rec) -> dict[str, Any]:
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


def _print_nodes(args, fid, rows, mode: str, where: str, verdicts=None,
                 expected: int | None = None, note: str = "",
                 kept: dict[str, str] | None = None) -> int:
    """fleet run's table of nodes (rank 0's, or a lone task's); the exit code: 0 when
    every node expected is complete, 1 when one is not (failed, interrupted, missing) or its
    record is not in the store, 128 + the signal when this job was stopped by one. `kept`
    (Keeper.not_stored): run id -> where a record the store does not hold is instead; such
    a node is counted measured, never stored nor complete in the store."""
    from numascope import signals
    from numascope.errors import escape_text
    if note:         # one line, unwrapped: it holds a command to copy
        err.print(f"numascope: error: {escape_text(note)}", markup=False, soft_wrap=True)
    kept = kept or {}
    rows = [{k: v for k, v in r.items() if k != "fleet"} for r in rows]
    if mode != "shared-dir":
        for r in rows:
            r["stored"] = r["run_id"] not in kept
            if not r["stored"]:
                r["kept"] = kept[r["run_id"]]
    bad = [r for r in rows if r["status"] != "complete"]
    unstored = [r for r in rows if r.get("stored") is False]
    stopped = signals.received()
    code = 128 + int(stopped) if stopped else 1 if bad or unstored else 0
    extra = {} if verdicts is None else {"confirmation": [v.to_dict() for v in verdicts]}
    if mode != "shared-dir":
        extra["stored"] = len(rows) - len(unstored)
    if args.json:
        emit(NAME, rows, [{"kind": "node-failed", "exit_code": 1, "status": r["status"],
                           "message": f"{r['host']}: {r['status']}: "
                                      f"{r['reason'] or r['status']}"}
                          for r in bad]
             + [{"kind": "node-not-stored", "exit_code": 1, "status": r["status"],
                 "message": f"{r['host']}: its record is not in the store: {r['kept']}"}
                for r in unstored],
             subcommand="run", fleet=fid, mode=mode, where=where,
             expected=expected if expected is not None else len(rows),
             nodes_status={k: sum(r["status"] == k for r in rows)
                           for k in sorted({r["status"] for r in rows})}, **extra)
    else:
        of = f" of {expected} expected" if expected not in (None, len(rows)) else ""
        if not unstored:
            counts = node_counts([r["status"] for r in rows])
            head = f"{plural(len(rows), 'node')}{of} ({counts}; {mode}; {where})"
        else:
            stored = [r["status"] for r in rows if r.get("stored")]
            ways = "; ".join(dict.fromkeys(r["kept"] for r in unstored))
            head = (f"{plural(len(rows), 'node')} measured{of}, {len(stored)} stored ("
                    + (f"stored: {node_counts(stored)}; " if stored else "")
                    + f"not stored: {node_counts([r['status'] for r in unstored])}, "
                    f"{ways}; {mode}; {where})")
        _para(f"fleet {fid}: {head}")
        for r in rows:
            _para(f"{r['host']}  {r['status']}  {plural(r['results'], 'result')}"
                  + (f"  {r['reason']}" if r["reason"] else "")
                  + (f"  [not stored: {r['kept']}]" if r.get("stored") is False else "")
                  + hooked_note(r.get("test_hooks")), "  ")
        if verdicts is not None:
            print_verdicts(verdicts)
    return code


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
        _para("made with test hooks, their figures falsified on purpose (not for use): "
              + ", ".join(f"{h} ({', '.join(v)})" for h, v in hooked.items()))


def _worse(pct: float) -> str:
    """A family's % from the group median, said as the report says it."""
    if pct is None or not math.isfinite(pct):
        return "– %"
    return f"{_fmt(pct)} % worse" if pct >= 0 else f"{_fmt(-pct)} % better"


def print_verdicts(verdicts) -> None:
    """The confirmation of the flagged nodes: both measurements of each."""
    if not verdicts:
        _para("confirmation: no node flagged, nothing measured again")
        return
    n = sum(v.status == "confirmed" for v in verdicts)
    _para(f"confirmation: {plural(len(verdicts), 'flagged node')}, {n} confirmed by a second "
          f"measurement, {len(verdicts) - n} not")
    for v in verdicts:
        _para(f"{v.host}  {v.status}  (measured again: {', '.join(v.stages) or '-'})", "  ")
        seconds = {s["metric"]: s for s in v.second}
        for f in v.first:
            s2 = seconds.get(f["metric"])
            first = (_worse(f["value"]) if f["metric"].endswith(" metrics)")
                     else f"{_fmt(f['value'])} {f['unit']}")
            if s2 is None:
                then = "not measured again"
            elif "worse_pct" in s2:     # as the report says it: never "-280 % worse"
                then = f"{_worse(s2['worse_pct'])}, t {_fmt(s2['z'])}"
            else:
                then = (f"{_fmt(s2['value'])} {f['unit']}"
                        + (f", t {_fmt(s2['z'])}" if "z" in s2 else ""))
            _para(f"{f['metric']}: first {first}; second {then}"
                  f"{' (flagged)' if s2 and s2['flagged'] else ''}", "      ",
                  keep=(f["metric"],))


# -- gather --------------------------------------------------------------------------------

def fleet_of(store: Any, fleet: str | None) -> tuple[str, list[str]]:
    """(the fleet id, its run ids): the fleet named (id or unique prefix), else the latest."""
    have = fleets(store)
    if not have:
        raise UserError(f"no fleet runs in {store.path} (run `numascope fleet run` under "
                        "srun or mpirun)")
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


def node_run(store: Any, fleet: str | None, host: str) -> tuple[str, Any]:
    """(the fleet id, the stored record of node `host` in it: its first measurement, not a
    --confirm one); one line, exit 2, for a node the fleet does not have."""
    import json

    from numascope.errors import escape_text
    from numascope.fleet import confirm
    fid, ids = fleet_of(store, fleet)
    want = set(ids)
    hosts: list[str] = []
    hit = None
    for run_id, tags in store._q("SELECT run_id, tags FROM runs ORDER BY started, rowid"):
        if run_id not in want:
            continue
        t = json.loads(tags)
        if confirm.TAG in t:
            continue
        hosts.append(t.get("host", ""))
        if t.get("host") == host:
            hit = run_id
    if hit is None:
        shown = ", ".join(escape_text(h, 40) for h in sorted(set(hosts))[:5])
        raise UserError(f"no node {escape_text(host, 80)} in fleet {fid} "
                        f"({plural(len(set(hosts)), 'node')}: {shown}"
                        f"{', …' if len(set(hosts)) > 5 else ''})")
    return fid, store.get_run(hit)


def _show(args: argparse.Namespace) -> int:
    """fleet show NODE: the node's full record, read from where it lives (its file) or
    from the store when it holds it whole; when it cannot be read from here, where it is
    (one line on stderr) and the brief the store holds (each metric's median)."""
    from numascope.fleet import full
    from numascope.report.headline_terminal import print_headline
    from numascope.report.terminal import print_run
    with _open(args) as store:
        fid, rec = node_run(store, args.fleet, args.node)
    got, why = full.fetch(rec)
    where = full.where(rec)
    line = "" if got is not None else (
        f"{args.node}: {full.said(rec)}, not readable from here ({why}); run `numascope fleet "
        f"show {args.node}` there, or copy it here and `numascope fleet gather --full "
        f"{args.node}`; shown: the store's brief (each metric's median)")
    if args.json:
        emit(NAME, [(got or rec).to_dict()],
             [{"kind": "brief-only", "exit_code": 0, "message": line}] if line else [],
             subcommand="show", fleet=fid, host=args.node, run_id=rec.run_id,
             full=got is not None, full_record=where)
        return 0
    if line:
        _warn(line)
    elif where is not None:
        _para(f"{args.node}: full record {where['path']} (host {where.get('host')})")
    print_headline(got or rec, out)
    print_run(got or rec, out, args.all_metrics)
    return 0


def _gather_full(args: argparse.Namespace) -> int:
    """fleet gather --full NODE…: each node's full record read from where it lives and
    stored in place of its brief (one transaction each). Every node is found and read
    before the store is written: one that is not, one line, exit 2, nothing copied."""
    from numascope.errors import escape_text
    from numascope.fleet import full
    todo = []
    with _open(args) as store:
        for host in dict.fromkeys(args.dir):
            _, rec = node_run(store, args.fleet, host)
            got, why = full.fetch(rec)
            if got is None:
                raise UserError(f"{escape_text(host, 80)}: {full.said(rec)}, not readable "
                                f"from here ({why}); nothing copied")
            todo.append((host, rec, got))
    copied = []
    with _open(args, write=True) as store:
        for host, rec, got in todo:
            if full.is_brief(rec):
                store.save_run(got, replaces=rec.run_id)
                copied.append(host)
        path = store.path
    if args.json:
        emit(NAME, [{"host": h, "run_id": r.run_id, "copied": h in copied}
                    for h, r, _ in todo], [], subcommand="gather", full=True,
             copied=len(copied), store=str(path))
    else:
        _para(f"copied {plural(len(copied), 'full record')} into {path}"
              + (f" ({len(todo) - len(copied)} already there whole)"
                 if len(copied) < len(todo) else ""))
    return 0


def _gather(args: argparse.Namespace) -> int:
    from numascope.fleet import files
    if args.full:
        return _gather_full(args)
    if args.fleet is not None:
        raise UserError("--fleet: with --full only (the nodes whose full records to copy)")
    if len(args.dir) > 1:
        raise UserError("fleet gather takes one folder (or --full NODE…)")
    args.dir = args.dir[0]
    files.read_records(args.dir)        # every file checked before the store is touched
    with _open(args, write=True) as store:
        added, skipped = files.gather(args.dir, store)
        path = store.path
    if args.json:
        emit(NAME, [{"run_id": r.run_id, "host": r.host.get("hostname"),
                     "status": r.status, "added": True} for r in added] +
             [{"run_id": r.run_id, "host": r.host.get("hostname"), "status": r.status,
               "added": False} for r in skipped],
             subcommand="gather", added=len(added), already=len(skipped), store=str(path))
    else:
        lost = sum(r.status == "missing" for r in added)
        out.print(f"gathered {plural(len(added), 'new run')} into "
                  f"{path} ({len(skipped)} already there"
                  + (f"; {lost} of them missing nodes: no record file for a task the "
                     "fleet's manifest expects" if lost else "") + ")",
                  markup=False, soft_wrap=True)
    return 0


# -- report --------------------------------------------------------------------------------

def parse_floors(items: list[str] | None) -> tuple[float, dict[str, float]]:
    from numascope.fleet.outliers import FLOOR
    default, per = FLOOR, {}
    for item in items or []:
        model, sep, v = item.rpartition("=")
        try:
            frac = float(v.strip().removesuffix("%")) / (100 if v.strip().endswith("%")
                                                         else 1)
        except ValueError:
            raise UserError(f"bad --floor {item!r}: expected a fraction such as 0.59 or "
                            "MODEL=0.59") from None
        if not 0 < frac <= 1:
            raise UserError(f"bad --floor {item!r}: the fraction must be in (0, 1]")
        if sep and not model.strip():
            raise UserError(f"bad --floor {item!r}: give the CPU model before '='")
        if sep:
            per[model.strip()] = frac
        else:
            default = frac
    return default, per


def _positive(v: float | None, flag: str, default: float) -> float:
    if v is None:
        return default
    if not (math.isfinite(v) and v > 0):
        raise UserError(f"{flag} {v:g}: give a number > 0")
    return v


def _report(args: argparse.Namespace) -> int:
    from numascope.fleet import outliers
    z = _positive(args.z, "--z", outliers.Z_LIMIT)
    if z is not None and z > Z_MAX:
        raise UserError(f"--z {z:g}: at most {Z_MAX:g} (no node is that far out)")
    gap = args.gap if args.gap is not None else outliers.GAP_PCT
    if not (math.isfinite(gap) and gap >= 0):
        raise UserError(f"--gap {gap:g}: give a percentage >= 0")
    if gap > GAP_MAX:
        raise UserError(f"--gap {gap:g}: at most {GAP_MAX:g} %")
    floor, floors = parse_floors(args.floor)
    if args.plot is not None:
        from numascope.command.output import check_output
        check_output(args.plot, "--plot", (".png", ".svg", ".pdf"))
    second: dict[str, Any] = {}
    with _open(args) as store:
        fid, runs = select(store, args.fleet, args.runs, second=second)
    refuse_smoke(runs, "an outlier analysis")
    hooked = hooked_hosts(runs)
    a = outliers.analyze(runs, z, gap, floor, floors, fid)
    verdicts = None
    if second:
        from numascope.fleet import confirm
        verdicts = confirm.judge(a, second)
    if args.plot is not None:
        from numascope.errors import escape_text
        from numascope.plotting import save_figures
        from numascope.report.figures import fleet as fig
        figs = fig.fleet_figures(a)
        if figs:
            try:
                written = save_figures(figs, args.plot)
            except OSError as e:    # checked before; a disk that filled since
                raise UserError(f"--plot {escape_text(args.plot, 160)}: cannot write "
                                f"({e.strerror or type(e).__name__})") from None
            for p in written:
                _warn(f"plot written to {p}")
        else:
            _warn("nothing to plot: no metric measured on these nodes")
    if args.json:
        d = a.to_dict()
        flags = d.pop("flags")
        if verdicts is not None:
            d["confirmation"] = [v.to_dict() for v in verdicts]
        emit(NAME, flags, [{"kind": f"node-{f['status']}", "exit_code": 1,
                            "message": f"{f['host']}: {f['reason'] or f['status']}"}
                           for f in a.failed],
             subcommand="report", test_hooks=hooked, **d)
        return 1 if a.failed else 0
    print_analysis(a)
    print_hooked(hooked)
    if verdicts is not None:
        print_verdicts(verdicts)
    # every node accounted for: one that failed, was interrupted or never reported is
    # not a healthy fleet, whatever the others measured
    return 1 if a.failed else 0


def print_analysis(a) -> None:
    from collections import Counter
    ok = a.nodes - len(a.failed)
    bad = Counter(f["status"] for f in a.failed)
    _para(f"fleet {a.fleet or '(runs given)'}: {plural(a.nodes, 'node')} ({ok} complete, "
          + ", ".join(f"{bad[k]} {k}" for k in ("failed", "interrupted", "incomplete",
                                                 "missing")
                      if bad[k] or k == "failed")
          + f"), {plural(len(a.groups), 'configuration group')}")
    for g in a.groups:
        _para(f"group: {g.label}: {plural(len(g.hosts), 'node')}, "
              f"{plural(len(g.metrics), 'metric')}"
              + (" (inconclusive: too few nodes to judge)" if g.inconclusive else ""), "  ")
    if a.smoke:
        _para("smoke runs: their numbers measure caches and are not for reading; no node "
              "is flagged on them (nodes, failures and shape below are real)")
    elif a.flags:
        out.print(f"flagged ({len(a.flags)}, most severe first):", markup=False)
        for f in a.flags:
            ref = "median" if f.kind == "outlier" else "floor"
            _para(f"{f.host}  [{f.kind}]  {f.metric}", "  ", keep=(f.metric,))
            _para(f"{_fmt(f.value)} {f.unit} vs {ref} {_fmt(f.reference)}: {f.why}", "      ")
    else:
        floor = f", or {a.floor_said()}" if a.floor_nodes else f"; {a.floor_said()}"
        _para(f"no node flagged (t > {a.z_limit:.3g} and > {a.gap_pct:g} % worse{floor})")
    if a.shape:
        out.print(f"shape outliers ({len(a.shape)}):", markup=False)
        for s in a.shape:
            _para(f"{s.host}  {s.field} {_fmt(s.value)}, expected {_fmt(s.expected)} "
                  f"({s.agree})", "  ")
    if a.failed:
        out.print(f"nodes not complete ({len(a.failed)}):", markup=False)
        for f in a.failed:
            _para(f"{f['host']}  {f['status']}: {f['reason'] or f['status']}", "  ")


# -- baselines -----------------------------------------------------------------------------

def _baseline(args: argparse.Namespace) -> int:
    from numascope.fleet import baseline, outliers
    if args.baseline_cmd == "list":
        with _open(args) as store:
            rows = [baseline.load(store, n) for n in baseline.names(store)]
        items = [{"name": b["name"], "created": b["created"], "fleet": b["fleet"],
                  "groups": len(b["groups"])} for b in rows]
        if args.json:
            emit(NAME, items, [], subcommand="baseline list")
        elif not items:
            out.print("no baselines stored", markup=False)
        for b in items if not args.json else []:
            _para(f"{b['name']}  {_from_fleet(b['fleet'])}  {plural(b['groups'], 'group')}  "
                  f"{b['created']}")
        return 0
    if args.baseline_cmd == "copy":
        return _baseline_copy(args)
    name = baseline.check_name(args.name, "baseline save")
    with _open(args) as store:
        fid, runs = select(store, args.fleet, args.runs)
    refuse_smoke(runs, "a baseline", all_smoke_too=True)
    refuse_hooked(runs, "a baseline")
    a = outliers.analyze(runs, fleet=fid)
    with _open(args, write=True) as store:
        saved = baseline.save(store, name, a, replace=args.replace,
                              allow_small=args.allow_small)
    metrics = sum(len(g["metrics"]) for g in saved["groups"].values())
    if args.json:
        emit(NAME, [{"group": k, **v} for k, v in saved["groups"].items()], [],
             subcommand="baseline save", name=name, fleet=fid)
    else:
        _para(f"baseline {name}: {plural(len(saved['groups']), 'group')}, "
              f"{plural(metrics, 'median')} from {plural(len(runs), 'run')}"
              f"{f' of fleet {fid}' if fid else ''}")
        if saved.get("small"):
            _para(f"marked: {plural(len(saved['small']), 'group')} of fewer than "
                  f"{baseline.MIN_NODES} nodes, which judge nobody (checks against them "
                  "are inconclusive): " + "; ".join(saved["small"]))
    return 0


def _baseline_copy(args: argparse.Namespace) -> int:
    import os

    from numascope.fleet import baseline
    from numascope.results.store import Store, default_path
    name = baseline.check_name(args.name, "baseline copy")
    src = os.path.realpath(args.store if args.store is not None else default_path())
    if os.path.realpath(args.to) == src:
        raise UserError(f"--to {args.to}: the store the baseline is read from; give "
                        "another store")
    with _open(args) as store:
        base = baseline.load(store, name)
    with Store.open(args.to, write=True) as dst:
        baseline.copy(base, dst, replace=args.replace)
    groups = len(base["groups"])
    if args.json:
        emit(NAME, [{"name": base["name"], "created": base["created"], "fleet": base["fleet"],
                     "groups": groups}], [], subcommand="baseline copy", to=str(args.to))
    else:
        _para(f"baseline {base['name']} ({plural(groups, 'group')}, {_from_fleet(base['fleet'])}) "
              f"copied to {args.to}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from numascope.fleet import baseline, judged
    given = baseline.parse_tolerances(args.tolerance)
    name = baseline.check_name(args.baseline, "--baseline")
    one_host = args.host is not None or (
        args.fleet is None and [r.strip() for r in args.runs] in (["latest"], ["last"]))
    if one_host and args.fleet is not None:
        raise UserError("give --host or --fleet, not both")
    if one_host and len(args.runs) > 1:
        raise UserError("--host judges the host's latest run: name no runs with it")
    max_age = judged.parse_age(args.max_age) if one_host or args.max_age else None
    pick = None
    with _open(args) as store:
        base = baseline.load(store, name)
        baseline.check_tolerance_keys(base, given)
        if one_host:
            pick = judged.host_run(store, _host(args))
            if pick.run_id is None:
                return _cannot(args, base, pick, pick.why)
            from numascope.fleet.load import analysis_runs
            # the latest run, each stage of the baseline it did not ask for judged on that
            # stage's latest measurement on this host (a `run --stage c2c` hides nothing)
            fid, runs = None, [judged.with_older(store, pick, r, base, max_age)
                               for r in analysis_runs(store, [pick.run_id])]
        else:
            again: dict[str, Any] = {}
            fid, runs = select(store, args.fleet, args.runs, second=again)
            # a node --confirm measured again is judged by its second measurement: a flag
            # "not reproduced" is not a drain later
            runs = [again.get(r.run_id, r) for r in runs]
    if not runs:
        return _cannot(args, base, pick, "no run to judge (a --confirm measurement is "
                                         "judged with the run it measured again)")
    refuse_smoke(runs, "a check against a baseline", all_smoke_too=True)
    refuse_hooked(runs, "a check against a baseline")
    if pick is not None:
        (run,) = runs
        why = judged.stale(run, max_age) or _unfinished(run)
        if why:
            return _cannot(args, base, pick, why, run)
    verdicts = baseline.check(base, runs, given)
    if max_age is not None and pick is None:        # --max-age over named runs or a fleet
        for v, r in zip(verdicts, runs, strict=True):
            old = judged.stale(r, max_age)
            if old and not v.problems:
                v.unjudged.insert(0, {"metric": "", "why": f"run {old}"})
                v.ok = False
    bad = [v for v in verdicts if v.problems]
    unsure = [v for v in verdicts if v.status == "inconclusive"]
    code = 1 if bad else baseline.INCONCLUSIVE_EXIT if unsure else 0
    # a baseline too small to judge anyone by: one line, not one per node and metric
    small = baseline.too_small(base) if unsure else None
    if args.json:
        inconclusive = ([{"kind": "inconclusive", "exit_code": baseline.INCONCLUSIVE_EXIT,
                          "message": small}] if small else
                        [{"kind": "inconclusive", "exit_code": baseline.INCONCLUSIVE_EXIT,
                          "message": f"{v.host}: {v.unjudged[0]['why']}"} for v in unsure])
        extra = {} if pick is None else {"host": pick.host, "run_id": pick.run_id,
                                         "confirm_of": pick.first,
                                         "age_s": _age(runs[0]),
                                         "older_runs": [p.to_dict() for p in pick.parts],
                                         "not_judged": [p.to_dict() for p in pick.not_judged]}
        emit(NAME, [v.to_dict() for v in verdicts],
             [{"kind": "out-of-baseline", "exit_code": 1,
               "message": f"{v.host}: {v.problems[0]['why']}"} for v in bad] + inconclusive,
             subcommand="check", baseline=base["name"], fleet=fid,
             nodes=len(verdicts), failed=len(bad), inconclusive=len(unsure), **extra)
    elif pick is not None:
        (v,) = verdicts
        said = "out of baseline" if v.problems else "inconclusive" if unsure else \
            f"within tolerance ({plural(v.checked, 'metric')})"
        lines = [f"{v.host}  {p['metric'] or 'run'}: {p['why']}" for p in v.problems]
        lines += [small] if small else [f"{v.host}  inconclusive: {p['metric'] or 'run'}: "
                                        f"{p['why']}" for p in v.unjudged]
        _one_host(base, pick, runs[0], said, lines)
        return code
    elif small:
        _para(f"{small}: {plural(len(unsure), 'node')} inconclusive"
              + (f", {len(bad)} out" if bad else ""))
    else:
        ok = len(verdicts) - len(bad) - len(unsure)
        _para(f"baseline {base['name']}: {ok} of {plural(len(verdicts), 'node')} within "
              "tolerance"
              + (f", {len(unsure)} inconclusive" if unsure else ""))
    if not args.json:
        for v in bad:
            for p in v.problems:
                _para(f"{v.host}  {p['metric'] or 'run'}: {p['why']}", "  ",
                      keep=(p["metric"] or "",))
        for v in unsure if not small else []:
            for p in v.unjudged:
                _para(f"{v.host}  inconclusive: {p['metric'] or 'run'}: {p['why']}", "  ",
                      keep=(p["metric"] or "",))
    return code


def _one_host(base: dict[str, Any], pick: Any, run: Any | None, said: str,
              lines: list[str]) -> None:
    """A one-host check as text: the verdict and the host on the first line (a health
    checker's log reads it), then why, then which run was judged."""
    _para(f"baseline {base['name']}: {said} (host {pick.host})")
    for line in lines:
        _para(line, "  ")
    judged = _judged_words(pick, run) if pick.run_id else ""
    if judged:
        _para(f"judged: {judged.removeprefix('; host ' + pick.host + ', ')}", "  ")


def _host(args: argparse.Namespace) -> str:
    """--host checked as every name is (an empty one the command line refuses), else the
    local host's name as fleet run records it."""
    from numascope.fleet import node
    from numascope.results.run import check_label
    if args.host is not None:
        return check_label(args.host, "--host", "host name", node.FLEET_ID_MAX)
    return node.hostname()


def _unfinished(run: Any) -> str:
    """Why a run that did not do all it was asked cannot be judged ('' when it did): the
    fleet's one verdict (numascope.fleet.verdict)."""
    from numascope.fleet.baseline import own_failure
    from numascope.fleet.verdict import verdict
    v = verdict(run)
    if v.ok or own_failure(run, v):      # a node whose own run failed is out: judged so
        return ""
    return f"the run did not do all it was asked ({v.status}: {v.reason})"


def _age(run: Any) -> float | None:
    from numascope.fleet import judged
    a = judged.age_s(run)
    return None if a is None else round(a, 1)


def _judged_words(pick: Any, run: Any | None) -> str:
    """'; host n7, run R, 2.1 h old; bandwidth from run Q, 20 h old' — which runs a
    one-host check judged (the latest, and each earlier one a stage was taken from)."""
    from numascope.fleet import judged
    if pick is None:
        return ""
    a = judged.age_s(run) if run is not None else None
    age = f", {judged.show_age(a)} old" if a is not None else ""
    again = f", the --confirm measurement of run {pick.first}" if pick.first else ""

    def old(p: Any) -> str:
        return f"run {p.run_id}" + (f", {judged.show_age(p.age_s)} old"
                                    if p.age_s is not None else "")
    parts = "".join(f"; {', '.join(p.families)} from {old(p)}" for p in pick.parts)
    parts += "".join(f"; {', '.join(p.families)} not judged: last measured in {old(p)}, "
                     "older than --max-age" for p in pick.not_judged)
    return f"; host {pick.host}, run {pick.run_id}{again}{age}{parts}"


def _cannot(args: argparse.Namespace, base: dict[str, Any], pick: Any, why: str,
            run: Any | None = None) -> int:
    """A check that cannot judge: one line (host, run, why), exit 5."""
    from numascope.fleet import baseline
    line = f"baseline {base['name']}: cannot judge{_judged_words(pick, run)}: {why}" \
        if pick is not None and pick.run_id else f"baseline {base['name']}: cannot judge: {why}"
    if args.json:
        emit(NAME, [], [{"kind": "inconclusive", "exit_code": baseline.INCONCLUSIVE_EXIT,
                         "message": line}], subcommand="check", baseline=base["name"],
             fleet=None, nodes=0, failed=0, inconclusive=1,
             host=pick.host if pick else None, run_id=pick.run_id if pick else None)
    elif pick is not None:
        _one_host(base, pick, run, "cannot judge", [why])
    else:
        _para(line)
    return baseline.INCONCLUSIVE_EXIT


# -- Kubernetes: node-feature-discovery labels ---------------------------------------------

def _labels(args: argparse.Namespace) -> int:
    """fleet labels: this host's latest run as NFD's local feature file (exit 0), or, when
    nothing was measured that may label the node now, none and exit 5 (a file of ours
    removed)."""
    from numascope.errors import escape_text
    from numascope.fleet import baseline, judged
    from numascope.fleet import kubernetes as k8s
    path = k8s.output_path(args.output, "--output", stdout_ok=True)
    if str(path) == "-" and args.json:
        raise UserError("--output - with --json: standard output holds the JSON document; "
                        "give a file")
    expiry = k8s.parse_expiry(args.expiry, "--expiry")
    name = given = None
    if args.baseline is not None:
        given = baseline.parse_tolerances(args.tolerance)
        name = baseline.check_name(args.baseline, "--baseline")
    elif args.tolerance or args.max_age is not None:
        flag = "--tolerance" if args.tolerance else "--max-age"
        raise UserError(f"{flag}: give --baseline NAME too (the check it tunes)")
    max_age = judged.parse_age(args.max_age)
    host = _host(args)
    run = base = None
    with _open(args) as store:
        if name is not None:
            base = baseline.load(store, name)
            baseline.check_tolerance_keys(base, given)
        pick = judged.host_run(store, host)
        if pick.run_id is not None:
            from numascope.fleet import full
            run = store.get_run(pick.run_id)
            run = full.fetch(run)[0] or run       # a brief: its full record, when here
    if run is not None:
        refuse_hooked([run], "labels")
    why = pick.why if run is None else (
        k8s.measured(run) or k8s.stale(run, expiry, boot=k8s.boot_time()))
    shown = escape_text(path, 160)
    if why:
        try:
            gone = str(path) != "-" and k8s.remove(path)
        except OSError as e:     # an earlier file of ours that stays would still label
            raise UserError(f"--output {shown}: no labels for host {host}, and the earlier "
                            f"file cannot be removed ({e.strerror or type(e).__name__})"
                            ) from None
        line = (f"no labels for host {host}: {why}; "
                + (f"{shown} removed (NFD drops its labels)" if gone else "nothing written"))
        if args.json:
            emit(NAME, [], [{"kind": "not-measured", "exit_code": baseline.INCONCLUSIVE_EXIT,
                             "message": line}], subcommand="labels", host=host,
                 run_id=pick.run_id, output=str(path), removed=gone)
        else:
            _para(line)
        return baseline.INCONCLUSIVE_EXIT
    check = k8s.judge(base, run, given, max_age) if base is not None else None
    found = k8s.labels(run, check)
    text = k8s.render(run, found, check, expiry)
    if str(path) == "-":
        import sys
        sys.stdout.write(text)        # as it is: no console markup, wrapping or emoji
        return 0
    try:
        k8s.write(path, text)
    except OSError as e:        # checked before; a disk that filled since
        raise UserError(f"--output {shown}: cannot write ({e.strerror or type(e).__name__})"
                        ) from None
    if args.json:
        emit(NAME, [{"name": f"{k8s.PREFIX}/{k}", "value": v} for k, v in found.items()], [],
             subcommand="labels", host=host, run_id=run.run_id, output=str(path),
             check=None if check is None else check.__dict__,
             expiry=k8s.expires(run, expiry))
    else:
        _para(f"wrote {shown}: host {host}, run {run.run_id} ({k8s.summary(found)})")
    return 0


# -- Prometheus ----------------------------------------------------------------------------

def _prom(args: argparse.Namespace) -> int:
    from numascope.command.output import check_output
    from numascope.errors import escape_text
    from numascope.fleet import outliers, prom
    if args.out == "-":
        raise UserError("--out -: give a .prom file (node_exporter reads files, written "
                        "atomically)")
    check_output(args.out, "--out", (".prom",))
    given = None
    if args.baseline is not None:
        from numascope.fleet import baseline
        given = baseline.parse_tolerances(args.tolerance)
        name = baseline.check_name(args.baseline, "--baseline")
    elif args.tolerance:
        raise UserError("--tolerance: give --baseline NAME too (the check it tunes)")
    with _open(args) as store:
        base = baseline.load(store, name) if given is not None else None
        if base is not None:
            baseline.check_tolerance_keys(base, given)
        second: dict[str, Any] = {}
        fid, runs = select(store, args.fleet, args.runs, whole=True, second=second)
    refuse_hooked(runs, "Prometheus")
    latest: dict[str, Any] = {}
    for r in runs:       # one run per host: a series must be unique in a file
        h = outliers.host_of(r)
        if h not in latest or r.started >= latest[h].started:
            latest[h] = r
    nodes = list(latest.values())
    # the fleet screen's verdict, for a fleet: its nodes screened together (smoke runs
    # among measured ones would set the profiles against each other: no verdict then)
    analysis = outliers.analyze(nodes, fleet=fid) if fid is not None and \
        outliers.smoke_among_measured(nodes) is None else None
    cleared: frozenset[str] = frozenset()
    if analysis is not None and second:       # fleet run --confirm: the second look's word
        from numascope.fleet import confirm
        cleared = frozenset(v.host for v in confirm.judge(analysis, second)
                            if v.status == "not reproduced")
    checks = None
    if base is not None:
        refuse_smoke(nodes, "a check against a baseline", all_smoke_too=True)
        checks = (base["name"], baseline.check(base, nodes, given))
    try:
        path = prom.write(args.out, nodes, analysis, checks, cleared)
    except OSError as e:        # checked before; a disk that filled since
        raise UserError(f"--out {escape_text(args.out, 160)}: cannot write "
                        f"({e.strerror or type(e).__name__})") from None
    if args.json:
        emit(NAME, [{"host": h, "run_id": r.run_id} for h, r in latest.items()], [],
             subcommand="prom", out=str(path), fleet=fid)
    else:
        _para(f"wrote {path}: {plural(len(latest), 'node')}"
              + (f", the outlier verdict of fleet {fid}" if analysis is not None else "")
              + (f", baseline {base['name']}" if base is not None else ""))
    return 0


def _tolerance_defaults() -> str:
    from numascope.fleet.baseline import defaults_text
    return defaults_text().replace("%", "%%")
