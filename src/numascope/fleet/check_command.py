"""`numascope fleet check`, `labels` and `prom`: runs judged against a baseline (exit 1
out, 5 inconclusive), node-feature-discovery's labels, node_exporter's textfile. See
docs/fleet.md and docs/kubernetes.md."""

from __future__ import annotations

import argparse
from typing import Any

from numascope.command.output import emit
from numascope.console import plural
from numascope.errors import UserError
from numascope.fleet.command import (
    NAME,
    open_store,
    para,
    refuse_hooked,
    refuse_smoke,
    select,
)


def check(args: argparse.Namespace) -> int:
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
    with open_store(args) as store:
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
        para(f"{small}: {plural(len(unsure), 'node')} inconclusive"
              + (f", {len(bad)} out" if bad else ""))
    else:
        ok = len(verdicts) - len(bad) - len(unsure)
        para(f"baseline {base['name']}: {ok} of {plural(len(verdicts), 'node')} within "
              "tolerance"
              + (f", {len(unsure)} inconclusive" if unsure else ""))
    if not args.json:
        for v in bad:
            for p in v.problems:
                para(f"{v.host}  {p['metric'] or 'run'}: {p['why']}", "  ",
                      keep=(p["metric"] or "",))
        for v in unsure if not small else []:
            for p in v.unjudged:
                para(f"{v.host}  inconclusive: {p['metric'] or 'run'}: {p['why']}", "  ",
                      keep=(p["metric"] or "",))
    return code


def _one_host(base: dict[str, Any], pick: Any, run: Any | None, said: str,
              lines: list[str]) -> None:
    """A one-host check as text: the verdict and the host on the first line (a health
    checker's log reads it), then why, then which run was judged."""
    para(f"baseline {base['name']}: {said} (host {pick.host})")
    for line in lines:
        para(line, "  ")
    judged = _judged_words(pick, run) if pick.run_id else ""
    if judged:
        para(f"judged: {judged.removeprefix('; host ' + pick.host + ', ')}", "  ")


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
        para(line)
    return baseline.INCONCLUSIVE_EXIT


# -- Kubernetes: node-feature-discovery labels ---------------------------------------------

def labels(args: argparse.Namespace) -> int:
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
    with open_store(args) as store:
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
            para(line)
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
        para(f"wrote {shown}: host {host}, run {run.run_id} ({k8s.summary(found)})")
    return 0


# -- Prometheus ----------------------------------------------------------------------------

def prom(args: argparse.Namespace) -> int:
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
    with open_store(args) as store:
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
        para(f"wrote {path}: {plural(len(latest), 'node')}"
              + (f", the outlier verdict of fleet {fid}" if analysis is not None else "")
              + (f", baseline {base['name']}" if base is not None else ""))
    return 0
