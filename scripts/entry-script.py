"""Write the venv's `numascope` command: pip's console script with the first import inside
the Ctrl-C handling (the Makefile runs this right after the editable install).

    python scripts/entry-script.py .venv/bin/numascope

pip's script is `from numascope.cli import main` then `sys.exit(main())`: numascope.cli.main
turns a stop signal into one line and exit 130/143, but only once it runs. In an editable
install the first import of numascope is meson-python's rebuild hook (ninja checking the C
core, a few tenths of a second), and a Ctrl-C there was a KeyboardInterrupt traceback from
the loader. Here the import is inside the same handling: one line, exit 130. (A Ctrl-C while
the interpreter itself starts, before any script runs, stays Python's; so does the rebuild
under `python -m numascope`, which imports the package before any of its code runs.)"""

from __future__ import annotations

import os
import sys
from pathlib import Path

TEMPLATE = '''{shebang}
# numascope's command (scripts/entry-script.py wrote it over pip's console script)
import sys


def _interrupted() -> int:
    import signal
    sys.stderr.write("numascope: interrupted (SIGINT)\\n")
    return 128 + int(signal.SIGINT)


if __name__ == "__main__":
    sys.argv[0] = sys.argv[0].removesuffix(".exe")
    try:    # the first import may be meson-python's rebuild of an editable install
        from numascope.cli import main
    except KeyboardInterrupt:
        sys.exit(_interrupted())
    sys.exit(main())
'''


def write(path: Path) -> None:
    """`path` rewritten, keeping the interpreter line pip gave it (the venv's python)."""
    first = path.read_text().splitlines()[0] if path.exists() else ""
    shebang = first if first.startswith("#!") else \
        f"#!{os.path.abspath(path.parent / 'python')}"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(TEMPLATE.format(shebang=shebang))
    tmp.chmod(0o755)
    os.replace(tmp, path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: entry-script.py VENV/bin/numascope")
    write(Path(sys.argv[1]))
