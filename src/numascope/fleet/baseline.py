"""Named baselines: a fleet's group medians kept in the store, and checks of later runs
against them with per-metric tolerances (as ReFrame references and SuperBench rules work).

The table (created on first save; stores without it open and read as before, they simply
have no baseline):

    fleet_baselines(name TEXT PRIMARY KEY, created TEXT, fleet TEXT, data TEXT)

data = {"groups": {label: {"config": {...}, "metrics": {key: {"median", "unit",
"higher_is_better", "nodes"}}}}}.

A node falls out of the baseline when one of its group's metrics is worse than the
baseline median by more than its tolerance (one-sided by the metric's direction), when the
metric is missing from a stage that ran, when a stage or its run failed, or when no
baseline group has its configuration. A check that cannot judge is inconclusive, neither
healthy nor out: a baseline median from fewer than MIN_NODES nodes (a median resists one
bad node only from three on), a stage skipped or stopped on this node, or nothing of the
baseline measured at all. Stages the run did not ask for (`--stage bandwidth` in a prolog)
are not checked.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from numascope.console import plural
from numascope.errors import UserError
from numascope.fleet.outliers import Analysis, config, group_label, host_of, node_values
from numascope.results.run import RunRecord, check_label, utc_now

TABLE = "fleet_baselines"
# a baseline median from fewer nodes is too few to judge by: the median's breakdown point
# floor((n-1)/2) / n is 0 for two nodes (Rousseeuw and Leroy, "Robust regression and
# outlier detection", Wiley 1987): either node's fault moves it (= screen.MIN_GROUP)
MIN_NODES = 3
# `fleet check` exits: 0 healthy, 1 out of baseline, INCONCLUSIVE when nothing is out but
# something could not be judged (2, 3, 4 and 128+N are numascope's errors and signals)
INCONCLUSIVE_EXIT = 5
DEFAULT_TOLERANCE_PCT = 10.0
TOLERANCE_MAX_PCT = 1000.0   # a latency may be twice the baseline and more; not 10^6 %


def _table_exists(conn: sqlite3.Connection) -> bool:
    return bool(conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                             (TABLE,)).fetchall())


def names(store: Any) -> list[str]:
    if not _table_exists(store.conn):
        return []
    return [r[0] for r in store.conn.execute(f"SELECT name FROM {TABLE} ORDER BY name")]


NAME_MAX = 200      # the longest baseline name


def check_name(name: str, flag: str = "baseline name") -> str:
    """`name` stripped: letters, digits and - _ . :, at most NAME_MAX characters. UserError
    naming `flag` (the flag or command the user typed) otherwise."""
    return check_label(name, flag, "baseline name", NAME_MAX)


def save(store: Any, name: str, analysis: Analysis, replace: bool = False,
         allow_small: bool = False) -> dict[str, Any]:
    """Keep the fleet's group medians as baseline `name`. Groups of fewer than MIN_NODES
    nodes are refused (their medians judge nobody) unless `allow_small`, which saves them
    marked (data["small"]: their labels) so that every check says so."""
    name = check_name(name)
    small = small_groups(analysis)
    if small and not allow_small:
        raise UserError(f"baseline {name}: {plural(len(small), 'group')} of fewer than "
                        f"{MIN_NODES} nodes ({'; '.join(small[:3])}"
                        f"{'; …' if len(small) > 3 else ''}): too few to judge a node by; "
                        "measure more nodes, or give --allow-small to save it marked")
    data: dict[str, Any] = {"groups": {g.label: {"config": g.config, "nodes": len(g.hosts),
                                 "metrics": {k: {"median": m.median, "unit": m.unit,
                                                 "higher_is_better": m.higher_is_better,
                                                 "nodes": m.n}
                                             for k, m in g.metrics.items()}}
                       for g in analysis.groups}}
    for g, members, *_ in analysis.screened:     # how each figure was measured, where it
        seen = _methods(members)                 # matters (analysis.method): net's pages
        for k, entry in data["groups"][g.label]["metrics"].items():
            if _case_of(k) in seen:
                entry["method"] = sorted(seen[_case_of(k)])
    if small:
        data["small"] = small
    if not any(g["metrics"] for g in data["groups"].values()):
        raise UserError(f"fleet {analysis.fleet} has no measured metric to save as a baseline")
    created = utc_now()
    _put(store, name, created, analysis.fleet, data, replace)
    return {"name": name, "created": created, "fleet": analysis.fleet, **data}


def _put(store: Any, name: str, created: str, fleet: str | None, data: dict[str, Any],
         replace: bool) -> None:
    row = (name, created, fleet, json.dumps(data))

    def do(c: sqlite3.Connection) -> None:
        c.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (name TEXT PRIMARY KEY, created TEXT "
                  "NOT NULL, fleet TEXT, data TEXT NOT NULL)")
        if not replace and c.execute(f"SELECT 1 FROM {TABLE} WHERE name=?",
                                     (name,)).fetchall():
            raise UserError(f"baseline {name!r} exists; give --replace to overwrite it "
                            f"(store {store.path})")
        c.execute(f"INSERT OR REPLACE INTO {TABLE} VALUES (?, ?, ?, ?)", row)
    store._tx(do)


def copy(base: dict[str, Any], dst: Any, replace: bool = False) -> None:
    """Write baseline `base` (load's dict, from another store) into store `dst` (a
    node-local store for `fleet check` in a health check or prolog: the baseline alone, no
    fleet records), its name, creation time and fleet kept. UserError when `dst` has one of
    that name, unless `replace`."""
    data = {k: v for k, v in base.items() if k not in ("name", "created", "fleet")}
    _put(dst, check_name(base["name"]), base["created"], base["fleet"], data, replace)


def load(store: Any, name: str) -> dict[str, Any]:
    rows = store.conn.execute(f"SELECT name, created, fleet, data FROM {TABLE} WHERE name=?",
                              (name,)).fetchall() if _table_exists(store.conn) else []
    if not rows:
        have = names(store)
        raise UserError(f"no baseline {name!r} in {store.path}" +
                        (f"; baselines: {', '.join(have)}" if have else
                         " (save one with `numascope fleet baseline save NAME`)"))
    n, created, fleet, data = rows[0]
    return {"name": n, "created": created, "fleet": fleet, **json.loads(data)}


def families(base: dict[str, Any]) -> set[str]:
    """The families (stages) whose metrics `base` holds, over all its groups."""
    return {key.partition("/")[0] for g in base.get("groups", {}).values()
            for key in g.get("metrics", {})}


def parse_tolerances(items: list[str] | None) -> dict[str, float]:
    """["bandwidth=5%", "latency=8"] → {"bandwidth": 5.0, "latency": 8.0}. The key is a
    family, a metric name, a full family/case/metric key, or * (every metric)."""
    out: dict[str, float] = {}
    for item in items or []:
        k, sep, v = item.partition("=")
        k, v = k.strip(), v.strip().removesuffix("%").strip()
        if not sep or not k or not v:
            raise UserError(f"bad --tolerance {item!r}: expected METRIC=PCT%, e.g. "
                            "bandwidth=5%")
        try:
            pct = float(v)
        except ValueError:
            raise UserError(f"bad --tolerance {item!r}: {v!r} is not a number") from None
        if not math.isfinite(pct) or pct < 0:
            raise UserError(f"bad --tolerance {item!r}: give a percentage >= 0")
        if pct > TOLERANCE_MAX_PCT:
            raise UserError(f"bad --tolerance {item!r}: at most {TOLERANCE_MAX_PCT:g} %")
        out[k] = pct
    return out


def tolerance_keys(base: dict[str, Any]) -> set[str]:
    """What a --tolerance may name for this baseline: its families, metric names,
    family/metric pairs, full family/case/metric keys and *."""
    keys = {"*"}
    for g in base.get("groups", {}).values():
        for key in g.get("metrics", {}):
            family, _, rest = key.partition("/")
            metric = rest.rpartition("/")[2]
            keys |= {key, family, metric, f"{family}/{metric}"}
    return keys


def check_tolerance_keys(base: dict[str, Any], given: dict[str, float]) -> None:
    """UserError (exit 2) for a --tolerance naming nothing this baseline holds (a typo
    would silently leave the default), naming the families and metrics it knows."""
    from numascope.errors import escape_text
    known = tolerance_keys(base)
    for k in given:
        if k in known:
            continue
        short = sorted(k for k in known if "/" not in k and k != "*")
        raise UserError(f"--tolerance {escape_text(k, 60)!s}: baseline {base['name']} holds no "
                        f"such family or metric; it knows "
                        f"{escape_text(', '.join(short) or 'none', 300)} (or family/metric, "
                        "family/case/metric, *)")


def tolerance(key: str, given: dict[str, float]) -> float:
    family, _, rest = key.partition("/")
    metric = rest.rpartition("/")[2]
    for k in (key, f"{family}/{metric}", family, metric, "*"):
        if k in given:
            return given[k]
    return family_tolerance(family)


def defaults_text() -> str:
    """The default tolerances in words, from the families' folders: "10 %, matrix and
    compress 15 %, c2c and storage 20 %" (what --tolerance's help says)."""
    from numascope import families
    by: dict[float, list[str]] = {}
    for name in families.names_with_folders():
        by.setdefault(family_tolerance(name), []).append(name)
    others = [f"{' and '.join(fs)} {pct:g} %" for pct, fs in sorted(by.items())
              if pct != DEFAULT_TOLERANCE_PCT]
    return ", ".join([f"{DEFAULT_TOLERANCE_PCT:g} %"] + others)


