"""A figure as HTML: `embed(title, fig, caption)` -> one <figure> element for the report.

Inline SVG where it stays small (MAX_SVG_BYTES), its text kept as text (svg.fonttype
"none"), so the numbers written on a figure can be searched and read in the page; a PNG
data URI otherwise (a scatter of thousands of points). The SVG is matplotlib's own, with no
prolog, no metadata (no date: the same figure gives the same bytes) and every id prefixed
for this figure, so that two figures of one page never share an id (matplotlib numbers
its ids from 1 in every file). A figure that would carry a script is never inlined."""

from __future__ import annotations

import base64
import hashlib
import html
import io
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MAX_SVG_BYTES = 400_000      # above this, a PNG is smaller (most of it would be paths)
PNG_DPI = 90

_ID = re.compile(r'\bid="([^"]+)"')
_used: dict[str, int] = {}   # prefixes handed out in this process: each figure its own


def _prefix(title: str, svg: str) -> str:
    base = "fig-" + hashlib.sha1((title + svg).encode()).hexdigest()[:10]
    n = _used.get(base, 0)
    _used[base] = n + 1
    return base if n == 0 else f"{base}-{n}"


def _with_prefix(svg: str, prefix: str) -> str:
    """Every id of `svg` and every reference to it (url(#id), href="#id") prefixed."""
    ids = set(_ID.findall(svg))
    if not ids:
        return svg

    def ref(m: re.Match[str]) -> str:
        name = m.group(2)
        return f"{m.group(1)}{prefix}-{name}" if name in ids else m.group(0)

    svg = _ID.sub(lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    svg = re.sub(r'(url\(#)([^)\s]+)', ref, svg)
    return re.sub(r'((?:xlink:)?href="#)([^"]+)', ref, svg)


def svg_text(fig: Figure) -> str:
    """The figure as an inline <svg> element (text as text, no prolog, no metadata)."""
    import matplotlib
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "numascope"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]                      # drop <?xml …?> and <!DOCTYPE …>
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.DOTALL)
    # matplotlib's <style>*{stroke-linejoin: round; stroke-linecap: butt}</style> would
    # style the whole page (an inline SVG's style sheet is not scoped): on the root instead,
    # where its children inherit it
    svg = re.sub(r"<style[^>]*>.*?</style>\s*", "", svg, flags=re.DOTALL)
    return svg.replace("<svg ", '<svg role="img" style="max-width:100%;height:auto;'
                       'stroke-linejoin:round;stroke-linecap:butt" ', 1)


def png_data(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=PNG_DPI)
    return base64.b64encode(buf.getvalue()).decode()


def embed(title: str, fig: Figure, caption: str = "") -> str:
    """One <figure>: the figure (inline SVG or PNG), then a <figcaption> holding the title
    in bold and the caption, both HTML-escaped."""
    svg = svg_text(fig)
    if len(svg.encode()) <= MAX_SVG_BYTES and "<script" not in svg.lower() \
            and not _handlers(svg):
        body = _with_prefix(svg, _prefix(title, svg)).replace(
            'role="img"', f'role="img" aria-label="{html.escape(title)}"', 1)
        kind = "svg"
    else:
        body = f'<img alt="{html.escape(title)}" src="data:image/png;base64,{png_data(fig)}">'
        kind = "png"
    cap = f"<strong>{html.escape(title)}</strong>"
    if caption:
        cap += f" {html.escape(caption)}"
    return f'<figure class="fig-{kind}">{body}<figcaption>{cap}</figcaption></figure>'


def _handlers(svg: str) -> bool:
    """Whether any attribute is an event handler (onload=, onclick= …)."""
    return any(a.lower().startswith("on") for a in re.findall(r"\s([a-zA-Z:-]+)=", svg))
