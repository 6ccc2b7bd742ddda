"""The health-check integrations of scripts/integrations (Slurm HealthCheckProgram, Prolog,
LBNL NHC) fail closed: each run as slurmd runs it (no PATH of the caller: `env -i` with
slurmd's PATH, numascope by its absolute path from the settings file) on real node stores
— a run within the baseline, one out of it, one the check cannot judge (exit 5), a store
with no run (exit 2), numascope missing (127) — and, where a single-host Slurm can start
here, by slurmd itself as its HealthCheckProgram (draining the node with the one line) and
its Prolog."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fleet_synth import fleet, node

from numascope.cli import main
from numascope.results.store import Store

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts" / "integrations"
HEALTH, PROLOG, NHC = (SCRIPTS / n for n in ("numascope-health", "numascope-prolog",
                                             "numascope.nhc"))
NUMASCOPE = Path(sys.executable).parent / "numascope"
SLURMD_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
BW = "bandwidth/triad compact 96T/bandwidth"


def _save(path: Path, runs) -> None:
    with Store.open(path, write=True) as st:
        for r in runs:
            st.save_run(r)


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, Path]:
    """Node-local stores, each with the baseline copied in by `fleet baseline copy` and
    one node run: ok, out (bandwidth halved), unsure (a baseline of 2 nodes), empty (no
    run)."""
    if not NUMASCOPE.exists():
        pytest.skip(f"no numascope executable next to {sys.executable}")
    d = tmp_path_factory.mktemp("stores")
    fleet_db, small_db = d / "fleet.db", d / "small.db"
    _save(fleet_db, fleet(10, {}, seed=41, fleet_id="b", spread=(0.01, 0.02)))
    _save(small_db, fleet(2, {}, seed=42, fleet_id="s", spread=(0.01, 0.02)))
    assert main(["fleet", "baseline", "save", "gold", "--store", str(fleet_db)]) == 0
    assert main(["fleet", "baseline", "save", "gold", "--allow-small", "--store",
                 str(small_db)]) == 0
    rng = random.Random(43)
    out = {}
    for name, src, factors in (("ok", fleet_db, {}), ("out", fleet_db, {BW: 0.5}),
                               ("unsure", small_db, {}), ("empty", fleet_db, None)):
        out[name] = d / f"{name}.db"
        assert main(["fleet", "baseline", "copy", "gold", "--store", str(src), "--to",
                     str(out[name])]) == 0
        if factors is not None:
            _save(out[name], [node("vm1", "node", factors, rng=rng)])
    return out


def _conf(tmp_path: Path, store: Path, real_scontrol: bool = False, **more: str) -> Path:
    """The settings file the scripts read; unless `real_scontrol`, with a scontrol that
    records its arguments in tmp_path/drained."""
    settings = {"NUMASCOPE_BIN": str(NUMASCOPE), "NUMASCOPE_STORE": str(store),
                "NUMASCOPE_HOST": "vm1"}      # the stores' node run's host
    if not real_scontrol:
        scontrol = tmp_path / "scontrol"
        scontrol.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {tmp_path}/drained\n")
        scontrol.chmod(0o755)
        settings["NUMASCOPE_SCONTROL"] = str(scontrol)
    settings.update(more)
    conf = tmp_path / "numascope.conf"
    # replaced whole: slurmd's health check (every 2 s) reading a half-written file would
    # see no NUMASCOPE_BIN and drain for the default path's absence
    part = tmp_path / "numascope.conf.part"
    part.write_text("".join(f"{k}='{v}'\n" for k, v in settings.items()))
    os.replace(part, conf)
    return conf


def _slurmd_env(conf: Path, **more: str) -> list[str]:
    """`env -i` as slurmd runs a HealthCheckProgram: slurmd's PATH, the node's name."""
    return ["env", "-i", f"PATH={SLURMD_PATH}", "SLURMD_NODENAME=node7",
            f"NUMASCOPE_CONF={conf}", *(f"{k}={v}" for k, v in more.items())]


def _health(tmp_path: Path, store: Path, script: Path = HEALTH, **settings: str):
    conf = _conf(tmp_path, store, **settings)
    p = subprocess.run([*_slurmd_env(conf), str(script)], capture_output=True, text=True,
                       timeout=120, check=False)
    drained = tmp_path / "drained"
    return p, (drained.read_text().splitlines() if drained.exists() else None)


def test_health_within_the_baseline_is_healthy_and_drains_nothing(stores, tmp_path):
    p, drained = _health(tmp_path, stores["ok"])
    assert p.returncode == 0, p.stderr
    assert drained is None and p.stderr == ""


def test_health_out_of_the_baseline_drains_with_the_one_line(stores, tmp_path):
    p, drained = _health(tmp_path, stores["out"])
    assert p.returncode == 1
    assert drained[:2] == ["update", "nodename=node7"] and drained[2] == "state=drain"
    reason = drained[3].removeprefix("reason=")
    assert reason.startswith("numascope: out of baseline gold: vm1") and BW in reason
    assert "\n" not in reason and len(reason) <= 200
    assert p.stderr.strip() == reason           # the line logged too


@pytest.mark.parametrize("unknown", [None, "drain", "ok"])
def test_health_inconclusive_follows_numascope_unknown(stores, tmp_path, unknown):
    more = {"NUMASCOPE_UNKNOWN": unknown} if unknown else {}
    p, drained = _health(tmp_path, stores["unsure"], **more)
    assert "numascope: inconclusive against baseline gold" in p.stderr
    assert "too few to judge" in p.stderr
    if unknown == "ok":
        assert p.returncode == 0 and drained is None
    else:                                       # the default drains: it fails closed
        assert p.returncode == 1 and drained[3].startswith(
            "reason=numascope: inconclusive against baseline gold")


def test_health_a_numascope_error_drains(stores, tmp_path):
    p, drained = _health(tmp_path, tmp_path / "none.db")     # no store: numascope exits 2
    assert p.returncode == 1
    assert drained[3].startswith("reason=numascope: fleet check failed (exit 2): no store at")


def test_health_no_run_of_this_host_is_not_healthy(stores, tmp_path):
    """A store with the baseline but no run of this host (freshly copied, or the node's run
    never stored): the check cannot judge (exit 5), never a pass on another host's run."""
    p, drained = _health(tmp_path, stores["empty"])
    assert p.returncode == 1
    assert drained[3].startswith("reason=numascope: inconclusive against baseline gold:")
    assert "no run of host vm1" in drained[3]


