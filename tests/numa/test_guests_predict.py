"""`advise --predict / --verify` in a QEMU guest with two packages of two nodes each: a
module of its own, so that its boot runs beside the other guests' (pytest-xdist gives each
module one worker) instead of after them.

One boot runs a smoke bandwidth + matrix run, then predicts and verifies every layout of a
2-rank and a 4-rank shape under mpirun (steps_predict)."""

from __future__ import annotations

import pytest
from guest import GuestRun, StepResult, boot, missing
from shapes import PREDICT, PREDICT_RANKS, steps_predict

_WHY = missing()
pytestmark = [pytest.mark.numa,
              pytest.mark.skipif(_WHY is not None, reason=f"multi-node guests: {_WHY}")]


@pytest.fixture(scope="module")
def predict_guest(tmp_path_factory) -> GuestRun:
    run = boot(PREDICT, steps_predict(), tmp_path_factory.mktemp(PREDICT.name))
    print(f"\nguest {PREDICT.name} ({run.kernel}): boot {run.boot_seconds:.0f} s, total "
          f"{run.total_seconds:.0f} s; "
          + ", ".join(f"{s.name} {s.seconds:.1f} s" for s in run.steps.values()))
    return run


def ok(step: StepResult) -> StepResult:
    assert step.rc == 0, f"{step.argv} exited {step.rc}: {step.stderr[-2000:]}"
    assert "Traceback" not in step.stderr
    assert not [e for e in step.events if e["ev"] == "error"], step.events
    return step


# Under TCG every vCPU is a host thread emulating loads and stores: a remote node costs
# nothing more than the local one. PREDICT pins each socket's vCPUs to one host CPU, so a
# socket's throughput is one host CPU's, shared by the ranks on it, as a real socket's
# memory bandwidth is: layouts with their ranks on both sockets get about twice what layouts
# on one get, and the model must see it from the smoke run's points (package and node
# curves). Layouts on the same number of host CPUs are alike, and what the model predicts
# between them comes from noise in the smoke run (identical nodes' points differed 1.26x in
# one boot), so the ranking is checked where the model predicts at least RANKED apart, and
# such a pair must exist in every shape.
RANKED = 1.5


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
        rows.append((it["unit"], p["total_gbs"], v["total_gbs"], v["error_percent"]))
    print(f"\n{ranks} ranks (identical nodes' spread {tol:.2f}x): " + "; ".join(
        f"{u}: predicted {a:.3g}, measured {b:.3g} GB/s ({e:+.0f} %)" for u, a, b, e in rows))
    print(f"why: {sec['why']}")
    # predicted best first; where the model sees one socket against two, the machine agrees
    assert [r[1] for r in rows] == sorted((r[1] for r in rows), reverse=True)
    apart = [(a, b) for i, a in enumerate(rows) for b in rows[i + 1:]
             if a[1] >= b[1] * max(RANKED, tol)]
    assert apart, f"the model sees no layout of {ranks} ranks on two sockets beat one on one"
    for a, b in apart:
        assert a[2] > b[2], f"{a[0]} predicted above {b[0]} but measured below"
