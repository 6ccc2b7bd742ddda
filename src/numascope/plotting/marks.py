"""What every figure shares: the value it draws (a metric's median, the figure the tables
show), that median's interval as error bars, the value written on the figure in the tables'
rounding (numascope.console.show), and the caption.

The caption protocol: a figure module still returns [(title, Figure)]; its caption is the
figure's label, set by `captioned(fig, text)` and read by `caption_of(fig)` (matplotlib's
Figure.set_label / get_label, which nothing else of numascope uses). The report shows it
under the figure (report.figures.render.embed).

The interval of a median, in this order:
- the result was repeated until steady (--reps auto, params["steady"] of this metric): the
  stored 95 % Student t interval over its units (numascope.steady: the interval another
  invocation's estimate falls in), the one tables and `compare` use; the units are
  separate allocations, or for compression separate calls over one store (the caption
  says which);
- otherwise, with at least MIN_ORDER_N repetitions: the distribution-free 95 %
  order-statistics interval of the median (H. A. David, H. N. Nagaraja, "Order Statistics",
  3rd ed., Wiley 2003, sec. 7.1): the sorted repetitions s(k) and s(n+1-k), k the largest
  rank with P(Binomial(n, 1/2) < k) <= 2.5 %. It needs no shape of the spread, and it exists
  from 6 values (5 give less than 95 % coverage even for s(1)..s(5)). A bootstrap of the
  median on 5-10 repetitions takes only the few sample values as its own distribution,
  so it was not used. Repetitions of one call share an allocation: such an interval says
  how steady that call was, not where another call lands; the caption says so;
- fewer repetitions: no interval (the caption says so).
A steady interval of zero width (the allocations' medians agree exactly: quantised values)
is no 95 % interval but a zero spread, and the caption says that (kind ZERO), not "95 %".
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from numascope.console import show
from numascope.results.record import Metric
from numascope.steady import fresh

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

CONFIDENCE = 0.95
MIN_ORDER_N = 6          # the fewest values with a 95 % order-statistics interval

# a value written over a line or a bar stays readable (a white box behind it)
READABLE = {"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.75}

STEADY = "steady"        # interval kinds, as captions name them
STEADY_CALLS = "steady calls"     # the units were calls over one allocation (compress)
ORDER = "order"
ZERO = "zero"            # a steady interval of zero width: a zero spread, no bar

_KIND_TEXT = {
    STEADY: "95 % Student t interval over separate allocations (--reps auto): where "
            "another invocation's estimate falls, centred on the mean of the allocations' "
            "medians",
    STEADY_CALLS: "95 % Student t interval over separate calls on one allocation (--reps "
                  "auto; compression builds its store once per setting): how steady that "
                  "store's figure was, centred on the mean of the calls' medians",
    ORDER: "95 % order-statistics interval of the median over the repetitions of one call "
           "(one allocation: not the spread between calls)",
    ZERO: "none where the separate allocations' medians agree exactly (--reps auto: a zero "
          "spread, not an interval)",
}


def captioned(fig: Figure, text: str) -> Figure:
    """`fig` with its caption (the text the report shows under it)."""
    fig.set_label(" ".join(text.split()))
    return fig


def caption_of(fig: Figure) -> str:
    """The caption set by `captioned`; "" when the module set none."""
    label = fig.get_label()
    return label if isinstance(label, str) else ""


def label(v: float) -> str:
    """A value written on a figure: the tables' rounding (4 significant digits)."""
    return show(float(v))


def _order_ranks(n: int, confidence: float = CONFIDENCE) -> int | None:
    """The 1-based rank k of the interval s(k)..s(n+1-k), None below MIN_ORDER_N values."""
    if n < MIN_ORDER_N:
        return None
    tail = (1 - confidence) / 2
    cdf, k = 0.0, 0
    # P(B <= j) for B ~ Binomial(n, 1/2), summed exactly while it stays within the tail
    while True:
        nxt = cdf + math.comb(n, k) / 2 ** n
        if nxt > tail:
            break
        cdf, k = nxt, k + 1
    return k if k >= 1 else None


def order_interval(values: list[float], confidence: float = CONFIDENCE
                   ) -> tuple[float, float] | None:
    """The distribution-free interval of the median of `values` (see the module's doc)."""
    vals = sorted(v for v in values if math.isfinite(v))
    k = _order_ranks(len(vals), confidence)
    if k is None:
        return None
    return vals[k - 1], vals[len(vals) - k]


