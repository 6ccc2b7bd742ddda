"""Build the point-to-point program with mpicc, launch it (or the OSU micro-benchmarks) under
mpirun with one binding per rank, and read back what it printed.

The program is built once per (source, `mpicc -showme`) into a per-user cache
(~/.cache/numascope/net/<hash>/pt2pt, $XDG_CACHE_HOME respected): compiled to a temporary
name in that folder, then renamed, so concurrent first uses are safe.

Each rank binds itself (sched_setaffinity + set_mempolicy(MPOL_BIND) before MPI_Init) from
--bind "CPUS@NODE;CPUS@NODE" (one entry per rank, in rank order) and mpirun runs with
--bind-to none, so the binding is exactly the one written on the command line. The OSU
programs cannot bind themselves: each rank is an app context wrapped in numactl."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from numascope.errors import LaunchError, MeasurementError, Unavailable, UserError
from numascope.placement import format_cpulist, parse_cpulist
from numascope.procs import stop_group, which

SOURCE = Path(__file__).with_name("pt2pt.c")
TESTS = ("lat", "bw", "bibw", "mbw")
OSU = {"lat": "osu_latency", "bw": "osu_bw", "bibw": "osu_bibw", "mbw": "osu_mbw_mr"}
TOKEN_VAR = "NUMASCOPE_NET_TOKEN"
# pt2pt.c's fault hooks (tests only) act only under the test switch, the fleet's own
# (fleet.node.HOOKS_SWITCH): a hook left in a normal environment does nothing, and is said
HOOKS_SWITCH = "NUMASCOPE_TEST_HOOKS"
HOOKS_ON = "falsify-results"
HOOK_VARS = ("NUMASCOPE_NET_CORRUPT", "NUMASCOPE_NET_DIE_RANK", "NUMASCOPE_NET_HANG_RANK")
_said: set[str] = set()      # the ignored hooks said on stderr (once per process)


@dataclass(frozen=True)
class Rank:
    """Where one rank runs: its CPUs (empty: unbound) and its memory node (None: unbound)."""

    cpus: tuple[int, ...]
    node: int | None

    def text(self) -> str:
        cpus = format_cpulist(self.cpus) if self.cpus else "-"
        return f"{cpus}@{-1 if self.node is None else self.node}"


def bind_text(ranks: list[Rank]) -> str:
    """The program's --bind argument: "0@0;4@1" (rank 0 on CPU 0 with memory on node 0 …)."""
    return ";".join(r.text() for r in ranks)


def parse_bind(text: str) -> list[Rank]:
    """--bind back into ranks (what the program itself does, in Python)."""
    out = []
    for entry in text.split(";"):
        cpus, _, node = entry.partition("@")
        n = int(node)
        out.append(Rank(tuple(parse_cpulist(cpus)) if cpus != "-" else (),
                        None if n < 0 else n))
    return out


def ranks_of_command(cmd: list[str]) -> list[Rank]:
    """The ranks a launcher command line promises, whichever engine wrote it: the program's
    --bind, or one numactl per app context (OSU)."""
    if "--bind" in cmd:
        return parse_bind(cmd[cmd.index("--bind") + 1])
    out = []
    for i, a in enumerate(cmd):
        if a.endswith("numactl"):
            cpus, node = (), None
            for b in cmd[i + 1:]:
                if b.startswith("--physcpubind="):
                    cpus = tuple(parse_cpulist(b.split("=", 1)[1]))
                elif b.startswith("--membind="):
                    node = int(b.split("=", 1)[1])
                elif not b.startswith("-"):
                    break
            out.append(Rank(cpus, node))
    return out


# -- tools ------------------------------------------------------------------------------------

def mpi_tools() -> tuple[str, str]:
    """(mpirun, mpicc); Unavailable (exit 4) with one line when either is missing."""
    mpirun, mpicc = which("mpirun"), which("mpicc")
    if not mpirun or not mpicc:
        missing = " and ".join(n for n, p in (("mpirun", mpirun), ("mpicc", mpicc)) if not p)
        raise Unavailable(f"MPI is not installed: no {missing} on PATH (install Open MPI, "
                          "e.g. apt install openmpi-bin libopenmpi-dev)")
    return mpirun, mpicc


