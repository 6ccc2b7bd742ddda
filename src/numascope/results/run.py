"""The run record: one versioned document per `numascope run` — who, where, under which
conditions, and every BenchResult with all its repetitions.

Schema: docs/record-schema.md. Older records are upgraded on load by `migrate()`."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import resource
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from numascope import __version__, sysstate
from numascope.errors import UserError
from numascope.results.plain import to_plain
from numascope.results.record import SCHEMA_VERSION, BenchResult
from numascope.topology.model import Topology

# Keys of topo.facts that name the BIOS memory mode, in order of preference.
_MODE_FACTS = ("memory_mode", "bios_mode", "nps", "numa_mode", "snc")


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_run_id() -> str:
    """Sortable by time, unique across hosts: 20261122-014953-3fa9c1d2e4b7. 48 random bits:
    the nodes of a fleet start in the same second, and with 24 bits 10,000 of them shared
    an id about 3 times per fleet (birthday bound n²/2^25), one node's record then taking
    another's place; with 48 bits that is once in millions of such fleets."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(6)


@dataclass(slots=True)
class StageInfo:
    name: str
    status: str = "pending"   # pending | done | skipped | failed | interrupted
    reason: str = ""          # why skipped / failed
    results: int = 0
    seconds: float = 0.0
    # what the run planned for the stage (numascope.plan): cases, modelled and planned
    # seconds, the calibration factor, the cases a budget left out; and per case measured,
    # its seconds ([label, seconds]); empty in records made without a plan
    plan: dict[str, Any] = field(default_factory=dict)
    case_seconds: list[list[Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = {"name": self.name, "status": self.status, "reason": self.reason,
             "results": self.results, "seconds": round(self.seconds, 3)}
        if self.plan:
            d["plan"] = self.plan
        if self.case_seconds:
            d["case_seconds"] = [[c, round(t, 3)] for c, t in self.case_seconds]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StageInfo:
        return cls(d["name"], d.get("status", "pending"), d.get("reason", ""),
                   int(d.get("results", 0)), float(d.get("seconds", 0.0)),
                   dict(d.get("plan") or {}), [list(x) for x in d.get("case_seconds") or []])


@dataclass
class RunRecord:
    run_id: str
    started: str                          # UTC ISO 8601
    tool_version: str = __version__
    finished: str | None = None
    status: str = "running"               # running | complete | interrupted | failed
    profile: str = "quick"
    tags: dict[str, str] = field(default_factory=dict)
    host: dict[str, Any] = field(default_factory=dict)
    noise: dict[str, Any] = field(default_factory=dict)
    topology: dict[str, Any] = field(default_factory=dict)  # plain form of the Topology
    stages: list[StageInfo] = field(default_factory=list)
    results: list[BenchResult] = field(default_factory=list)
    schema_version: int = SCHEMA_VERSION

    @classmethod
    def new(cls, profile: str = "quick", tags: dict[str, str] | None = None) -> RunRecord:
        return cls(run_id=new_run_id(), started=utc_now(), profile=profile,
                   tags=dict(tags or {}))

    def stage(self, name: str) -> StageInfo:
        for s in self.stages:
            if s.name == name:
                return s
        s = StageInfo(name)
        self.stages.append(s)
        return s

    def to_dict(self, with_results: bool = True) -> dict[str, Any]:
        d = {
            "schema_version": self.schema_version, "run_id": self.run_id,
            "started": self.started, "finished": self.finished, "status": self.status,
            "tool_version": self.tool_version, "profile": self.profile,
            "tags": dict(self.tags), "host": to_plain(self.host),
            "noise": to_plain(self.noise), "topology": to_plain(self.topology),
            "stages": [s.to_dict() for s in self.stages],
        }
        if with_results:
            d["results"] = [to_plain(r.to_dict()) for r in self.results]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunRecord:
        d = migrate(d)
        return cls(
            run_id=d["run_id"], started=d["started"], tool_version=d.get("tool_version", "unknown"),
            finished=d.get("finished"), status=d.get("status", "complete"),
            profile=d.get("profile", "unknown"), tags=dict(d.get("tags", {})),
            host=dict(d.get("host", {})), noise=dict(d.get("noise", {})),
            topology=dict(d.get("topology", {})),
            stages=[StageInfo.from_dict(s) for s in d.get("stages", [])],
            results=[BenchResult.from_dict(r) for r in d.get("results", [])],
            schema_version=SCHEMA_VERSION,
        )


# -- schema migrations ---------------------------------------------------------------------

def _v0_to_v1(d: dict[str, Any]) -> dict[str, Any]:
    """Version 0 (pre-release drafts): tags as a list of "k=v" strings, `time` instead of
    `started`, no stages list."""
    d = dict(d)
    tags = d.get("tags", {})
    if isinstance(tags, list):
        d["tags"] = dict(t.split("=", 1) if "=" in t else (t, "") for t in tags)
    if "started" not in d and "time" in d:
        d["started"] = d.pop("time")
    d.setdefault("stages", [])
    d["schema_version"] = 1
    return d


V1_BANDWIDTH_NOTE = ("recorded with schema 1: each repetition timed on thread 0's clock "
                     "(a preempted thread 0 made it too short) and not screened for "
                     "implausibly fast repetitions")
V1_LATENCY_NOTE = ("recorded with schema 1: one pointer per 64 B line, so prefetchers served "
                   "part of the misses (DRAM latency reads low)")


def _v1_to_v2(d: dict[str, Any]) -> dict[str, Any]:
    """Version 1 → 2 (trustworthy numbers): the figures stay as measured but say how.
    Latency chased at a 64 B stride (params "line" becomes "stride"); bandwidth repetitions
    were timed on thread 0's clock; the huge-page share was read from one array's smaps
    region, which merged arrays could inflate up to 3×, so it becomes unknown (-1) with the
    old value kept beside."""
    d = dict(d)
    results = []
    for r in d.get("results", []):
        r = dict(r, params=dict(r.get("params", {})), placement=dict(r.get("placement", {})),
                 notes=list(r.get("notes", [])))
        if r.get("family") == "latency" and "stride" not in r["params"]:
            r["params"]["stride"] = r["params"].pop("line", 64)
            r["notes"].append(V1_LATENCY_NOTE)
        if r.get("family") == "bandwidth":
            r["notes"].append(V1_BANDWIDTH_NOTE)
            if "huge_fraction" in r["placement"]:
                r["placement"]["huge_fraction_schema1"] = r["placement"]["huge_fraction"]
                r["placement"]["huge_fraction"] = -1.0
        results.append(r)
    d["results"] = results
    d["schema_version"] = 2
    return d


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {0: _v0_to_v1,
                                                                      1: _v1_to_v2}


def migrate(d: dict[str, Any]) -> dict[str, Any]:
    """Upgrade a stored record dict, one version step at a time, to SCHEMA_VERSION."""
    v = int(d.get("schema_version", 0))
    if v > SCHEMA_VERSION:
        raise UserError(f"run {d.get('run_id', '?')} has record schema {v}, newer than this "
                        f"numascope understands ({SCHEMA_VERSION}); upgrade numascope")
    while v < SCHEMA_VERSION:
        d = MIGRATIONS[v](d)
        v = int(d["schema_version"])
    return d


# -- tags ----------------------------------------------------------------------------------

TAG_MAX = 200    # the longest tag (KEY=VALUE) taken: a selection must stay typeable


def check_label(text: str, flag: str, noun: str, limit: int = TAG_MAX) -> str:
    """A name the user gives (a baseline, a fleet id), stripped: letters, digits and
    - _ . :, at most `limit` characters; UserError naming `flag` (as typed) otherwise."""
    from numascope.errors import escape_text
    n = text.strip()
    if not n:
        raise UserError(f"{flag} is empty: give a {noun}")
    if len(n) > limit:
        raise UserError(f"{flag} '{escape_text(n, 60)}': a {noun} is at most {limit} "
                        f"characters (got {len(n):,})")
    if any(not (c.isascii() and c.isalnum() or c in "-_.:") for c in n):
        raise UserError(f"{flag}: bad {noun} '{escape_text(text, 60)}': use letters, digits "
                        "and - _ . :")
    return n


def parse_tags(items: list[str] | None, flag: str = "--tag") -> dict[str, str]:
    """["nps=4", "smt=off"] → {"nps": "4", "smt": "off"}. A tag must stay selectable
    (`compare nps=4 …`, `runs --tag`, selections split on "," and the first "="): UserError
    naming `flag` for a missing key or value, a control character (newline, tab, escape …),
    a comma, a tag longer than TAG_MAX characters, and a key given twice."""
    from numascope.errors import escape_text
    tags: dict[str, str] = {}
    for item in items or []:
        shown = f"'{escape_text(item, 60)}'"
        if len(item) > TAG_MAX:
            raise UserError(f"{flag} {shown}: a tag is at most {TAG_MAX} characters "
                            f"(got {len(item)})")
        if any(_control(c) for c in item):
            raise UserError(f"{flag} {shown}: control characters (newline, tab …) are not "
                            "allowed in a tag")
        k, sep, v = item.partition("=")
        k, v = k.strip(), v.strip()
        if not sep or not k:
            raise UserError(f"{flag} {shown}: bad tag, expected KEY=VALUE, e.g. nps=4")
        if not v:
            raise UserError(f"{flag} {shown}: bad tag, give a value after '=', e.g. {k}=4")
        if "," in item:
            raise UserError(f"{flag} {shown}: bad tag, ',' separates tags in a selection; "
                            "use another character")
        if k in tags:
            raise UserError(f"{flag}: tag key '{escape_text(k, 60)}' given twice "
                            f"({k}={tags[k]}, {k}={v}); give each key once")
        tags[k] = v
    return tags


def _control(c: str) -> bool:
    import unicodedata
    return unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")


# -- host facts ----------------------------------------------------------------------------

def _read(root: Path, rel: str, cap: int = 1 << 20) -> str | None:
    """A small host file (a replayed root's too), at most `cap` bytes of it."""
    try:
        with open(root / rel, "rb") as f:
            return f.read(cap).decode(errors="replace").strip() or None
    except OSError:
        return None


def _cpuinfo_field(root: Path, name: str) -> str | None:
    from numascope.host import Host
    return Host(root).cpuinfo().get(name)


def topology_summary(topo: Topology) -> dict[str, Any]:
    """The canonical shape of a machine: what the digest hashes, so two boots of the same
    hardware and BIOS settings give the same digest. Memory *amounts* are left out (MemTotal
    moves with kernel reservations and, in guests, ballooning); which nodes have memory
    stays in. The total is a separate host fact (memory_gib)."""
    return {
        "cpus": sorted((c.id, c.package, c.node, c.l3, c.core, c.smt, c.online)
                       for c in topo.cpus),
        "nodes": sorted((n.id, list(n.cpus), n.memory_bytes != 0,
                         sorted(n.distances.items())) for n in topo.nodes),
        "l3s": sorted((d.index, d.size_bytes, list(d.cpus)) for d in topo.l3s),
        "packages": sorted((p.id, list(p.cpus), list(p.nodes)) for p in topo.packages),
        "devices": sorted((d.address, d.kind, d.numa_node) for d in topo.devices),
        "cpu_model": topo.cpu_model,
    }


def topology_digest(topo: Topology) -> str:
    canon = json.dumps(topology_summary(topo), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()


def memory_mode(topo: Topology) -> str | None:
    for k in _MODE_FACTS:
        f = topo.facts.get(k)
        if f is not None and f.value is not None:
            return str(f.value)
    return None


def local_hostname() -> str:
    """This host's name as every command records it: NUMASCOPE_HOSTNAME when set (the name
    `fleet` records and `fleet check --host`, the health checks and labels look up; "{rank}"
    in it is rank 0 outside a fleet), else the system's."""
    import os
    override = os.environ.get("NUMASCOPE_HOSTNAME", "").strip()
    return override.replace("{rank}", "0") if override else socket.gethostname()


def host_facts(topo: Topology, root: str | Path = "/",
               clock_ghz: float | None = None) -> dict[str, Any]:
    """What identifies the hardware, firmware, OS and their settings for this run;
    "readiness" holds every readiness check (numascope.readiness: id, title, status, value,
    effect, fix) as seen when the run started."""
    from numascope.readiness import run_checks
    r = Path(root)
    smt_ctl = _read(r, "sys/devices/system/cpu/smt/control")
    smt_active = any(c.smt > 0 for c in topo.cpus)
    govs = sysstate.governors(root)
    return {
        "hostname": local_hostname() if str(root) == "/" else None,
        "cpu_model": topo.cpu_model or _cpuinfo_field(r, "model name"),
        "microcode": _cpuinfo_field(r, "microcode"),
        "kernel": platform.release() if str(root) == "/" else None,
        "kernel_version": platform.version() if str(root) == "/" else None,
        "bios_vendor": _read(r, "sys/class/dmi/id/bios_vendor"),
        "bios_version": _read(r, "sys/class/dmi/id/bios_version"),
        "bios_date": _read(r, "sys/class/dmi/id/bios_date"),
        "system": " ".join(x for x in (_read(r, "sys/class/dmi/id/sys_vendor"),
                                       _read(r, "sys/class/dmi/id/product_name")) if x) or None,
        "memory_mode": memory_mode(topo),
        "facts": {k: {"value": to_plain(f.value), "status": f.status}
                  for k, f in topo.facts.items()},
        "memory_gib": round(sum(n.memory_bytes or 0 for n in topo.nodes) / 2**30, 1),
        "packages": len(topo.packages), "nodes": len(topo.nodes), "l3s": len(topo.l3s),
        "cores": len(topo.cores), "cpus": len(topo.cpus),
        "smt": smt_active, "smt_control": smt_ctl,
        "governor": ",".join(sorted(govs)) if govs else None,
        "thp": sysstate.thp_mode(root),
        "numa_balancing": sysstate.numa_balancing(root),
        "clock_ghz": clock_ghz,
        "topology_digest": topology_digest(topo),
        "readiness": [c.to_dict() for c in run_checks(root, topo)],
    }


# -- noise observed during the run ---------------------------------------------------------

def _self_cpu_seconds() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime + ch.ru_utime + ch.ru_stime


class NoiseMonitor:
    """Samples /proc/stat and our own CPU time at start and stop: the share of CPU time
    used by *other* processes, the hypervisor's steal share, load averages, and the clock
    before/after when a clock probe is given (a drop means throttling during the run)."""

    def __init__(self, clock_probe: Callable[[], float] | None = None):
        self.clock_probe = clock_probe
        self._a: sysstate.CpuTimes | None = None
        self._self0 = 0.0
        self.data: dict[str, Any] = {}

    def start(self) -> None:
        self._a = sysstate.cpu_times()
        self._self0 = _self_cpu_seconds()
        self.data["loadavg_start"] = sysstate.loadavg()
        if self.clock_probe:
            self.data["clock_ghz_start"] = _probe(self.clock_probe)

    def stop(self, clock: bool = True) -> dict[str, Any]:
        """The observations; `clock=False` skips the closing clock reading (a stopped run
        ends at once; no clock drop is then reported)."""
        b = sysstate.cpu_times()
        self.data["loadavg_end"] = sysstate.loadavg()
        if self._a and b and b.total > self._a.total:
            total = b.total - self._a.total
            hz = os.sysconf("SC_CLK_TCK")
            own = (_self_cpu_seconds() - self._self0) * hz
            other = max(0.0, (b.busy - self._a.busy) - own)
            self.data["other_busy_fraction"] = round(other / total, 4)
            self.data["steal_fraction"] = round((b.steal - self._a.steal) / total, 4)
        if self.clock_probe and clock:
            end = _probe(self.clock_probe)
            self.data["clock_ghz_end"] = end
            start = self.data.get("clock_ghz_start")
            if start and end:
                self.data["clock_drop_fraction"] = round(max(0.0, (start - end) / start), 4)
        self.data["warnings"] = noise_warnings(self.data)
        return self.data


def _probe(fn: Callable[[], float]) -> float | None:
    try:
        v = fn()
        return round(float(v), 4) if v else None
    except Exception:  # noqa: BLE001 — a probe that cannot run here just leaves no number
        return None


def noise_warnings(n: dict[str, Any]) -> list[str]:
    # limits derived from the practical 5 % (Dell HPC lab, Rome 2019): numascope.sources
    w = []
    if (n.get("other_busy_fraction") or 0) > 0.05:
        w.append(f"other processes used {n['other_busy_fraction']:.0%} of the CPU time")
    if (n.get("steal_fraction") or 0) > 0.02:
        w.append(f"the hypervisor stole {n['steal_fraction']:.0%} of the CPU time")
    if (n.get("clock_drop_fraction") or 0) > 0.03:
        w.append(f"the clock dropped {n['clock_drop_fraction']:.0%} during the run")
    return w
