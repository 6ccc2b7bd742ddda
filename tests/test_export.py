import json

import pytest
from test_store_helpers import make_result, make_run

from numascope.cli import main as cli
from numascope.errors import UserError
from numascope.results import export as ex
from numascope.results.store import Store


def _store(tmp_path):
    db = tmp_path / "runs.db"
    runs = [make_run({"nps": "1"}, [make_result(values=[1.5, 2.5, 3.5]),
                                    make_result("latency", "chase, \"quoted\"", [80.0, 81.0],
                                                "ns", False)]),
            make_run({"nps": "4"}, [make_result(values=[4.0, 5.0])])]
    with Store.open(db, write=True) as st:
        for r in runs:
            st.save_run(r)
    return db, runs


def test_json_export_round_trips_records(tmp_path):
    db, runs = _store(tmp_path)
    out = tmp_path / "runs.json"
    assert cli(["export", runs[0].run_id, "nps=4", "--format", "json", "--output", str(out),
                "--store", str(db)]) == 0
    back = ex.read_json(out)
    assert [r.to_dict() for r in back] == [r.to_dict() for r in runs]


def test_csv_export_has_every_repetition(tmp_path):
    db, runs = _store(tmp_path)
    out = tmp_path / "runs.csv"
    assert cli(["export", "nps=1", "--format", "csv", "-o", str(out), "--store", str(db)]) == 0
    rows = ex.read_csv(out)
    assert rows == json.loads(json.dumps(ex.flat(ex.rows(runs[:1]))[1]))
    assert rows[1]["case"] == 'chase, "quoted"' and rows[1]["values"] == [80.0, 81.0]
    assert rows[0]["median"] == 2.5 and rows[0]["tags"] == {"nps": "1"}


def test_parquet_export(tmp_path):
    _, runs = _store(tmp_path)
    out = tmp_path / "runs.parquet"
    try:
        import pyarrow.parquet as pq
    except ImportError:
        with pytest.raises(UserError, match="pyarrow"):
            ex.export(runs, "parquet", out)
        assert not out.exists()
        pytest.skip("pyarrow not installed (the clear error was checked)")
    ex.export(runs, "parquet", out)
    t = pq.read_table(out).to_pylist()
    assert [r["values"] for r in t] == [r["values"] for r in ex.rows(runs)]


def test_dataframe(tmp_path):
    _, runs = _store(tmp_path)
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(UserError, match="pandas"):
            ex.to_dataframe(runs)
        pytest.skip("pandas not installed (the clear error was checked)")
    df = ex.to_dataframe(runs)
    assert len(df) == 3 and list(df["median"]) == [2.5, 80.5, 4.5]


def test_export_errors(tmp_path):
    _, runs = _store(tmp_path)
    with pytest.raises(UserError, match="does not exist"):
        ex.export(runs, "csv", tmp_path / "no" / "x.csv")
    with pytest.raises(UserError, match="unknown format"):
        ex.export(runs, "xml", tmp_path / "x.xml")


def test_format_follows_the_extension_and_format_overrides(tmp_path, capsys):
    db, runs = _store(tmp_path)
    assert cli(["export", "nps=1", "-o", str(tmp_path / "a.csv"), "--store", str(db)]) == 0
    assert ex.read_csv(tmp_path / "a.csv")[0]["values"] == [1.5, 2.5, 3.5]
    assert "wrote 1 run to" in capsys.readouterr().err
    assert cli(["export", "nps=1", "-o", str(tmp_path / "a.JSON"), "--store", str(db)]) == 0
    assert [r.run_id for r in ex.read_json(tmp_path / "a.JSON")] == [runs[0].run_id]
    # --format wins over the extension
    assert cli(["export", "nps=1", "--format", "csv", "-o", str(tmp_path / "a.txt"),
                "--store", str(db)]) == 0
    assert (tmp_path / "a.txt").read_text().startswith("run_id,started")
    text = (tmp_path / "a.csv").read_text()
    assert ",true," in text and "True" not in text and "False" not in text
    assert cli(["export", "nps=1", "-o", str(tmp_path / "a.xlsx"), "--store", str(db)]) == 2
    assert "'.xlsx' names no format" in capsys.readouterr().err
    assert not (tmp_path / "a.xlsx").exists()


def test_standard_output(tmp_path, capsys):
    db, runs = _store(tmp_path)
    assert cli(["export", "latest", "-o", "-", "--store", str(db)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in doc["runs"]] == [runs[1].run_id]
    assert cli(["export", "latest", "-o", "-", "--format", "csv", "--store", str(db)]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("run_id,")
    # --json: the envelope is the export, readable by read_json
    assert cli(["export", "nps=1", "nps=4", "-o", "-", "--json", "--store", str(db)]) == 0
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert doc["command"] == "export" and len(doc["results"]) == 2
    (tmp_path / "env.json").write_text(out)
    assert [r.to_dict() for r in ex.read_json(tmp_path / "env.json")] == \
        [r.to_dict() for r in runs]


def test_bad_output_is_said_before_the_store_is_read(tmp_path, capsys):
    missing = tmp_path / "missing.db"   # the path error comes first, not "no store"
    assert cli(["export", "latest", "-o", str(tmp_path / "no" / "x.json"),
                "--store", str(missing)]) == 2
    assert "folder" in capsys.readouterr().err


def test_tags_and_scalar_params_are_columns_in_csv_and_parquet(tmp_path):
    """A table tool filters on tag.nps or param.threads without parsing JSON; parameters of
    mixed kinds across rows come out as one type (text, or floats for ints and floats)."""
    a = make_result(values=[1.0, 2.0])
    a.params = {"threads": 4, "kernel": "triad", "size": 1.5, "cpus": [0, 1], "nt": True}
    b = make_result(values=[3.0, 4.0])
    b.params = {"threads": 8, "kernel": "copy", "size": 2, "nt": "auto"}
    runs = [make_run({"nps": "1", "site": "x"}, [a]), make_run({"nps": "4"}, [b])]
    columns, data = ex.flat(ex.rows(runs))
    assert {"tag.nps", "tag.site", "param.threads", "param.kernel", "param.size",
            "param.nt"} <= set(columns) and "param.cpus" not in columns   # a list stays JSON
    assert [r["tag.nps"] for r in data] == ["1", "4"] and data[1]["tag.site"] is None
    assert [r["param.size"] for r in data] == [1.5, 2.0]          # int and float: floats
    assert [r["param.nt"] for r in data] == ["true", "auto"]      # mixed kinds: text
    ex.export(runs, "csv", tmp_path / "r.csv")
    back = ex.read_csv(tmp_path / "r.csv")
    assert [r["tag.nps"] for r in back] == ["1", "4"] and back[0]["param.threads"] == 4
    assert [r["param.nt"] for r in back] == [True, "auto"] and back[1]["tag.site"] is None
    assert back[0]["params"]["cpus"] == [0, 1]                    # the whole dict kept too
    pq = pytest.importorskip("pyarrow.parquet")
    ex.export(runs, "parquet", tmp_path / "r.parquet")
    t = pq.read_table(tmp_path / "r.parquet")
    assert t.column("param.threads").to_pylist() == [4, 8]
    assert str(t.schema.field("param.threads").type) == "int64"
    assert t.column("tag.nps").to_pylist() == ["1", "4"]
