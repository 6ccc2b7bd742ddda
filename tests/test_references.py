"""The published references: the shipped table, the matching rule on its hard cases (a
virtual machine, another memory mode, unknown DIMMs, another part number), the
normalisations (socket count, base clock), and `numascope references`.

Hosts are the host dicts of run records: built by results.run.host_facts from synthetic
sysfs trees (so the memory mode is the one numascope infers), with the peaks a run records
(peaks.dram_peak from --memory or SMBIOS, the FLOP/s clock), or read from a stored run."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from synth_sysfs import machine

from numascope import references as refs
from numascope.errors import UserError
from numascope.peaks import dram_peak
from numascope.peaks.dram import dram_peak_gbs
from numascope.peaks.links import from_spec as links_from_spec
from numascope.results.record import BenchResult, Metric
from numascope.results.run import host_facts
from numascope.topology import read_topology

DATA = Path(__file__).parent / "data"
NAPLES = "AMD EPYC 7601 32-Core Processor"


def _host(tmp_path, *, model=NAPLES, sockets=2, nodes_per_socket=4, memory="8x DDR4-2400",
          hypervisor=False, ghz=None, family=23, model_number=1, smt=2):
    """A run record's host dict for a synthetic EPYC: Naples has 4 dies per socket, each a
    node with 2 CCX (L3) of 4 cores."""
    root = machine(tmp_path / "root", sockets=sockets, l3_per_socket=8, cores_per_l3=4,
                   smt=smt, nodes_per_socket=nodes_per_socket, model=model, family=family,
                   model_number=model_number, hypervisor=hypervisor)
    topo = read_topology(str(root))
    host = host_facts(topo, root=root)
    host["peaks"] = {"dram": dram_peak(topo, memory, root),
                     "flops": {"ghz": ghz, "value": None, "status": "unknown"}}
    return host


def _ids(host, table=None):
    return {m.ref.id for m in refs.matches(host, table)}


# -- the shipped table ---------------------------------------------------------------------

def test_the_shipped_table_loads_and_every_row_is_cited():
    table = refs.load()
    assert len(table) >= 30
    assert len({r.id for r in table}) == len(table)
    for r in table:
        assert r.title and r.lab_authors and r.date, r.id
        assert r.url.startswith("https://"), r.id
        assert r.unit == refs.QUANTITIES[r.quantity][0], r.id
        assert r.scope in refs.SCOPES, r.id
        assert "Gbit/s" not in r.unit
        for text in (r.title, r.lab_authors):      # a citation, never a file of a machine
            assert not re.search(r"(^|\s)/\w|\.(md|csv|py|txt)\b", text), r.id
    # the studies the issue names are all there
    labs = " ".join(r.lab_authors + r.title for r in table)
    for who in ("Dell HPC and AI Innovation Lab", "Micron", "Blosc", "Lenovo"):
        assert who in labs


def test_the_table_is_package_data_beside_the_module():
    """meson's install_subdir installs src/numascope whole (data/ included); the editable
    install reads it from the source tree through the module's own path."""
    assert refs.TABLE.is_file()
    assert refs.TABLE.parent.parent == Path(refs.__file__).parent
    build = (Path(__file__).parents[1] / "meson.build").read_text()
    assert "install_subdir('src/numascope'" in build


def test_the_theoretical_rows_agree_with_numascope_s_peak_formulas():
    """Lenovo's published theoretical figures are what numascope's own peak formulas give
    for the same layout: the table and the formulas check each other."""
    by_id = {r.id: r for r in refs.load()}
    for rid in ("lenovo-9004-xgmi-4-links", "lenovo-9004-xgmi-3-links"):
        r = by_id[rid]
        assert links_from_spec(r.links).gbs == pytest.approx(r.value)
    d = by_id["lenovo-9004-dram-peak"]
    assert dram_peak_gbs(d.channels, d.mts) == pytest.approx(d.value)


def test_the_naples_figures_are_below_that_server_s_dram_peak():
    """The units check of the Gbit/s rows: read as GB/s, the 2-socket triad is a plausible
    share of 2 x 8 channels x 2400 MT/s (read as Gbit/s it would be 10 %)."""
    r = {x.id: x for x in refs.load()}["dell-naples-triad-all-cores"]
    peak = dram_peak_gbs(r.channels, r.mts, r.sockets)
    assert 0.6 < r.value / peak < 0.9
    assert "Gbit/s" in r.note


