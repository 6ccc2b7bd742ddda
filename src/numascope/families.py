"""The benchmark families, registered once. `numascope run`'s stages, the report's sections
and compare's primary metrics all find a family here, by its class — adding a family is its
module plus one line below (or `register(cls)` from outside, as the tests' toy family does).

A family class has `family` (its one name: in records, as the stage of `numascope run`, for
`compare --family`), `title`, `primary` (the metrics compare tests by default), and the
Benchmark methods: `cases(...)`, `measure(topo, case)` and `suite_cases(topo, profile)`."""

from __future__ import annotations

_extra: list[type] = []
ALIASES = {"peaks": "compute"}   # the compute family's stage name before they were one


def families() -> list[type]:
    """Every family class, in the order `numascope run` measures them."""
    from numascope.bench.bandwidth import Bandwidth
    from numascope.bench.c2c import C2C
    from numascope.bench.compress import Compress
    from numascope.bench.compute import Compute
    from numascope.bench.io import Storage
    from numascope.bench.latency import Latency
    from numascope.bench.matrix import Matrix
    from numascope.bench.net import Interconnect
    return [Compute, Bandwidth, Latency, Matrix, C2C, Compress, Storage, Interconnect, *_extra]


def register(cls: type) -> type:
    """Add a family (usable as a class decorator); its stage runs after the built-in ones."""
    for attr in ("family", "title", "measure", "suite_cases"):
        if not hasattr(cls, attr):
            raise TypeError(f"{cls.__name__} is not a family: it has no {attr}")
    if cls not in _extra:
        _extra.append(cls)
    return cls


def unregister(cls: type) -> None:
    if cls in _extra:
        _extra.remove(cls)


def by_name(name: str) -> type | None:
    """The family class called `name` (or an old alias of it)."""
    name = ALIASES.get(name, name)
    return next((c for c in families() if c.family == name), None)
