"""Surface rows for `numascope compress` (see tests/surface.py). Every bad input here fails
before anything is measured; NaN data, a file too small for --size and unreadable files have
their own tests in test_compress.py (they need a file written first)."""

from pathlib import Path

from surface import Bad

DATA = Path(__file__).parent / "data"
TEXT = str(DATA / "dmidecode_t17_ddr4_2s_mixed.txt")     # a file that holds no numbers
CHEAP = ["--synthetic", "smooth", "--size", "4M", "--codecs", "lz4", "--clevels", "1",
         "--reps", "2"]

BAD = [
    Bad(["compress", "--column", "x"], 2, "--column applies only with --data",
        "a file's column without a file"),
    Bad(["compress", "--format", "npy"], 2, "--format applies only with --data",
        "a file format without a file"),
    Bad(["compress", "--variable", "t"], 2, "--variable applies only with --data",
        "a file's variable without a file"),
    Bad(["compress", "--data", "/nonexistent/x.npy"], 2, "does not exist", "missing file"),
    Bad(["compress", "--data", str(DATA)], 2, "is not a file", "a folder as data"),
    Bad(["compress", "--data", TEXT, "--format", "npy"], 2, "not a readable .npy file",
        "corrupt .npy"),
    Bad(["compress", "--data", TEXT], 2, "does not parse as numbers", "text, not numbers"),
    Bad(["compress", "--data", TEXT, "--format", "blosc"], 2, "not a Blosc chunk",
        "corrupt Blosc chunk"),
    Bad(["compress", "--data", TEXT, "--synthetic", "smooth"], 2, "not both",
        "file and synthetic data"),
    Bad(["compress", "--synthetic", "nosuch"], 2, "unknown synthetic data set",
        "unknown data set"),
    Bad(["compress", "--synthetic", ","], 2, "empty synthetic data set list", "empty list"),
    Bad(["compress", "--dtype", "nosuch"], 2, "unknown dtype", "unknown dtype"),
    Bad(["compress", "--dtype", "complex64"], 2, "not supported", "unsupported dtype"),
    Bad(["compress", "--format", "nosuch"], 2, "invalid choice", "unknown format"),
    Bad(["compress", "--codecs", "nosuch"], 2, "unknown codec", "unknown codec"),
    Bad(["compress", "--clevels", "10"], 2, "clevel 10 outside 1..9", "clevel too high"),
    Bad(["compress", "--clevels", "x"], 2, "bad clevel list", "clevel not a number"),
    Bad(["compress", "--filters", "nosuch"], 2, "unknown filter", "unknown filter"),
    Bad(["compress", "--profile", "nosuch"], 2, "invalid choice", "unknown profile"),
    Bad(["compress", "--policy", "nosuch"], 2, "unknown policy", "unknown policy"),
    Bad(["compress", "--read", "nosuch"], 2, "invalid choice", "unknown read mode"),
    Bad(["compress", "--threads", "0"], 2, "--threads must be at least 1", "zero threads"),
    Bad(["compress", "--threads", "x"], 2, "expected a count", "threads not a number"),
    Bad(["compress", "--threads", "999"], 2, "999 threads asked", "more threads than CPUs"),
    Bad(["compress", "--cpus", "99"], 2, "CPU 99 does not exist", "no such CPU"),
    Bad(["compress", "--where", ""], 2, "--where is empty", "old spelling, empty: named as typed"),
    Bad(["compress", "--cpus", "0", "--cpunodebind", "0"], 2, "not both",
        "CPUs given twice"),
    Bad(["compress", "--cpunodebind", "99"], 2, "node N99 does not exist", "no such node"),
    Bad(["compress", "--membind", "99", *CHEAP], 2, "node 99 does not exist",
        "memory on a node that does not exist"),
    Bad(["compress", "--membind", "0", "--interleave", "0", *CHEAP], 2, "not allowed with",
        "two memory policies"),
    Bad(["compress", "--pages", "huge", *CHEAP], 2, "invalid choice", "unknown page kind"),
    Bad(["compress", "--chunk", "0"], 2, "--chunk: size '0' must be larger than zero",
        "zero chunk"),
    Bad(["compress", "--chunk", "4G"], 2, "outside 1 B..2 GiB", "chunk beyond Blosc2"),
    Bad(["compress", "--chunk", "64K", "--block", "1M"], 2, "cannot be larger than its chunk",
        "block larger than chunk"),
    Bad(["compress", "--size", "1P"], 2, "--size: bad size '1P'", "unknown unit"),
    Bad(["compress", "--size", "64T"], 2, "use a smaller --size", "more than the memory"),
    Bad(["compress", "--reps", "0"], 2, "--reps must be at least 1", "zero repetitions"),
    Bad(["compress", "--reps", "x"], 2, "expected a count such as 10, or auto",
        "repetitions neither a number nor auto"),
    Bad(["compress", "--reps", "auto:99%"], 2, "from 0.1 to 50", "a precision beyond 50 %"),
    Bad(["compress", "--plot", "/nonexistent/x.png"], 2, "does not exist",
        "plot in a missing folder"),
    Bad(["compress", "--plot", "{tmp}/x.txt"], 2, "must end in .png or .svg",
        "plot not an image"),
    Bad(["compress", "--plot", "{tmp}"], 2, "is a folder", "plot is a folder"),
]

JSON = [
    ["compress", *CHEAP, "--threads", "1"],
    ["compress", *CHEAP, "--threads", "1", "--read", "fused", "--block", "0",
     "--chunk", "64K"],
]

WIDE = [
    ["compress", *CHEAP, "--threads", "1"],
    ["compress", "--synthetic", "all", "--size", "2M", "--codecs", "lz4", "--clevels", "1",
     "--filters", "shuffle,bytedelta", "--reps", "2", "--chunk", "64K"],
]