# -- matching: the hard cases --------------------------------------------------------------

def test_a_virtual_machine_saying_amd_epyc_matches_nothing():
    host = json.loads((DATA / "advise_quick_run.json").read_text())["host"]
    assert host["cpu_model"] == "AMD EPYC"
    assert refs.matches(host) == []
    why = refs.mismatches(host, refs.load()[0])
    assert any(w.startswith("CPU model") for w in why)
    assert any("ambiguous" in w for w in why)          # NPS1|L3-as-NUMA
    assert any(w.startswith("DIMM population: not known") for w in why)


def test_a_guest_with_the_right_model_name_still_matches_nothing(tmp_path):
    """A cloud guest may pass the model string through; its nodes are the hypervisor's, so
    its memory mode is hedged (ambiguous) and no row matches, DIMMs given or not."""
    host = _host(tmp_path, hypervisor=True)
    assert host["facts"]["memory_mode"]["status"] == "ambiguous"
    assert refs.matches(host) == []


def test_everything_matching_names_the_fields_that_matched(tmp_path):
    host = _host(tmp_path)
    assert host["memory_mode"] == "NPS4" and host["packages"] == 2
    found = {m.ref.id: m for m in refs.matches(host)}
    m = found["dell-naples-triad-all-cores"]
    assert m.matched[:3] == ("CPU model", "memory mode", "DIMM population")
    assert "sockets" in m.matched
    assert m.value == 244 and m.unit == "GB/s" and m.quantity == "triad_all_cores"
    assert any("--memory" in n for n in m.notes)   # the DIMMs were given, not read
    assert any("DIMMs per channel not recorded" in n for n in m.notes)
    assert refs.percent_of(m, 183.0) == pytest.approx(75.0)
    # the same-socket and other-socket remote ratios both apply on 2 sockets
    assert {"dell-naples-remote-same-socket", "dell-naples-remote-other-socket"} <= set(found)
    # rows of other CPUs, of a range, or without their DIMMs never do
    assert all(r.startswith("dell-naples-") for r in found)


def test_dimms_per_channel_read_from_smbios_match_or_exclude(tmp_path):
    """Where SMBIOS names each DIMM's channel (peaks.dram.from_slots), the DIMMs per channel
    are recorded: a match then names them, and a host with 2 per channel does not take a
    1-per-channel study (a second DIMM on a channel changes its timing)."""
    host = _host(tmp_path)
    host["peaks"]["dram"]["dimms_per_channel"] = 1
    m = next(m for m in refs.matches(host) if m.ref.id == "dell-naples-triad-all-cores")
    assert "DIMMs per channel" in m.matched
    assert not any("DIMMs per channel not recorded" in n for n in m.notes)
    host["peaks"]["dram"]["dimms_per_channel"] = 2
    assert "dell-naples-triad-all-cores" not in _ids(host)
    ref = next(r for r in refs.load() if r.id == "dell-naples-triad-all-cores")
    assert "DIMMs per channel: the reference had 1, this host 2" in refs.mismatches(host, ref)


def test_the_right_model_in_another_memory_mode_matches_nothing(tmp_path):
    host = _host(tmp_path, nodes_per_socket=1)
    assert host["memory_mode"] == "NPS1"
    assert refs.matches(host) == []
    why = refs.mismatches(host, refs.load()[0])
    assert why == ["memory mode: the reference ran NPS4, this host NPS1"]


def test_the_right_model_and_mode_with_unknown_dimms_matches_nothing(tmp_path):
    """The synthetic root has no SMBIOS tables and no --memory was given: the DIMMs may be
    4 channels or 8, so a figure measured on 8 says nothing of this host."""
    host = _host(tmp_path, memory=None)
    assert host["peaks"]["dram"]["status"] == "unknown"
    assert refs.matches(host) == []
    why = refs.mismatches(host, refs.load()[0])
    assert len(why) == 1 and why[0].startswith("DIMM population: not known")


