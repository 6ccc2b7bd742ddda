"""The one-word verdicts of the headline figures, each with the rule that gave it and the
rule's source (numascope.sources): the report says why, never only what.

- the all-core triad against the DRAM peak: "low" under the fleet screen's floor
  (fleet.outliers.FLOOR, 59 %, derived from the Dell HPC and AI Innovation Lab's figures),
  "ok" from it up to 100 %, "check" above 100 % (the peak's assumption is too low);
- one core per L3 against all cores: "saturates" from advice.L3_SATURATION (95 %) of the
  all-core triad, else "short" (dell-rome-2019: one core per CCX is 9-17 % above all cores);
- remote over local latency: "slower" beyond advice.PRACTICAL (5 %), else "flat"
  (dell-naples-2018: remote memory 30-65 % slower; identical servers differ by 5 %);
- compression: "wins" when the best codec beats the plain sum (a crossover), else "loses";
- a published figure that matches the host (numascope.references) and is the same
  quantity measured the same way (its reach, path, kernel and threads, where the
  publication states them, are the figure's: references.measured_otherwise): within
  REFERENCE_SPREAD (10 %: identical servers' STREAM figures differ by 5-10 %,
  dell-rome-2019) it is "as published", beyond it "low"/"high" ("slow"/"fast" where lower
  is better); it gives the verdict only where no rule above did. One measured otherwise is
  not set beside the figure; the line says which and why (Headline.reference_other).
A figure that did not converge, whose repetitions were bimodal, or of a run the noise check
called disturbed is "inconclusive", with what the rule would have said: too little evidence
is neither a pass nor a flag (DESIGN, "Verdicts")."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from numascope.results.headline import Headline
from numascope.results.run import RunRecord

REFERENCE_SPREAD = 0.10


def _short(key: str) -> str:
    """'Dell HPC and AI Innovation Lab, 2018' from a publication key."""
    from numascope.sources import PUBLICATIONS
    p = PUBLICATIONS[key]
    who = p.who.split(" (")[0]
    year = next((w for w in p.when.replace(",", " ").split() if w.isdigit() and len(w) == 4),
                p.when)
    return f"{who}, {year}"


def _floor() -> float:
    from numascope.fleet.outliers import FLOOR
    return FLOOR


def peak_rule(h: Headline) -> tuple[str, str] | None:
    if h.key != "triad_all_cores" or h.peak_pct is None:
        return None
    floor = 100 * _floor()
    basis = (f"the fleet screen's {floor:.0f} % floor (fleet.outliers.FLOOR: healthy "
             f"2-socket EPYC triads reach 66-79 % of peak, less the 10 % server spread; "
             f"{_short('dell-naples-2018')}, 2019)")
    if h.peak_pct > 100:
        return "check", (f"{h.peak_pct:.0f} % of peak: above 100 %, the peak's clock or "
                         "memory assumption is too low")
    if h.peak_pct < floor:
        return "low", f"{h.peak_pct:.0f} % of peak, below {basis}"
    return "ok", f"{h.peak_pct:.0f} % of peak, at or above {basis}"


def pair_rule(h: Headline, by_key: dict[str, Headline]) -> tuple[str, str] | None:
    if h.key == "triad_one_per_l3" and "triad_all_cores" in by_key:
        from numascope.advice import L3_SATURATION
        share = h.value / by_key["triad_all_cores"].value
        limit = L3_SATURATION.value
        word = "saturates" if share >= limit else "short"
        return word, (f"{100 * share:.0f} % of the all-core triad; from {100 * limit:.0f} % "
                      "one core per L3 "
                      f"reaches it (advice.L3_SATURATION, {_short('dell-rome-2019')})")
    if h.key == "remote_local_latency":
        from numascope.advice import PRACTICAL
        word = "slower" if h.value > 1 + PRACTICAL.value else "flat"
        return word, (f"remote {h.value:.2f}x local; beyond {1 + PRACTICAL.value:.2f}x is "
                      f"an effect (advice.PRACTICAL, {_short('dell-rome-2019')})")
    if h.key == "compress_sum_peak":
        wins = "beats plain from" in h.detail
        return ("wins" if wins else "loses"), (
            "the best codec's median against the plain sum's, same threads")
    return None


def reference_text(h: Any, matches: Iterable[Any]
                   ) -> tuple[str, str, list[str]] | None:
    """The published figure beside `h`: (verdict word, text, its notes: normalisations
    and caveats), or None without a match of its quantity (and scope, and unit); an HPL
    line without a published GFLOP/s is set beside a published HPL efficiency by its % of
    peak. `matches` are numascope.references.Match objects (or alike: quantity,
    value, unit, matched, notes, ref with lab_authors and date)."""
    matches = list(matches)
    if h.key == "hpl_gflops" and getattr(h, "peak_pct", None) is not None and not any(
            m.quantity == "hpl_gflops" for m in matches):
        # a published HPL efficiency: set beside this run's HPL % of its peak
        pct_line = Headline("hpl_efficiency", h.what, h.peak_pct, "%", h.section,
                            how=dict(getattr(h, "how", {}) or {}))
        return reference_text(pct_line, matches)
    got = [m for m in _quantity(h, matches) if not _otherwise(m, h)]
    if not got:
        return None
    m = got[0]
    try:
        from numascope.references import percent_of
        pct = percent_of(m, h.value * _unit(h.unit)[1] / _unit(m.unit)[1])
    except ImportError:          # a build without the reference table: the same ratio
        pct = 100.0 * h.value * _unit(h.unit)[1] / _unit(m.unit)[1] / m.value
    ref = m.ref
    who = str(getattr(ref, "lab_authors", "")).split(" (")[0]
    year = str(getattr(ref, "date", ""))[:4]
    lo, hi = 100 * (1 - REFERENCE_SPREAD), 100 * (1 + REFERENCE_SPREAD)
    if lo <= pct <= hi:
        word = "as published"
    elif (pct < lo) == h.higher_is_better:
        word = "low" if h.higher_is_better else "slow"
    else:
        word = "high" if h.higher_is_better else "fast"
    alike = _how_words(getattr(m, "how", None) or {})
    text = (f"{pct:.0f} % of the published {m.value:.4g} {m.unit} ({who}, {year}; matched "
            f"{', '.join(m.matched)}" + (f"; measured alike: {alike}" if alike else "") + ")")
    return word, text, list(m.notes)


def reference_other(h: Any, matches: Iterable[Any]) -> str:
    """Why the published figures of `h`'s quantity that match the host are not set beside
    it (each measured otherwise: between hosts against within a host, triad against read
    …), in one sentence; "" where one is set beside it or none of its quantity matches."""
    matches = list(matches)
    if h.key == "hpl_gflops" and getattr(h, "peak_pct", None) is not None and not any(
            m.quantity == "hpl_gflops" for m in matches):
        pct_line = Headline("hpl_efficiency", h.what, h.peak_pct, "%", h.section,
                            how=dict(getattr(h, "how", {}) or {}))
        return reference_other(pct_line, matches)
    got = _quantity(h, matches)
    if not got or any(not _otherwise(m, h) for m in got):
        return ""
    m = got[0]
    who = str(getattr(m.ref, "lab_authors", "")).split(" (")[0]
    year = str(getattr(m.ref, "date", ""))[:4]
    more = f" (and {len(got) - 1} more of its quantity)" if len(got) > 1 else ""
    return (f"not set beside the published {m.value:.4g} {m.unit} ({who}, {year}){more}: "
            f"measured otherwise, {_otherwise(m, h)[0]}")


def _quantity(h: Any, matches: list[Any]) -> list[Any]:
    """The matches of `h`'s quantity, unit and scope."""
    scope = getattr(h, "scope", "")
    return [m for m in matches if m.quantity == h.key and _unit(m.unit)[0] == _unit(h.unit)[0]
            and (not scope or getattr(m.ref, "scope", scope) == scope)]


