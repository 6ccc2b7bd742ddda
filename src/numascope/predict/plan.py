"""The layouts a job shape can take on a machine (one recipe each), their predictions from
a stored run, ranked, and the one sentence that says why the best wins.

    cands = candidates(topo, ranks=2, threads=4)     # [Candidate(label, recipe), ...]
    ranked = rank([(c, predict(rec, c.shape)) for c in cands])
    why(ranked)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from numascope.advice import PRACTICAL
from numascope.errors import UserError
from numascope.layouts import UNITS
from numascope.predict.model import Prediction, RankShape
from numascope.recipes import Recipe, for_job
from numascope.topology.lists import format_list
from numascope.topology.model import Topology


@dataclass(frozen=True)
class Candidate:
    label: str                 # "1 rank per node" …: the layout, as its recipe says it
    unit: str                  # the layouts' unit that gave it
    recipe: Recipe
    same_as: tuple[str, ...] = ()   # other units that gave the same CPU sets

    @property
    def shape(self) -> list[RankShape]:
        return [RankShape(s.rank, s.threads, s.mem_nodes) for s in self.recipe.layout.slots]


def candidates(topo: Topology, ranks: int | None = None, threads: int | None = None,
               near: str | None = None, unit: str | None = None) -> list[Candidate]:
    """One candidate per distinct layout: the unit asked for, or every unit the shape fits,
    over the whole machine (spread) and packed inside the first L3, node and socket
    (compact); the same CPU sets and memory from two choices count once, the others named."""
    out: list[Candidate] = []
    seen: dict[tuple, int] = {}
    errors = []
    first = [f"L3:{topo.l3s[0].index}"] if topo.l3s else []
    first += [f"N{min(n.id for n in topo.nodes if not n.cpuless)}"] if topo.nodes else []
    first += [f"S{topo.packages[0].id}"] if topo.packages else []
    tries = [(u, None) for u in ([unit] if unit else UNITS)]
    if near is None:
        tries += [(u, w) for w in first for u in ([unit] if unit else UNITS)]
    for u, within in tries:
        try:
            r = for_job(topo, ranks=ranks, threads=threads, near=near, unit=u, within=within)
        except UserError as e:
            errors.append(str(e))
            continue
        key = tuple((s.threads, s.mem_nodes) for s in r.layout.slots)
        name = u if within is None else f"{u} inside {within}"
        if key in seen:
            c = out[seen[key]]
            out[seen[key]] = Candidate(c.label, c.unit, c.recipe, (*c.same_as, name))
            continue
        seen[key] = len(out)
        nodes = sorted({n for sl in r.layout.slots for n in sl.nodes})
        label = r.layout.describe() + ("" if within is None else f", inside {within}") + \
            f" (node{'s' if len(nodes) != 1 else ''} {format_list(nodes)})"
        out.append(Candidate(label, name, r))
    if not out:
        raise UserError(errors[0] if errors else "no layout fits this shape")
    return out


def rank(pairs: list[tuple[Candidate, Prediction]]) -> list[tuple[Candidate, Prediction]]:
    """Best first: by predicted total bandwidth; those without a figure last."""
    return sorted(pairs, key=lambda cp: (cp[1].total is None, -(cp[1].total or 0.0)))


def _spread(c: Candidate) -> tuple[int, int, int]:
    slots = c.recipe.layout.slots
    return (len({n for s in slots for n in s.mem_nodes} or {n for s in slots for n in s.nodes}),
            len({x for s in slots for x in s.l3s}), len({x for s in slots for x in s.packages}))


def why(ranked: list[tuple[Candidate, Prediction]]) -> str:
    """One sentence with the numbers: why the first wins over the next."""
    have = [(c, p) for c, p in ranked if p.total is not None]
    if not have:
        return "no layout has a prediction: " + (ranked[0][1].no_data[0] if ranked and
                                                  ranked[0][1].no_data else "no data")
    best, bp = have[0]
    per = ", ".join(f"{r.gbs:.3g}" for r in bp.ranks)
    if len(have) == 1:
        return (f"{best.label}: {bp.total:.3g} GB/s predicted (per rank {per}); no other "
                "layout of this shape has a prediction to compare")
    nxt, np_ = have[1]
    (bn, bl, bp_), (nn, nl, np2) = _spread(best), _spread(nxt)
    # the smallest difference numascope calls an effect (advice.PRACTICAL, with its source)
    if bp.total - np_.total <= PRACTICAL.value * np_.total:
        return (f"{best.label} and {nxt.label} are within {PRACTICAL.value:.0%} ({bp.total:.3g} against "
                f"{np_.total:.3g} GB/s): the model does not tell them apart")
    if (bn, bl) == (nn, nl) and bp_ != np2:
        how = f"its ranks span {bp_} package{'s' if bp_ != 1 else ''} against {np2}"
    elif (bn, bl) != (nn, nl):
        how = (f"its ranks draw on {bn} memory node{'s' if bn != 1 else ''}"
               + (f" and {bl} L3 domain{'s' if bl != 1 else ''}" if bl or nl else "")
               + f" against {nn}" + (f" and {nl}" if bl or nl else ""))
    else:
        how = ("the same number of nodes, L3s and packages, shared by the ranks "
               "differently")
    return (f"{best.label} wins with {bp.total:.3g} GB/s predicted (per rank {per}) against "
            f"{np_.total:.3g} for {nxt.label}: {how}")


def item(c: Candidate, p: Prediction) -> dict[str, Any]:
    return {"label": c.label, "unit": c.unit, "same_as": list(c.same_as),
            "openmpi": c.recipe.openmpi.line, "slurm": c.recipe.slurm.line,
            "numactl": [" ".join(a) for a in c.recipe.numactl.per_rank],
            "omp": c.recipe.omp.env, "prediction": p.to_dict()}
