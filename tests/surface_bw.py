"""Surface rows for `numascope bw` (see tests/surface.py). Every bad input fails before a
kernel runs; the rows that depend on the host (an empty hugetlb pool, one memory node) are
listed only where that holds."""

from pathlib import Path

from surface import Bad

from numascope.host import host


def _memory_nodes() -> int:
    nodes = Path("/sys/devices/system/node")
    return len([d for d in nodes.glob("node[0-9]*")
                if (host("/").meminfo("MemTotal", int(d.name[4:])) or 0) > 0]) or 1


_HUGE_POOL = host("/").meminfo("HugePages_Total")

BAD = [
    Bad(["bw", "--reps", "5000"], 2, "at most 1000", "repetitions without end"),
    Bad(["bw", "--cpus", "999"], 2, "CPU 999 does not exist", "a CPU this machine lacks"),
    Bad(["bw", "--cpus", ""], 2, "--cpus is empty", "an empty CPU list"),
    Bad(["bw", "--cpus", "0", "--domain", "S0"], 2, "not both", "the old --domain as well"),
    Bad(["bw", "--domain", " "], 2, "--domain is empty", "the old --domain, empty"),
    Bad(["bw", "--cpus", "0", "--cpunodebind", "0"], 2, "not both", "two CPU selections"),
    Bad(["bw", "--cpunodebind", "7"], 2, "N7 does not exist", "a node this machine lacks"),
    Bad(["bw", "--membind", "9"], 2, "node 9 does not exist", "memory on a missing node"),
    Bad(["bw", "--membind", "0", "--interleave", "0"], 2, "not allowed with",
        "two memory policies"),
    Bad(["bw", "--weighted-interleave", "N0:x"], 2, "bad weighted interleave",
        "a weight that is not a number"),
    Bad(["bw", "--size", "10T"], 2, "use a smaller --size", "arrays larger than memory"),
    Bad(["bw", "--size", "-1"], 2, "bad size", "a negative size"),
    Bad(["bw", "--size", "256"], 2, "too small", "arrays below the kernel's minimum"),
    Bad(["bw", "--reps", "0"], 2, "repetitions must be at least 1", "no repetition"),
    Bad(["bw", "--reps", "x"], 2, "expected a count such as 10, or auto",
        "repetitions neither a number nor auto"),
    Bad(["bw", "--reps", "auto:0%"], 2, "a percentage from 0.1 to 50",
        "a precision of nothing"),
    Bad(["bw", "--reps", "auto:x"], 2, "a percentage from 0.1 to 50", "a precision not a number"),
    Bad(["bw", "--threads", "0"], 2, "--threads must be at least 1", "no thread"),
    Bad(["bw", "--threads", "x"], 2, "--threads 'x'", "threads not a number"),
    Bad(["bw", "--threads", "100000"], 2, "100000 threads asked", "more threads than CPUs"),
    Bad(["bw", "--kernel", "nosuch"], 2, "unknown kernel 'nosuch'", "a kernel not in the table"),
    Bad(["bw", "--kernel", ","], 2, "at least one kernel", "an empty kernel list"),
    Bad(["bw", "--isa", "avx9"], 2, "unknown ISA 'avx9'", "an ISA numascope lacks"),
    Bad(["bw", "--nt", "maybe"], 2, "invalid choice", "a store kind that does not exist"),
    Bad(["bw", "--pages", "huge"], 2, "invalid choice", "a page kind that does not exist"),
    Bad(["bw", "--huge", "bogus"], 2, "invalid choice", "the old --huge, wrong value"),
    Bad(["bw", "--plot", "/nonexistent/x.png"], 2, "does not exist", "a plot in no folder"),
    Bad(["bw", "--plot", "out.txt"], 2, "must end in .png or .svg", "a plot that is text"),
    Bad(["bw", "--plot", "{tmp}"], 2, "is a folder", "a plot path that is a folder"),
    Bad(["bw", "--tier-sweep", "--scaling"], 2, "leave out --scaling", "two sweeps at once"),
    Bad(["bw", "--tier-sweep", "--membind", "0"], 2, "sets the memory placement itself",
        "a tier sweep with a memory policy"),
    Bad(["bw", "--ratios", "3"], 2, "bad ratio '3'", "a ratio without a colon"),
]
if _HUGE_POOL == 0:     # no hugetlb pool reserved here: the host cannot, exit 4
    BAD.append(Bad(["bw", "--pages", "hugetlb", "--size", "8M"], 4, "hugetlb pages",
                   "hugetlb pages with an empty pool"))
if _memory_nodes() == 1:
    BAD.append(Bad(["bw", "--tier-sweep"], 4, "needs a second memory node",
                   "a tier sweep on a one-node machine"))

JSON = [
    ["bw", "--size", "8M", "--reps", "2"],
    ["bw", "--size", "8M", "--reps", "auto:50%", "--threads", "1"],
    ["bw", "--kernel", "all", "--size", "8M", "--reps", "2"],
    ["bw", "--kernel", "read", "--scaling", "--size", "4M", "--reps", "2"],
    ["bw", "--kernel", "copy", "--membind", "0", "--pages", "none", "--size", "4M",
     "--reps", "2"],
]

WIDE = [
    ["bw", "--size", "8M", "--reps", "2"],
    ["bw", "--size", "8M", "--reps", "auto:50%", "--threads", "1"],
    ["bw", "--kernel", "read,triad", "--per-domain", "--size", "4M", "--reps", "2"],
    ["bw", "--kernel", "read", "--scaling", "--size", "4M", "--reps", "2"],
    ["bw", "--kernel", "copy,add", "--interleave", "0", "--pages", "none", "--size", "4M",
     "--reps", "2"],
]