def test_health_numascope_missing_drains(stores, tmp_path):
    p, drained = _health(tmp_path, stores["ok"], NUMASCOPE_BIN="/nonexistent/numascope")
    assert p.returncode == 1
    assert drained[3] == "reason=numascope: cannot run /nonexistent/numascope (exit 127)"


def test_health_a_check_that_hangs_drains(stores, tmp_path):
    hang = tmp_path / "hang"
    hang.write_text("#!/bin/sh\nexec sleep 60\n")
    hang.chmod(0o755)
    p, drained = _health(tmp_path, stores["ok"], NUMASCOPE_BIN=str(hang),
                         NUMASCOPE_TIMEOUT="1")
    assert p.returncode == 1
    assert drained[3] == "reason=numascope: fleet check took over 1 s"


def test_health_a_relative_numascope_or_a_broken_settings_file_drains(stores, tmp_path):
    p, drained = _health(tmp_path, stores["ok"], NUMASCOPE_BIN="numascope")
    assert p.returncode == 1 and "is not an absolute path" in drained[3]
    p, drained = _health(tmp_path, stores["ok"], NUMASCOPE_UNKNOWN="maybe")
    assert p.returncode == 1 and "give ok or drain" in drained[3]
    conf = tmp_path / "broken.conf"
    conf.write_text("NUMASCOPE_BIN='unterminated\n")
    p = subprocess.run([*_slurmd_env(conf, NUMASCOPE_SCONTROL="/bin/true"), str(HEALTH)],
                       capture_output=True, text=True, timeout=60, check=False)
    assert p.returncode == 1 and "cannot be read as a shell file" in p.stderr


@pytest.mark.parametrize(("store", "rc"), [("ok", 0), ("out", 1), ("unsure", 1),
                                           ("empty", 1)])
def test_prolog_exits_non_zero_when_not_healthy_and_drains_nothing_itself(
        stores, tmp_path, store, rc):
    p, drained = _health(tmp_path, stores[store], script=PROLOG)
    assert p.returncode == rc, p.stderr
    assert drained is None          # Slurm drains a node whose prolog fails
    assert (p.stderr.startswith("numascope: ")) == (rc != 0)


