"""Data for the compression benchmark: synthetic generators and loaders for the user's files.

Synthetic data (deterministic for a seed, generated block by block so no full-size float64
temporaries are made):
    smooth   a smooth ramp, the highly compressible case of the published experiment
    noisy    a realistic sensor signal: slow oscillations plus Gaussian noise in every value
    precip   a precipitation-like field on a 2-D grid: mostly zeros, skewed positive values
             in spatially correlated patches, quantized to 0.1 mm like gauge/radar products

Real data is never inflated: asking for more bytes than a file holds is an error (a tiled
repeat shorter than the codec's window would fake the compression ratio), and a smaller
size takes a prefix."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from numascope.errors import UserError
from numascope.families.compress.dtypes import dtype_code, parse_dtype
from numascope.families.compress.options import (  # declared with the options
    FORMATS,
    SYNTHETIC,
    SYNTHETIC_DTYPE,
    TABLE,
)
from numascope.units import format_bytes, parse_size  # noqa: F401 - re-exported

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
_BLOCK = 1 << 22              # elements generated per block
_GRID_W = 2048                # columns of the synthetic precipitation grid
_CELL = 16                    # grid points per correlation cell of the precipitation field


@dataclass
class Dataset:
    name: str                 # "smooth", "noisy", "precip" or the file's name
    data: np.ndarray          # 1-D, C-contiguous, native byte order
    kind: str                 # "synthetic" or "file"
    source: str               # how it was made or where it came from
    notes: list[str] = field(default_factory=list)

    @property
    def dtype(self) -> str:
        """Short code the C core understands: f4 f8 i1 i2 i4 i8 u1 u2 u4 u8."""
        return dtype_code(self.data.dtype)

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes)


# -- sizes and dtypes -----------------------------------------------------------------------

# -- synthetic data -------------------------------------------------------------------------

def synthetic(name: str, nbytes: int, dtype: str | np.dtype = SYNTHETIC_DTYPE, seed: int = 0
              ) -> Dataset:
    """Generate `nbytes` (rounded down to whole items) of the named synthetic data set."""
    dt = parse_dtype(str(dtype)) if not isinstance(dtype, np.dtype) else dtype
    n = nbytes // dt.itemsize
    if n < 1:
        raise UserError(f"size {nbytes} B holds no {dt} item")
    gen = {"smooth": _smooth, "noisy": _noisy, "precip": _precip}.get(name)
    if gen is None:
        raise UserError(f"unknown synthetic data set {name!r} (choose from "
                        f"{', '.join(SYNTHETIC)})")
    out = np.empty(n, dtype=dt)
    gen(out, np.random.default_rng(seed))
    desc = {"smooth": "smooth ramp 0..1000 (highly compressible)",
            "noisy": "oscillations + Gaussian noise (realistic sensor signal)",
            "precip": f"precipitation-like {_GRID_W}-column grid: ~60 % zeros, skewed, "
                      "spatially correlated, 0.1 mm steps"}[name]
    return Dataset(name, out, "synthetic", f"synthetic {desc}, seed {seed}")


def _blocks(n: int):
    for b0 in range(0, n, _BLOCK):
        yield b0, min(n, b0 + _BLOCK)


def _smooth(out: np.ndarray, rng: np.random.Generator) -> None:
    n = len(out)
    step = 1000.0 / max(1, n - 1)
    for b0, b1 in _blocks(n):
        out[b0:b1] = np.arange(b0, b1, dtype=np.float64) * step


def _noisy(out: np.ndarray, rng: np.random.Generator) -> None:
    n = len(out)
    for b0, b1 in _blocks(n):
        t = np.arange(b0, b1, dtype=np.float64)
        # float32 arithmetic for speed; the phase of the slow wave is kept in float64.
        v = np.sin(t * 2e-5).astype(np.float32) * np.float32(5.0) + np.float32(20.0)
        v += np.sin((t * 3.1e-3) % (2 * np.pi)).astype(np.float32) * np.float32(1.5)
        v += rng.standard_normal(b1 - b0, dtype=np.float32) * np.float32(0.25)
        if out.dtype.kind in "iu":
            v = np.clip(np.rint(v * 100), np.iinfo(out.dtype).min, np.iinfo(out.dtype).max)
        out[b0:b1] = v


def _precip(out: np.ndarray, rng: np.random.Generator) -> None:
    n = len(out)
    rows = -(-n // _GRID_W)
    # Coarse random field, bilinearly interpolated: correlation length ~_CELL points.
    coarse = rng.standard_normal((rows // _CELL + 2, _GRID_W // _CELL + 2)).astype(np.float32)
    x = np.arange(_GRID_W) / _CELL
    x0 = x.astype(np.int64)
    fx = (x - x0).astype(np.float32)
    rows_per_block = max(1, _BLOCK // _GRID_W)
    for r0 in range(0, rows, rows_per_block):
        r1 = min(rows, r0 + rows_per_block)
        y = np.arange(r0, r1) / _CELL
        y0 = y.astype(np.int64)
        fy = (y - y0).astype(np.float32)[:, None]
        a = coarse[y0][:, x0]
        b = coarse[y0][:, x0 + 1]
        c = coarse[y0 + 1][:, x0]
        d = coarse[y0 + 1][:, x0 + 1]
        f = (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy
        # ~60 % of the smoothed field is dry; wet values grow fast (skewed), 0.1 mm steps.
        wet = np.maximum(f - 0.18, 0)
        v = np.round(12.0 * wet ** 1.7, 1)
        flat = v.ravel()
        e0, e1 = r0 * _GRID_W, min(n, r1 * _GRID_W)
        if out.dtype.kind in "iu":
            flat = np.rint(flat * 10)
        out[e0:e1] = flat[: e1 - e0]


# -- the user's files ------------------------------------------------------------------------

def load(path: str | Path, fmt: str = TABLE["format"].default, dtype: str | None = None,
         column: str | None = None, variable: str | None = None) -> Dataset:
    """Read a data file into a 1-D array. Any failure to parse is one UserError line."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"data file {p} does not exist or is not a file")
    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
    if fmt == "auto":
        try:
            fmt = _sniff(p, dtype)
        except OSError as e:
            raise UserError(f"{p.name}: cannot read the file ({e.strerror or _one_line(e)})") \
                from None
    dt = parse_dtype(dtype) if dtype else None
    reader = {"npy": _load_npy, "raw": _load_raw, "csv": _load_csv, "parquet": _load_parquet,
              "hdf5": _load_hdf5, "netcdf": _load_netcdf, "blosc": _load_blosc}[fmt]
    try:
        arr, what = reader(p, dt, column, variable)
    except OSError as e:   # unreadable (permissions, I/O error) at any step of any reader
        raise UserError(f"{p.name}: cannot read the file ({e.strerror or _one_line(e)})") \
            from None
    except MemoryError:
        raise UserError(f"{p.name}: not enough memory to load it") from None
    arr = np.asarray(arr)
    if arr.dtype.kind not in "fiu":
        raise UserError(f"{p.name}: {what} holds {arr.dtype} values, not numbers")
    notes = []
    if dt is not None and arr.dtype != dt:
        arr = arr.astype(dt)
        notes.append(f"converted to {dt} as asked (--dtype)")
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
        notes.append("converted to native byte order")
    dtype_code(arr.dtype)
    arr = np.ascontiguousarray(arr.reshape(-1))
    if arr.size == 0:
        raise UserError(f"{p.name}: {what} is empty")
    return Dataset(p.name, arr, "file", f"{p} ({fmt}, {what})", notes)


