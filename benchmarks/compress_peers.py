"""numascope's compressed sum side by side with python-blosc2's own reduction, in one run.

For each thread count the same data, codec, clevel and filter are summed by
  - numascope (C: pinned threads, one single-threaded dctx per thread, chunks decompressed
    into a cache-resident buffer and summed; timing in C per repetition; its own layout:
    chunks of half the L2, blocks of half a chunk), and
  - python-blosc2 as its users call it: `blosc2.asarray(data, cparams=...)` with blosc2's
    own default chunks and blocks, `blosc2.set_nthreads(threads)`, `arr.sum()` (timed
    around the call: the Python overhead is what a user of that API pays); then the same
    with the best of a few chunk/block layouts (blosc2's best settings), beside it,
and the plain in-memory sum (numascope, same threads). Prints GB/s (10^9 B of uncompressed
data per second, medians), the layouts, the code of both sides, and the ratios: numascope /
blosc2 with its default layout (target >= 1.5x) and with its best layout, and compressed /
plain at the full thread count.

    python benchmarks/compress_peers.py [--data smooth] [--size 256M] [--codec lz4]
        [--clevel 5] [--filter shuffle] [--reps 5] [--threads 1,2] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import time

import blosc2
import numpy as np

from numascope.families.compress import bench as cz
from numascope.families.compress.datasets import format_bytes, parse_size
from numascope.topology import read_topology

FILTERS = {"none": [], "shuffle": [blosc2.Filter.SHUFFLE],
           "bitshuffle": [blosc2.Filter.BITSHUFFLE],
           "bytedelta": [blosc2.Filter.SHUFFLE, blosc2.Filter.BYTEDELTA]}
CODECS = {"blosclz": blosc2.Codec.BLOSCLZ, "lz4": blosc2.Codec.LZ4, "lz4hc": blosc2.Codec.LZ4HC,
          "zstd": blosc2.Codec.ZSTD, "zlib": blosc2.Codec.ZLIB}


def blosc2_array(data: np.ndarray, codec: str, clevel: int, filt: str, threads: int,
                 chunk: int | None = None, block: int | None = None):
    """A blosc2 NDArray of the data with these cparams; chunks and blocks are blosc2's own
    choice unless given (bytes)."""
    blosc2.set_nthreads(threads)
    filters = FILTERS[filt]
    meta = [data.itemsize if f == blosc2.Filter.BYTEDELTA else 0 for f in filters]
    layout = {}
    if chunk:
        layout["chunks"] = (chunk // data.itemsize,)
    if block:
        layout["blocks"] = (block // data.itemsize,)
    return blosc2.asarray(data, **layout,
                          cparams={"codec": CODECS[codec], "clevel": clevel,
                                   "filters": filters, "filters_meta": meta})


def layout_text(arr, itemsize: int) -> str:
    return (f"chunks {format_bytes(arr.chunks[0] * itemsize)}, "
            f"blocks {format_bytes(arr.blocks[0] * itemsize)}, ratio {arr.schunk.cratio:.1f}")


def timed_sum(arr, reps: int) -> tuple[list[float], float]:
    arr.sum()                                     # warm-up
    times, total = [], 0.0
    for _ in range(reps):
        t0 = time.perf_counter()
        total = float(arr.sum())
        times.append(time.perf_counter() - t0)
    return times, total


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="smooth", choices=["smooth", "noisy", "precip"])
    ap.add_argument("--size", default=None, help="default: 4x LLC within 256 MiB..4 GiB")
    ap.add_argument("--codec", default="lz4")
    ap.add_argument("--clevel", type=int, default=5)
    ap.add_argument("--filter", default="shuffle")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", default=None, help="e.g. 1,2 (default 1,2,4,…,all)")
    ap.add_argument("--block", default=None,
                    help="numascope's Blosc block size (default: half the chunk; 0: Blosc's)")
    ap.add_argument("--read", default="buffer", choices=["buffer", "fused"])
    ap.add_argument("--quick", action="store_true",
                    help="16 MiB, 1 thread, 1 rep: checks that it runs")
    a = ap.parse_args(argv)
    if a.quick:
        a.size, a.threads, a.reps = "16M", "1", 1

    topo = read_topology("/")
    size = parse_size(a.size) if a.size else cz.default_size(topo, "full")
    spec = cz.DataSpec(a.data, size=size)
    data = spec.build().data
    threads = ([int(t) for t in a.threads.split(",")] if a.threads
               else cz.thread_counts(len(topo.usable_cpus())))
    bench = cz.Compress()
    block = None if a.block is None else (0 if a.block == "0" else parse_size(a.block))
    cases = bench.cases(topo, spec, [a.codec], [a.clevel], [a.filter], threads, reps=a.reps,
                        block_bytes=block, read=a.read)
    chunk = cases[0].params.chunk_bytes
    gb = data.nbytes / 1e9
    print(f"data: {a.data}, {format_bytes(data.nbytes)} float32; {a.codec}-{a.clevel}-"
          f"{a.filter}, read={a.read}; GB/s of uncompressed data (median of {a.reps})")
    print(f"numascope: numascope compress --synthetic {a.data} --size {data.nbytes} "
          f"--codecs {a.codec} --clevels {a.clevel} --filters {a.filter} --threads T")
    print(f"blosc2:    blosc2.set_nthreads(T); arr = blosc2.asarray(data, cparams=dict("
          f"codec={a.codec}, clevel={a.clevel}, filters=[{a.filter}])); arr.sum()")
    # blosc2's best settings: its default layout and a few others, the fastest by median
    layouts = [(None, None), (chunk, None), (4 << 20, None), (32 << 20, None),
               (8 << 20, 64 << 10), (8 << 20, 1 << 20)]
    print(f"{'threads':>7} {'plain':>7} {'numascope':>9} {'b2 default':>10} {'b2 best':>8} "
          f"{'ns/b2def':>8} {'ns/b2best':>9} {'ns/plain':>8}")
    last, notes = None, []
    for case in cases[::-1]:                       # ascending thread counts
        t = case.params.threads
        r = bench.measure(topo, case)
        ours, plain = r.metric("decompress_sum").median, r.metric("plain_sum").median
        speeds = []
        for lc, lb in layouts:
            arr = blosc2_array(data, a.codec, a.clevel, a.filter, t, lc, lb)
            bt, bsum = timed_sum(arr, a.reps)
            if abs(bsum - r.params["sum"]) > 1e-6 * abs(r.params["sum"]) + 1e-3:
                raise SystemExit(f"blosc2 sum {bsum!r} differs from numascope's "
                                 f"{r.params['sum']!r}: not comparable")
            speeds.append((gb / statistics.median(bt), layout_text(arr, data.itemsize)))
            del arr
        default, best = speeds[0], max(speeds)
        print(f"{t:>7} {plain:>7.2f} {ours:>9.2f} {default[0]:>10.2f} {best[0]:>8.2f} "
              f"{ours / default[0]:>7.2f}x {ours / best[0]:>8.2f}x {ours / plain:>7.2f}x")
        notes.append(f"{t} thread(s): blosc2 default layout {default[1]}; best {best[1]}")
        last = (t, ours / default[0], ours / best[0], ours / plain)
    print(f"numascope layout: chunks {format_bytes(chunk)}, blocks "
          f"{format_bytes(r.params['block_bytes'])}, ratio {r.metric('ratio').median:.1f}")
    for n in notes:
        print(n)
    if last:
        t, vs_def, vs_best, vs_plain = last
        print(f"\nat {t} threads: numascope / python-blosc2 (its default layout) = {vs_def:.2f}x "
              f"(target >= 1.5x: {'met' if vs_def >= 1.5 else 'NOT met'}); / python-blosc2 "
              f"(its best layout here) = {vs_best:.2f}x; compressed / plain = {vs_plain:.2f}x")
    for n in r.notes:
        print(f"note: {n}")


if __name__ == "__main__":
    main()