def test_prolog_missing_numascope_fails(stores, tmp_path):
    p, _ = _health(tmp_path, stores["ok"], script=PROLOG, NUMASCOPE_BIN="/nope/numascope")
    assert p.returncode == 1 and "cannot run /nope/numascope (exit 127)" in p.stderr


def _nhc(store: Path, bin_: str = str(NUMASCOPE), **env: str):
    """check_numascope sourced in bash with NHC's die and log stubbed: (its return code,
    what die and log were given)."""
    bash = shutil.which("bash") or "/bin/bash"
    script = (f'die() {{ echo "DIE $*"; }}\nlog() {{ echo "LOG $*"; }}\n. {NHC}\n'
              f'check_numascope gold {store}\necho "RC $?"\n')
    env = {"NUMASCOPE_HOST": "vm1", **env}     # the stores' node run's host
    p = subprocess.run(["env", "-i", f"PATH={SLURMD_PATH}", f"NUMASCOPE_BIN={bin_}",
                        *(f"{k}={v}" for k, v in env.items()), bash, "-c", script],
                       capture_output=True, text=True, timeout=120, check=False)
    lines = p.stdout.splitlines()
    return int(lines[-1].removeprefix("RC ")), lines[:-1]


def test_nhc_check_follows_nhc_conventions(stores):
    assert _nhc(stores["ok"]) == (0, [])
    rc, said = _nhc(stores["out"])
    assert rc == 1 and said[0].startswith("DIE 1 numascope: out of baseline gold: vm1")
    rc, said = _nhc(stores["unsure"])
    assert rc == 1 and said[0].startswith("DIE 1 numascope: inconclusive")
    rc, said = _nhc(stores["unsure"], NUMASCOPE_UNKNOWN="ok")
    assert rc == 0 and said[0].startswith("LOG numascope: inconclusive")
    rc, said = _nhc(stores["empty"])         # no run of this host: cannot judge (exit 5)
    assert rc == 1 and said[0].startswith("DIE 1 numascope: inconclusive") \
        and "no run of host vm1" in said[0]
    rc, said = _nhc(stores["ok"], bin_="/nope/numascope")
    assert rc == 1 and said == ["DIE 1 numascope: cannot run /nope/numascope (exit 127)"]


# -- run by slurmd itself -------------------------------------------------------------------

def _sinfo(slurm) -> tuple[str, str]:
    p = slurm.run(["sinfo", "-h", "-N", "-o", "%T|%E"])
    state, _, reason = p.stdout.strip().partition("|")
    return state, reason


def test_slurmd_runs_the_health_check_and_the_node_drains(stores, tmp_path):
    """slurmd (HealthCheckProgram, every 2 s) runs the script with its own environment:
    healthy, the node stays idle; the store switched to one out of the baseline, the node
    drains with numascope's line; resumed, with numascope gone, it drains again."""
    from slurm.harness import MiniSlurm, SlurmUnavailable
    conf = _conf(tmp_path, stores["ok"], real_scontrol=True)
    wrapper = tmp_path / "health"
    s = MiniSlurm(tmp_path / "slurm")
    # slurmd's environment has no SLURM_CONF for this test's cluster: the wrapper says it
    wrapper.write_text(f"#!/bin/sh\nNUMASCOPE_CONF={conf} SLURM_CONF={s.conf}\n"
                       f"export NUMASCOPE_CONF SLURM_CONF\nexec {HEALTH}\n")
    wrapper.chmod(0o755)
    s.extra = f"HealthCheckProgram={wrapper}\nHealthCheckInterval=2\n"
    try:
        s.start()
    except SlurmUnavailable as e:
        s.stop()
        pytest.skip(f"single-host Slurm cannot run here: {e}")
    try:
        _conf(tmp_path, stores["out"], real_scontrol=True)
        state, reason = _wait_drained(s)
        assert state.startswith("drain"), (state, reason)
        assert reason.startswith("numascope: out of baseline gold: vm1")
        _conf(tmp_path, stores["ok"], real_scontrol=True,
              NUMASCOPE_BIN="/nonexistent/numascope")
        assert s.run(["scontrol", "update", f"nodename={s.host}", "state=resume"]
                     ).returncode == 0
        state, reason = _wait_drained(s, not_reason=reason)
        assert reason == "numascope: cannot run /nonexistent/numascope (exit 127)"
    finally:
        s.stop()