def family_tolerance(family: str) -> float:
    """A family's default tolerance: its folder's TOLERANCE_PCT, else DEFAULT_TOLERANCE_PCT."""
    from numascope import families
    try:
        pct = families.tolerance_pct(family)
    except ImportError:                  # a family of a record whose folder is not here
        pct = None
    return DEFAULT_TOLERANCE_PCT if pct is None else float(pct)


@dataclass
class Verdict:
    host: str
    run_id: str
    group: str
    ok: bool                           # judged, and within tolerance on everything checked
    problems: list[dict[str, Any]]     # why the node is out of the baseline
    checked: int
    unjudged: list[dict[str, Any]] = field(default_factory=list)  # why not, where not

    @property
    def status(self) -> str:
        return "out" if self.problems else "inconclusive" if self.unjudged else "ok"

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "status": self.status}


# A latency case named before the chaser became a role: "tlb 256 MiB stride 256 cpu0" (a
# fleet's suite always took the default CPU, so the number is never part of the identity)
_LEGACY_CPU = re.compile(r"^(latency/(?:tlb|random) .*?) cpu\d+((?: node\d+)?/[^/]+)$")


def _value_key(key: str, vals: dict[str, Any]) -> str:
    """The run's key for a baseline key: itself, or for a baseline saved from records of
    the older latency names, the same case without the CPU number."""
    if key in vals:
        return key
    m = _LEGACY_CPU.match(key)
    return m.group(1) + m.group(2) if m and m.group(1) + m.group(2) in vals else key


