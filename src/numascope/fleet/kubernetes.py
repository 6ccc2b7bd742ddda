"""Kubernetes, node side: the labels a node advertises through node-feature-discovery (NFD),
made from its run's topology facts and its check against a baseline. See docs/kubernetes.md.

NFD's local feature source reads each file of /etc/kubernetes/node-feature-discovery/
features.d/ (dot files excepted, 64 kB at most) as `name[=value]` lines and `#` comments,
with the directive `# +expiry-time=<RFC 3339>`, past which the lines after it are ignored.
`write` makes such a file atomically (a dot file beside it, then a rename, as NFD asks):

    # numascope 0.1.0: host node7, run 20261202-021407-3576bdbf004b (complete), ...
    # baseline gold: pass (12 metrics within tolerance)
    # +expiry-time=2026-12-03T02:14:16Z
    numascope.feature.node.kubernetes.io/memory-mode=NPS4
    ...

Every name is under PREFIX, a sub-namespace of feature.node.kubernetes.io: NFD accepts it
in every version without configuration (another namespace needs nfd-master's
-extra-label-ns in the older ones). Every value keeps Kubernetes' label syntax: at most 63
characters of [-_.A-Za-z0-9], a letter or digit first and last.

The labels expire a set time after the run they come from (default 24 h, as `fleet check`
judges no older run), so that a node whose numascope stopped loses them. Nothing is written
when nothing was measured: no run of the host, a run that never read the machine (it failed
first), a run from before this boot (the BIOS may be set otherwise since) or one whose
labels would have expired; a file of ours left from earlier is removed then, so that NFD
drops its labels at its next pass.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

PREFIX = "numascope.feature.node.kubernetes.io"
FEATURES_D = "/etc/kubernetes/node-feature-discovery/features.d"
HEADER = "# numascope "       # the first line of every file of ours
LABEL_MAX = 63                # a label's name (after the prefix) and its value
FILE_MAX = 64 * 1024          # NFD ignores a larger feature file
DEFAULT_EXPIRY_S = 24 * 3600.0
EXPIRY_MAX_S = 366 * 86400.0   # labels a year old say nothing of the node now
PASS, FAIL, INCONCLUSIVE = "pass", "fail", "inconclusive"

_VALUE = re.compile(r"(?:[A-Za-z0-9](?:[-_.A-Za-z0-9]*[A-Za-z0-9])?)?")
_NAME = re.compile(r"[A-Za-z0-9](?:[-_.A-Za-z0-9]*[A-Za-z0-9])?")


def label_value(text: object) -> str:
    """`text` in label-value syntax: each run of other characters one '-', trimmed to a
    letter or digit at both ends, at most LABEL_MAX characters ("unknown" if none is left):
    "SNC off" -> "SNC-off", "1 node per socket" -> "1-node-per-socket"."""
    s = re.sub(r"[^-_.A-Za-z0-9]+", "-", str(text))[:LABEL_MAX]
    return re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", s) or "unknown"


def is_value(text: str) -> bool:
    return len(text) <= LABEL_MAX and _VALUE.fullmatch(text) is not None


def is_name(text: str) -> bool:
    """A label name as Kubernetes takes it: an optional DNS-subdomain prefix (at most 253
    characters) and '/', then at most LABEL_MAX characters of the value syntax, not empty."""
    prefix, _, name = text.rpartition("/")
    if prefix and (len(prefix) > 253 or not all(
            re.fullmatch(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?", p) for p in prefix.split("."))):
        return False
    return len(name) <= LABEL_MAX and _NAME.fullmatch(name) is not None


@dataclass(frozen=True)
class Target:
    """Where `fleet run --nfd-file` writes the labels, the baseline they are checked
    against (None: no check) with its tolerances, and their expiry."""

    path: Path
    base: dict[str, Any] | None
    given: dict[str, float]
    expiry_s: float


@dataclass(frozen=True)
class Check:
    """The node's check against a baseline, as its labels say it: pass, fail or
    inconclusive, with the first reason."""

    baseline: str
    status: str
    why: str


def judge(base: dict[str, Any], run: Any, given: dict[str, float],
          max_age_s: float | None) -> Check:
    """`run` checked against baseline `base` by `fleet check`'s rules (numascope.fleet.
    baseline.check, tolerances `given`): pass only when every metric it measured is within
    tolerance. A run older than `max_age_s`, a smoke run (its numbers measure caches) or one
    the baseline cannot judge is inconclusive; a run that failed fails."""
    from numascope.fleet import baseline, judged
    name = base["name"]
    old = judged.stale(run, max_age_s)
    if old:
        return Check(name, INCONCLUSIVE, f"run {old}")
    if run.profile == "smoke":
        return Check(name, INCONCLUSIVE, "a smoke run: its numbers measure caches, not the "
                                         "node")
    (v,) = baseline.check(base, [run], given)
    if v.problems:
        p = v.problems[0]
        return Check(name, FAIL, f"{p['metric'] or 'run'}: {p['why']}")
    if v.unjudged:
        p = v.unjudged[0]
        return Check(name, INCONCLUSIVE, f"{p['metric'] or 'run'}: {p['why']}")
    return Check(name, PASS, f"{v.checked} metrics within tolerance")


def _fact(run: Any, key: str) -> tuple[Any, str]:
    facts = run.host.get("facts") or run.topology.get("facts") or {}
    f = facts.get(key) or {}
    return f.get("value"), f.get("status", "unknown")


def _known(run: Any, key: str) -> str:
    """A count fact as a label value: itself when known, else "ambiguous" or "unknown"."""
    value, status = _fact(run, key)
    if status == "known" and value is not None:
        return label_value(value)
    return "ambiguous" if status == "ambiguous" else "unknown"


def measured(run: Any) -> str:
    """Why `run` gives no labels ("" when it does): a run that never read the machine
    (stored by a node that failed first) has no topology facts."""
    if run.host.get("facts") or run.topology.get("facts"):
        return ""
    from numascope.fleet.verdict import verdict
    v = verdict(run)
    return f"run {run.run_id} never read the machine ({v.status}: {v.reason or v.status})"


def labels(run: Any, check: Check | None = None) -> dict[str, str]:
    """The labels of `run` (a RunRecord with the topology facts a run records), names
    without PREFIX, in the file's order. memory-mode is the mode in the vendor's words
    (NPS1/2/4, NPS0, L3-as-NUMA, SNC2/3/4, SNC-off, COD, or counts such as
    1-node-per-socket) when the fact is known, "ambiguous" (memory-mode-candidates then
    lists what it may be) or "unknown"; the check's labels come only with a check."""
    from numascope.fleet.verdict import verdict
    out: dict[str, str] = {}
    mode, status = _fact(run, "memory_mode")
    if status == "known" and mode is not None:
        out["memory-mode"] = label_value(mode)
    elif status == "ambiguous":
        out["memory-mode"] = "ambiguous"
        if mode is not None:      # "NPS4|L3-as-NUMA" -> "NPS4_L3-as-NUMA"
            out["memory-mode-candidates"] = label_value("_".join(
                label_value(m) for m in str(mode).split("|")))
    else:
        out["memory-mode"] = "unknown"
    out["sockets"] = _known(run, "sockets")
    nodes = run.topology.get("nodes")
    out["numa-nodes"] = str(len(nodes)) if nodes else "unknown"
    out["numa-nodes-with-cpus"] = _known(run, "cpu_nodes")
    per, status = _fact(run, "nodes_per_socket")
    out["nodes-per-socket"] = _per_socket(per) if status == "known" and per is not None else \
        "ambiguous" if status == "ambiguous" else "unknown"
    out["l3-per-numa-node"] = _l3_per_node(run.topology)
    width, status = _fact(run, "smt_width")
    if status == "known" and isinstance(width, int):
        out["smt"] = "true" if width > 1 and not _cmt(run.topology) else "false"
        out["threads-per-core"] = str(width)
    else:
        out["smt"] = out["threads-per-core"] = "unknown"
    out["run-status"] = verdict(run).status
    if check is not None:
        out["baseline"] = label_value(check.baseline)
        out["baseline-check"] = check.status
    out["version"] = label_value(run.tool_version)
    return out


