"""Surface rows for `numascope lat` (see tests/surface.py)."""

import os

from surface import Bad

from numascope.host import host

_pool = host("/").hugetlb_pool()
_TWO_CPUS = len(os.sched_getaffinity(0)) >= 2
SMALL = ["--size", "256K", "--samples", "2", "--loads", "4096"]

BAD = [
    Bad(["lat", "--cpus", "99"], 2, "CPU 99 does not exist", "a CPU that is not there"),
    Bad(["lat", "--cpus", "0,1"], 2, "the chaser runs on one CPU", "two CPUs for idle latency"),
    Bad(["lat", "--cpus", "x"], 2, "bad placement 'x'", "not a CPU list"),
    Bad(["lat", "--cpus", ""], 2, "--cpus is empty", "empty CPU list"),
    Bad(["lat", "--cpu", "4096"], 2, "CPU 4096 does not exist", "old spelling still checked"),
    Bad(["lat", "--membind", "5"], 2, "node 5 does not exist", "a node that is not there"),
    Bad(["lat", "--membind", ""], 2, "--membind is empty", "empty node list"),
    Bad(["lat", "--node", "9"], 2, "node 9 does not exist", "old spelling still checked"),
    Bad(["lat", "--size", "100T"], 2, "but only", "a buffer larger than memory"),
    Bad(["lat", "--size", "0"], 2, "must be larger than zero", "zero working set"),
    Bad(["lat", "--size", "lots"], 2, "bad size", "not a size"),
    Bad(["lat", "--size", "256", "--stride", "256"], 2, "too small", "one line only"),
    Bad(["lat", "--stride", "3"], 2, "power of two from 64 to 4096", "odd stride"),
    Bad(["lat", "--stride", "0"], 2, "power of two from 64 to 4096", "zero stride"),
    Bad(["lat", "--samples", "0"], 2, "samples must be at least 1", "no samples"),
    Bad(["lat", "--loads", "0"], 2, "loads per sample must be at least 1024", "no loads"),
    Bad(["lat", "--chains", "1", "--loads", "1"], 2, "loads per sample must be at least 1024",
        "a sample of one load times the timer"),
    Bad(["lat", "--loaded", "--delays", "x"], 2, "--delays 'x'", "not a delay"),
    Bad(["lat", "--loaded", "--delays=-5"], 2, "delays must be >= 0", "negative delay"),
    Bad(["lat", "--mode", "nosuch"], 2, "invalid choice", "unknown chase mode"),
    Bad(["lat", "--pages", "giant"], 2, "invalid choice", "unknown page kind"),
    Bad(["lat", "--plot", "/nonexistent/a.png"], 2, "does not exist", "plot folder missing"),
    Bad(["lat", "--plot", "a.txt"], 2, "must end in .png or .svg", "plot not an image"),
    Bad(["lat", "--plot", ""], 2, "--plot is empty", "plot to no file"),
    Bad(["lat", "--sweep", "--min", "1M", "--max", "64K"], 2, "sweep range", "--min > --max"),
    Bad(["lat", "--sweep", "--per-octave", "0"], 2, "--per-octave must be at least 1",
        "no sweep points"),
    # counts have upper bounds (documented in docs/lat.md's table)
    Bad(["lat", "--samples", "99999999999"], 2, "--samples must be at most 100000",
        "a sample count that would never end"),
    Bad(["lat", "--loads", str(1 << 40)], 2, "must be at most", "loads per sample, huge"),
    # options of a mode that was not chosen: an error naming the mode, never ignored
    Bad(["lat", "--delays", "0,100"], 2, "--delays applies only with --loaded",
        "a loaded option on an idle run"),
    Bad(["lat", "--load-cpus", "1"], 2, "--load-cpus applies only with --loaded",
        "loaders without loaded latency"),
    Bad(["lat", "--mix", "1:1"], 2, "--mix applies only with --loaded",
        "a traffic mix on an idle run"),
    Bad(["lat", "--loaded", "--mix", "1:0"], 2, "no stores", "a write mix without writes"),
    Bad(["lat", "--loaded", "--mix", "read,,nt"], 2, "an empty mix", "an empty mix"),
    Bad(["lat", "--loaded", "--mix", "2:1,2:1"], 2, "given twice", "a mix twice"),
    Bad(["lat", "--loaded", "--mix", "99:1"], 2, "at most 16", "a step too long"),
    Bad(["lat", "--loaded", "--mix", "rw"], 2, "a mix is read, R:W", "not a mix"),
    Bad(["lat", "--min", "8K"], 2, "--min applies only with --sweep", "a sweep bound, no sweep"),
    Bad(["lat", "--max", "1M"], 2, "--max applies only with --sweep", "a sweep bound, no sweep"),
    Bad(["lat", "--per-octave", "4"], 2, "--per-octave applies only with --sweep",
        "sweep density, no sweep"),
    Bad(["lat", "--samples", "auto:0.01%"], 2, "from 0.1 to 50", "a precision too fine"),
]
BAD += [   # lat --chains
    Bad(["lat", "--chains", "0"], 2, "--chains must be at least 1", "no chain"),
    Bad(["lat", "--chains", "1,65"], 2, "--chains must be at most 64", "more chains than walks"),
    Bad(["lat", "--chains", "1,x"], 2, "--chains '1,x'", "not a count"),
    # list options parsed alike everywhere (as --mix): no empty item, each value once
    Bad(["lat", "--chains", "1,,2"], 2, "--chains '1,,2': an empty item", "empty count"),
    Bad(["lat", "--chains", "1,"], 2, "--chains '1,': an empty item", "trailing comma"),
    Bad(["lat", "--chains", "2,2"], 2, "the count 2 is given twice", "a count twice"),
    Bad(["lat", "--loaded", "--delays", "0,,100"], 2, "an empty item", "empty delay"),
    Bad(["lat", "--loaded", "--delays", "100,100"], 2, "the delay 100 is given twice",
        "a delay twice"),
    Bad(["lat", "--chains", "1,2", "--sweep"], 2, "does not go with --sweep", "two modes"),
    Bad(["lat", "--chains", "64", "--size", "16K"], 2, "the arena layout holds at most 32 chains "
        "at --stride 256", "more chains than an element has slots"),
    Bad(["lat", "--chains", "64", "--size", "16K", "--chain-layout", "regions"], 2,
        "fewer than two", "chains too short"),
    Bad(["lat", "--chain-layout", "regions"], 2, "only with --chains", "layout without chains"),
]
if _pool is None or _pool[0] < 64 << 20:      # an empty (or small) hugetlb pool, as here
    BAD.append(Bad(["lat", "--pages", "hugetlb", "--size", "64M"], 4, "hugetlb pages",
                   "hugetlb pool cannot hold the buffer"))
