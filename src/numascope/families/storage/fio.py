"""fio, driven: the job file numascope writes from typed parameters, the run (killed cleanly
on a stop signal), and the JSON it prints, parsed into numbers.

    params = IoParams(rw="randread", bs=4096, iodepth=32, runtime=5)
    text = job_text(params, [Group("t0", "/mnt/a/numascope-io-x.dat", cpus=(0, 1), mem_node=0)],
                    engine="io_uring")
    run = run_fio(text)            # FioRun: version, one GroupStats per job group

The system fio is used (NUMASCOPE_FIO names another binary). io_uring is tried first and
libaio when io_uring is not usable here (seccomp, io_uring_disabled …), probed once. Pinning
goes into the job (cpus_allowed, numa_mem_policy) when fio was built with libnuma; otherwise
fio runs under the CPUs (os.sched_setaffinity) and, if numactl is there, under
`numactl --membind` — said in the result's notes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

from numascope.errors import MeasurementError, Unavailable, UserError
from numascope.families.storage.options import BS_RANDOM, BS_SEQUENTIAL, RW, RWMIX, TABLE
from numascope.procs import stop_group
from numascope.units import format_bytes

ENGINES = ("io_uring", "libaio")
PERCENTILES = (("p50", "50.000000"), ("p99", "99.000000"), ("p99.9", "99.900000"))
KILL_GRACE_S = 5.0
PIN_SRC = ("import os, sys; os.sched_setaffinity(0, [int(c) for c in sys.argv[1].split(',')]); "
           "os.execv(sys.argv[2], sys.argv[2:])")


# -- parameters ---------------------------------------------------------------------------

@dataclass(frozen=True)
class IoParams:
    """One fio workload; the defaults are the options' (families/storage/options.py), every
    value checked by its option's rule when made (the flag names are `numascope io`'s)."""

    rw: str = TABLE["rw"].default
    bs: int | None = TABLE["bs"].default      # bytes; None: BS_SEQUENTIAL for read, else BS_RANDOM
    iodepth: int = TABLE["iodepth"].default
    numjobs: int = TABLE["threads"].default   # fio's numjobs: `numascope io --threads`
    runtime: float = TABLE["runtime"].default   # seconds measured (time_based)
    ramp: float = TABLE["ramp"].default         # seconds run before measuring (ramp_time)
    size: int = TABLE["size"].default         # bytes of the file per target (region of a device)
    rwmixread: int = RWMIX                    # randrw: percent reads
    direct: bool = True

    def __post_init__(self) -> None:
        if self.rw not in RW:
            raise UserError(f"--rw {self.rw}: choose one of {', '.join(RW)}")
        if self.bs is None:
            object.__setattr__(self, "bs", BS_SEQUENTIAL if self.rw == "read" else BS_RANDOM)
        for name, flag, value in (("bs", "--bs", int(self.bs or 0)),
                                  ("iodepth", "--iodepth", self.iodepth),
                                  ("threads", "--threads", self.numjobs),
                                  ("runtime", "--runtime", self.runtime),
                                  ("ramp", "--ramp", self.ramp),
                                  ("rwmixread", "--rwmixread", self.rwmixread)):
            TABLE[name].convert(value, flag)          # the options' own rules
        bs = int(self.bs or 0)
        if self.size < bs or self.size % bs:
            raise UserError(f"--size {format_bytes(self.size)}: a whole number of blocks of "
                            f"{format_bytes(bs)}, at least one")

    @property
    def reads(self) -> bool:
        return self.rw in ("randread", "read")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> IoParams:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})

    def describe(self) -> str:
        mix = f" {self.rwmixread}% reads" if self.rw == "randrw" else ""
        return (f"{self.rw}{mix} {format_bytes(self.bs or 0)} QD{self.iodepth} "
                f"x{self.numjobs} job{'s' if self.numjobs != 1 else ''}")


@dataclass(frozen=True)
class Group:
    """One fio job group: one target, its jobs' CPUs and memory node (None: not pinned)."""

    name: str
    filename: str
    cpus: tuple[int, ...] | None = None
    mem_nodes: tuple[int, ...] | None = None
    mem_policy: str = "bind"           # bind | interleave (fio's numa_mem_policy words)


def _seconds(x: float) -> str:
    return f"{int(x)}" if float(x).is_integer() else f"{round(x * 1000)}ms"


def _list(ids: tuple[int, ...]) -> str:
    from numascope.placement import format_cpulist
    return format_cpulist(ids)


