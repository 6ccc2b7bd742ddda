"""fio's side of `numascope io`: the job file from IoParams, the JSON parser on outputs recorded
with the real fio 3.33 (tests/data/fio/README.md), a newer format, errors, an interrupted
run, and the binary's probes."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from numascope.errors import MeasurementError, Unavailable, UserError
from numascope.families.storage import fio as io_fio
from numascope.families.storage.fio import Group, IoParams, job_text, parse, parse_json_text

DATA = Path(__file__).parent / "data" / "fio"
FIO = shutil.which("fio")


def _load(name: str):
    return parse((DATA / name).read_text())


# -- parameters and the job file ---------------------------------------------------------

def test_defaults_and_sequential_block_size():
    assert IoParams().bs == 4096 and IoParams().rw == "randread" and IoParams().direct
    assert IoParams(rw="read").bs == 128 * 1024
    assert IoParams(rw="read", bs=8192).bs == 8192


@pytest.mark.parametrize("kw, says", [
    ({"rw": "trim"}, "--rw trim"), ({"bs": 1000}, "multiple of 512"),
    ({"iodepth": 0}, "--iodepth 0"), ({"numjobs": 0}, "--threads 0"),
    ({"runtime": 0.1}, "--runtime"), ({"ramp": -1}, "--ramp"),
    ({"size": 6000}, "whole number of blocks"), ({"rwmixread": 101}, "--rwmixread"),
])
def test_bad_params_are_user_errors(kw, says):
    with pytest.raises(UserError, match=says.replace(".", r"\.")):
        IoParams(**kw)


def test_params_round_trip_through_a_record_dict():
    p = IoParams(rw="randrw", bs=8192, iodepth=4, numjobs=2, runtime=1.5, rwmixread=50)
    assert IoParams.from_dict(p.to_dict()) == p


def test_job_file_pins_each_group_and_binds_its_buffers():
    p = IoParams(iodepth=8, numjobs=2, runtime=1.5, ramp=0, size=16 << 20)
    text = job_text(p, [Group("t0", "/a/f", (0, 1, 2, 3), (1,)),
                        Group("t1", "/b/f", None, None)], "io_uring")
    lines = text.splitlines()
    assert "ioengine=io_uring" in lines and "direct=1" in lines and "time_based=1" in lines
    assert "runtime=1500ms" in lines and "ramp_time=0" in lines and "iodepth=8" in lines
    t0 = lines[lines.index("[t0]"):lines.index("[t1]")]
    t1 = lines[lines.index("[t1]"):]
    assert "cpus_allowed=0-3" in t0 and "cpus_allowed_policy=split" in t0
    assert "numa_mem_policy=bind:1" in t0 and "new_group" in t0
    assert not any(x.startswith(("cpus_allowed", "numa_mem")) for x in t1)
    assert "readonly=1" not in lines


def test_job_file_without_numa_support_leaves_pinning_to_the_caller():
    text = job_text(IoParams(), [Group("t0", "/a/f", (0,), (0,))], "libaio", numa=False,
                    readonly=True)
    assert "cpus_allowed" not in text and "numa_mem_policy" not in text
    assert "readonly=1" in text and "ioengine=libaio" in text


def test_more_jobs_than_cpus_share_them():
    text = job_text(IoParams(numjobs=4), [Group("t0", "/f", (0, 1), None)], "io_uring")
    assert "cpus_allowed_policy=shared" in text


# -- the parser on recorded outputs ------------------------------------------------------

def test_fio_3_33_randread():
    run = _load("fio-3.33-randread.json")
    assert run.version == "fio-3.33" and len(run.groups) == 1
    g = run.groups[0]
    assert g.name == "t0" and g.error == 0 and g.write_iops == 0
    assert g.iops == pytest.approx(run.raw["jobs"][0]["read"]["iops"]) and g.iops > 1000
    assert run.bw_bytes == pytest.approx(run.raw["jobs"][0]["read"]["bw_bytes"])
    pct = run.raw["jobs"][0]["read"]["clat_ns"]["percentile"]
    assert g.clat_us["p50"] == pytest.approx(pct["50.000000"] / 1000)     # ns -> us
    assert g.clat_us["p99.9"] == pytest.approx(pct["99.900000"] / 1000)
    assert g.clat_us["p50"] <= g.clat_us["p99"] <= g.clat_us["p99.9"]
    assert g.sys_cpu == run.raw["jobs"][0]["sys_cpu"] and g.usr_cpu > 0
    assert g.options["numa_mem_policy"] == "bind:0" and g.options["cpus_allowed"] == "0"
    assert not run.failed()


def test_fio_3_33_randrw_reports_both_directions():
    run = _load("fio-3.33-randrw.json")
    g = run.groups[0]
    assert g.read_iops > g.write_iops > 0 and g.iops == pytest.approx(g.read_iops + g.write_iops)
    assert g.clat_us and g.write_clat_us and g.write_clat_us["p99"] > 0


def test_fio_3_33_two_groups_one_per_target():
    run = _load("fio-3.33-two-groups.json")
    assert [g.name for g in run.groups] == ["t0", "t1"]
    assert [g.groupid for g in run.groups] == [0, 1]
    assert run.iops == pytest.approx(sum(g.iops for g in run.groups))


def test_newer_format_with_a_note_before_the_json_and_extra_keys():
    new, old = _load("fio-3.38-newer-format.json"), _load("fio-3.33-randread.json")
    assert new.version == "fio-3.38"
    assert new.groups[0].iops == pytest.approx(old.groups[0].iops)
    # the p99.9 key spelled "99.9" is still found
    assert new.groups[0].clat_us == pytest.approx(old.groups[0].clat_us)


def test_job_with_errors_is_seen_as_failed():
    run = _load("fio-3.33-error.json")         # fio's own line comes before the JSON here
    assert run.groups[0].error == 22 and run.failed() == run.groups
    assert run.groups[0].iops == 0


def test_interrupted_run_parses_with_its_short_runtime():
    run = _load("fio-3.33-interrupted.json")   # "fio: terminating on signal 2" first
    g = run.groups[0]
    asked = int(g.options.get("runtime", 0) or run.raw["global options"]["runtime"]) * 1000
    assert 0 < g.runtime_ms < asked and g.iops > 0 and not run.failed()


@pytest.mark.parametrize("text, says", [
    ("", "no JSON"), ("fio: failed to open job file\n", "failed to open job file"),
    ('{"fio version": "fio-3.33", "jobs": [', "cut or malformed"),
    ('{"fio version": "fio-3.33"}', "no jobs list"),
])
def test_unusable_output_is_a_measurement_error(text, says):
    with pytest.raises(MeasurementError, match=says):
        parse_json_text(text)


def test_missing_percentiles_are_absent_not_zero():
    doc = {"jobs": [{"jobname": "x", "read": {"iops": 5, "clat_ns": {"mean": 1.0}}}]}
    g = parse(doc).groups[0]
    assert g.clat_us == {} and g.iops == 5 and math.isfinite(g.bw_bytes)


def test_old_fio_latency_in_microseconds():
    doc = {"jobs": [{"jobname": "x", "read": {"iops": 5, "clat": {
        "percentile": {"50.000000": 80, "99.000000": 120, "99.900000": 300}}}}]}
    assert parse(doc).groups[0].clat_us == {"p50": 80.0, "p99": 120.0, "p99.9": 300.0}


# -- the binary ---------------------------------------------------------------------------

def test_fio_missing_is_unavailable(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMASCOPE_FIO", str(tmp_path / "no-fio"))
    with pytest.raises(Unavailable, match="fio not found"):
        io_fio.fio_path()
    monkeypatch.delenv("NUMASCOPE_FIO")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(Unavailable, match="install fio"):
        io_fio.fio_path()


def test_a_program_that_is_not_fio_is_unavailable(tmp_path):
    fake = tmp_path / "fio"
    fake.write_text("#!/bin/sh\necho hello\n")
    fake.chmod(0o755)
    with pytest.raises(Unavailable, match="did not say it is fio"):
        io_fio.fio_version(str(fake))


@pytest.mark.skipif(FIO is None, reason="fio is not installed")
def test_probe_finds_an_engine_and_says_whether_fio_binds_memory():
    engine, numa = io_fio.probe(FIO)
    assert engine in io_fio.ENGINES and isinstance(numa, bool)
    assert io_fio.fio_version(FIO).startswith("fio-")


@pytest.mark.skipif(FIO is None, reason="fio is not installed")
def test_a_failing_job_is_a_measurement_error_naming_the_errno(tmp_path):
    f = tmp_path / "data"
    p = IoParams(bs=1024, runtime=1, ramp=0, size=1 << 20)
    text = job_text(p, [Group("t0", str(f), None, None)], io_fio.probe(FIO)[0])
    text = text.replace("bs=1024", "bs=1000").replace("size=1048576", "size=1000000")
    with pytest.raises(MeasurementError, match=r"fio job t0 failed: error 22 \(Invalid argument\)"):
        io_fio.run_fio(text, path=FIO)
