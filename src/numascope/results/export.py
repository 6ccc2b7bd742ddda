"""Runs as plain records, a pandas DataFrame, JSON, CSV or Parquet.

`rows(runs)` gives one flat dict per (run, result, metric) with every repetition in
`values`: the shape notebooks want (`to_dataframe(runs)` when pandas is installed)."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import IO, Any

from numascope.errors import UserError
from numascope.results.plain import to_plain
from numascope.results.run import RunRecord

FORMATS = ("json", "csv", "parquet", "kerncraft")
SUFFIXES = (".json", ".csv", ".parquet", ".yml", ".yaml")
SUFFIX_FORMAT = {".yml": "kerncraft", ".yaml": "kerncraft"}   # the rest: the suffix's name

COLUMNS = ["run_id", "started", "hostname", "tags", "memory_mode", "profile", "family", "case",
           "metric", "unit", "higher_is_better", "n", "median", "min", "max", "cv", "spread",
           "values", "params", "validated"]


def rows(runs: list[RunRecord]) -> list[dict[str, Any]]:
    out = []
    for run in runs:
        for res in run.results:
            for m in res.metrics.values():
                out.append({
                    "run_id": run.run_id, "started": run.started,
                    "hostname": run.host.get("hostname"), "tags": dict(run.tags),
                    "memory_mode": run.host.get("memory_mode"), "profile": run.profile,
                    "family": res.family, "case": res.case, "metric": m.name, "unit": m.unit,
                    "higher_is_better": m.higher_is_better, "n": len(m.values),
                    "median": m.median, "min": m.min, "max": m.max, "cv": m.cv,
                    "spread": m.spread, "values": list(m.values),
                    "params": to_plain(res.params), "validated": res.validated,
                })
    return out


TAG, PARAM = "tag.", "param."     # the prefixes of the flattened columns
_SCALARS = (bool, int, float, str)


def flat(data: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """The rows with each tag and each scalar parameter as a column of its own ("tag.nps",
    "param.threads"; missing where a row has none), beside the JSON of the whole dicts: a
    table tool filters on them without parsing JSON. A parameter whose values are of
    mixed kinds across rows is given as text; ints and floats mixed as floats."""
    tags = sorted({k for r in data for k in r["tags"]})
    kinds: dict[str, set[type]] = {}
    for r in data:
        for k, v in r["params"].items():
            if v is not None:
                kinds.setdefault(k, set()).add(type(v) if isinstance(v, _SCALARS) else list)
    params = sorted(k for k, ts in kinds.items() if list not in ts)
    out = []
    for r in data:
        row = dict(r)
        for k in tags:
            row[TAG + k] = r["tags"].get(k)
        for k in params:
            row[PARAM + k] = _scalar(r["params"].get(k), kinds[k])
        out.append(row)
    return COLUMNS + [TAG + k for k in tags] + [PARAM + k for k in params], out


def _scalar(v: Any, kinds: set[type]) -> Any:
    if v is None or len(kinds) == 1:
        return v
    if kinds <= {int, float}:
        return float(v)
    return str(v).lower() if isinstance(v, bool) else str(v)


def to_dataframe(runs: list[RunRecord]) -> Any:
    try:
        import pandas as pd
    except ImportError:
        raise UserError("pandas is not installed (pip install pandas)") from None
    columns, data = flat(rows(runs))
    return pd.DataFrame(data, columns=columns)


def read_json(path: str | Path) -> list[RunRecord]:
    """Records written by export_json, or the envelope of `export -o - --json` (any older
    schema version is migrated)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise UserError(f"cannot read {path}: {e}") from None
    if isinstance(data, dict):
        items = data.get("runs", data.get("results", []))
    else:
        items = data
    return [RunRecord.from_dict(d) for d in items]


def _bool(v: str) -> bool:
    return v.strip().lower() in ("true", "1", "yes")


