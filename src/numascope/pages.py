"""Is the memory where it was asked to be? Judged from the page locations the kernel sampled.

A bind or interleave policy that left pages on other nodes makes the result a lie about its
own label: that raises MeasurementError. First touch that landed off the thread's node (the
node was full, or pages were migrated) is flagged in the result instead."""

from __future__ import annotations

import math
from typing import Any

from numascope.errors import MeasurementError

# sources: numascope.sources (Dell HPC lab, Naples 2018; Linux NUMA Memory Policy docs)
FIRST_TOUCH_SLACK = 0.05       # share of a thread's pages allowed off its node before flagging
INTERLEAVE_MIN_SHARE = 0.5     # a node below half its even share of pages is flagged
WEIGHTED_TOLERANCE = 0.05      # |achieved - asked| share per node, beyond the sampling error


def _counts(pages: dict[Any, int]) -> dict[int, int]:
    return {int(k): int(v) for k, v in pages.items()}


def _fmt(nodes: dict[int, int]) -> str:
    return ", ".join(f"N{k}: {v}" if k >= 0 else f"absent: {v}" for k, v in sorted(nodes.items()))


def check_placement(memory: dict[str, Any] | None, cpu_nodes: list[int | None],
                    pages: dict[Any, int], by_thread: list[dict[Any, int]],
                    sampled: int) -> tuple[bool, list[str]]:
    """(ok, notes) for sampled page locations. Raises MeasurementError when pages left the
    nodes of an explicit bind/interleave policy."""
    notes: list[str] = []
    if sampled < 0:
        return True, ["page location unknown: the kernel refused move_pages here"]
    total = {n: c for n, c in _counts(pages).items() if c}     # a node with no page is none
    absent = total.pop(-1, 0)
    present = sum(total.values())
    if absent:
        notes.append(f"{absent} of {absent + present} sampled pages were not present")
    if not present:
        return False, notes + ["no sampled page was present: placement unknown"]
    policy = (memory or {}).get("policy", "first-touch")
    nodes = [int(n) for n in (memory or {}).get("nodes") or []]
    if policy == "weighted-interleave":
        return check_fractions(memory or {}, total, present), notes
    if policy in ("bind", "interleave"):
        off = {n: c for n, c in total.items() if n not in nodes}
        if off:
            raise MeasurementError(
                f"memory {policy} to node(s) {','.join(map(str, nodes))} but "
                f"{sum(off.values())} of {present} sampled pages are elsewhere ({_fmt(total)})")
        if policy == "interleave" and len(nodes) > 1:
            even = present / len(nodes)
            thin = [n for n in nodes if total.get(n, 0) < INTERLEAVE_MIN_SHARE * even]
            if thin:
                notes.append(f"interleave is uneven: {_fmt(total)}")
                return False, notes
        return True, notes
    if policy == "preferred":
        off = sum(c for n, c in total.items() if n not in nodes)
        if off:
            notes.append(f"{off} of {present} sampled pages are off the preferred node(s) "
                         f"({_fmt(total)})")
            return False, notes
        return True, notes
    # first touch: each thread's chunk should sit on the node of that thread's CPU
    ok = True
    for tid, (node, tp) in enumerate(zip(cpu_nodes, by_thread)):
        if node is None:
            continue
        tc = _counts(tp)
        tc.pop(-1, None)
        n = sum(tc.values())
        off = n - tc.get(node, 0)
        if n and off > FIRST_TOUCH_SLACK * n:
            ok = False
            notes.append(f"first touch: {off} of {n} sampled pages of thread {tid} are off its "
                         f"node N{node} ({_fmt(tc)}); node full or pages migrated?")
    return ok, notes


def fraction_tolerance(share: float, sampled: int) -> float:
    """WEIGHTED_TOLERANCE plus two standard errors of a share estimated from `sampled`
    pages (the pages are sampled, not all read)."""
    return WEIGHTED_TOLERANCE + 2 * math.sqrt(share * (1 - share) / max(sampled, 1))


def achieved_fractions(pages: dict[Any, int]) -> dict[int, float]:
    """Node → share of the present sampled pages (absent pages left out)."""
    total = {k: v for k, v in _counts(pages).items() if k >= 0}
    n = sum(total.values())
    return {k: v / n for k, v in sorted(total.items())} if n else {}


def check_fractions(memory: dict[str, Any], pages: dict[Any, int], present: int) -> bool:
    """A weighted interleave must put each node's share of the pages within the tolerance
    of the share asked; MeasurementError otherwise (the result would not be the ratio its
    label names). True when it does."""
    from numascope.placement import format_weighted, weighted_fractions
    want = weighted_fractions(memory)
    got = achieved_fractions(pages)
    off = {n: c for n, c in _counts(pages).items() if n >= 0 and n not in want}
    if off:
        raise MeasurementError(
            f"weighted interleave {format_weighted(memory)}: {sum(off.values())} of {present} "
            f"sampled pages are on other nodes ({_fmt(_counts(pages))})")
    for n, share in want.items():
        if abs(got.get(n, 0.0) - share) > fraction_tolerance(share, present):
            raise MeasurementError(
                f"weighted interleave {format_weighted(memory)}: N{n} should hold "
                f"{100 * share:.1f}% of the pages but holds {100 * got.get(n, 0.0):.1f}% of "
                f"{present} sampled ({_fmt(_counts(pages))})")
    return True
