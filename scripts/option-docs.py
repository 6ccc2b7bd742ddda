"""Rewrite the generated option tables of docs/*.md from the families' option tables
(numascope.options.render_docs); tests/test_options_docs.py fails while one is stale.

    .venv/bin/python scripts/option-docs.py
"""

from pathlib import Path

from numascope.options import render_docs

for page in sorted((Path(__file__).resolve().parent.parent / "docs").glob("*.md")):
    text = page.read_text()
    new = render_docs(text)
    if new != text:
        page.write_text(new)
        print(f"updated {page.name}")
