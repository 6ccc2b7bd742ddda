import json
import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest
from test_store_helpers import make_result, make_run

from numascope.errors import UserError
from numascope.results.record import SCHEMA_VERSION
from numascope.results.run import RunRecord, migrate, parse_tags, topology_digest
from numascope.results.store import Store, default_path


def test_round_trip_keeps_every_repetition(tmp_path):
    db = tmp_path / "runs.db"
    rec = make_run({"nps": "4"}, [make_result(values=[1.0, 2.5, 3.25]),
                                  make_result("latency", "chase 1GiB", [90.0, 91.0], "ns",
                                              False)])
    with Store.open(db, write=True) as st:
        st.save_run(rec)
    with Store.open(db) as st:
        back = st.get_run(rec.run_id)
        assert not st.writable
    assert back.to_dict() == rec.to_dict()
    assert back.results[0].metrics["bandwidth"].values == [1.0, 2.5, 3.25]
    assert back.results[1].metrics["bandwidth"].higher_is_better is False


def test_incremental_writes_and_final_state(tmp_path):
    db = tmp_path / "runs.db"
    rec = make_run({}, [])
    rec.status = "running"
    with Store.open(db, write=True) as st:
        st.begin_run(rec)
        st.add_result(rec.run_id, make_result(case="a"))
        with Store.open(db) as reader:          # readable while being written
            assert reader.get_run(rec.run_id).status == "running"
            assert [r.case for r in reader.get_run(rec.run_id).results] == ["a"]
        st.add_result(rec.run_id, make_result(case="b"))
        rec.status = "interrupted"
        st.finish_run(rec)
    with Store.open(db) as st:
        got = st.get_run(rec.run_id)
        summary = st.list_runs()[0]
    assert got.status == "interrupted" and [r.case for r in got.results] == ["a", "b"]
    assert summary.results == 2 and summary.status == "interrupted"


def test_resolve_by_id_prefix_tag_and_latest(tmp_path):
    db = tmp_path / "runs.db"
    a, b, c = make_run({"nps": "1"}), make_run({"nps": "4"}), make_run({"nps": "1", "x": "y"})
    with Store.open(db, write=True) as st:
        for r in (a, b, c):
            st.save_run(r)
        assert st.resolve("nps=1") == [a.run_id, c.run_id]
        assert st.resolve("nps=1,x=y") == [c.run_id]
        assert st.resolve(b.run_id) == [b.run_id]
        assert st.resolve(f"{a.run_id},{b.run_id}") == [a.run_id, b.run_id]
        assert len(st.resolve("latest")) == 1
        with pytest.raises(UserError, match="no stored run has tags"):
            st.resolve("nps=2")
        with pytest.raises(UserError, match="no run matches"):
            st.resolve("zzz")
        with pytest.raises(UserError, match="matches 3 runs"):
            st.resolve(a.run_id[:2])


WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    from test_store_helpers import make_result, make_run
    from numascope.results.store import Store
    rec = make_run({{"writer": sys.argv[1]}}, [])
    st = Store.open(sys.argv[2], write=True)
    st.begin_run(rec)
    for i in range(50):
        st.add_result(rec.run_id, make_result(case=f"case {{i}}"))
    rec.status = "complete"
    st.finish_run(rec)