def _case_of(key: str) -> str:
    """"family/case" of a "family/case/metric" key (a case name may hold "/")."""
    return key.rpartition("/")[0]


def _methods(runs: list[RunRecord]) -> dict[str, set[str]]:
    """"family/case" -> the methods its results were measured with, of the families that
    have one (analysis.method)."""
    from numascope.analysis.method import method
    out: dict[str, set[str]] = {}
    for r in runs:
        for res in r.results:
            m = method(res.family, res.params) if res.validated else ""
            if m:
                out.setdefault(f"{res.family}/{res.case}", set()).add(m)
    return out


def _stages(r: RunRecord) -> dict[str, tuple[str, str]] | None:
    """stage (family) name → (status, reason), a family with results counting as done;
    None for a record that lists no stages (then every baseline metric is expected)."""
    if not r.stages:
        return None
    done = {res.family: ("done", "") for res in r.results}
    return {**done, **{s.name: (s.status, s.reason) for s in r.stages}}


def own_failure(r: Any, v: Any) -> bool:
    """Whether the node's own run failed it (fleet.verdict `v` of run `r`): failed, missing,
    or interrupted before any result. Such a node is out of every baseline, never
    inconclusive: nothing could be judged because the node did not run, which is itself
    the finding (NUMASCOPE_UNKNOWN=ok must not pass it)."""
    return v.status in ("failed", "missing") or (v.status == "interrupted"
                                                 and not r.results)


def check(base: dict[str, Any], runs: list[RunRecord], given: dict[str, float]
          ) -> list[Verdict]:
    from numascope.fleet.verdict import verdict
    out = []
    for r in runs:
        label, g = match_group(base, r)
        problems: list[dict[str, Any]] = []
        unjudged: list[dict[str, Any]] = []
        checked = 0
        v = verdict(r)       # a run that did not do all it was asked is never ok
        if own_failure(r, v):
            problems.append({"metric": "", "why": f"run {v.status}"
                             + (" with no result" if v.status == "interrupted" else "")
                             + f": {v.reason}"})
        elif g is None:
            problems.append({"metric": "", "why": f"no baseline group for its configuration "
                                                  f"({label})"})
        else:
            checked = _check_group(g, r, given, problems, unjudged)
            if not checked and not problems and not unjudged:
                unjudged.append({"metric": "", "why": "no metric of the baseline measured in "
                                                      "this run (other stages?)"})
        if v.status in ("interrupted", "incomplete") and not problems:
            unjudged.insert(0, {"metric": "", "why": f"run {v.status}: {v.reason}"})
        out.append(Verdict(host_of(r), r.run_id, label, not problems and not unjudged,
                           problems, checked, unjudged))
    return out


