"""Which BLAS does the work: numpy's (through threadpoolctl or numpy.show_config) and the
one a binary such as hpcc links (through ldd). A reference (netlib) BLAS is 10–50× slower
than an optimized one, so a compute figure measured on it says nothing about the machine."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Any

OPTIMIZED = ("openblas", "mkl", "blis", "flexiblas", "armpl", "accelerate", "atlas", "nvpl")


def classify(path_or_name: str) -> str:
    """'optimized', 'reference' or 'unknown' for a library path or name."""
    s = path_or_name.lower()
    if any(k in s for k in OPTIMIZED):
        return "optimized"
    # Debian's netlib BLAS lives in .../blas/libblas.so.3 (the alternatives default)
    if re.search(r"/blas/libblas\.so|netlib|refblas|reference", s):
        return "reference"
    return "unknown"


def numpy_blas() -> dict[str, Any]:
    """{"library", "version", "threads", "threading", "path", "kind", "how"} for numpy."""
    info: dict[str, Any] = {"library": None, "version": None, "threads": None,
                            "threading": None, "path": None, "kind": "unknown", "how": ""}
    try:
        from threadpoolctl import threadpool_info  # optional: the most precise source
        pools = [p for p in threadpool_info() if p.get("user_api") == "blas"]
        if pools:
            p = pools[0]
            info.update(library=p.get("internal_api"), version=p.get("version"),
                        threads=p.get("num_threads"), threading=p.get("threading_layer"),
                        path=p.get("filepath"), how="threadpoolctl",
                        architecture=p.get("architecture"))
            info["kind"] = classify(f"{p.get('internal_api')} {p.get('filepath')}")
            return info
    except ImportError:
        pass
    try:
        import numpy as np
        cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        info.update(library=cfg.get("name"), version=cfg.get("version"),
                    how="numpy.show_config (threads not known: install threadpoolctl)")
        info["kind"] = classify(str(cfg.get("name")) + str(cfg.get("openblas configuration", "")))
    except (TypeError, KeyError, AttributeError, ValueError) as e:  # old numpy, odd builds
        info["how"] = f"unknown ({type(e).__name__})"
    if info["threads"] is None:
        env = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")
        info["threads"] = int(env) if env and env.isdigit() else None
    return info


def linked_blas(binary: str) -> dict[str, Any]:
    """The BLAS a dynamically linked binary loads: {"path", "resolved", "kind"}."""
    exe = shutil.which(binary) or binary
    out: dict[str, Any] = {"path": None, "resolved": None, "kind": "unknown"}
    ldd = shutil.which("ldd")
    if not ldd or not os.path.exists(exe):
        return out
    try:
        text = subprocess.run([ldd, exe], capture_output=True, text=True, timeout=10,
                              check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return out
    for line in text.splitlines():
        m = re.match(r"\s*(lib(?:open)?blas\S*|libmkl\S*|libblis\S*|libflexiblas\S*)\s+=>\s+"
                     r"(\S+)", line)
        if m:
            out["path"] = m.group(2)
            out["resolved"] = os.path.realpath(m.group(2))
            out["kind"] = classify(out["resolved"])
            break
    return out


def warning_for(info: dict[str, Any], what: str) -> str | None:
    if info.get("kind") == "reference":
        return (f"{what} uses the reference (netlib) BLAS {info.get('resolved') or info.get('path')}"
                ": 10–50× below an optimized BLAS; the figure does not show what the machine "
                "can do (Debian: install libopenblas0-pthread and it becomes the libblas.so.3 "
                "alternative)")
    return None
