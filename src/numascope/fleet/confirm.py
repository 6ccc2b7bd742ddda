"""Confirmation of a fleet's outliers by a second measurement (`fleet run --confirm`).

A health check acts on a node (drains it, opens a ticket); one slow measurement is not
enough for that: a neighbour's job, a page-cache flush or a thermal event slow a node once.
So after the screen, the flagged nodes measure again the stages their flags came from (the
others idle, then end), and a node is an outlier only when the second measurement agrees.

- plan(a): for each flagged node, the stages to measure again: the family of each flagged
  metric or family test ("all/*": every family the node measured; the STREAM floor:
  bandwidth).
- judge(a, second): the group's nodes x metrics array with each re-measured node's row
  replaced by its second measurement (metrics of stages not measured again keep their first
  value) is screened again (numascope.fleet.screen, same gap); a node is "confirmed" when at
  least one of the tests that flagged it flags it again, under the same limit (the first
  screen's Benjamini-Hochberg cut-off per test, or the fixed --z); else "not reproduced".
  The STREAM floor is checked on the second measurement's triad.

A second measurement is stored as a run of its own, tagged fleet=<id>, host=<host> and
confirm_of=<the first run's id>; the fleet's selection leaves it out of the nodes (it is
not another node) and `fleet report` pairs it with its first run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from numascope.fleet import outliers, screen
from numascope.results.run import RunRecord

TAG = "confirm_of"


def _family(flag_metric: str) -> str:
    return flag_metric.partition("/")[0]


def plan(a: outliers.Analysis) -> dict[str, list[str]]:
    """first run id -> the stages (families) its node measures again, for every node a
    flag names."""
    measured: dict[str, set[str]] = {}
    for g, members, keys, sc in a.screened:
        for i, r in enumerate(members):
            have = {keys[j].partition("/")[0] for j in np.nonzero(np.isfinite(sc.x[i]))[0]}
            measured[r.run_id] = have
    out: dict[str, set[str]] = {}
    for f in a.flags:
        if f.kind == "floor":
            fams = {"bandwidth"}
        elif _family(f.metric) == "all":
            fams = measured.get(f.run_id, set())
        else:
            fams = {_family(f.metric)}
        out.setdefault(f.run_id, set()).update(fams)
    return {rid: sorted(s) for rid, s in out.items() if s}


@dataclass
class Verdict:
    host: str
    run_id: str                  # the first measurement
    confirm_run_id: str | None   # the second (None: it never came)
    status: str                  # confirmed | not reproduced | not measured again
    stages: list[str]
    first: list[dict[str, Any]] = field(default_factory=list)   # the flags, first run
    second: list[dict[str, Any]] = field(default_factory=list)  # what the second gave

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _flag_tests(flags: list[outliers.Flag], keys: list[str],
                families: list[tuple[str, np.ndarray]]) -> list[tuple[str, str, int]]:
    """(the flag's metric as it reads, "metric" or "family", its column) for each outlier
    flag of a node."""
    col = {k: j for j, k in enumerate(keys)}
    fam = {name: c for c, (name, _) in enumerate(families)}
    out = []
    for f in flags:
        if f.kind != "outlier":
            continue
        if f.metric in col:
            out.append((f.metric, "metric", col[f.metric]))
        elif f.metric.split("/", 1)[0] in fam:
            out.append((f.metric, "family", fam[f.metric.split("/", 1)[0]]))
    return out


def judge(a: outliers.Analysis, second: dict[str, RunRecord]) -> list[Verdict]:
    """The verdict on every flagged node: `second` maps a first run id to its second
    measurement (a run without one is "not measured again")."""
    by_run: dict[str, list[outliers.Flag]] = {}
    for f in a.flags:
        by_run.setdefault(f.run_id, []).append(f)
    stages = plan(a)
    verdicts: dict[str, Verdict] = {}
    for g, members, keys, sc in a.screened:
        rows = [i for i, r in enumerate(members) if r.run_id in by_run]
        if not rows:
            continue
        x2 = sc.x.copy()
        col = {k: j for j, k in enumerate(keys)}
        for i in rows:
            rec = second.get(members[i].run_id)
            if rec is None or rec.status == "failed":
                continue
            again = set(stages.get(members[i].run_id, []))
            for k, j in col.items():
                if k.partition("/")[0] in again:
                    x2[i, j] = np.nan
            for k, (v, _, _) in outliers.node_values(rec).items():
                if k in col:
                    x2[i, col[k]] = v
        hib = np.array([g.metrics[k].higher_is_better for k in keys], dtype=bool)
        # the fleet's spread priors of the first screen: a small group judged as it was
        sc2 = screen.screen_group(x2, hib, [k.split("/", 1)[0] for k in keys], a.gap_pct,
                                  keys=keys, prior=a.prior, min_z=screen.least_z(a.fixed_z))
        k_tests = np.maximum(sc.tests(), 1)
        sign = np.where(hib, -1.0, 1.0)
        hit_m = outliers.hit(sc2.p_metric, sc2.z * sign, k_tests, a.cut, a.fixed_z)
        hit_f = outliers.hit(sc2.p_family, sc2.fam_z, k_tests, a.cut, a.fixed_z)
        for i in rows:
            r = members[i]
            rec = second.get(r.run_id)
            flags = by_run[r.run_id]
            v = Verdict(outliers.host_of(r), r.run_id, rec.run_id if rec else None,
                        "not measured again", stages.get(r.run_id, []),
                        [f.to_dict() for f in flags])
            if rec is not None and rec.status != "failed":
                again = False
                for name, kind, j in _flag_tests(flags, keys, sc.families):
                    if kind == "metric":
                        flagged = bool(hit_m[i, j])
                        v.second.append({"metric": name, "value": float(sc2.x[i, j]),
                                         "pct": float(sc2.pct[i, j]),
                                         "z": float(sc2.z[i, j]), "flagged": flagged})
                    else:
                        flagged = bool(hit_f[i, j])
                        v.second.append({"metric": name,
                                         "worse_pct": float(sc2.fam_worse[i, j]),
                                         "z": float(sc2.fam_z[i, j]), "flagged": flagged})
                    again = again or flagged
                row = _floor_again(flags, rec)
                if row is not None:
                    v.second.append(row)
                    again = again or row["flagged"]
                v.status = "confirmed" if again else "not reproduced"
            verdicts[r.run_id] = v
    # floor-only flags of nodes in no screened group (a group of one)
    for rid, flags in by_run.items():
        if rid in verdicts:
            continue
        rec = second.get(rid)
        f0 = flags[0]
        v = Verdict(f0.host, rid, rec.run_id if rec else None, "not measured again",
                    stages.get(rid, []), [f.to_dict() for f in flags])
        row = _floor_again(flags, rec) if rec is not None and rec.status != "failed" \
            else None
        if row is not None:
            v.second.append(row)
            v.status = "confirmed" if row["flagged"] else "not reproduced"
        verdicts[rid] = v
    return sorted(verdicts.values(), key=lambda v: (v.status != "confirmed", v.host))


def _floor_again(flags: list[outliers.Flag], rec: RunRecord) -> dict[str, Any] | None:
    """The STREAM floor on the second measurement, for a node with a floor flag: its row
    (the second triad, and whether it is still under the floor); None without one."""
    f = next((f for f in flags if f.kind == "floor"), None)
    if f is None:
        return None
    st = outliers.stream(rec)
    return {"metric": f.metric, "value": st, "flagged": st is not None and st < f.reference}


def split(runs: list[RunRecord]) -> tuple[list[RunRecord], dict[str, RunRecord]]:
    """(the nodes' runs, first run id -> its latest second measurement) of a fleet's runs."""
    firsts = [r for r in runs if TAG not in r.tags]
    second: dict[str, RunRecord] = {}
    for r in runs:
        rid = r.tags.get(TAG)
        if rid and (rid not in second or r.started >= second[rid].started):
            second[rid] = r
    return firsts, second
