"""Surface rows for `numascope matrix` (see tests/surface.py)."""

from conftest import HWLOC_FIXTURES
from surface import Bad

from numascope.host import host

_pool = host("/").hugetlb_pool()
EIGHT = HWLOC_FIXTURES / "16amd64-8n2c.tar.bz2"          # 8 nodes, 2 CPUs each (Opteron)
SIXTY_FOUR = HWLOC_FIXTURES / "256ia64-64n2s2c.tar.bz2"  # 64 nodes
SMALL = ["--size", "1M", "--bw-size", "1M", "--samples", "2"]

BAD = [
    Bad(["matrix", "--what", "bandwidth", "--stride", "128"], 2,
        "--stride applies only with --what both or latency", "a chase option, no chase"),
    Bad(["matrix", "--what", "latency", "--bw-size", "1M"], 2,
        "--bw-size applies only with --what both or bandwidth", "an array size, no array"),
    Bad(["matrix", "--membind", "9"], 2, "node 9 does not exist", "a column not there"),
    Bad(["matrix", "--cpunodebind", "9"], 2, "node 9 does not exist", "a row not there"),
    Bad(["matrix", "--cpunodebind", "x"], 2, "bad node list 'x'", "not a node list"),
    Bad(["matrix", "--cpunodebind", ""], 2, "--cpunodebind is empty", "empty rows"),
    Bad(["matrix", "--membind", ""], 2, "--membind is empty", "empty columns"),
    Bad(["matrix", "--to", "99"], 2, "node 99 does not exist", "old spelling still checked"),
    Bad(["matrix", "--from", "7"], 2, "node 7 does not exist", "old spelling still checked"),
    Bad(["matrix", "--size", "0"], 2, "must be larger than zero", "zero buffer"),
    Bad(["matrix", "--size", "100T"], 2, "but only", "a buffer larger than memory"),
    Bad(["matrix", "--bw-size", "1P"], 2, "bad size '1P'", "a unit numascope has not"),
    Bad(["matrix", "--bw-size", "100T"], 2, "but only", "an array larger than memory"),
    Bad(["matrix", "--stride", "5"], 2, "power of two from 64 to 4096", "odd stride"),
    Bad(["matrix", "--samples", "0"], 2, "samples must be at least 1", "no samples"),
    Bad(["matrix", "--sysfs-root", "/dev/null"], 2, "/dev/null", "a device as the root"),
    Bad(["matrix", "--sysfs-root", "/nonexistent"], 2, "no such file", "missing root"),
    Bad(["matrix", "--what", "nosuch"], 2, "invalid choice", "unknown matrix"),
    Bad(["matrix", "--mode", "zigzag"], 2, "invalid choice", "unknown chase mode"),
    Bad(["matrix", "--pages", "giant"], 2, "invalid choice", "unknown page kind"),
    Bad(["matrix", "--plot", "bad"], 2, "must end in .png or .svg", "plot not an image"),
    Bad(["matrix", "--plot", "/nonexistent/m.png"], 2, "does not exist", "plot folder missing"),
    Bad(["matrix", "--chains", "65"], 2, "--chains must be at most 64", "too many chains"),
    Bad(["matrix", "--what", "bandwidth", "--chains", "4"], 2,
        "--chains applies only with --what both or latency", "chains without latency"),
    Bad(["matrix", "--chains", "64", "--size", "16K"], 2, "the arena layout holds at most 32 "
        "chains", "more chains than an element has slots"),
]
if _pool is None or _pool[0] < 64 << 20:      # an empty (or small) hugetlb pool, as here
    BAD.append(Bad(["matrix", "--pages", "hugetlb", "--size", "64M"], 4, "hugetlb pages",
                   "hugetlb pool cannot hold the buffer"))
    BAD.append(Bad(["matrix", "--what", "bandwidth", "--pages", "hugetlb", "--bw-size", "64M"],
                   4, "hugetlb pages", "hugetlb pool cannot hold the array"))

JSON = [
    ["matrix", "--what", "latency", "--size", "1M", "--samples", "2"],
    ["matrix", "--dry-run"],
    ["matrix", "--what", "latency", "--chains", "4", "--size", "1M", "--samples", "2"],
]
WIDE = [
    ["matrix", "--what", "latency", "--chains", "4", "--size", "1M", "--samples", "2"],
    ["matrix", *SMALL],
    ["matrix", "--dry-run"],
]
if EIGHT.exists():
    BAD.append(Bad(["matrix", "--sysfs-root", str(EIGHT)], 2, "only --dry-run is possible",
                   "measuring a replayed machine"))
    JSON.append(["matrix", "--dry-run", "--sysfs-root", str(EIGHT)])
    WIDE.append(["matrix", "--dry-run", "--sysfs-root", str(EIGHT)])
    WIDE.append(["matrix", "--dry-run", "--sysfs-root", str(EIGHT), "--cpunodebind", "0-3",
                 "--membind", "N7", "--pages", "hugetlb", "--samples", "1"])
if SIXTY_FOUR.exists():
    WIDE.append(["matrix", "--dry-run", "--sysfs-root", str(SIXTY_FOUR)])