def summary(found: dict[str, str]) -> str:
    """What a command says of the labels it wrote: the mode, the check, how many."""
    shown = [f"{k}={found[k]}" for k in ("memory-mode", "baseline-check") if k in found]
    return ", ".join([*shown, f"{len(found)} labels"])


def _per_socket(value: Any) -> str:
    """nodes_per_socket as a label: "4", or "1/2" (one node across two sockets, NPS0) as
    "0.5"."""
    if isinstance(value, str) and "/" in value:
        a, _, b = value.partition("/")
        try:
            return label_value(f"{int(a) / int(b):g}")
        except (ValueError, ZeroDivisionError):
            return "unknown"
    return label_value(value)


def _cmt(topology: dict[str, Any]) -> bool:
    """Whether the kernel's thread siblings are the cores of CMT compute units (Bulldozer:
    each with its own L1d), not SMT threads (topology.infer's smt_width says the same)."""
    l1d = [set(c.get("cpus") or ()) for c in topology.get("caches") or []
           if c.get("level") == 1 and c.get("kind") == "Data"]
    multi = [set(c.get("cpus") or ()) for c in topology.get("cores") or []
             if len(c.get("cpus") or ()) > 1]
    return bool(l1d and multi) and not any(core <= d for core in multi for d in l1d)


