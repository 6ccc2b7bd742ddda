"""Surface rows for `numascope io` (see tests/surface.py). Every BAD row is refused before
fio starts and before any file is created; the JSON and WIDE rows run fio for 1 s on an
8 MiB file in the test's temp folder."""

from surface import Bad

D = ["io", "--dir", "{tmp}"]
CHEAP = ["--runtime", "1", "--ramp", "0", "--size", "8M"]

BAD = [
    Bad(["io"], 2, "no target: give --dir DIR", "no target at all"),
    Bad(["io", "--dir", "{tmp}/nope"], 2, "no such directory", "missing folder"),
    Bad(["io", "--dir", "{store}"], 2, "is not a directory", "a file as --dir"),
    Bad(D + ["--dir", "{tmp}"], 2, "is named twice", "same folder twice"),
    Bad(["io", "--device", "/dev/nvme0n1"], 2, "add --readonly", "device without --readonly"),
    Bad(["io", "--device", "/dev/nvme0n1", "--readonly", "--rw", "randwrite"], 2,
        "never writes to a block device", "write to a device"),
    Bad(["io", "--device", "/dev/null", "--readonly"], 2, "is not a block device",
        "a character device"),
    Bad(D + ["--device", "/dev/null"], 2, "give --dir or --device, not both", "both targets"),
    Bad(D + ["--readonly"], 2, "--readonly goes with --device", "readonly on files"),
    Bad(D + ["--rw", "trim"], 2, "invalid choice", "unknown workload"),
    Bad(D + ["--bs", "1000"], 2, "multiple of 512", "odd block size"),
    Bad(D + ["--bs", "lots"], 2, "bad size 'lots'", "block size not a size"),
    Bad(D + ["--size", "6000"], 2, "whole number of blocks", "size not whole blocks"),
    Bad(D + ["--size", "100T"], 2, "use a smaller --size", "not enough free space"),
    Bad(D + ["--iodepth", "0"], 2, "--iodepth must be at least 1", "queue depth 0"),
    Bad(D + ["--iodepth", "deep"], 2, "expected a count such as 32", "queue depth not a number"),
    Bad(D + ["--threads", "0"], 2, "--threads must be at least 1", "no jobs"),
    Bad(D + ["--runtime", "0"], 2, "--runtime 0", "zero runtime"),
    Bad(D + ["--runtime", "nan"], 2, "a number of seconds", "NaN runtime"),
    Bad(D + ["--ramp", "-1"], 2, "--ramp -1", "negative ramp"),
    Bad(D + ["--reps", "0"], 2, "--reps must be at least 1", "no repetitions"),
    Bad(D + ["--rw", "randrw", "--rwmixread", "150"], 2, "--rwmixread 150", "mix above 100 %"),
    Bad(D + ["--scaling"], 2, "at least two --dir", "scaling with one drive"),
    Bad(D + ["--placement", "--cpus", "0"], 2, "chooses the placement itself",
        "placement study with --cpus"),
    Bad(D + ["--placement", "--scaling"], 2, "not allowed with", "two studies"),
    Bad(D + ["--placement", "--plot", "{tmp}/x.pdf"], 2, "must end in .png or .svg",
        "plot format"),
    Bad(D + ["--plot", "{tmp}/x.png"], 2, "--plot draws --placement or --scaling",
        "plot of a plain run"),
    Bad(D + ["--cpus", "9999"], 2, "CPU 9999 does not exist", "unknown CPU"),
    Bad(D + ["--membind", "77"], 2, "node 77 does not exist", "unknown memory node"),
    Bad(D + ["--cpus", "0", "--cpunodebind", "0"], 2, "not both", "two CPU flags"),
    Bad(D + CHEAP, 4, "fio not found", "fio missing",
        env={"NUMASCOPE_FIO": "/nonexistent/fio"}),
]

JSON = [
    D + CHEAP,
    D + CHEAP + ["--placement", "--iodepth", "4"],
]

WIDE = [
    D + CHEAP,
    D + CHEAP + ["--placement", "--iodepth", "1,8", "--rw", "randrw"],
]
