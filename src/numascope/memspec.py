"""MemorySpec: where a benchmark's memory lives and on which pages — one object shared by
bandwidth, latency, matrix, compression and the C core's parser (memory.c reads the dict
`to_core()` gives). Built once from numactl-style flags and checked against the topology
then; nothing downstream re-parses it.

    policy   first-touch | bind | interleave | preferred | weighted-interleave
    nodes    the nodes the policy names (empty for first-touch)
    weights  weighted-interleave: explicit page ratio placed by numascope (None: the
             kernel's MPOL_WEIGHTED_INTERLEAVE with the system weights)
    pages    none (base pages) | thp (transparent huge pages) | hugetlb (the reserved pool)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from numascope.errors import UserError
from numascope.options import DEFAULT_PAGES, PAGE_KINDS
from numascope.topology.model import Topology

POLICIES = ("first-touch", "bind", "interleave", "preferred", "weighted-interleave")
PAGES = PAGE_KINDS           # declared with the --pages option (numascope.options)
MAX_NODES = 64        # memory.c's NS_MAX_SPEC_NODES (a test checks they agree)


@dataclass(frozen=True)
class MemorySpec:
    policy: str = "first-touch"
    nodes: tuple[int, ...] = ()
    pages: str = DEFAULT_PAGES
    weights: tuple[int, ...] | None = None
    system_weights: tuple[int, ...] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise UserError(f"unknown memory policy {self.policy!r} "
                            f"(choose from {', '.join(POLICIES)})")
        if self.pages not in PAGES:
            raise UserError(f"unknown page kind {self.pages!r} (choose from {', '.join(PAGES)})")
        if self.policy != "first-touch" and not self.nodes:
            raise UserError(f"memory policy {self.policy} needs at least one node")
        if len(self.nodes) > MAX_NODES:
            raise UserError(f"at most {MAX_NODES} nodes in one memory policy")
        if self.weights is not None and self.policy != "weighted-interleave":
            raise UserError("weights belong to the weighted-interleave policy only")

    # -- building -----------------------------------------------------------------------
    @classmethod
    def from_flags(cls, topo: Topology, *, membind: str | None = None,
                   interleave: str | None = None, weighted: str | None = None,
                   preferred: str | None = None, pages: str = DEFAULT_PAGES) -> MemorySpec:
        """From numactl's words (at most one policy flag); nodes checked against `topo`."""
        from numascope.placement import parse_nodes, parse_weighted
        given = [(f, v) for f, v in (("--membind", membind), ("--interleave", interleave),
                                     ("--weighted-interleave", weighted),
                                     ("--preferred", preferred)) if v is not None]
        if len(given) > 1:
            raise UserError(f"give one memory policy, not {given[0][0]} and {given[1][0]}")
        if not given:
            return cls(pages=pages)
        flag, text = given[0]
        if not text.strip():
            raise UserError(f"{flag} is empty: give nodes such as 0,1 or N1 or all")
        if flag == "--weighted-interleave":
            return cls.from_dict({**parse_weighted(topo, text), "pages": pages})
        policy = {"--membind": "bind", "--interleave": "interleave",
                  "--preferred": "preferred"}[flag]
        return cls(policy, tuple(parse_nodes(topo, text)), pages)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> MemorySpec:
        """From a record's or the C core's dict (old records say "huge" for pages)."""
        d = d or {}
        w, sw = d.get("weights"), d.get("system_weights")
        return cls(d.get("policy") or "first-touch", tuple(int(n) for n in d.get("nodes") or ()),
                   d.get("pages") or d.get("huge") or DEFAULT_PAGES,
                   tuple(int(x) for x in w) if w else None,
                   tuple(int(x) for x in sw) if sw else None)

    def with_pages(self, pages: str) -> MemorySpec:
        return replace(self, pages=pages)

    # -- using --------------------------------------------------------------------------
    @property
    def first_touch(self) -> bool:
        return self.policy == "first-touch"

    def to_core(self) -> dict[str, Any]:
        """The dict memory.c parses (its key for the page kind is "huge")."""
        d: dict[str, Any] = {"policy": self.policy, "nodes": list(self.nodes),
                             "huge": self.pages}
        if self.weights is not None:
            d["weights"] = list(self.weights)
        return d

    def to_dict(self) -> dict[str, Any]:
        """For records: the fields above, system weights when the kernel's are used."""
        d: dict[str, Any] = {"policy": self.policy, "nodes": list(self.nodes),
                             "pages": self.pages}
        if self.weights is not None:
            d["weights"] = list(self.weights)
        if self.system_weights is not None:
            d["system_weights"] = list(self.system_weights)
        return d

    def describe(self, default_pages: str = DEFAULT_PAGES) -> str:
        """Short words for tables: "first-touch", "bind N1", "interleave N0,N1",
        "weighted N0:3,N1:1"; the page kind when it is not the command's default."""
        nodes = ",".join(f"N{n}" for n in self.nodes)
        if self.policy == "first-touch":
            s = "first-touch"
        elif self.policy == "weighted-interleave":
            from numascope.placement import format_weighted
            s = f"weighted {format_weighted(self.to_dict())}"
        else:
            s = f"{self.policy} {nodes}"
        return s if self.pages == default_pages else f"{s} {self.pages}"


def check_nodes(topo: Topology, memory: MemorySpec | dict[str, Any] | None) -> MemorySpec:
    """The MemorySpec (a record's or the C core's dict is read too, old "huge" key
    included) with its nodes checked against the topology; a weighted interleave checked
    and completed (lowest terms, or the kernel's system weights: Unavailable without them).
    Every family that places memory checks its spec here."""
    from numascope import placement
    spec = memory if isinstance(memory, MemorySpec) else MemorySpec.from_dict(memory)
    have = topo.node_ids()
    for n in spec.nodes:
        if n not in have:
            raise UserError(f"node {n} does not exist (nodes: "
                            f"{placement.format_cpulist(have) or 'none'})")
    if spec.policy == "weighted-interleave":
        spec = MemorySpec.from_dict(placement.check_weighted(topo, spec.to_dict()))
    return spec
