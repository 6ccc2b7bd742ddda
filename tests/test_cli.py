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
