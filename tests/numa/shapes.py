"""The guests the multi-node tests boot, and the numascope commands each one runs.

Sizes are small so that TCG stays fast: 16 MiB bandwidth arrays, 4 MiB latency buffers,
8 MiB matrix arrays. The commands named in a guest's list all run in one boot."""

from __future__ import annotations

from guest import GUEST_LOCAL, Shape, Step

BW = ["--size", "16M", "--reps", "2", "--json"]
TIER_RATIOS = ("1:0", "3:1", "1:1", "1:3", "0:1")   # DRAM node 0 : CPU-less node 1
LAT_BYTES = 4 << 20          # latency buffers (matrix --size, lat --size)
MATRIX_BW_BYTES = 8 << 20    # matrix read-bandwidth arrays: told apart from LAT_BYTES by size
MATRIX = ["matrix", "--size", "4M", "--bw-size", "8M", "--samples", "3", "--json"]
COMPRESS_SIZE = 4 << 20
COMPRESS = ["compress", "--codecs", "lz4", "--clevels", "1", "--filters", "shuffle",
            "--threads", "1", "--size", "4M", "--reps", "2", "--json"]

# (a) two packages of two nodes each, NPS2-like: SLIT 10 local, 12 same package, 32 remote
TWO_SOCKETS = Shape("2s4n", sockets=2, cpu_nodes=(0, 1, 2, 3), node_mib=(256,) * 4,
                    distances={(0, 1): 12, (2, 3): 12}, default_distance=32)

# (b) one node with the CPUs, one CPU-less memory node (a CXL / HBM tier)
CPULESS = Shape("cpuless", sockets=1, cpu_nodes=(0, 0), node_mib=(512, 256),
                default_distance=24)

# booted on a kernel >= 6.9 where there is one (guest.newer_kernel()), which adds the
# kernel's own weighted interleave, with system weights written in the guest's sysfs before
# numascope starts (its absence on the distribution's kernel: the two-socket guest's step)
SYSTEM_WEIGHTS = {0: 3, 1: 1}       # non-default (the kernel's default is 1 per node)
WI_DIR = "/sys/kernel/mm/mempolicy/weighted_interleave"
WEIGHTED_BYTES = 64 << 20           # each of triad's three arrays
SYS_RATIOS = ("1:0", "1:1", "sys")  # "sys": the kernel's policy with SYSTEM_WEIGHTS


def weights_setup() -> str:
    """Guest shell (root, in the work dir): the system weights before, the new ones set,
    and after, each as lines "nodeN W" in weights-before / weights-after."""
    show = f"for f in {WI_DIR}/node*; do echo \"${{f##*/}} $(cat $f)\"; done"
    set_ = "; ".join(f"echo {w} > {WI_DIR}/node{n}" for n, w in SYSTEM_WEIGHTS.items())
    return f"{show} > weights-before\n{set_}\n{show} > weights-after"


# (c) four nodes on one package (NPS4-like, SLIT 10/11/12) with CPUs numbered round-robin
# over the nodes: CPU i on node i % 4
ROUND_ROBIN = Shape("rr4n", sockets=1, cpu_nodes=(0, 1, 2, 3, 0, 1, 2, 3),
                    node_mib=(512,) * 4, distances={(0, 1): 11, (2, 3): 11},
                    default_distance=12)

# (d) two sockets of two nodes of one vCPU, for `advise --predict/--verify` in a boot of its
# own, each socket's vCPUs pinned to one host CPU (Shape.pin_sockets): the vCPUs of a socket
# share its throughput as a real socket's cores share its memory bandwidth, so layouts that
# keep the ranks on one socket get about half what spreading them over both gets. A smoke
# run of the bandwidth and matrix stages, then every layout of 2 and 4 ranks predicted from
# it and run for real (mpirun, one process a rank). (Two vCPUs a node gave 4 ranks three
# layouts, and took the boot from about 130 s to 290 s: most of the suite's time.)
PREDICT = Shape("2s4n-predict", sockets=2, cpu_nodes=(0, 1, 2, 3), node_mib=(256,) * 4,
                distances={(0, 1): 12, (2, 3): 12}, default_distance=32, pin_sockets=True)
PREDICT_RANKS = (2, 4)

