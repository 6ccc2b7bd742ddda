"""Every command's surface, from the rows in tests/surface_*.py (see tests/surface.py)."""

from __future__ import annotations

import hashlib
import importlib
import pkgutil
from pathlib import Path

import pytest
from surface import Bad, check_envelope, fill
from test_store_helpers import make_result, make_run

from numascope.cli import main
from numascope.results.store import Store

HERE = Path(__file__).parent


def _rows(name: str) -> list:
    rows = []
    for info in pkgutil.iter_modules([str(HERE)]):
        if info.name.startswith("surface_"):
            mod = importlib.import_module(info.name)
            rows += [(info.name, r) for r in getattr(mod, name, [])]
    return rows


BAD, JSON, WIDE = _rows("BAD"), _rows("JSON"), _rows("WIDE")


@pytest.fixture
def store(tmp_path) -> Path:
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        for i in range(2):
            rec = make_run(tags={"nps": str(i)}, results=[make_result()])
            st.begin_run(rec)
            for r in rec.results:
                st.add_result(rec.run_id, r)
            st.finish_run(rec)
    return db


def _digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _id(row) -> str:
    mod, r = row
    return f"{mod[8:]}:{' '.join(r.argv if isinstance(r, Bad) else r)[:60]}"


def test_there_are_enough_bad_inputs():
    assert len(BAD) >= 60, len(BAD)


@pytest.mark.parametrize("row", BAD, ids=[_id(r) for r in BAD])
def test_bad_input_is_one_line_with_its_exit_code(row, store, tmp_path, capsys, monkeypatch):
    _, bad = row
    for k, v in bad.env.items():
        monkeypatch.setenv(k, v)
    before = _digest(store.parent)
    argv = fill(bad.argv, str(store), str(tmp_path))
    rc = main(argv)
    cap = capsys.readouterr()
    assert rc == bad.code, (argv, rc, cap.err)
    lines = cap.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("numascope: error:"), cap.err
    assert bad.says in lines[0], (bad.says, lines[0])
    assert "Traceback" not in cap.err + cap.out
    assert _digest(store.parent) == before, "the store or its folder changed"
    # the same with --json: the envelope carries the error
    if "--json" not in argv:
        rc = main(argv + ["--json"])
        cap = capsys.readouterr()
        assert rc == bad.code, (argv, cap.err)
        doc = check_envelope(cap.out, bad.argv[0])
        assert doc["errors"] and doc["errors"][0]["exit_code"] == bad.code
        assert bad.says in doc["errors"][0]["message"]


@pytest.mark.parametrize("row", JSON, ids=[_id(r) for r in JSON])
def test_json_is_one_envelope(row, store, tmp_path, capsys):
    _, argv = row
    argv = fill(argv, str(store), str(tmp_path))
    rc = main(argv + ["--json"])
    cap = capsys.readouterr()
    assert rc == 0, (argv, cap.err)
    check_envelope(cap.out, argv[0])


@pytest.mark.parametrize("row", WIDE, ids=[_id(r) for r in WIDE])
def test_fits_80_columns(row, store, tmp_path, capsys, monkeypatch):
    _, argv = row
    monkeypatch.setenv("COLUMNS", "80")
    from numascope import console
    monkeypatch.setattr(console.out, "_width", 80, raising=False)
    rc = main(fill(argv, str(store), str(tmp_path)))
    cap = capsys.readouterr()
    assert rc == 0, (argv, cap.err)
    wide = [line for line in cap.out.splitlines() if len(line.rstrip()) > 80]
    assert not wide, "\n".join(wide)
    assert "True" not in cap.out.split() and "False" not in cap.out.split()
    assert "…" not in cap.out, "a cell was cut"


def test_no_surface_module_is_empty():
    for info in pkgutil.iter_modules([str(HERE)]):
        if info.name.startswith("surface_"):
            mod = importlib.import_module(info.name)
            assert any(getattr(mod, n, None) for n in ("BAD", "JSON", "WIDE")), info.name

