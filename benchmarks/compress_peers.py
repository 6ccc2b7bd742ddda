"""numascope's compressed sum side by side with python-blosc2's own reduction, in one run.

For each thread count: the same data, codec, clevel, filter and chunk size are summed by
  - numascope (C: pinned threads, one single-threaded dctx per thread, chunks decompressed
    into a cache-resident buffer and summed; timing in C per repetition), and
  - python-blosc2: `NDArray.sum()` on a blosc2 NDArray with the same chunks, blocks and cparams,
    with blosc2.set_nthreads(threads) (timed around the call: Python overhead included,
    which is what a user of that API pays),
and the plain in-memory sum (numascope, same threads). Prints GB/s (10^9 B of uncompressed
data per second, medians) and the ratios: numascope / blosc2 (target >= 1.5x) and
compressed / plain at the full thread count (target >= 1 on the smooth data; reported
honestly when not met).

    python benchmarks/compress_peers.py [--data smooth] [--size 256M] [--codec lz4]
        [--clevel 5] [--filter shuffle] [--reps 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import blosc2
import numpy as np

from numascope.bench import compress as cz
from numascope.bench.datasets import format_bytes, parse_size
from numascope.topology import read_topology

FILTERS = {"none": [], "shuffle": [blosc2.Filter.SHUFFLE],
           "bitshuffle": [blosc2.Filter.BITSHUFFLE],
           "bytedelta": [blosc2.Filter.SHUFFLE, blosc2.Filter.BYTEDELTA]}
CODECS = {"blosclz": blosc2.Codec.BLOSCLZ, "lz4": blosc2.Codec.LZ4, "lz4hc": blosc2.Codec.LZ4HC,
          "zstd": blosc2.Codec.ZSTD, "zlib": blosc2.Codec.ZLIB}


def blosc2_sum(data: np.ndarray, chunk: int, block: int, codec: str, clevel: int, filt: str,
               threads: int):
    """A blosc2 NDArray with the same chunks, blocks (the block size numascope's store
    used) and cparams."""
    blosc2.set_nthreads(threads)
    filters = FILTERS[filt]
    meta = [data.itemsize if f == blosc2.Filter.BYTEDELTA else 0 for f in filters]
    arr = blosc2.asarray(data, chunks=(chunk // data.itemsize,),
                         blocks=(block // data.itemsize,),
                         cparams={"codec": CODECS[codec], "clevel": clevel,
                                  "filters": filters, "filters_meta": meta,
                                  "nthreads": threads},
                         dparams={"nthreads": threads})
    ratio = arr.schunk.nbytes / arr.schunk.cbytes
    return arr, ratio


def timed_sum(arr, reps: int) -> tuple[list[float], float]:
    arr.sum()                                     # warm-up
    times, total = [], 0.0
    for _ in range(reps):
        t0 = time.perf_counter()
        total = float(arr.sum())
        times.append(time.perf_counter() - t0)
    return times, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="smooth", choices=["smooth", "noisy", "precip"])
    ap.add_argument("--size", default=None, help="default: 4x LLC within 256 MiB..4 GiB")
    ap.add_argument("--codec", default="lz4")
    ap.add_argument("--clevel", type=int, default=5)
    ap.add_argument("--filter", default="shuffle")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", default=None, help="e.g. 1,2 (default 1,2,4,…,all)")
    ap.add_argument("--block", default=None,
                    help="Blosc block size (default: half the chunk; 0: Blosc's choice)")
    ap.add_argument("--read", default="buffer", choices=["buffer", "fused"])
    a = ap.parse_args()

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
    chunk = cases[0].params["chunk_bytes"]
    gb = data.nbytes / 1e9
    print(f"data: {a.data}, {format_bytes(data.nbytes)} float32; {a.codec}-{a.clevel}-{a.filter}, "
          f"chunks of {format_bytes(chunk)}, read={a.read}; GB/s of uncompressed data "
          f"(median of {a.reps})")
    print(f"{'threads':>7} {'plain':>8} {'numascope':>10} {'blosc2.sum':>11} "
          f"{'ns/blosc2':>10} {'ns/plain':>9}  ratio(ns, blosc2)")
    last = None
    for case in cases[::-1]:                       # ascending thread counts
        t = case.params["threads"]
        r = bench.measure(topo, case)
        ours, plain = r.metric("decompress_sum").median, r.metric("plain_sum").median
        arr, bratio = blosc2_sum(data, chunk, r.params["block_bytes"], a.codec, a.clevel,
                                 a.filter, t)
        bt, bsum = timed_sum(arr, a.reps)
        theirs = gb / statistics.median(bt)
        if abs(bsum - r.params["sum"]) > 1e-6 * abs(r.params["sum"]) + 1e-3:
            print(f"  warning: blosc2 sum {bsum!r} differs from numascope's {r.params['sum']!r}")
        print(f"{t:>7} {plain:>8.2f} {ours:>10.2f} {theirs:>11.2f} {ours / theirs:>9.2f}x "
              f"{ours / plain:>8.2f}x  {r.metric('ratio').median:.1f}, {bratio:.1f}")
        last = (t, ours / theirs, ours / plain)
    print(f"Blosc blocks of {format_bytes(r.params['block_bytes'])} for both")
    if last:
        t, vs_peer, vs_plain = last
        print(f"\nat {t} threads: numascope / python-blosc2 = {vs_peer:.2f}x (target >= 1.5x: "
              f"{'met' if vs_peer >= 1.5 else 'NOT met'}); compressed / plain = {vs_plain:.2f}x "
              f"(target >= 1 on smooth data: {'met' if vs_plain >= 1 else 'NOT met'})")
    for n in r.notes:
        print(f"note: {n}")


if __name__ == "__main__":
    main()
