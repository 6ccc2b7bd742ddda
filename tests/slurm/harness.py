"""A real single-host Slurm for tests: munged, slurmctld and slurmd (Debian's slurm-wlm
22.05 and munge) started as root on this machine from a temporary folder, torn down after.

    with MiniSlurm(tmp_path) as slurm:      # raises SlurmUnavailable(reason) if it cannot
        slurm.run(["srun", "-N1", "-n1", "hostname"])

Everything lives in the folder: slurm.conf, cgroup.conf, the munge key and socket, state,
spool, logs and pid files. Ports are picked free at start. Plugins are the ones that need
no cgroup hierarchy, database or accounting daemon (proctrack/linuxproc, task/affinity —
tasks are bound to CPUs as on a production cluster — accounting_storage/none), so it runs
in containers and small VMs. Only processes this
harness started are stopped (by their pid), SIGTERM then SIGKILL."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

START_TIMEOUT_S = 40.0


class SlurmUnavailable(Exception):
    """Slurm cannot run here; the message says which part and why."""


def _free_ports(n: int) -> list[int]:
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def _tail(p: Path, n: int = 6) -> str:
    try:
        lines = p.read_text(errors="replace").strip().splitlines()
    except OSError:
        return f"(no log at {p})"
    return " | ".join(lines[-n:])


class MiniSlurm:
    def __init__(self, folder: Path, cpus: int | None = None, task: str = "affinity",
                 extra: str = ""):
        self.dir = Path(folder)
        self.host = socket.gethostname().split(".")[0]
        self.cpus = cpus or os.cpu_count() or 1
        self.task = task          # Slurm's TaskPlugin: "affinity" binds tasks, "none" not
        self.extra = extra        # more slurm.conf lines (HealthCheckProgram=…, Prolog=…)
        self.procs: dict[str, subprocess.Popen] = {}
        self.conf = self.dir / "slurm.conf"
        self.sock = self.dir / "munge" / "munge.socket"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))

    # -- set-up --------------------------------------------------------------------------
    def check_tools(self) -> None:
        if os.geteuid() != 0:
            raise SlurmUnavailable("slurmd must run as root to launch jobs; tests run as "
                                   f"uid {os.geteuid()}")
        for tool in ("munged", "mungekey", "slurmctld", "slurmd", "srun", "sinfo"):
            if shutil.which(tool) is None:
                raise SlurmUnavailable(f"{tool} is not installed (scripts/install-system-deps"
                                       ".sh --slurm installs slurm-wlm and munge)")

    def write_config(self) -> None:
        d = self.dir
        for sub in ("munge", "state", "spool", "log", "run"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(d / "munge", 0o700)
        ctld, slurmd = _free_ports(2)
        self.conf.write_text(f"""\
ClusterName=numascopetest
SlurmctldHost={self.host}(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={self.sock}
CredType=cred/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/run/slurmctld.pid
SlurmdPidFile={d}/run/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/{self.task}
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName={self.host} NodeAddr=127.0.0.1 CPUs={self.cpus} State=UNKNOWN
PartitionName=test Nodes={self.host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
{self.extra}""")
        (d / "cgroup.conf").write_text("CgroupAutomount=no\nConstrainCores=no\n"
                                       "ConstrainRAMSpace=no\nConstrainDevices=no\n")
        key = d / "munge" / "munge.key"
        r = subprocess.run(["mungekey", "--create", f"--keyfile={key}"], check=False,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SlurmUnavailable(f"mungekey could not create a key: {r.stderr.strip()}")
        os.chmod(key, 0o400)

    def _start(self, name: str, argv: list[str]) -> None:
        with open(self.dir / "log" / f"{name}.out", "w") as log:   # the child keeps it
            self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                                env=self.env, start_new_session=True)

    def start(self) -> MiniSlurm:
        self.check_tools()
        self.write_config()
        d = self.dir
        self._start("munged", ["munged", "--foreground", "--force",
                               f"--key-file={d}/munge/munge.key", f"--socket={self.sock}",
                               f"--pid-file={d}/munge/munged.pid",
                               f"--seed-file={d}/munge/munge.seed",
                               f"--log-file={d}/log/munged.log"])
        self._wait(lambda: self.sock.exists(), "munged", "munged.out", 10)
        self._start("slurmctld", ["slurmctld", "-D", "-c", "-f", str(self.conf)])
        self._start("slurmd", ["slurmd", "-D", "-f", str(self.conf), "-N", self.host])
        self._wait(self._idle, "slurmctld/slurmd", "slurmd.log", START_TIMEOUT_S)
        return self

    def _idle(self) -> bool:
        r = subprocess.run(["sinfo", "-h", "-o", "%T"], check=False, capture_output=True,
                           text=True, env=self.env, timeout=10)
        return r.returncode == 0 and r.stdout.strip().rstrip("*") in ("idle", "mixed")

    def _wait(self, ok, what: str, log: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dead = [n for n, p in self.procs.items() if p.poll() is not None]
            if dead:
                n = dead[0]
                raise SlurmUnavailable(
                    f"{n} exited with status {self.procs[n].returncode} at start: "
                    f"{_tail(self.dir / 'log' / f'{n}.out')} {_tail(self.dir / 'log' / f'{n}.log')}")
            try:
                if ok():
                    return
            except (OSError, subprocess.SubprocessError):
                pass
            time.sleep(0.3)
        raise SlurmUnavailable(f"{what} not ready after {timeout:g} s: "
                               f"{_tail(self.dir / 'log' / log)}")

    # -- use -----------------------------------------------------------------------------
    def run(self, argv: list[str], env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(argv, check=False, capture_output=True, text=True,
                              timeout=timeout, env={**self.env, **(env or {})})

    # -- tear-down -----------------------------------------------------------------------
    def stop(self) -> None:
        for name in ("slurmd", "slurmctld", "munged"):
            p = self.procs.pop(name, None)
            if p is None or p.poll() is not None:
                continue
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=5)

    def __enter__(self) -> MiniSlurm:  # noqa: PYI034
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()
