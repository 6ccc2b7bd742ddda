"""Which run `fleet check` judges for a node, and whether it may judge it at all.

A prolog or health check asks about this node, now: so the run judged is the latest run of
this host (the name given with --host, else the local one: NUMASCOPE_HOSTNAME, else the
system's), whatever its status, never a later run of another host or an older one of this
host that happened to complete. When --confirm measured that run again (a run tagged
confirm_of=<its id>), the second measurement is the one judged: the confirmation's verdict
("not reproduced") is honoured by every later check. A run older than --max-age, a failed or
interrupted run, no run of the host at all: each is one line and exit 5 ("cannot judge"),
never a pass on someone else's numbers.

A run that is not a measurement of the node's health is never "latest": an `advise
--verify` run (tagged verify=…: one layout's ranks, not the suite's cases) nor a
confirmation on its own. And a run that measured only some of what the baseline holds
(`run --stage c2c`) is not judged on that alone: each stage of the baseline it did not ask
for is judged on that stage's latest measurement on this host (with_older: the newest
earlier run, in the same baseline group and not a smoke run, whose stage ran), each part
said with its run; a part older than --max-age is not judged, and said. A stage this host
never measured is not checked, as before (a prolog's `run --stage bandwidth` against a
whole fleet's baseline).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from numascope.errors import UserError
from numascope.results.run import RunRecord, StageInfo

DEFAULT_MAX_AGE_S = 24 * 3600.0     # a prolog judges today's numbers, not last month's
CONFIRM_TAG, VERIFY_TAG = "confirm_of", "verify"   # a second measurement; advise --verify
RAN = ("done", "failed")            # a stage that measured (or tried to and failed)
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_age(text: str | None, flag: str = "--max-age") -> float | None:
    """--max-age (or `flag`): 90s, 30m, 24h, 7d (a bare number is hours), or none (no
    limit)."""
    if text is None:
        return DEFAULT_MAX_AGE_S
    t = text.strip().lower()
    if t in ("none", "off"):
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smhd]?)", t)
    if not m:
        raise UserError(f"{flag} {text!r}: give a duration such as 30m, 24h or 7d "
                        "(or none)")
    seconds = float(m.group(1)) * _UNITS[m.group(2) or "h"]
    if not (math.isfinite(seconds) and seconds > 0):
        raise UserError(f"{flag} {text!r}: give a duration larger than zero")
    return seconds


def age_s(run: Any, now: datetime | None = None) -> float | None:
    """Seconds since the run finished (or started, when it never finished)."""
    when = run.finished or run.started
    try:
        t = datetime.fromisoformat(str(when))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return ((now or datetime.now(UTC)) - t).total_seconds()


def show_age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


@dataclass
class Part:
    """Stages of the baseline judged on an earlier run (or, `why` set, not judged: that
    run is older than --max-age)."""
    run_id: str
    families: list[str]
    age_s: float | None
    why: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Pick:
    """The run a host's check judges: `run_id` (None: nothing to judge, `why` says so),
    `first` the run it measures again when it is a confirmation; `sources` the host's
    earlier measurements, newest first (each run preceded by its confirmation), `parts`
    and `not_judged` what with_older took from them."""
    host: str
    run_id: str | None
    why: str = ""
    first: str | None = None
    sources: list[str] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    not_judged: list[Part] = field(default_factory=list)


def host_run(store: Any, host: str) -> Pick:
    """The latest run of `host` (its confirmation, when --confirm measured it again), never
    an `advise --verify` run."""
    runs = [r for r in store.list_runs() if (r.hostname or r.tags.get("host")) == host]
    firsts = [r for r in runs if CONFIRM_TAG not in r.tags and VERIFY_TAG not in r.tags]
    if not firsts:
        others = sorted({r.hostname or r.tags.get("host") or "?" for r in store.list_runs()})
        have = f"; hosts with runs: {', '.join(others[:6])}" if others else ""
        skipped = len(runs) - len(firsts)
        verify = (f" (only {skipped} advise --verify or --confirm run"
                  f"{'s' if skipped != 1 else ''}: not a measurement of the node to judge)"
                  if skipped else "")
        return Pick(host, None, f"no run of host {host} in the store{verify}{have}")
    order: list[str] = []       # list_runs: by start time, then by order stored
    for r in reversed(firsts):
        again = [a for a in runs if a.tags.get(CONFIRM_TAG) == r.run_id]
        order += ([again[-1].run_id] if again else []) + [r.run_id]
    last = firsts[-1]
    return Pick(host, order[0], first=last.run_id if order[0] != last.run_id else None,
                sources=order[1:])


def asked(rec: Any) -> set[str] | None:
    """The stages a run asked for (its stages, and any family it has results of); None for
    a record that lists no stages (every metric of the baseline is expected of it)."""
    if not rec.stages:
        return None
    return {s.name for s in rec.stages} | {r.family for r in rec.results}


def _ran(rec: Any, family: str) -> bool:
    st = next((s for s in rec.stages if s.name == family), None)
    return (st is not None and st.status in RAN) or any(r.family == family
                                                        for r in rec.results)


def with_older(store: Any, pick: Pick, rec: RunRecord, base: dict[str, Any],
               max_age_s: float | None) -> RunRecord:
    """`rec` (the host's latest run) with each stage of `base` it did not ask for taken
    from that stage's latest measurement on this host (module doc); pick.parts and
    pick.not_judged say which runs. `rec` itself when it asked for everything."""
    from numascope.fleet.baseline import families, match_group
    from numascope.fleet.load import analysis_runs
    from numascope.fleet.node import hooks_of
    from numascope.profile import readable
    mine = asked(rec)
    if mine is None:
        return rec
    need = families(base) - mine
    label = match_group(base, rec)[0]
    stages, results = list(rec.stages), list(rec.results)
    for rid in pick.sources:
        if not need:
            break
        (src,) = analysis_runs(store, [rid])
        if not readable(src.profile) or hooks_of(src) or match_group(base, src)[0] != label:
            continue        # its numbers measure caches, are falsified, or another config
        got = sorted(f for f in need & (asked(src) or {r.family for r in src.results})
                     if _ran(src, f))
        if not got:
            continue
        need -= set(got)
        old = stale(src, max_age_s)
        part = Part(rid, got, age_s(src), old)
        if old:
            pick.not_judged.append(part)
            continue
        pick.parts.append(part)
        named = {s.name: s for s in src.stages}
        stages += [StageInfo(f, named[f].status, f"run {rid}: {named[f].reason}")
                   if f in named and named[f].reason else named.get(f, StageInfo(f, "done"))
                   for f in got]
        results += [r for r in src.results if r.family in got]
    return replace(rec, stages=stages, results=results) if pick.parts else rec


def stale(run: Any, max_age_s: float | None) -> str:
    """Why a run is too old to judge ('' when it is not)."""
    if max_age_s is None:
        return ""
    a = age_s(run)
    if a is None:
        return f"its time {run.finished or run.started!r} cannot be read"
    if a > max_age_s:
        return (f"it is {show_age(a)} old, older than --max-age {show_age(max_age_s)} "
                "(measure again, or give --max-age)")
    return ""