def osu_tools(tests: list[str]) -> dict[str, str] | None:
    """The OSU programs for these tests when every one is on PATH, else None."""
    found = {t: shutil.which(OSU[t]) for t in tests}
    return found if all(found.values()) else None   # type: ignore[return-value]


def mpi_version(mpirun: str) -> str:
    try:
        out = subprocess.run([mpirun, "--version"], capture_output=True, text=True,
                             timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.splitlines()[0].strip() if out.strip() else "unknown"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "numascope" / "net"


def build(mpicc: str, source: Path = SOURCE) -> Path:
    """The built program (compiled now if this source + compiler wrapper is new)."""
    try:
        show = subprocess.run([mpicc, "-showme"], capture_output=True, text=True,
                              timeout=60, check=False).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Unavailable(f"{mpicc} -showme failed: {e}") from None
    src = source.read_bytes()
    key = hashlib.sha256(src + b"\0" + show.encode()).hexdigest()[:16]
    d = cache_dir() / key
    exe = d / "pt2pt"
    if exe.exists():
        return exe
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise Unavailable(f"cannot create the build cache {d}: {e}") from None
    tmp = d / f".pt2pt.{os.getpid()}.{uuid.uuid4().hex[:8]}"
    cmd = [mpicc, "-O2", "-std=gnu11", "-o", str(tmp), str(source)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Unavailable(f"building {source.name} failed: {e}") from None
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        first = (r.stderr.strip().splitlines() or ["no message"])[0]
        raise Unavailable(f"{shlex.join(cmd)} failed: {first}")
    os.replace(tmp, exe)
    return exe


# -- the command line -------------------------------------------------------------------------

CHECK_ITERS = 2   # validation iterations per size: each with its own pattern


@dataclass(frozen=True)
class Plan:
    """One launch: a test over a list of message sizes, with the ranks' bindings."""

    test: str
    sizes: tuple[int, ...]
    iters: int
    warmup: int
    large_iters: int
    large_warmup: int
    window: int                       # every value from NetParams.plan (no second default)
    pairs: int
    ranks: tuple[Rank, ...]
    hosts: tuple[str, ...]            # two hosts: ranks [0, pairs) on the first, the rest on
                                      # the second; empty: this host only
    pages: str                        # system: no madvise (the host's THP setting, as stock
                                      # OSU gets); none: MADV_NOHUGEPAGE; thp: MADV_HUGEPAGE
    buffers: str                      # same: OSU's one buffer per rank; distinct: per slot
    check_iters: int = CHECK_ITERS    # the untimed validation pass's iterations per size

    def __post_init__(self) -> None:
        if self.test not in TESTS:
            raise UserError(f"unknown test {self.test!r}")
        n = 2 * self.pairs
        if len(self.ranks) != n:
            raise UserError(f"{self.test}: {n} ranks needed, {len(self.ranks)} bound")


LARGE = 8192   # OSU's "large message" threshold: fewer iterations above it


def launcher_flags(nranks: int, hosts: tuple[str, ...], per_host: int) -> list[str]:
    flags = []
    if os.geteuid() == 0:
        flags.append("--allow-run-as-root")
    try:
        ncpu = len(os.sched_getaffinity(0))
    except OSError:
        ncpu = os.cpu_count() or 1
    # the same host named twice (a rehearsal of --hosts on one machine): Open MPI counts
    # its slots once, so the second app context needs --oversubscribe
    same = bool(hosts) and hosts[0] == hosts[1]
    if same or (per_host if hosts else nranks) > ncpu:
        flags.append("--oversubscribe")
    return flags + ["--bind-to", "none"]


def _contexts(plan: Plan, args: list[str]) -> list[str]:
    """One app context per host (ranks [0, pairs) on the first, the rest on the second):
    `-np P -H A prog … : -np P -H B prog …`, which also holds when A and B are one host."""
    out: list[str] = []
    for i, h in enumerate(plan.hosts):
        out += ([":"] if i else []) + ["-np", str(plan.pairs), "-H", f"{h}:{plan.pairs}",
                                       *args]
    return out


def command(mpirun: str, exe: str, plan: Plan) -> list[str]:
    """The numascope program's launcher line."""
    n = len(plan.ranks)
    args = [exe, "--test", plan.test, "--sizes", ",".join(map(str, plan.sizes)),
            "--iters", str(plan.iters), "--warmup", str(plan.warmup),
            "--large", str(LARGE), "--large-iters", str(plan.large_iters),
            "--large-warmup", str(plan.large_warmup), "--window", str(plan.window),
            "--pairs", str(plan.pairs), "--pages", plan.pages,
            "--buffers", plan.buffers, "--check-iters", str(plan.check_iters),
            "--bind", bind_text(list(plan.ranks))]
    flags = launcher_flags(n, plan.hosts, plan.pairs)
    if plan.hosts:
        return [mpirun, *flags, *_contexts(plan, args)]
    return [mpirun, *flags, "-np", str(n), *args]


# OMB 7.x's default counts (osu_util.h: BW_LOOP_SMALL 100, BW_SKIP_SMALL 10, BW_LOOP_LARGE
# 20, BW_SKIP_LARGE 2; LAT_LOOP_SMALL 10000, LAT_SKIP_SMALL 100, LAT_LOOP_LARGE 1000,
# LAT_SKIP_LARGE 10; "large" above LARGE_MESSAGE_SIZE 8192), as (iters, warmup, large_iters,
# large_warmup) per test; osu_bibw and osu_mbw_mr take the bandwidth counts.
OSU_DEFAULTS = {"lat": (10000, 100, 1000, 10), "bw": (100, 10, 20, 2),
                "bibw": (100, 10, 20, 2), "mbw": (100, 10, 20, 2)}


def osu_commands(mpirun: str, osu: str, plan: Plan, numactl: str | None
                 ) -> list[tuple[tuple[int, ...], list[str]]]:
    """The OSU program's launches, as (the plan's sizes it measures, line): one app context
    per rank, each wrapped in numactl. At OSU's own counts one launch without -i / -x, so
    every size gets OSU's defaults. Other counts: OSU's -i and -x set the small and the large
    messages' counts alike (osu_util.c: set_num_iterations, set_num_warmup), so the sizes up
    to 8 KiB and those above go in two launches, each with its own -i / -x."""
    counts = (plan.iters, plan.warmup, plan.large_iters, plan.large_warmup)
    small = tuple(s for s in plan.sizes if s <= LARGE)
    big = tuple(s for s in plan.sizes if s > LARGE)
    if counts == OSU_DEFAULTS[plan.test]:
        return [(plan.sizes, _osu_line(mpirun, osu, plan, numactl, plan.sizes, []))]
    out = []
    for sizes, it, warm in ((small, plan.iters, plan.warmup),
                            (big, plan.large_iters, plan.large_warmup)):
        if sizes:
            out.append((sizes, _osu_line(mpirun, osu, plan, numactl, sizes,
                                         ["-i", str(it), "-x", str(warm)])))
    return out


def _osu_line(mpirun: str, osu: str, plan: Plan, numactl: str | None,
              sizes: tuple[int, ...], counts: list[str]) -> list[str]:
    n = len(plan.ranks)
    args = [osu, "-m", f"{min(sizes)}:{max(sizes)}", *counts]
    if plan.test != "lat":
        args += ["-W", str(plan.window)]
    cmd = [mpirun, *launcher_flags(n, (), plan.pairs)]
    # OSU allocates with posix_memalign: system gives it the host's THP setting untouched;
    # thp asks glibc to madvise its large chunks (its tunable); none cannot be asked of OSU
    if plan.pages == "thp":
        cmd += ["-x", "GLIBC_TUNABLES=glibc.malloc.hugetlb=1"]
    for i, r in enumerate(plan.ranks):
        if i:
            cmd.append(":")
        cmd += ["-np", "1"]
        if plan.hosts:
            cmd += ["-H", plan.hosts[0] if i < plan.pairs else plan.hosts[1]]
        wrap = []
        if numactl and (r.cpus or r.node is not None):
            wrap = [numactl]
            if r.cpus:
                wrap.append(f"--physcpubind={format_cpulist(r.cpus)}")
            if r.node is not None:
                wrap.append(f"--membind={r.node}")
        cmd += wrap + args
    return cmd


# -- running ----------------------------------------------------------------------------------

@dataclass
class Launched:
    command: list[str]
    lines: list[dict[str, Any]]     # the JSON lines (numascope engine)
    stdout: str
    stderr: str
    seconds: float


_DEAD = (re.compile(r"Process name:\s*\[\[\d+,\d+\],(\d+)\]"),
         re.compile(r"process rank (\d+) with PID"),
         re.compile(r"^rank (\d+):", re.MULTILINE))


def failed_rank(text: str) -> int | None:
    """The rank mpirun (or the program) names as the one that failed first."""
    for pat in _DEAD:
        m = pat.search(text)
        if m:
            return int(m.group(1))
    return None


def _ours(token: str) -> list[int]:
    """Processes still carrying this launch's token in their environment (its ranks)."""
    pids = []
    needle = f"{TOKEN_VAR}={token}".encode()
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == os.getpid():
            continue
        try:
            env = (p / "environ").read_bytes()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            pids.append(int(p.name))
    return pids


def _kill(proc: subprocess.Popen, token: str) -> None:
    """mpirun's process group, then any rank of this launch left behind, by pid."""
    stop_group(proc, (3.0, 2.0))
    for pid in _ours(token):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def ignored_hooks(env: dict[str, str] | None = None) -> list[str]:
    """The fault hooks set in an environment whose test switch is off (they do nothing)."""
    env = os.environ if env is None else env
    if env.get(HOOKS_SWITCH, "") == HOOKS_ON:
        return []
    return [v for v in HOOK_VARS if env.get(v, "").strip()]


def _say_ignored(env: dict[str, str]) -> None:
    for var in ignored_hooks(env):
        if var not in _said:
            _said.add(var)
            print(f"numascope net: {var} is a test hook and is ignored ({HOOKS_SWITCH} is "
                  "not set)", file=sys.stderr, flush=True)


def launch(cmd: list[str], timeout: float, what: str, env: dict[str, str] | None = None
           ) -> Launched:
    """Run one launcher line; a timeout, a dead rank or a non-zero exit is MeasurementError
    naming the rank when mpirun says which, every process of the launch killed."""
    token = uuid.uuid4().hex
    e = dict(os.environ if env is None else env)
    _say_ignored(e)
    e[TOKEN_VAR] = token
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True, env=e,
                                start_new_session=True)
    except OSError as ex:
        raise Unavailable(f"cannot start {cmd[0]}: {ex}") from None
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc, token)
        out, err = proc.communicate()
        done = [json.loads(x) for x in _json_lines(out)]
        have = [d["rank"] for d in done if d.get("type") == "rank"]
        who = ("no rank reported in" if not have else
               f"ranks {','.join(map(str, have))} started; no result came")
        raise MeasurementError(f"{what}: mpirun timed out after {timeout:g} s ({who}); "
                               "every rank killed") from None
    except BaseException:
        _kill(proc, token)
        raise
    finally:
        if proc.poll() is None:
            _kill(proc, token)
    secs = time.monotonic() - t0
    if proc.returncode != 0:
        rank = failed_rank(err + "\n" + out)
        said = launcher_message(err)
        code = proc.returncode
        started = any(_kind(x) == "rank" for x in _json_lines(out))
        if rank is None and not started:      # no rank ever ran: the launch itself failed
            hosts = hosts_of(cmd)
            raise LaunchError(f"{what}: mpirun could not start the ranks"
                              + (f" on {', '.join(hosts)}" if hosts else "")
                              + f" (exit {code}" + (f": {said}" if said else "") + ")")
        who = f"rank {rank} failed" if rank is not None else "a rank failed"
        raise MeasurementError(f"{what}: {who} (mpirun exit {code}"
                               + (f": {said}" if said else "") + ")")
    lines = []
    for x in _json_lines(out):
        try:
            lines.append(json.loads(x))
        except json.JSONDecodeError:
            raise MeasurementError(f"{what}: unreadable output line {x[:80]!r}") from None
    return Launched(cmd, lines, out, err, secs)


