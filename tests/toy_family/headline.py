"""The toy family's headline line: its sum rate at the largest n measured."""

from numascope.results.headline import Headline, ok, stat


def lines(run) -> list[Headline]:
    rs = [r for r in run.results if r.family == "toy" and ok(r, "rate")]
    if not rs:
        return []
    r = max(rs, key=lambda r: r.params["n"])
    return [stat(r, "rate", "toy_rate", f"toy sum rate, n = {r.params['n']}", "toy")]