def job_text(p: IoParams, groups: list[Group], engine: str, *, numa: bool = True,
             readonly: bool = False) -> str:
    """The fio job file: [global] from `p`, one section per group (each its own reporting
    group). With `numa` False the pinning is left out of the file (fio then runs under it)."""
    lines = ["; written by numascope io", "[global]", f"ioengine={engine}",
             f"direct={int(p.direct)}", f"rw={p.rw}", f"bs={p.bs}", f"iodepth={p.iodepth}",
             f"numjobs={p.numjobs}", f"size={p.size}", f"runtime={_seconds(p.runtime)}",
             f"ramp_time={_seconds(p.ramp)}", "time_based=1", "group_reporting=1",
             "randrepeat=0", "norandommap=1"]
    if p.rw == "randrw":
        lines.append(f"rwmixread={p.rwmixread}")
    if readonly:
        lines.append("readonly=1")
    for g in groups:
        lines += ["", f"[{g.name}]", "new_group", f"filename={g.filename}"]
        if numa and g.cpus:
            lines.append(f"cpus_allowed={_list(g.cpus)}")
            lines.append("cpus_allowed_policy="
                         + ("split" if p.numjobs <= len(g.cpus) else "shared"))
        if numa and g.mem_nodes:
            lines.append(f"numa_mem_policy={g.mem_policy}:{_list(g.mem_nodes)}")
    return "\n".join(lines) + "\n"


# -- the binary ---------------------------------------------------------------------------

def fio_path() -> str:
    """The fio binary (NUMASCOPE_FIO, else fio on PATH); Unavailable when there is none."""
    env = os.environ.get("NUMASCOPE_FIO")
    if env is not None:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env
        raise Unavailable(f"fio not found at {env} (NUMASCOPE_FIO): install fio or fix the path")
    found = shutil.which("fio")
    if not found:
        raise Unavailable("fio not found: install fio (apt install fio, dnf install fio)")
    return found


@lru_cache(maxsize=8)
def fio_version(path: str) -> str:
    try:
        r = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30,
                           check=False)
    except OSError as e:
        raise Unavailable(f"cannot run {path}: {e.strerror}") from None
    v = r.stdout.strip().splitlines()[0] if r.stdout.strip() else ""
    if r.returncode != 0 or not v.startswith("fio"):
        raise Unavailable(f"{path} --version did not say it is fio")
    return v