# (d') the same on two nodes of two vCPUs, a node a socket: 2 ranks inside one node or one
# on each. (Its 4 ranks take all 4 vCPUs, one layout as in PREDICT: not run again, for the
# suite's time.)
PREDICT_2N = Shape("2s2n-predict", sockets=2, cpu_nodes=(0, 0, 1, 1), node_mib=(256,) * 2,
                   default_distance=32, pin_sockets=True)
PREDICT_2N_RANKS = (2,)
PREDICT_STORE = f"{GUEST_LOCAL}/predict.db"
# Repetitions of each verified layout. Where rankings are compared (make test-numa, the
# guests alone) 24: the ranks time together over many of the host's scheduler slices
# (advise's own count, about 2 s of it on a real machine, costs minutes under TCG; 40 took
# 46-53 s a verify step here). In the whole suite, where other work always made the ranking
# a skip, the path is checked on 6 (at least 3 a rank, as the check asks).
PREDICT_REPS_RANKED, PREDICT_REPS = 24, 6


def steps_predict(ranks: tuple[int, ...], reps: int) -> list[Step]:
    return [
        Step("predict-run", ["run", "--smoke", "--stage", "bandwidth", "--stage", "matrix",
                             "--store", PREDICT_STORE, "--no-report", "--json"]),
        *[Step(f"verify-{r}", ["advise", "--verify", "--ranks", str(r), "--threads", "1",
                               "--reps", str(reps), "--store", PREDICT_STORE, "--json"])
          for r in ranks],
    ]


# bad input: (name, argv, what the one line must say)
ERRORS_TWO_SOCKETS = [
    ("err-membind-absent", ["bw", "--membind", "7", "--size", "16M"], "node 7 does not exist"),
    ("err-lat-node-absent", ["lat", "--node", "9", "--size", "4M"], "9"),
    ("err-lat-cpu-absent", ["lat", "--cpu", "9", "--size", "4M"], "CPU 9"),
    ("err-matrix-from-absent", ["matrix", "--from", "5"], "5"),
    ("err-bind-too-big", ["bw", "--kernel", "read", "--membind", "1", "--size", "300M"],
     "is free on node 1"),
]
ERRORS_ROUND_ROBIN = [   # the driver's working directory is the 9p-shared one
    ("err-store-on-9p", ["run", "--stage", "topology", "--store", "on-9p.db", "--no-report"],
     "put the store on a local disk"),
]
ERRORS_CPULESS = [
    ("err-domain-cpuless", ["bw", "--domain", "N1", "--size", "16M"], "N1"),
    ("err-matrix-from-cpuless", ["matrix", "--from", "1"], "node 1"),
    ("err-compress-cpuless", ["compress", "--where", "N1", "--size", "4M"], "N1"),
    ("err-lat-cpu-on-cpuless", ["lat", "--cpu", "2", "--node", "1", "--size", "4M"], "CPU 2"),
    ("err-lat-too-big-cpuless", ["lat", "--node", "1", "--size", "400M"], "node 1"),
]


def steps_two_sockets() -> list[Step]:
    return [
        Step("topo", ["topo", "--json"]),
        Step("bw-membind", ["bw", "--kernel", "triad", "--membind", "2", *BW]),
        Step("bw-interleave", ["bw", "--kernel", "copy", "--interleave", "1-3", *BW]),
        Step("bw-first-touch", ["bw", "--kernel", "fill", *BW]),
        Step("bw-first-touch-S1", ["bw", "--kernel", "read", "--domain", "S1", *BW]),
        Step("bw-per-domain", ["bw", "--kernel", "read", "--per-domain", *BW]),
        Step("matrix", MATRIX),
        Step("lat-bound", ["lat", "--cpu", "3", "--node", "0", "--size", "4M", "--samples", "3",
                           "--json"]),
        # memory-level parallelism from CPU 0: its own node's memory, then the other socket's
        *[Step(f"lat-chains-{where}", ["lat", "--chains", "1,4", "--cpus", "0", "--membind",
                                        str(node), "--size", "4M", "--samples", "3",
                                        "--loads", "4096", "--json"])
          for where, node in (("local", 0), ("remote", 2))],
        Step("compress-N1", [*COMPRESS, "--where", "N1"]),
        # the ping-pong line homed on each node in turn, for one cross-socket pair
        Step("c2c-home-all", ["c2c", "--cpus", "0,3", "--home", "all", "--samples", "3",
                              "--trips", "200", "--json"]),
        # the distribution's kernel (< 6.9) has no MPOL_WEIGHTED_INTERLEAVE: exit 4, one line
        Step("bw-weighted-sys-absent", ["bw", "--weighted-interleave", "0,1", *BW]),
        *[Step(name, argv) for name, argv, _ in ERRORS_TWO_SOCKETS],
    ]


