"""`advise --predict / --verify` in a QEMU guest with two packages of two nodes each: a
module of its own, so that its boot runs beside the other guests' (pytest-xdist gives each
module one worker) instead of after them.

One boot runs a smoke bandwidth + matrix run, then predicts and verifies every layout of a
2-rank and a 4-rank shape under mpirun (shapes.steps_predict); predict_layouts says what is
checked, and why rankings only on a quiet host."""

from __future__ import annotations

import pytest
from guest import GuestRun, missing
from predict_layouts import boot_predict, check_every_layout
from shapes import PREDICT, PREDICT_RANKS

_WHY = missing()
pytestmark = [pytest.mark.numa,
              pytest.mark.skipif(_WHY is not None, reason=f"multi-node guests: {_WHY}")]


@pytest.fixture(scope="module")
def predict_guest(tmp_path_factory) -> GuestRun:
    return boot_predict(PREDICT, PREDICT_RANKS, tmp_path_factory)


@pytest.mark.parametrize("ranks", PREDICT_RANKS)
def test_predict_then_verify_every_layout(predict_guest, ranks):
    check_every_layout(predict_guest, PREDICT, ranks)