def _l3_per_node(topology: dict[str, Any]) -> str:
    """How many L3 domains the CPUs of each CPU-bearing node reach, when every node reaches
    as many ("mixed" when not; an L3 that two nodes share, as under SNC, counts for both)."""
    nodes = [n for n in topology.get("nodes", []) if n.get("cpus")]
    l3s = topology.get("l3s") or []
    if not nodes or not l3s:
        return "unknown"
    counts = {sum(n["id"] in (d.get("nodes") or []) for d in l3s) for n in nodes}
    return str(counts.pop()) if len(counts) == 1 else "mixed"


# -- the file ------------------------------------------------------------------------------

def run_time(run: Any) -> datetime | None:
    """When the run finished (started, if it never finished), in UTC."""
    try:
        t = datetime.fromisoformat(str(run.finished or run.started))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def boot_time(root: str | Path = "/") -> datetime | None:
    """This boot's start (btime of /proc/stat), None when unreadable."""
    try:
        for line in (Path(root) / "proc/stat").read_text().splitlines():
            if line.startswith("btime "):
                return datetime.fromtimestamp(int(line.split()[1]), UTC)
    except (OSError, ValueError, IndexError):
        pass
    return None


def stale(run: Any, expiry_s: float, now: datetime | None = None,
          boot: datetime | None = None) -> str:
    """Why `run` may not label this node now ("" when it may): it started before this
    boot, or its labels would already have expired."""
    now = now or datetime.now(UTC)
    t = run_time(run)
    if t is None:
        return f"run {run.run_id}: its time {run.finished or run.started!r} cannot be read"
    try:
        started = datetime.fromisoformat(str(run.started))
        started = started if started.tzinfo else started.replace(tzinfo=UTC)
    except ValueError:
        started = t
    if boot is not None and started < boot:
        return (f"run {run.run_id} was made before this boot ({_iso(started)}; booted "
                f"{_iso(boot)}): the machine may be set otherwise since")
    if t + timedelta(seconds=expiry_s) <= now:
        from numascope.fleet.judged import show_age
        return (f"run {run.run_id} is {show_age((now - t).total_seconds())} old: its labels "
                f"would have expired (after {show_age(expiry_s)})")
    return ""


