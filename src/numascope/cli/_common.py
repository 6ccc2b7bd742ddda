"""Options shared by several commands."""

from __future__ import annotations

import argparse


def add_sysfs_root(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sysfs-root", default="/", metavar="DIR",
                   help="read the machine from this root (a directory or a .tar.bz2 dump); "
                        "default: this machine")


def add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
