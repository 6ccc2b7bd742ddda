"""The toy family's measurement: sums 0..n-1 in Python and checks the sum (a real, if
slow, kernel)."""

import time

from numascope.benchmark import Case
from numascope.errors import MeasurementError
from numascope.results.record import BenchResult, Metric
from toy_family.options import TABLE


class Toy:
    family = "toy"
    title = "a toy family: Python sums"

    def cases(self, topo, sizes=(TABLE["n"].default,), reps=TABLE["reps"].default):
        for n in sizes:
            TABLE["n"].convert(n, "n")
        TABLE["reps"].convert(reps, "reps")
        return [Case(f"sum {n}", {"n": n, "reps": reps}) for n in sizes]

    def suite_cases(self, topo, profile):
        n = TABLE["n"].default
        return self.cases(topo, sizes=(n,) if profile.quick else (n, 2 * n), reps=profile.reps)

    def measure(self, topo, case):
        n, rates = case.params["n"], []
        for _ in range(case.params["reps"]):
            t0 = time.perf_counter()
            s = sum(range(n))
            dt = time.perf_counter() - t0
            if s != n * (n - 1) // 2:
                raise MeasurementError("sum mismatch")
            rates.append(n / dt / 1e6)
        return BenchResult(self.family, case.label, dict(case.params),
                           {"rate": Metric("rate", "Melem/s", True, rates)})