_SUFFIX = {".npy": "npy", ".csv": "csv", ".tsv": "csv", ".txt": "csv", ".parquet": "parquet",
           ".pq": "parquet", ".h5": "hdf5", ".hdf5": "hdf5", ".he5": "hdf5", ".nc": "netcdf",
           ".nc4": "netcdf", ".cdf": "netcdf", ".blosc": "blosc", ".blosc1": "blosc",
           ".blosc2": "blosc", ".bl2": "blosc"}


def _sniff(p: Path, dtype: str | None) -> str:
    fmt = _SUFFIX.get(p.suffix.lower())
    if fmt:
        return fmt
    if dtype:
        return "raw"
    head = p.read_bytes()[:16]
    if _looks_like_blosc(head):
        return "blosc"
    raise UserError(f"{p.name}: cannot tell the format from the name; raw binary needs "
                    "--dtype (or give --format)")


def _looks_like_blosc(head: bytes) -> bool:
    """A Blosc1/Blosc2 chunk header: version 1..5, sane typesize, nbytes and cbytes."""
    if len(head) < 16 or not 1 <= head[0] <= 5 or head[3] == 0:
        return False
    nbytes = int.from_bytes(head[4:8], "little")
    cbytes = int.from_bytes(head[12:16], "little")
    return 0 < nbytes and 16 <= cbytes <= nbytes + 64 * KIB