def _kind(line: str) -> str | None:
    try:
        return json.loads(line).get("type")
    except (json.JSONDecodeError, AttributeError):
        return None


def hosts_of(cmd: list[str]) -> list[str]:
    """The hosts a launcher line names (-H/--host a,b; slots suffixes dropped)."""
    out: list[str] = []
    for flag, value in itertools.pairwise(cmd):
        if flag in ("-H", "--host", "-host"):
            out += [h.split(":")[0] for h in value.split(",") if h]
    return list(dict.fromkeys(out))


def launcher_message(err: str, limit: int = 300) -> str:
    """What mpirun said, in one line: the first of Open MPI's boxed messages (between
    "-----" rules: the cause; the last line is only "mpirun will now abort"), else its
    last line; a long one kept to its whole first sentences, never cut mid-word."""
    lines = [ln.strip() for ln in err.splitlines()]
    rules = [i for i, ln in enumerate(lines) if ln.startswith("-----")]
    if len(rules) >= 2:
        text = " ".join(ln for ln in lines[rules[0] + 1:rules[1]] if ln)
    else:
        text = next((ln for ln in lines[::-1] if ln), "")
    if len(text) <= limit:
        return text
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)", text) if m.end() <= limit]
    return text[:ends[-1]] if ends else text[:text.rfind(" ", 0, limit)].rstrip(",;:")


