"""Data for `numascope compress`: synthetic generators and the user's files."""

from __future__ import annotations

import sys

import blosc2
import numpy as np
import pytest

from numascope.errors import UserError
from numascope.families.compress import datasets as d


def _ratio(a: np.ndarray) -> float:
    c = blosc2.compress2(a.tobytes(), typesize=a.itemsize, codec=blosc2.Codec.LZ4,
                         filters=[blosc2.Filter.SHUFFLE])
    return a.nbytes / len(c)


def test_synthetic_is_deterministic_and_sized():
    for name in d.SYNTHETIC:
        a = d.synthetic(name, 1 << 20, seed=3)
        b = d.synthetic(name, 1 << 20, seed=3)
        assert a.data.dtype == np.float32 and a.nbytes == 1 << 20
        assert np.array_equal(a.data, b.data)
        assert a.kind == "synthetic" and a.dtype == "f4"
    assert not np.array_equal(d.synthetic("noisy", 1 << 16, seed=1).data,
                              d.synthetic("noisy", 1 << 16, seed=2).data)


def test_smooth_compresses_far_better_than_noisy():
    smooth = d.synthetic("smooth", 4 << 20).data
    noisy = d.synthetic("noisy", 4 << 20).data
    assert np.all(np.diff(smooth) >= 0)
    assert _ratio(smooth) > 5 * _ratio(noisy)
    assert _ratio(noisy) < 2.0