def _load_npy(p: Path, dt, column, variable):
    try:
        a = np.load(p, allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise UserError(f"{p.name}: not a readable .npy file ({_one_line(e)})") from None
    if isinstance(a, np.lib.npyio.NpzFile):
        raise UserError(f"{p.name}: .npz archives are not supported; save one array as .npy")
    if a.dtype.names:
        if not column:
            raise UserError(f"{p.name}: structured array; choose a field with --column "
                            f"({', '.join(a.dtype.names)})")
        if column not in a.dtype.names:
            raise UserError(f"{p.name}: no field {column!r} (fields: {', '.join(a.dtype.names)})")
        return a[column], f"field {column}"
    return a, f"array {a.shape}"


def _load_raw(p: Path, dt, column, variable):
    if dt is None:
        raise UserError(f"{p.name}: raw binary needs --dtype (e.g. --dtype float32)")
    size = p.stat().st_size
    if size % dt.itemsize:
        raise UserError(f"{p.name}: {size} bytes is not a whole number of {dt} items "
                        f"({dt.itemsize} bytes each): truncated or wrong --dtype")
    return np.fromfile(p, dtype=dt), f"raw {dt}"


def _load_csv(p: Path, dt, column, variable):
    import csv
    delim = "\t" if p.suffix.lower() == ".tsv" else ","
    try:
        with open(p, newline="") as f:
            first = next(csv.reader(f, delimiter=delim), None)
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"{p.name}: not a readable CSV file ({_one_line(e)})") from None
    if not first:
        raise UserError(f"{p.name}: empty CSV file")
    header = not all(_is_number(c) for c in first)
    names = [c.strip() for c in first] if header else [str(i) for i in range(len(first))]
    if column is None:
        idx = 0
    elif column in names:
        idx = names.index(column)
    elif column.isdigit() and int(column) < len(names):
        idx = int(column)
    else:
        raise UserError(f"{p.name}: no column {column!r} (columns: {', '.join(names)})")
    try:
        a = np.loadtxt(p, delimiter=delim, skiprows=1 if header else 0, usecols=idx,
                       dtype=np.float64, ndmin=1)
    except (ValueError, IndexError) as e:
        raise UserError(f"{p.name}: column {names[idx]!r} does not parse as numbers "
                        f"({_one_line(e)})") from None
    return a, f"column {names[idx]}"