def _json_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith("{") and ln.endswith("}")]


# -- what came back ---------------------------------------------------------------------------

VALUE = {"lat": "usec", "bw": "mbps", "bibw": "mbps", "mbw": "mbps"}


def check_messages(test: str, window: int, pairs: int, iters: int) -> int:
    """How many messages the validation pass checks byte for byte per size: every message of
    the window, both ways for lat (ping and pong) and bibw, in every pair, `iters` times."""
    both = test in ("lat", "bibw")
    return iters * (1 if test == "lat" else window) * pairs * (2 if both else 1)


def reused_windows(test: str, buffers: str, pairs: int, iters: int) -> int:
    """How many windows into the one receive buffer the validation pass checks per size (one
    buffer per rank, window tests only): one per receiving rank and iteration."""
    if buffers != "same" or test == "lat":
        return 0
    return iters * pairs * (2 if test == "bibw" else 1)


def check_pass(line: dict[str, Any] | None, test: str, size: int, want: int, what: str,
               reused: int = 0) -> None:
    """The validation pass's line for one size: MeasurementError unless every one of the
    `want` messages arrived with every byte as sent (and the `reused` windows into the one
    receive buffer left the last message there intact)."""
    if line is None:
        raise MeasurementError(f"{what}: {test} {size} B: no validation pass")
    if line["messages"] != want or line["bytes"] != want * size:
        raise MeasurementError(f"{what}: {test} {size} B: validation pass checked "
                               f"{line['messages']} of {want} messages")
    if line.get("reused", 0) != reused:
        raise MeasurementError(f"{what}: {test} {size} B: validation pass checked "
                               f"{line.get('reused', 0)} of {reused} windows into the one "
                               "receive buffer")
    bad, bad_reused = line["bad"], line.get("bad_reused", 0)
    if bad or bad_reused:
        into = f" and {bad_reused} of {reused} windows into the one receive buffer" \
            if reused else ""
        raise MeasurementError(f"{what}: {test} {size} B: validation pass: {bad} of {want} "
                               f"messages{into} arrived different from what was sent (first "
                               f"wrong byte at offset {line['offset']})")


