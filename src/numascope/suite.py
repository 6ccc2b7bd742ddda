"""`numascope run`: its stages and the orchestration of one run.

A stage is a benchmark family (numascope.families), referred to by its class: the class
builds the profile's cases (`suite_cases(topo, profile)`) and measures them. A stage that
cannot run here (Unavailable, no permission, missing tool, found while building its cases:
no --io-dir, no MPI) is skipped with its reason; one whose cases were built and that could
not measure them (fio missing with --io-dir given, no permission part-way) is incomplete,
what it measured kept: asked and not done, so its node is not ok; one that fails validation
is marked failed; Ctrl-C or SIGTERM stops the run and keeps every
result already committed to the store."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from numascope import signals
from numascope.benchmark import Benchmark, Case, run_cases
from numascope.errors import LaunchError, MeasurementError, Unavailable, UserError
from numascope.profile import DEFAULT, Profile
from numascope.profile import profile as _profile
from numascope.results.record import BenchResult
from numascope.results.run import NoiseMonitor, RunRecord, host_facts, utc_now
from numascope.results.store import Store
from numascope.topology.model import Topology

DEFAULT_PROFILE: Profile = DEFAULT


@dataclass(frozen=True)
class Stage:
    name: str                     # short name shown in progress and stored in the record
    title: str                    # what it measures
    bench: type | None            # the family class; None: the topology stage
    options: tuple[tuple[str, Any], ...] = ()   # keyword arguments for the family class

    def load(self, topo: Topology, profile: Profile) -> tuple[Benchmark, list[Case]]:
        """The family's Benchmark (built with this stage's options) and this profile's
        cases."""
        bench = self.bench(**dict(self.options))  # type: ignore[misc]
        return bench, list(bench.suite_cases(topo, _profile(profile)))


def all_stages() -> list[Stage]:
    """The topology stage, then one stage per registered family."""
    from numascope.families import families
    return [Stage("topology", "machine topology, memory mode, devices", None)] + \
        [Stage(c.family, c.title, c) for c in families()]


def load_topology() -> Topology:
    """This machine's topology (a function so tests can replace it)."""
    from numascope.topology import read_topology  # type: ignore[attr-defined]
    return read_topology("/")


def clock_probe() -> Callable[[], float]:
    """The function that reads the core clock (GHz) at the start and end of a run; a
    function so tests can replace it with a fake."""
    from numascope.clock import measure_ghz
    return measure_ghz


def prepare(topo: Topology, profile: Profile | str, tags: dict[str, str]
            ) -> tuple[RunRecord, NoiseMonitor]:
    """A new run record (its host facts, the clock at the start) and the noise monitor."""
    prof = _profile(profile)
    from numascope.results.plain import to_plain
    probe = clock_probe()
    mon = NoiseMonitor(probe)
    mon.start()
    rec = RunRecord.new(profile=prof.name, tags=tags)
    rec.topology = to_plain(topo)
    rec.host = host_facts(topo, clock_ghz=mon.data.get("clock_ghz_start"))
    return rec, mon