def steps_cpuless() -> list[Step]:
    return [
        Step("topo", ["topo", "--json"]),
        Step("bw-membind-cpuless", ["bw", "--kernel", "read", "--membind", "1", *BW]),
        Step("bw-interleave", ["bw", "--kernel", "triad", "--interleave", "0-1", *BW]),
        Step("bw-per-domain", ["bw", "--kernel", "read", "--per-domain", *BW]),
        # DRAM:tier page ratios placed by numascope, in the order given
        Step("bw-tier-sweep", ["bw", "--kernel", "read", "--tier-sweep", "0,1", "--ratios",
                               ",".join(TIER_RATIOS), *BW]),
        Step("matrix", MATRIX),
        Step("lat-cpuless", ["lat", "--node", "1", "--size", "4M", "--samples", "3", "--json"]),
        # the data on the tier, the threads on the DRAM node's CPUs
        Step("compress-on-tier", [*COMPRESS, "--cpus", "N0", "--membind", "1"]),
        # every stage, fio and MPI included, on the smoke profile's working sets (this
        # guest's 2 vCPUs: more would spin MPI's shared-memory polling under TCG, 20 s a launch)
        # (the report: run-quick's in rr4n; under TCG with these figures it takes 90 s)
        Step("run-smoke", ["run", "--smoke", "--io-dir", IO_DIR, "--store", SMOKE_STORE,
                           "--no-report", "--json"]),
        *[Step(name, argv) for name, argv, _ in ERRORS_CPULESS],
    ]


def steps_cpuless_weighted() -> list[Step]:
    """The CPU-less guest's steps on a kernel with weighted interleave (after its own)."""
    return [
        Step("bw-weighted-sys", ["bw", "--weighted-interleave", "0,1", "--json", "--size",
                                 f"{WEIGHTED_BYTES >> 20}M", "--reps", "2", "--kernel",
                                 "triad"]),
        Step("bw-tier-sweep-sys", ["bw", "--kernel", "read", "--tier-sweep", "0,1",
                                   "--ratios", ",".join(SYS_RATIOS), *BW]),
    ]


# the quick profile's stages that place memory on nodes: the matrix (node 0's row) and c2c
# (its line first-touched by the pair's first CPU); its latency stage (the chains over a
# 256 MiB arena: 53 s under TCG) and the report (matplotlib under TCG: 50 s) are not run
# in the guest: the report is written on the host from the guest's store
RUN_STAGES = ["--stage", "c2c", "--stage", "matrix"]
RUN_FILES = (f"{GUEST_LOCAL}/runs.db",)
SMOKE_STORE = f"{GUEST_LOCAL}/runs.db"
IO_DIR = f"{GUEST_LOCAL}/io"     # the storage stage's directory


def io_setup() -> str:
    """Guest shell: IO_DIR on an ext4 image in the guest's RAM (loop-mounted: the 6.1 guest's
    tmpfs and 9p refuse the direct I/O fio's jobs use); no device is written."""
    img = f"{GUEST_LOCAL}/io.img"
    return (f"modprobe loop; truncate -s 64M {img} && mkfs.ext4 -q -F {img} && "
            f"mkdir -p {IO_DIR} && mount -o loop {img} {IO_DIR} && echo mounted {IO_DIR}")


def steps_round_robin() -> list[Step]:
    return [
        Step("topo", ["topo", "--json"]),
        Step("bw-first-touch-N2", ["bw", "--kernel", "fill", "--domain", "N2", *BW]),
        Step("matrix", MATRIX),
        # the quick profile's NUMA stages (under TCG its bandwidth takes 60 s, compression
        # 135 s, peaks with DGEMM 2048 and LU 4096 minutes); every stage: run-smoke (cpuless)
        Step("run-quick", ["run", "--quick", *RUN_STAGES, "--store", RUN_FILES[0],
                           "--no-report", "--json"]),
        *[Step(name, argv) for name, argv, _ in ERRORS_ROUND_ROBIN],
    ]