def _optional(module: str, what: str, package: str, extra: str) -> Any:
    """An optional reader's module, or one UserError naming the extra that brings it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UserError(f"reading {what} needs {package}: pip install 'numascope[{extra}]'") \
            from None


def _load_parquet(p: Path, dt, column, variable):
    pq = _optional("pyarrow.parquet", "Parquet", "pyarrow", "parquet")
    with _readable(p, "Parquet"):
        schema = pq.read_schema(p)
        col = column or schema.names[0]
        if col not in schema.names:
            raise UserError(f"{p.name}: no column {col!r} (columns: {', '.join(schema.names)})")
        a = pq.read_table(p, columns=[col]).column(col).to_numpy()
    return a, f"column {col}"


def _load_hdf5(p: Path, dt, column, variable):
    h5py = _optional("h5py", "HDF5", "h5py", "hdf")
    with _readable(p, "HDF5"), h5py.File(p, "r") as f:
        names: list[str] = []
        f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        var = _variable(p, variable, names, names)
        a = f[var][()]
    return a, f"variable {var}"


def _load_netcdf(p: Path, dt, column, variable):
    netCDF4 = _optional("netCDF4", "netCDF", "netCDF4", "hdf")
    with _readable(p, "netCDF"), netCDF4.Dataset(p, "r") as f:
        f.set_auto_mask(False)  # the stored values, fill values included
        names = list(f.variables)
        var = _variable(p, variable, names, [v for v in names if v not in f.dimensions])
        a = np.asarray(f.variables[var][:])
    return a, f"variable {var}"


def _variable(p: Path, asked: str | None, names: list[str], data: list[str]) -> str:
    """The variable to read: the one asked for (it must be among `names`), or the only
    data variable of the file."""
    var = asked or (data[0] if len(data) == 1 else None)
    if var is None:
        raise UserError(f"{p.name}: choose a variable with --variable "
                        f"({', '.join(names) or 'none found'})")
    if var not in names:
        raise UserError(f"{p.name}: no variable {var!r} (variables: {', '.join(names)})")
    return var


def _load_blosc(p: Path, dt, column, variable):
    """One Blosc1- or Blosc2-format chunk (as written by blosc.compress / blosc2.compress)."""
    import blosc2
    raw = p.read_bytes()
    if not _looks_like_blosc(raw[:16]):
        raise UserError(f"{p.name}: not a Blosc chunk (bad header)")
    nbytes = int.from_bytes(raw[4:8], "little")
    cbytes = int.from_bytes(raw[12:16], "little")
    if cbytes != len(raw):
        raise UserError(f"{p.name}: Blosc header says {cbytes} compressed bytes but the file "
                        f"has {len(raw)}: truncated or corrupt")
    try:
        out = blosc2.decompress(raw)
    except Exception as e:  # noqa: BLE001 - blosc2 raises RuntimeError, ValueError …
        raise UserError(f"{p.name}: corrupt Blosc data ({_one_line(e)})") from None
    if len(out) != nbytes:
        raise UserError(f"{p.name}: Blosc data decompressed to {len(out)} bytes, header says "
                        f"{nbytes}: corrupt")
    typesize = raw[3]
    if dt is None:
        dt = {4: np.dtype("float32"), 8: np.dtype("float64"), 2: np.dtype("int16"),
              1: np.dtype("uint8")}.get(typesize)
        if dt is None:
            raise UserError(f"{p.name}: Blosc typesize {typesize}: give --dtype")
    if nbytes % dt.itemsize:
        raise UserError(f"{p.name}: {nbytes} decompressed bytes is not a whole number of "
                        f"{dt} items")
    return np.frombuffer(out, dtype=dt).copy(), f"Blosc chunk, typesize {typesize}, as {dt}"


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


@contextmanager
def _readable(p: Path, kind: str) -> Iterator[None]:
    """Reading `p` with a library that raises many kinds of exception for a bad file: each
    becomes one line naming the file and the format (ours, UserError, pass through)."""
    try:
        yield
    except UserError:
        raise
    except Exception as e:  # noqa: BLE001 - the readers raise many kinds for a bad file
        raise UserError(f"{p.name}: not a readable {kind} file ({_one_line(e)})") from None


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


# -- size policy ------------------------------------------------------------------------------

def check_values(ds: Dataset) -> Dataset:
    """`ds` if every value is a finite number; UserError (exit 2) naming how many are NaN or
    infinite and where the first is: such data has no reference sum to validate against."""
    if ds.data.dtype.kind != "f":
        return ds
    bad, first = 0, None
    for b0 in range(0, ds.data.size, _BLOCK):
        nonfinite = ~np.isfinite(ds.data[b0:b0 + _BLOCK])
        n = int(nonfinite.sum())
        if n and first is None:
            first = b0 + int(np.argmax(nonfinite))
        bad += n
    if bad:
        v = ds.data[first]
        raise UserError(f"{ds.name}: {bad} of {ds.data.size} values {'is' if bad == 1 else 'are'}"
                        f" NaN or infinite (the first, {v}, at index {first}): the sums cannot "
                        "be validated; clean the data or choose another --column/--variable")
    return ds


def fit(ds: Dataset, nbytes: int | None) -> Dataset:
    """Cut a real dataset to `nbytes` (a prefix of whole items); never enlarge it."""
    if nbytes is None or ds.kind == "synthetic":
        return ds
    if nbytes > ds.nbytes:
        raise UserError(
            f"--size {format_bytes(nbytes)} is larger than {ds.name} ({format_bytes(ds.nbytes)}); "
            "numascope never tiles real data (a repeat shorter than the codec's window fakes "
            "the compression ratio): drop --size or use a larger file")
    n = nbytes // ds.data.itemsize
    if n < 1:
        raise UserError(f"--size {nbytes} B holds no {ds.data.dtype} item")
    if n < ds.data.size:
        ds = Dataset(ds.name, ds.data[:n].copy(), ds.kind, ds.source,
                     ds.notes + [(f"first {format_bytes(n * ds.data.itemsize)} of "
                                  f"{format_bytes(ds.nbytes)} used (--size)")])
    return ds


def too_small(nbytes: int, llc_bytes: int, factor: int = 4) -> str | None:
    """A note when the data could sit in the caches, so the plain sum never meets the wall."""
    if llc_bytes and nbytes < factor * llc_bytes:
        return (f"dataset is {format_bytes(nbytes)}, under {factor}x the last-level cache of "
                f"the CPUs used ({format_bytes(llc_bytes)}): the plain sum may run from cache, "
                "so this says little about the memory wall")
    return None