def check(plan: Plan, run: Launched, what: str) -> dict[str, Any]:
    """The program's lines validated: one result per size, positive and finite, the
    validation pass's every message counted and every byte intact, each rank on a CPU it
    was bound to.
    Returns {"ranks": [...], "results": {size: line}, "notes": [...]}; MeasurementError
    otherwise."""
    ranks = sorted((d for d in run.lines if d.get("type") == "rank"), key=lambda d: d["rank"])
    res = {d["size"]: d for d in run.lines if d.get("type") == "result"}
    checked = {d["size"]: d for d in run.lines if d.get("type") == "check"}
    n_checked = check_messages(plan.test, plan.window, plan.pairs, plan.check_iters)
    n_reused = reused_windows(plan.test, plan.buffers, plan.pairs, plan.check_iters)
    if len(ranks) != len(plan.ranks):
        raise MeasurementError(f"{what}: {len(ranks)} of {len(plan.ranks)} ranks reported")
    notes = []
    big = max(plan.sizes) * (plan.window if plan.buffers == "distinct" else 1) >= (2 << 20)
    for d, want in zip(ranks, plan.ranks):
        if plan.pages == "thp" and big and d.get("anon_huge_kb") == 0:
            notes.append(f"rank {d['rank']}: transparent huge pages were asked for but none "
                         "were given (see /sys/kernel/mm/transparent_hugepage/enabled)")
        if want.cpus and d["cpu"] not in want.cpus:
            raise MeasurementError(f"{what}: rank {d['rank']} ran on CPU {d['cpu']}, bound "
                                   f"to {format_cpulist(want.cpus)}")
        if want.node is not None:
            for key in ("send_node", "recv_node"):
                if d[key] >= 0 and d[key] != want.node:
                    notes.append(f"rank {d['rank']}'s {key.split('_')[0]} buffer is on node "
                                 f"{d[key]}, not {want.node}")
    for s in plan.sizes:
        r = res.get(s)
        if r is None:
            raise MeasurementError(f"{what}: no result for {s} B")
        v = r[VALUE[plan.test]]
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise MeasurementError(f"{what}: {s} B gave {v!r}, not a positive number")
        check_pass(checked.get(s), plan.test, s, n_checked, what, n_reused)
    done = next((d for d in run.lines if d.get("type") == "done"), None)
    if done is None:
        raise MeasurementError(f"{what}: the program did not finish")
    for i, (cpu, want) in enumerate(zip(done.get("cpu_end", []), plan.ranks)):
        if want.cpus and cpu not in want.cpus:
            raise MeasurementError(f"{what}: rank {i} ended on CPU {cpu}, bound to "
                                   f"{format_cpulist(want.cpus)}")
    return {"ranks": ranks, "results": res, "notes": notes}


