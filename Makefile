# numascope: `make run` measures this machine, `make test` runs the test suite.
# Both do all set-up first: system packages (apt-get, when missing), a virtualenv in .venv,
# and an editable build of the package with its C core.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.numascope-installed
TEST_STAMP := $(VENV)/.numascope-test-installed
ARGS   ?=

.PHONY: run test test-numa lint bench deps vm-deps test-deps clean

run: $(STAMP)
	$(BIN)/numascope run $(ARGS)

# Tests run in up to 4 processes (pytest-xdist), a module to a process (--dist loadscope): each
# module's expensive fixtures (a QEMU guest, a Slurm cluster, an MPI job) start once, and on
# a 2-core machine the second core works while the first waits on a guest or a launcher.
# (One process more than the CPUs was tried: the guests and MPI ranks, CPU-bound, only
# contended more: 28.4 CPU-minutes in 16:04 against ~24 in the same time with two.)
# The order is shuffled (pytest-randomly), a new seed each run, said first: no test may
# depend on another's leftovers. `make test SEED=N` replays an order. The modules' order is
# tests/conftest.py's (the QEMU guests first), not xdist's (--no-loadscope-reorder).
# Bytecode is written and read: where the environment sets PYTHONDONTWRITEBYTECODE (the
# machines this project is developed on do), every process the suite starts (~400 numascope
# commands, each xdist worker, each guest) compiled numascope's sources again and pytest
# rewrote every test module again: 0.2 s a command, 7 s a worker's collection. Python
# checks each cache against its source, so a stale one is never used.
unexport PYTHONDONTWRITEBYTECODE

ifndef SEED
SEED   := $(shell od -An -N2 -tu2 /dev/urandom | tr -d ' ')
endif
PYTEST := $(BIN)/python -m pytest -q -n auto --maxprocesses 4 --dist loadscope \
          --no-loadscope-reorder --durations 10 \
          --randomly-seed=$(SEED)

test: $(TEST_STAMP) test-deps
	@echo "numascope tests: order seed $(SEED) (make test SEED=$(SEED) replays it)"
	$(PYTEST) $(ARGS)

# The multi-node tests alone: numascope inside QEMU guests with several NUMA nodes.
# Alone, the host is quiet enough for the predict guests to rank layouts: every guest boots.
test-numa: $(TEST_STAMP) vm-deps
	NUMASCOPE_ALL_GUESTS=1 $(PYTEST) -m numa $(ARGS)

lint: $(TEST_STAMP)
	$(BIN)/ruff check src tests benchmarks

bench: $(TEST_STAMP)
	$(BIN)/python benchmarks/bandwidth_peers.py $(ARGS)

deps:
	bash scripts/install-system-deps.sh

# QEMU, a kernel image and busybox for tests/numa (optional: those tests skip without them)
vm-deps:
	bash scripts/install-system-deps.sh --vm

# everything the tests start: the guests' packages and a single-host Slurm
test-deps:
	bash scripts/install-system-deps.sh --vm --slurm

# The build requirements of numascope itself go into the venv first: meson-python rebuilds
# the C core on import after a source change, which needs them inside the venv, hence
# --no-build-isolation for numascope (and --no-deps: pip would apply that flag to every
# sdist among the dependencies too, which then miss their own build requirements, e.g.
# kerncraft's bdist_wheel on a cold pip cache). The dependencies are installed before it,
# each sdist built in isolation with what it declares (scripts/dependencies.py lists them
# from pyproject.toml). `make run` needs the runtime ones; `make test` adds the test extra.
# pip's `numascope` script is then rewritten with its first import (meson-python's rebuild
# hook) inside the Ctrl-C handling: one line and exit 130, not the loader's traceback.
$(STAMP): pyproject.toml meson.build scripts/install-system-deps.sh scripts/dependencies.py \
          scripts/entry-script.py
	bash scripts/install-system-deps.sh
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q "meson-python>=0.15" "meson>=1.2" ninja "blosc2>=3" numpy
	$(BIN)/python scripts/dependencies.py | xargs -d '\n' $(BIN)/python -m pip install -q
	$(BIN)/python -m pip install -q --no-build-isolation --no-deps -e .
	$(BIN)/python scripts/entry-script.py $(BIN)/numascope
	$(BIN)/python -m pip check >/dev/null || { $(BIN)/python -m pip check; exit 1; }
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(BIN)/python scripts/dependencies.py test | xargs -d '\n' $(BIN)/python -m pip install -q
	touch $(TEST_STAMP)

clean:
	rm -rf $(VENV) build