def _wait_drained(slurm, not_reason: str | None = None, timeout: float = 60):
    """The node's drain state and reason once drained for a reason other than `not_reason`
    (compared up to its " judged:" part: a check that began before the store was switched
    drains again with the old verdict, only its run's age differing)."""
    def head(r: str | None) -> str | None:
        return r.split(" judged:", 1)[0] if r else r
    deadline = time.monotonic() + timeout
    state = reason = ""
    while time.monotonic() < deadline:
        state, reason = _sinfo(slurm)
        if state.startswith("drain") and reason and head(reason) != head(not_reason):
            return state, reason
        time.sleep(0.5)
    raise AssertionError(f"not drained after {timeout:g} s: {state} {reason}; slurmd log: "
                         f"{(slurm.dir / 'log' / 'slurmd.log').read_text()[-1500:]}")


def test_slurm_runs_the_prolog_and_a_node_out_of_the_baseline_drains(stores, tmp_path):
    """Prolog=numascope-prolog (slurmd runs it with the job's variables, no PATH): a job
    runs on a healthy node; with the store out of the baseline the step fails to launch and
    Slurm drains the node ("Prolog error")."""
    from slurm.harness import MiniSlurm, SlurmUnavailable
    conf = _conf(tmp_path, stores["ok"], real_scontrol=True)
    wrapper = tmp_path / "prolog"
    wrapper.write_text(f"#!/bin/sh\nNUMASCOPE_CONF={conf}\nexport NUMASCOPE_CONF\n"
                       f"exec {PROLOG}\n")
    wrapper.chmod(0o755)
    s = MiniSlurm(tmp_path / "slurm", extra=f"Prolog={wrapper}\n")
    try:
        s.start()
    except SlurmUnavailable as e:
        s.stop()
        pytest.skip(f"single-host Slurm cannot run here: {e}")
    try:
        p = s.run(["srun", "-N1", "-n1", "true"], timeout=120)
        assert p.returncode == 0, p.stderr
        deadline = time.monotonic() + 30       # the job ends: completing, then idle
        while _sinfo(s)[0].startswith("completing") and time.monotonic() < deadline:
            time.sleep(0.3)
        assert _sinfo(s)[0] in ("idle", "mixed")
        _conf(tmp_path, stores["out"], real_scontrol=True)
        p = s.run(["srun", "-N1", "-n1", "true"], timeout=120)
        assert p.returncode != 0 and "prolog failed" in p.stderr.lower()
        _, reason = _wait_drained(s)
        assert reason == "Prolog error"
    finally:
        s.stop()


def _crashing(tmp_path: Path) -> Path:
    """numascope whose `fleet check` crashes (a bug: an internal error), as a real
    numascope does: its one line and its own exit code."""
    bin_ = tmp_path / "numascope-crashing"
    bin_.write_text(f"#!{sys.executable}\nimport sys\nimport numascope.cli.fleet as f\n"
                    "def boom(args):\n    raise RuntimeError('a bug on purpose')\n"
                    "f._check = boom\nfrom numascope.cli import main\nsys.exit(main())\n")
    bin_.chmod(0o755)
    return bin_


def test_a_crash_is_its_own_exit_and_its_own_line_never_out_of_baseline(stores, tmp_path):
    bin_ = _crashing(tmp_path)
    p = subprocess.run([str(bin_), "fleet", "check", "--baseline", "gold", "--store",
                        str(stores["ok"]), "latest"], capture_output=True, text=True,
                       timeout=120, check=False)
    assert p.returncode == 70 and "internal error: RuntimeError: a bug on purpose" in p.stderr
    _, drained = _health(tmp_path, stores["ok"], NUMASCOPE_BIN=str(bin_))
    reason = drained[3].removeprefix("reason=")
    assert reason.startswith("numascope: crashed: RuntimeError: a bug on purpose"), reason
    assert "out of baseline" not in reason
    rc, said = _nhc(stores["ok"], bin_=str(bin_))
    assert rc == 1 and said[0].startswith("DIE 1 numascope: crashed: RuntimeError: a bug"), said
    npd = subprocess.run([*_slurmd_env(_conf(tmp_path, stores["ok"], NUMASCOPE_BIN=str(bin_))),
                          str(SCRIPTS / "numascope-npd")], capture_output=True, text=True,
                         timeout=120, check=False)
    assert npd.returncode == 1 and npd.stdout.startswith("numascope: crashed: RuntimeError")