@pytest.mark.parametrize("memory, reason", [
    ("4x DDR4-2400", "DIMM population: the reference ran 8 channels per socket"),
    ("8x DDR4-2667", "DIMM speed: the reference ran 2400 MT/s, this host 2667 MT/s"),
])
def test_another_dimm_population_matches_nothing(tmp_path, memory, reason):
    host = _host(tmp_path, memory=memory)
    assert refs.matches(host) == []
    assert [w for w in refs.mismatches(host, refs.load()[0]) if w.startswith(reason)]


def test_another_part_number_is_another_cpu(tmp_path):
    """EPYC 7601P is the single-socket part: a row for the 7601 does not match it, nor the
    7601 a row for a "P" part; whole words, case and spacing aside."""
    assert refs.model_matches("EPYC 7601", NAPLES)
    assert refs.model_matches("epyc  7601", "AMD EPYC 7601 32-Core Processor")
    assert not refs.model_matches("EPYC 7601", "AMD EPYC 7601P 32-Core Processor")
    assert not refs.model_matches("EPYC 7702P", "AMD EPYC 7702 64-Core Processor")
    assert not refs.model_matches("EPYC 7601", "AMD EPYC 17601 Processor")
    assert not refs.model_matches("EPYC 7601", "AMD EPYC Processor")
    assert not refs.model_matches("EPYC 7601", None)
    intel = "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz"
    assert refs.model_matches("Xeon Platinum 8380", intel)
    assert not refs.model_matches("Xeon Platinum 838", intel)
    assert not refs.model_matches("Xeon Platinum 8380H", intel)
    host = _host(tmp_path, model="AMD EPYC 7601P 32-Core Processor", sockets=1)
    assert refs.matches(host) == []


def test_a_one_socket_host_gets_two_socket_totals_halved_and_said(tmp_path):
    host = _host(tmp_path, sockets=1, memory="8x DDR4-2400", ghz=2.9)
    found = {m.ref.id: m for m in refs.matches(host)}
    triad = found["dell-naples-triad-all-cores"]
    assert triad.value == pytest.approx(122.0)
    assert "sockets" not in triad.matched
    assert any("2-socket total" in n and "1 socket:" in n for n in triad.notes)
    assert found["dell-naples-hpl-gflops"].value == pytest.approx(1133 / 2)
    # per-core and per-node figures are not scaled
    assert found["dell-naples-triad-one-core"].value == 24.5
    assert not any("socket" in n for n in found["dell-naples-triad-one-core"].notes)
    # no other socket to measure, and MPI figures depend on the 2-socket layout
    assert "dell-naples-remote-other-socket" not in found
    assert not [r for r in found if "mpi" in r or "mbw" in r]
    assert "dell-naples-remote-same-socket" in found


def test_a_base_clock_efficiency_is_re_expressed_at_the_measured_clock(tmp_path):
    m = {x.ref.id: x for x in refs.matches(_host(tmp_path, ghz=2.75))}
    eff = m["dell-naples-hpl-efficiency"]
    assert eff.value == pytest.approx(100.6 * 2.2 / 2.75)      # 80.48 %
    assert any("2.2 GHz base clock" in n and "2.75 GHz" in n for n in eff.notes)
    m = {x.ref.id: x for x in refs.matches(_host(tmp_path / "b", ghz=None))}
    eff = m["dell-naples-hpl-efficiency"]
    assert eff.value == 100.6
    assert any("not re-expressed" in n for n in eff.notes)


def test_smt_is_matched_or_said_when_the_publication_states_it(tmp_path):
    row = next(r for r in refs.load() if r.id == "dell-naples-triad-all-cores")
    on = refs.Reference(**{**vars(row), "id": "smt-on", "smt": "on"})
    off = refs.Reference(**{**vars(row), "id": "smt-off", "smt": "off"})
    host = _host(tmp_path, smt=2)
    assert host["smt"] is True
    by = {m.ref.id: m for m in refs.matches(host, [on, off])}
    assert "SMT" in by["smt-on"].matched
    assert "SMT" not in by["smt-off"].matched
    assert any("SMT off; this host has SMT on" in n for n in by["smt-off"].notes)


