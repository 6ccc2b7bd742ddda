"""One node of a fleet: who it is, its suite run, and the record of a node that failed.

Every node's record is a normal run record (RunRecord) with
- tags: fleet=<fleet id>, host=<host name>, and slurm_job / slurm_step / slurm_node when
  Slurm launched it (selectable like any tag: `numascope runs --tag fleet=…`);
- host["fleet"]: {"id", "rank", "ranks", "launcher", "slurm": {SLURM_* variables}, "reason"}.
A node that failed, hung past --node-timeout or lost its rank is stored as a record with
status "failed", one stage "fleet" (status failed, its reason) and no results.

Environment (documented in docs/fleet.md):
- NUMASCOPE_HOSTNAME: the host name to record instead of socket.gethostname(); "{rank}" in
  it is replaced by the rank (so one host can play several nodes in tests).
- NUMASCOPE_FLEET_TEST_FAIL / _HANG / _DIE: comma-separated host names (after the override)
  or rank numbers that raise an error / hang (ignoring stop signals) / exit at once (a lost
  rank) instead of measuring. NUMASCOPE_FLEET_TEST_SLOW: the same, whose first measurement
  (not a --confirm one) is reported 2x worse on every metric, each result noting it: a node
  slow only once, for the confirmation's tests. Test hooks only: they act only when
  NUMASCOPE_TEST_HOOKS is "falsify-results" as well (a value no one sets by accident; a
  hook variable left in an environment without it is ignored, said on stderr), and a record
  made with one lists them in host["fleet"]["test_hooks"], which every output shows and
  `fleet prom` refuses.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from typing import Any

from numascope.errors import escape_text
from numascope.profile import Profile
from numascope.results.run import RunRecord, StageInfo, check_label, new_run_id, utc_now
from numascope.results.store import Store

SLURM_VARS = ("SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_NODEID", "SLURM_PROCID",
              "SLURM_LOCALID", "SLURM_JOB_NAME", "SLURM_CLUSTER_NAME", "SLURM_JOB_NODELIST",
              "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS", "SLURMD_NODENAME")
FLEET_TAG = "fleet"
HOOKS_SWITCH = "NUMASCOPE_TEST_HOOKS"
HOOKS_ON = "falsify-results"
HOOK_VARS = ("NUMASCOPE_FLEET_TEST_FAIL", "NUMASCOPE_FLEET_TEST_HANG",
             "NUMASCOPE_FLEET_TEST_DIE", "NUMASCOPE_FLEET_TEST_SLOW")


def slurm_env(env: dict[str, str] | None = None) -> dict[str, str]:
    env = os.environ if env is None else env
    return {k: env[k] for k in SLURM_VARS if env.get(k)}


def hostname(rank: int = 0, env: dict[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    override = env.get("NUMASCOPE_HOSTNAME", "").strip()
    if override:
        return override.replace("{rank}", str(rank))
    return socket.gethostname()


def slurm_tags(slurm: dict[str, str]) -> dict[str, str]:
    names = {"SLURM_JOB_ID": "slurm_job", "SLURM_STEP_ID": "slurm_step",
             "SLURM_NODEID": "slurm_node"}
    return {t: slurm[v] for v, t in names.items() if v in slurm}


def default_fleet_id(slurm: dict[str, str]) -> str:
    """slurm-<job>.<step> under Slurm (every task of the step agrees without talking),
    else a new time-sortable id."""
    if "SLURM_JOB_ID" in slurm:
        return f"slurm-{slurm['SLURM_JOB_ID']}.{slurm.get('SLURM_STEP_ID', '0')}"
    return "fleet-" + new_run_id()


def identity(fleet_id: str, rank: int, ranks: int, launcher: str,
             env: dict[str, str] | None = None) -> dict[str, Any]:
    """What every record of this node carries (also sent to rank 0 before measuring)."""
    slurm = slurm_env(env)
    return {"id": fleet_id, "host": hostname(rank, env), "rank": rank, "ranks": ranks,
            "launcher": launcher, "slurm": slurm}


def tag(rec: RunRecord, ident: dict[str, Any], reason: str = "") -> RunRecord:
    rec.tags = {**rec.tags, FLEET_TAG: ident["id"], "host": ident["host"],
                **slurm_tags(ident.get("slurm", {}))}
    rec.host["hostname"] = ident["host"]
    rec.host["fleet"] = {**ident, "reason": reason}
    return rec


def judge(rec: RunRecord) -> RunRecord:
    """The record's status made its verdict (numascope.fleet.verdict): a node is complete
    only when every stage asked ran and passed; a failed or interrupted stage makes the
    whole node failed / interrupted, its reason in host.fleet.reason."""
    from numascope.fleet.verdict import verdict
    v = verdict(rec)
    rec.status = v.status
    rec.host.setdefault("fleet", {})["reason"] = v.reason
    return rec


def failed_record(ident: dict[str, Any], profile: str, tags: dict[str, str], reason: str,
                  started: str | None = None, status: str = "failed") -> RunRecord:
    """The record of a node that produced no run: status failed (or interrupted: stopped
    by a signal before it had a run), one stage saying why."""
    rec = RunRecord.new(profile=profile, tags=tags)
    if started:
        rec.started = started
    rec.status = status
    rec.finished = utc_now()
    rec.stages = [StageInfo("fleet", status, escape_text(reason) if reason else status)]
    return tag(rec, ident, rec.stages[0].reason)


def hooks_on(env: dict[str, str] | None = None) -> bool:
    """Whether the test hooks may act: only under the explicit test switch."""
    env = os.environ if env is None else env
    return env.get(HOOKS_SWITCH, "") == HOOKS_ON


def ignored_hooks(env: dict[str, str] | None = None) -> list[str]:
    """The hook variables set in an environment whose switch is off (they do nothing)."""
    env = os.environ if env is None else env
    return [] if hooks_on(env) else [v for v in HOOK_VARS if env.get(v, "").strip()]


def _hooked(var: str, ident: dict[str, Any]) -> bool:
    if not hooks_on():
        return False
    want = {w.strip() for w in os.environ.get(var, "").split(",") if w.strip()}
    return bool(want & {ident["host"], str(ident["rank"])})


def hooks_of(rec: Any) -> list[str]:
    """The test hooks a record was made with (none for any normal run)."""
    fl = rec.host.get("fleet") if isinstance(rec.host, dict) else None
    return list(fl.get("test_hooks") or []) if isinstance(fl, dict) else []


def _mark(rec: RunRecord, hook: str) -> RunRecord:
    fl = rec.host.setdefault("fleet", {})
    fl["test_hooks"] = sorted({*fl.get("test_hooks", []), hook})
    return rec


def test_hooks(ident: dict[str, Any]) -> None:
    """NUMASCOPE_FLEET_TEST_FAIL / _HANG / _DIE (tests only): raise, hang deaf to stop
    signals the way a node stuck in the kernel does, or vanish."""
    if _hooked("NUMASCOPE_FLEET_TEST_FAIL", ident):
        raise HookFailure(f"test hook: node {ident['host']} fails on purpose")
    if _hooked("NUMASCOPE_FLEET_TEST_DIE", ident):   # the rank is lost: no goodbye
        os._exit(9)
    if _hooked("NUMASCOPE_FLEET_TEST_HANG", ident):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        while True:
            time.sleep(3600)


class HookFailure(RuntimeError):
    """The failure NUMASCOPE_FLEET_TEST_FAIL makes (its record is marked)."""


def _slow_once(rec: RunRecord) -> None:
    """NUMASCOPE_FLEET_TEST_SLOW (tests only): every metric 2x worse, said in each result."""
    for res in rec.results:
        for m in res.metrics.values():
            m.values = [v * (0.5 if m.higher_is_better else 2.0) for v in m.values]
        res.notes = [*res.notes, "test hook NUMASCOPE_FLEET_TEST_SLOW: reported 2x worse"]
    _mark(rec, "NUMASCOPE_FLEET_TEST_SLOW")


def run_node(ident: dict[str, Any], profile: Profile, stages: list | None,
             tags: dict[str, str], quiet: bool = True,
             machine: dict[str, str] | None = None,
             budget: float | None = None, live: Any | None = None) -> RunRecord:
    """This node's suite: the same prepare + run_suite as `numascope run`, into an in-memory
    store, then tagged. `machine` is the user's --memory / --links (checked), recorded in
    the node's peaks as `numascope run` records them, whichever stages run; `budget`
    (seconds) bounds the node's run as `numascope run --budget` does. Any error
    becomes a failed record (never raised); a stop signal (Slurm's time limit) ends the run
    as interrupted, keeping what finished. `live` (numascope.fleet.keep.Live, or any object
    with the store's begin_run / add_result / finish_run) takes the run as it goes instead
    of the in-memory store: each finished result is on disk (or with rank 0) before a
    launcher's SIGKILL could take it."""
    from numascope import suite
    started = utc_now()
    for var in ignored_hooks():
        print(f"numascope fleet: {var} is a test hook and is ignored ({HOOKS_SWITCH} is not "
              "set)", file=sys.stderr, flush=True)
    try:
        test_hooks(ident)
        topo = suite.load_topology()
        bound = bound_to(topo, ident["host"])
        rec, mon = suite.prepare(topo, profile, tags)
        rec = tag(rec, ident)          # tagged before it begins: a live run is the node's
        rec.host["fleet"].update(bound)
        if live is not None:
            rec = suite.run_suite(topo, rec, mon, live, stages, profile=profile,
                                  machine=machine, budget=budget)
        else:
            with Store.in_memory() as store:
                rec = suite.run_suite(topo, rec, mon, store, stages, profile=profile,
                                      machine=machine, budget=budget)
        rec = tag(rec, ident)
        rec.host["fleet"].update(bound)
        judge(rec)
        if _hooked("NUMASCOPE_FLEET_TEST_SLOW", ident) and "confirm_of" not in tags:
            _slow_once(rec)
        return rec
    except KeyboardInterrupt as e:   # stopped before its suite ran (or between stages)
        from numascope import signals
        return failed_record(ident, profile.name, tags, f"stopped by "
                             f"{signals.name(signals.signum_of(e))} before its run began",
                             started, status="interrupted")
    except Exception as e:  # noqa: BLE001 — one node's error must not sink the fleet
        msg = escape_text(str(e)) if str(e) else ""
        rec = failed_record(ident, profile.name, tags,
                            f"error: {type(e).__name__}: {msg}".rstrip(": "), started)
        return _mark(rec, "NUMASCOPE_FLEET_TEST_FAIL") if isinstance(e, HookFailure) else rec


def bound_to(topo: Any, host: str) -> dict[str, Any]:
    """How many of the node's online CPUs this task may use. A launcher that binds its
    tasks (Slurm's task/affinity or task/cgroup: one CPU for `srun -n1` without -c; Open
    MPI's default binding) makes numascope measure the node on those CPUs only: said on
    stderr with the launch that gives the task the whole node, and recorded."""
    online = [c.id for c in topo.cpus if c.online]
    usable = topo.usable_cpus()
    if 0 < len(usable) < len(online):
        import textwrap

        from numascope.errors import escape_text
        from numascope.placement import format_cpulist
        said = textwrap.wrap(f"numascope fleet: {escape_text(host)}:", 79,
                             subsequent_indent="  ")
        said += textwrap.wrap(f"this task may use {len(usable)} of {len(online)} CPUs "
                              f"({format_cpulist(usable)}); the node is measured on those "
                              "only. Give it the whole node:", 79, initial_indent="  ",
                              subsequent_indent="  ", break_on_hyphens=False)
        said += [f"  srun --exclusive -c {len(online)} --cpu-bind=none …",
                 "  or mpirun --bind-to none …"]
        print("\n".join(said), file=sys.stderr, flush=True)
    return {"cpus_allowed": len(usable), "cpus_online": len(online)}


# What a launcher puts in its tasks' environment to make them ranks of its job (Open MPI,
# PMIx, PMI/hydra, Slurm). The interconnect stage starts an mpirun of its own on this node:
# with these inherited, Open MPI refuses it ("mpirun does not support recursive calls") and
# under srun it sees only the step's slots ("not enough slots available"). Site settings
# (OMPI_MCA_btl …) are kept; the job's own (OMPI_MCA_orte_*, ess, pmix …) are not.
_LAUNCH_PREFIXES = ("PMIX_", "PMI_", "PRTE_", "HYDRA_", "SLURM_", "OMPI_COMM_WORLD_",
                    "OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix", "OMPI_MCA_plm",
                    "OMPI_MCA_ras", "OMPI_MCA_rmaps", "OMPI_MCA_initial_wdir",
                    "OMPI_MCA_shmem_RUNTIME", "OMPI_MCA_mpi_oversubscribe")
_LAUNCH_VARS = ("OMPI_COMMAND", "OMPI_UNIVERSE_SIZE", "OMPI_NUM_APP_CTX", "OMPI_FIRST_RANKS",
                "OMPI_APP_CTX_NUM_PROCS", "OMPI_FILE_LOCATION", "SLURMD_NODENAME",
                "MPI_LOCALNRANKS", "MPI_LOCALRANKID")


def nested_launch_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """This task's environment without its launcher's job: the interconnect stage's own
    mpirun then starts its two ranks on this node as on a login shell (oversubscribing
    allowed: each rank binds itself to the CPU its case names)."""
    env = dict(os.environ if env is None else env)
    out = {k: v for k, v in env.items()
           if not k.startswith(_LAUNCH_PREFIXES) and k not in _LAUNCH_VARS}
    out["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
    return out


def fleet_stages(stages: list) -> list:
    """The stages as a fleet node runs them: the interconnect stage launches its mpirun
    outside the fleet's own job (nested_launch_env)."""
    from dataclasses import replace
    return [replace(s, options=(*s.options, ("env", nested_launch_env())))
            if s.name == "interconnect" else s for s in stages]


FLEET_ID_MAX = 200      # the longest --fleet-id (it is a tag: numascope.results.run.TAG_MAX)


def check_fleet_id(fid: str) -> str:
    return check_label(fid, "--fleet-id", "fleet id", FLEET_ID_MAX)