""")


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    db = tmp_path / "shared" / "runs.db"       # neither process finds the store: both create
    db.parent.mkdir()
    code = WRITER.format(tests=os.path.dirname(__file__))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(w), str(db)],
                              stderr=subprocess.PIPE, text=True) for w in (1, 2)]
    for p in procs:
        _, errtext = p.communicate(timeout=120)
        assert p.returncode == 0, errtext
    with Store.open(db) as st:
        runs = st.list_runs()
        assert sorted(r.tags["writer"] for r in runs) == ["1", "2"]
        for r in runs:
            rec = st.get_run(r.run_id)
            assert rec.status == "complete"
            assert [x.case for x in rec.results] == [f"case {i}" for i in range(50)]
    assert not [p for p in db.parent.iterdir() if p.name.endswith(".tmp")]


def _refused(path, match):
    before = path.read_bytes()
    for write in (False, True):
        with pytest.raises(UserError, match=match):
            Store.open(path, write=write)
    assert path.read_bytes() == before


def test_truncated_store_refused_and_untouched(tmp_path):
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        for _ in range(20):
            st.save_run(make_run({}, [make_result(values=[float(i) for i in range(200)])]))
    con = sqlite3.connect(db)                  # fold the WAL into the file, as after a crash
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    for extra in ("-wal", "-shm"):
        if os.path.exists(str(db) + extra):
            os.unlink(str(db) + extra)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    _refused(db, "truncated|damaged")


def test_foreign_files_refused_and_untouched(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("my notes, not a database\n" * 10)
    _refused(text, "not a numascope store")
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    _refused(empty, "empty file")
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE recipes (name TEXT)")
    con.execute("INSERT INTO recipes VALUES ('soup')")
    con.commit()
    con.close()
    _refused(other, "another application")
    header_only = tmp_path / "header.db"
    header_only.write_bytes(b"SQLite format 3\x00" + b"\x00" * 20)
    _refused(header_only, "not a numascope store|truncated|damaged")


def test_missing_store_for_reading_is_a_clear_error(tmp_path):
    with pytest.raises(UserError, match="no store at"):
        Store.open(tmp_path / "nope.db")
    assert not (tmp_path / "nope.db").exists()


def test_default_path_env(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMASCOPE_STORE", str(tmp_path / "x.db"))
    assert default_path() == tmp_path / "x.db"
    monkeypatch.delenv("NUMASCOPE_STORE")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "numascope" / "runs.db"


def test_migrate_v0_and_refuse_newer():
    old = {"run_id": "r0", "time": "2025-01-01T00:00:00+00:00", "tags": ["nps=4", "smt"],
           "results": []}
    rec = RunRecord.from_dict(json.loads(json.dumps(old)))
    assert rec.started == "2025-01-01T00:00:00+00:00"
    assert rec.tags == {"nps": "4", "smt": ""}
    assert rec.schema_version == SCHEMA_VERSION
    with pytest.raises(UserError, match="newer"):
        migrate({"run_id": "r9", "schema_version": SCHEMA_VERSION + 1})


def test_migrate_v1_says_how_old_figures_were_measured():
    lat = {"family": "latency", "case": "tlb 1 GiB cpu0", "params": {"line": 64},
           "metrics": {}, "placement": {"huge_fraction": 1.0}}
    bw = {"family": "bandwidth", "case": "triad", "params": {}, "metrics": {},
          "placement": {"huge_fraction": 2.7}}
    v1 = {"run_id": "r1", "started": "2026-01-01T00:00:00+00:00", "schema_version": 1,
          "stages": [], "results": [lat, bw]}
    rec = RunRecord.from_dict(migrate(json.loads(json.dumps(v1))))
    assert rec.schema_version == SCHEMA_VERSION
    lat2, bw2 = rec.results
    assert lat2.params["stride"] == 64 and "line" not in lat2.params
    assert any("64 B" in n for n in lat2.notes)
    assert bw2.placement["huge_fraction"] == -1.0          # overstated share: now unknown
    assert bw2.placement["huge_fraction_schema1"] == 2.7
    assert any("thread 0's clock" in n for n in bw2.notes)
    assert v1["results"][0]["params"] == {"line": 64}      # the input is not modified


def test_parse_tags():
    assert parse_tags(["nps=4", " smt = off ", "bios=v1=2", "note=[red]x y[/red]"]) == \
        {"nps": "4", "smt": "off", "bios": "v1=2", "note": "[red]x y[/red]"}
    for bad, why in ((["nps"], "expected KEY=VALUE"), (["=4"], "expected KEY=VALUE"),
                     ([" =4"], "expected KEY=VALUE"), (["a= "], "give a value"),
                     (["a=b\nc"], "control characters"), (["a\x1b[31m=1"], "control"),
                     (["a=1\u2028"], "control"), (["a=1,b=2"], "','"),
                     (["a,b=1"], "','"), (["a=1", " a =2"], "given twice")):
        with pytest.raises(UserError, match=why):
            parse_tags(bad)


def test_every_tag_stays_selectable(tmp_path):
    """What parse_tags accepts, the selection syntax finds again (runs --tag, compare)."""
    db = tmp_path / "runs.db"
    tags = parse_tags(["bios=v1=2", "note=[red]x y[/red]", "kernel=6.8.0-rc1"])
    rec = make_run(tags)
    with Store.open(db, write=True) as st:
        st.save_run(rec)
        st.save_run(make_run({"nps": "1"}))
        for k, v in tags.items():
            assert st.resolve(f"{k}={v}") == [rec.run_id]
        assert st.resolve(",".join(f"{k}={v}" for k, v in tags.items())) == [rec.run_id]


def test_terminal_prints_tags_and_host_names_as_themselves(tmp_path, capsys, monkeypatch):
    from numascope import console
    from numascope.cli import main
    monkeypatch.setattr(console.out, "_width", 160, raising=False)   # no wrapping
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        st.save_run(make_run({"note": "[red]x[/red]"}, hostname="[bold]h[/bold]"))
        st.save_run(make_run({"note": "[/]"}))
    assert main(["runs", "--store", str(db)]) == 0
    out = capsys.readouterr().out
    assert "note=[red]x[/red]" in out and "[bold]h[/bold]" in out and "note=[/]" in out
    assert main(["show", "note=[red]x[/red]", "--store", str(db)]) == 0
    assert "note=[red]x[/red]" in capsys.readouterr().out


def test_topology_digest_ignores_memory_amounts_not_shape():
    from dataclasses import replace

    from test_store_helpers import make_topo
    a = make_topo()
    b = make_topo()
    b.nodes[0] = replace(b.nodes[0], free_bytes=1, memory_bytes=3 << 30)   # balloon
    assert topology_digest(a) == topology_digest(b)
    b.nodes[0] = replace(b.nodes[0], memory_bytes=0)    # a memoryless node is another shape
    assert topology_digest(a) != topology_digest(b)
    b = make_topo()
    b.nodes[1] = replace(b.nodes[1], distances={0: 21, 1: 10})
    assert topology_digest(a) != topology_digest(b)


# -- stores that are damaged or in a read-only place, through the command line -------------

def _cli(*argv: str, ro: object = None) -> subprocess.CompletedProcess:
    """`numascope ARGV` in a child process; with `ro` (a file or folder), that path is
    read-only for the child: its permission bits for a normal user, a read-only bind mount
    (in a private mount namespace) for root, whom permission bits do not stop."""
    cmd = [sys.executable, "-m", "numascope", *argv]
    if ro is None:
        return subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120)
    if os.geteuid() != 0:
        mode = os.stat(ro).st_mode
        os.chmod(ro, 0o555 if os.path.isdir(ro) else 0o444)
        try:
            return subprocess.run(cmd, capture_output=True, text=True, check=False,
                                  timeout=120)
        finally:
            os.chmod(ro, mode)
    mount = ('mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"')
    probe = subprocess.run(["unshare", "-m", "sh", "-c", mount, str(ro), "true"],
                           capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("running as root without mount namespaces: no read-only place to test")
    return subprocess.run(["unshare", "-m", "sh", "-c", mount, str(ro), *cmd],
                          capture_output=True, text=True, check=False, timeout=120)


def _healthy(tmp_path):
    folder = tmp_path / "store"
    folder.mkdir()
    db = folder / "runs.db"
    with Store.open(db, write=True) as st:
        st.save_run(make_run({"nps": "1"}))
        st.save_run(make_run({"nps": "4"}))
    return db


def _files(folder) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def _one_line(p: subprocess.CompletedProcess, code: int, says: str) -> None:
    assert p.returncode == code, (p.returncode, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("numascope: error:"), p.stderr
    assert says in lines[0] and "Traceback" not in p.stderr


def test_reading_a_store_leaves_no_file_behind(tmp_path):
    db = _healthy(tmp_path)
    before = _files(db.parent)
    assert _cli("runs", "--store", str(db)).returncode == 0
    assert _cli("show", "latest", "--store", str(db)).returncode == 0
    assert _files(db.parent) == before            # no -wal, no -shm, same bytes


def test_read_only_folder_reads_and_refuses_to_write(tmp_path):
    db = _healthy(tmp_path)
    before = _files(db.parent)
    p = _cli("runs", "--store", str(db), "--json", ro=db.parent)
    assert p.returncode == 0, p.stderr
    assert [r["tags"] for r in json.loads(p.stdout)["results"]] == [{"nps": "1"}, {"nps": "4"}]
    p = _cli("show", "nps=4", "--store", str(db), ro=db.parent)
    assert p.returncode == 0 and "nps=4" in p.stdout, p.stderr
    p = _cli("run", "--stage", "topology", "--no-report", "--store", str(db), ro=db.parent)
    _one_line(p, 2, "is read-only")
    assert "damaged" not in p.stderr
    p = _cli("run", "--stage", "topology", "--no-report", "--store",
             str(db.parent / "new.db"), ro=db.parent)
    _one_line(p, 2, "cannot create the store")
    assert "read-only" in p.stderr
    assert _files(db.parent) == before


def test_read_only_store_file_reads_and_refuses_to_write(tmp_path):
    db = _healthy(tmp_path)
    data = db.read_bytes()
    p = _cli("runs", "--store", str(db), ro=db)
    assert p.returncode == 0 and "nps=4" in p.stdout, p.stderr
    p = _cli("run", "--stage", "topology", "--no-report", "--store", str(db), ro=db)
    _one_line(p, 2, "is read-only")
    assert db.read_bytes() == data


def test_new_store_in_a_missing_folder_is_one_line(tmp_path):
    p = _cli("run", "--stage", "topology", "--no-report", "--store",
             str(tmp_path / "no" / "such" / "runs.db"))
    _one_line(p, 2, "does not exist")
    assert not (tmp_path / "no").exists()


def _corrupt_stores(tmp_path):
    text = tmp_path / "notes.db"
    text.write_text("my notes, not a database\n" * 10)
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE recipes (name TEXT)")
    con.commit()
    con.close()
    garbled = tmp_path / "garbled.db"
    good = _healthy(tmp_path)
    raw = bytearray(good.read_bytes())
    raw[4096:8192] = b"\xff" * 4096              # a page of the tables overwritten
    garbled.write_bytes(bytes(raw))
    return [(text, "not a numascope store"), (empty, "empty file"),
            (other, "another application"), (garbled, "damaged")]


READERS = [["runs"], ["show", "latest"], ["compare", "nps=1", "nps=4"],
           ["export", "latest", "-o", "{tmp}/x.json"],
           ["report", "latest", "-o", "{tmp}/x.html"],
           ["advise", "--section", "advice"], ["advise", "latest"],
           ["topo", "--hwloc-xml", "{tmp}/t.xml"],
           ["run", "--stage", "topology", "--no-report"]]


@pytest.mark.parametrize("argv", READERS)
def test_damaged_or_foreign_store_is_refused_and_untouched(tmp_path, argv, capsys):
    from numascope.cli import main
    for path, says in _corrupt_stores(tmp_path):
        before = _files(tmp_path)
        args = [a.replace("{tmp}", str(tmp_path)) for a in argv] + ["--store", str(path)]
        rc = main(args)
        err = capsys.readouterr().err
        assert rc == 2, (args, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and says in lines[0], (path.name, err)
        assert _files(tmp_path) == before, path.name


def test_runs_on_an_empty_or_not_yet_made_store(tmp_path, capsys, monkeypatch):
    from numascope.cli import main
    db = tmp_path / "runs.db"
    Store.open(db, write=True).close()
    assert main(["runs", "--store", str(db)]) == 0
    assert capsys.readouterr().out.strip() == f"no runs in {db}"
    assert main(["runs", "--store", str(db), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["results"] == [] and doc["errors"] == [] and doc["command"] == "runs"
    # the default store before anything was run: an empty list, and nothing created
    monkeypatch.setenv("NUMASCOPE_STORE", str(tmp_path / "later" / "runs.db"))
    assert main(["runs", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"] == []
    assert not (tmp_path / "later").exists()
    # a --store named by hand that does not exist is a mistake, said in one line
    assert main(["runs", "--store", str(tmp_path / "typo.db")]) == 2
    assert "no store at" in capsys.readouterr().err


def _quick_check_damaged(tmp_path):
    """A store whose header and tables read, but whose page 3 (a table's b-tree) SQLite's
    quick_check calls damaged: its message is several lines ("*** in database main ***")."""
    db = tmp_path / "damaged.db"
    good = tmp_path / "good.db"
    with Store.open(good, write=True) as st:
        for i in range(30):
            st.save_run(make_run({"nps": str(i)}))
    raw = bytearray(good.read_bytes())
    page = raw[16] << 8 | raw[17]
    raw[2 * page + 8:2 * page + 12] = b"\0" * 4     # page 3's first cell pointer
    db.write_bytes(bytes(raw))
    good.unlink()
    con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    check = con.execute("PRAGMA quick_check(1)").fetchone()[0]
    con.close()
    if "\n" not in check:
        pytest.skip(f"this SQLite reports the damage in one line: {check!r}")
    return db


@pytest.mark.parametrize("argv", READERS)
def test_damaged_store_message_is_whole_and_the_file_untouched(tmp_path, argv, capsys):
    from numascope.cli import main
    db = _quick_check_damaged(tmp_path)
    before = _files(tmp_path)
    for extra in ([], ["--json"]):
        args = [a.replace("{tmp}", str(tmp_path)) for a in argv] + ["--store", str(db), *extra]
        rc = main(args)
        cap = capsys.readouterr()
        assert rc == 2, (args, cap.err)
        lines = cap.err.strip().splitlines()
        assert len(lines) == 1, cap.err
        # the file, what is wrong (all of SQLite's lines) and what to do, in one line
        assert str(db) in lines[0] and "*** in database main ***;" in lines[0], lines[0]
        assert lines[0].rstrip().endswith("restore a backup or pass another --store"), lines[0]
        if extra:
            doc = json.loads(cap.out)
            assert doc["errors"][0]["kind"] == "bad-input"
            assert doc["errors"][0]["message"] in lines[0]
        assert _files(tmp_path) == before, args


def test_a_large_store_is_checked_whole_before_writing_and_where_read(tmp_path, capsys,
                                                                     monkeypatch):
    """Past CHECK_MAX_BYTES a store is not checked whole when opened to be read (quick_check
    reads every page: seconds at a fleet's size); before writing it is, as always (a reader
    that meets a damaged page says so in one line: _corrupt); the file is untouched."""
    from numascope.cli import main
    from numascope.results import store as store_mod
    db = _quick_check_damaged(tmp_path)
    monkeypatch.setattr(store_mod, "CHECK_MAX_BYTES", 0)
    before = _files(tmp_path)
    rc = main(["run", "--stage", "topology", "--no-report", "--store", str(db)])
    lines = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and "*** in database main ***;" in lines[0], lines
    with Store.open(db) as st:    # read: opened unchecked; the damaged page is an index
        runs = [st.get_run(r.run_id) for r in st.list_runs()]   # no reader uses
    assert len(runs) == 30
    assert _files(tmp_path) == before


def test_latest_is_the_latest_complete_run(tmp_path):
    db = tmp_path / "runs.db"
    done, cut = make_run({"nps": "1"}), make_run({"nps": "2"}, results=[])
    cut.status = "interrupted"
    with Store.open(db, write=True) as st:
        st.save_run(done)
        st.save_run(cut)
        assert st.resolve("latest") == [done.run_id]
        assert st.resolve("last") == [done.run_id]
        assert st.resolve(cut.run_id) == [cut.run_id]        # still selectable by its id
    only = tmp_path / "only.db"
    with Store.open(only, write=True) as st:
        st.save_run(cut)
        with pytest.raises(UserError, match="latest complete run .* holds none"):
            st.resolve("latest")


def test_latest_is_never_an_advise_verify_check(tmp_path, capsys):
    """`advise --verify` stores each layout's check as a complete run (tagged verify=…):
    show, report and every other reader of `latest` pick the latest run of the suite
    before it, never the check ("no headline figure"); the check is still selectable by
    its id or its tag."""
    from numascope.cli import main
    from numascope.results.store import VERIFY_TAG
    db = tmp_path / "runs.db"
    suite_run = make_run({"nps": "1"})
    check = make_run({VERIFY_TAG: "1x2", "recipe": "1 rank x 2 threads"},
                     results=[make_result()])
    check.results[0].params["sweep"] = "verify"
    check.started = check.finished = "2099-01-01T00:00:00+00:00"     # the later of the two
    with Store.open(db, write=True) as st:
        st.save_run(suite_run)
        st.save_run(check)
        assert st.resolve("latest") == st.resolve("last") == [suite_run.run_id]
        assert st.resolve(check.run_id) == [check.run_id]
        assert st.resolve(f"{VERIFY_TAG}=1x2") == [check.run_id]
    assert main(["show", "latest", "--store", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["run_id"] == suite_run.run_id
    html = tmp_path / "r.html"
    assert main(["report", "latest", "-o", str(html), "--store", str(db)]) == 0
    capsys.readouterr()
    text = html.read_text()
    assert suite_run.run_id in text and check.run_id not in text
    only = tmp_path / "only.db"
    with Store.open(only, write=True) as st:
        st.save_run(check)
        with pytest.raises(UserError, match=r"holds none \(1 advise --verify check\)"):
            st.resolve("latest")


def test_selections_and_tags_have_bounds(tmp_path):
    db = _healthy(tmp_path)
    with Store.open(db) as st:
        with pytest.raises(UserError, match="at most 200 characters"):
            st.resolve("x" * 201)
        with pytest.raises(UserError, match="no run matches"):
            st.resolve("x" * 200)
    assert parse_tags(["k=" + "v" * 198])
    with pytest.raises(UserError, match="--tag .*at most 200"):
        parse_tags(["k=" + "v" * 199])
    with pytest.raises(UserError, match="--store is empty"):
        Store.open("")


def test_runs_table_wraps_a_fleet_tag_at_its_separators(tmp_path, capsys, monkeypatch):
    from numascope import console
    from numascope.cli import main
    monkeypatch.setattr(console.out, "_width", 80, raising=False)
    db = tmp_path / "runs.db"
    fleet = "20261125T232100Z-3f9a2c1b"
    with Store.open(db, write=True) as st:
        st.save_run(make_run({"fleet": fleet, "host": "node017.cluster.example.org"}))
        st.save_run(make_run({"nps": "1"}))
    assert main(["runs", "--store", str(db)]) == 0
    text = capsys.readouterr().out
    assert all(len(line.rstrip()) <= 80 for line in text.splitlines()), text
    pieces = [w for line in text.splitlines() for w in line.split()]
    # broken after '=', '-' and '.', never inside a run of letters and digits
    assert any(w.endswith("20261125T232100Z-") for w in pieces) and "3f9a2c1b" in pieces, text


def test_runs_table_keeps_the_words_of_a_tag_whole(tmp_path, capsys, monkeypatch):
    """A tag value with spaces ("a long label …"), two hosts (a column more) at 80 columns:
    broken between words, never inside one ("tha" / "t will"); a word is broken only at its
    separators when it is longer than the room."""
    from numascope import console
    from numascope.cli import main
    monkeypatch.setattr(console.out, "_width", 80, raising=False)
    db = tmp_path / "runs.db"
    note = "a long label that will need to wrap somewhere in the table"
    bios = "AMI-1.2.3 with SMT disabled and C-states off"
    with Store.open(db, write=True) as st:
        st.save_run(make_run({"note": note, "nps": "4"}))
        st.save_run(make_run({"bios": bios, "nps": "1"}, hostname="other"))
    assert main(["runs", "--store", str(db)]) == 0
    text = capsys.readouterr().out
    assert all(len(line.rstrip()) <= 80 for line in text.splitlines()), text
    words = {w for line in text.splitlines() for w in line.split()}
    for w in ("long", "label", "that", "will", "need", "wrap", "somewhere", "table",
              "disabled", "C-states", "bios=AMI-1.2.3"):
        assert w in words, (w, text)
    assert "note=a" in words


def test_a_store_that_is_a_pipe_is_refused_at_once(tmp_path):
    """A FIFO given as the store would block SQLite's open for ever: refused before it."""
    import os
    import threading

    from numascope.errors import UserError
    fifo = tmp_path / "store.fifo"
    os.mkfifo(fifo)
    got: list[BaseException] = []
    t = threading.Thread(target=lambda: _open_into(fifo, got), daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), "opening a FIFO as the store hung"
    assert isinstance(got[0], UserError) and "not a regular file" in str(got[0])


def _open_into(path, got: list) -> None:
    try:
        for write in (False, True):
            Store.open(path, write=write)
    except BaseException as e:  # noqa: BLE001 — the test reads what was raised
        got.append(e)
