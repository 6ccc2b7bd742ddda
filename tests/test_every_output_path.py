"""Every command's output file and working folder goes through the one path check
(command.output.check_output / check_workdir) before anything is measured: each such option
of every command, found by walking the parser, pointed into /proc, is exit 2 with one line
naming the path, nothing measured and nothing written."""

from __future__ import annotations

import pytest
from test_every_option_empty import _leaves

from numascope import benchmark
from numascope.cli import build_parser, main
from numascope.command import runner

FILES = {"plot": ".png", "report": ".html", "hwloc_xml": ".xml", "out": ".prom",
         "nfd_file": ""}
FOLDERS = {"dirs", "io_dir", "shared_dir", "prom_dir"}
NEEDS = {("io",): [], ("fleet", "run"): ["--no-mpi"], ("compare",): ["a", "b"],
         ("report",): ["latest"], ("export",): ["latest"]}


def _cases():
    for path, p in _leaves(build_parser()):
        for a in p._actions:
            if not a.option_strings:
                continue
            flag = next(s for s in a.option_strings if s.startswith("--"))
            if a.dest in FILES:
                value = f"/proc/numascope-out{FILES[a.dest]}"
            elif a.dest == "output":
                value = "/proc/numascope-out" + (".html" if path == ("report",) else ".csv")
            elif a.dest in FOLDERS:
                value = "/proc"
            elif a.dest == "store" and path in (("run",), ("fleet", "run")):
                value = "/proc/numascope-runs.db"
            else:
                continue
            yield pytest.param([*path, *NEEDS.get(path, []), flag, value],
                               id=" ".join([*path, flag]))


@pytest.mark.parametrize("argv", list(_cases()))
def test_an_output_into_proc_is_refused_before_measuring(argv, capsys, monkeypatch, tmp_path):
    def refuse(*a, **k):
        raise AssertionError("measured before checking the output path")
    monkeypatch.setattr(benchmark, "run_cases", refuse)
    monkeypatch.setattr(runner, "run_cases", refuse)
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2, argv
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith("numascope: error:") and "/proc" in err[0], err
    assert list(tmp_path.iterdir()) == []
