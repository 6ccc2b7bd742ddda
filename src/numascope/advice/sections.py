"""The sections of `numascope advise` other than predict's (numascope.predict.section), each
the plain dict its --json gives ({"section": NAME, …, "items": [...]}): the readiness checks
of a machine, the launcher lines of a job shape, the advice of stored runs."""

from __future__ import annotations

import argparse
from typing import Any


def readiness(sysfs_root: str) -> dict[str, Any]:
    """The readiness checks of this machine ("/") or a replayed one, counted by status."""
    from numascope.readiness import run_checks
    from numascope.topology.replay import machine
    with machine(sysfs_root) as (topo, tree):
        live = tree.live
        checks = run_checks(tree, topo, live=live)
    return {"section": "readiness", "source": "this machine" if live else sysfs_root,
            "live": live, "changes_nothing": True,
            "counts": {s: sum(c.status == s for c in checks)
                       for s in ("warn", "info", "ok", "unknown")},
            "items": [c.to_dict() for c in checks]}


def recipe(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """The recipe of the job flags (--ranks/--threads/--near/--unit) on the machine of
    --sysfs-root: its section, and its lines as the terminal prints them (the JSON does not
    hold them whole)."""
    from numascope.recipes import job_recipe, section
    from numascope.topology.replay import machine
    with machine(str(args.sysfs_root)) as (topo, _tree):
        r = job_recipe(args, topo)
    return section(r), r.lines()


def advice(specs: list[str], store: str | None, rules: list[str] | None) -> dict[str, Any]:
    """The advice of the runs `specs` select in `store` (none given: the latest, and a note
    instead of an error when nothing is stored), with a note when it has none to give."""
    from numascope.advice import advise
    from numascope.profile import readable
    from numascope.results.store import Store, default_path
    sec: dict[str, Any] = {"section": "advice", "runs": [], "rules": rules or None,
                           "note": "", "items": []}
    path = default_path() if store is None else store
    if not specs and store is None and not default_path().exists():
        sec["note"] = f"no runs stored ({path} does not exist): run `numascope run` first"
        return sec
    with Store.open(store) as st:
        if not specs and not st.list_runs():
            sec["note"] = f"no runs stored in {st.path}"
            return sec
        runs = st.load(specs or ["latest"])
    sec["runs"] = [r.run_id for r in runs]
    items = advise(runs, rules)
    sec["items"] = [a.to_dict() for a in items]
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
