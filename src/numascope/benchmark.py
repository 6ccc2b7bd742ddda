"""The one shape every benchmark family has, and the orchestration they share.

A family lists the cases it would measure on a topology (`cases`), then measures one case
at a time (`measure`), returning a BenchResult whose hot loop, timing and validation ran in
C. Sweeps, progress, interruption and collection live here, not in the families — like
fio's engines, adding a family touches nothing else."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from numascope.errors import MeasurementError, UserError
from numascope.results.record import BenchResult
from numascope.signals import signum_of
from numascope.topology.model import Topology


@dataclass
class Case:
    label: str
    params: dict[str, Any] = field(default_factory=dict)


class Benchmark(Protocol):
    family: str

    def cases(self, topo: Topology, **options: Any) -> list[Case]: ...

    def measure(self, topo: Topology, case: Case) -> BenchResult: ...

    # optional: derived(results) -> more BenchResults made from the finished ones, stored
    # after them (a curve's plateaus); run_cases calls it once all cases are measured


class Interrupted(KeyboardInterrupt):
    """A stop signal (Ctrl-C, SIGTERM) during a sweep; `.results` holds every case that
    finished, `.signum` the signal. A KeyboardInterrupt, so that a caller that does not
    look at the results still stops as on Ctrl-C (never as an error)."""

    def __init__(self, results: list[BenchResult], signum: int = signal.SIGINT):
        super().__init__("interrupted")
        self.results = results
        self.signum = signum


def run_cases(
    bench: Benchmark,
    topo: Topology,
    cases: Iterable[Case],
    on_result: Callable[[BenchResult], None] | None = None,
    progress: Any | None = None,
    description: str | None = None,
    admit: Callable[[Case], bool] | None = None,
    on_case: Callable[[Case, float], None] | None = None,
    derive: bool = True,
) -> list[BenchResult]:
    """Measure each case in turn. `progress` is a rich Progress (or None for silence).
    `admit(case)` False leaves a case out (a budget: the caller records why); `on_case(case,
    seconds)` hears how long each measured case took; `derive` False leaves the family's
    derived records to a later call (a budgeted run measures a stage in two passes).
    A KeyboardInterrupt (Ctrl-C, or the CLI's SIGTERM) becomes Interrupted carrying the
    finished results and the signal."""
    import time
    cases = list(cases)
    done: list[BenchResult] = []
    task = None
    if progress is not None:
        task = progress.add_task(description or bench.family, total=len(cases))
    try:
        for case in cases:
            if admit is not None and not admit(case):
                if progress is not None:
                    progress.advance(task)
                continue
            if progress is not None:
                progress.update(task, description=f"{description or bench.family}: {case.label}")
            t0 = time.monotonic()
            res = bench.measure(topo, case)
            done.append(res)
            if on_case:
                on_case(case, time.monotonic() - t0)
            if on_result:
                on_result(res)
            if progress is not None:
                progress.advance(task)
        # records a family makes from the ones measured (bw --sweep's plateaus), if any
        for res in getattr(bench, "derived", lambda done: [])(list(done)) if derive else []:
            done.append(res)
            if on_result:
                on_result(res)
    except KeyboardInterrupt as e:
        raise Interrupted(done, signum_of(e)) from None
    finally:
        finish = getattr(bench, "finish", None)   # a family's resources kept across cases
        if finish is not None:
            finish()
    return done


@contextmanager
def core_errors(allocating: str = "the buffer") -> Iterator[None]:
    """The C core's exceptions as ours: ValueError (a bad argument the C side caught) and
    OSError (memory it could not get) are the user's to fix; RuntimeError is a kernel whose
    own validation failed, so its number is not a result."""
    try:
        yield
    except ValueError as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"cannot allocate {allocating}: {e}") from None
    except RuntimeError as e:
        raise MeasurementError(str(e)) from None
