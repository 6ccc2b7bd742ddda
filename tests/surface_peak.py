"""Surface rows for `numascope peak` (see tests/surface.py): every description the user
gives is checked before the clock or anything else is measured."""

from conftest import HWLOC_FIXTURES
from surface import Bad

NC = ["peak", "--no-compute"]
DUMP = HWLOC_FIXTURES / "16em64t-4s2c2t.tar.bz2"     # 4 sockets, 2 cores, 2 threads each

BAD = [
    Bad([*NC, "--hpl-np", "2"], 2,
        "--hpl-np applies only with --hpl or --hpl-big or --hpl-n or --layout",
        "HPL's ranks without an HPL run"),
    Bad([*NC, "--memory", "12x DDR9-4800"], 2, "unknown memory type DDR9", "no such DDR"),
    Bad([*NC, "--memory", ""], 2, "bad --memory ''", "empty memory description"),
    Bad([*NC, "--memory", "x"], 2, "bad --memory 'x'", "memory description garbage"),
    Bad([*NC, "--memory", "0x DDR5-4800"], 2, "not plausible", "no channels"),
    Bad([*NC, "--memory", "12xDDR5"], 2,
        "bad --memory '12xDDR5': the speed is missing: give it in MT/s, e.g. '12xDDR5-4800'",
        "a memory type without its speed"),
    Bad([*NC, "--links", "garbage"], 2, "bad --links 'garbage'", "links garbage"),
    Bad([*NC, "--links", ""], 2, "bad --links ''", "empty links description"),
    Bad([*NC, "--clock", "inf"], 2, "--clock must be", "infinite clock"),
    Bad([*NC, "--clock", "nan"], 2, "--clock must be", "NaN clock"),
    Bad([*NC, "--clock", "0"], 2, "--clock must be", "zero clock"),
    Bad([*NC, "--clock", "-1"], 2, "--clock must be", "negative clock"),
    Bad([*NC, "--dram-gbs", "-1"], 2, "--dram-gbs must be", "negative bandwidth"),
    Bad([*NC, "--link-gbs", "nan"], 2, "--link-gbs must be", "NaN bandwidth"),
    Bad([*NC, "--hpl-n", "0"], 2, "--hpl-n 0", "HPL of nothing"),
    Bad([*NC, "--hpl-np", "0"], 2, "--hpl-np must be at least 1", "HPL on no process"),
    Bad([*NC, "--layout", "per-rack"], 2, "unknown layout", "no such rank layout"),
    Bad([*NC, "--layout", "per-l3,per-l3"], 2, "names a layout twice", "one layout twice"),
    Bad([*NC, "--layout", "per-l3,"], 2, "empty layout name", "a dangling comma"),
    Bad([*NC, "--layout", "per-core", "--hpl-np", "2"], 2, "give one",
        "two ways to say the HPL processes"),
    Bad([*NC, "--size", "0"], 2, "--size 0", "matrix of nothing"),
    Bad([*NC, "--reps", "0"], 2, "--reps must be at least 1", "no repetitions"),
    Bad([*NC, "--sysfs-root", "/dev/null"], 2, "not a directory or a tar archive",
        "a device, not a dump"),
    Bad([*NC, "--sysfs-root", "/nonexistent"], 2, "no such file or directory", "no root"),
    Bad([*NC, "--sysfs-root", "{tmp}"], 2, "no sys/ directory", "an empty folder"),
    Bad(["peak", "--sysfs-root", "{tmp}", "--reps", "1"], 2, "measurements need this machine",
        "measuring a replayed machine"),
]

JSON = [
    [*NC, "--reps", "1"],
    [*NC, "--reps", "1", "--memory", "12x DDR5-4800", "--links", "xgmi:4x16@32",
     "--dram-gbs", "300"],
]

WIDE = [
    NC,
    [*NC, "--reps", "1", "--memory", "12x DDR5-4800", "--links", "xgmi:4x16@32",
     "--dram-gbs", "300", "--link-gbs", "100"],
]
if DUMP.exists():
    JSON.append([*NC, "--sysfs-root", str(DUMP), "--clock", "2.5"])
    WIDE.append([*NC, "--sysfs-root", str(DUMP), "--clock", "2.5"])
    WIDE.append([*NC, "--sysfs-root", str(DUMP)])