def test_rows_across_models_or_ranges_are_listed_never_matched():
    rome = next(r for r in refs.load() if r.id == "dell-rome-triad-all-cores")
    assert len(rome.models) == 4 and rome.value_high == 300
    host = {"cpu_model": "AMD EPYC 7502 32-Core Processor", "packages": 2,
            "memory_mode": "NPS4", "facts": {"memory_mode": {"value": "NPS4",
                                                             "status": "known"}},
            "peaks": {"dram": {"status": "known", "channels": 16, "mts": 3200}}}
    why = refs.mismatches(host, rome)
    assert "the figure is across several models" in why
    assert any("range" in w for w in why)


def test_percent_of_a_latency_over_100_is_slower():
    r = refs.Reference(**{**vars(refs.load()[0]), "quantity": "idle_latency",
                          "unit": "ns", "value": 100.0})
    m = refs.Match(r, r.quantity, r.value, r.unit, (), ())
    assert refs.percent_of(m, 120.0) == pytest.approx(120.0)


# -- malformed tables ----------------------------------------------------------------------

def _write(tmp_path, change):
    rows = list(csv.DictReader(refs.TABLE.open(newline="")))
    change(rows)
    p = tmp_path / "refs.csv"
    with p.open("w", newline="") as f:
        w = csv.DictWriter(f, refs.COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return p


@pytest.mark.parametrize("field, value, says", [
    ("unit", "Gbit/s", "unit 'Gbit/s' is not the unit of triad_all_cores (GB/s)"),
    ("quantity", "triad", "quantity 'triad' is not one of the vocabulary"),
    ("value", "~244", "value '~244' is not a number"),
    ("title", "", "empty title"),
    ("date", "Sept 2018", "date 'Sept 2018' is not YYYY"),
    ("scope", "server", "scope 'server' is not one of"),
    ("sockets", "two", "sockets 'two' is not a whole number"),
])
def test_a_malformed_row_is_one_error_naming_it(tmp_path, field, value, says):
    def change(rows):
        rows[0][field] = value
    p = _write(tmp_path, change)
    with pytest.raises(UserError) as e:
        refs.load(p)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"{p} line 2 (dell-naples-triad-all-cores): {says}")


def test_a_repeated_id_a_short_row_and_a_foreign_header_are_errors(tmp_path):
    p = _write(tmp_path, lambda rows: rows.append(dict(rows[0])))
    with pytest.raises(UserError, match="repeats an earlier row's"):
        refs.load(p)
    short = tmp_path / "short.csv"
    lines = refs.TABLE.read_text().splitlines()
    short.write_text("\n".join([lines[0], lines[1], "x,AMD EPYC 7001,EPYC 7601"]) + "\n")
    with pytest.raises(UserError, match=r"line 3: 27 columns expected, the row has 3"):
        refs.load(short)
    other = tmp_path / "other.csv"
    other.write_text("study,cpu,value\nnaples,EPYC 7601,244\n")
    with pytest.raises(UserError, match="missing id, cpu_family"):
        refs.load(other)
    with pytest.raises(UserError, match="cannot read the references table"):
        refs.load(tmp_path / "absent.csv")


# -- numascope references ------------------------------------------------------------------

def _cli(capsys, *argv):
    from numascope.cli import main
    rc = main(["references", *argv])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_the_listing_cites_each_publication_once_and_fits(capsys, monkeypatch):
    from numascope import console
    monkeypatch.setattr(console.out, "_width", 100, raising=False)
    rc, out, err = _cli(capsys)
    assert rc == 0 and err == ""
    assert max(len(line.rstrip()) for line in out.splitlines()) <= 100
    text = " ".join(out.split())      # the citations wrap at the width
    for r in refs.load():
        assert text.count(r.citation) == 1, r.citation
    assert text.count("https://lenovopress.lenovo.com/lp1852") == 1
    assert "244 GB/s" in out and "270-300 GB/s" in out and "520000 IOPS" in out


def test_the_cpu_filter_is_a_case_insensitive_substring_of_model_name_or_family(capsys):
    rc, out, _ = _cli(capsys, "--cpu", "NAPLES", "--json")
    assert rc == 0
    got = json.loads(out)["results"]
    assert got and {r["cpu_model"] for r in got} == {"EPYC 7601"}
    assert all(r["citation"] and r["title"] for r in got)
    rc, out, _ = _cli(capsys, "--cpu", "epyc 9004", "--json")
    assert {r["cpu_family"] for r in json.loads(out)["results"]} == {"AMD EPYC 9004"}
    rc, out, _ = _cli(capsys, "--cpu", "7402", "--quantity", "compress_sum", "--json")
    got = json.loads(out)["results"]
    assert rc == 0 and [r["value"] for r in got] == [90, 74]
    # the 7402 is also one of the Rome study's four models
    rc, out, _ = _cli(capsys, "--cpu", "7402", "--quantity", "triad_all_cores")
    assert rc == 0 and "270-300 GB/s" in out and "Rome" in out


