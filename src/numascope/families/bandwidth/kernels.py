"""The bandwidth kernels, from the C core's table (bw.c): their names, arrays, STREAM
bytes, stores, DRAM bytes (ordinary and streaming stores), formulas and ISAs. Read by the
options (the choices of --kernel and --isa) and by bench.py."""

from __future__ import annotations

from typing import Any

from numascope import _core

KERNEL_TABLE: tuple[dict[str, Any], ...] = tuple(_core.kernels())
KERNELS = tuple(k["name"] for k in KERNEL_TABLE)
ARRAYS = {k["name"]: k["arrays"] for k in KERNEL_TABLE}
STREAM_BYTES = {k["name"]: k["stream_bytes"] for k in KERNEL_TABLE}
STORES = {k["name"]: int(k["stores"]) for k in KERNEL_TABLE}
DRAM_BYTES = {k["name"]: (k["dram_bytes"], k["dram_bytes_nt"]) for k in KERNEL_TABLE}
FORMULAS = {k["name"]: k["formula"] for k in KERNEL_TABLE}
ISAS = tuple(dict.fromkeys(i for k in KERNEL_TABLE for i in k["isas"]))
