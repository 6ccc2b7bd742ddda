"""`numascope fleet report` at fleet scale: a shared store of N nodes (default 100,000), as
`fleet run` leaves it — each node's brief and figures (numascope.fleet.full; the full
records stay on the nodes) — made from one real `run --quick` record (default
tests/data/advise_quick_run.json) with every metric given its own Gaussian node-to-node
noise (default 3 %), and P nodes (default 10) made S worse (default 20 %) on every metric
(bandwidths x (1 - S), latencies x (1 + S)). Prints the store's size per node, times
`numascope fleet report --json` as a user runs it (a new process; its peak memory from
resource.getrusage), then where that time goes in-process (reading the nodes:
numascope.fleet.load.analysis_runs; the analysis; the JSON); prints the planted nodes
found, the healthy nodes flagged and the seconds.

    .venv/bin/python benchmarks/fleet_scale.py [--nodes 100000] [--noise 0.03] [--planted 10]
        [--slow 0.2] [--seed 1] [--group-size G] [--record PATH] [--store PATH] [--quick]
        [--whole] [--profile]

--group-size G: node i is tagged rack=r<i // G>, so the fleet splits into configuration
groups of G nodes (300 groups of 3: --nodes 900 --group-size 3).

--quick: 300 nodes (checks that it runs). --store keeps the store there (else a temporary
folder, removed); a store there already is reused, as built by the same arguments.
--whole: each node's whole record instead (a store made before briefs: every repetition;
slow to build beyond 10,000). --profile: cProfile of the in-process steps, the top 25.
Targets on the 2-core dev VM at 100,000 nodes: <= 30 kB a node, `fleet report` <= 15 s and
<= 4 GB.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def build(db: Path, record: Path, n: int, noise: float, planted: int, slow: float,
          seed: int, write: bool = True, group_size: int = 0,
          whole: bool = False) -> tuple[str, set[str]]:
    """The store of n noisy copies of `record` (their briefs; whole: the records); returns
    the fleet id and the planted hosts (write False: only those, for a store built before
    with the same arguments)."""
    from numascope.fleet import full
    from numascope.results import store as S
    from numascope.results.record import Metric
    from numascope.results.run import RunRecord, migrate, new_run_id
    from numascope.results.store import Store
    base = RunRecord.from_dict(migrate(json.loads(record.read_text())))
    rng = np.random.default_rng(seed)
    fid = f"scale-{n}-{seed}" + (f"-g{group_size}" if group_size else "") + \
        ("-whole" if whole else "")
    slow_ix = set(rng.choice(n, size=min(planted, n), replace=False).tolist())
    hosts = {f"node{i:05d}" for i in slow_ix}
    if not write:
        return fid, hosts
    if not whole:
        _build_briefs(db, base, n, fid, slow_ix, noise, slow, rng, group_size)
        return fid, hosts
    metrics = [(r, k, m) for r, res in enumerate(base.results) for k, m in res.metrics.items()]
    worse = np.array([(1 - slow) if m.higher_is_better else (1 + slow) for _, _, m in metrics])
    with Store.open(db, write=True) as st:
        c = st.conn
        c.execute("BEGIN IMMEDIATE")
        for i in range(n):
            host = f"node{i:05d}"
            f = 1 + rng.normal(0, noise, len(metrics))
            if i in slow_ix:
                f *= worse
            results = [dataclasses.replace(res, metrics={}) for res in base.results]
            for (r, k, m), fj in zip(metrics, f, strict=True):
                results[r].metrics[k] = Metric(m.name, m.unit, m.higher_is_better,
                                               [v * fj if isinstance(v, float) else v
                                                for v in m.values], m.note)
            tags = {"fleet": fid, "host": host}
            if group_size:
                tags["rack"] = f"r{i // group_size:05d}"
            rec = dataclasses.replace(
                base, run_id=f"{new_run_id()}-{i:06d}", tags=tags,
                host={**base.host, "hostname": host,
                      "fleet": {"id": fid, "host": host, "rank": i, "ranks": n,
                                "launcher": "mpi", "slurm": {}, "reason": ""}},
                results=results)
            if not whole:
                rec = full.slim(rec, Path(f"/var/lib/numascope/fleet/{host}.{rec.run_id}"
                                          ".numascope.json"), host)
            S._put_run(c, rec, insert=True, medians=not whole)
            for res in rec.results:
                S._insert_result(c, rec.run_id, res, not whole)
        c.execute("COMMIT")
        st.checkpoint()
    return fid, hosts


def _build_briefs(db: Path, base, n: int, fid: str, slow_ix: set[int], noise: float,
                  slow: float, rng, group_size: int) -> None:
    """n briefs of `base` as fleet run stores them: the rows Store.save_run(medians=True)
    writes for one brief (numascope.fleet.full.slim of the record) made once, in memory,
    then copied n times with the run id, host and figures' medians of each node (a node a
    few microseconds, where saving each took milliseconds)."""
    from numascope.fleet import full
    from numascope.results.run import new_run_id
    from numascope.results.store import Store
    rid0, host0 = "RUN-ID-PLACEHOLDER", "HOST-PLACEHOLDER"
    one = dataclasses.replace(base, run_id=rid0, tags={"fleet": fid, "host": host0},
                              host={**base.host, "hostname": host0,
                                    "fleet": {"id": fid, "host": host0, "rank": 0,
                                              "ranks": n, "launcher": "mpi", "slurm": {},
                                              "reason": ""}})
    one = full.slim(one, Path(f"/var/lib/numascope/fleet/{host0}.{rid0}.numascope.json"),
                    host0)
    with Store.in_memory() as mem:
        full.save(mem, one)
        run_row = mem._q("SELECT * FROM runs")[0]
        res_rows = mem._q('SELECT id, family, "case", result FROM results ORDER BY id')
        fig_rows = mem._q('SELECT result_id, family, "case", ord, metric, unit, '
                          "higher_is_better, median, validated, kernel FROM figures "
                          "ORDER BY rowid")
    first = {rid: k for k, (rid, *_) in enumerate(res_rows)}
    med = np.array([np.nan if r[7] is None else r[7] for r in fig_rows])
    worse = np.array([(1 - slow) if r[6] else (1 + slow) for r in fig_rows])
    with Store.open(db, write=True) as st:
        c = st.conn
        c.execute("BEGIN IMMEDIATE")
        rid = (c.execute("SELECT max(id) FROM results").fetchone()[0] or 0) + 1
        for i in range(n):
            host, run_id = f"node{i:05d}", f"{new_run_id()}-{i:06d}"
            tags = {"fleet": fid, "host": host}
            if group_size:
                tags["rack"] = f"r{i // group_size:05d}"
            f = 1 + rng.normal(0, noise, len(fig_rows))
            if i in slow_ix:
                f = f * worse
            vals = (med * f).tolist()
            record = run_row[7].replace(rid0, run_id).replace(host0, host)
            c.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                      (run_id, *run_row[1:4], host, run_row[5], json.dumps(tags), record))
            c.execute("INSERT INTO run_briefs VALUES (?, '')", (run_id,))
            c.executemany('INSERT INTO results (id, run_id, family, "case", result) VALUES '
                          "(?, ?, ?, ?, ?)", [(rid + k, run_id, fam, case, blob)
                                              for k, (_, fam, case, blob)
                                              in enumerate(res_rows)])
            c.executemany('INSERT INTO figures (result_id, run_id, family, "case", ord, '
                          "metric, unit, higher_is_better, median, validated, kernel) VALUES "
                          "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                          [(rid + first[r[0]], run_id, *r[1:7],
                            None if r[7] is None else v, *r[8:])
                           for r, v in zip(fig_rows, vals, strict=True)])
            rid += len(res_rows)
        c.execute("COMMIT")
        st.checkpoint()


def in_memory(n: int, noise: float, noise_max: float, planted: int, slow: float,
              seed: int, group_size: int = 0) -> int:
    sys.path.insert(0, str(ROOT / "tests"))
    from fleet_synth import wide_fleet

    from numascope.fleet import outliers
    rng = np.random.default_rng(seed + 1)
    slow_ix = rng.choice(n, size=min(planted, n), replace=False).tolist()
    t0 = time.perf_counter()
    runs = wide_fleet(n, {i: slow for i in slow_ix}, seed, (noise, noise_max),
                      group_size=group_size or None)
    t1 = time.perf_counter()
    a = outliers.analyze(runs)
    t2 = time.perf_counter()
    want = {f"n{i:05d}" for i in slow_ix}
    flagged = {f.host for f in a.flags if f.kind == "outlier"}
    print(f"in memory: {n} nodes in {len(a.groups)} groups ({noise:.0%}-{noise_max:.0%} "
          f"noise, {len(want)} planted "
          f"{slow:.0%} worse) generated in {t1 - t0:.1f} s; analysis {t2 - t1:.2f} s; "
          f"planted found {len(want & flagged)} of {len(want)}; healthy nodes flagged "
          f"{len(flagged - want)}; per-test z limit {a.z_limit:.2f}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--noise", type=float, default=0.03)
    ap.add_argument("--planted", type=int, default=10)
    ap.add_argument("--slow", type=float, default=0.20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--record", type=Path, default=ROOT / "tests/data/advise_quick_run.json")
    ap.add_argument("--store", type=Path, default=None)
    ap.add_argument("--quick", action="store_true", help="300 nodes: checks that it runs")
    ap.add_argument("--in-memory", action="store_true",
                    help="no store: the quick record's 20 primary metrics generated as the "
                         "tests do (tests/fleet_synth.wide_fleet, each metric's noise drawn "
                         "from [--noise, --noise-max]) and analysed in-process")
    ap.add_argument("--noise-max", type=float, default=None)
    ap.add_argument("--group-size", type=int, default=0,
                    help="split the fleet into configuration groups of this many nodes")
    ap.add_argument("--whole", action="store_true",
                    help="whole records (a store made before briefs) instead of briefs")
    ap.add_argument("--profile", action="store_true",
                    help="cProfile the in-process steps (the top 25 by cumulative time)")
    a = ap.parse_args()
    n = 300 if a.quick else a.nodes
    if a.in_memory:
        return in_memory(n, a.noise, a.noise_max or a.noise, a.planted, a.slow, a.seed,
                         a.group_size)
    reuse = bool(a.store and a.store.exists())
    with tempfile.TemporaryDirectory() as tmp:
        db = a.store or Path(tmp) / "fleet.db"
        t0 = time.perf_counter()
        fid, planted = build(db, a.record, n, a.noise, a.planted, a.slow, a.seed, not reuse,
                             a.group_size, a.whole)
        print(f"store{' (reused)' if reuse else ''}: {n} nodes"
              f"{f' in groups of {a.group_size}' if a.group_size else ''} ({a.noise:.0%} noise, "
              f"{len(planted)} planted "
              f"{a.slow:.0%} worse) in {time.perf_counter() - t0:.1f} s, "
              f"{db.stat().st_size / n / 1000:.1f} kB per node "
              f"({db.stat().st_size / 1e9:.2f} GB; {'whole records' if a.whole else 'briefs'})")
        cmd = [sys.executable, "-m", "numascope", "fleet", "report", "--json",
               "--store", str(db), "--fleet", fid]
        print("$ " + " ".join(cmd[2:]))
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            print(p.stdout[-2000:], p.stderr[-2000:])
            return 1
        doc = json.loads(p.stdout)
        flagged = {f["host"] for f in doc["results"] if f["kind"] == "outlier"}
        import resource
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        incon = doc.get("inconclusive_nodes", "n/a")
        print(f"fleet report --json: {wall:.2f} s, peak memory {rss:.0f} MiB; "
              f"{len(doc['groups'])} groups, {incon} nodes inconclusive; planted found "
              f"{len(planted & flagged)} of {len(planted)}; healthy nodes flagged "
              f"{len(flagged - planted)}; per-test z limit {doc['z_limit']:.2f}")
        # where the time goes, in-process: reading the nodes, the analysis, the JSON
        from numascope.command.output import envelope
        from numascope.fleet import outliers
        from numascope.fleet.command import fleets
        from numascope.fleet.load import analysis_runs
        from numascope.results.plain import to_plain
        from numascope.results.store import Store
        prof = None
        if a.profile:
            import cProfile
            prof = cProfile.Profile()
            prof.enable()
        with Store.open(db) as st:
            t2 = time.perf_counter()
            light = analysis_runs(st, fleets(st)[fid])
            t3 = time.perf_counter()
            b = outliers.analyze(light, fleet=fid)
            t4 = time.perf_counter()
            doc = b.to_dict()
            text = json.dumps(to_plain(envelope("fleet", doc.pop("flags"), [], **doc)),
                              indent=2)
            t5 = time.perf_counter()
        if prof is not None:
            import pstats
            prof.disable()
            pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
        print(f"in-process: fleet.load.analysis_runs {t3 - t2:.2f} s "
              f"({(t3 - t2) / len(light) * 1000:.3f} ms per node), analysis {t4 - t3:.2f} s, "
              f"JSON ({len(text) / 1e6:.1f} MB) {t5 - t4:.2f} s; total {t5 - t2:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
