"""One rank of `advise --verify`: `python .../numascope/predict/worker.py SPEC [RANK]`.

It imports the numascope its parent runs: the source folder and the C core named by
NUMASCOPE_WORKER_SRC and NUMASCOPE_WORKER_CORE (set by verify.py), loaded as files, past
any editable-install loader (which would rebuild at every start, and cannot on a read-only
tree such as the test guests' view of it).

SPEC (JSON): {"ranks": [{"threads": [...], "mem_nodes": [...]}, ...], "size_bytes": N,
"reps": R, "isa": I, "nt": on|off|auto, "barrier": DIR}. The rank is RANK, else the launcher's (OMPI_COMM_WORLD_RANK,
PMIX_RANK, PMI_RANK, SLURM_PROCID). Every rank marks DIR/ready-<rank> once loaded and
starts only when all have (a file barrier: the ranks' timed repetitions overlap), then
measures the STREAM triad on its threads' CPUs over memory bound to its nodes and writes
DIR/result-<rank>.json {"type": "rank", "rank": r, "result": BenchResult, "affinity": [...]}
(written whole, then renamed: a launcher forwarding the ranks' stdout may splice two ranks'
long lines together, as Open MPI's did)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

BARRIER_S = 120.0


def same_numascope() -> None:
    """Import numascope from NUMASCOPE_WORKER_SRC with its C core NUMASCOPE_WORKER_CORE."""
    src, core = os.environ.get("NUMASCOPE_WORKER_SRC"), os.environ.get("NUMASCOPE_WORKER_CORE")
    if not src or not core:
        return
    import importlib.util
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__]
    sys.path.insert(0, src)
    spec = importlib.util.spec_from_file_location("numascope._core", core)
    if spec is None or spec.loader is None:
        raise SystemExit(f"numascope.predict.worker: cannot load the C core {core}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["numascope._core"] = mod
    spec.loader.exec_module(mod)
    import numascope
    numascope._core = mod  # type: ignore[attr-defined]


def _rank(argv: list[str]) -> int:
    if len(argv) > 2:
        return int(argv[2])
    for v in ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"):
        if os.environ.get(v, "").isdigit():
            return int(os.environ[v])
    raise SystemExit("numascope.predict.worker: no rank (argument or launcher variable)")


def main(argv: list[str]) -> int:
    same_numascope()
    spec = json.loads(Path(argv[1]).read_text())
    rank = _rank(argv)
    me = spec["ranks"][rank]
    from numascope.families.bandwidth.bench import measure
    from numascope.memspec import MemorySpec
    from numascope.topology import read_topology  # type: ignore[attr-defined]
    topo = read_topology("/")
    nodes = tuple(me["mem_nodes"])
    mem = MemorySpec("bind", nodes) if nodes and len(topo.nodes) > 1 else MemorySpec()
    barrier = Path(spec["barrier"])
    (barrier / f"ready-{rank}").touch()
    t0 = time.monotonic()
    while len(list(barrier.glob("ready-*"))) < len(spec["ranks"]):
        if time.monotonic() - t0 > BARRIER_S:
            raise SystemExit(f"rank {rank}: the other ranks never started")
        time.sleep(0.001)
    res = measure(topo, "triad", cpus=list(me["threads"]), memory=mem,
                  size_bytes=spec.get("size_bytes"), reps=int(spec["reps"]),
                  isa=spec.get("isa", "auto"), nt=spec.get("nt", "auto"), label=f"triad verify rank {rank}")
    # params.rep_spans holds each repetition's stamps: verify.overlap sets the ranks' in time
    line = json.dumps({"type": "rank", "rank": rank, "result": res.to_dict(),
                       "affinity": sorted(os.sched_getaffinity(0))})
    tmp = barrier / f".result-{rank}.json"
    tmp.write_text(line)
    tmp.rename(barrier / f"result-{rank}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
