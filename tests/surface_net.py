"""Surface rows for `numascope net` (see tests/surface.py). Every BAD row is refused before
mpirun starts; the JSON and WIDE rows run 2 ranks on CPUs 0 and 1 for one 8-byte size."""

from surface import Bad

N = ["net"]
CHEAP = ["--cpus", "0,1", "--sizes", "8", "--iters", "5"]

BAD = [
    Bad(N + ["--sizes", "0"], 2, "must be larger than zero", "zero-byte message"),
    Bad(N + ["--sizes", "lots"], 2, "bad size 'lots'", "size not a size"),
    Bad(N + ["--sizes", "128M"], 2, "not a message size from 1 B to 64 MiB", "size too big"),
    Bad(N + ["--sizes", "8,,16"], 2, "an empty entry", "empty size in the list"),
    Bad(N + ["--sizes", "4K:1"], 2, "the first size is larger", "reversed range"),
    Bad(N + ["--tests", "allreduce"], 2, "choose from lat, bw, bibw", "unknown test"),
    Bad(N + ["--iters", "0"], 2, "one or two counts of at least 1", "zero iterations"),
    Bad(N + ["--iters", "1,2,3"], 2, "one or two counts", "three iteration counts"),
    Bad(N + ["--iters", "many"], 2, "expected numbers such as", "iterations not a number"),
    Bad(N + ["--sizes", "64M", "--window", "1024", "--buffers", "distinct"], 2,
        "use smaller --sizes or --window", "per-slot buffers larger than the memory"),
    Bad(N + ["--sizes", "64M", "--pairs", "256"], 2, "use smaller --sizes or --pairs",
        "one buffer per rank, too many ranks for the memory"),
    Bad(N + ["--buffers", "distinct", "--engine", "osu"], 2, "OSU's programs reuse one buffer",
        "distinct buffers with OSU"),
    Bad(N + ["--buffers", "fresh"], 2, "invalid choice", "unknown buffers mode"),
    Bad(N + ["--window", "0"], 2, "--window must be from 1 to 1024", "empty window"),
    Bad(N + ["--reps", "0"], 2, "--reps must be at least 1", "no repetitions"),
    Bad(N + ["--pairs", "-1"], 2, "--pairs must be from 1 to 256", "negative pairs"),
    Bad(N + ["--pairs", "0"], 2, "leave it out for no multi-pair test",
        "zero pairs given: none is leaving it out"),
    Bad(N + ["--pairs", "257"], 2, "--pairs must be from 1 to 256", "too many pairs"),
    Bad(N + ["--iters", "99999999999999"], 2, "at most 1,000,000 per size",
        "iterations that would outlast the timeout"),
    Bad(N + ["--iters", "5,2000000"], 2, "at most 1,000,000 per size", "too many windows"),
    Bad(N + ["--iters", "1000000", "--timeout", "1"], 2, "takes at least",
        "counts that cannot fit the timeout, refused before mpirun starts"),
    Bad(N + ["--reps", "1000"], 2, "--reps must be at most 100", "too many launches"),
    Bad(N + ["--timeout", "1e9"], 2, "at most 86400 seconds", "a timeout of decades"),
    Bad(N + ["--iters", ""], 2, "--iters is empty", "empty iterations"),
    Bad(N + ["--pairs", ""], 2, "invalid int value", "empty pairs"),
    Bad(N + ["--plot", "{tmp}/nope/x.png"], 2, "does not exist",
        "plot in a missing folder, refused before measuring"),
    Bad(N + CHEAP + ["--plot", "/proc/x.png"], 2, "--plot /proc/x.png: is on proc",
        "plot on /proc: refused before mpirun, not after measuring"),
    Bad(N + CHEAP + ["--plot", "/sys/x.svg"], 2, "is on sysfs", "plot on /sys"),
    Bad(N + CHEAP + ["--plot", "{tmp}/" + "p" * 300 + ".png"], 2, "the name is too long",
        "a 300-character plot name"),
    Bad(N + CHEAP + ["--plot", "{tmp}"], 2, "is a folder", "plot into a folder"),
    Bad(N + ["--timeout", "0"], 2, "--timeout must be a positive number", "zero timeout"),
    Bad(N + ["--timeout", "nan"], 2, "a number of seconds", "NaN timeout"),
    Bad(N + ["--cpus", "0"], 2, "give two, A,B", "one CPU"),
    Bad(N + ["--cpus", "0,0"], 2, "names CPU 0 twice", "the same CPU twice"),
    Bad(N + ["--cpus", "0,9999"], 2, "CPU 9999 does not exist", "unknown CPU"),
    Bad(N + ["--cpus", "0,1", "--path", "same-l3"], 2, "not both", "--cpus and --path"),
    Bad(N + ["--path", "far"], 2, "invalid choice", "unknown path"),
    Bad(N + ["--hosts", "a"], 2, "give two, A,B", "one host"),
    Bad(N + ["--hosts", "a,b", "--pairs", "2"], 2, "--pairs measures pairs on one host",
        "pairs between hosts"),
    Bad(N + ["--hosts", "a,b", "--cpus", "0,1"], 2, "leave out --cpus and --path",
        "hosts with CPUs"),
    Bad(N + ["--peer-nodes", "0"], 2, "--peer-nodes goes with --hosts", "peer nodes alone"),
    Bad(N + ["--engine", "mpich"], 2, "invalid choice", "unknown engine"),
    Bad(N + ["--pages", "hugetlb"], 2, "invalid choice", "hugetlb pages not offered"),
    Bad(N + ["--plot", "{tmp}/x.pdf"], 2, "must end in .png or .svg", "plot format"),
    Bad(N + ["--quick"], 2, "needs exactly 2 ranks", "under mpirun -np 3",
        env={"OMPI_COMM_WORLD_SIZE": "3", "OMPI_COMM_WORLD_RANK": "0"}),
    Bad(N + ["--hosts", "a,b"], 2, "leave out --hosts", "--hosts under the user's mpirun",
        env={"OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "0"}),
    Bad(N + ["--reps", "2"], 2, "one launch, lat and bw only", "--reps under srun",
        env={"SLURM_STEP_NUM_TASKS": "2", "PMIX_RANK": "0"}),
    Bad(N + CHEAP, 4, "MPI is not installed", "mpirun missing", env={"PATH": "/nonexistent"}),
]

JSON = [
    N + CHEAP + ["--tests", "lat"],
]

WIDE = [
    N + CHEAP + ["--tests", "lat,bw"],
]
