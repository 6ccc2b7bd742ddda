"""The HTML report's small pieces: escaping, numbers as every table shows them, tables and
status words. Every string from the machine or the user goes through html.escape."""

from __future__ import annotations

from html import escape
from typing import Any

from numascope.console import show

STATUS_CLASS = {"done": "ok", "complete": "ok", "better": "ok", "skipped": "warn",
                "incomplete": "warn", "interrupted": "warn", "not run": "dim", "failed": "bad",
                "worse": "bad", "too few": "warn", "below noise": "dim"}


def e(v: Any) -> str:
    return escape(str(v), quote=True)


def num(v: Any, digits: int = 4) -> str:
    """A value as every table shows it (numascope.console.show), escaped."""
    return e(show(v, digits))


def table(head: list[str], rows: list[list[str]], num_cols: set[int] = frozenset(),
          cls: str = "") -> str:
    """Cells in `rows` must already be escaped HTML."""
    th = "".join(f"<th>{e(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{c}</td>' if i in num_cols else f"<td>{c}</td>"
                         for i, c in enumerate(r)) + "</tr>" for r in rows)
    attr = f' class="{cls}"' if cls else ""
    return f"<table{attr}><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def status(s: str) -> str:
    return f'<span class="{STATUS_CLASS.get(s, "")}">{e(s)}</span>'


def tags(t: dict[str, str]) -> str:
    return e(" ".join(f"{k}={v}" for k, v in t.items()))
