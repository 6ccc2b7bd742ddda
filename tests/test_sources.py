"""Every verdict threshold cites a publication (numascope.sources): the docs' tables are the
registry's, every source is a known publication named by authors or lab, title and date,
no citation is a file path, and each listed constant has the value the registry says."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from numascope import advice, sources

DOC = Path(__file__).resolve().parents[1] / "docs" / "sources.md"
PATHLIKE = re.compile(r"(^|[\s(])(/[\w.-]+){2,}|\b[\w-]+\.(md|txt|csv|py)\b")


def test_the_docs_hold_the_registry_tables():
    text = DOC.read_text()
    begin = "<!-- generated: numascope.sources.markdown() -->\n"
    part = text[text.index(begin) + len(begin):text.index("<!-- end generated -->")]
    assert part.strip() == sources.markdown().strip()


def test_every_threshold_cites_a_known_publication_and_no_path():
    for c in sources.THRESHOLDS:
        assert c.source in sources.PUBLICATIONS, c.name
        assert c.basis and not PATHLIKE.search(c.basis), c
    for p in sources.PUBLICATIONS.values():
        assert p.who and p.title and re.search(r"\b(19|20)\d\d\b", p.when), p
        assert not PATHLIKE.search(p.text()), p
    for t in (advice.PRACTICAL, advice.L3_SATURATION, advice.QUIET):
        assert not PATHLIKE.search(t.source), t.source
        assert re.search(r"\b(19|20)\d\d\b", t.source), t.source


@pytest.mark.parametrize("cited", [c for c in sources.THRESHOLDS
                                   if re.fullmatch(r"[\w.]+\.[A-Z_]+", c.name)],
                         ids=lambda c: c.name)
def test_a_listed_constant_has_the_listed_value(cited):
    mod, const = cited.name.rsplit(".", 1)
    value = getattr(importlib.import_module(f"numascope.{mod}"), const)
    value = getattr(value, "value", value)          # advice.Threshold
    assert float(value) == pytest.approx(float(cited.value.split()[0])), cited


def test_the_repository_cites_no_file_of_a_machine():
    root = Path(__file__).resolve().parents[1]
    for p in [*root.joinpath("src").rglob("*.py"), *root.joinpath("docs").glob("*.md"),
              root / "README.md"]:
        assert "/work/shared" not in p.read_text() and "BACKGROUND.md" not in p.read_text(), p


def test_the_docs_hold_the_l1_ports_table_and_each_cites_a_vendor_manual():
    from numascope.topology import uarch
    text = DOC.read_text()
    begin = "<!-- generated: numascope.topology.uarch.ports_markdown() -->\n"
    part = text[text.index(begin) + len(begin):]
    assert part[:part.index("<!-- end generated -->")].strip() == uarch.ports_markdown().strip()
    for name, l1 in uarch.ports_table():
        assert l1.source in sources.PUBLICATIONS, name
        assert l1.load >= l1.store > 0 and l1.loads >= 1 and l1.add_latency >= 1, name