_OSU_ROW = re.compile(r"^\s*(\d+)\s+([0-9.eE+-]+)(?:\s+([0-9.eE+-]+))?\s*$")


def parse_osu(text: str) -> dict[int, tuple[float, float | None]]:
    """An OSU program's table: {size: (first value, second value or None)} — latency in us,
    bandwidth in MB/s (10^6 B/s), osu_mbw_mr's MB/s and messages/s."""
    out = {}
    for ln in text.splitlines():
        if ln.lstrip().startswith("#"):
            continue
        m = _OSU_ROW.match(ln)
        if m:
            out[int(m.group(1))] = (float(m.group(2)),
                                    float(m.group(3)) if m.group(3) else None)
    return out


def check_osu(plan: Plan, table: dict[int, tuple[float, float | None]], what: str,
              sizes: tuple[int, ...] | None = None) -> dict[int, dict[str, Any]]:
    """OSU's rows for `sizes` (the plan's when None) as the program's result lines (nothing
    validated: OSU checks no data unless asked with -c)."""
    out = {}
    for s in plan.sizes if sizes is None else sizes:
        if s not in table:
            raise MeasurementError(f"{what}: OSU printed no row for {s} B")
        v, second = table[s]
        if not (math.isfinite(v) and v > 0):
            raise MeasurementError(f"{what}: OSU gave {v!r} for {s} B")
        key = VALUE[plan.test]
        row = {"test": plan.test, "size": s, key: v,
               "iters": plan.iters if s <= LARGE else plan.large_iters,
               "window": plan.window, "pairs": plan.pairs}
        if second is not None:
            row["msg_rate"] = second
        out[s] = row
    return out


# -- under the user's own launcher ------------------------------------------------------------

# a rank of mpirun (Open MPI), of srun --mpi=pmix / pmi2 (PMIx / PMI rank; the step's task
# count). Not SLURM_PROCID / SLURM_NTASKS alone: a batch script has them without being a rank.
_RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK")
_SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS")


def mpi_world(env: dict[str, str] | None = None) -> tuple[int, int] | None:
    """(rank, size) when this process is a rank of the user's mpirun / srun, else None."""
    e = os.environ if env is None else env
    rank = next((e[v] for v in _RANK_VARS if e.get(v, "").isdigit()), None)
    size = next((e[v] for v in _SIZE_VARS if e.get(v, "").isdigit()), None)
    if rank is None or size is None:
        return None
    return int(rank), int(size)