def read_csv(path: str | Path) -> list[dict[str, Any]]:
    """Rows written by export_csv, with JSON columns decoded and numbers parsed."""
    out = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            d: dict[str, Any] = dict(r)
            for k in ("tags", "values", "params"):
                d[k] = json.loads(d[k])
            for k in ("median", "min", "max", "cv", "spread"):
                d[k] = float(d[k]) if d[k] not in ("", "nan") else float("nan")
            d["n"] = int(d["n"])
            d["higher_is_better"] = _bool(d["higher_is_better"])
            d["validated"] = _bool(d["validated"])
            for k, v in d.items():          # the flattened columns (flat): "" is missing
                if k.startswith(TAG):
                    d[k] = v if v != "" else None
                elif k.startswith(PARAM):
                    d[k] = _cell(v)
            out.append(d)
    return out


def _cell(v: str) -> Any:
    """A flattened parameter's CSV text back to its value: a number or true/false as
    such, anything else as the text."""
    if v == "":
        return None
    try:
        return json.loads(v)
    except ValueError:
        return v


def format_for(output: str, fmt: str | None = None) -> str:
    """The export format: `fmt` when given, JSON for standard output ("-"), else from the
    file's extension; UserError when the extension says nothing."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise UserError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
        return fmt
    if output == "-":
        return "json"
    suffix = Path(output).suffix.lower()
    if suffix not in SUFFIXES:
        what = f"extension {suffix!r}" if suffix else "no extension"
        raise UserError(f"--output {output}: {what} names no format: end the file in "
                        f"{', '.join(SUFFIXES)} or give --format")
    return SUFFIX_FORMAT.get(suffix, suffix[1:])


def _write(runs: list[RunRecord], fmt: str, f: IO[str]) -> None:
    """JSON (full records) or CSV (one row per metric; booleans as true/false) to `f`."""
    if fmt == "json":
        f.write(json.dumps({"runs": [to_plain(r.to_dict()) for r in runs]}, indent=1))
        f.write("\n")
        return
    columns, data = flat(rows(runs))
    w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    for row in data:
        for k in ("tags", "values", "params"):
            row[k] = json.dumps(row[k])
        for k, v in row.items():
            if isinstance(v, bool):
                row[k] = "true" if v else "false"
        w.writerow(row)


def write_stdout(runs: list[RunRecord], fmt: str, base: str | None = None) -> None:
    """JSON, CSV or a kerncraft machine file on standard output (Parquet is binary: a
    file only)."""
    if fmt == "parquet":
        raise UserError("Parquet is binary: write it to a file (-o runs.parquet)")
    if fmt == "kerncraft":
        sys.stdout.write(kerncraft_text(runs, base))
        return
    _write(runs, fmt, sys.stdout)


def kerncraft_text(runs: list[RunRecord], base: str | None = None) -> str:
    """One run as a kerncraft machine file (numascope.results.kerncraft)."""
    if len(runs) != 1:
        raise UserError(f"a kerncraft machine file describes one run; {len(runs)} were given")
    from numascope.results.kerncraft import text
    return text(runs[0], base)


def export(runs: list[RunRecord], fmt: str, output: str | Path,
           base: str | None = None) -> Path:
    """`base`: the kerncraft machine file that gives what numascope does not measure."""
    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    content = kerncraft_text(runs, base) if fmt == "kerncraft" else None
    p = Path(output)
    if not p.parent.is_dir():
        raise UserError(f"--output {p}: folder {p.parent} does not exist")
    tmp = p.with_name(f".{p.name}.tmp")
    try:
        if fmt == "parquet":
            _parquet(runs, tmp)
        elif content is not None:
            tmp.write_text(content)
        else:
            with open(tmp, "w", newline="") as f:
                _write(runs, fmt, f)
        tmp.replace(p)
    except OSError as e:
        raise UserError(f"cannot write {p}: {e.strerror}") from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return p


def _parquet(runs: list[RunRecord], path: Path) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError("parquet export needs pyarrow (pip install 'numascope[parquet]'); "
                        "use --format json or csv") from None
    columns, data = flat(rows(runs))
    cols: dict[str, list] = {c: [r.get(c) for r in data] for c in columns}
    for k in ("tags", "params"):   # the whole dicts (nested ones too) as JSON text
        cols[k] = [json.dumps(v) for v in cols[k]]
    pq.write_table(pa.table(cols), str(path))
