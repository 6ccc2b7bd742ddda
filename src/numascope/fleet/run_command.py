"""`numascope fleet run`: every node measured (alone, or its record sent to rank 0 under
MPI), the watchdog that records a hung node failed, --confirm's second measurement of the
flagged nodes, --nfd-file's labels, and the table of nodes. See docs/fleet.md."""

from __future__ import annotations

import argparse
import math
import threading
from typing import Any

from numascope.command.output import emit
from numascope.console import err, plural
from numascope.errors import UserError
from numascope.fleet.command import (
    NAME,
    NODE_TIMEOUT_MAX,
    hooked_note,
    node_counts,
    node_row,
    open_store,
    para,
    print_verdicts,
    warn,
)

# -- run -----------------------------------------------------------------------------------

def run(args: argparse.Namespace) -> int:

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
                warn(f"{ident['host']}: --shared-dir: cannot write "
                      f"{e.filename}: {e.strerror}")
        elif comm is not None or args.store is not None:   # the full record stays here
            kept.update(_keep_full(rec, node_dir, ident["host"]))
        if prom_dir is not None and node.hooks_of(rec):
            warn(f"{ident['host']}: --prom-dir: not written: this run was made with test "
                  f"hook {', '.join(node.hooks_of(rec))}")
        elif prom_dir is not None:
            from numascope.fleet import prom
            try:
                prom.write(prom_dir / "numascope.prom", [rec])
            except OSError as e:
                warn(f"{ident['host']}: --prom-dir: cannot write {e.filename}: "
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
        warn(f"{host}: cannot keep its full record in {folder} "
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
            warn(f"{ident['host']}: --shared-dir: cannot write the fleet's manifest "
                  f"({e.strerror or type(e).__name__}); a task that never reports will not "
                  "be listed")
    else:
        keeper = keep.Keeper(open_store(args, write=True), None, profile.name, tags, launcher,
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
            warn(f"{ident['host']}: {rec.stages[0].reason}")
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
    code = _print_nodes(args, fid, [node_row(rec)], "shared-dir" if shared else "store",
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
    with open_store(args) as store:
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
            warn(f"--nfd-file {escape_text(nfd.path, 160)}: written before this boot, "
                  "removed until this run ends")
    except OSError as e:
        warn(f"--nfd-file {escape_text(nfd.path, 160)}: cannot remove the file of an "
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
            warn(f"--nfd-file {shown}: no labels written: {why}"
                  + ("; the earlier file is removed" if gone else ""))
            return
        check = k8s.judge(nfd.base, rec, nfd.given, None) if nfd.base is not None else None
        found = k8s.labels(rec, check)
        k8s.write(nfd.path, k8s.render(rec, found, check, nfd.expiry_s))
    except OSError as e:
        warn(f"--nfd-file {shown}: cannot write ({e.strerror or type(e).__name__})")
        return
    if not args.json:
        para(f"labels: {shown} ({k8s.summary(found)})")


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
            store = open_store(args, write=True)   # refused before anything is measured
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
        return node_row(rec)

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
        para(f"fleet {fid}: {head}")
        for r in rows:
            para(f"{r['host']}  {r['status']}  {plural(r['results'], 'result')}"
                  + (f"  {r['reason']}" if r["reason"] else "")
                  + (f"  [not stored: {r['kept']}]" if r.get("stored") is False else "")
                  + hooked_note(r.get("test_hooks")), "  ")
        if verdicts is not None:
            print_verdicts(verdicts)
    return code
