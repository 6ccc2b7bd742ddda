"""Boot a QEMU guest with a given NUMA layout and run numascope commands inside it.

The guest is a Debian kernel from /boot (the distribution's, < 6.9, unless a guest asks for a
newer one: WEIGHTED_KERNEL) booted by virtme-ng (`vng`) over the host's root
file system (9p, read-only), so the work tree, its .venv and the C core built on the host
are visible inside. QEMU runs without KVM (TCG: software emulation): its speeds mean
nothing, but the kernel's NUMA nodes, distances, CPU-less nodes, memory policies and page
placement are real. One boot runs every command of a guest (guest_driver.py); results come
back through a shared read-write directory.

    shape = Shape("2s4n", sockets=2, cpu_nodes=(0, 1, 2, 3), node_mib=(256,) * 4,
                  distances={(0, 1): 12, (2, 3): 12}, default_distance=32)
    run = boot(shape, [Step("topo", ["topo", "--json"])], workdir)
    run.step("topo").rc, run.step("topo").json(), run.step("topo").events
    boot(shape, steps, workdir, kernel=newer_kernel(), setup="echo 3 > /sys/...")
"""

from __future__ import annotations

import compileall
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


@dataclass(frozen=True)
class Shape:
    """A guest's NUMA layout. CPU i (in QEMU's socket-major, core order) sits on node
    cpu_nodes[i]; sockets split the CPUs evenly; nodes without CPUs are memory only."""

    name: str
    sockets: int
    cpu_nodes: tuple[int, ...]
    node_mib: tuple[int, ...]
    distances: dict[tuple[int, int], int] = field(default_factory=dict)
    default_distance: int = 20          # any pair of different nodes not in `distances`
    # Pin each socket's vCPU threads to one host CPU (socket s: the host's s-th usable CPU,
    # cyclically): under TCG a vCPU's loads and stores run at its host thread's speed, so
    # vCPUs sharing a host CPU share its throughput, as a real socket's cores share its
    # memory bandwidth. Its nodes' RAM is faulted in at start, on huge pages where the host
    # has them. The guest's script waits until the pinning is done (pin_vcpus).
    pin_sockets: bool = False

    @property
    def cpus(self) -> int:
        return len(self.cpu_nodes)

    def cpu_socket(self, cpu: int) -> int:
        return cpu // (self.cpus // self.sockets)

    def node_cpus(self, node: int) -> list[int]:
        return [c for c, n in enumerate(self.cpu_nodes) if n == node]

    def distance(self, a: int, b: int) -> int:
        if a == b:
            return 10
        return self.distances.get((a, b)) or self.distances.get((b, a)) or \
            self.default_distance

    def qemu_opts(self) -> list[str]:
        cores = self.cpus // self.sockets
        opts = ["-smp", f"{self.cpus},sockets={self.sockets},cores={cores},threads=1"]
        for n, mib in enumerate(self.node_mib):
            # pinned guests fault their RAM in at start (prealloc): QEMU asks for huge pages
            # on it, and a node whose pages the host backs with them runs TCG's loads and
            # stores faster than one it backs with 4 KiB pages (one boot had 40-60 % of
            # each node huge and the nodes 2.35x apart)
            pre = ",prealloc=on" if self.pin_sockets else ""
            opts += ["-object", f"memory-backend-ram,id=m{n},size={mib}M{pre}",
                     "-numa", f"node,nodeid={n},memdev=m{n}"]
        for c, n in enumerate(self.cpu_nodes):
            where = f"socket-id={self.cpu_socket(c)},core-id={c % cores},thread-id=0"
            opts += ["-numa", f"cpu,node-id={n},{where}"]
        for a in range(len(self.node_mib)):
            for b in range(a + 1, len(self.node_mib)):
                opts += ["-numa", f"dist,src={a},dst={b},val={self.distance(a, b)}"]
        return opts


@dataclass(frozen=True)
class Step:
    name: str
    argv: list[str]


@dataclass
class StepResult:
    name: str
    argv: list[str]
    rc: int | str
    seconds: float
    stdout: str
    stderr: str
    events: list[dict[str, Any]]

    def json(self) -> Any:
        return json.loads(self.stdout)

    def buffers(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["ev"] == "buffer"]


