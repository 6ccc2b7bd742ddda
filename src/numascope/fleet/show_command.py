"""`numascope fleet gather`, `show`, `report` and `baseline`: the store's fleet runs read,
merged, screened for outliers and kept as baselines. See docs/fleet.md."""

from __future__ import annotations

import argparse
import math
from typing import Any

from numascope.command.output import emit
from numascope.console import out, plural
from numascope.errors import UserError
from numascope.fleet.command import (
    GAP_MAX,
    NAME,
    Z_MAX,
    fleet_of,
    fmt,
    from_fleet,
    hooked_hosts,
    open_store,
    para,
    print_hooked,
    print_verdicts,
    refuse_hooked,
    refuse_smoke,
    select,
    warn,
)

# -- gather --------------------------------------------------------------------------------

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


def show(args: argparse.Namespace) -> int:
    """fleet show NODE: the node's full record, read from where it lives (its file) or
    from the store when it holds it whole; when it cannot be read from here, where it is
    (one line on stderr) and the brief the store holds (each metric's median)."""
    from numascope.fleet import full
    from numascope.report.headline_terminal import print_headline
    from numascope.report.terminal import print_run
    with open_store(args) as store:
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
        warn(line)
    elif where is not None:
        para(f"{args.node}: full record {where['path']} (host {where.get('host')})")
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
    with open_store(args) as store:
        for host in dict.fromkeys(args.dir):
            _, rec = node_run(store, args.fleet, host)
            got, why = full.fetch(rec)
            if got is None:
                raise UserError(f"{escape_text(host, 80)}: {full.said(rec)}, not readable "
                                f"from here ({why}); nothing copied")
            todo.append((host, rec, got))
    copied = []
    with open_store(args, write=True) as store:
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
        para(f"copied {plural(len(copied), 'full record')} into {path}"
              + (f" ({len(todo) - len(copied)} already there whole)"
                 if len(copied) < len(todo) else ""))
    return 0


def gather(args: argparse.Namespace) -> int:
    from numascope.fleet import files
    if args.full:
        return _gather_full(args)
    if args.fleet is not None:
        raise UserError("--fleet: with --full only (the nodes whose full records to copy)")
    if len(args.dir) > 1:
        raise UserError("fleet gather takes one folder (or --full NODE…)")
    args.dir = args.dir[0]
    files.read_records(args.dir)        # every file checked before the store is touched
    with open_store(args, write=True) as store:
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


def report(args: argparse.Namespace) -> int:
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
    with open_store(args) as store:
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
                warn(f"plot written to {p}")
        else:
            warn("nothing to plot: no metric measured on these nodes")
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
    para(f"fleet {a.fleet or '(runs given)'}: {plural(a.nodes, 'node')} ({ok} complete, "
          + ", ".join(f"{bad[k]} {k}" for k in ("failed", "interrupted", "incomplete",
                                                 "missing")
                      if bad[k] or k == "failed")
          + f"), {plural(len(a.groups), 'configuration group')}")
    for g in a.groups:
        para(f"group: {g.label}: {plural(len(g.hosts), 'node')}, "
              f"{plural(len(g.metrics), 'metric')}"
              + (" (inconclusive: too few nodes to judge)" if g.inconclusive else ""), "  ")
    if a.smoke:
        para("smoke runs: their numbers measure caches and are not for reading; no node "
              "is flagged on them (nodes, failures and shape below are real)")
    elif a.flags:
        out.print(f"flagged ({len(a.flags)}, most severe first):", markup=False)
        for f in a.flags:
            ref = "median" if f.kind == "outlier" else "floor"
            para(f"{f.host}  [{f.kind}]  {f.metric}", "  ", keep=(f.metric,))
            para(f"{fmt(f.value)} {f.unit} vs {ref} {fmt(f.reference)}: {f.why}", "      ")
    else:
        floor = f", or {a.floor_said()}" if a.floor_nodes else f"; {a.floor_said()}"
        para(f"no node flagged (t > {a.z_limit:.3g} and > {a.gap_pct:g} % worse{floor})")
    if a.shape:
        out.print(f"shape outliers ({len(a.shape)}):", markup=False)
        for s in a.shape:
            para(f"{s.host}  {s.field} {fmt(s.value)}, expected {fmt(s.expected)} "
                  f"({s.agree})", "  ")
    if a.failed:
        out.print(f"nodes not complete ({len(a.failed)}):", markup=False)
        for f in a.failed:
            para(f"{f['host']}  {f['status']}: {f['reason'] or f['status']}", "  ")


# -- baselines -----------------------------------------------------------------------------

def baseline(args: argparse.Namespace) -> int:
    from numascope.fleet import baseline, outliers
    if args.baseline_cmd == "list":
        with open_store(args) as store:
            rows = [baseline.load(store, n) for n in baseline.names(store)]
        items = [{"name": b["name"], "created": b["created"], "fleet": b["fleet"],
                  "groups": len(b["groups"])} for b in rows]
        if args.json:
            emit(NAME, items, [], subcommand="baseline list")
        elif not items:
            out.print("no baselines stored", markup=False)
        for b in items if not args.json else []:
            para(f"{b['name']}  {from_fleet(b['fleet'])}  {plural(b['groups'], 'group')}  "
                  f"{b['created']}")
        return 0
    if args.baseline_cmd == "copy":
        return _baseline_copy(args)
    name = baseline.check_name(args.name, "baseline save")
    with open_store(args) as store:
        fid, runs = select(store, args.fleet, args.runs)
    refuse_smoke(runs, "a baseline", all_smoke_too=True)
    refuse_hooked(runs, "a baseline")
    a = outliers.analyze(runs, fleet=fid)
    with open_store(args, write=True) as store:
        saved = baseline.save(store, name, a, replace=args.replace,
                              allow_small=args.allow_small)
    metrics = sum(len(g["metrics"]) for g in saved["groups"].values())
    if args.json:
        emit(NAME, [{"group": k, **v} for k, v in saved["groups"].items()], [],
             subcommand="baseline save", name=name, fleet=fid)
    else:
        para(f"baseline {name}: {plural(len(saved['groups']), 'group')}, "
              f"{plural(metrics, 'median')} from {plural(len(runs), 'run')}"
              f"{f' of fleet {fid}' if fid else ''}")
        if saved.get("small"):
            para(f"marked: {plural(len(saved['small']), 'group')} of fewer than "
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
    with open_store(args) as store:
        base = baseline.load(store, name)
    with Store.open(args.to, write=True) as dst:
        baseline.copy(base, dst, replace=args.replace)
    groups = len(base["groups"])
    if args.json:
        emit(NAME, [{"name": base["name"], "created": base["created"], "fleet": base["fleet"],
                     "groups": groups}], [], subcommand="baseline copy", to=str(args.to))
    else:
        para(f"baseline {base['name']} ({plural(groups, 'group')}, {from_fleet(base['fleet'])}) "
              f"copied to {args.to}")
    return 0