def test_precip_is_mostly_zero_skewed_and_spatially_correlated():
    a = d.synthetic("precip", 8 << 20).data
    assert a.min() == 0
    dry = np.mean(a == 0)
    assert 0.4 < dry < 0.85
    wet = a[a > 0]
    assert wet.mean() > np.median(wet)          # right-skewed
    grid = a[: (a.size // d._GRID_W) * d._GRID_W].reshape(-1, d._GRID_W)
    r = np.corrcoef(grid[:-1].ravel(), grid[1:].ravel())[0, 1]
    assert r > 0.8                              # neighbouring rows look alike
    assert np.allclose(a * 10, np.round(a * 10), atol=1e-3)  # 0.1 mm steps


def test_integer_synthetic():
    a = d.synthetic("noisy", 1 << 16, dtype="int32")
    assert a.data.dtype == np.int32 and a.dtype == "i4" and a.data.max() > 1000


def test_unknown_synthetic_and_dtype():
    with pytest.raises(UserError, match="unknown synthetic"):
        d.synthetic("waves", 1024)
    with pytest.raises(UserError, match="not supported"):
        d.parse_dtype("float16")
    with pytest.raises(UserError, match="unknown dtype"):
        d.parse_dtype("floaty")


def test_parse_size():
    assert d.parse_size("64K") == 65536 and d.parse_size("1GiB") == 1 << 30
    assert d.parse_size("4096") == 4096
    with pytest.raises(UserError):
        d.parse_size("lots")


def test_npy_raw_and_csv_load(tmp_path):
    a = np.arange(1000, dtype=np.float64)
    np.save(tmp_path / "a.npy", a.reshape(10, 100))
    ds = d.load(tmp_path / "a.npy")
    assert np.array_equal(ds.data, a) and ds.kind == "file"

    a.astype(np.int16).tofile(tmp_path / "a.dat")
    ds = d.load(tmp_path / "a.dat", dtype="int16")
    assert ds.data.dtype == np.int16 and np.array_equal(ds.data, a.astype(np.int16))

    (tmp_path / "h.csv").write_text("t,rain\n0,1.5\n1,0\n2,2.25\n")
    ds = d.load(tmp_path / "h.csv", column="rain")
    assert ds.data.tolist() == [1.5, 0.0, 2.25]
    (tmp_path / "n.csv").write_text("1,10\n2,20\n")
    assert d.load(tmp_path / "n.csv", column="1").data.tolist() == [10.0, 20.0]
    with pytest.raises(UserError, match="no column"):
        d.load(tmp_path / "h.csv", column="snow")


def test_big_endian_is_made_native(tmp_path):
    np.save(tmp_path / "be.npy", np.arange(10, dtype=">f4"))
    ds = d.load(tmp_path / "be.npy")
    assert ds.data.dtype.isnative and ds.data.tolist() == list(range(10))


def test_bad_files_are_one_clear_error(tmp_path):
    a = np.arange(1000, dtype=np.float32)
    np.save(tmp_path / "t.npy", a)
    raw = (tmp_path / "t.npy").read_bytes()
    (tmp_path / "t.npy").write_bytes(raw[:-100])              # truncated npy
    with pytest.raises(UserError, match="npy"):
        d.load(tmp_path / "t.npy")
    (tmp_path / "g.npy").write_bytes(b"this is not numpy")
    with pytest.raises(UserError, match="npy"):
        d.load(tmp_path / "g.npy")
    (tmp_path / "r.bin").write_bytes(b"\x00" * 4097)          # not a multiple of 4
    with pytest.raises(UserError, match="whole number"):
        d.load(tmp_path / "r.bin", dtype="float32")
    with pytest.raises(UserError, match="--dtype"):
        d.load(tmp_path / "r.bin")
    (tmp_path / "x.csv").write_text("a,b\n1,2\n3,oops\n")
    with pytest.raises(UserError, match="does not parse"):
        d.load(tmp_path / "x.csv", column="b")
    (tmp_path / "e.csv").write_text("")
    with pytest.raises(UserError, match="empty"):
        d.load(tmp_path / "e.csv")
    with pytest.raises(UserError, match="does not exist"):
        d.load(tmp_path / "missing.npy")


def test_blosc_chunk_truncated_or_corrupt(tmp_path):
    a = np.linspace(0, 1, 50000, dtype=np.float32)
    c = blosc2.compress(a.tobytes(), typesize=4)
    (tmp_path / "ok.blosc").write_bytes(c)
    assert np.array_equal(d.load(tmp_path / "ok.blosc").data, a)
    (tmp_path / "cut.blosc").write_bytes(c[: len(c) // 2])
    with pytest.raises(UserError, match="truncated"):
        d.load(tmp_path / "cut.blosc")
    (tmp_path / "hdr.blosc").write_bytes(b"\xff" * 64)
    with pytest.raises(UserError, match="not a Blosc chunk"):
        d.load(tmp_path / "hdr.blosc")


@pytest.mark.parametrize("suffix,module,extra", [
    (".parquet", "pyarrow", "parquet"), (".h5", "h5py", "hdf"), (".nc", "netCDF4", "hdf")])
def test_optional_formats_name_their_extra(tmp_path, monkeypatch, suffix, module, extra):
    # hide the module even where it is installed: None in sys.modules makes import fail
    for name in (module, f"{module}.parquet"):
        monkeypatch.setitem(sys.modules, name, None)
    p = tmp_path / f"x{suffix}"
    p.write_bytes(b"whatever")
    with pytest.raises(UserError, match=f"numascope\\[{extra}\\]"):
        d.load(p)


def test_fit_takes_a_prefix_and_never_tiles(tmp_path):
    np.save(tmp_path / "s.npy", np.arange(1000, dtype=np.float32))
    ds = d.load(tmp_path / "s.npy")
    cut = d.fit(ds, 400)
    assert cut.data.tolist() == list(range(100)) and cut.notes
    assert d.fit(ds, None) is ds
    with pytest.raises(UserError, match="never tiles"):
        d.fit(ds, 1 << 20)


def test_too_small_note():
    assert d.too_small(1 << 20, 32 << 20) is not None
    assert d.too_small(1 << 30, 32 << 20) is None


def test_parquet_column(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"t": np.arange(5), "rain": np.array([0, 1.5, 0, 2, 0.5],
                                                                  dtype=np.float32)}),
                   tmp_path / "r.parquet")
    ds = d.load(tmp_path / "r.parquet", column="rain")
    assert ds.data.dtype == np.float32 and ds.data.tolist() == [0, 1.5, 0, 2, 0.5]
    with pytest.raises(UserError, match="no column"):
        d.load(tmp_path / "r.parquet", column="snow")
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(UserError, match="Parquet"):
        d.load(tmp_path / "bad.parquet")


def test_hdf5_variable(tmp_path):
    h5py = pytest.importorskip("h5py")
    with h5py.File(tmp_path / "g.h5", "w") as f:
        f["grid/tp"] = np.arange(12, dtype=np.float64).reshape(3, 4)
        f["lat"] = np.arange(3, dtype=np.float32)
    ds = d.load(tmp_path / "g.h5", variable="grid/tp")
    assert ds.data.tolist() == list(range(12))
    with pytest.raises(UserError, match="--variable"):
        d.load(tmp_path / "g.h5")
    (tmp_path / "bad.h5").write_bytes(b"\x89HDF\r\n\x1a\n broken")
    with pytest.raises(UserError, match="HDF5"):
        d.load(tmp_path / "bad.h5")


def test_netcdf_variable(tmp_path):
    netCDF4 = pytest.importorskip("netCDF4")
    with netCDF4.Dataset(tmp_path / "era.nc", "w") as f:
        f.createDimension("lat", 3)
        f.createDimension("lon", 4)
        v = f.createVariable("tp", "f4", ("lat", "lon"))
        v[:] = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
    ds = d.load(tmp_path / "era.nc", variable="tp")
    assert ds.data.dtype == np.float32
    assert ds.data.tolist() == [i / 4 for i in range(12)]
    with pytest.raises(UserError):
        d.load(tmp_path / "era.nc", variable="snow")
    (tmp_path / "bad.nc").write_bytes(b"CDF\x01 truncated")
    with pytest.raises(UserError, match="netCDF"):
        d.load(tmp_path / "bad.nc", variable="tp")


def test_check_values_refuses_nan_and_inf_but_not_integers():
    ints = d.Dataset("i", np.arange(10, dtype=np.int16), "file", "x")
    assert d.check_values(ints) is ints
    f = np.linspace(0, 1, 100, dtype=np.float64)
    ok = d.Dataset("f", f, "file", "x")
    assert d.check_values(ok) is ok
    f = f.copy()
    f[42] = -np.inf
    with pytest.raises(UserError, match=r"f: 1 of 100 values is NaN or infinite "
                                        r"\(the first, -inf, at index 42\)"):
        d.check_values(d.Dataset("f", f, "file", "x"))