@dataclass
class GuestRun:
    shape: Shape
    kernel: str               # the guest kernel's release, e.g. 6.1.0-56-amd64
    boot_seconds: float       # guest uptime when its script started
    total_seconds: float      # host wall clock, vng start to exit
    steps: dict[str, StepResult]
    workdir: Path
    # host CPUs' worth of time other processes than this guest's used while it ran
    # (Shape.pin_sockets guests only; None otherwise)
    foreign_cpus: float | None = None

    def step(self, name: str) -> StepResult:
        return self.steps[name]


WEIGHTED_KERNEL = (6, 9)     # MPOL_WEIGHTED_INTERLEAVE and mempolicy/weighted_interleave/


def kernel_version(release: str) -> tuple[int, int]:
    """"6.12.117+deb12-amd64" -> (6, 12)."""
    parts = [int("".join(ch for ch in p if ch.isdigit()) or 0)
             for p in release.replace("-", ".").replace("+", ".").split(".")[:2]]
    return (parts + [0, 0])[0], (parts + [0, 0])[1]


def find_kernel(at_least: tuple[int, int] | None = None,
                below: tuple[int, int] | None = None) -> tuple[Path, str] | None:
    """The newest /boot/vmlinuz-* whose modules include 9p (virtme-ng's root file system),
    its version within [at_least, below) when given."""
    found = []
    for img in Path("/boot").glob("vmlinuz-*"):
        ver = img.name[len("vmlinuz-"):]
        fs9p = Path("/lib/modules") / ver / "kernel" / "fs" / "9p"
        v = kernel_version(ver)
        if (at_least and v < at_least) or (below and v >= below):
            continue
        if img.is_file() and os.access(img, os.R_OK) and fs9p.is_dir():
            found.append((img, ver))
    return max(found, key=lambda iv: [int(x) if x.isdigit() else 0
                                      for x in iv[1].replace("-", ".").replace("+", ".")
                                      .split(".")],
               default=None)


def default_kernel() -> tuple[Path, str] | None:
    """The kernel most guests boot: the newest one older than WEIGHTED_KERNEL (the
    distribution's own, on which the tests were written; its lack of weighted interleave is
    itself checked), else the newest there is."""
    return find_kernel(below=WEIGHTED_KERNEL) or find_kernel()


def newer_kernel() -> tuple[Path, str] | None:
    """A kernel with MPOL_WEIGHTED_INTERLEAVE (>= 6.9), for the guests that check it."""
    return find_kernel(at_least=WEIGHTED_KERNEL)


def missing_newer() -> str | None:
    """Why a guest with a kernel >= 6.9 cannot boot here (None when it can)."""
    if newer_kernel() is None:
        return ("no /boot/vmlinuz-* >= 6.9 with its modules (Debian bookworm: "
                "scripts/install-system-deps.sh --vm installs linux-image-6.12.*-amd64 from "
                "bookworm-backports; it could not here, or was not run)")
    return None


def _vng() -> str | None:
    local = Path(sys.executable).parent / "vng"
    return str(local) if local.exists() else shutil.which("vng")


def missing() -> str | None:
    """Why guests cannot boot here (None when they can)."""
    if not shutil.which("qemu-system-x86_64"):
        return "qemu-system-x86_64 not found (Debian: qemu-system-x86)"
    if not _vng():
        return "vng not found (pip: virtme-ng, part of the test extra)"
    if not shutil.which("busybox"):
        return "busybox not found (Debian: busybox-static; virtme-ng builds its initramfs " \
               "with it)"
    if default_kernel() is None:
        return "no /boot/vmlinuz-* with its modules in /lib/modules (Debian: linux-image-amd64)"
    if not shutil.which("gcc"):
        return "gcc not found (the placement witness is compiled for the guest)"
    return None


GUEST_LOCAL = "/dev/shm/numascope"   # guest tmpfs: SQLite's WAL mode cannot work over 9p

# Modules udev would load for QEMU's emulated chipset, CPU and crypto: under TCG their
# probing and self-tests take most of the boot, and nothing here needs them.
SLOW_MODULES = ("kvm,kvm_amd,kvm_intel,irqbypass,crc32_pclmul,crc32c_intel,crct10dif_pclmul,"
                "ghash_clmulni_intel,sha512_ssse3,sha256_ssse3,sha1_ssse3,aesni_intel,"
                "crypto_simd,cryptd,polyval_clmulni,sr_mod,cdrom,sg,iTCO_wdt,intel_pmc_bxt,"
                "iTCO_vendor_support,ahci,libahci,libata,evdev,i2c_i801,i2c_smbus,psmouse,"
                "pcspkr,serio_raw,lpc_ich,i6300esb,button,joydev,powernow_k8,edac_mce_amd,"
                "qemu_fw_cfg")


