"""`numascope advise --predict / --verify`: the predict section (numascope.predict).

Which run: --run ID, else this host's latest run (the host name as `fleet check latest`
takes it), leaving out verification runs (tag verify). A run without triad bandwidth
results, no run at all, an unknown id: one line naming the command that measures what is
missing. A replayed machine (--sysfs-root) predicts only from a run named with --run, and
refuses --verify (its CPUs are not here to run on).

Every predicted figure carries its kind (lookup, interpolated, model:
numascope.predict.model.KINDS); --verify's errors are tallied by kind (`accuracy`), never
across kinds."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from numascope.errors import UserError

MEASURE = "numascope run --stage bandwidth --stage matrix"


def _replayed(args: argparse.Namespace) -> bool:
    return str(args.sysfs_root).strip() not in ("/", "")


def pick_run(args: argparse.Namespace) -> Any:
    """The RunRecord to predict from (module doc)."""
    from numascope.fleet.node import hostname
    from numascope.results.store import Store, default_path
    path = default_path() if args.store is None else args.store
    if args.store is None and not default_path().exists():
        raise UserError(f"no runs stored ({path} does not exist): measure first with "
                        f"`{MEASURE}`")
    with Store.open(args.store) as st:
        if args.run is not None:
            ids = st.resolve(args.run)
            if len(ids) != 1:
                raise UserError(f"--run {args.run}: {'no such run' if not ids else 'names ' + str(len(ids)) + ' runs'} "
                                f"in {st.path} (numascope runs lists them)")
            return st.get_run(ids[0])
        if _replayed(args):
            raise UserError("--predict with --sysfs-root needs the replayed machine's run "
                            "named: --run ID (the store's latest run is this machine's)")
        host = hostname()
        mine = [r for r in st.list_runs()
                if (r.hostname or r.tags.get("host")) == host and "verify" not in r.tags]
        if not mine:
            raise UserError(f"no run of host {host} in {st.path}: measure first with "
                            f"`{MEASURE}`")
        return st.get_run(mine[-1].run_id)


def predict_section(args: argparse.Namespace) -> dict[str, Any]:
    from numascope.families.compute.command import machine
    from numascope.predict.model import points, predict
    from numascope.predict.plan import candidates, item, rank, why
    if args.verify and _replayed(args):
        raise UserError("--verify runs the layouts on this machine; a replayed machine "
                        "(--sysfs-root) is only predicted: drop --verify")
    rec = pick_run(args)
    if not points(rec):
        raise UserError(f"run {rec.run_id} has no triad bandwidth results to predict from: "
                        f"measure them with `{MEASURE}`")
    if args.verify:     # each check is stored: a store that cannot take them costs nothing
        from numascope.results.store import Store
        with Store.open(args.store, write=True):
            pass
    with machine(str(args.sysfs_root)) as (topo, _tree):
        cands = candidates(topo, ranks=args.ranks, threads=args.threads, near=args.near,
                           unit=args.unit)
        ranked = rank([(c, predict(rec, c.shape, demand=args.demand)) for c in cands])
        items = [item(c, p) for c, p in ranked]
        checked: list[Any] = []
        if args.verify:
            from numascope.predict.verify import store_run
            for i, (it, (c, p)) in enumerate(zip(items, ranked), 1):
                _progress(f"verify {i}/{len(ranked)}: {c.label} …")
                t0 = time.monotonic()
                run = store_run(topo, c, p, rec, args.reps, args.store)
                it["verified"] = _verified(run)
                checked += run.results
                v = it["verified"]
                _progress(f"verify {i}/{len(ranked)}: {c.label}: {v['total_gbs']:.3g} GB/s "
                          f"measured, {_gbs(p.total)} predicted ({v['launcher']}, run "
                          f"{run.run_id}, {time.monotonic() - t0:.1f} s)")
    from numascope.profile import readable
    note = "" if readable(rec.profile) else (
        f"run {rec.run_id} is a smoke run: its figures measure small working sets (caches "
        "on a real machine), and so do these predictions")
    out = {"section": "predict", "run": rec.run_id, "kernel": "triad", "note": note,
           "why": why(ranked), "items": items}
    if args.verify:
        from numascope.predict.verify import accuracy
        out["accuracy"] = accuracy(checked)
    return out


def _progress(line: str) -> None:
    """One line on standard error as each layout is measured and stored, on a terminal and
    in a log alike (as `numascope run` says each stage): --verify takes seconds a layout."""
    from numascope.console import err
    err.print(f"  {line}", markup=False, soft_wrap=True, highlight=False)


def _verified(run: Any) -> dict[str, Any]:
    total = next(r for r in run.results if r.case == "triad verify total")
    return {"run_id": run.run_id, "launcher": total.params["launcher"],
            "total_gbs": total.params["measured_gbs"],
            "error_percent": total.params["error_percent"],
            "predicted_kind": total.params.get("predicted_kind"),
            "ranks": [{"rank": r.params["rank"], "gbs": r.params["measured_gbs"],
                       "n": len(r.metrics["bandwidth"].values),
                       "bimodal": bool(r.params.get("bimodal")),
                       "predicted_gbs": r.params["predicted_gbs"],
                       "predicted_kind": r.params.get("predicted_kind"),
                       "error_percent": r.params["error_percent"]}
                      for r in run.results if r.case != "triad verify total"]}


def _g(x: float | None) -> str:
    return "no data" if x is None else f"{x:.3g}"


def _gbs(x: float | None) -> str:
    """A figure with its unit, or "no data" alone (never "no data GB/s")."""
    return "no data" if x is None else f"{x:.3g} GB/s"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:+.1f} %"


def _k(kind: str | None) -> str:
    """A figure's kind after it: " (lookup)"; nothing for no figure."""
    return f" ({kind})" if kind else ""


