"""A Ctrl-C in a command's first tenths of a second, while numascope itself is imported
(in an editable install, meson-python's rebuild hook runs ninja there): one line and exit
130, never a KeyboardInterrupt traceback. The interruption is planted in the import (a
finder that raises it for numascope.cli), so it lands in that window every time."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# the import of numascope.cli interrupted, as a Ctrl-C during the rebuild hook interrupts it
PLANTED = """
import runpy, sys
class Interrupting:
    def find_spec(self, name, path=None, target=None):
        if name == "numascope.cli":
            raise KeyboardInterrupt
sys.meta_path.insert(0, Interrupting())
what = sys.argv[1]
sys.argv = [what, "run", "--smoke"]
if what == "-m":
    runpy.run_module("numascope", run_name="__main__", alter_sys=True)
else:
    runpy.run_path(what, run_name="__main__")
"""


def _interrupted(what: str) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, "-c", PLANTED, what], capture_output=True,
                       text=True, timeout=60, check=False)
    assert p.returncode == 130, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr and "KeyboardInterrupt" not in p.stderr, p.stderr
    assert p.stderr == "numascope: interrupted (SIGINT)\n", p.stderr
    return p


def test_the_written_console_script_says_one_line_and_exits_130(tmp_path):
    """scripts/entry-script.py over pip's script (the Makefile runs it after the editable
    install): the interpreter line pip gave it is kept, the import is inside the handling."""
    script = tmp_path / "numascope"
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom numascope.cli import main\n"
                      "if __name__ == '__main__':\n    sys.exit(main())\n")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "entry-script.py"), str(script)],
                   check=True, timeout=60)
    assert script.read_text().splitlines()[0] == f"#!{sys.executable}"
    assert script.stat().st_mode & 0o111
    _interrupted(str(script))
    p = subprocess.run([str(script), "--version"], capture_output=True, text=True,
                       timeout=60, check=False)
    assert p.returncode == 0 and p.stdout.startswith("numascope "), p.stderr


def test_python_m_numascope_says_one_line_and_exits_130():
    _interrupted("-m")


def test_the_venvs_numascope_command_is_the_written_one():
    """`make` wrote it (a venv from before this change has pip's: rerun make)."""
    found = shutil.which("numascope", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("no numascope command beside this interpreter (not the Makefile's venv)")
    if "entry-script.py" not in Path(found).read_text():
        pytest.skip("this venv's numascope command is pip's (installed before "
                    "scripts/entry-script.py: rerun make)")
    _interrupted(found)
