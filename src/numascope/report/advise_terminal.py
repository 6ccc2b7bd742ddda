"""`numascope advise` in the terminal: its sections (numascope.advice.sections,
numascope.predict.section) as wrapped lines within 80 columns, each command printed so that
every line of it pastes into a shell."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

from numascope.console import out


def print_sections(sections: list[dict[str, Any]], *, all_checks: bool = False,
                   recipe_lines: list[str] | None = None) -> None:
    """Each section in turn, a blank line between; `recipe_lines` are the recipe's own
    (numascope.advice.sections.recipe), `all_checks` shows every check's effect."""
    for i, sec in enumerate(sections):
        if i:
            out.print()
        name = sec["section"]
        if name == "readiness":
            render_readiness(sec, all_checks)
        elif name == "recipe":
            for line in recipe_lines or []:
                out.print(line, markup=False, highlight=False, soft_wrap=True)
        elif name == "predict":
            render_predict(sec, say, command)
        else:
            render_advice(sec)


def _width() -> int:
    return max(40, min(out.width or 80, 80))


def say(text: str, indent: int = 0, first: str | None = None) -> None:
    pad = " " * indent
    for line in textwrap.wrap(text, _width(), initial_indent=first if first is not None
                              else pad, subsequent_indent=pad, break_on_hyphens=False,
                              break_long_words=True) or [pad]:
        out.print(line, markup=False, highlight=False, soft_wrap=True)


def command(label: str, cmd: str, indent: int) -> None:
    """A command within the width, never cut inside a word: split first after shell
    separators ("; ", "&& ", "do ") and before a remark in parentheses, so each printed line
    pastes as a valid continuation; a piece still too long is broken between words, each
    broken line ending in " \\" (the shell's continuation)."""
    parts, cur = [], []
    for tok in cmd.split(" "):
        if tok.startswith("(") and cur:     # "(in Slurm: …)": a remark, its own piece
            parts.append(" ".join(cur))
            cur = []
        cur.append(tok)
        if tok in (";", "&&", "do", "||") or tok.endswith(";"):
            parts.append(" ".join(cur))
            cur = []
    if cur:
        parts.append(" ".join(cur))
    width = _width()
    first, pad = " " * indent + label, " " * (indent + 2)
    lines, line = [], first
    for part in parts:
        sep = "" if line == first else " "
        if len(line) + len(sep) + len(part) <= width:
            line += sep + part
            continue
        if line != first:
            lines.append(line)
            line = pad
        for word in part.split(" "):
            fresh = line in (first, pad)
            if not fresh and len(line) + 1 + len(word) + 2 > width:
                lines.append(line + " \\")
                line = pad + word
            else:
                line += ("" if fresh else " ") + word
    lines.append(line)
    for x in lines:
        out.print(x, markup=False, highlight=False, soft_wrap=True)


def render_readiness(sec: dict[str, Any], all_checks: bool = False) -> None:
    c = sec["counts"]
    say(f"readiness of {sec['source']}: {c['warn']} warn, {c['info']} info, {c['ok']} ok, "
         f"{c['unknown']} unknown (numascope changes none of these itself)")
    for ch in sec["items"]:
        say(f"{ch['title']}: {ch['value']}", 10, f"  {ch['status']:<8}")
        if ch["status"] in ("warn", "info") or all_checks:
            if ch["effect"]:
                say("effect: " + ch["effect"], 12, " " * 10)
            if ch["fix"]:
                command("change: ", ch["fix"], 10)


def render_advice(sec: dict[str, Any]) -> None:
    runs = sec["runs"]
    if runs:
        say(f"advice from {len(runs)} run{'s' if len(runs) != 1 else ''}: "
             + ", ".join(runs))
    if sec["note"]:
        say(sec["note"], 2, "  " if runs else "")
    for i, a in enumerate(sec["items"], 1):
        say(a["title"], 6, f"  {i:>2}. ")
        say(a["detail"], 6)
        if a["command"]:
            command("command: ", a["command"], 6)
        say(f"rule {a['rule']}; evidence: " + "; ".join(_evidence(e) for e in a["evidence"]),
             8, " " * 6)
        if a.get("threshold"):
            t = a["threshold"]
            say(f"threshold {t['value']:g}: {t['source']}", 8, " " * 6)


def _evidence(e: dict[str, Any]) -> str:
    if "side" in e:
        med = e.get("median")
        return (f"{e['side']} {e['case']} {e['metric']} median of {e['n']} runs "
                + (f"{med:.4g} {e['unit']}" if isinstance(med, (int, float)) else "-"))
    if "case" in e:
        med = e.get("median")
        return (f"{e['run_id']} {e['case']} {e['metric']} median {med:.4g} {e['unit']} "
                f"(n={e['n']})" if isinstance(med, (int, float)) else
                f"{e['run_id']} {e['case']} {e['metric']}")
    if "check" in e:
        return f"{e['run_id']} {e['check']}={e['value']}"
    return f"{e.get('run_id', '')} " + ", ".join(f"{k} {v}" for k, v in e.items()
                                                 if k != "run_id")