def test_a_filter_matching_nothing_is_exit_1_and_one_line(capsys):
    rc, out, err = _cli(capsys, "--cpu", "Xeon")
    assert rc == 1 and out == ""
    assert err.count("\n") == 1 and "no published figure matches --cpu 'Xeon'" in err
    rc, out, err = _cli(capsys, "--cpu", "7601", "--quantity", "iops_per_drive", "--json")
    assert rc == 1 and json.loads(out)["results"] == []
    assert "--cpu '7601' and --quantity 'iops_per_drive'" in err


def test_a_malformed_table_is_one_error_line_and_exit_2(capsys, tmp_path):
    p = _write(tmp_path, lambda rows: rows[5].update(unit="Gbit/s"))
    rc, out, err = _cli(capsys, "--table", str(p))
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"numascope: error: {p} line 7 (") and "unit 'Gbit/s'" in err
    rc, out, err = _cli(capsys, "--table", str(p), "--json")
    assert rc == 2 and json.loads(out)["errors"][0]["exit_code"] == 2


def test_a_fifo_or_a_folder_as_the_table_is_refused_not_read(tmp_path):
    """A pipe would block the open for good: refused as every other path flag refuses one,
    one line and exit 2 (a subprocess with a timeout: a hang fails the test)."""
    import os
    import subprocess
    import sys
    fifo = tmp_path / "table.csv"
    os.mkfifo(fifo)
    for path, why in ((fifo, "is not a plain file"), (tmp_path, "is a folder")):
        p = subprocess.run([sys.executable, "-m", "numascope", "references", "--table",
                            str(path)], capture_output=True, text=True, timeout=60, check=False)
        assert p.returncode == 2 and p.stdout == "", p.stderr
        assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr
        assert p.stderr.startswith(f"numascope: error: --table {path}: {why}"), p.stderr


def test_run_shows_the_matches_of_a_stored_run_and_why_others_do_not(capsys, tmp_path):
    from numascope.results.run import RunRecord
    from numascope.results.store import Store
    db = tmp_path / "runs.db"
    with Store.open(db, write=True) as st:
        for tag, memory in (("a", "8x DDR4-2400"), ("b", None)):
            rec = RunRecord.new(tags={"dimms": tag})
            rec.host = _host(tmp_path / tag, memory=memory, ghz=2.75)
            rec.status, rec.finished = "complete", rec.started
            st.begin_run(rec)
            st.finish_run(rec)
    rc, out, err = _cli(capsys, "--run", "dimms=a", "--store", str(db),
                        "--quantity", "triad_all_cores")
    assert rc == 0 and err == ""
    text = " ".join(out.split())
    assert "244 GB/s" in text and "CPU model, memory mode, DIMM population" in text
    assert "source: Dell HPC and AI Innovation Lab" in text
    rc, out, err = _cli(capsys, "--run", "dimms=b", "--store", str(db), "--json")
    assert rc == 1 and "no published figure matches this run's host" in err
    doc = json.loads(out)["results"][0]
    assert doc["matches"] == []
    reasons = {x["id"]: x["reasons"] for x in doc["not_matched"]}
    assert reasons["dell-naples-triad-all-cores"][0].startswith("DIMM population: not known")
    assert not [i for i in reasons if not i.startswith("dell-naples-")]   # its CPU's rows only


# -- the same quantity measured the same way -----------------------------------------------

