"""Print numascope's runtime dependencies, and those of the extras named, one per line, as
pyproject.toml declares them (the Makefile installs them before numascope itself).

    python scripts/dependencies.py test      # project.dependencies + the test extra

They are installed apart from the package because numascope's own editable build runs
without build isolation (meson-python rebuilds the C core on import with the venv's
meson and ninja), and pip applies --no-build-isolation to every package of one call: an
sdist among the dependencies (kerncraft) would then be built with whatever the venv holds
instead of the build requirements it declares (a bare venv's setuptools 65 has no
bdist_wheel without the `wheel` package: metadata-generation-failed on a cold pip cache)."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def dependencies(extras: list[str]) -> list[str]:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    optional = project.get("optional-dependencies", {})
    unknown = [e for e in extras if e not in optional]
    if unknown:
        raise SystemExit(f"dependencies.py: no extra {', '.join(unknown)} in {PYPROJECT} "
                         f"(there are: {', '.join(sorted(optional))})")
    found = list(project.get("dependencies", []))
    for e in extras:
        found += [d for d in optional[e] if d not in found]
    return found


if __name__ == "__main__":
    print("\n".join(dependencies(sys.argv[1:])))
