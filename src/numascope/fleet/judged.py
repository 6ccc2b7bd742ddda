"""Which run `fleet check` judges for a node, and whether it may judge it at all.

A prolog or health check asks about this node, now: so the run judged is the latest run of
this host (the name given with --host, else the local one: NUMASCOPE_HOSTNAME, else the
system's), whatever its status, never a later run of another host or an older one of this
host that happened to complete. When --confirm measured that run again (a run tagged
confirm_of=<its id>), the second measurement is the one judged: the confirmation's verdict
("not reproduced") is honoured by every later check. A run older than --max-age, a failed or
interrupted run, no run of the host at all: each is one line and exit 5 ("cannot judge"),
never a pass on someone else's numbers.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from numascope.errors import UserError

DEFAULT_MAX_AGE_S = 24 * 3600.0     # a prolog judges today's numbers, not last month's
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
class Pick:
    """The run a host's check judges: `run_id` (None: nothing to judge, `why` says so),
    `first` the run it measures again when it is a confirmation."""
    host: str
    run_id: str | None
    why: str = ""
    first: str | None = None


def host_run(store: Any, host: str) -> Pick:
    """The latest run of `host` (its confirmation, when --confirm measured it again)."""
    runs = [r for r in store.list_runs() if (r.hostname or r.tags.get("host")) == host]
    firsts = [r for r in runs if "confirm_of" not in r.tags]
    if not firsts:
        others = sorted({r.hostname or r.tags.get("host") or "?" for r in store.list_runs()})
        have = f"; hosts with runs: {', '.join(others[:6])}" if others else ""
        return Pick(host, None, f"no run of host {host} in the store{have}")
    last = firsts[-1]       # list_runs: by start time, then by order stored
    again = [r for r in runs if r.tags.get("confirm_of") == last.run_id]
    if again:
        return Pick(host, again[-1].run_id, first=last.run_id)
    return Pick(host, last.run_id)


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
