"""How the peer scripts run numascope: the command line they print, as a user would type it
(`numascope ...`), run with this Python's numascope; the first result of its --json output."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys


def first_result(cmd: list[str], script: str) -> dict:
    """The first result record of `cmd` (a `numascope ... --json` line); a failed run ends
    the script with its command line and the end of its error output."""
    p = subprocess.run([sys.executable, "-m", "numascope", *cmd[1:]], capture_output=True,
                       text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"{script}: {shlex.join(cmd)} exited {p.returncode}: "
                         f"{p.stderr.strip()[-300:]}")
    return json.loads(p.stdout)["results"][0]
