"""Surface rows for `numascope c2c` (see tests/surface.py). This machine may have only two
CPUs and one node: every bad input below is refused before anything is measured."""

from surface import Bad

BAD = [
    Bad(["c2c", "--trips", "99999999999"], 2, "--trips must be at most 10000000",
        "round trips that would never end"),
    Bad(["c2c", "--cpus", "99"], 2, "CPU 99 does not exist", "a CPU that is not there"),
    Bad(["c2c", "--cpus", "0"], 2, "needs at least two", "one CPU cannot ping-pong"),
    Bad(["c2c", "--cpus", "x"], 2, "bad placement 'x'", "not a CPU list"),
    Bad(["c2c", "--cpus", ""], 2, "--cpus is empty", "empty CPU list"),
    Bad(["c2c", "--cpus", "0,0"], 2, "names CPU 0 twice", "the same CPU twice"),
    Bad(["c2c", "--cpunodebind", "7"], 2, "N7 does not exist", "a node that is not there"),
    Bad(["c2c", "--membind", "7"], 2, "node 7 does not exist", "line on a missing node"),
    Bad(["c2c", "--membind", "x"], 2, "--membind x", "not a node list"),
    Bad(["c2c", "--home", ""], 2, "--home is empty", "old spelling, empty: named as typed"),
    Bad(["c2c", "--home", "99"], 2, "node 99 does not exist", "old spelling, missing node"),
    Bad(["c2c", "--max-pairs", "0"], 2, "--max-pairs must be at least 1", "no pairs"),
    Bad(["c2c", "--samples", "0"], 2, "--samples must be at least 1", "no samples"),
    Bad(["c2c", "--trips", "0"], 2, "--trips must be at least 1", "no round trips"),
    Bad(["c2c", "--trips", "x"], 2, "invalid int value", "not a number"),
    Bad(["c2c", "--plot", "/nonexistent/a.png"], 2, "does not exist", "plot folder missing"),
    Bad(["c2c", "--plot", "a.txt"], 2, "must end in .png or .svg", "plot not an image"),
    Bad(["c2c", "--plot", "{tmp}"], 2, "--plot", "plot path is a folder"),
    Bad(["c2c", "--interleave", "0"], 2, "unrecognized arguments", "no interleave here"),
]

JSON = [
    ["c2c", "--samples", "3", "--trips", "200"],
    ["c2c", "--samples", "3", "--trips", "200", "--membind", "all"],
]

WIDE = [
    ["c2c", "--samples", "3", "--trips", "200"],
    ["c2c", "--samples", "3", "--trips", "200", "--home", "0"],
]
