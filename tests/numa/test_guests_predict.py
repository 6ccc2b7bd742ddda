"""`advise --predict / --verify` in a QEMU guest with two packages of two nodes each: a
module of its own, so that its boot runs beside the other guests' (pytest-xdist gives each
module one worker) instead of after them.

One boot runs a smoke bandwidth + matrix run, then predicts and verifies every layout of a
2-rank and a 4-rank shape under mpirun (steps_predict)."""

from __future__ import annotations

import pytest
from guest import GuestRun, StepResult, boot, host_cpu_of_socket, missing
from shapes import PREDICT, PREDICT_RANKS, steps_predict

_WHY = missing()
pytestmark = [pytest.mark.numa,
              pytest.mark.skipif(_WHY is not None, reason=f"multi-node guests: {_WHY}")]


@pytest.fixture(scope="module")
def predict_guest(tmp_path_factory) -> GuestRun:
    run = boot(PREDICT, steps_predict(), tmp_path_factory.mktemp(PREDICT.name))
    print(f"\nguest {PREDICT.name} ({run.kernel}): boot {run.boot_seconds:.0f} s, total "
          f"{run.total_seconds:.0f} s, other work on the host {run.foreign_cpus:.2f} CPUs; "
          + ", ".join(f"{s.name} {s.seconds:.1f} s" for s in run.steps.values()))
    return run


def ok(step: StepResult) -> StepResult:
    assert step.rc == 0, f"{step.argv} exited {step.rc}: {step.stderr[-2000:]}"
    assert "Traceback" not in step.stderr
    assert not [e for e in step.events if e["ev"] == "error"], step.events
    return step


# Under TCG every vCPU is a host thread emulating loads and stores: a remote node costs
# nothing more than the local one. PREDICT pins each socket's vCPUs to one host CPU and
# backs every node with huge pages (guest.Shape.pin_sockets), so a socket's vCPUs share one
# host CPU as a real socket's cores share its memory bandwidth: on a quiet host 2 ranks over
# both sockets measured 2.99 GB/s against 1.23 on one.
# That is checked here: verify put the ranks where the recipes say and timed them together.
# The model's ranking is printed, not checked: its points come from one process's threads,
# which under MTTCG stop each other (with 2 vCPUs a node: a 1-thread point 0.66 GB/s, the
# 2-thread one 0.99 on the same host CPU; ranks in processes of their own 1.5 each), so the smoke run does not
# tell the guest's ranks what they get (docs/advise.md). With other work on the host the
# sockets stop being independent (a 2-rank layout over both measured 1.22 GB/s against 1.91
# on one), so beyond QUIET_CPUS of other work on average nothing is checked.
QUIET_CPUS = 0.5


def node_spread(run: StepResult) -> float:
    one = [r["metrics"]["bandwidth"]["median"] for r in run.json()["results"]
           if r["family"] == "bandwidth"
           and any(str(d).startswith("N") for d in r["params"].get("domains") or [])]
    assert len(one) == len(PREDICT.node_mib), one
    return max(one) / min(one)


@pytest.mark.parametrize("ranks", PREDICT_RANKS)
def test_predict_then_verify_every_layout(predict_guest, ranks):
    tol = node_spread(ok(predict_guest.step("predict-run")))
    sec = ok(predict_guest.step(f"verify-{ranks}")).json()["results"][0]
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
        sockets = {PREDICT.cpu_socket(c) for r in p["ranks"] for c in r["cpus"]}
        rows.append((it["unit"], p["total_gbs"], v["total_gbs"], v["error_percent"],
                     len(sockets)))
    print(f"\n{ranks} ranks (identical nodes' spread {tol:.2f}x): " + "; ".join(
        f"{u}: predicted {a:.3g}, measured {b:.3g} GB/s ({e:+.0f} %)" for u, a, b, e, _ in rows))
    print(f"why: {sec['why']}")
    assert [r[1] for r in rows] == sorted((r[1] for r in rows), reverse=True)   # best first
    busy = predict_guest.foreign_cpus
    assert busy is not None
    if len(set(host_cpu_of_socket(PREDICT).values())) < 2:
        print("sockets not compared: one host CPU runs both sockets' vCPUs")
        return
    if busy > QUIET_CPUS:
        print(f"sockets not compared: other work used {busy:.2f} host CPUs on average "
              f"beside the guest (> {QUIET_CPUS})")
        return
    two = [r for r in rows if r[4] == 2]
    one = [r for r in rows if r[4] == 1]
    # 2 ranks fit one socket (2 vCPUs) or span both; 4 ranks take all 4 vCPUs
    assert two and (one or ranks > 2), f"{ranks} ranks: no layout on one socket"
    for a in two:
        for b in one:
            assert a[2] > b[2], f"{a[0]} (two sockets) measured below {b[0]} (one socket)"
