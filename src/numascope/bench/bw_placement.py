"""Is the memory where it was asked to be? Judged from the page locations the kernel sampled.

A bind or interleave policy that left pages on other nodes makes the result a lie about its
own label: that raises MeasurementError. First touch that landed off the thread's node (the
node was full, or pages were migrated) is flagged in the result instead."""

from __future__ import annotations

from typing import Any

from numascope.errors import MeasurementError

FIRST_TOUCH_SLACK = 0.05       # share of a thread's pages allowed off its node before flagging
INTERLEAVE_MIN_SHARE = 0.5     # a node below half its even share of pages is flagged


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
    total = _counts(pages)
    absent = total.pop(-1, 0)
    present = sum(total.values())
    if absent:
        notes.append(f"{absent} of {absent + present} sampled pages were not present")
    if not present:
        return False, notes + ["no sampled page was present: placement unknown"]
    policy = (memory or {}).get("policy", "first-touch")
    nodes = [int(n) for n in (memory or {}).get("nodes") or []]
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
