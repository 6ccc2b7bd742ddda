import json
import subprocess
import sys

from numascope.cli import main


def test_help_lists_commands(capsys):
    try:
        main(["--help"])
    except SystemExit as e:
        assert e.code == 0
    assert "numascope" in capsys.readouterr().out


def test_unknown_command_is_one_line_exit_2():
    p = subprocess.run([sys.executable, "-m", "numascope", "no-such-command"],
                       check=False, capture_output=True, text=True)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert p.stderr.strip().startswith("numascope: error:")
    assert len(p.stderr.strip().splitlines()) == 1


BAD_INPUTS = [
    (["peak", "--no-compute", "--clock", "inf"], "--clock must be a positive, finite"),
    (["peak", "--no-compute", "--clock", "nan"], "--clock must be a positive, finite"),
    (["bw", "--cpus", ""], "--cpus is empty"),
    (["bw", "--domain", " "], "--domain is empty"),
    (["compress", "--chunk", "64K", "--block", "1M", "--size", "16M"],
     "cannot be larger than its chunk"),
]


def test_bad_values_are_one_line_exit_2(capsys):
    for argv, msg in BAD_INPUTS:
        rc = main(argv)
        err = capsys.readouterr().err
        assert rc == 2, (argv, err)
        assert msg in err and err.strip().count("\n") == 0, (argv, err)


def test_a_prefix_of_a_long_option_is_not_that_option(capsys):
    """argparse's abbreviations are off, in every command and subcommand: `--thread` is not
    `--threads` (a typo of a future option would silently mean an existing one)."""
    for argv in (["bw", "--thread", "2"], ["lat", "--siz", "1M"],
                 ["fleet", "report", "--fle", "x"], ["compare", "a", "b", "--all-metric"]):
        try:
            rc = main(argv)
        except SystemExit as e:
            rc = e.code
        err = capsys.readouterr().err
        assert rc == 2, (argv, err)
        assert "unrecognized arguments" in err and err.strip().count("\n") == 0, (argv, err)


def test_a_family_command_answers_to_the_family_s_name(capsys):
    from numascope.cli import main
    for alias, name in (("latency", "lat"), ("storage", "io"), ("interconnect", "net"),
                        ("compute", "peak"), ("bandwidth", "bw")):
        assert main([alias, "--help"]) == 0
        assert f"usage: numascope {name} " in capsys.readouterr().out
    assert main(["latency", "--samples", "0", "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "lat" and doc["errors"][0]["kind"] == "bad-input"