def test_the_table_says_how_each_figure_was_measured():
    """reach, path, kernel and threads are columns: every MPI row says its reach (Dell's
    OSU figures are of two hosts over InfiniBand), the triad rows their kernel and threads."""
    by_id = {r.id: r for r in refs.load()}
    for r in by_id.values():
        if r.quantity.startswith("mpi_"):
            assert r.reach == "between hosts" and r.kernel.startswith("osu_"), r.id
    lat = by_id["dell-naples-mpi-latency-hpcx"]
    assert lat.how == {"reach": "between hosts", "path": "HCA's node",
                       "kernel": "osu_latency", "threads": 2}
    assert by_id["dell-naples-triad-all-cores"].how == {"kernel": "triad", "threads": 64}
    assert by_id["dell-naples-remote-other-socket"].how == {"kernel": "triad"}
    assert refs.load()[0].to_dict()["kernel"] == "triad"


def test_a_row_with_a_bad_reach_or_an_mpi_row_without_one_is_refused(tmp_path):
    p = _write(tmp_path, lambda rows: rows[0].update(reach="over the air"))
    with pytest.raises(UserError, match="reach 'over the air' is not one of between hosts"):
        refs.load(p)

    def no_reach(rows):
        next(r for r in rows if r["quantity"] == "mpi_latency")["reach"] = ""
    with pytest.raises(UserError, match=r"an MPI figure \(mpi_latency\) must say its reach"):
        refs.load(_write(tmp_path, no_reach))


def test_a_match_is_only_for_a_figure_measured_the_same_way(tmp_path):
    host = _host(tmp_path)
    found = {m.ref.id: m for m in refs.matches(host)}
    lat = found["dell-naples-mpi-latency-hpcx"]
    assert lat.how["reach"] == "between hosts"
    same_l3 = {"reach": "within a host", "path": "same L3", "kernel": "osu_latency",
               "threads": 2}
    assert refs.measured_otherwise(lat, same_l3)[0] == (
        "reach: the publication's is 'between hosts', this figure's 'within a host'")
    assert refs.measured_otherwise(lat, {**same_l3, "reach": "between hosts",
                                         "path": "HCA's node"}) == []
    assert refs.measured_otherwise(lat, {"kernel": "osu_latency"})[0].endswith("not known")
    # unstated fields are no condition: the MXM row does not say where the ranks sat
    assert refs.measured_otherwise(found["dell-naples-mpi-latency-mxm"],
                                   {**same_l3, "reach": "between hosts"}) == []
    ratio = found["dell-naples-remote-other-socket"]
    assert refs.measured_otherwise(ratio, {"kernel": "read", "threads": 8}) == [
        "kernel: the publication's is 'triad', this figure's 'read'"]
    assert refs.how_text(lat.how) == "between hosts, HCA's node, osu_latency, 2 ranks"


def test_a_one_socket_host_gets_the_whole_host_threads_halved_and_said(tmp_path):
    host = _host(tmp_path, sockets=1)
    m = next(m for m in refs.matches(host) if m.ref.id == "dell-naples-triad-all-cores")
    assert m.how == {"kernel": "triad", "threads": 32}
    assert any("the published 64 threads are of 2 sockets; for this host's 1 socket: 32"
               in n for n in m.notes)


def _report_of_7601(tmp_path, results):
    """The HTML report of a run on the 2-socket EPYC 7601 in NPS4 (its DIMMs given), with
    `results`."""
    from test_store_helpers import make_run

    from numascope.report.html import render
    from numascope.results.plain import to_plain
    run = make_run({}, results)
    run.host = _host(tmp_path)
    run.topology = to_plain(read_topology(str(tmp_path / "root")))
    return run, render([run])


def _net(case: str, us: float, mbs: float, **params) -> BenchResult:
    net = {"sizes": [8, 1 << 22], "pages": "system", "buffers": "same", "window": 64,
           "engine": "numascope", "reps": 3}
    return BenchResult("interconnect", case, {"net": net, "buffers": "same",
                                              "engine": "numascope", **params},
                       {"latency": Metric("latency", "us", False, [us] * 3),
                        "bandwidth": Metric("bandwidth", "MB/s", True, [mbs] * 3)})


def _between(text: str, start: str, end: str = "</tr>") -> str:
    i = text.index(start)
    return text[i:text.index(end, i)]


