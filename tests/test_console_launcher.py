"""Colour only on a terminal of the user's: a rank under mpirun or srun writes to the
launcher's pseudo-terminal, which mpirun may copy into a file; such a rank writes plain
text. Run under a real pseudo-terminal (pty), with and without a launcher's variables."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

CODE = ("from numascope.console import out, err; out.print('[bold red]hi[/bold red]'); "
        "err.print('[yellow]warning[/yellow]')")


def _under_pty(env: dict[str, str]) -> bytes:
    main, sub = pty.openpty()
    try:
        p = subprocess.run([sys.executable, "-c", CODE], stdout=sub, stderr=sub,
                           env=env, timeout=60, check=True)
        assert p.returncode == 0
        os.close(sub)
        sub = -1
        chunks = []
        while True:
            try:
                b = os.read(main, 4096)
            except OSError:
                break
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks)
    finally:
        os.close(main)
        if sub >= 0:
            os.close(sub)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "FORCE_COLOR", "TERM", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                        "PMIX_RANK", "SLURM_PROCID", "MV2_COMM_WORLD_SIZE")}
    return {**env, "TERM": "xterm-256color", **extra}


def test_on_the_users_terminal_there_is_colour():
    text = _under_pty(_env())
    assert b"hi" in text and b"\x1b[" in text


@pytest.mark.parametrize("var", ["OMPI_COMM_WORLD_SIZE", "SLURM_PROCID", "PMIX_RANK"])
def test_a_rank_under_a_launcher_writes_plain_text_even_on_a_pty(var):
    text = _under_pty(_env(**{var: "0"}))
    assert b"hi" in text and b"warning" in text and b"\x1b" not in text
    # asked for, colour stays possible
    assert b"\x1b[" in _under_pty(_env(**{var: "0", "FORCE_COLOR": "1"}))
