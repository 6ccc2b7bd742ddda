"""`advise --predict / --verify` in a QEMU guest with two nodes of two vCPUs, each node a
package: the 2-node case of test_guests_predict.py, a module of its own for the same reason
(pytest-xdist gives each module one worker). One boot: a smoke bandwidth + matrix run, then
every layout of a 2-rank and a 4-rank shape predicted and verified under mpirun."""

from __future__ import annotations

import pytest
from guest import GuestRun, missing
from predict_layouts import boot_predict, check_every_layout
from shapes import PREDICT_2N, PREDICT_2N_RANKS

_WHY = missing()
pytestmark = [pytest.mark.numa,
              pytest.mark.skipif(_WHY is not None, reason=f"multi-node guests: {_WHY}")]


@pytest.fixture(scope="module")
def predict_guest_2n(tmp_path_factory) -> GuestRun:
    return boot_predict(PREDICT_2N, PREDICT_2N_RANKS, tmp_path_factory)


@pytest.mark.parametrize("ranks", PREDICT_2N_RANKS)
def test_predict_then_verify_every_layout(predict_guest_2n, ranks):
    check_every_layout(predict_guest_2n, PREDICT_2N, ranks)