def _check_group(g: dict[str, Any], r: RunRecord, given: dict[str, float],
                 problems: list[dict[str, Any]], unjudged: list[dict[str, Any]]) -> int:
    """Check run `r` against its baseline group `g`; problems and unjudged filled in, the
    number of metrics compared returned."""
    vals = node_values(r)
    stages = _stages(r)
    said: set[str] = set()          # one line per stage that was skipped or failed
    checked = 0
    few: dict[int, int] = {}        # metrics not checked, by their baseline median's nodes
    mine = _methods([r])
    other: list[tuple[str, str, str]] = []    # measured another way: (key, here, baseline)
    for base_key, ref in sorted(g["metrics"].items()):
        key = _value_key(base_key, vals)
        tol = tolerance(key, given)
        family = key.partition("/")[0]
        status, reason = (stages or {}).get(family, ("done", ""))
        if stages is not None and family not in stages:
            continue                # a stage this run did not ask for
        if key not in vals and status != "done":
            if family not in said:
                said.add(family)
                entry = {"metric": family, "why": f"stage {family} {status}"
                                                  + (f": {reason}" if reason else "")}
                (problems if status == "failed" else unjudged).append(entry)
            continue
        if key not in vals:
            problems.append({"metric": key, "why": "not measured in this run",
                             "tolerance_pct": tol})
            continue
        here = mine.get(_case_of(key), set())
        then = set(ref.get("method") or ())
        if here and then != here:       # not one method (none recorded: cannot tell)
            other.append((key, ", ".join(sorted(here)),
                          ", ".join(sorted(then)) or "not recorded"))
            continue
        n = ref.get("nodes", g.get("nodes", MIN_NODES))
        if n < MIN_NODES:
            few[n] = few.get(n, 0) + 1
            continue
        checked += 1
        x, med = vals[key][0], ref["median"]
        pct = (x - med) / abs(med) * 100 if med else math.nan
        worse = -pct if ref["higher_is_better"] else pct
        if worse > tol:
            problems.append({"metric": key, "value": x, "baseline": med,
                             "unit": ref["unit"], "pct": pct, "tolerance_pct": tol,
                             "why": f"{abs(pct):.1f} % worse than the baseline "
                                    f"(tolerance {tol:g} %)"})
    if other:                           # one line per node, not one per metric
        _, here, then = other[0]
        fams = ", ".join(dict.fromkeys(k.partition("/")[0] for k, _, _ in other))
        unjudged.append({"metric": fams, "why": (
            f"{plural(len(other), 'metric')} measured another way than the baseline's "
            f"(here {here}; the baseline's {then}): not checked; save a baseline of this "
            "method")})
    for n, k in sorted(few.items()):    # one line per node, not one per metric
        unjudged.append({"metric": "", "why": f"baseline median of {plural(n, 'node')}: too "
                                              f"few to judge ({MIN_NODES} needed): "
                                              f"{plural(k, 'metric')} not checked"})
    return checked


def match_group(base: dict[str, Any], r: RunRecord) -> tuple[str, dict[str, Any] | None]:
    """The baseline group of run `r`: by its whole configuration, else with only the tags
    the baseline's groups were made by. A tag that only labels a run (--tag source=prolog)
    names no setting the baseline knows: it does not move the run out of its group."""
    cfg = config(r)
    label = group_label(cfg)
    if label in base["groups"]:
        return label, base["groups"][label]
    keys = {k for g in base["groups"].values() for k in (g.get("config") or {}).get("tags", {})}
    known = group_label({**cfg, "tags": {k: v for k, v in cfg["tags"].items() if k in keys}})
    return (known, base["groups"][known]) if known in base["groups"] else (label, None)


def small_groups(analysis: Analysis) -> list[str]:
    """The groups of `analysis` with fewer than MIN_NODES measured nodes: a baseline's
    medians from them judge nobody."""
    return [f"{g.label} ({plural(len(g.hosts), 'node')})" for g in analysis.groups
            if len(g.hosts) < MIN_NODES]


def too_small(base: dict[str, Any]) -> str | None:
    """Why no node can be judged against `base` (every median of every group from fewer
    than MIN_NODES nodes), or None."""
    counts = [m.get("nodes", g.get("nodes", MIN_NODES)) for g in base["groups"].values()
              for m in g["metrics"].values()]
    if not counts or max(counts) >= MIN_NODES:
        return None
    return (f"baseline {base['name']}: medians of at most {plural(max(counts), 'node')} per "
            f"group, too few to judge ({MIN_NODES} needed)")
