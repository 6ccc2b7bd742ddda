"""Shared test helpers: where ../shared is, and skipping cleanly when it is absent."""

from __future__ import annotations

import os
import shutil
import signal
from collections import Counter
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


def mpirun_or_skip() -> str:
    """mpirun's path, or the test skipped with what is missing (Open MPI, mpi4py)."""
    path = shutil.which("mpirun")
    if path is None:
        pytest.skip("mpirun not installed (Open MPI: scripts/install-system-deps.sh)")
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.skip("mpi4py not installed (the test extra)")
    return path


def hwloc_fixture(name: str) -> Path:
    """Path of one hwloc sysfs dump (X.tar.bz2); skips the test when absent."""
    p = HWLOC_FIXTURES / f"{name}.tar.bz2"
    if not p.exists():
        pytest.skip(f"fixture {p} not found")
    return p


@pytest.fixture(autouse=True, scope="session")
def _node_records_kept_apart(tmp_path_factory):
    """`fleet run` keeps each node's full record in a node folder (default beside the
    user's own store): the tests' go into a temporary one, inherited by what they start."""
    if not os.environ.get("NUMASCOPE_NODE_DIR"):
        os.environ["NUMASCOPE_NODE_DIR"] = str(tmp_path_factory.mktemp("node-records"))
    yield


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

# A shell without job control starts background commands with SIGINT ignored, and an ignored
# signal stays ignored through fork and exec: every Ctrl-C test (and every numascope it
# starts) would then see its SIGINT dropped. numascope honours an inherited SIG_IGN (as
# nohup asks); the suite wants Python's default, however it was started.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _signal_state_unchanged(request):
    """Every test leaves the stop signals' handlers and the signal mask as it found them:
    a handler or mask left behind is inherited by every later test of the worker and by the
    programs they start (a later Ctrl-C test then sees its signal ignored), so the suite's
    result would depend on its order."""
    before = ({s: signal.getsignal(s) for s in _STOP_SIGNALS},
              signal.pthread_sigmask(signal.SIG_BLOCK, []))
    yield
    after = ({s: signal.getsignal(s) for s in _STOP_SIGNALS},
             signal.pthread_sigmask(signal.SIG_BLOCK, []))
    if after != before:
        for s, h in before[0].items():       # repair, so only the culprit fails
            if h is not None:
                signal.signal(s, h)
        signal.pthread_sigmask(signal.SIG_SETMASK, before[1])
        pytest.fail(f"{request.node.nodeid} changed the stop signals' state: "
                    f"{before} -> {after}")


# The QEMU guests' modules take minutes each (a boot runs a guest's every command) and
# pytest-xdist gives a module to one worker (--dist loadscope). They go first, the longest
# first, each on a worker of its own; then the other modules, those with more tests first,
# ties in pytest-randomly's order (a stable sort). xdist's own order (by test count alone,
# turned off in the Makefile: --no-loadscope-reorder) put the predict guests' module, of 3
# tests, last, and its boots were the suite's tail (15:57 against 14:55).
SLOW_MODULES = ("tests/numa/test_guests.py", "tests/numa/test_guests_predict.py")


def pytest_collection_modifyitems(config, items):
    def module(item) -> str:
        return item.nodeid.split("::", 1)[0]
    count = Counter(module(it) for it in items)

    def first(item) -> tuple[int, int]:
        path = module(item)
        if path in SLOW_MODULES:
            return (SLOW_MODULES.index(path), 0)
        return (len(SLOW_MODULES), -count[path])
    items.sort(key=first)