def expires(run: Any, expiry_s: float) -> str:
    """When the labels of `run` expire (RFC 3339, UTC): `expiry_s` after the run."""
    return _iso((run_time(run) or datetime.now(UTC)) + timedelta(seconds=expiry_s))


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def render(run: Any, found: dict[str, str], check: Check | None, expiry_s: float) -> str:
    """The feature file: two comment lines (numascope's version, the run; the check), the
    expiry directive, one `PREFIX/name=value` line per label."""
    from numascope import __version__
    from numascope.fleet.verdict import verdict
    t = run_time(run) or datetime.now(UTC)
    host = run.host.get("hostname") or run.tags.get("host") or "?"
    lines = [(f"{HEADER}{__version__}: node-feature-discovery labels of host {host}, run "
              f"{run.run_id} ({verdict(run).status}), finished {_iso(t)}")]
    if check is not None:
        lines.append(f"# baseline {check.baseline}: {check.status} ({check.why})")
    lines.append(f"# +expiry-time={expires(run, expiry_s)}")
    lines += [f"{PREFIX}/{k}={v}" for k, v in found.items()]
    text = "".join(_one_line(x)[:1000] + "\n" for x in lines)
    for k, v in found.items():      # a bug here must never reach the node object
        if not (is_name(f"{PREFIX}/{k}") and is_value(v)):
            raise ValueError(f"not a Kubernetes label: {PREFIX}/{k}={v!r}")
    if len(text.encode()) > FILE_MAX:
        raise ValueError(f"feature file of {len(text.encode()):,} bytes: NFD reads at most "
                         f"{FILE_MAX:,}")
    return text


def _one_line(text: str) -> str:
    return " ".join(text.split())


def output_path(text: str | None, flag: str, stdout_ok: bool = False) -> Path | None:
    """The feature file `flag` names, checked before anything is measured (numascope.paths.
    check_output); "-" (standard output) only where `stdout_ok`, and never a dot file, which
    NFD skips. UserError (one line, exit 2) otherwise."""
    from numascope.errors import UserError, escape_text
    from numascope.paths import check_output
    if text == "-" and not stdout_ok:
        raise UserError(f"{flag} -: give a file (node-feature-discovery reads files)")
    p = check_output(text, flag)
    if p is not None and str(p) != "-" and p.name.startswith("."):
        raise UserError(f"{flag} {escape_text(text, 160)}: node-feature-discovery skips dot "
                        "files; give a name without a leading '.'")
    return p


def write(path: Path, text: str) -> None:
    """`text` into `path` atomically: a dot file in its folder (NFD skips dot files), then
    a rename (numascope.atomic)."""
    from numascope.atomic import write_atomic
    write_atomic(path, text)


def ours(path: Path) -> bool:
    """Whether `path` is a feature file numascope wrote (its first line says so)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.readline().startswith(HEADER)
    except OSError:
        return False


def remove(path: Path) -> bool:
    """Remove `path` when it is a feature file of ours (never another program's file);
    whether something was removed."""
    if not ours(path):
        return False
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def from_before_boot(path: Path, boot: datetime | None) -> bool:
    """Whether `path` is a feature file of ours written before this boot."""
    if boot is None or not ours(path):
        return False
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, UTC) < boot
    except OSError:
        return False


def parse_expiry(text: str | None, flag: str) -> float:
    """--expiry: a duration (90s, 30m, 24h, 7d; a bare number is hours), DEFAULT_EXPIRY_S
    when not given; never none (labels that never expire outlive the numascope that
    measured them)."""
    from numascope.errors import UserError
    from numascope.fleet.judged import parse_age
    if text is None:
        return DEFAULT_EXPIRY_S
    seconds = parse_age(text, flag)
    if seconds is None or not math.isfinite(seconds):
        raise UserError(f"{flag} {text!r}: give a duration such as 12h or 7d (labels that "
                        "never expire would outlive the run that measured them)")
    if seconds > EXPIRY_MAX_S:
        raise UserError(f"{flag} {text!r}: at most 366d")
    return seconds
