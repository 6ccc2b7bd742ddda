"""Runs inside a QEMU guest: numascope commands, one after the other in this one process,
each with its exit status, stdout, stderr and the placement witness's lines.

    python guest_driver.py JOB.json      # writes the result next to JOB.json

Python starts slowly under TCG (seconds per process), so every command of a guest runs in
this one process through numascope.cli.main, with its file descriptors 1 and 2 redirected
to files: what a user of the command line would see, exit status included. numascope is
imported straight from the source tree and the C core built on the host (the editable
loader would run ninja at every start, and the guest's view of the tree is read-only)."""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import shutil
import sys
import threading
import time
import traceback
from pathlib import Path


def load_numascope(src: str, core: str) -> None:
    """Import numascope from `src` with its C core from `core` (the host's build)."""
    os.environ["MESONPY_EDITABLE_SKIP"] = os.pathsep.join(
        p for p in (os.environ.get("MESONPY_EDITABLE_SKIP", ""), str(Path(core).parent)) if p)
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__]
    sys.path.insert(0, src)
    spec = importlib.util.spec_from_file_location("numascope._core", core)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["numascope._core"] = mod
    spec.loader.exec_module(mod)
    import numascope
    numascope._core = mod  # type: ignore[attr-defined]


def run_step(argv: list[str], out: Path, err: Path) -> int:
    """numascope.cli.main(argv) with fd 1 and 2 going to files; its exit status."""
    from numascope.cli import main
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(out, "wb") as fo, open(err, "wb") as fe:
        os.dup2(fo.fileno(), 1)
        os.dup2(fe.fileno(), 2)
        try:
            rc = main(argv)
        except SystemExit as e:          # argparse errors
            rc = e.code if isinstance(e.code, int) else 1
        except BaseException as e:       # noqa: BLE001 - a traceback is a finding, not a crash
            import traceback
            traceback.print_exc()
            rc = f"raised {type(e).__name__}"
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
    return rc


def split_log(path: Path) -> dict[str, list[dict]]:
    """Witness lines grouped by the step marker that precedes them."""
    steps: dict[str, list[dict]] = {}
    current = None
    if not path.exists():
        return steps
    for line in path.read_text().splitlines():
        ev = json.loads(line)
        if ev["ev"] == "mark":
            current = ev["name"]
            steps[current] = []
        elif current is not None:
            steps[current].append(ev)
    return steps


def _sample_stacks(f, every: float) -> None:
    main_id = threading.main_thread().ident

    def loop() -> None:
        t0 = time.monotonic()
        while True:
            time.sleep(every)
            frame = sys._current_frames().get(main_id)
            if frame is not None:
                print(f"--- {time.monotonic() - t0:.0f} s", file=f)
                f.write("".join(traceback.format_stack(frame)))
                f.flush()
            # a frame held while sleeping keeps the step's locals (its buffers) alive for
            # a minute: they would be unmapped, and witnessed, during a later step
            del frame
    threading.Thread(target=loop, daemon=True).start()


def main() -> int:
    job_path = Path(sys.argv[1])
    job = json.loads(job_path.read_text())
    outdir = job_path.parent
    started = float(Path("/proc/uptime").read_text().split()[0])
    load_numascope(job["src"], job["core"])
    import numascope.cli  # noqa: F401 - import once, before the clock of the first step
    witness = ctypes.CDLL(job["witness"]) if job.get("witness") else None
    results = []
    # a step that hangs leaves the main thread's Python stack behind, every 60 s
    # (sampled from a thread under the GIL: faulthandler's timer crashed a 6.12 guest)
    stacks = open(outdir / "stacks.log", "w")  # noqa: SIM115 - open for the whole job
    _sample_stacks(stacks, 60.0)
    for i, step in enumerate(job["steps"]):
        name = step["name"]
        if witness:
            witness.witness_mark(name.encode())
        t0 = time.monotonic()
        print(f"--- step {name}", file=stacks, flush=True)
        if job.get("profile"):           # NUMASCOPE_GUEST_PROFILE=1: where a step's time goes
            import cProfile
            prof = cProfile.Profile()
            rc = prof.runcall(run_step, step["argv"], outdir / f"{i}.out", outdir / f"{i}.err")
            prof.dump_stats(outdir / f"{i}.prof")
        else:
            rc = run_step(step["argv"], outdir / f"{i}.out", outdir / f"{i}.err")
        results.append({"name": name, "argv": step["argv"], "rc": rc,
                        "seconds": time.monotonic() - t0,
                        "stdout": (outdir / f"{i}.out").read_text(errors="replace"),
                        "stderr": (outdir / f"{i}.err").read_text(errors="replace")})
    for src in job.get("collect", []):   # guest-local files (e.g. a store: SQLite's WAL
        if Path(src).exists():           # needs shared mmap, which 9p does not give)
            shutil.copy(src, outdir)
    events = split_log(outdir / "witness.log")
    for r in results:
        r["events"] = events.get(r["name"], [])
    (outdir / "result.json").write_text(json.dumps({
        "uptime_at_start": started, "steps": results,
        "uptime_at_end": float(Path("/proc/uptime").read_text().split()[0])}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