def sweep_command(exe: str, sizes: tuple[int, ...], lat_iters: int, bw_iters: int,
                  window: int, pages: str, buffers: str) -> list[str]:
    """The program's line when the user's launcher started us: one launch, the node sweep
    inside it (each rank can join the job once). The lat and bw iteration counts differ in
    the other modes; here one count serves both: the larger of bw's, the smaller of lat's."""
    it = max(1, min(lat_iters, max(bw_iters, lat_iters // 10)))
    large = max(1, it // 5)
    return [exe, "--sweep", "1", "--tests", "lat,bw", "--sizes", ",".join(map(str, sizes)),
            "--iters", str(it), "--warmup", str(max(1, it // 10)), "--large", str(LARGE),
            "--large-iters", str(large), "--large-warmup", str(max(1, large // 10)),
            "--window", str(window), "--pages", pages, "--buffers", buffers,
            "--check-iters", str(CHECK_ITERS)]


def run_child(cmd: list[str], timeout: float, what: str) -> Launched:
    """The program as a child of this rank (it joins the user's MPI job through the
    environment the launcher gave us); killed at the timeout."""
    _say_ignored(dict(os.environ))
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True)
    except OSError as ex:
        raise Unavailable(f"cannot start {cmd[0]}: {ex}") from None
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise MeasurementError(f"{what}: timed out after {timeout:g} s; the program was "
                               "killed") from None
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    if proc.returncode != 0:
        rank = failed_rank(err)
        last = next((ln.strip() for ln in err.splitlines()[::-1] if ln.strip()), "")
        who = f"rank {rank} failed" if rank is not None else "the program failed"
        raise MeasurementError(f"{what}: {who} (exit {proc.returncode}"
                               + (f": {last[:120]}" if last else "") + ")")
    lines = [json.loads(x) for x in _json_lines(out)]
    return Launched(cmd, lines, out, err, time.monotonic() - t0)


def check_sweep(run: Launched, sizes: tuple[int, ...], what: str, buffers: str
                ) -> dict[str, Any]:
    """The sweep's lines validated: {"hosts": [host line of rank 0, of rank 1],
    "steps": {(node_a, node_b): {"ranks": [...], "lat": {size: line}, "bw": {...}}}}."""
    hosts = sorted((d for d in run.lines if d.get("type") == "host"), key=lambda d: d["rank"])
    if len(hosts) != 2:
        raise MeasurementError(f"{what}: the program did not say where its 2 ranks run")
    steps: dict[tuple[int, int], dict[str, Any]] = {}
    for d in run.lines:
        if "node_a" not in d:
            continue
        st = steps.setdefault((d["node_a"], d["node_b"]),
                              {"ranks": [], "lat": {}, "bw": {}, "check": {}})
        if d["type"] == "rank":
            st["ranks"].append(d)
        elif d["type"] == "result":
            st[d["test"]][d["size"]] = d
        elif d["type"] == "check":
            st["check"][(d["test"], d["size"])] = d
    want = [(a, b) for a in hosts[0]["nodes"] for b in hosts[1]["nodes"]]
    if sorted(steps) != sorted(want):
        raise MeasurementError(f"{what}: {len(steps)} of {len(want)} node pairs reported")
    for (a, b), st in steps.items():
        w = f"{what} N{a}-N{b}"
        for d in st["ranks"]:
            if str(d["cpu"]) != d["bind_cpus"]:
                raise MeasurementError(f"{w}: rank {d['rank']} ran on CPU {d['cpu']}, bound "
                                       f"to {d['bind_cpus']}")
        for t in ("lat", "bw"):
            for s in sizes:
                r = st[t].get(s)
                if r is None:
                    raise MeasurementError(f"{w}: no {t} result for {s} B")
                v = r[VALUE[t]]
                if not (math.isfinite(v) and v > 0):
                    raise MeasurementError(f"{w}: {t} {s} B gave {v!r}")
                check_pass(st["check"].get((t, s)), t, s,
                           check_messages(t, r["window"], 1, CHECK_ITERS), w,
                           reused_windows(t, buffers, 1, CHECK_ITERS))
    if not any(d.get("type") == "done" for d in run.lines):
        raise MeasurementError(f"{what}: the program did not finish")
    return {"hosts": hosts, "steps": steps}
