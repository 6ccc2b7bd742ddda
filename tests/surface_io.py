"""Surface rows for `numascope io` (see tests/surface.py). Every BAD row is refused before
fio starts and before any file is created; the JSON and WIDE rows run fio for 1 s on an
8 MiB file in the test's temp folder."""

from surface import Bad

D = ["io", "--dir", "{tmp}"]
CHEAP = ["--runtime", "1", "--ramp", "0", "--size", "8M"]

BAD = [
    Bad(["io"], 2, "no target: give --dir DIR", "no target at all"),
    Bad(["io", "--dir", "{tmp}/nope"], 2, "no such folder", "missing folder"),
    Bad(["io", "--dir", "{store}"], 2, "is not a folder", "a file as --dir"),
    Bad(["io", "--dir", ""], 2, "--dir is empty", "empty folder name"),
    Bad(["io", "--dir", "/proc"], 2, "--dir /proc: is on proc", "the kernel's /proc"),
    Bad(["io", "--dir", "/sys"], 2, "--dir /sys: is on sysfs", "the kernel's /sys"),
    Bad(["io", "--dir", "/proc/self"], 2, "is on proc", "a folder below /proc"),
    Bad(["io", "--dir", "{tmp}/" + "n" * 300], 2, "the name is too long",
        "a 300-character folder name"),
    Bad(D + ["--dir", "/sys/kernel"], 2, "--dir /sys/kernel: is on sysfs",
        "a good folder and a pseudo one"),
    Bad(D + ["--placement", "--plot", "/proc/x.png"], 2, "--plot /proc/x.png: is on proc",
        "plot on /proc, refused before fio runs"),
    Bad(D + ["--placement", "--plot", "{tmp}/nope/x.png"], 2, "does not exist",
        "plot in a missing folder"),
    Bad(D + ["--scaling", "--dir", "{tmp}/" + "d" * 300, "--plot", "{tmp}/s.png"], 2,
        "the name is too long", "a long second --dir with a plot: refused, no plot"),
    Bad(D + ["--rwmixread", "50"], 2, "goes with --rw randrw, not --rw randread",
        "a read mix for the default pure-read workload"),
    Bad(D + ["--rw", "randwrite", "--rwmixread", "0"], 2, "not --rw randwrite",
        "a read mix for a pure-write workload"),
    Bad(D + ["--rw", "read", "--rwmixread", "70"], 2, "not --rw read",
        "a read mix for sequential reads, even the default value"),
    Bad(D + ["--threads", "100000"], 2, "--threads 100000: between 1 and 4096",
        "too many jobs: the message names --threads, not fio's --numjobs"),
    Bad(D + ["--numjobs", "100000"], 2, "--numjobs 100000: between 1 and 4096",
        "the old spelling typed: the message names what the user typed"),
    Bad(D + ["--threads", "1,100000"], 2, "--threads 100000", "too many jobs in a sweep"),
    Bad(D + ["--iodepth", "100000"], 2, "--iodepth 100000: between 1 and 65536",
        "queue too deep"),
    Bad(D + ["--reps", "5000"], 2, "--reps must be at most 1000", "too many fio runs"),
    Bad(D + ["--runtime", "1e9"], 2, "between 0.5 and 86400 seconds", "runtime of decades"),
    Bad(["io", "--device", "/dev/nvme0n1", "--readonly", "--remove-leftovers"], 2,
        "--remove-leftovers goes with --dir", "leftovers of a device"),
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
