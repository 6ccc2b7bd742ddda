"""Result records: what every benchmark returns, versioned so stored runs stay readable.

A BenchResult is one measured case (one kernel, placement, size …) with every repetition
kept; statistics are derived, never stored instead of the samples."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 2   # 2: bandwidth timing window, latency stride, huge-page share


# slots: a fleet's analysis holds ~20 of these per node, 10,000s of nodes
@dataclass(slots=True)
class Metric:
    name: str                 # e.g. "bandwidth", "latency"
    unit: str                 # e.g. "GB/s" (10^9 B/s), "ns"
    higher_is_better: bool
    values: list[float]       # every repetition, in order
    note: str = ""            # convention, e.g. "STREAM bytes: 24 B/element"

    @property
    def median(self) -> float:
        return statistics.median(self.values) if self.values else math.nan

    def percentile(self, q: float) -> float:
        """The q-th percentile (q from 0 to 100) of the samples, by linear interpolation
        between the two nearest ranks (numpy's default, "linear"): with the samples sorted
        as s[0..n-1], the rank is k = (n - 1) * q / 100 and the value
        s[floor(k)] + (s[ceil(k)] - s[floor(k)]) * (k - floor(k)). percentile(50) is the
        median (the mean of the two middle samples when n is even); NaN without samples."""
        if not 0 <= q <= 100:
            raise ValueError(f"percentile must be from 0 to 100 (got {q})")
        if not self.values:
            return math.nan
        s = sorted(self.values)
        k = (len(s) - 1) * q / 100.0
        lo, hi = math.floor(k), math.ceil(k)
        return s[lo] + (s[hi] - s[lo]) * (k - lo)

    @property
    def min(self) -> float:
        return min(self.values) if self.values else math.nan

    @property
    def max(self) -> float:
        return max(self.values) if self.values else math.nan

    @property
    def best(self) -> float:
        return self.max if self.higher_is_better else self.min

    @property
    def cv(self) -> float:
        """Coefficient of variation (stdev / mean); NaN with fewer than 2 samples."""
        if len(self.values) < 2:
            return math.nan
        mean = statistics.fmean(self.values)
        return statistics.stdev(self.values) / mean if mean else math.nan

    @property
    def spread(self) -> float:
        """(max - min) / median: the whole range relative to the typical value."""
        m = self.median
        return (self.max - self.min) / m if self.values and m else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "unit": self.unit, "higher_is_better": self.higher_is_better,
            "values": list(self.values), "note": self.note,
            "median": self.median, "min": self.min, "max": self.max,
            "best": self.best, "cv": self.cv, "spread": self.spread,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Metric:
        return cls(d["name"], d["unit"], d["higher_is_better"], list(d["values"]),
                   d.get("note", ""))


@dataclass(slots=True)
class BenchResult:
    family: str               # "bandwidth", "latency", "matrix", "c2c", "compress", "compute" …
    case: str                 # human label, unique within a run: "triad avx512-nt compact 2T"
    params: dict[str, Any]
    metrics: dict[str, Metric]
    placement: dict[str, Any] = field(default_factory=dict)  # cpus, memory policy, pages/node
    notes: list[str] = field(default_factory=list)           # warnings, disturbances
    validated: bool = True
    # per metric name, the distribution behind it where one was kept (latency: a histogram
    # of single loads, "edges" and "counts"); in the JSON only when there is one
    distributions: dict[str, dict[str, Any]] = field(default_factory=dict)

    def metric(self, name: str) -> Metric:
        return self.metrics[name]

    def to_dict(self) -> dict[str, Any]:
        d = {
            "family": self.family, "case": self.case, "params": self.params,
            "metrics": {k: m.to_dict() for k, m in self.metrics.items()},
            "placement": self.placement, "notes": list(self.notes),
            "validated": self.validated,
        }
        if self.distributions:
            d["distributions"] = self.distributions
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BenchResult:
        return cls(
            family=d["family"], case=d["case"], params=dict(d["params"]),
            metrics={k: Metric.from_dict(m) for k, m in d["metrics"].items()},
            placement=dict(d.get("placement", {})), notes=list(d.get("notes", [])),
            validated=d.get("validated", True),
            distributions=dict(d.get("distributions", {})),
        )