def run_suite(topo: Topology, rec: RunRecord, mon: NoiseMonitor, store: Store,
              stages: list[Stage] | None = None, progress: Any | None = None,
              on_stage: Callable[[str, str], None] | None = None,
              profile: Profile | None = None,
              machine: dict[str, str] | None = None) -> RunRecord:
    """Run every stage, storing each result as it finishes; returns the final record
    (status complete or interrupted). `on_stage(name, status)` is told about each stage.
    `machine` is what the user said of the machine ({"memory": "12x DDR5-4800", "links":
    "xgmi:4x16@32"}, checked): the run's peaks use it, whichever stages ran.

    A stop signal (Ctrl-C, SIGTERM: a KeyboardInterrupt) ends the run between two units of
    work: the stage running is marked interrupted (its reason names the signal), the ones
    after it "not run", and the record is finished and stored with every result committed
    so far. Committing a result and the final write are held against a second signal
    (signals.deferred), which is raised once they are done."""
    stages = all_stages() if stages is None else stages
    prof = profile or _profile(rec.profile)
    for st in stages:
        rec.stage(st.name)

    def keep(info):
        def on_result(res: BenchResult) -> None:
            with signals.deferred():   # a finished result is stored, or not counted
                store.add_result(rec.run_id, res)
                rec.results.append(res)
                info.results += 1
        return on_result

    try:
        with signals.deferred():   # stored as running, so that the end below finds it
            store.begin_run(rec)
        for st in stages:
            _run_stage(st, topo, rec, prof, keep, progress, on_stage)
    except KeyboardInterrupt:   # _run_stage marked the stage it stopped, if one ran
        rec.status = "interrupted"
    with signals.deferred():
        if rec.status != "interrupted":
            rec.status = "complete"
        for s in rec.stages:
            if s.status == "pending":
                s.status, s.reason = "not run", "run interrupted"
        rec.host["peaks"] = theoretical_peaks(topo, rec, machine)
        # no closing clock reading after a stop: whoever stopped the run wants it over
        rec.noise = mon.stop(clock=rec.status != "interrupted")
        rec.finished = utc_now()
        store.finish_run(rec)
    return rec


def _run_stage(st: Stage, topo: Topology, rec: RunRecord, profile: Profile,
               keep: Callable[[Any], Any],
               progress: Any | None, on_stage: Callable[[str, str], None] | None) -> None:
    """One stage: its status and reason set on the record. A stop signal marks it
    interrupted and propagates (a KeyboardInterrupt) to end the run."""
    info = rec.stage(st.name)
    t0 = time.monotonic()
    try:
        if st.bench is None:
            info.status = "done"
            return
        try:
            bench, cases = st.load(topo, profile)
        except (Unavailable, UserError, OSError) as e:
            info.status, info.reason = "skipped", _reason(e)
            return
        try:
            run_cases(bench, topo, cases, keep(info), progress, description=st.name)
            info.status = "done"
        except (Unavailable, PermissionError, FileNotFoundError) as e:
            # asked (its cases were built) and not done: not "does not apply here"
            info.status, info.reason = "incomplete", _reason(e)
        except LaunchError as e:     # the launcher started no rank: nothing was validated
            info.status, info.reason = "failed", f"launch failed: {e}"
        except MeasurementError as e:
            info.status, info.reason = "failed", f"validation failed: {e}"
        except (UserError, OSError) as e:
            info.status, info.reason = "failed", _reason(e)
        except Exception as e:  # noqa: BLE001 — a bug in one family must not lose the others
            info.status = "failed"
            info.reason = f"internal error: {type(e).__name__}: {e}"
    except KeyboardInterrupt as e:   # Interrupted from the sweep, or while loading
        info.status = "interrupted"
        info.reason = f"stopped by {signals.name(signals.signum_of(e))}"
        raise
    finally:
        info.seconds = time.monotonic() - t0
        if on_stage:
            on_stage(st.name, info.status)


def theoretical_peaks(topo: Topology, rec: RunRecord, machine: dict[str, str] | None = None
                      ) -> dict[str, Any]:
    """The run's peak summary, computed once (numascope.peaks.run_summary): the one the
    peaks stage computed with the clocks it measured, else one from the run monitor's
    single-CPU clock at the start of the run; DRAM and links from the user's `machine`
    description (--memory, --links) when given, recorded with origin "user"."""
    try:
        from numascope import peaks
        from numascope.results.plain import to_plain
        m = machine or {}
        return to_plain(peaks.run_summary(topo, rec.results, rec.host.get("clock_ghz"),
                                          memory=m.get("memory"), links=m.get("links")))
    except Exception as e:  # noqa: BLE001 — peaks are context; never lose the run for them
        return {"error": f"{type(e).__name__}: {e}"}


def _reason(e: BaseException) -> str:
    """The whole reason on one line (control characters visible), never its first line."""
    from numascope.errors import escape_text
    return escape_text(str(e) or type(e).__name__)