if _TWO_CPUS:
    BAD.append(Bad(["lat", "--loaded", "--cpus", "0", "--load-cpus", "0"], 2,
                   "both the chaser and a loader", "chaser among the loaders"))
    BAD.append(Bad(["lat", "--loaded", "--samples", "auto", "--size", "1M"], 2,
                   "--samples auto applies to the idle chase", "auto samples, loaded"))

JSON = [
    ["lat", *SMALL],
    ["lat", "--cpus", "0", "--membind", "0", "--mode", "both", *SMALL],
    ["lat", "--sweep", "--min", "4K", "--max", "64K", "--per-octave", "1", "--samples", "2",
     "--loads", "1024"],
]
JSON.append(["lat", "--chains", "1,2,4", "--mode", "both", *SMALL])
WIDE = [
    ["lat", "--chains", "1,2,4", *SMALL],
    ["lat", "--mode", "both", "--pages", "thp", *SMALL],
    ["lat", "--mode", "both", "--size", "256K", "--loads", "4096", "--samples", "auto:50%"],
    ["lat", "--sweep", "--min", "4K", "--max", "1M", "--per-octave", "1", "--samples", "2",
     "--loads", "1024"],
]
if _TWO_CPUS:
    LOADED = ["lat", "--loaded", "--delays", "0,1000", "--size", "1M", "--samples", "2",
              "--loads", "1024"]
    JSON.append(LOADED)
    WIDE.append(LOADED)
    MIXED = ["lat", "--loaded", "--mix", "read,1:1,nt", "--delays", "0,1000", "--size", "1M",
             "--samples", "2", "--loads", "1024"]
    JSON.append(MIXED)
    WIDE.append(MIXED)
