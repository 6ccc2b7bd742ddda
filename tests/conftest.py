"""Shared test helpers: where ../shared is, and skipping cleanly when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("NUMASCOPE_SHARED", REPO.parent / "shared"))
HWLOC_FIXTURES = SHARED / "fixtures" / "hwloc-linux"
RAINFALL = SHARED / "data" / "blosc-rainfall"


@pytest.fixture
def hwloc_fixtures() -> Path:
    if not HWLOC_FIXTURES.is_dir():
        pytest.skip(f"hwloc fixtures not found at {HWLOC_FIXTURES}")
    return HWLOC_FIXTURES


def hwloc_fixture(name: str) -> Path:
    """Path of one hwloc sysfs dump (X.tar.bz2); skips the test when absent."""
    p = HWLOC_FIXTURES / f"{name}.tar.bz2"
    if not p.exists():
        pytest.skip(f"fixture {p} not found")
    return p