@dataclass
class Interval:
    low: float
    high: float
    kind: str            # STEADY | STEADY_CALLS | ORDER


def interval(m: Metric, params: dict[str, Any] | None = None) -> Interval | None:
    """The interval of `m`'s median (see the module's doc); None without one."""
    s = (params or {}).get("steady")
    if isinstance(s, dict) and s.get("metric") == m.name:
        lo, hi = (s.get("interval") or [math.nan, math.nan])[:2]
        if lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi):
            return Interval(float(lo), float(hi), ZERO if lo == hi else
                            STEADY if fresh(s) else STEADY_CALLS)
    iv = order_interval(m.values)
    return Interval(iv[0], iv[1], ORDER) if iv else None


@dataclass
class Medians:
    """Collects what a figure drew, for its caption: the interval kinds used and the fewest
    repetitions of a value drawn without one."""
    kinds: set[str] = field(default_factory=set)
    bare: int = 0                       # values drawn without an interval
    bare_n: set[int] = field(default_factory=set)

    def of(self, m: Metric, params: dict[str, Any] | None = None
           ) -> tuple[float, float, float]:
        """(median, below, above): the median and its error bar's extent, 0 without an
        interval (an interval not around the median, the steady one's mean of allocations,
        is clipped at the median)."""
        med = m.median
        iv = interval(m, params)
        if iv is None:
            self.bare += 1
            self.bare_n.add(len(m.values))
            return med, 0.0, 0.0
        self.kinds.add(iv.kind)
        return med, max(med - iv.low, 0.0), max(iv.high - med, 0.0)

    def text(self) -> str:
        """The caption's sentence on what the points and bars are."""
        parts = [("Points and bars are medians of the repetitions (the tables' median), "
                 "written in the tables' rounding.")]
        if self.kinds:
            parts.append("Error bars: " + "; or ".join(_KIND_TEXT[k] for k in sorted(
                self.kinds, key=list(_KIND_TEXT).index)) + ".")
        if self.bare:
            ns = ", ".join(str(n) for n in sorted(self.bare_n))
            parts.append(f"{'No value has' if not self.kinds else 'Values without bars have'}"
                         f" an interval: n = {ns} repetitions, fewer than the "
                         f"{MIN_ORDER_N} a 95 % interval of a median needs.")
        return " ".join(parts)


def errorbars(ax: Axes, xs: list[float], meds: list[float], below: list[float],
              above: list[float], **kw: Any) -> Any:
    """Error bars only where there is an extent (a zero-length bar draws nothing)."""
    if any(below) or any(above):
        style = {"ecolor": "black", "elinewidth": 1, "capsize": 3} | kw
        return ax.errorbar(xs, meds, yerr=[below, above], fmt="none", **style)
    return None


def median_bars(ax: Axes, x: list[float], drawn: list[tuple[float, float, float]],
                fontsize: float = 7, **bar_kw: Any) -> list[float]:
    """Bars at the medians of `drawn` (Medians.of's triples) with their error bars and the
    values written above them; returns the medians."""
    ys = [d[0] for d in drawn]
    ax.bar(x, ys, **bar_kw)
    above = [d[2] for d in drawn]
    errorbars(ax, x, ys, [d[1] for d in drawn], above)
    write_values(ax, x, ys, above, fontsize=fontsize)
    return ys


def write_values(ax: Axes, xs: list[float], ys: list[float], above: list[float] | None = None,
                 fontsize: float = 7, **kw: Any) -> None:
    """Write each value above its point (above its error bar where there is one)."""
    for i, (x, y) in enumerate(zip(xs, ys)):
        if not math.isfinite(y):
            continue
        top = y + (above[i] if above else 0.0)
        ax.annotate(label(y), (x, top), textcoords="offset points", xytext=(0, 3),
                    ha="center", va="bottom", fontsize=fontsize, bbox=READABLE, **kw)


def wrapped(text: str, width_in: float, fontsize: float = 10) -> str:
    """`text` broken into lines that fit `width_in` inches at `fontsize` points (a title
    wider than its figure is clipped)."""
    chars = max(int(width_in * 72 / (fontsize * 0.6)), 16)
    return textwrap.fill(text, chars)
