"""`advise --predict / --verify` in two QEMU guests: two packages of two nodes each (PREDICT)
and two nodes of two vCPUs, each node a package (PREDICT_2N). A module of its own, so that
its boots run on a worker of their own (pytest-xdist gives each module one worker) beside
the main guests' module, one after the other: as two modules, three guests booted at once
on 2 CPUs and slowed each other (the suite spent 27.7 CPU-minutes against 26.3).

Each boot runs a smoke bandwidth + matrix run, then predicts and verifies every layout of a
2-rank shape (and, with 4 nodes, of a 4-rank one) under mpirun (shapes.steps_predict);
predict_layouts says what is checked, and why rankings only on a quiet host.

The two-node guest runs where its rankings can be compared: alone, `make test-numa`
(NUMASCOPE_ALL_GUESTS=1). In the whole suite the host is never quiet enough to rank
layouts (every ranking there is a skip), so the suite boots only the four-node guest, which
checks the same predict-then-verify path for 2 and 4 ranks: 3 CPU-minutes of TCG saved."""

from __future__ import annotations

import os

import pytest
from guest import GuestRun, missing
from predict_layouts import boot_predict, check_every_layout
from shapes import PREDICT, PREDICT_2N, PREDICT_2N_RANKS, PREDICT_RANKS

_WHY = missing()
pytestmark = [pytest.mark.numa,
              pytest.mark.skipif(_WHY is not None, reason=f"multi-node guests: {_WHY}")]


@pytest.fixture(scope="module")
def predict_guest(tmp_path_factory) -> GuestRun:
    return boot_predict(PREDICT, PREDICT_RANKS, tmp_path_factory)


@pytest.fixture(scope="module")
def predict_guest_2n(tmp_path_factory) -> GuestRun:
    return boot_predict(PREDICT_2N, PREDICT_2N_RANKS, tmp_path_factory)


@pytest.mark.parametrize("ranks", PREDICT_RANKS)
def test_four_nodes_predict_then_verify_every_layout(predict_guest, ranks):
    check_every_layout(predict_guest, PREDICT, ranks)


@pytest.mark.skipif(os.environ.get("NUMASCOPE_ALL_GUESTS") != "1",
                    reason="the two-node predict guest runs alone, with its rankings: "
                           "make test-numa (NUMASCOPE_ALL_GUESTS=1)")
@pytest.mark.parametrize("ranks", PREDICT_2N_RANKS)
def test_two_nodes_predict_then_verify_every_layout(predict_guest_2n, ranks):
    check_every_layout(predict_guest_2n, PREDICT_2N, ranks)
