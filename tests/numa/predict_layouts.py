"""What the predict guests (test_guests_predict.py) check of one boot: every layout of a
shape predicted from the boot's smoke run and verified under mpirun, and, on a quiet host,
the measured and the predicted ranking of layouts over one socket against two.

Under TCG every vCPU is a host thread emulating loads and stores: a remote node costs
nothing more than the local one. The predict guests pin each socket's vCPUs to one host CPU
and back every node with huge pages (guest.Shape.pin_sockets), so a socket's vCPUs share one
host CPU as a real socket's cores share its memory bandwidth: on a quiet host 2 ranks over
both sockets measured 2.99-3.41 GB/s against 1.04-1.23 on one. So where a layout spans more
sockets than another, both the measurement and the model must rank it higher: the ranks ran
where the recipes put them and were timed together, and the model saw the shared socket.
Layouts on as many sockets are not ranked: under TCG their difference is the host's noise
(the host's two CPUs ran identical nodes up to 2.3x apart), printed, not checked.
With other work on the host the sockets stop being independent (a 2-rank layout over both
measured 1.22 GB/s against 1.91 on one), so beyond QUIET_CPUS of other work on average
nothing is compared, and the test says so. In the whole suite (not make test-numa) other work
is always there: the layouts are verified on fewer repetitions and the ranking is a skip."""

from __future__ import annotations

import os

import pytest
from guest import GuestRun, Shape, StepResult, boot, host_cpu_of_socket
from shapes import PREDICT_REPS, PREDICT_REPS_RANKED, steps_predict

QUIET_CPUS = 0.5
# rankings are compared where the guests run alone (make test-numa), on enough repetitions
RANKED = os.environ.get("NUMASCOPE_ALL_GUESTS") == "1"


def boot_predict(shape: Shape, ranks: tuple[int, ...], tmp_path_factory) -> GuestRun:
    """One boot of `shape`: its smoke run, then every layout of each rank count verified."""
    run = boot(shape, steps_predict(ranks, PREDICT_REPS_RANKED if RANKED else PREDICT_REPS),
               tmp_path_factory.mktemp(shape.name))
    print(f"\nguest {shape.name} ({run.kernel}): boot {run.boot_seconds:.0f} s, total "
          f"{run.total_seconds:.0f} s, other work on the host {run.foreign_cpus:.2f} CPUs; "
          + ", ".join(f"{s.name} {s.seconds:.1f} s" for s in run.steps.values()))
    return run


def ok(step: StepResult) -> StepResult:
    assert step.rc == 0, f"{step.argv} exited {step.rc}: {step.stderr[-2000:]}"
    assert "Traceback" not in step.stderr
    assert not [e for e in step.events if e["ev"] == "error"], step.events
    return step


def node_spread(shape: Shape, run: StepResult) -> float:
    """Fastest over slowest of the identical nodes' own points (per-domain triad)."""
    one = [r["metrics"]["bandwidth"]["median"] for r in run.json()["results"]
           if r["family"] == "bandwidth"
           and any(str(d).startswith("N") for d in r["params"].get("domains") or [])]
    assert len(one) == len(shape.node_mib), one
    return max(one) / min(one)


def check_every_layout(guest: GuestRun, shape: Shape, ranks: int) -> None:
    spread = node_spread(shape, ok(guest.step("predict-run")))
    sec = ok(guest.step(f"verify-{ranks}")).json()["results"][0]
    assert sec["section"] == "predict" and sec["items"]
    rows = []
    for it in sec["items"]:
        p, v = it["prediction"], it["verified"]
        assert p["run_id"] == sec["run"] and p["total_gbs"] is not None, p["no_data"]
        assert [r["threads"] for r in p["ranks"]] == [1] * ranks
        assert v["launcher"] == "mpirun" and len(v["ranks"]) == ranks
        assert v["total_gbs"] > 0 and v["error_percent"] is not None
        # error = (predicted - measured) / measured (the JSON's prediction has 4 digits)
        assert p["total_gbs"] == pytest.approx(v["total_gbs"] * (1 + v["error_percent"] / 100),
                                               rel=1e-3)
        assert all(r["n"] >= 3 for r in v["ranks"])
        sockets = {shape.cpu_socket(c) for r in p["ranks"] for c in r["cpus"]}
        rows.append((it["unit"], p["total_gbs"], v["total_gbs"], v["error_percent"],
                     len(sockets)))
    print(f"\n{shape.name}, {ranks} ranks (identical nodes' spread {spread:.2f}x): " + "; ".join(
        f"{u} ({s} sockets): predicted {a:.3g}, measured {b:.3g} GB/s ({e:+.0f} %)"
        for u, a, b, e, s in rows))
    print(f"why: {sec['why']}")
    assert [r[1] for r in rows] == sorted((r[1] for r in rows), reverse=True)   # best first
    busy = guest.foreign_cpus
    assert busy is not None
    # what cannot be compared here is a visible skip with its reason (the checks above ran)
    if not RANKED:
        pytest.skip(f"rankings not compared in the whole suite ({PREDICT_REPS} repetitions a "
                    "layout, other work beside the guest): make test-numa compares them")
    if len(set(host_cpu_of_socket(shape).values())) < 2:
        pytest.skip("rankings not compared: one host CPU runs both sockets' vCPUs")
    if busy > QUIET_CPUS:
        pytest.skip(f"rankings not compared: other work used {busy:.2f} host CPUs on average "
                    f"beside the guest (> {QUIET_CPUS}): run the predict guests alone")
    if ranks == shape.cpus:          # every vCPU taken: one layout, nothing to rank
        assert len(rows) == 1, rows
        return
    pairs = [(a, b) for a in rows for b in rows if a[4] > b[4]]
    assert pairs, f"{ranks} ranks: no layout on fewer sockets than another"
    for a, b in pairs:
        assert a[2] > b[2], f"measured: {a[0]} ({a[4]} sockets) below {b[0]} ({b[4]})"
        assert a[1] > b[1], f"predicted: {a[0]} ({a[4]} sockets) below {b[0]} ({b[4]})"
    print(f"rankings compared: {len(pairs)} pair(s) of layouts, measured and predicted agree")