def _tiny(path: str, *extra: str) -> bool:
    """Does a 4 KiB read of /dev/zero with these options run? (nothing is written)"""
    try:
        r = subprocess.run([path, "--name=probe", "--filename=/dev/zero", "--rw=read",
                            "--bs=4k", "--size=4k", "--output-format=json", *extra],
                           capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    if r.returncode != 0:
        return False
    try:
        doc = parse_json_text(r.stdout)
    except MeasurementError:
        return False
    return all(int(j.get("error", 0)) == 0 for j in doc.get("jobs", []))


@lru_cache(maxsize=8)
def probe(path: str) -> tuple[str, bool]:
    """(engine, numa): io_uring if it runs here else libaio; whether fio takes
    numa_mem_policy (built with libnuma). Unavailable when neither engine runs."""
    engine = next((e for e in ENGINES if _tiny(path, f"--ioengine={e}")), None)
    if engine is None:
        raise Unavailable(f"fio ({path}) can use neither io_uring nor libaio here")
    numa = _tiny(path, f"--ioengine={engine}", "--numa_mem_policy=local")
    return engine, numa


# -- the output ---------------------------------------------------------------------------

@dataclass
class GroupStats:
    """One job group's numbers as fio reports them (group_reporting)."""

    name: str
    groupid: int
    error: int
    iops: float                     # reads + writes
    read_iops: float
    write_iops: float
    bw_bytes: float                 # bytes/s, reads + writes
    clat_us: dict[str, float]       # p50/p99/p99.9 completion latency (µs) of the main direction
    write_clat_us: dict[str, float]  # of writes, for a mixed workload
    usr_cpu: float                  # % of one CPU per job
    sys_cpu: float
    total_err: int
    short_ios: int
    drop_ios: int
    runtime_ms: float
    io_bytes: int
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class FioRun:
    version: str
    groups: list[GroupStats]
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def iops(self) -> float:
        return sum(g.iops for g in self.groups)

    @property
    def bw_bytes(self) -> float:
        return sum(g.bw_bytes for g in self.groups)

    def failed(self) -> list[GroupStats]:
        return [g for g in self.groups if g.error or g.total_err]


def parse_json_text(text: str) -> dict[str, Any]:
    """fio's JSON document out of its standard output (fio may print notes before it)."""
    start = next((i for i, line in _line_starts(text) if line.startswith("{")), None)
    if start is None:
        raise MeasurementError("fio printed no JSON: " + _first_line(text))
    try:
        doc, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as e:
        raise MeasurementError(f"fio's JSON is cut or malformed ({e.msg} at line {e.lineno})"
                               ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        raise MeasurementError("fio's JSON has no jobs list")
    return doc


def _line_starts(text: str):
    pos = 0
    for line in text.splitlines(keepends=True):
        yield pos, line.lstrip("\ufeff")
        pos += len(line)


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[0][:200] if lines else "(nothing)"


def _num(d: Any, *keys: str, default: float = 0.0) -> float:
    for k in keys:
        if not isinstance(d, dict):
            return default
        d = d.get(k)
    try:
        return float(d) if d is not None else default
    except (TypeError, ValueError):
        return default


def _pcts(direction: dict[str, Any]) -> dict[str, float]:
    """p50/p99/p99.9 of completion latency in µs (fio >= 3: clat_ns; older: clat in µs)."""
    out: dict[str, float] = {}
    if isinstance(direction.get("clat_ns"), dict):
        src, scale = direction["clat_ns"].get("percentile") or {}, 1e-3
    elif isinstance(direction.get("clat"), dict):
        src, scale = direction["clat"].get("percentile") or {}, 1.0
    else:
        src, scale = {}, 1.0
    for name, key in PERCENTILES:
        v = src.get(key)
        if v is None:   # spelled differently by a future fio: match by value
            v = next((x for k, x in src.items() if _same(k, key)), None)
        if v is not None:
            out[name] = float(v) * scale
    return out


def _same(a: str, b: str) -> bool:
    try:
        return abs(float(a) - float(b)) < 1e-9
    except ValueError:
        return False


def parse(doc: dict[str, Any] | str) -> FioRun:
    """FioRun from fio's JSON (the text or the parsed document)."""
    if isinstance(doc, str):
        doc = parse_json_text(doc)
    groups = []
    for j in doc.get("jobs", []):
        rd, wr = j.get("read") or {}, j.get("write") or {}
        riops, wiops = _num(rd, "iops"), _num(wr, "iops")
        main = rd if riops or not wiops else wr
        groups.append(GroupStats(
            name=str(j.get("jobname", "")), groupid=int(_num(j, "groupid")),
            error=int(_num(j, "error")), iops=riops + wiops, read_iops=riops, write_iops=wiops,
            bw_bytes=_num(rd, "bw_bytes") + _num(wr, "bw_bytes"),
            clat_us=_pcts(main), write_clat_us=_pcts(wr) if riops and wiops else {},
            usr_cpu=_num(j, "usr_cpu"), sys_cpu=_num(j, "sys_cpu"),
            total_err=int(_num(j, "total_err")),
            short_ios=int(_num(rd, "short_ios") + _num(wr, "short_ios")),
            drop_ios=int(_num(rd, "drop_ios") + _num(wr, "drop_ios")),
            runtime_ms=max(_num(j, "job_runtime"), _num(rd, "runtime"), _num(wr, "runtime")),
            io_bytes=int(_num(rd, "io_bytes") + _num(wr, "io_bytes")),
            options=dict(j.get("job options") or {})))
    return FioRun(version=str(doc.get("fio version", "unknown")), groups=groups, raw=doc)


# -- running -------------------------------------------------------------------------------

def _stop(proc: subprocess.Popen) -> None:
    """End fio and its job processes (its own session): SIGTERM, then SIGKILL."""
    stop_group(proc, (KILL_GRACE_S, KILL_GRACE_S))


def run_fio(text: str, *, path: str | None = None, cpus: tuple[int, ...] | None = None,
            wrap: list[str] | None = None, readonly: bool = False,
            timeout: float = 3600.0, jobdir: str | None = None) -> tuple[FioRun, str]:
    """Run the job file `text` with --output-format=json; (FioRun, the command line).
    `cpus`: run fio under this affinity; `wrap`: a prefix such as numactl --membind=1;
    `jobdir`: where the job file goes (a --dir: a killed run's leftovers are found there by
    the next one; default the temporary folder).
    A stop signal (KeyboardInterrupt) ends fio (its whole session) before it propagates."""
    from numascope.families.storage.targets import own_prefix
    path = path or fio_path()
    fd, jobfile = tempfile.mkstemp(prefix=own_prefix(), suffix=".fio", dir=jobdir)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    argv = [*(wrap or []), path, "--output-format=json", *(["--readonly"] if readonly else []),
            jobfile]
    if cpus:    # fio under this affinity (set in a tiny exec wrapper: no preexec_fn)
        argv = [sys.executable, "-c", PIN_SRC, ",".join(map(str, cpus)), *argv]
    proc = None
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise MeasurementError(f"fio ran past {timeout:.0f} s and was stopped") from None
    except OSError as e:
        raise Unavailable(f"cannot run {argv[0]}: {e.strerror}") from None
    finally:
        if proc is not None:
            _stop(proc)
        try:
            os.unlink(jobfile)
        except OSError:
            pass
    try:
        run = parse(out)
    except MeasurementError:
        raise MeasurementError(f"fio failed (exit {proc.returncode}): "
                               + _first_line(err or out)) from None
    bad = run.failed()
    if bad:
        g = bad[0]
        why = os.strerror(g.error) if g.error else f"{g.total_err} I/O errors"
        raise MeasurementError(f"fio job {g.name} failed: error {g.error} ({why})"
                               + (f"; fio said: {_first_line(err)}" if err.strip() else ""))
    if proc.returncode != 0:
        raise MeasurementError(f"fio exited {proc.returncode}: {_first_line(err or out)}")
    from numascope.placement import format_cpulist
    shown = argv[4:] if cpus else argv
    return run, (f"(under CPUs {format_cpulist(cpus)}) " if cpus else "") + \
        " ".join(shown[:-1] + ["JOBFILE"])
