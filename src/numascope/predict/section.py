"""The predict section of `numascope advise --predict / --verify`: every layout of a job shape
with the bandwidth numascope.predict.model gives it from a stored run, ranked; with verify,
each measured for real and stored as a run (numascope.predict.verify).

Which run: `run` (an id or unique prefix), else this host's latest run (the host name as
`fleet check latest` takes it), leaving out verification runs (tag verify). A run without
triad bandwidth results, no run at all, an unknown id: one line naming the command that
measures what is missing. A replayed machine (sysfs_root other than "/") predicts only from
a run named, and refuses verify (its CPUs are not here to run on).

Every predicted figure carries its kind (lookup, interpolated, model:
numascope.predict.model.KINDS); verify's errors are tallied by kind (`accuracy`), never
across kinds."""

from __future__ import annotations

import time
from typing import Any

from numascope.errors import UserError

MEASURE = "numascope run --stage bandwidth --stage matrix"


def _replayed(sysfs_root: str) -> bool:
    return str(sysfs_root).strip() not in ("/", "")


def pick_run(store: str | None, run: str | None, sysfs_root: str = "/") -> Any:
    """The RunRecord to predict from (module doc)."""
    from numascope.results.run import local_hostname
    from numascope.results.store import Store, default_path
    path = default_path() if store is None else store
    if store is None and not default_path().exists():
        raise UserError(f"no runs stored ({path} does not exist): measure first with "
                        f"`{MEASURE}`")
    with Store.open(store) as st:
        if run is not None:
            ids = st.resolve(run)
            if len(ids) != 1:
                raise UserError(f"--run {run}: {'no such run' if not ids else 'names ' + str(len(ids)) + ' runs'} "
                                f"in {st.path} (numascope runs lists them)")
            return st.get_run(ids[0])
        if _replayed(sysfs_root):
            raise UserError("--predict with --sysfs-root needs the replayed machine's run "
                            "named: --run ID (the store's latest run is this machine's)")
        host = local_hostname()
        mine = [r for r in st.list_runs()
                if (r.hostname or r.tags.get("host")) == host and "verify" not in r.tags]
        if not mine:
            raise UserError(f"no run of host {host} in {st.path}: measure first with "
                            f"`{MEASURE}`")
        return st.get_run(mine[-1].run_id)


def predict_section(store: str | None, *, run: str | None, sysfs_root: str,
                    shape: dict[str, Any], demand: float | None = None, verify: bool = False,
                    reps: int | None = None) -> dict[str, Any]:
    """The section: `shape` holds ranks, threads, near and unit (numascope.predict.plan's
    candidates); `demand` the most GB/s one thread asks; `reps` verify's repetitions."""
    from numascope.predict.model import points, predict
    from numascope.predict.plan import candidates, item, rank, why
    from numascope.topology.replay import machine
    if verify and _replayed(sysfs_root):
        raise UserError("--verify runs the layouts on this machine; a replayed machine "
                        "(--sysfs-root) is only predicted: drop --verify")
    rec = pick_run(store, run, sysfs_root)
    if not points(rec):
        raise UserError(f"run {rec.run_id} has no triad bandwidth results to predict from: "
                        f"measure them with `{MEASURE}`")
    if verify:     # each check is stored: a store that cannot take them costs nothing
        from numascope.results.store import Store
        with Store.open(store, write=True):
            pass
    with machine(str(sysfs_root)) as (topo, _tree):
        cands = candidates(topo, **shape)
        ranked = rank([(c, predict(rec, c.shape, demand=demand)) for c in cands])
        items = [item(c, p) for c, p in ranked]
        checked: list[Any] = []
        if verify:
            from numascope.predict.verify import store_run
            for i, (it, (c, p)) in enumerate(zip(items, ranked), 1):
                _progress(f"verify {i}/{len(ranked)}: {c.label} …")
                t0 = time.monotonic()
                stored = store_run(topo, c, p, rec, reps, store)
                it["verified"] = v = _verified(stored)
                checked += stored.results
                total = "no data" if p.total is None else f"{p.total:.3g} GB/s"
                _progress(f"verify {i}/{len(ranked)}: {c.label}: {v['total_gbs']:.3g} GB/s "
                          f"measured, {total} predicted ({v['launcher']}, run "
                          f"{stored.run_id}, {time.monotonic() - t0:.1f} s)")
    from numascope.profile import readable
    note = "" if readable(rec.profile) else (
        f"run {rec.run_id} is a smoke run: its figures measure small working sets (caches "
        "on a real machine), and so do these predictions")
    out = {"section": "predict", "run": rec.run_id, "kernel": "triad", "note": note,
           "why": why(ranked), "items": items}
    if verify:
        from numascope.predict.verify import accuracy
        out["accuracy"] = accuracy(checked)
    return out


def _progress(line: str) -> None:
    """One line on standard error as each layout is measured and stored, on a terminal and
    in a log alike (as `numascope run` says each stage): verify takes seconds a layout."""
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