def matplotlib_cache(dest: Path) -> Path:
    """A matplotlib config dir holding the host's font cache: building it under TCG takes
    a minute, and the guest's view of the host's cache dir is read-only."""
    import matplotlib
    import matplotlib.font_manager  # builds the host's cache when missing
    d = dest / "mpl"
    d.mkdir(exist_ok=True)
    for f in Path(matplotlib.get_cachedir()).glob("fontlist-*.json"):
        shutil.copy(f, d)
    return d


def build_witness(dest: Path) -> Path:
    so = dest / "witness.so"
    subprocess.run(["gcc", "-O2", "-Wall", "-shared", "-fPIC", "-o", str(so),
                    str(HERE / "witness.c"), "-ldl", "-lpthread"], check=True)
    return so


def prebuild_net(home: Path) -> None:
    """numascope's MPI program built here into the cache the guest will look in (its HOME
    is the work dir): mpicc under TCG takes 20 s. Nothing when MPI is not installed."""
    from numascope.families.interconnect import launch
    mpicc = launch.which("mpicc")
    if mpicc is None:
        return
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(home / ".cache")
    try:
        launch.build(mpicc)
    finally:
        if old is None:
            del os.environ["XDG_CACHE_HOME"]
        else:
            os.environ["XDG_CACHE_HOME"] = old


def core_path() -> str:
    """The C core the host built (importing it rebuilds it first when sources changed)."""
    from numascope import _core
    return str(Path(_core.__file__).resolve())


def host_cpu_of_socket(shape: Shape) -> dict[int, int]:
    """Socket -> the host CPU its vCPU threads are pinned to (Shape.pin_sockets)."""
    hosts = sorted(os.sched_getaffinity(0))
    return {s: hosts[s % len(hosts)] for s in range(shape.sockets)}


def pin_vcpus(shape: Shape, sock: Path, done: Path, timeout: float = 120.0) -> None:
    """Connect to QEMU's QMP socket as soon as it listens, find each vCPU's host thread
    (query-cpus-fast) and pin it to its socket's host CPU; write `done` (JSON: vCPU ->
    host CPU) for the guest's script, which waits for it. An error is written there too
    (the guest then stops with it)."""
    import socket as _socket
    t0 = time.monotonic()
    try:
        while True:
            try:
                conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
                conn.connect(str(sock))
                break
            except OSError:
                conn.close()
                if time.monotonic() - t0 > timeout:
                    raise RuntimeError(f"QEMU's QMP socket {sock} never answered") from None
                time.sleep(0.05)
        with conn, conn.makefile("rw") as f:
            f.readline()                                   # the greeting
            for cmd in ("qmp_capabilities", "query-cpus-fast"):
                f.write(json.dumps({"execute": cmd}) + "\n")
                f.flush()
                while True:                                # skip asynchronous events
                    reply = json.loads(f.readline())
                    if "return" in reply or "error" in reply:
                        break
            if "error" in reply:
                raise RuntimeError(f"QMP query-cpus-fast: {reply['error']}")
        threads = {cpu["cpu-index"]: cpu["thread-id"] for cpu in reply["return"]}
        if len(threads) != shape.cpus or len(set(threads.values())) < shape.cpus:
            raise RuntimeError(f"QEMU runs {len(threads)} vCPUs on "
                               f"{len(set(threads.values()))} threads, not {shape.cpus}: "
                               "no per-vCPU thread to pin (single-threaded TCG)")
        host = host_cpu_of_socket(shape)
        pinned = {}
        for cpu, tid in threads.items():
            pinned[cpu] = host[shape.cpu_socket(cpu)]
            os.sched_setaffinity(tid, {pinned[cpu]})
        done.write_text(json.dumps({"pinned": pinned, "threads": threads}))
    except Exception as e:   # noqa: BLE001  (said to the guest, which stops on it)
        done.write_text(json.dumps({"error": f"{type(e).__name__}: {e}"}))


