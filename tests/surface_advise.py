"""Surface rows for `numascope advise` (see tests/surface.py)."""

from conftest import HWLOC_FIXTURES
from surface import Bad

DUMP = HWLOC_FIXTURES / "48amd64-4d2n6c-sparse.tar.bz2"
S = ["--store", "{store}"]
R = ["--section", "readiness"]     # rows about the machine: no store is read
P = ["--section", "recipe"]        # the placement recipe for a job shape
EIGHT = HWLOC_FIXTURES / "16amd64-8n2c.tar.bz2"

BAD = [
    Bad(["advise", "nosuch", *S], 2, "no run matches 'nosuch'", "unknown run id"),
    Bad(["advise", "nps=9", *S], 2, "no stored run has tags 'nps=9'", "tag no run has"),
    Bad(["advise", ",", *S], 2, "empty run selection", "a selection of nothing"),
    Bad(["advise", "--store", "{tmp}"], 2, "is a directory", "a folder as the store"),
    Bad(["advise", "--store", "{tmp}/none.db"], 2, "no store at", "a store that is not there"),
    Bad(["advise", "latest", "--store", "{tmp}/none.db"], 2, "no store at",
        "a run from a store that is not there"),
    Bad(["advise", "--sysfs-root", "/nonexistent", *R], 2, "no such file or directory",
        "missing root"),
    Bad(["advise", "--sysfs-root", "{tmp}", *R], 2, "no sys/ directory found",
        "empty folder as the root"),
    Bad(["advise", "--sysfs-root", "", *R], 2, "--sysfs-root is empty", "empty root"),
    Bad(["advise", "--sysfs-root", "/dev/null", *R], 2, "not a directory or a tar archive",
        "a device as the root"),
    Bad(["advise", "--sysfs-root", "{store}", *R], 2, "not a directory or a tar archive",
        "the store as the root"),
    Bad(["advise", "--section", "recipes", *S], 2, "invalid choice", "unknown section"),
    Bad(["advise", "--rule", "nosuch", *S], 2, "invalid choice", "unknown rule"),
    Bad(["advise", "--rule", "dram_efficiency", *S], 2, "invalid choice",
        "a rule removed: no measurement backed its threshold"),
    Bad(["advise", "latest", *R, *S], 2, "runs were given but --section leaves out advice",
        "runs without the advice section"),
    Bad(["advise", "--rule", "remote_memory", *R, *S], 2, "--rule chooses advice rules",
        "a rule without the advice section"),
    Bad(["advise", "nosuch", "--sysfs-root", "/nonexistent", *S], 2,
        "no run matches 'nosuch'", "the store is checked first"),
    Bad(["advise", *P], 2, "the recipe section needs a job shape", "recipe without a shape"),
    Bad(["advise", *P, "--ranks", "0"], 2, "ranks", "zero ranks"),
    Bad(["advise", *P, "--ranks", "4096"], 2, "4096", "more ranks than CPUs"),
    Bad(["advise", *P, "--ranks", "2", "--threads", "-1"], 2, "threads", "negative threads"),
    Bad(["advise", *P, "--near", "nosuch0"], 2, "no such device", "a device not there"),
    Bad(["advise", *P, "--unit", "die"], 2, "invalid choice", "an unknown unit"),
    Bad(["advise", "--store", ""], 2, "--store is empty", "empty store"),
    Bad(["advise", "latest", "--store", " "], 2, "--store is empty", "blank store"),
    Bad(["advise", *P, "--near", ""], 2, "--near is empty", "empty device"),
    Bad(["advise", "x" * 201, *S], 2, "at most 200 characters", "a 201-character run"),
    Bad(["advise", "nps=0", "y" * 5000, *S], 2, "at most 200 characters",
        "a 5,000-character run"),
    Bad(["advise", "a\x1b]0;t\x07", *S], 2,
        "no run matches 'a\\x1b]0;t\\x07'", "escape sequence in a run shown escaped"),
    Bad(["advise", "--predict", *S], 2, "need a job shape", "predict without a shape"),
    Bad(["advise", "--run", "x", "--threads", "1", *S], 2, "add --predict",
        "a run to predict from without --predict"),
    Bad(["advise", "--verify", "--threads", "1", "--reps", "0", *S], 2,
        "--reps must be at least 1", "zero verify repetitions"),
    Bad(["advise", "--predict", "--threads", "1", "--reps", "3", *S], 2,
        "add --verify", "verify repetitions without --verify"),
    Bad(["advise", "--predict", "--threads", "1", "--section", "recipe", *S], 2,
        "add --section predict", "predict with sections that leave it out"),
    Bad(["advise", "--predict", "--threads", "1", "--demand", "-1", *S], 2,
        "--demand must be a positive", "a negative demand"),
    Bad(["advise", "--predict", "--threads", "1", "--demand", "inf", *S], 2,
        "--demand must be a positive, finite GB/s figure (got inf)", "an infinite demand"),
    Bad(["advise", "--predict", "--threads", "1", "--demand", "nan", *S], 2,
        "--demand must be a positive, finite GB/s figure (got nan)", "a NaN demand"),
    Bad(["advise", "--section", "predict", "--threads", "1", *S], 2, "needs --predict",
        "the predict section without --predict"),
    Bad(["advise", "--predict", "--threads", "1", "--run", "nosuch", *S], 2,
        "no run matches 'nosuch'", "predict from an unknown run"),
    *([Bad(["advise", "--sysfs-root", str(EIGHT), "--verify", "--ranks", "2", "--run", "x",
            *S], 2, "a replayed machine", "verify on a replayed machine"),
       Bad(["advise", "--sysfs-root", str(EIGHT), "--predict", "--ranks", "2", *S], 2,
           "needs the replayed machine's run named", "replayed machine without --run")]
      if EIGHT.exists() else []),
    *([Bad(["advise", "--sysfs-root", str(EIGHT), "--section", "advice", *S], 2,
           "needs the replayed machine's runs named",
           "replayed machine, advice from this machine's store"),
       Bad(["advise", "--sysfs-root", str(EIGHT), "--rule", "remote_memory", *S], 2,
           "--rule chooses advice rules", "replayed machine, a rule without runs")]
      if EIGHT.exists() else []),
]

JSON = [
    ["advise", *S],
    ["advise", "latest", "--section", "advice", "--rule", "readiness", *S],
    ["advise", *R, "--all-checks"],
    *([["advise", "--sysfs-root", str(DUMP), *R]] if DUMP.exists() else []),
    ["advise", *P, "--ranks", "2"],
    *([["advise", "--sysfs-root", str(EIGHT), "--ranks", "8", "--threads", "2", *S]]
      if EIGHT.exists() else []),
]

WIDE = [
    ["advise", *S],
    ["advise", *R, "--all-checks"],
    *([["advise", "--sysfs-root", str(DUMP), "--all-checks", *S]] if DUMP.exists() else []),
    *([["advise", "--sysfs-root", str(EIGHT), "--ranks", "8", "--threads", "2", *P]]
      if EIGHT.exists() else []),
]
