"""Inter-socket link peak (AMD xGMI, Intel UPI) from the user's description.

peak = links × lanes × Gbps per lane × 2 directions / 8 bits, in GB/s (10^9 B/s). The
figure is raw signalling: encoding and protocol overhead are not subtracted (the textbook
convention, so that it can be compared with vendor tables).

Syntax: `[NAME:]LINKSxLANES@GBPS`, several separated by commas, e.g. `4x16@32`,
`xgmi:4x16@32`, `upi:3x20@16`, `xgmi:3x16@25,xgmi:1x16@16`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from numascope.errors import UserError


def link_peak_gbs(links: int, lanes: int, gbps: float) -> float:
    """links × lanes × Gbps × 2 directions / 8 → GB/s (both directions together)."""
    if links <= 0 or lanes <= 0 or gbps <= 0:
        raise ValueError("links, lanes and Gbps must be positive")
    return round(links * lanes * gbps * 2 / 8, 9)


@dataclass
class LinkGroup:
    name: str
    links: int
    lanes: int
    gbps: float

    @property
    def gbs(self) -> float:
        return link_peak_gbs(self.links, self.lanes, self.gbps)


@dataclass
class LinkPeak:
    gbs: float
    groups: list[LinkGroup]
    formula: str
    notes: list[str] = field(default_factory=list)


_GROUP = re.compile(r"^\s*(?:([A-Za-z][\w-]*)\s*:\s*)?(\d+)\s*[x×]\s*x?(\d+)\s*@\s*"
                    r"(\d+(?:\.\d+)?)\s*(?:G(?:bps|T/?s))?\s*$", re.IGNORECASE)


def parse_links_spec(spec: str) -> list[LinkGroup]:
    groups = []
    for part in (spec or "").split(","):
        m = _GROUP.match(part)
        if not m:
            raise UserError(f"bad --links {spec!r}: expected [NAME:]LINKSxLANES@GBPS, "
                            "e.g. 'xgmi:4x16@32' (4 links, x16, 32 Gbps per lane)")
        name, links, lanes, gbps = m.group(1) or "link", int(m.group(2)), int(m.group(3)), \
            float(m.group(4))
        if not (0 < links <= 64 and 0 < lanes <= 64 and 0 < gbps <= 512):
            raise UserError(f"bad --links {spec!r}: {part.strip()!r} is not plausible")
        groups.append(LinkGroup(name.lower(), links, lanes, gbps))
    return groups


def from_spec(spec: str) -> LinkPeak:
    groups = parse_links_spec(spec)
    total = round(sum(g.gbs for g in groups), 9)
    terms = " + ".join(f"{g.links} × x{g.lanes} × {g.gbps:g} Gbps × 2 / 8" for g in groups)
    return LinkPeak(total, groups, f"{terms} = {total:g} GB/s",
                    [("both directions summed; raw signalling rate, before encoding/protocol "
                     "overhead")])