def _g(x: float | None) -> str:
    return "no data" if x is None else f"{x:.3g}"


def _gbs(x: float | None) -> str:
    """A figure with its unit, or "no data" alone (never "no data GB/s")."""
    return "no data" if x is None else f"{x:.3g} GB/s"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:+.1f} %"


def _k(kind: str | None) -> str:
    """A figure's kind after it: " (lookup)"; nothing for no figure."""
    return f" ({kind})" if kind else ""


def render_predict(sec: dict[str, Any], say: Callable[..., None],
                   command: Callable[..., None]) -> None:
    from numascope.predict.model import weakest
    say(f"predicted from run {sec['run']} ({sec['kernel']}, GB/s in STREAM bytes), "
        "best first:")
    if sec.get("note"):
        say(sec["note"], 2, "  ")
    for i, it in enumerate(sec["items"], 1):
        p = it["prediction"]
        rks = p["ranks"]
        kinds = {r.get("gbs_kind") for r in rks if r["gbs"] is not None}
        per = ", ".join(_g(r["gbs"]) + ("" if len(kinds) == 1 else _k(r.get("gbs_kind")))
                        for r in rks) + (_k(kinds.pop()) if len(kinds) == 1 else "")
        idle = [r["idle_ns"] for r in rks if r["idle_ns"] is not None]
        loaded = [r["loaded_ns"] for r in rks if r["loaded_ns"] is not None]
        lat = (f"; latency idle {sum(idle) / len(idle):.0f} ns"
               + _k(weakest(*(r.get("idle_kind") for r in rks))) if idle else "") + \
            (f", loaded {sum(loaded) / len(loaded):.0f} ns"
             + _k(weakest(*(r.get("loaded_kind") for r in rks))) if loaded else "")
        same = it["same_as"]      # other layouts giving the same CPUs: counted, listed by --json
        same = (f" (also {same[0]})" if len(same) == 1 else
                f" (the same CPUs as {len(same)} other layouts: --json lists them)"
                if same else "")
        say(f"{it['label']}{same}: total {_gbs(p['total_gbs'])}"
            f"{_k(p.get('total_kind') if p['total_gbs'] is not None else None)}, "
            f"per rank {per}{lat}", 6, f"  {i:>2}. ")
        command("", it["openmpi"], 6)
        bases: dict[tuple[str, str], list[int]] = {}
        for r in rks:
            if r.get("gbs_kind"):
                bases.setdefault((r["gbs_kind"], r.get("gbs_basis", "")), []).append(r["rank"])
        for (kind, basis), who in bases.items():
            ranks = "" if len(rks) == 1 else \
                f" (rank{'s' if len(who) > 1 else ''} {', '.join(map(str, who))})"
            say(f"{kind}{ranks}: {basis}", 8, " " * 6)
        v = it.get("verified")
        if v:
            say(f"measured ({v['launcher']}, run {v['run_id']}): total {v['total_gbs']:.3g} "
                f"GB/s (error {_pct(v['error_percent'])}"
                + (f", against a {v['predicted_kind']} figure" if v.get("predicted_kind")
                   else "")
                + "); per rank "
                + ", ".join(f"{r['gbs']:.3g} ({_pct(r['error_percent'])}"
                            + (", bimodal)" if r.get("bimodal") else ")")
                            for r in v["ranks"]), 8, " " * 6)
        for x in p["extrapolated"]:
            say("extrapolated: " + x, 8, " " * 6)
        for x in p["no_data"]:
            say(x, 8, " " * 6)
        for x in p["notes"]:
            say("note: " + x, 8, " " * 6)
        say("from: " + "; ".join(f"{u['case']} {u['median']:.4g} {u['unit']} (n={u['n']}"
                                 + (", bimodal)" if u.get("bimodal") else ")")
                                 for u in p["used"]), 8, " " * 6)
    say("why: " + sec["why"])
    if "accuracy" in sec:
        # one line per kind, never pooled: a lookup's error is the machine's
        # reproducibility, a model's is the model's
        acc = sec["accuracy"]
        if not acc:
            say("errors by the prediction's kind: no figure had a prediction")
        for k, a in acc.items():
            say(f"errors of {k} figures ({a['meaning']}): "
                + ", ".join(f"{e:+.1f}" for e in a["errors_percent"])
                + f" % (median |error| {a['median_abs_error_percent']:.1f} %)")
