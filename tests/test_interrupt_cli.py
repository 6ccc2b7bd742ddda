"""Commands stopped by SIGINT or SIGTERM: real processes, real signals, sent once a C call
is running. They say what finished, keep it (`run` stores it) and exit 128 + the signal;
never "internal error"."""

import json
import signal
import textwrap
import time

import pytest
from interrupting import SIGNALS, finish, signal_when_running, start, two_cpus

from numascope import _core
from numascope.results.store import Store


def _per_trip(a: int, b: int) -> float:
    t0 = time.perf_counter()
    _core.c2c_pingpong(a, b, 3, 2000)
    return (time.perf_counter() - t0) / 6000


@pytest.mark.parametrize("signum", SIGNALS)
def test_c2c_stops_between_samples_and_exits_128_plus_signal(signum):
    a, b = two_cpus()
    per_trip = _per_trip(a, b)
    trips = max(2000, int(0.02 / per_trip))   # about 20 ms per sample
    samples = 1000
    full = samples * trips * per_trip         # about 20 s uninterrupted
    p = start("-m", "numascope", "c2c", "--cpus", f"{a},{b}", "--samples", str(samples),
              "--trips", str(trips))
    sent = signal_when_running(p, signum)
    _, err, ended = finish(p, 3 * full + 60)
    assert p.returncode == 128 + signum, err
    assert "internal error" not in err and "Traceback" not in err
    assert f"interrupted ({signal.Signals(signum).name}): nothing finished" in err
    assert ended - sent < full / 4, (ended - sent, full)


def test_c2c_json_says_interrupted():
    a, b = two_cpus()
    trips = max(2000, int(0.02 / _per_trip(a, b)))
    p = start("-m", "numascope", "c2c", "--cpus", f"{a},{b}", "--samples", "1000",
              "--trips", str(trips), "--json")
    signal_when_running(p, signal.SIGTERM)
    out, err, _ = finish(p, 600)
    assert p.returncode == 143, err
    doc = json.loads(out)      # the envelope: the stop is its error, the extras empty
    assert doc["command"] == "c2c" and doc["results"] == []
    assert doc["errors"] == [{"kind": "interrupted", "message": "interrupted (SIGTERM)",
                              "exit_code": 143}]
    assert {k: doc[k] for k in ("by_relation", "by_home", "home_cost", "clusters")} == \
        {"by_relation": {}, "by_home": {}, "home_cost": [], "clusters": None}


def test_lat_interrupted_exits_130_without_internal_error():
    # The chase lasts seconds (200 samples x 65536 loads of 16 MiB): a signal sent while
    # its pinned thread exists arrives before it ends.
    p = start("-m", "numascope", "lat", "--size", "16M", "--samples", "200", "--loads",
              "65536")
    signal_when_running(p, signal.SIGINT)
    out, err, _ = finish(p, 600)
    assert p.returncode == 130, out + err
    assert "internal error" not in err and "Traceback" not in err
    assert "interrupted (SIGINT): nothing finished" in err


# `numascope run` with three stages of a real kernel (the measured core clock): "quick"
# (two short chains), "slow" (one 20 s chain, interrupted) and "after" (never reached).
RUN = textwrap.dedent(r'''
    import sys, types
    from numascope import clock, suite
    from numascope.benchmark import Case
    from numascope.cli import main
    from numascope.results.record import BenchResult, Metric

    class Chain:
        family = "chain"

        def measure(self, topo, case):
            cpu = topo.usable_cpus()[0]
            r = clock._run([cpu], case.params["seconds"], 0.0)[0]
            return BenchResult("chain", case.label, dict(case.params),
                               {"ghz": Metric("ghz", "GHz", True, [r["ghz"]])})

    def family(name, seconds, n):
        return type(name, (Chain,), {"suite_cases": lambda self, topo, profile: [
            Case(f"{name} {i}", {"seconds": seconds}) for i in range(n)]})

    quick, slow = family("quick_chain", 0.05, 2), family("slow_chain", 20.0, 1)
    stages = [suite.Stage("topology", "topology", None),
              suite.Stage("quick", "short chains", quick),
              suite.Stage("slow", "one long chain", slow),
              suite.Stage("after", "never reached", quick)]
    suite.all_stages = lambda: stages
    sys.exit(main(["run", "--store", sys.argv[1], "--no-report"]))
''')


@pytest.mark.parametrize("signum", SIGNALS)
def test_run_stopped_mid_stage_stores_the_finished_stages(signum, tmp_path):
    db = tmp_path / "runs.db"
    p = start("-c", RUN, str(db))
    # wait until the quick stage is stored: the next team is the 20 s chain
    _wait_for_results(p, db, 2)
    sent = signal_when_running(p, signum)
    out, err, ended = finish(p, 120)
    name = signal.Signals(signum).name
    assert p.returncode == 128 + signum, out + err
    assert "internal error" not in err and "Traceback" not in err
    assert f"interrupted ({name}): the finished results are stored" in err
    assert ended - sent < 20 / 2, ended - sent
    with Store.open(db) as st:
        (summary,) = st.list_runs()
        rec = st.get_run(summary.run_id)
    assert rec.status == summary.status == "interrupted"
    assert rec.finished is not None
    stages = {s.name: (s.status, s.results, s.reason) for s in rec.stages}
    assert stages == {"topology": ("done", 0, ""), "quick": ("done", 2, ""),
                      "slow": ("interrupted", 0, f"stopped by {name}"),
                      "after": ("not run", 0, "run interrupted")}
    assert [r.case for r in rec.results] == ["quick_chain 0", "quick_chain 1"]
    assert all(r.metrics["ghz"].values[0] > 0 for r in rec.results)


def _wait_for_results(p, db, n: int) -> None:
    while True:
        if p.poll() is not None:
            out, err = p.communicate()
            pytest.fail(f"run ended early (rc {p.returncode}):\n{out}\n{err}")
        if db.exists():
            try:
                with Store.open(db) as st:
                    runs = st.list_runs()
                if runs and runs[0].results >= n:
                    return
            except Exception:  # noqa: BLE001, S110 — being created: look again
                pass
        time.sleep(0.01)