def _jiffies() -> tuple[int, dict[int, int]]:
    """(busy jiffies of all CPUs, {session id: jiffies of its live processes})."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    busy = sum(v) - v[3] - (v[4] if len(v) > 4 else 0)        # less idle and iowait
    by_session: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                st = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            by_session[int(st[3])] = by_session.get(int(st[3]), 0) + int(st[11]) + int(st[12])
    return busy, by_session


# A guest's time limits follow its own progress, not one wall time tuned on a fast host
# (TCG on a slower core, or beside other guests, takes twice as long and is not stuck):
BOOT_S = 300.0     # from vng's start (the boot lock held) to our script's first line
STALL_S = 300.0    # then: no step begun, no byte of output, no placement event for this long
CAP_S = 3600.0     # never longer in all (a guest that "progresses" forever is stuck too)
# Guests boot one at a time across the suite's workers (the kernel's boot under TCG takes
# a host CPU for 30-60 s; two at once on 2 CPUs starve the tests beside them and each
# other): an flock on this file, held from vng's start until our script runs in the guest.
BOOT_LOCK = Path(tempfile.gettempdir()) / "numascope-guest-boot.lock"


def progress(workdir: Path) -> tuple[bool, int, int]:
    """What the guest has shown so far: our script started (its uptime file), the steps
    begun (the driver's "--- step" lines in stacks.log; its stack samples every 60 s are
    not progress: a hung step prints the same stack), and the bytes the steps, the driver
    and the placement witness have written."""
    started = (workdir / "uptime").exists()
    steps = 0
    try:
        steps = sum(line.startswith("--- step ")
                    for line in (workdir / "stacks.log").read_text(errors="replace")
                    .splitlines())
    except OSError:
        pass
    size = 0
    for f in workdir.iterdir():
        if f.suffix in (".out", ".err") or f.name in ("witness.log", "driver.log",
                                                      "setup.log", "result.json"):
            try:
                size += f.stat().st_size
            except OSError:
                pass
    return started, steps, size


class Watchdog:
    """Decides, once a second, whether a boot has gone too long without progress; says
    why when it has (None while it may go on)."""

    def __init__(self, workdir: Path, boot_s: float = BOOT_S, stall_s: float = STALL_S,
                 cap_s: float = CAP_S):
        self.workdir, self.boot_s, self.stall_s, self.cap_s = workdir, boot_s, stall_s, cap_s
        self.t0 = self.changed = time.monotonic()
        self.last = progress(workdir)
        self.started_at: float | None = None

    def verdict(self, now: float | None = None) -> str | None:
        now = time.monotonic() if now is None else now
        seen = progress(self.workdir)
        if seen != self.last:
            self.last, self.changed = seen, now
        if seen[0] and self.started_at is None:
            self.started_at = now
        if now - self.t0 > self.cap_s:
            return f"still running after {self.cap_s:.0f} s in all (the cap)"
        if self.started_at is None:
            if now - self.t0 > self.boot_s:
                return (f"its kernel did not reach our script within {self.boot_s:.0f} s "
                        "(the boot limit)")
            return None
        if now - self.changed > self.stall_s:
            return (f"no progress for {self.stall_s:.0f} s after {seen[1]} step(s) begun "
                    f"(the stall limit: no new step, output or placement event)")
        return None


class _BootLock:
    """The suite-wide boot lock (BOOT_LOCK), released once our script runs in the guest."""

    def __init__(self):
        import fcntl
        self._fcntl = fcntl
        self.f = open(BOOT_LOCK, "a+")          # noqa: SIM115 - held across the boot
        self.waited = time.monotonic()
        fcntl.flock(self.f, fcntl.LOCK_EX)
        self.waited = time.monotonic() - self.waited

    def release(self) -> None:
        if not self.f.closed:
            self._fcntl.flock(self.f, self._fcntl.LOCK_UN)
            self.f.close()


def _run_vng(cmd: list[str], env: dict, workdir: Path, foreign: list[float] | None = None,
             limits: dict[str, float] | None = None, before=None) -> tuple[int, str | None]:
    """One boot; its console (kernel log and our script's stray output) in console.log.
    Killed when the Watchdog says so (its reason returned with the exit status). `foreign`
    (when given) gets the host CPUs' worth of time processes outside the boot's session
    used while it ran, sampled every second (a process's time is counted while it lives:
    the first and last second are approximate). `before` is called once the boot lock is
    held, just before vng starts (the vCPU pinning's thread: its wait for QEMU's socket
    must not run while another guest boots)."""
    lock = _BootLock()
    if before is not None:
        before()
    with open(workdir / "console.log", "wb") as console:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=console,
                                stderr=subprocess.STDOUT, env=env, cwd=workdir,
                                start_new_session=True)
        dog = Watchdog(workdir, **(limits or {}))
        t0 = time.monotonic()
        prev, ours, total, why = _jiffies() if foreign is not None else None, 0, 0, None
        try:
            while proc.poll() is None:
                try:
                    proc.wait(timeout=1.0)
                except subprocess.TimeoutExpired:
                    pass
                if dog.started_at is not None:
                    lock.release()
                if prev is not None:
                    now = _jiffies()
                    total += now[0] - prev[0]
                    ours += max(0, now[1].get(proc.pid, 0) - prev[1].get(proc.pid, 0))
                    prev = now
                why = dog.verdict() if proc.poll() is None else None
                if why:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    break
        finally:
            lock.release()
        if foreign is not None:
            hz = os.sysconf("SC_CLK_TCK")
            foreign.append(max(0, total - ours) / hz / max(time.monotonic() - t0, 1e-9))
    return proc.returncode, why


# The host's root, read-only, a second time under a tag of our own, which the guest mounts
# with 9p's page and attribute cache (cache=loose): vng's root is mounted uncached, so every
# stat and open of Python's imports is a round trip through TCG's virtio. numascope runs
# chrooted in that view, the guest's /proc, /sys, /dev and the work dir bound into it, /tmp
# a tmpfs. Importing numpy, scipy and matplotlib took ~45 % less time in a test boot. The
# tree does not change while a guest runs, so nothing cached goes stale; the work dir, where
# results are written, is vng's own uncached mount. Where the mount fails, no chroot.
CACHED_ROOT_TAG = "nshostro"
CACHED_ROOT_OPTS = ["-virtfs", (f"local,path=/,mount_tag={CACHED_ROOT_TAG},"
                                "security_model=none,readonly=on,multidevs=remap")]


def cached_root(workdir: Path) -> str:
    """Guest shell: mount the cached view and define run_here, which runs its arguments in
    it (in the work dir), or as they are where the view could not be made."""
    r = "/run/nsroot"
    return f"""run_here() {{ "$@"; }}
mkdir -p {r}
if mount -t 9p -o trans=virtio,version=9p2000.L,access=any,msize=524288,cache=loose,ro \\
        {CACHED_ROOT_TAG} {r} 2>> {workdir}/setup.log \\
   && mount --rbind /proc {r}/proc && mount --rbind /sys {r}/sys \\
   && mount --rbind /dev {r}/dev && mount -t tmpfs tmpfs {r}/tmp \\
   && mkdir -p {r}{workdir} && mount --bind {workdir} {r}{workdir} \\
   && [ -x {r}{sys.executable} ]; then
    run_here() {{ chroot {r} /bin/sh -c 'cd "$0" && exec "$@"' {workdir} "$@"; }}
    echo "cached root at {r}" >> {workdir}/setup.log
fi"""


def boot(shape: Shape, steps: list[Step], workdir: Path,
         collect: tuple[str, ...] = (), kernel: tuple[Path, str] | None = None,
         setup: str = "", limits: dict[str, float] | None = None) -> GuestRun:
    """Boot `shape`, run `steps` in one numascope process inside, return what they did.
    Files named in `collect` (paths inside the guest) are copied into `workdir` at the end.
    `kernel` is a (vmlinuz, release) pair (default_kernel() when None); `setup` is shell
    run as root in the guest, in `workdir`, before numascope (its output: setup.log).
    `limits` overrides the Watchdog's (boot_s, stall_s, cap_s). Raises RuntimeError (with
    the console's tail and why the guest was stopped) when it produced no result."""
    reason = missing()
    if reason:
        raise RuntimeError(reason)
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    # the guest reads the host's tree read-only: bytecode compiled here, once, or the guest
    # compiles every module numascope imports again (~130 modules, seconds under TCG)
    compileall.compile_dir(str(REPO / "src"), quiet=1)
    kernel, release = kernel or default_kernel()  # type: ignore[misc]
    job = {"src": str(REPO / "src"), "core": core_path(),
           "witness": str(build_witness(workdir)),
           "steps": [{"name": s.name, "argv": s.argv} for s in steps],
           "collect": list(collect), "profile": bool(os.environ.get("NUMASCOPE_GUEST_PROFILE"))}
    (workdir / "job.json").write_text(json.dumps(job))
    prebuild_net(workdir)
    script = workdir / "guest.sh"
    setup_lines = f"(\n{setup}\n) > {workdir}/setup.log 2>&1\n" if setup else ""
    qemu_opts = shape.qemu_opts() + CACHED_ROOT_OPTS
    pinned = workdir / "pinned.json"
    if shape.pin_sockets:
        # a short path: a unix socket's name is limited to 107 bytes
        qmp_dir = Path(tempfile.mkdtemp(prefix="ns-qmp-"))
        qmp = qmp_dir / "qmp.sock"
        qemu_opts += ["-qmp", f"unix:{qmp},server=on,wait=off"]
        setup_lines = (f"for i in $(seq 1200); do [ -s {pinned} ] && break; sleep 0.1; done\n"
                       + setup_lines)
    script.write_text(f"""#!/bin/bash
cut -d' ' -f1 /proc/uptime > {workdir}/uptime
echo 0 > /proc/sys/kernel/numa_balancing 2>/dev/null  # no page migration behind our back
mkdir -p {GUEST_LOCAL}
cd {workdir}
export PYTHONDONTWRITEBYTECODE=1 HOME={workdir} NUMASCOPE_STORE={GUEST_LOCAL}/runs.db \\
       NUMA_WITNESS_LOG={workdir}/witness.log MPLCONFIGDIR={matplotlib_cache(workdir)} \\
       MPLBACKEND=Agg
{setup_lines}{cached_root(workdir)}
run_here env LD_PRELOAD={workdir}/witness.so {sys.executable} {HERE / 'guest_driver.py'} \\
    {workdir}/job.json > {workdir}/driver.log 2>&1
echo $? > {workdir}/driver.rc
""")
    cmd = [_vng(), "--run", str(kernel), "--disable-kvm", "--force-9p", "--verbose",
           "--cpus", str(shape.cpus), "--memory", f"{sum(shape.node_mib)}M",
           "--rwdir", str(workdir), "--append",
           f"modprobe.blacklist={SLOW_MODULES} module_blacklist={SLOW_MODULES}", "--qemu-opts", " ".join(qemu_opts),
           "--exec", f"bash {script}"]
    env = {**os.environ, "PATH": f"{Path(cmd[0]).parent}{os.pathsep}{os.environ['PATH']}"}
    t0 = time.monotonic()
    result = workdir / "result.json"
    # A guest that dies before our script starts (no uptime file: vng exits 255, e.g. a
    # kernel that never came up under TCG on a loaded host) is the emulator's failure,
    # not numascope's: boot it once more. Once the script ran, nothing is retried.
    for attempt in (1, 2):
        foreign: list[float] | None = None
        before = None
        if shape.pin_sockets:       # pinned, and the host's other work accounted
            pinned.unlink(missing_ok=True)
            qmp.unlink(missing_ok=True)

            def before() -> None:
                threading.Thread(target=pin_vcpus, args=(shape, qmp, pinned),
                                 daemon=True).start()
            foreign = []
        rc, why = _run_vng(cmd, env, workdir, foreign, limits, before)
        if result.exists() or (workdir / "uptime").exists() or attempt == 2:
            break
        (workdir / "console.log").rename(workdir / "console-boot1.log")
        print(f"guest {shape.name}: the kernel never reached our script (vng exit {rc}); "
              f"booting once more (first console: {workdir / 'console-boot1.log'})")
    total = time.monotonic() - t0
    if shape.pin_sockets:
        shutil.rmtree(qmp_dir, ignore_errors=True)
        got = json.loads(pinned.read_text()) if pinned.exists() and pinned.stat().st_size \
            else {"error": "the vCPUs were never pinned"}
        if "error" in got:
            raise RuntimeError(f"guest {shape.name}: {got['error']}")
    if not result.exists():
        tail = (workdir / "console.log").read_text(errors="replace")[-3000:]
        driver = workdir / "driver.log"
        if driver.exists():
            tail += "\n--- driver.log ---\n" + driver.read_text(errors="replace")[-3000:]
        stopped = f"; stopped: {why}" if why else ""
        raise RuntimeError(f"guest {shape.name} gave no result after {total:.0f} s "
                           f"(vng exit {rc}{stopped}):\n{tail}")
    data = json.loads(result.read_text())
    uptime = workdir / "uptime"
    boot_s = float(uptime.read_text()) if uptime.exists() else data["uptime_at_start"]
    return GuestRun(shape, release, boot_s, total,
                    {s["name"]: StepResult(**s) for s in data["steps"]}, workdir,
                    foreign[0] if foreign else None)