def render(sec: dict[str, Any], say: Callable[..., None], command: Callable[..., None]) -> None:
    from numascope.predict.model import weakest
    say(f"predicted from run {sec['run']} ({sec['kernel']}, GB/s in STREAM bytes), "
        "best first:")
    if sec.get("note"):
        say(sec["note"], 2, "  ")
    for i, it in enumerate(sec["items"], 1):
        p = it["prediction"]
        rks = p["ranks"]
        kinds = {r.get("gbs_kind") for r in rks if r["gbs"] is not None}
        per = ", ".join(_g(r["gbs"]) + ("" if len(kinds) == 1 else _k(r.get("gbs_kind")))
                        for r in rks) + (_k(kinds.pop()) if len(kinds) == 1 else "")
        idle = [r["idle_ns"] for r in rks if r["idle_ns"] is not None]
        loaded = [r["loaded_ns"] for r in rks if r["loaded_ns"] is not None]
        lat = (f"; latency idle {sum(idle) / len(idle):.0f} ns"
               + _k(weakest(*(r.get("idle_kind") for r in rks))) if idle else "") + \
            (f", loaded {sum(loaded) / len(loaded):.0f} ns"
             + _k(weakest(*(r.get("loaded_kind") for r in rks))) if loaded else "")
        same = it["same_as"]      # other layouts giving the same CPUs: counted, listed by --json
        same = (f" (also {same[0]})" if len(same) == 1 else
                f" (the same CPUs as {len(same)} other layouts: --json lists them)"
                if same else "")
        say(f"{it['label']}{same}: total {_gbs(p['total_gbs'])}"
            f"{_k(p.get('total_kind') if p['total_gbs'] is not None else None)}, "
            f"per rank {per}{lat}", 6, f"  {i:>2}. ")
        command("", it["openmpi"], 6)
        bases: dict[tuple[str, str], list[int]] = {}
        for r in rks:
            if r.get("gbs_kind"):
                bases.setdefault((r["gbs_kind"], r.get("gbs_basis", "")), []).append(r["rank"])
        for (kind, basis), who in bases.items():
            ranks = "" if len(rks) == 1 else \
                f" (rank{'s' if len(who) > 1 else ''} {', '.join(map(str, who))})"
            say(f"{kind}{ranks}: {basis}", 8, " " * 6)
        v = it.get("verified")
        if v:
            say(f"measured ({v['launcher']}, run {v['run_id']}): total {v['total_gbs']:.3g} "
                f"GB/s (error {_pct(v['error_percent'])}"
                + (f", against a {v['predicted_kind']} figure" if v.get("predicted_kind")
                   else "")
                + "); per rank "
                + ", ".join(f"{r['gbs']:.3g} ({_pct(r['error_percent'])}"
                            + (", bimodal)" if r.get("bimodal") else ")")
                            for r in v["ranks"]), 8, " " * 6)
        for x in p["extrapolated"]:
            say("extrapolated: " + x, 8, " " * 6)
        for x in p["no_data"]:
            say(x, 8, " " * 6)
        for x in p["notes"]:
            say("note: " + x, 8, " " * 6)
        say("from: " + "; ".join(f"{u['case']} {u['median']:.4g} {u['unit']} (n={u['n']}"
                                 + (", bimodal)" if u.get("bimodal") else ")")
                                 for u in p["used"]), 8, " " * 6)
    say("why: " + sec["why"])
    if "accuracy" in sec:
        # one line per kind, never pooled: a lookup's error is the machine's
        # reproducibility, a model's is the model's
        acc = sec["accuracy"]
        if not acc:
            say("errors by the prediction's kind: no figure had a prediction")
        for k, a in acc.items():
            say(f"errors of {k} figures ({a['meaning']}): "
                + ", ".join(f"{e:+.1f}" for e in a["errors_percent"])
                + f" % (median |error| {a['median_abs_error_percent']:.1f} %)")