def _otherwise(m: Any, h: Any) -> list[str]:
    """Why `h` is not `m`'s quantity measured the same way (references.measured_otherwise)."""
    try:
        from numascope.references import measured_otherwise
    except ImportError:          # a build without the reference table: nothing stated
        return []
    return measured_otherwise(m, getattr(h, "how", None) or {})


def _how_words(how: dict[str, Any]) -> str:
    try:
        from numascope.references import how_text
    except ImportError:
        return ""
    return how_text(how)


_UNITS = {"us": ("s", 1e-6), "µs": ("s", 1e-6), "ms": ("s", 1e-3), "ns": ("s", 1e-9),
          "MB/s": ("B/s", 1e6), "GB/s": ("B/s", 1e9)}


def _unit(u: str) -> tuple[str, float]:
    """(base unit, factor): a measured MB/s set against a published GB/s, us against µs."""
    return _UNITS.get(u, (u, 1.0))


def _reference_rule() -> str:
    return (f"within {REFERENCE_SPREAD:.0%} of the published figure is as published: "
            f"identical servers differ by 5-10 % ({_short('dell-rome-2019')})")


def disturbed(run: RunRecord) -> list[str]:
    """Why the run's numbers are disturbed (its noise warnings), or []."""
    return [str(w) for w in (run.noise or {}).get("warnings") or []]


def judge(run: RunRecord, lines: list[Headline], matches: Iterable[Any] | None = None
          ) -> None:
    """Set each line's verdict, rule and reference. `matches`: the published figures that
    match the run's host (numascope.references.matches(run.host) when None)."""
    if matches is None:
        try:
            from numascope import references
            matches = references.matches(run.host)
        except (ImportError, AttributeError):   # no reference table in this build
            matches = []
    matches = list(matches)
    by_key = {h.key: h for h in lines}
    noise = disturbed(run)
    for h in lines:
        got = peak_rule(h) or pair_rule(h, by_key)
        ref = reference_text(h, matches)
        if ref:
            h.reference, h.reference_notes = ref[1], ref[2]
            if got is None:
                got = (ref[0], _reference_rule())
        else:
            h.reference_other = reference_other(h, matches)
        if got is None:
            h.verdict, h.rule = "–", "no published rule for this figure"
            continue
        word, rule = got
        why = [w.partition(": ")[2].split(",")[0].split(" (")[0] for w in h.warnings[:1]] \
            or (["the run was disturbed"] if noise else [])
        if why:
            h.verdict, h.rule = "inconclusive", f"{why[0]}; the rule would say {word}: {rule}"
        else:
            h.verdict, h.rule = word, rule
