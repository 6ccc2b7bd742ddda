"""The item types compress reads and generates: float32/64 and 8- to 64-bit integers (what
the sum kernels take), parsed once here for the options' --dtype rule and the data sets."""

from __future__ import annotations

import numpy as np

from numascope.errors import UserError


def parse_dtype(text: str) -> np.dtype:
    try:
        dt = np.dtype(text)
    except TypeError:
        raise UserError(f"unknown dtype {text!r} (e.g. float32, f8, int16, uint8)") from None
    dtype_code(dt)
    return dt


def dtype_code(dt: np.dtype) -> str:
    dt = np.dtype(dt)
    if dt.kind not in "fiu" or (dt.kind == "f" and dt.itemsize not in (4, 8)) \
            or dt.itemsize not in (1, 2, 4, 8):
        raise UserError(f"dtype {dt} is not supported (float32/64 and 8- to 64-bit integers)")
    return f"{dt.kind}{dt.itemsize}"