def test_a_same_l3_pair_is_not_set_beside_dells_inter_host_osu_figure(tmp_path):
    """The issue's case: a 2-socket EPYC 7601 in NPS4 whose only MPI figures are a same-L3
    pair through shared memory (0.3 µs, 28 % of Dell's 1.07 µs between two hosts over EDR
    InfiniBand, 9 GB/s): the report shows the pair's figures, labelled within a host, and
    sets no published figure beside them, saying why."""
    pair = _net("same L3 (CPU 0 - CPU 1)", 0.3, 9000.0, mode="path", path="same L3",
                cpu_a=0, cpu_b=1, node_a=0, node_b=0)
    run, html = _report_of_7601(tmp_path, [pair])
    from numascope.report.headline import headlines
    lines = {h.key: h for h in headlines(run)}
    assert lines["mpi_latency"].what == "MPI latency within a host, same L3 (CPU 0 - CPU 1)"
    assert lines["mpi_latency"].reference == "" and lines["mpi_bandwidth"].reference == ""
    assert "of the published 1.07" not in html and "of the published 1.17" not in html
    assert "of the published 12.4" not in html
    row = _between(html, 'data-key="mpi_latency/within a host"')
    assert "not set beside the published 1.07 µs (Dell HPC and AI Innovation Lab, 2018) " \
        "(and 2 more of its quantity): measured otherwise, reach: the publication&#x27;s " \
        "is &#x27;between hosts&#x27;, this figure&#x27;s &#x27;within a host&#x27;" in row


def test_a_pair_between_hosts_on_the_hcas_node_is_set_beside_it(tmp_path):
    """The figure Dell measured: two hosts, the ranks on the HCA's node, stock OSU's
    method: set beside the published one, with how it was measured alike."""
    peer = _net("r7425a N6 - r7425b N6", 1.1, 12000.0, mode="peer", path="between hosts",
                cpu_a=48, cpu_b=48, node_a=6, node_b=6, hca={"hca_node": 6, "distance": 10})
    old = _net("same L3 (CPU 0 - CPU 1)", 0.3, 9000.0, mode="path", path="same L3",
               cpu_a=0, cpu_b=1, node_a=0, node_b=0)
    old.params["net"] = {k: v for k, v in old.params["net"].items() if k != "pages"}
    _, html = _report_of_7601(tmp_path, [peer, old])
    row = _between(html, 'data-key="mpi_latency/between hosts"')
    assert "103 % of the published 1.07 µs (Dell HPC and AI Innovation Lab, 2018; matched " \
        "CPU model, memory mode, DIMM population, sockets; measured alike: between hosts, " \
        "HCA&#x27;s node, osu_latency, 2 ranks)" in row
    # THP madvised (a record from before --pages system) is not OSU's method
    row = _between(html, 'data-key="mpi_latency/within a host"')
    assert "of the published" not in row


def test_the_matrix_read_ratio_is_not_set_beside_dells_triad_ratio(tmp_path):
    """The remote/local bandwidth headline divides the matrix's read kernel (every CPU of
    the source node) by its local figure; Dell's 0.7 and 0.35 are triad ratios: not set
    beside it. The all-core triad (64 threads, Dell's) still is."""
    def mat(src: int, dst: int, dist: int, gbs: float) -> BenchResult:
        return BenchResult("matrix", f"N{src}->N{dst}", {"src": src, "dst": dst,
                                                         "distance": dist},
                           {"latency": Metric("latency", "ns", False, [90.0 + dist] * 3),
                            "bandwidth": Metric("bandwidth", "GB/s", True, [gbs] * 3)},
                           {"cpus": list(range(8))})
    triad = BenchResult("bandwidth", "triad compact 64T",
                        {"kernel": "triad", "threads": 64, "policy": "compact"},
                        {"bandwidth": Metric("bandwidth", "GB/s", True, [232.0] * 5)})
    _, html = _report_of_7601(tmp_path, [triad, mat(0, 0, 10, 30.0), mat(0, 1, 16, 21.0),
                                         mat(0, 4, 32, 10.5)])
    assert "of the published 0.7 x" not in html and "of the published 0.35 x" not in html
    row = _between(html, 'data-key="remote_local_ratio/remote node, other socket"')
    assert "measured otherwise, kernel: the publication&#x27;s is &#x27;triad&#x27;, this " \
        "figure&#x27;s &#x27;read&#x27;" in row
    row = _between(html, 'data-key="triad_all_cores"')
    assert "95 % of the published 244 GB/s" in row and "measured alike: triad, 64 " \
        "threads" in row
